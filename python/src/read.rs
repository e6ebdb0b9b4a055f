//! Reads of a table: scans (plain, time-range, changelog), count, lookups, subscriptions.
//! Arguments are converted here; planning, validation and semantics are the core's.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow::pyarrow::{PyArrowType, ToPyArrow};
use arrow_array::RecordBatch;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use riverlet::blocking::scan::Subscription;
use riverlet::metadata::PartitionSpec;
use riverlet::scan::{BucketOffset, Filter, PartitionSelector, ReadRequest, SubscribeRequest};
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
    /// The caller keeps every batch until the read ends (`read()` into one table).
    pub keep_batches: bool,
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
        keep_batches: args.keep_batches,
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
    insert_if_not_exists: bool,
) -> PyResult<Bound<'py, PyAny>> {
    table.ready()?;
    let lk = table
        .inner
        .new_lookuper()
        .and_then(|l| l.insert_if_not_exists(insert_if_not_exists))
        .py_err()?;
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

/// The options of a subscription besides its start, converted from Python.
pub struct SubscribeArgs<'py> {
    pub columns: Option<Vec<String>>,
    pub partitions: Option<Vec<Bound<'py, PyAny>>>,
    pub tz: Option<String>,
    pub buckets: Option<Vec<i32>>,
    pub start_offsets: Option<Vec<Bound<'py, PyAny>>>,
}

/// A start offset given as the dict `Subscription.position()` returns: `bucket` and `offset`,
/// plus `partition_name` (or `partition_id`) for a partitioned table.
fn bucket_offset(v: &Bound<'_, PyAny>) -> PyResult<BucketOffset> {
    let bad = || {
        to_py_err(Error::invalid(format!(
            "a start offset is a dict with 'bucket' and 'offset' (and 'partition_name' for a \
             partitioned table), as Subscription.position() returns; got {}",
            v.repr().map(|r| r.to_string()).unwrap_or_default()
        )))
    };
    let d = v.cast::<PyDict>().map_err(|_| bad())?;
    let get = |k: &str| d.get_item(k).ok().flatten().filter(|x| !x.is_none());
    let int = |k: &str| -> PyResult<Option<i64>> {
        get(k)
            .map(|x| x.extract::<i64>().map_err(|_| bad()))
            .transpose()
    };
    let bucket = int("bucket")?.ok_or_else(bad)?;
    Ok(BucketOffset {
        partition_id: int("partition_id")?,
        partition_name: get("partition_name")
            .map(|x| x.extract::<String>().map_err(|_| bad()))
            .transpose()?,
        bucket: i32::try_from(bucket).map_err(|_| bad())?,
        offset: int("offset")?.ok_or_else(bad)?,
    })
}

/// Starts a subscription.
pub fn subscribe(
    py: Python<'_>,
    table: &PyTable,
    start: &Bound<'_, PyAny>,
    args: SubscribeArgs<'_>,
) -> PyResult<PySubscription> {
    table.ready()?;
    let request = SubscribeRequest {
        columns: args.columns,
        partitions: args
            .partitions
            .map(|p| {
                p.iter()
                    .map(partition_selector)
                    .collect::<PyResult<Vec<_>>>()
            })
            .transpose()?,
        buckets: args.buckets,
        startup_mode: startup_mode(start, args.tz.as_deref())?,
        start_offsets: args
            .start_offsets
            .map(|o| o.iter().map(bucket_offset).collect::<PyResult<Vec<_>>>())
            .transpose()?
            .unwrap_or_default(),
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
        if timeout.is_nan() || timeout < 0.0 {
            return Err(to_py_err(Error::invalid(format!(
                "poll timeout must be a number of seconds >= 0, got {timeout}"
            ))));
        }
        // Past what a Duration holds (inf, 1e300) means "until data arrives".
        let timeout = Duration::try_from_secs_f64(timeout).unwrap_or(Duration::MAX);
        // try_lock: a second thread polling at the same time gets an error instead of waiting
        // for the lock with the GIL held (which the first thread needs to check for Ctrl-C).
        let mut g = self.inner.try_lock().map_err(|_| {
            to_py_err(Error::invalid(
                "this subscription is being polled by another thread; poll it from one thread",
            ))
        })?;
        let sub = g.as_mut().ok_or_else(|| closed("the subscription"))?;
        // Poll in short slices so Ctrl-C is noticed while waiting.
        let deadline = riverlet::scan::Deadline::after(timeout);
        let changes = loop {
            let slice = deadline.remaining().min(SIGNAL_CHECK);
            let changes = py.detach(|| sub.poll(slice)).py_err()?;
            if !changes.is_empty() || deadline.passed() {
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

    /// The next offset of every bucket read, as dicts with `partition_id`, `partition_name`
    /// (None without partitions), `bucket` and `offset`: pass them as `start_offsets` to resume
    /// after the rows polled so far.
    fn position<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let g = self.inner.lock().map_err(|_| closed("the subscription"))?;
        let sub = g.as_ref().ok_or_else(|| closed("the subscription"))?;
        sub.position()
            .into_iter()
            .map(|p| {
                let d = PyDict::new(py);
                d.set_item("partition_id", p.partition_id)?;
                d.set_item("partition_name", p.partition_name)?;
                d.set_item("bucket", p.bucket)?;
                d.set_item("offset", p.offset)?;
                Ok(d)
            })
            .collect()
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
