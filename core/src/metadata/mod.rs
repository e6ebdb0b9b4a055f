//! Fluss metadata: data types and their Arrow mapping, schemas, table descriptors, paths, error codes.

pub mod error_codes;
