//! Reading tables: filters, time ranges, the primary-key changelog fold, scans, lookups and
//! subscriptions.
//!
//! Entry points are `impl Table` methods:
//! - [`Table::scan`] -> [`ScanBuilder`]: a bounded read (log tables: every record up to the
//!   high watermarks taken when the read is planned; primary-key tables: the latest view through
//!   ScanKv, or with [`ScanBuilder::between`] the window's changelog folded per key), with
//!   projection, filters, partition pruning, limit, and a changelog form
//!   ([`ScanBuilder::changelog`]);
//!   A lake-enabled log table with a lake snapshot is read as the union of the snapshot's rows
//!   and each bucket's log from the offset the snapshot recorded (feature `lake`; a time-range
//!   read never reads the lake); handles opened as `db.t$lake` / `db.t$lake$snapshots` read
//!   the lake views (`lake_view`);
//! - [`Table::count`]: the number of rows;
//! - [`Table::new_lookuper`] -> [`Lookuper`]: point and prefix lookups on primary-key tables;
//! - [`Table::subscribe`] -> [`Subscription`]: an unbounded stream of change batches from a
//!   [`StartupMode`].
//!
//! Building blocks: [`expr`] (filters), [`time`] (timestamps, [`TimeRange`]), [`fold`] (the
//! changelog fold).

pub mod expr;
pub mod fold;
mod ipc;
mod lake_view;
mod lookup;
mod reader;
mod request;
mod stream;
mod subscribe;
pub mod time;

use std::sync::Arc;

use arrow_schema::{Field, Schema as ArrowSchema, SchemaRef};

pub use expr::{filter_batch, parse_filter, prune_partitions, CompareOp, Expr, Literal, TermOp};
pub use fold::{ChangeRecord, ChangelogFold, KeyChange};
pub use ipc::{IpcBodies, IpcMessage, IpcStream};
pub use lookup::{Lookuper, KEY_INDEX_COLUMN};
pub use reader::ReadSplit;
pub use request::{
    BucketOffset, Filter, ReadRequest, SubscribeRequest, READ_OPTION_KEYS, SUBSCRIBE_OPTION_KEYS,
};
pub use stream::BatchStream;
pub use subscribe::{ChangeBatch, Deadline, StartupMode, Subscription};
pub use time::{parse_timestamp, PinnedRange, TimePoint, TimeRange, TimeZoneSpec};

use crate::client::{Table, TableView};
use crate::metadata::{DataType, PartitionSpec};
use crate::{Error, Result};

/// Name of the change-type column of a changelog read (`insert`, `update_before`,
/// `update_after`, `delete`, as Flink's `$changelog`).
pub const CHANGE_TYPE_COLUMN: &str = "_change_type";
/// Name of the log-offset column of a changelog read (BIGINT).
pub const LOG_OFFSET_COLUMN: &str = "_log_offset";
/// Name of the commit-timestamp column of a changelog read (TIMESTAMP_LTZ(3)).
pub const COMMIT_TIMESTAMP_COLUMN: &str = "_commit_timestamp";

/// The three metadata columns a changelog read puts before the table's columns.
pub fn changelog_meta_fields() -> Vec<Field> {
    vec![
        Field::new(CHANGE_TYPE_COLUMN, arrow_schema::DataType::Utf8, false),
        Field::new(LOG_OFFSET_COLUMN, arrow_schema::DataType::Int64, false),
        crate::metadata::schema::to_arrow_field(
            COMMIT_TIMESTAMP_COLUMN,
            &DataType::timestamp_ltz(3).not_null(),
        ),
    ]
}

/// A partition named by the caller: its Fluss name (`v1$v2`) or its spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionSelector {
    /// Fluss's partition name (the values joined by `$`), e.g. `2024-01-01$eu`.
    Name(String),
    /// Partition key = value pairs.
    Spec(PartitionSpec),
}

impl From<&str> for PartitionSelector {
    fn from(v: &str) -> Self {
        PartitionSelector::Name(v.to_string())
    }
}
impl From<String> for PartitionSelector {
    fn from(v: String) -> Self {
        PartitionSelector::Name(v)
    }
}
impl From<PartitionSpec> for PartitionSelector {
    fn from(v: PartitionSpec) -> Self {
        PartitionSelector::Spec(v)
    }
}
impl From<&PartitionSpec> for PartitionSelector {
    fn from(v: &PartitionSpec) -> Self {
        PartitionSelector::Spec(v.clone())
    }
}

