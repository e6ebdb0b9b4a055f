//! Reads of a table: scans (plain, time-range, changelog), count, lookups, subscriptions.
//! Arguments are converted here; planning, validation and semantics are the core's.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow::pyarrow::{PyArrowType, ToPyArrow};
use arrow_array::RecordBatch;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use riverlet::blocking::scan::Subscription;
use riverlet::metadata::PartitionSpec;
use riverlet::scan::{Filter, PartitionSelector, ReadRequest, SubscribeRequest};
use riverlet::Error;

use crate::conn::{Liveness, PyTable};
use crate::convert::{filter_expr, startup_mode, time_point};
use crate::errors::{closed, enter, to_py_err, warn_all, PyResultExt};
use crate::stream::PyBatchStream;

/// How often a blocking wait looks for Ctrl-C.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// The options of one read, converted from Python.
pub struct ReadArgs<'py> {
    pub columns: Option<Vec<String>>,
    pub filter: Option<Bound<'py, PyAny>>,
    pub partitions: Option<Vec<Bound<'py, PyAny>>>,
    pub limit: Option<usize>,
    pub start: Option<Bound<'py, PyAny>>,
    pub end: Option<Bound<'py, PyAny>>,
    pub tz: Option<String>,
    pub read_optimized: bool,
    pub changelog: bool,
}

fn partition_selector(v: &Bound<'_, PyAny>) -> PyResult<PartitionSelector> {
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(PartitionSelector::Name(s.to_cow()?.into_owned()));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let mut entries = Vec::new();
        for (k, val) in d.iter() {
            entries.push((k.extract::<String>()?, val.str()?.to_cow()?.into_owned()));
        }
        return Ok(PartitionSelector::Spec(PartitionSpec::new(entries)));
    }
    Err(to_py_err(Error::invalid(format!(
        "a partition is given by its name ('2024-01-01' or 'v1$v2') or a dict of partition key \
         to value, not {}",
        v.repr().map(|r| r.to_string()).unwrap_or_default()
    ))))
}

/// The core request of a read's Python arguments.
fn read_request(args: &ReadArgs<'_>) -> PyResult<ReadRequest> {
    let filter = match &args.filter {
        Some(f) => filter_expr(f)?.map(Filter::Expr),
        None => None,
    };
    let partitions = args
        .partitions
        .as_ref()
        .map(|p| {
            p.iter()
                .map(partition_selector)
                .collect::<PyResult<Vec<_>>>()
        })
        .transpose()?;
    Ok(ReadRequest {
        columns: args.columns.clone(),
        filter,
        partitions,
        limit: args.limit,
        start: args
            .start
            .as_ref()
            .map(|s| time_point(s, "start"))
            .transpose()?,
        end: args
            .end
            .as_ref()
            .map(|e| time_point(e, "end"))
            .transpose()?,
        time_zone: args.tz.clone(),
        read_optimized: args.read_optimized,
        changelog: args.changelog,
        ..ReadRequest::default()
    })
}

/// Plans and starts a read of `table`; the read's warnings go to Python's `warnings`.
pub fn scan(py: Python<'_>, table: &PyTable, args: ReadArgs<'_>) -> PyResult<PyBatchStream> {
    table.ready()?;
    let request = read_request(&args)?;
    let t = table.inner.clone();
    let reader = py.detach(move || t.read(&request)).py_err()?;
    warn_all(py, reader.warnings())?;
    Ok(PyBatchStream::new(reader, table.live.clone()))
}

/// The number of rows of the table.
pub fn count(py: Python<'_>, table: &PyTable) -> PyResult<u64> {
    table.ready()?;
    let t = table.inner.clone();
    py.detach(move || t.count(&ReadRequest::default())).py_err()
}

