//! `_riverlet.BatchStream`: a streaming read result. It exports itself through the Arrow C
//! stream interface (`__arrow_c_stream__`), so pyarrow, DuckDB and Polars read it zero-copy,
//! and it can be iterated or collected from Python with Ctrl-C checked between batches.

use std::sync::{Arc, Mutex};

use arrow::ffi_stream::FFI_ArrowArrayStream;
use arrow::pyarrow::{IntoPyArrow, ToPyArrow};
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use riverlet::blocking::BatchReader;
use riverlet::{Error, ErrorKind};

use crate::conn::Liveness;
use crate::errors::{check_process, closed, enter, PyResultExt};

/// The reader handed to a consumer through the C stream interface. It never touches the
/// GIL (consumers may pull from any thread); it refuses to run in a forked child or after the
/// connection was closed.
struct Exported {
    reader: BatchReader,
    live: Liveness,
    schema: SchemaRef,
}

impl Iterator for Exported {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Err(msg) = check_process() {
            return Some(Err(external(Error::new(ErrorKind::Closed, msg))));
        }
        if self.live.is_closed() {
            return Some(Err(external(Error::new(
                ErrorKind::Closed,
                "the connection of this stream is closed",
            ))));
        }
        self.reader.next_batch().map(|r| r.map_err(external))
    }
}

impl RecordBatchReader for Exported {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

fn external(e: Error) -> ArrowError {
    ArrowError::ExternalError(Box::new(e))
}

/// A stream of Arrow record batches from a read. Single use: iterate it, call
/// `read_next_batch()` / `read_all()`, or hand it to any consumer of `__arrow_c_stream__`.
#[pyclass(module = "riverlet._riverlet", name = "BatchStream")]
pub struct PyBatchStream {
    reader: Arc<Mutex<Option<BatchReader>>>,
    schema: SchemaRef,
    live: Liveness,
    expected_rows: Option<u64>,
}

impl PyBatchStream {
    /// Wraps a core reader.
    pub fn new(reader: BatchReader, live: Liveness) -> Self {
        let schema = RecordBatchReader::schema(&reader);
        let expected_rows = reader.expected_rows();
        PyBatchStream {
            reader: Arc::new(Mutex::new(Some(reader))),
            schema,
            live,
            expected_rows,
        }
    }

    fn take(&self) -> PyResult<BatchReader> {
        let mut g = self.reader.lock().map_err(|_| closed("the stream"))?;
        g.take().ok_or_else(|| {
            crate::errors::to_py_err(Error::new(
                ErrorKind::Closed,
                "this stream was already consumed or closed; streams are single use",
            ))
        })
    }

    /// The next batch with the GIL released while waiting; None at the end.
    fn next_rust(&self, py: Python<'_>) -> PyResult<Option<RecordBatch>> {
        enter()?;
        self.live.check("the connection of this stream")?;
        py.check_signals()?;
        let reader = self.reader.clone();
        let r = py.detach(move || -> riverlet::Result<Option<RecordBatch>> {
            let mut g = reader
                .lock()
                .map_err(|_| Error::new(ErrorKind::Closed, "the stream is unusable"))?;
            match g.as_mut() {
                None => Ok(None),
                Some(rd) => match rd.next_batch() {
                    None => {
                        *g = None;
                        Ok(None)
                    }
                    Some(Ok(b)) => Ok(Some(b)),
                    Some(Err(e)) => {
                        *g = None;
                        Err(e)
                    }
                },
            }
        });
        r.py_err()
    }
}

#[pymethods]
impl PyBatchStream {
    /// The Arrow schema of every batch (a `pyarrow.Schema`).
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.schema.as_ref().to_pyarrow(py)
    }

    /// How many rows the stream returns in all, when the core knows before reading (a
    /// progress total; see `riverlet::scan::BatchStream::expected_rows`), else None.
    #[getter]
    fn expected_rows(&self) -> Option<u64> {
        self.expected_rows
    }

    /// The next batch as a `pyarrow.RecordBatch`, or None at the end.
    fn read_next_batch<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.next_rust(py)? {
            Some(b) => Ok(Some(b.to_pyarrow(py)?)),
            None => Ok(None),
        }
    }

    /// Reads every remaining batch into a `pyarrow.Table`. `progress`, when given, is called
    /// with the row count of each batch. Ctrl-C stops the read between batches.
    #[pyo3(signature = (progress = None))]
    fn read_all<'py>(
        &self,
        py: Python<'py>,
        progress: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut batches = Vec::new();
        while let Some(b) = self.next_rust(py)? {
            if let Some(cb) = &progress {
                cb.call1((b.num_rows(),))?;
            }
            batches.push(b);
        }
        let table = arrow::pyarrow::Table::try_new(batches, self.schema.clone())
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        table.into_pyarrow(py)
    }

    /// Exports the stream through the Arrow PyCapsule interface (single use).
    /// `requested_schema` is accepted and ignored (the stream has one fixed schema).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        enter()?;
        self.live.check("the connection of this stream")?;
        let reader = self.take()?;
        let exported = Exported {
            reader,
            live: self.live.clone(),
            schema: self.schema.clone(),
        };
        let stream = FFI_ArrowArrayStream::new(Box::new(exported));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.read_next_batch(py)
    }

    /// Stops the read and frees its resources. Idempotent.
    fn close(&self) -> PyResult<()> {
        let mut g = self.reader.lock().map_err(|_| closed("the stream"))?;
        *g = None;
        Ok(())
    }

    /// Whether the stream is exhausted, exported or closed.
    #[getter]
    fn closed(&self) -> bool {
        self.reader.lock().map(|g| g.is_none()).unwrap_or(true)
    }
}
