//! Filter expressions evaluated exactly on Arrow record batches.
//!
//! An [`Expr`] is a boolean predicate over the columns of a table: comparisons with literals,
//! `IN` / `NOT IN`, `IS [NOT] NULL`, `BETWEEN`, `LIKE` and the connectives `AND`, `OR`, `NOT`.
//! [`Expr::evaluate`] computes it over a [`RecordBatch`] with the Arrow compute kernels under SQL
//! three-valued logic (a comparison with a null is null, and a row is kept only when the
//! predicate is true); [`filter_batch`] keeps the matching rows.
//!
//! Literals are converted to the column's Arrow type once per evaluation. The conversion is
//! exact: a literal that the column's type cannot represent (`tinyint_col < 1000`,
//! `int_col = 2.5`, `decimal(10,2)_col >= 1.255`, a nanosecond timestamp against a millisecond
//! column) is compared through its floor, so `x < 2.5` means `x <= 2` and `x = 2.5` is never
//! true, instead of being rounded. Strings are accepted as literals for DATE, TIME and TIMESTAMP
//! columns (`dt = '2024-01-01'`); a literal of any other wrong type is an error that names the
//! column, its type and the literal.
//!
//! [`parse_filter`] reads the small SQL-like text form used by the CLI and the bindings, e.g.
//! `a = 1 AND (b IN ('x', 'y') OR c IS NULL)`; `Expr`'s `Display` writes the same form.
//! [`prune_partitions`] decides which partitions can hold matching rows, from the partition
//! values alone.
//!
//! Layout: `types` holds the operator, literal and expression types and their text
//! form; `eval` the Arrow evaluation; `prune` the partition pruning; `parse` the text grammar.
//!
//! [`RecordBatch`]: arrow_array::RecordBatch

mod eval;
mod parse;
mod prune;
#[cfg(test)]
mod tests;
mod types;

pub use eval::filter_batch;
pub use parse::{parse_filter, MAX_FILTER_DEPTH};
pub use prune::{partition_may_match, prune_partitions};
pub use types::{escape_like, CompareOp, Expr, Literal, TermOp};
