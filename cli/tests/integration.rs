//! The command line's integration tests, as one test binary: one link of the dependency tree instead of one per file.
//! Every file below is a module; `cargo test -p riverlet-cli --test integration <module>::` runs one
//! file's tests.

mod common;

mod acl;
mod bad_input;
mod commands;
mod companion;
mod config;
mod demo;
// `riverlet serve` killed at each step of a lake commit (needs the `lake` feature, on by default)
#[cfg(feature = "lake")]
mod lake_commit_faults;
#[cfg(feature = "lake")]
mod lake_drop;
mod metrics;
// `riverlet serve` killed at each step of a remote log tiering round (helpers of lake_commit_faults)
#[cfg(feature = "lake")]
mod remote_tiering_faults;