/// Point lookups of the keys in `keys`; the found rows as one batch.
pub fn lookup<'py>(
    py: Python<'py>,
    table: &PyTable,
    keys: PyArrowType<RecordBatch>,
    prefix: bool,
) -> PyResult<Bound<'py, PyAny>> {
    table.ready()?;
    let lk = table.inner.new_lookuper().py_err()?;
    let keys = keys.0;
    let found = py
        .detach(move || {
            if prefix {
                lk.prefix_lookup(&keys)
            } else {
                lk.lookup(&keys)
            }
        })
        .py_err()?;
    found.to_pyarrow(py)
}

/// Starts a subscription.
pub fn subscribe(
    py: Python<'_>,
    table: &PyTable,
    start: &Bound<'_, PyAny>,
    columns: Option<Vec<String>>,
    partitions: Option<Vec<Bound<'_, PyAny>>>,
    tz: Option<String>,
) -> PyResult<PySubscription> {
    table.ready()?;
    let request = SubscribeRequest {
        columns,
        partitions: partitions
            .map(|p| {
                p.iter()
                    .map(partition_selector)
                    .collect::<PyResult<Vec<_>>>()
            })
            .transpose()?,
        startup_mode: startup_mode(start, tz.as_deref())?,
        ..SubscribeRequest::default()
    };
    let t = table.inner.clone();
    let sub = py.detach(move || t.subscribe(&request)).py_err()?;
    Ok(PySubscription {
        inner: Arc::new(Mutex::new(Some(sub))),
        live: table.live.clone(),
    })
}

/// An unbounded subscription to a table's changes; see `riverlet.Subscription`.
#[pyclass(module = "riverlet._riverlet", name = "Subscription")]
pub struct PySubscription {
    inner: Arc<Mutex<Option<Subscription>>>,
    live: Liveness,
}

#[pymethods]
impl PySubscription {
    /// The schema of the subscribed columns (without the change columns).
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let g = self.inner.lock().map_err(|_| closed("the subscription"))?;
        match g.as_ref() {
            Some(s) => s.schema().as_ref().to_pyarrow(py),
            None => Err(closed("the subscription")),
        }
    }

    /// Waits up to `timeout` seconds and returns the change batches that arrived (maybe none),
    /// each with `_change_type`, `_log_offset`, `_commit_timestamp` columns first.
    #[pyo3(signature = (timeout = 1.0))]
    fn poll<'py>(&self, py: Python<'py>, timeout: f64) -> PyResult<Vec<Bound<'py, PyAny>>> {
        enter()?;
        self.live.check("the connection of this subscription")?;
        let timeout = Duration::try_from_secs_f64(timeout.max(0.0))
            .map_err(|e| to_py_err(Error::invalid(format!("bad timeout {timeout}: {e}"))))?;
        // try_lock: a second thread polling at the same time gets an error instead of waiting
        // for the lock with the GIL held (which the first thread needs to check for Ctrl-C).
        let mut g = self.inner.try_lock().map_err(|_| {
            to_py_err(Error::invalid(
                "this subscription is being polled by another thread; poll it from one thread",
            ))
        })?;
        let sub = g.as_mut().ok_or_else(|| closed("the subscription"))?;
        // Poll in short slices so Ctrl-C is noticed while waiting.
        let deadline = Instant::now() + timeout;
        let changes = loop {
            let slice = deadline
                .saturating_duration_since(Instant::now())
                .min(SIGNAL_CHECK);
            let changes = py.detach(|| sub.poll(slice)).py_err()?;
            if !changes.is_empty() || Instant::now() >= deadline {
                break changes;
            }
            py.check_signals()?;
        };
        drop(g);
        let batches = changes
            .iter()
            .map(|c| c.to_changelog_batch())
            .collect::<riverlet::Result<Vec<_>>>()
            .py_err()?;
        batches.iter().map(|b| b.to_pyarrow(py)).collect()
    }

    /// Stops the subscription. Idempotent.
    fn close(&self) -> PyResult<()> {
        let mut g = self.inner.lock().map_err(|_| closed("the subscription"))?;
        *g = None;
        Ok(())
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.lock().map(|g| g.is_none()).unwrap_or(true)
    }
}
