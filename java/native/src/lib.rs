//! `riverlet-jni`: the JVM binding of Riverlet (Java API: `java/riverlet-java`, package
//! `io.riverlet`, class `NativeMethods`).
//!
//! Every `Java_io_riverlet_NativeMethods_*` entry converts JNI arguments to plain core values,
//! calls `riverlet::blocking` (or, for the async lookup, the async client on the core's
//! runtime), and converts the result back. Arrow crosses through the C Data Interface into and
//! out of structs the JVM allocated. Errors and panics become typed Java exceptions in one place
//! ([`jvm`]); no protocol or read rule lives here.
//!
//! Modules: [`jvm`] (the boundary: cached classes, exceptions, `catch_unwind`), [`handles`]
//! (native objects behind Java `long`s), [`convert`] (Java values and Arrow C structs),
//! [`connection`], [`admin`], [`table`] (writes, lookups), [`read`] (scan, count, subscribe),
//! [`names`] (table names and their views), [`server`] (the embedded server).
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod admin;
pub mod connection;
pub mod convert;
pub mod handles;
pub mod jvm;
pub mod names;
pub mod read;
pub mod server;
pub mod table;