/// Options of a bounded read; [`ScanBuilder::execute`] plans and starts it.
#[derive(Debug, Clone)]
pub struct ScanBuilder {
    table: Table,
    projection: Option<Vec<String>>,
    filter: Option<Expr>,
    partitions: Option<Vec<PartitionSelector>>,
    limit: Option<usize>,
    between: Option<(Option<TimePoint>, Option<TimePoint>)>,
    time_zone: TimeZoneSpec,
    read_optimized: bool,
    changelog: bool,
    buckets: Option<Vec<i32>>,
    batch_size: Option<usize>,
    keep_batches: bool,
    split: Option<ReadSplit>,
    deferred: Option<Error>,
}

impl ScanBuilder {
    /// A read of every row of `table`.
    pub fn new(table: Table) -> ScanBuilder {
        ScanBuilder {
            table,
            projection: None,
            filter: None,
            partitions: None,
            limit: None,
            between: None,
            time_zone: TimeZoneSpec::Local,
            read_optimized: false,
            changelog: false,
            buckets: None,
            batch_size: None,
            keep_batches: false,
            split: None,
            deferred: None,
        }
    }

    /// The read a [`ReadRequest`] describes (invalid options fail when it is executed).
    pub fn from_request(table: Table, request: &ReadRequest) -> ScanBuilder {
        request.apply(ScanBuilder::new(table))
    }

    fn defer(&mut self, e: Error) {
        if self.deferred.is_none() {
            self.deferred = Some(e);
        }
    }

    /// Reads only these columns, in this order.
    pub fn project(mut self, columns: &[&str]) -> ScanBuilder {
        self.projection = Some(columns.iter().map(|c| c.to_string()).collect());
        self
    }

    /// [`ScanBuilder::project`] with owned names.
    pub fn project_names(mut self, columns: Vec<String>) -> ScanBuilder {
        self.projection = Some(columns);
        self
    }

    /// Keeps only rows for which `expr` is true (several calls are ANDed).
    pub fn filter(mut self, expr: Expr) -> ScanBuilder {
        self.filter = Some(match self.filter.take() {
            Some(f) => f.and(expr),
            None => expr,
        });
        self
    }

    /// [`ScanBuilder::filter`] with the text form of [`parse_filter`].
    pub fn filter_text(self, text: &str) -> ScanBuilder {
        match parse_filter(text) {
            Ok(e) => self.filter(e),
            Err(e) => {
                let mut s = self;
                s.defer(e);
                s
            }
        }
    }

    /// Reads only these partitions (by name `v1$v2` or spec).
    pub fn partitions<I, P>(mut self, partitions: I) -> ScanBuilder
    where
        I: IntoIterator<Item = P>,
        P: Into<PartitionSelector>,
    {
        self.partitions = Some(partitions.into_iter().map(Into::into).collect());
        self
    }

    /// Returns at most `n` rows.
    pub fn limit(mut self, n: usize) -> ScanBuilder {
        self.limit = Some(n);
        self
    }

    /// Reads the window `[start, end)` of commit time (end omitted: up to the moment the read
    /// is planned). See `docs/concepts/time-range.md`.
    pub fn between(mut self, start: impl Into<TimePoint>, end: Option<TimePoint>) -> ScanBuilder {
        self.between = Some((Some(start.into()), end));
        self
    }

    /// [`ScanBuilder::between`] for option-style surfaces where either bound may be missing: an
    /// end without a start is an error, neither is a plain read.
    pub fn between_options(
        mut self,
        start: Option<TimePoint>,
        end: Option<TimePoint>,
    ) -> ScanBuilder {
        self.between = match (&start, &end) {
            (None, None) => None,
            _ => Some((start, end)),
        };
        self
    }

    /// The zone in which texts, dates and wall clocks of [`ScanBuilder::between`] are read:
    /// an IANA name, `UTC`, an offset like `+08:00`, or `local` (the default: the process's
    /// zone, from `TZ` or the system).
    pub fn time_zone(mut self, zone: &str) -> ScanBuilder {
        match TimeZoneSpec::parse(zone) {
            Ok(tz) => self.time_zone = tz,
            Err(e) => self.defer(e),
        }
        self
    }

    /// [`ScanBuilder::time_zone`] with a parsed zone.
    pub fn time_zone_spec(mut self, zone: TimeZoneSpec) -> ScanBuilder {
        self.time_zone = zone;
        self
    }

    /// Read-optimized read of a primary-key table (Fluss's `read.optimized`): every bucket's
    /// latest KV snapshot, without the log changes after it, so it may be stale; a bucket
    /// without a snapshot yet returns no rows. Not combinable with [`ScanBuilder::between`] nor
    /// [`ScanBuilder::changelog`]. Log tables ignore it.
    pub fn read_optimized(mut self, enabled: bool) -> ScanBuilder {
        self.read_optimized = enabled;
        self
    }

