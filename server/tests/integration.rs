//! The embedded server's integration tests, as one test binary: one link of the dependency tree instead of one per file.
//! Every file below is a module; `cargo test -p riverlet-server --test integration <module>::` runs one
//! file's tests.

mod common;

mod acl_wire;
mod api_walk;
mod hostile_batches;
mod log_tables;
mod pk_tables;
