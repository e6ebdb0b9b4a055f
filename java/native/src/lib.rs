//! `riverlet-jni`: the JVM binding of Riverlet. Every `Java_io_riverlet_*` entry converts JNI
//! arguments to plain core values, calls `riverlet::blocking`, and converts the result back
//! (Arrow through the C Data Interface into structs the JVM allocated; errors and panics as
//! typed Java exceptions). No protocol or read rule lives here.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]