    /// Returns the log's changes with `_change_type`, `_log_offset` and `_commit_timestamp`
    /// columns before the table's (for PK tables every change, not folded).
    pub fn changelog(mut self, enabled: bool) -> ScanBuilder {
        self.changelog = enabled;
        self
    }

    /// Reads only these buckets (of every partition read); a bucket id outside the table's
    /// buckets is an error when the read is planned. One Spark input partition / Flink split
    /// reads one bucket of one partition this way.
    pub fn buckets(mut self, buckets: impl IntoIterator<Item = i32>) -> ScanBuilder {
        self.buckets = Some(buckets.into_iter().collect());
        self
    }

    /// Returns batches of at most `rows` rows (0: as the server's batches come).
    pub fn batch_size(mut self, rows: usize) -> ScanBuilder {
        self.batch_size = Some(rows).filter(|r| *r > 0);
        self
    }

    /// Whether the caller keeps every batch until the read ends (see
    /// [`ReadRequest::keep_batches`]; [`ScanBuilder::collect`] does).
    pub fn keep_batches(mut self, keep: bool) -> ScanBuilder {
        self.keep_batches = keep;
        self
    }

    /// The table being read.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// Restricts the read to one piece [`ScanBuilder::plan_splits`] cut from the same read:
    /// its bucket, with the bounds taken when the pieces were planned.
    pub fn split(mut self, split: ReadSplit) -> ScanBuilder {
        self.split = Some(split);
        self
    }

    /// Plans the read (as [`ScanBuilder::execute`] would, taking every bucket's bounds now) and
    /// cuts each bucket into pieces of about `max_records` records (at most `max_per_bucket`
    /// per bucket), each read on its own with [`ScanBuilder::split`]: together they read
    /// every record of the read once, each log batch whole in one piece (see [`ReadSplit`]).
    /// `None` when the read cannot be cut: a view, a primary-key table's latest view or
    /// window, a limit, a union read with the lake. Buckets without records have no piece.
    pub async fn plan_splits(
        self,
        max_records: u64,
        max_per_bucket: usize,
    ) -> Result<Option<Vec<ReadSplit>>> {
        if self.table.view != TableView::Table {
            return Ok(None);
        }
        let path = self.table.info.table_path.clone();
        let plan = reader::plan(self)
            .await
            .map_err(|e| add_table_context(e, &path.to_string()))?;
        if !reader::splittable(&plan) {
            return Ok(None);
        }
        Ok(Some(reader::cut_splits(&plan, max_records, max_per_bucket)))
    }

    /// The schema of the batches [`ScanBuilder::execute`] will return.
    pub fn output_schema(&self) -> Result<SchemaRef> {
        if self.table.view != TableView::Table {
            let full = lake_view::full_schema(self)?;
            let cols = resolve_projection(&self.table, &full, self.projection.as_deref())?;
            return Ok(Arc::new(full.project(&cols)?));
        }
        let full = self.table.info.schema().to_arrow();
        let cols = resolve_projection(&self.table, &full, self.projection.as_deref())?;
        let mut fields: Vec<Field> = Vec::new();
        if self.changelog {
            fields.extend(changelog_meta_fields());
        }
        fields.extend(cols.iter().map(|i| full.field(*i).clone()));
        Ok(Arc::new(ArrowSchema::new(fields)))
    }

    /// Plans the read (validating every option first; high watermarks and window bounds are
    /// taken now) and starts it.
    pub async fn execute(self) -> Result<BatchStream> {
        if self.table.view != TableView::Table {
            let name = self.table.view_name();
            return lake_view::execute(self)
                .await
                .map_err(|e| add_table_context(e, &name));
        }
        let path = self.table.info.table_path.clone();
        let batch_size = self.batch_size;
        let mut plan = reader::plan(self)
            .await
            .map_err(|e| add_table_context(e, &path.to_string()))?;
        let warnings = std::mem::take(&mut plan.warnings);
        let expected = plan.expected_rows;
        Ok(reader::run(plan)
            .with_warnings(warnings)
            .with_expected_rows(expected)
            .with_max_rows(batch_size))
    }

    /// Plans and starts the read like [`ScanBuilder::execute`], handing out its rows as Arrow
    /// IPC messages (see [`IpcStream`]): the log batches the read wants whole go out as Fluss
    /// stored them, without decoding (`bodies` says whether compressed ones may); everything
    /// else is decoded and encoded once.
    pub async fn execute_ipc(self, bodies: IpcBodies) -> Result<IpcStream> {
        if self.table.view != TableView::Table {
            return Ok(IpcStream::encoding(self.execute().await?));
        }
        let path = self.table.info.table_path.clone();
        let mut plan = reader::plan(self)
            .await
            .map_err(|e| add_table_context(e, &path.to_string()))?;
        let warnings = std::mem::take(&mut plan.warnings);
        Ok(reader::run_ipc(plan, bodies).with_warnings(warnings))
    }

