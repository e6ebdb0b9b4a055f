//! [`BatchReader`]: an async batch stream seen as a blocking `RecordBatchReader`.

use std::future::Future;
use std::pin::Pin;

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};

use super::runtime::block_on;
use crate::{Result, Warning};

/// An async source of record batches (scanners implement it): `next_batch` yields the next
/// batch, `None` at the end.
pub trait AsyncBatchSource: Send {
    /// The schema of every batch.
    fn schema(&self) -> SchemaRef;
    /// The next batch, or `None` when the source is exhausted.
    fn next_batch(
        &mut self,
    ) -> Pin<Box<dyn Future<Output = Option<Result<RecordBatch>>> + Send + '_>>;
}

/// A blocking reader of record batches; implements [`arrow_array::RecordBatchReader`], so
/// bindings can export it as an Arrow C stream.
pub struct BatchReader {
    schema: SchemaRef,
    source: Box<dyn AsyncBatchSource>,
    done: bool,
    warnings: Vec<Warning>,
    expected_rows: Option<u64>,
}

impl std::fmt::Debug for BatchReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchReader")
            .field("schema", &self.schema)
            .finish()
    }
}

struct VecSource {
    schema: SchemaRef,
    batches: std::vec::IntoIter<RecordBatch>,
}

impl AsyncBatchSource for VecSource {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
    fn next_batch(
        &mut self,
    ) -> Pin<Box<dyn Future<Output = Option<Result<RecordBatch>>> + Send + '_>> {
        let next = self.batches.next().map(Ok);
        Box::pin(async move { next })
    }
}

impl BatchReader {
    /// A reader pulling from an async source on the global runtime.
    pub fn new(source: impl AsyncBatchSource + 'static) -> Self {
        BatchReader {
            schema: source.schema(),
            source: Box::new(source),
            done: false,
            warnings: Vec::new(),
            expected_rows: None,
        }
    }

    /// Attaches warnings about the read (see [`BatchReader::warnings`]).
    pub fn with_warnings(mut self, warnings: Vec<Warning>) -> Self {
        self.warnings = warnings;
        self
    }

    /// What the caller should be told about this read, known when it was planned (e.g. a
    /// time-range window starting before `now - table.log.ttl`). Bindings surface these.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Sets the rows the reader returns in all (see [`BatchReader::expected_rows`]).
    pub fn with_expected_rows(mut self, rows: Option<u64>) -> Self {
        self.expected_rows = rows;
        self
    }

    /// How many rows the reader returns in all, when known before reading (the read's
    /// [`crate::scan::BatchStream::expected_rows`]): a progress total. `None` when unknown.
    pub fn expected_rows(&self) -> Option<u64> {
        self.expected_rows
    }

    /// A reader over batches already in memory.
    pub fn from_batches(schema: SchemaRef, batches: Vec<RecordBatch>) -> Self {
        Self::new(VecSource {
            schema,
            batches: batches.into_iter(),
        })
    }

    /// The next batch with Riverlet's error type (`None` at the end).
    pub fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        if self.done {
            return None;
        }
        let r = match block_on(self.source.next_batch()) {
            Ok(r) => r,
            Err(e) => Some(Err(e)),
        };
        if !matches!(r, Some(Ok(_))) {
            self.done = true;
        }
        r
    }

    /// Reads everything that is left.
    pub fn read_all(&mut self) -> Result<Vec<RecordBatch>> {
        let mut out = Vec::new();
        while let Some(b) = self.next_batch() {
            out.push(b?);
        }
        Ok(out)
    }
}

impl Iterator for BatchReader {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch()
            .map(|r| r.map_err(|e| ArrowError::ExternalError(Box::new(e))))
    }
}

impl RecordBatchReader for BatchReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Int32Array;
    use arrow_schema::{DataType, Field, Schema};
    use std::sync::Arc;

    #[test]
    fn reads_in_memory_batches() {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, false)]));
        let b = RecordBatch::try_new(schema.clone(), vec![Arc::new(Int32Array::from(vec![1, 2]))])
            .unwrap();
        let reader = BatchReader::from_batches(schema.clone(), vec![b.clone(), b]);
        assert_eq!(RecordBatchReader::schema(&reader), schema);
        let all: Vec<RecordBatch> = reader.map(|r| r.unwrap()).collect();
        assert_eq!(all.len(), 2);
    }
}
