//! The one place where Riverlet errors become Python exceptions, plus the process guard
//! (fork detection) every blocking entry point passes through.
//!
//! Exception classes are declared in `riverlet/errors.py` (so they can also derive from the
//! closest built-in exception); [`to_py_err`] picks the class from the core's
//! [`ErrorKind`] and, for a few kinds, the Fluss error code.

use std::sync::OnceLock;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;
use riverlet::error::codes;
use riverlet::{Error, ErrorKind};

static ERRORS_MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// The pid of the process that started Riverlet's threads (the runtime, a local server).
static OWNER_PID: OnceLock<u32> = OnceLock::new();

/// The exception class (in `riverlet.errors`) for a core error.
fn class_name(e: &Error) -> &'static str {
    match (e.kind(), e.fluss_code()) {
        (ErrorKind::NotFound, Some(codes::DATABASE_NOT_EXIST)) => "DatabaseNotFoundError",
        (ErrorKind::NotFound, Some(codes::TABLE_NOT_EXIST)) => "TableNotFoundError",
        (ErrorKind::NotFound, Some(codes::PARTITION_NOT_EXISTS)) => "PartitionNotFoundError",
        (ErrorKind::NotFound, _) => "NotFoundError",
        (ErrorKind::AlreadyExists, Some(codes::DATABASE_ALREADY_EXIST)) => {
            "DatabaseAlreadyExistsError"
        }
        (ErrorKind::AlreadyExists, Some(codes::TABLE_ALREADY_EXIST)) => "TableAlreadyExistsError",
        (ErrorKind::AlreadyExists, Some(codes::PARTITION_ALREADY_EXISTS)) => {
            "PartitionAlreadyExistsError"
        }
        (ErrorKind::AlreadyExists, _) => "AlreadyExistsError",
        (ErrorKind::InvalidArgument, _) => "InvalidArgumentError",
        (ErrorKind::Unsupported, _) => "UnsupportedError",
        (ErrorKind::Authentication, Some(codes::AUTHORIZATION_EXCEPTION)) => "AuthorizationError",
        (ErrorKind::Authentication, _) => "AuthenticationError",
        (ErrorKind::Network, _) => "NetworkError",
        (ErrorKind::Timeout, _) => "RequestTimeoutError",
        (ErrorKind::Server, _) => "ServerError",
        (ErrorKind::Corrupt, _) => "CorruptDataError",
        (ErrorKind::Closed, _) => "ClosedError",
        (ErrorKind::Io, _) => "StorageIOError",
        (ErrorKind::Internal, _) => "InternalError",
    }
}

fn build(py: Python<'_>, class: &str, e: &Error) -> PyResult<PyErr> {
    let module =
        ERRORS_MODULE.get_or_try_init(py, || py.import("riverlet.errors").map(Bound::unbind))?;
    let cls = module.bind(py).getattr(class)?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("kind", e.kind().as_str())?;
    if let Some(code) = e.fluss_code() {
        kwargs.set_item("code", code)?;
        kwargs.set_item("code_name", codes::name_of(code))?;
    }
    let exc = cls.call((e.to_string(),), Some(&kwargs))?;
    Ok(PyErr::from_value(exc))
}

/// Converts a core error to its Python exception (the only such mapping in the binding).
pub fn to_py_err(e: Error) -> PyErr {
    Python::attach(|py| {
        build(py, class_name(&e), &e).unwrap_or_else(|import_failure| {
            PyRuntimeError::new_err(format!(
                "{e} (and riverlet.errors failed: {import_failure})"
            ))
        })
    })
}

/// Shows the core's warnings about a request through Python's `warnings` module, as
/// `riverlet.errors.RiverletWarning` instances (their `kind` is the core's warning name),
/// attributed to the user's call (two frames above the binding's Python wrapper).
pub fn warn_all(py: Python<'_>, warnings: &[riverlet::Warning]) -> PyResult<()> {
    if warnings.is_empty() {
        return Ok(());
    }
    let module =
        ERRORS_MODULE.get_or_try_init(py, || py.import("riverlet.errors").map(Bound::unbind))?;
    let cls = module.bind(py).getattr("RiverletWarning")?;
    let warn = py.import("warnings")?.getattr("warn")?;
    for w in warnings {
        let kwargs = PyDict::new(py);
        kwargs.set_item("kind", w.kind.name())?;
        let instance = cls.call((w.message.as_str(),), Some(&kwargs))?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("stacklevel", 3)?;
        warn.call((instance,), Some(&kwargs))?;
    }
    Ok(())
}

/// `Result<T, riverlet::Error>` to `PyResult<T>`.
pub trait PyResultExt<T> {
    /// Maps the error with [`to_py_err`].
    fn py_err(self) -> PyResult<T>;
}

impl<T> PyResultExt<T> for riverlet::Result<T> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py_err)
    }
}

/// A `ClosedError` for `what` used after `close()`.
pub fn closed(what: &str) -> PyErr {
    to_py_err(Error::new(
        ErrorKind::Closed,
        format!("{what} is closed; it cannot be used after close()"),
    ))
}

/// The message of the error raised in a forked child.
pub fn fork_message(owner: u32, me: u32) -> String {
    format!(
        "riverlet was started in process {owner} and cannot be used in this forked child \
         process {me}: its network threads do not exist here. Use riverlet only after the fork \
         (create connections in the child), or use the 'spawn'/'forkserver' start method of \
         multiprocessing."
    )
}

/// Records the current process as Riverlet's owner (first call) and fails with
/// `ForkedProcessError` in a forked child of that process. Every blocking entry point calls it
/// before touching the runtime.
pub fn enter() -> PyResult<()> {
    match check_process() {
        Ok(()) => Ok(()),
        Err(msg) => Python::attach(|py| {
            let e = Error::new(ErrorKind::Closed, msg);
            Err(build(py, "ForkedProcessError", &e)
                .unwrap_or_else(|_| PyRuntimeError::new_err(e.to_string())))
        }),
    }
}

/// [`enter`] without Python: the message when this is a forked child.
pub fn check_process() -> Result<(), String> {
    let me = std::process::id();
    let owner = *OWNER_PID.get_or_init(|| me);
    if owner == me {
        Ok(())
    } else {
        Err(fork_message(owner, me))
    }
}