    /// The number of rows the read returns. A log-table read without a filter or window is
    /// counted from the buckets' offsets, without reading the records.
    pub async fn count(self) -> Result<u64> {
        // A union read (lake-enabled log table) counts the lake's rows too: it is read.
        let from_offsets = !self.table.info.descriptor.has_primary_key()
            && self.table.view == TableView::Table
            && !(cfg!(feature = "lake") && reader::union_candidate(&self.table))
            && self.filter.is_none()
            && self.between.is_none()
            && self.deferred.is_none();
        if !from_offsets {
            return self.execute().await?.count_rows().await;
        }
        // The options are still checked (an unknown column is an error, as in a read).
        self.output_schema()?;
        let n = reader::log_count(
            &self.table,
            self.partitions.as_deref(),
            self.buckets.as_deref(),
        )
        .await?;
        Ok(self.limit.map_or(n, |l| n.min(l as u64)))
    }

    /// Runs the read and collects every batch.
    pub async fn collect(self) -> Result<Vec<arrow_array::RecordBatch>> {
        self.keep_batches(true).execute().await?.collect().await
    }
}

fn add_table_context(e: Error, table: &str) -> Error {
    if e.message().contains(table) {
        e
    } else {
        e.context(format!("read of table '{table}'"))
    }
}

/// The table-column indexes of a projection (all columns when None), erroring on unknown or
/// repeated names.
pub(crate) fn resolve_projection(
    table: &Table,
    full: &SchemaRef,
    projection: Option<&[String]>,
) -> Result<Vec<usize>> {
    let Some(names) = projection else {
        return Ok((0..full.fields().len()).collect());
    };
    let mut out = Vec::with_capacity(names.len());
    for n in names {
        let i = full.index_of(n).map_err(|_| {
            let cols: Vec<&str> = full.fields().iter().map(|f| f.name().as_str()).collect();
            Error::invalid(format!(
                "unknown column '{n}' in the projection of table '{}'; its columns are: {}",
                table.info.table_path,
                cols.join(", ")
            ))
        })?;
        if out.contains(&i) {
            crate::bail_invalid!(
                "column '{n}' appears twice in the projection of table '{}'",
                table.info.table_path
            );
        }
        out.push(i);
    }
    Ok(out)
}

impl Table {
    /// A bounded read of this table (see [`ScanBuilder`]).
    pub fn scan(&self) -> ScanBuilder {
        ScanBuilder::new(self.clone())
    }

    /// The number of rows: for log tables the records retained in the log, for primary-key
    /// tables the keys of the latest view.
    pub async fn count(&self) -> Result<u64> {
        self.scan().count().await
    }

    /// A lookuper for point and prefix lookups (primary-key tables).
    pub fn new_lookuper(&self) -> Result<Lookuper> {
        self.refuse_view("lookups")?;
        Lookuper::new(self.clone())
    }

    /// An unbounded subscription to the table's changes, from `mode`.
    pub async fn subscribe(&self, mode: StartupMode) -> Result<Subscription> {
        self.subscribe_request(&SubscribeRequest::new(mode)).await
    }

    /// [`Table::subscribe`] limited to some partitions and/or reading only some columns.
    pub async fn subscribe_with(
        &self,
        mode: StartupMode,
        projection: Option<&[&str]>,
        partitions: Option<Vec<PartitionSelector>>,
    ) -> Result<Subscription> {
        let request = SubscribeRequest {
            columns: projection.map(|p| p.iter().map(|s| s.to_string()).collect()),
            partitions,
            ..SubscribeRequest::new(mode)
        };
        self.subscribe_request(&request).await
    }

    /// The subscription a [`SubscribeRequest`] describes (columns, partitions, buckets,
    /// startup mode and explicit start offsets).
    pub async fn subscribe_request(&self, request: &SubscribeRequest) -> Result<Subscription> {
        self.refuse_view("subscriptions")?;
        Subscription::start(self.clone(), request).await
    }

    /// Lake views are read with bounded reads only.
    fn refuse_view(&self, what: &str) -> Result<()> {
        if self.view == TableView::Table {
            return Ok(());
        }
        Err(Error::unsupported(format!(
            "{}: {what} are not supported on a lake view; use table '{}'",
            self.view_name(),
            self.info.table_path
        )))
    }
}
