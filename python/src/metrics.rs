//! `riverlet.metrics()` / `riverlet.metrics_text()`: the client's (and an in-process
//! LocalServer's) metrics, from the core's recorder, which this module installs at import.

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Every metric as a dict `{"name", "labels", "value"}` (histograms as `_count` and `_sum`).
#[pyfunction]
pub fn metrics<'py>(py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
    riverlet::metrics::snapshot()
        .into_iter()
        .map(|s| {
            let d = PyDict::new(py);
            d.set_item("name", s.name)?;
            let labels = PyDict::new(py);
            for (k, v) in s.labels {
                labels.set_item(k, v)?;
            }
            d.set_item("labels", labels)?;
            d.set_item("value", s.value)?;
            Ok(d)
        })
        .collect()
}

/// Every metric in Prometheus's text exposition format.
#[pyfunction]
pub fn metrics_text() -> String {
    riverlet::metrics::render_prometheus()
}
