//! `_riverlet.LocalServer`: the embedded Fluss-compatible server, in this process.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::prelude::*;
use riverlet_server::{LocalServer, ServerConfig};

use crate::errors::{closed, enter, to_py_err, PyResultExt};

/// An embedded single-node Fluss-compatible server listening on TCP in this process.
///
/// Prefer `riverlet.LocalServer` (a context manager that also makes a temporary data
/// directory); this native class needs an explicit data directory.
#[pyclass(module = "riverlet._riverlet", name = "LocalServer")]
pub struct PyLocalServer {
    inner: Mutex<Option<LocalServer>>,
    bootstrap: String,
    host: String,
    port: u16,
    data_dir: PathBuf,
}

#[pymethods]
impl PyLocalServer {
    /// Starts a server on `host:port` (port 0 picks a free one) storing its data in
    /// `data_dir`; `users` (name -> password) enables SASL/PLAIN authentication; `options`
    /// are server options by their Apache Fluss names (e.g. `remote.data.dir`).
    #[new]
    #[pyo3(signature = (data_dir, host = "127.0.0.1", port = None, users = None, options = None))]
    fn new(
        py: Python<'_>,
        data_dir: PathBuf,
        host: &str,
        port: Option<Bound<'_, PyAny>>,
        users: Option<BTreeMap<String, String>>,
        options: Option<BTreeMap<String, String>>,
    ) -> PyResult<Self> {
        enter()?;
        let port: u16 = match port {
            Some(p) => crate::convert::int_arg(&p, "port", "a TCP port number (0 to 65535)")?,
            None => 0,
        };
        let mut config = ServerConfig::new(data_dir.clone()).with_port(port);
        config.host = host.to_string();
        for (user, password) in users.unwrap_or_default() {
            config = config.with_sasl_user(user, password);
        }
        let config = config
            .with_options(options.unwrap_or_default())
            .map_err(to_py_err)?;
        let server = py
            .detach(|| LocalServer::start(config))
            .map_err(to_py_err)?;
        let bootstrap = server.bootstrap_servers();
        let port = server.local_addr().port();
        Ok(PyLocalServer {
            inner: Mutex::new(Some(server)),
            bootstrap,
            host: host.to_string(),
            port,
            data_dir,
        })
    }

    /// `host:port` to pass to `riverlet.connect`.
    #[getter]
    fn bootstrap_servers(&self) -> String {
        self.bootstrap.clone()
    }

    /// The host the server listens on.
    #[getter]
    fn host(&self) -> String {
        self.host.clone()
    }

    /// The TCP port the server listens on.
    #[getter]
    fn port(&self) -> u16 {
        self.port
    }

    /// The data directory.
    #[getter]
    fn data_dir(&self) -> PathBuf {
        self.data_dir.clone()
    }

    /// Whether the server is running (not shut down).
    #[getter]
    fn running(&self) -> bool {
        self.inner.lock().map(|g| g.is_some()).unwrap_or(false)
    }

    /// Takes a KV snapshot of every primary-key bucket whose state changed since its latest
    /// one, now (what the `kv.snapshot.interval` task does periodically).
    fn take_kv_snapshots(&self, py: Python<'_>) -> PyResult<()> {
        let g = self.inner.lock().map_err(|_| closed("the local server"))?;
        match g.as_ref() {
            Some(s) => {
                py.detach(|| s.take_kv_snapshots());
                Ok(())
            }
            None => Err(closed("the local server")),
        }
    }

    /// Commits every lake-enabled table's new rows to the lake now (what the
    /// `table.datalake.freshness` rounds do periodically); returns once committed.
    fn commit_lake(&self, py: Python<'_>) -> PyResult<()> {
        let g = self.inner.lock().map_err(|_| closed("the local server"))?;
        match g.as_ref() {
            Some(s) => py.detach(|| s.commit_lake()).py_err(),
            None => Err(closed("the local server")),
        }
    }

    /// Stops the server, flushing all acknowledged data to disk. Idempotent.
    fn shutdown(&self, py: Python<'_>) -> PyResult<()> {
        let server = match self.inner.lock() {
            Ok(mut g) => g.take(),
            Err(_) => return Err(closed("the local server")),
        };
        match server {
            Some(s) => {
                enter()?;
                py.detach(|| s.shutdown()).map_err(to_py_err)
            }
            None => Ok(()),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "LocalServer(bootstrap_servers={:?}, running={})",
            self.bootstrap,
            self.running()
        )
    }
}
