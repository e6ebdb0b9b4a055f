//! The SQL crate's integration tests, as one test binary: one link of the dependency tree instead of one per file.
//! Every file below is a module; `cargo test -p riverlet-sql --test integration <module>::` runs one
//! file's tests.

mod common;

mod cli;
mod lake;
mod plain_read;
mod spark_reads;
mod time_range;
