//! The `riverlet._riverlet` extension module: conversion glue over `riverlet::blocking` (and
//! `riverlet_server::LocalServer` for the in-process server). The Python package `riverlet`
//! wraps it; see `python/riverlet/__init__.py`.
// No unwrap/expect/panic outside tests.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod conn;
mod convert;
mod errors;
mod metrics;
mod modify;
mod read;
mod server;
mod stream;

use pyo3::prelude::*;

/// The native module behind the `riverlet` package.
#[pymodule]
fn _riverlet(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<server::PyLocalServer>()?;
    m.add_class::<conn::PyConnection>()?;
    m.add_class::<conn::PyTable>()?;
    m.add_class::<stream::PyBatchStream>()?;
    m.add_class::<read::PySubscription>()?;
    m.add_function(wrap_pyfunction!(conn::connect, m)?)?;
    m.add_function(wrap_pyfunction!(conn::configure_runtime, m)?)?;
    m.add_function(wrap_pyfunction!(metrics::metrics, m)?)?;
    m.add_function(wrap_pyfunction!(metrics::metrics_text, m)?)?;
    // Riverlet's recorder, unless the host program installed a `metrics` recorder already.
    riverlet::metrics::install();
    Ok(())
}
