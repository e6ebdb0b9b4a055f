//! Blocking scan wrappers: [`Table::scan`](super::Table::scan) -> [`ScanBuilder`] whose
//! `execute()` returns a [`BatchReader`] (an `arrow_array::RecordBatchReader`), plus
//! [`Table::count`](super::Table::count), [`Lookuper`] and [`Subscription`], all on the global
//! runtime.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use super::{block_on, AsyncBatchSource, BatchReader, Table};
use crate::row::Datum;
use crate::scan::{
    self, BatchStream, ChangeBatch, Expr, PartitionSelector, StartupMode, TimePoint, TimeZoneSpec,
};
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

/// A blocking reader over an async batch stream.
pub fn reader_of(stream: BatchStream) -> BatchReader {
    BatchReader::new(StreamSource(stream))
}

impl Table {
    /// A bounded read of this table (see [`crate::scan::ScanBuilder`]).
    pub fn scan(&self) -> ScanBuilder {
        ScanBuilder {
            inner: self.inner().scan(),
        }
    }

    /// The number of rows (see [`crate::client::Table::count`]).
    pub fn count(&self) -> Result<u64> {
        let t = self.inner().clone();
        run(async move { t.count().await })
    }

    /// A lookuper for point and prefix lookups (primary-key tables).
    pub fn new_lookuper(&self) -> Result<Lookuper> {
        Ok(Lookuper {
            inner: self.inner().new_lookuper()?,
        })
    }

    /// An unbounded subscription to the table's changes from `mode`.
    pub fn subscribe(&self, mode: StartupMode) -> Result<Subscription> {
        self.subscribe_with(mode, None, None)
    }

    /// [`Table::subscribe`] limited to some columns and/or partitions.
    pub fn subscribe_with(
        &self,
        mode: StartupMode,
        projection: Option<&[&str]>,
        partitions: Option<Vec<PartitionSelector>>,
    ) -> Result<Subscription> {
        let t = self.inner().clone();
        let proj: Option<Vec<String>> =
            projection.map(|p| p.iter().map(|s| s.to_string()).collect());
        let inner = run(async move {
            let refs: Option<Vec<&str>> = proj
                .as_ref()
                .map(|p| p.iter().map(String::as_str).collect());
            t.subscribe_with(mode, refs.as_deref(), partitions).await
        })?;
        Ok(Subscription { inner })
    }
}

/// Blocking form of [`crate::scan::ScanBuilder`]: the same options; `execute` returns a
/// [`BatchReader`].
#[derive(Debug, Clone)]
pub struct ScanBuilder {
    inner: scan::ScanBuilder,
}

impl ScanBuilder {
    fn map(self, f: impl FnOnce(scan::ScanBuilder) -> scan::ScanBuilder) -> ScanBuilder {
        ScanBuilder {
            inner: f(self.inner),
        }
    }
    /// The async builder inside.
    pub fn inner(&self) -> &scan::ScanBuilder {
        &self.inner
    }
    /// Reads only these columns, in this order.
    pub fn project(self, columns: &[&str]) -> ScanBuilder {
        self.map(|b| b.project(columns))
    }
    /// Keeps only rows matching `expr` (calls are ANDed).
    pub fn filter(self, expr: Expr) -> ScanBuilder {
        self.map(|b| b.filter(expr))
    }
    /// Keeps only rows matching the text filter (see [`crate::scan::parse_filter`]).
    pub fn filter_text(self, text: &str) -> ScanBuilder {
        self.map(|b| b.filter_text(text))
    }
    /// Reads only these partitions.
    pub fn partitions<I, P>(self, partitions: I) -> ScanBuilder
    where
        I: IntoIterator<Item = P>,
        P: Into<PartitionSelector>,
    {
        self.map(|b| b.partitions(partitions))
    }
    /// At most `n` rows.
    pub fn limit(self, n: usize) -> ScanBuilder {
        self.map(|b| b.limit(n))
    }
    /// The commit-time window `[start, end)`.
    pub fn between(self, start: impl Into<TimePoint>, end: Option<TimePoint>) -> ScanBuilder {
        self.map(|b| b.between(start, end))
    }
    /// The window from optional bounds (an end without a start is an error).
    pub fn between_options(self, start: Option<TimePoint>, end: Option<TimePoint>) -> ScanBuilder {
        self.map(|b| b.between_options(start, end))
    }
    /// The zone of the window's texts and wall clocks (default: the process's local zone).
    pub fn time_zone(self, zone: &str) -> ScanBuilder {
        self.map(|b| b.time_zone(zone))
    }
    /// [`ScanBuilder::time_zone`] with a parsed zone.
    pub fn time_zone_spec(self, zone: TimeZoneSpec) -> ScanBuilder {
        self.map(|b| b.time_zone_spec(zone))
    }
    /// Snapshot-only read of a primary-key table.
    pub fn read_optimized(self, enabled: bool) -> ScanBuilder {
        self.map(|b| b.read_optimized(enabled))
    }
    /// Changelog form with `_change_type`, `_log_offset`, `_commit_timestamp` first.
    pub fn changelog(self, enabled: bool) -> ScanBuilder {
        self.map(|b| b.changelog(enabled))
    }
    /// The schema the read will return.
    pub fn output_schema(&self) -> Result<SchemaRef> {
        self.inner.output_schema()
    }
    /// Plans and starts the read; the reader pulls batches on the global runtime.
    pub fn execute(self) -> Result<BatchReader> {
        let b = self.inner;
        let stream = run(async move { b.execute().await })?;
        Ok(reader_of(stream))
    }
    /// Runs the read and counts its rows.
    pub fn count(self) -> Result<u64> {
        let b = self.inner;
        run(async move { b.count().await })
    }
    /// Runs the read and collects every batch.
    pub fn collect(self) -> Result<Vec<RecordBatch>> {
        let b = self.inner;
        run(async move { b.collect().await })
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
    /// (partition id, bucket, next offset) of every bucket.
    pub fn positions(&self) -> Vec<(Option<i64>, i32, i64)> {
        self.inner.positions()
    }
}
