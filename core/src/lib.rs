//! Riverlet: an Arrow-native client core for Apache Fluss.
//!
//! Layers, bottom up: [`proto`] (Fluss's protobuf messages), [`rpc`] (framing and connections),
//! [`metadata`] and [`row`] (types, schemas, row and key encodings), [`record`] (log, KV and
//! value record batches), then [`client`], [`write`](mod@write) and [`scan`] (the async client), and
//! [`blocking`], the synchronous facade every binding calls. With feature `lake`, `lake` reads
//! the Iceberg side of lake-enabled tables.
#![warn(missing_docs)]
// No unwrap/expect/panic outside tests: internal invariants are `Error`s too.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod error;
pub use error::{Error, ErrorKind, Result};

pub mod acl;
pub mod blocking;
pub mod client;
#[cfg(feature = "lake")]
pub mod lake;
pub mod logging;
pub mod metadata;
pub mod metrics;
pub mod proto;
pub mod record;
pub mod remote;
pub mod row;
pub mod rpc;
pub mod scan;
pub mod stats;
pub mod warning;
pub mod write;

pub use warning::{Warning, WarningKind};

/// The README's Rust snippets, compiled and run as doctests so they keep working.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
