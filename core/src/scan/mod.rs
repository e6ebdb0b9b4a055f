//! Reading tables: filters, time ranges, the primary-key changelog fold, scans and lookups.

pub mod expr;
pub mod fold;
pub mod time;

pub use expr::{parse_filter, CompareOp, Expr, Literal};
