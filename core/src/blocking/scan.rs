//! Blocking reads, all on the global runtime and each from one plain request:
//! [`Table::read`](super::Table::read) (a [`ReadRequest`] -> [`BatchReader`], an
//! `arrow_array::RecordBatchReader`), [`Table::count`](super::Table::count),
//! [`Table::subscribe`](super::Table::subscribe) (a [`SubscribeRequest`] -> [`Subscription`])
//! and [`Lookuper`].

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use super::{block_on, AsyncBatchSource, BatchReader, Table};
use crate::row::Datum;
use crate::scan::{self, BatchStream, BucketOffset, ChangeBatch, ReadRequest, SubscribeRequest};
use crate::Result;

fn run<T>(fut: impl Future<Output = Result<T>>) -> Result<T> {
    block_on(fut)?
}

/// A [`BatchStream`] seen as an [`AsyncBatchSource`].
struct StreamSource(BatchStream);

impl AsyncBatchSource for StreamSource {
    fn schema(&self) -> SchemaRef {
        self.0.schema()
    }
    fn next_batch(
        &mut self,
    ) -> Pin<Box<dyn Future<Output = Option<Result<RecordBatch>>> + Send + '_>> {
        Box::pin(self.0.next())
    }
}

/// A blocking reader over an async batch stream (its warnings and expected rows included).
pub fn reader_of(stream: BatchStream) -> BatchReader {
    let warnings = stream.warnings().to_vec();
    let expected = stream.expected_rows();
    BatchReader::new(StreamSource(stream))
        .with_warnings(warnings)
        .with_expected_rows(expected)
}

impl Table {
    /// Plans and starts the read `request` describes (validating every option first; high
    /// watermarks and window bounds are taken now). The reader pulls batches on the global
    /// runtime and carries the read's [`warnings`](BatchReader::warnings).
    pub fn read(&self, request: &ReadRequest) -> Result<BatchReader> {
        let b = request.to_scan(self.inner());
        let stream = run(async move { b.execute().await })?;
        Ok(reader_of(stream))
    }

    /// The schema [`Table::read`] returns for `request`, without reading anything.
    pub fn read_schema(&self, request: &ReadRequest) -> Result<SchemaRef> {
        request.to_scan(self.inner()).output_schema()
    }

    /// The number of rows [`Table::read`] would return for `request`
    /// (`&ReadRequest::default()`: log tables the records retained in the log, primary-key
    /// tables the keys of the latest view).
    pub fn count(&self, request: &ReadRequest) -> Result<u64> {
        let b = request.to_scan(self.inner());
        run(async move { b.count().await })
    }

    /// A lookuper for point and prefix lookups (primary-key tables).
    pub fn new_lookuper(&self) -> Result<Lookuper> {
        Ok(Lookuper {
            inner: self.inner().new_lookuper()?,
        })
    }

    /// An unbounded subscription to the table's changes, as `request` describes.
    pub fn subscribe(&self, request: &SubscribeRequest) -> Result<Subscription> {
        let t = self.inner().clone();
        let request = request.clone();
        let inner = run(async move { t.subscribe_request(&request).await })?;
        Ok(Subscription { inner })
    }
}

/// Blocking form of [`crate::scan::Lookuper`].
#[derive(Debug, Clone)]
pub struct Lookuper {
    inner: scan::Lookuper,
}

impl Lookuper {
    /// The primary-key columns (the value order of [`Lookuper::lookup_rows`]).
    pub fn key_columns(&self) -> Vec<String> {
        self.inner.key_columns()
    }
    /// The prefix-lookup columns.
    pub fn prefix_columns(&self) -> Vec<String> {
        self.inner.prefix_columns()
    }
    /// The same lookuper, inserting missing keys (see
    /// [`crate::scan::Lookuper::insert_if_not_exists`]).
    pub fn insert_if_not_exists(self, enabled: bool) -> Result<Lookuper> {
        Ok(Lookuper {
            inner: self.inner.insert_if_not_exists(enabled)?,
        })
    }
    /// Rows found for the keys of `keys` (by column name), in key order.
    pub fn lookup(&self, keys: &RecordBatch) -> Result<RecordBatch> {
        run(self.inner.lookup(keys))
    }
    /// The rows found with the key-index column first (see
    /// [`crate::scan::Lookuper::lookup_with_key_index`]).
    pub fn lookup_with_key_index(&self, keys: &RecordBatch) -> Result<RecordBatch> {
        run(self.inner.lookup_with_key_index(keys))
    }
    /// One optional row per key.
    pub fn lookup_rows(&self, keys: &[Vec<Datum>]) -> Result<Vec<Option<Vec<Datum>>>> {
        run(self.inner.lookup_rows(keys))
    }
    /// All rows matching the prefixes of `prefixes` (by column name).
    pub fn prefix_lookup(&self, prefixes: &RecordBatch) -> Result<RecordBatch> {
        run(self.inner.prefix_lookup(prefixes))
    }
    /// The rows matching each prefix.
    pub fn prefix_lookup_rows(&self, prefixes: &[Vec<Datum>]) -> Result<Vec<Vec<Vec<Datum>>>> {
        run(self.inner.prefix_lookup_rows(prefixes))
    }
}

/// Blocking form of [`crate::scan::Subscription`].
#[derive(Debug)]
pub struct Subscription {
    inner: scan::Subscription,
}

impl Subscription {
    /// The schema of the change batches.
    pub fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }
    /// Waits up to `timeout` for changes.
    pub fn poll(&mut self, timeout: Duration) -> Result<Vec<ChangeBatch>> {
        run(self.inner.poll(timeout))
    }
    /// The next offset of every bucket read (see [`crate::scan::Subscription::position`]):
    /// store it in a checkpoint, pass it as [`SubscribeRequest::start_offsets`] to resume.
    pub fn position(&self) -> Vec<BucketOffset> {
        self.inner.position()
    }
}
