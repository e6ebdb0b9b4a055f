//! The C ABI of Riverlet: opaque handles, status codes and the Arrow C Data Interface over
//! [`riverlet::blocking`]. The header `include/riverlet.h` is generated from this crate by
//! cbindgen (see `build.rs`).
//!
//! Every exported function is a short wrapper around an `_impl` function that returns a
//! [`error::CallResult`]; [`error::guard`] runs it under `catch_unwind`, so panics never cross
//! the boundary, and turns the outcome into a [`error::RiverletStatus`] plus the thread-local
//! last-error message. This crate holds conversion glue only: protocol, read semantics and
//! timestamp parsing live in the core.
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
// No unwrap/expect/panic outside tests: every entry returns a status (and `error::guard`
// catches a panic at the boundary anyway).
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
// The safety contract of every exported function is the same and stated once, in the header's
// conventions: each pointer argument is NULL or valid for what its documentation says.
#![allow(clippy::missing_safety_doc)]

pub mod acls;
pub mod args;
pub mod arrow_io;
pub mod cluster_configs;
pub mod connection;
pub mod error;
pub mod handle;
pub mod lake;
pub mod metrics;
pub mod modify;
pub mod partitions;
pub mod read;
pub mod server;
pub mod subscribe;
pub mod table;

#[cfg(test)]
mod header;

use std::ffi::c_char;

/// The version of the Riverlet C library ("0.1.0"), a static string.
#[no_mangle]
pub extern "C" fn riverlet_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}
