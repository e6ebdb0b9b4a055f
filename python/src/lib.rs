//! The `riverlet._riverlet` extension module (placeholder until the blocking facade lands).
use pyo3::prelude::*;

/// The native module behind the `riverlet` package.
#[pymodule]
fn _riverlet(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
