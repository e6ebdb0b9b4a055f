//! Planning and running bounded reads: log fetches bounded at planning-time high watermarks,
//! time windows, the primary-key fold, and the latest view of primary-key tables (ScanKv, or
//! on Apache Fluss 0.9.x a replay of the changelog folded per key).

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, RecordBatchOptions, StringArray};
use arrow_schema::{Field, Schema as ArrowSchema, SchemaRef};

use super::expr::{filter_batch, prune_partitions, Expr};
use super::fold::{ChangeRecord, ChangelogFold, KeyChange};
use super::stream::{BatchStream, Emitter};
use super::time::{now_millis, retention_warning, PinnedRange, TimeRange};
use super::{changelog_meta_fields, resolve_projection, PartitionSelector, ScanBuilder};
use crate::client::{OffsetSpec, PartitionInfo, Table};
use crate::metadata::error_codes;
use crate::metadata::{DataType, KvFormat, LogFormat};
use crate::proto::{
    FetchLogRequest, GetLatestKvSnapshotsRequest, PbFetchLogReqForBucket, PbFetchLogReqForTable,
    PbFetchLogRespForBucket, PbScanReqForBucket, PbTablePath, ScanKvRequest,
};
use crate::record::{ChangeType, LogBatchIter, LogRecordBatch, ValueRecordBatch};
use crate::rpc::ApiKey;
use crate::{Error, Result};

/// Bytes asked per bucket in one FetchLog.
const FETCH_BUCKET_BYTES: i32 = 8 * 1024 * 1024;
/// Bytes asked per bucket in one FetchLog of a time-range read: a window usually ends long
/// before 8 MiB of log, and what the server sends past its end is wasted.
const WINDOW_FETCH_BUCKET_BYTES: i32 = 2 * 1024 * 1024;
/// Bytes asked per FetchLog.
const FETCH_MAX_BYTES: i32 = 16 * 1024 * 1024;
/// Bytes asked per ScanKv round trip.
const SCAN_KV_BATCH_BYTES: i32 = 4 * 1024 * 1024;
/// Rows per output batch of folds and KV scans.
const OUTPUT_ROWS: usize = 8192;
/// Empty fetch responses tolerated in a row before a read below the high watermark gives up.
const MAX_EMPTY_FETCHES: u32 = 50;

/// One bucket to read: `[start, end)` in offsets.
#[derive(Debug, Clone)]
pub(crate) struct BucketRead {
    pub partition_id: Option<i64>,
    pub partition_name: Option<String>,
    pub bucket: i32,
    pub start: i64,
    pub end: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Log records as they are.
    Log,
    /// Log records with the changelog metadata columns.
    Changelog,
    /// The window's changelog folded per key.
    PkFold,
    /// The latest view through ScanKv.
    Kv,
}

/// A planned read.
pub(crate) struct Plan {
    pub table: Table,
    pub mode: Mode,
    /// Table columns fetched (ascending), what FetchLog's projection asks for.
    pub fetch_cols: Vec<usize>,
    /// The Arrow schema of the fetched columns.
    pub fetch_schema: SchemaRef,
    /// Whether the fetch projects (fewer columns than the table).
    pub projected: bool,
    /// For each output column, its index in the working batch.
    pub output_cols: Vec<usize>,
    pub output_schema: SchemaRef,
    pub filter: Option<Expr>,
    pub buckets: Vec<BucketRead>,
    pub range: Option<PinnedRange>,
    pub limit: Option<usize>,
    /// Primary-key columns within the fetched columns (fold) and their types.
    pub key_cols: Vec<usize>,
    pub key_types: Vec<DataType>,
    /// What the caller should be told about this read (e.g. a window reaching past retention).
    pub warnings: Vec<crate::Warning>,
}

pub(crate) fn table_name(table: &Table) -> String {
    table.info.table_path.to_string()
}

/// The partitions to read: all (or the selected ones), pruned by the filter. `[None]` for a
/// table without partitions.
pub(crate) async fn select_partitions(
    table: &Table,
    selected: Option<&[PartitionSelector]>,
    filter: Option<&Expr>,
) -> Result<Vec<Option<PartitionInfo>>> {
    let keys = &table.info.descriptor.partition_keys;
    if keys.is_empty() {
        if let Some(sel) = selected.filter(|s| !s.is_empty()) {
            crate::bail_invalid!(
                "table '{}' is not partitioned, but the read names partitions {:?}",
                table_name(table),
                sel
            );
        }
        return Ok(vec![None]);
    }
    let all = table.conn.partitions(&table.info.table_path).await?;
    let mut parts: Vec<PartitionInfo> =
        match selected {
            None => all,
            Some(sel) => {
                let mut out = Vec::new();
                for s in sel {
                    let name = match s {
                        PartitionSelector::Name(n) => n.clone(),
                        PartitionSelector::Spec(spec) => spec.resolve(keys)?.partition_name(),
                    };
                    match all.iter().find(|p| p.name == name) {
                        Some(p) => {
                            if !out
                                .iter()
                                .any(|o: &PartitionInfo| o.partition_id == p.partition_id)
                            {
                                out.push(p.clone())
                            }
                        }
                        None => {
                            return Err(Error::from_fluss(
                                error_codes::PARTITION_NOT_EXISTS,
                                format!(
                                "partition '{name}' of table '{}' does not exist; its partitions \
                                 are: {}",
                                table_name(table),
                                all.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
                            ),
                            ))
                        }
                    }
                }
                out
            }
        };
    if let Some(f) = filter {
        parts = prune_partitions(keys, parts, f, |p| {
            keys.iter()
                .map(|k| p.spec.get(k).unwrap_or_default().to_string())
                .collect()
        });
    }
    Ok(parts.into_iter().map(Some).collect())
}

/// Offsets of every bucket of one partition (or of the table).
async fn offsets(
    table: &Table,
    partition_id: Option<i64>,
    spec: OffsetSpec,
) -> Result<BTreeMap<i32, i64>> {
    let buckets: Vec<i32> = (0..table.info.num_buckets()).collect();
    table
        .conn
        .admin()
        .list_offsets_by_id(table.info.table_id, partition_id, &buckets, spec)
        .await
}

fn future_start_error(e: Error, table: &Table, range: &PinnedRange) -> Error {
    if e.fluss_code() == Some(error_codes::INVALID_TIMESTAMP_EXCEPTION) {
        Error::invalid(format!(
            "time-range read of table '{}': the start timestamp {} is in the future for the \
             server (its clock is behind ours or the start is past now): {}",
            table_name(table),
            range.start_ms,
            e.message()
        ))
    } else {
        e
    }
}

/// Validates the options and takes the bounds of every bucket.
pub(crate) async fn plan(b: ScanBuilder) -> Result<Plan> {
    if let Some(e) = b.deferred {
        return Err(e);
    }
    let table = b.table;
    let info = table.info.clone();
    let name = table_name(&table);
    let has_pk = info.descriptor.has_primary_key();
    let full = info.schema().to_arrow();

    // --- options, all checked before any data is read
    let out_cols = resolve_projection(&table, &full, b.projection.as_deref())?;
    if let Some(f) = &b.filter {
        if b.changelog {
            let mut fields: Vec<Field> = changelog_meta_fields();
            fields.extend(full.fields().iter().map(|f| f.as_ref().clone()));
            f.validate(&ArrowSchema::new(fields))?;
        } else {
            f.validate(&full)?;
        }
    }
    let window = match b.between {
        None => None,
        Some((start, end)) => {
            if has_pk && b.read_optimized {
                crate::bail_invalid!(
                    "table '{name}': read-optimized mode must not be enabled for a time-range \
                     read: it skips log changes and reads only snapshots, so it cannot tell what \
                     changed in the window"
                );
            }
            TimeRange::from_options(start, end, &b.time_zone, "start", "end")?
        }
    };
    let now = now_millis();
    let mut warnings = Vec::new();
    let range = match &window {
        Some(w) => {
            let p = w.pin(now)?;
            let ttl = info.descriptor.log_ttl_ms().ok();
            warnings.extend(retention_warning(&name, &p, ttl, now));
            Some(p)
        }
        None => None,
    };

    let mode = if b.changelog {
        Mode::Changelog
    } else if !has_pk {
        Mode::Log
    } else if range.is_some() {
        Mode::PkFold
    } else {
        Mode::Kv
    };
    if matches!(mode, Mode::Log | Mode::Changelog | Mode::PkFold) {
        let format = info.descriptor.log_format()?;
        if format != LogFormat::Arrow {
            return Err(Error::unsupported(format!(
                "table '{name}' has table.log.format {format}; Riverlet reads ARROW logs only"
            )));
        }
    }

    // --- which columns to fetch
    let filter_cols: Vec<usize> = match &b.filter {
        Some(f) => f
            .columns()
            .iter()
            .filter_map(|c| full.index_of(c).ok())
            .collect(),
        None => vec![],
    };
    let pk_cols: Vec<usize> = if mode == Mode::PkFold {
        info.schema().primary_key_indexes()
    } else {
        vec![]
    };
    let mut fetch_cols: Vec<usize> = out_cols
        .iter()
        .chain(&filter_cols)
        .chain(&pk_cols)
        .copied()
        .collect();
    fetch_cols.sort_unstable();
    fetch_cols.dedup();
    if mode == Mode::Kv {
        // ScanKv returns whole rows.
        fetch_cols = (0..full.fields().len()).collect();
    }
    let projected = fetch_cols.len() < full.fields().len();
    let fetch_schema = Arc::new(full.project(&fetch_cols)?);
    let meta = if mode == Mode::Changelog { 3 } else { 0 };
    let output_cols: Vec<usize> = (0..meta)
        .chain(
            out_cols
                .iter()
                .map(|c| meta + fetch_cols.iter().position(|f| f == c).unwrap_or_default()),
        )
        .collect();
    let output_schema = {
        let mut fields: Vec<Field> = if meta > 0 {
            changelog_meta_fields()
        } else {
            vec![]
        };
        fields.extend(out_cols.iter().map(|i| full.field(*i).clone()));
        Arc::new(ArrowSchema::new(fields))
    };
    let types = info.schema().data_types();
    let key_cols: Vec<usize> = pk_cols
        .iter()
        .map(|c| fetch_cols.iter().position(|f| f == c).unwrap_or_default())
        .collect();
    let key_types: Vec<DataType> = pk_cols.iter().map(|c| types[*c].clone()).collect();

    // --- partitions and bucket bounds
    let bucket_ids = super::request::select_buckets(&table, b.buckets.as_deref())?;
    let parts = select_partitions(&table, b.partitions.as_deref(), b.filter.as_ref()).await?;
    let mut buckets = Vec::new();
    for p in parts {
        let (pid, pname) = match &p {
            Some(p) => (Some(p.partition_id), Some(p.name.clone())),
            None => (None, None),
        };
        if mode == Mode::Kv {
            for &bucket in &bucket_ids {
                buckets.push(BucketRead {
                    partition_id: pid,
                    partition_name: pname.clone(),
                    bucket,
                    start: 0,
                    end: 0,
                });
            }
            continue;
        }
        let ends = offsets(&table, pid, OffsetSpec::Latest).await?;
        let starts = match &range {
            Some(r) => offsets(&table, pid, OffsetSpec::Timestamp(r.start_ms))
                .await
                .map_err(|e| future_start_error(e, &table, r))?,
            None => offsets(&table, pid, OffsetSpec::Earliest).await?,
        };
        for &bucket in &bucket_ids {
            let end = ends.get(&bucket).copied().unwrap_or(0);
            let start = starts.get(&bucket).copied().unwrap_or(end);
            if start >= end {
                continue;
            }
            buckets.push(BucketRead {
                partition_id: pid,
                partition_name: pname.clone(),
                bucket,
                start,
                end,
            });
        }
    }
    Ok(Plan {
        table,
        mode,
        fetch_cols,
        fetch_schema,
        projected,
        output_cols,
        output_schema,
        filter: b.filter,
        buckets,
        range,
        limit: b.limit,
        key_cols,
        key_types,
        warnings,
    })
}

/// Starts a planned read.
pub(crate) fn run(plan: Plan) -> BatchStream {
    let schema = plan.output_schema.clone();
    let limit = plan.limit;
    BatchStream::spawn(schema, limit, move |mut emit| async move {
        let plan = Arc::new(plan);
        if matches!(plan.mode, Mode::Log | Mode::Changelog) {
            // Buckets are emitted one after the other (so `limit` stays exact), but the first
            // fetch of the next bucket is sent while the last response of the current one is
            // decoded.
            let mut buckets = plan.buckets.iter();
            let mut current = buckets.next().map(|b| log_pipeline(&plan, b));
            while let Some(mut pipe) = current.take() {
                if emit.is_done() {
                    break;
                }
                let mut next = buckets.next().map(|b| log_pipeline(&plan, b));
                if !read_log_bucket(&plan, &mut pipe, next.as_mut(), &mut emit).await? {
                    break;
                }
                current = next;
            }
            return Ok(());
        }
        for b in plan.buckets.clone() {
            if emit.is_done() {
                break;
            }
            let more = match plan.mode {
                Mode::Kv => read_kv_bucket(&plan, &b, &mut emit).await?,
                _ => fold_bucket(&plan, &b, &mut emit).await?,
            };
            if !more {
                break;
            }
        }
        Ok(())
    })
}

impl Plan {
    fn fetch_columns(&self) -> FetchColumns<'_> {
        FetchColumns {
            cols: &self.fetch_cols,
            projected: self.projected,
            schema: &self.fetch_schema,
        }
    }
}

/// Applies the filter, then keeps the output columns.
fn finish_batch(plan: &Plan, batch: RecordBatch) -> Result<RecordBatch> {
    let batch = match &plan.filter {
        Some(f) => filter_batch(&batch, f)?,
        None => batch,
    };
    project(&batch, &plan.output_cols, &plan.output_schema)
}

fn project(batch: &RecordBatch, cols: &[usize], schema: &SchemaRef) -> Result<RecordBatch> {
    let columns: Vec<ArrayRef> = cols.iter().map(|c| batch.column(*c).clone()).collect();
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &options,
    )?)
}

/// One fetched log batch: its rows within the bucket's bounds, decoded.
pub(crate) struct FetchedBatch {
    pub commit_timestamp: i64,
    /// The offset of the first row of `rows`.
    pub first_offset: i64,
    pub change_types: Option<Vec<ChangeType>>,
    pub rows: RecordBatch,
}

/// Which columns a fetch asks for.
pub(crate) struct FetchColumns<'a> {
    /// Table column indexes, ascending.
    pub cols: &'a [usize],
    /// Whether they are fewer than the table's (projection pushdown).
    pub projected: bool,
    /// Their Arrow schema.
    pub schema: &'a SchemaRef,
}

/// Fetches and decodes log batches of one bucket from `offset`, keeping rows below `end`.
/// Returns the batches, the next offset to fetch and the bucket's high watermark.
pub(crate) async fn fetch_once(
    table: &Table,
    b: &BucketRead,
    offset: i64,
    end: Option<i64>,
    columns: &FetchColumns<'_>,
    max_wait_ms: Option<i32>,
    window: Option<&PinnedRange>,
) -> Result<(Vec<FetchedBatch>, i64, Option<i64>)> {
    let (records, hw) = fetch_records(
        table,
        b,
        offset,
        columns.cols,
        columns.projected,
        max_wait_ms,
        window.is_some(),
    )
    .await?;
    let (out, next) = decode_records(table, &records, offset, end, columns, window)?;
    Ok((out, next, hw))
}

/// Sends one FetchLog for one bucket from `offset` and returns the bucket's records bytes and
/// its high watermark (bucket errors become errors with their Fluss code).
async fn fetch_records(
    table: &Table,
    b: &BucketRead,
    offset: i64,
    fetch_cols: &[usize],
    projected: bool,
    max_wait_ms: Option<i32>,
    windowed: bool,
) -> Result<(bytes::Bytes, Option<i64>)> {
    let info = &table.info;
    let req = FetchLogRequest {
        follower_server_id: -1,
        max_bytes: FETCH_MAX_BYTES,
        tables_req: vec![PbFetchLogReqForTable {
            table_id: info.table_id,
            projection_pushdown_enabled: projected,
            projected_fields: if projected {
                fetch_cols.iter().map(|c| *c as i32).collect()
            } else {
                vec![]
            },
            buckets_req: vec![PbFetchLogReqForBucket {
                partition_id: b.partition_id,
                bucket_id: b.bucket,
                fetch_offset: offset,
                max_fetch_bytes: if windowed {
                    WINDOW_FETCH_BUCKET_BYTES
                } else {
                    FETCH_BUCKET_BYTES
                },
            }],
            ..Default::default()
        }],
        max_wait_ms,
        min_bytes: max_wait_ms.map(|_| 1),
        ..Default::default()
    };
    let resp = table
        .conn
        .request_leader(info.table_id, b.partition_id, b.bucket, &req)
        .await?;
    let bucket_resp: PbFetchLogRespForBucket = resp
        .tables_resp
        .into_iter()
        .flat_map(|t| t.buckets_resp)
        .find(|r| r.bucket_id == b.bucket)
        .ok_or_else(|| {
            Error::corrupt(format!(
                "FetchLog response has no result for bucket {} of table '{}'",
                b.bucket,
                table_name(table)
            ))
        })?;
    if let Some(code) = bucket_resp.error_code.filter(|c| *c != error_codes::NONE) {
        if code == error_codes::NOT_LEADER_OR_FOLLOWER
            || code == error_codes::UNKNOWN_TABLE_OR_BUCKET_EXCEPTION
        {
            table.conn.invalidate_table(info.table_id);
        }
        return Err(Error::from_fluss(
            code,
            format!(
                "fetching bucket {}{} of table '{}' at offset {offset}: {}",
                b.bucket,
                b.partition_name
                    .as_ref()
                    .map(|p| format!(" of partition '{p}'"))
                    .unwrap_or_default(),
                table_name(table),
                bucket_resp.error_message.clone().unwrap_or_default()
            ),
        ));
    }
    let hw = bucket_resp.high_watermark;
    let records = bucket_resp.records.unwrap_or_default();
    if records.is_empty() && bucket_resp.remote_log_fetch_info.is_some() {
        return Err(Error::unsupported(format!(
            "bucket {} of table '{}' keeps offset {offset} in remote storage (tiered log \
             segments); Riverlet cannot read remote log segments yet",
            b.bucket,
            table_name(table)
        )));
    }
    Ok((records, hw))
}

/// What a read does with one log batch of a response, judged from its header alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BatchStep {
    /// It ends at or before the fetch offset: skip it, the next offset does not move.
    Before,
    /// It starts at or past the end bound: stop reading this response.
    PastEnd,
    /// It was committed at or after the window's end: the bucket's read in the window is over
    /// (commit time never decreases within a bucket).
    AfterWindow,
    /// It was committed before the window's start: skip it undecoded, the next offset passes it.
    BeforeWindow,
    /// Its rows are wanted: check and decode it.
    Decode,
}

/// The one rule deciding what happens to a batch, shared by the header pass that picks the
/// next fetch offset ([`next_fetch_offset`]) and by the decoding pass ([`decode_records`]).
/// A time-range read judges a batch by the commit timestamp in its header, before paying for its
/// CRC and Arrow decoding.
fn judge_batch(
    batch: &LogRecordBatch<'_>,
    offset: i64,
    end: Option<i64>,
    window: Option<&PinnedRange>,
) -> BatchStep {
    if batch.next_offset() <= offset {
        return BatchStep::Before;
    }
    if end.is_some_and(|e| batch.base_offset() >= e) {
        return BatchStep::PastEnd;
    }
    if let Some(w) = window {
        let ts = batch.commit_timestamp();
        if w.is_after(ts) {
            return BatchStep::AfterWindow;
        }
        if !w.contains(ts) {
            return BatchStep::BeforeWindow;
        }
    }
    BatchStep::Decode
}

/// The offset the read after this response starts from, computed from the batch headers alone
/// (no CRC check, no Arrow decoding), so the next fetch can be sent before this one is decoded.
/// `None` when no further fetch should be sent yet: the response ends the read (window end, end
/// bound reached), makes no progress (the empty-fetch rule decides), or does not parse (the
/// decoding pass reports it).
fn next_fetch_offset(
    records: &[u8],
    offset: i64,
    end: Option<i64>,
    window: Option<&PinnedRange>,
) -> Option<i64> {
    let mut next = offset;
    for batch in LogBatchIter::new(records) {
        let batch = batch.ok()?;
        match judge_batch(&batch, offset, end, window) {
            BatchStep::Before => {}
            BatchStep::PastEnd => break,
            BatchStep::AfterWindow => return None,
            BatchStep::BeforeWindow | BatchStep::Decode => next = batch.next_offset(),
        }
    }
    (next > offset && end.is_none_or(|e| next < e)).then_some(next)
}

/// Decodes the log batches of one response fetched at `offset`, keeping rows below `end`
/// (and, for a time-range read, the batches committed inside `window`). Returns the batches and
/// the next offset to fetch. A batch at or after the window's end is handed on without rows so
/// the caller sees where the window ended.
fn decode_records(
    table: &Table,
    records: &[u8],
    offset: i64,
    end: Option<i64>,
    columns: &FetchColumns<'_>,
    window: Option<&PinnedRange>,
) -> Result<(Vec<FetchedBatch>, i64)> {
    let (projected, fetch_schema) = (columns.projected, columns.schema);
    let schema_id = table.info.schema_id;
    let mut out = Vec::new();
    let mut next = offset;
    for batch in LogBatchIter::new(records) {
        let batch: LogRecordBatch<'_> = batch?;
        match judge_batch(&batch, offset, end, window) {
            BatchStep::Before => continue,
            BatchStep::PastEnd => break,
            BatchStep::AfterWindow => {
                out.push(FetchedBatch {
                    commit_timestamp: batch.commit_timestamp(),
                    first_offset: batch.base_offset(),
                    change_types: None,
                    rows: RecordBatch::new_empty(fetch_schema.clone()),
                });
                next = batch.base_offset().max(offset);
                break;
            }
            BatchStep::BeforeWindow => {
                next = batch.next_offset();
                continue;
            }
            BatchStep::Decode => {}
        }
        // A projected batch keeps the header (and CRC) of the stored one while its payload is
        // re-encoded, so its CRC cannot match: Fluss's own client skips the check for projected
        // fetches, and so do we.
        if !projected {
            batch.ensure_valid()?;
        }
        next = batch.next_offset();
        if batch.record_count() == 0 {
            continue;
        }
        if batch.schema_id() as i32 != schema_id {
            return Err(Error::unsupported(format!(
                "a log batch of table '{}' was written with schema id {} but the table is at \
                 schema id {schema_id}; reading older schemas is not supported yet",
                table_name(table),
                batch.schema_id()
            )));
        }
        let (change_types, rows) = batch.arrow_records(fetch_schema)?;
        // Keep rows within [offset, end).
        let base = batch.base_offset();
        let from = (offset.max(base) - base) as usize;
        let to = match end {
            Some(e) => ((e.min(batch.next_offset()) - base) as usize).min(rows.num_rows()),
            None => rows.num_rows(),
        };
        if from >= to {
            continue;
        }
        let rows = rows.slice(from, to - from);
        let change_types = change_types.map(|c| c[from..to.min(c.len())].to_vec());
        out.push(FetchedBatch {
            commit_timestamp: batch.commit_timestamp(),
            first_offset: base + from as i64,
            change_types,
            rows,
        });
    }
    Ok((out, next))
}

/// Everything a bucket's fetches need, owned so a prefetch can run as its own task.
struct BucketFetch {
    table: Table,
    read: BucketRead,
    cols: Vec<usize>,
    projected: bool,
    schema: SchemaRef,
    window: Option<PinnedRange>,
}

/// A FetchLog in flight on the runtime, for `offset`; aborted when dropped unused.
struct Prefetch {
    offset: i64,
    handle: tokio::task::JoinHandle<Result<(bytes::Bytes, Option<i64>)>>,
}

impl Drop for Prefetch {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

/// Reads `[read.start, read.end)` of one bucket response by response, with the next FetchLog
/// already in flight while the caller decodes and uses the current one.
struct BucketPipeline {
    fetch: Arc<BucketFetch>,
    offset: i64,
    empty: u32,
    pending: Option<Prefetch>,
}

impl BucketPipeline {
    fn new(fetch: BucketFetch) -> Self {
        BucketPipeline {
            offset: fetch.read.start,
            fetch: Arc::new(fetch),
            empty: 0,
            pending: None,
        }
    }

    async fn fetch_at(f: &BucketFetch, offset: i64) -> Result<(bytes::Bytes, Option<i64>)> {
        fetch_records(
            &f.table,
            &f.read,
            offset,
            &f.cols,
            f.projected,
            None,
            f.window.is_some(),
        )
        .await
    }

    /// Sends the fetch at the current offset now, unless one is already in flight or the bucket
    /// is read.
    async fn prime(&mut self) {
        if self.pending.is_none() && self.offset < self.fetch.read.end {
            self.spawn(self.offset).await;
        }
    }

    /// Spawns the fetch at `offset` and lets it send its request before this task goes on
    /// decoding (a task spawned from a worker waits in that worker's local slot until the
    /// worker is free).
    async fn spawn(&mut self, offset: i64) {
        let task = self.fetch.clone();
        self.pending = Some(Prefetch {
            offset,
            handle: tokio::spawn(async move { Self::fetch_at(&task, offset).await }),
        });
        tokio::task::yield_now().await;
    }

    /// The next decoded batches of the bucket, or `None` when it is read up to its end (or the
    /// log lost what it had below the planned end: truncation or retention).
    async fn next_batches(&mut self) -> Result<Option<Vec<FetchedBatch>>> {
        let f = self.fetch.clone();
        let end = f.read.end;
        while self.offset < end {
            let offset = self.offset;
            let (records, hw) = match self.pending.take() {
                Some(mut p) if p.offset == offset => (&mut p.handle)
                    .await
                    .map_err(|e| Error::internal(format!("log prefetch task failed: {e}")))??,
                _ => Self::fetch_at(&f, offset).await?,
            };
            if let Some(next) = next_fetch_offset(&records, offset, Some(end), f.window.as_ref()) {
                self.spawn(next).await;
            }
            let columns = FetchColumns {
                cols: &f.cols,
                projected: f.projected,
                schema: &f.schema,
            };
            let (batches, next) = decode_records(
                &f.table,
                &records,
                offset,
                Some(end),
                &columns,
                f.window.as_ref(),
            )?;
            if batches.is_empty() && next == offset {
                self.empty += 1;
                if hw.is_some_and(|h| h <= offset) || self.empty > MAX_EMPTY_FETCHES {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
            self.empty = 0;
            self.offset = next;
            return Ok(Some(batches));
        }
        self.pending = None;
        Ok(None)
    }
}

/// The fetch pipeline of one planned log bucket.
fn log_pipeline(plan: &Plan, b: &BucketRead) -> BucketPipeline {
    BucketPipeline::new(BucketFetch {
        table: plan.table.clone(),
        read: b.clone(),
        cols: plan.fetch_cols.clone(),
        projected: plan.projected,
        schema: plan.fetch_schema.clone(),
        window: plan.range,
    })
}

/// Reads one bucket's log; returns false when the whole read should stop. Once the bucket's
/// last fetch is answered, the first fetch of `next` (the bucket read after it) is sent.
async fn read_log_bucket(
    plan: &Plan,
    pipe: &mut BucketPipeline,
    mut next: Option<&mut BucketPipeline>,
    emit: &mut Emitter,
) -> Result<bool> {
    while let Some(batches) = pipe.next_batches().await? {
        if pipe.pending.is_none() {
            if let Some(n) = next.take() {
                n.prime().await;
            }
        }
        for fb in batches {
            if let Some(r) = &plan.range {
                if r.is_after(fb.commit_timestamp) {
                    // Commit time never decreases within a bucket: nothing later is in the window.
                    return Ok(true);
                }
                if !r.contains(fb.commit_timestamp) {
                    continue;
                }
            }
            let working = if plan.mode == Mode::Changelog {
                with_changelog_columns(&fb)?
            } else {
                fb.rows
            };
            let out = finish_batch(plan, working)?;
            if !emit.emit(out).await {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// The fetched rows with `_change_type`, `_log_offset`, `_commit_timestamp` in front.
pub(crate) fn with_changelog_columns(fb: &FetchedBatch) -> Result<RecordBatch> {
    let n = fb.rows.num_rows();
    let types: Vec<&str> = match &fb.change_types {
        Some(c) => c.iter().map(|t| change_type_name(*t)).collect(),
        None => vec!["insert"; n],
    };
    let offsets = Int64Array::from_iter_values((0..n as i64).map(|i| fb.first_offset + i));
    let meta = changelog_meta_fields();
    let ts = timestamp_array(meta[2].data_type(), fb.commit_timestamp, n)?;
    let mut fields: Vec<Field> = meta;
    fields.extend(fb.rows.schema().fields().iter().map(|f| f.as_ref().clone()));
    let mut columns: Vec<ArrayRef> =
        vec![Arc::new(StringArray::from(types)), Arc::new(offsets), ts];
    columns.extend(fb.rows.columns().iter().cloned());
    let options = RecordBatchOptions::new().with_row_count(Some(n));
    Ok(RecordBatch::try_new_with_options(
        Arc::new(ArrowSchema::new(fields)),
        columns,
        &options,
    )?)
}

/// Flink's `$changelog` names (an append-only row reads as an insert).
pub(crate) fn change_type_name(t: ChangeType) -> &'static str {
    match t {
        ChangeType::AppendOnly | ChangeType::Insert => "insert",
        ChangeType::UpdateBefore => "update_before",
        ChangeType::UpdateAfter => "update_after",
        ChangeType::Delete => "delete",
    }
}

/// `n` copies of epoch-millisecond `ms` as an array of the timestamp type `t`.
pub(crate) fn timestamp_array(t: &arrow_schema::DataType, ms: i64, n: usize) -> Result<ArrayRef> {
    use arrow_schema::{DataType as A, TimeUnit};
    let a: ArrayRef = match t {
        A::Timestamp(unit, tz) => {
            let v = match unit {
                TimeUnit::Second => ms.div_euclid(1000),
                TimeUnit::Millisecond => ms,
                TimeUnit::Microsecond => ms.saturating_mul(1000),
                TimeUnit::Nanosecond => ms.saturating_mul(1_000_000),
            };
            let base = Int64Array::from(vec![v; n]);
            let data = base
                .into_data()
                .into_builder()
                .data_type(A::Timestamp(*unit, tz.clone()));
            arrow_array::make_array(data.build()?)
        }
        other => {
            return Err(Error::internal(format!(
                "commit timestamp column has non-timestamp type {other}"
            )))
        }
    };
    Ok(a)
}

/// Folds one bucket's changelog inside the window, then emits the surviving values.
async fn fold_bucket(plan: &Plan, b: &BucketRead, emit: &mut Emitter) -> Result<bool> {
    let range = plan
        .range
        .ok_or_else(|| Error::internal("fold without a window"))?;
    let batches = fold_log(
        &plan.table,
        b,
        &plan.fetch_columns(),
        &plan.key_cols,
        &plan.key_types,
        Some(range),
    )
    .await?;
    for batch in batches {
        let out = finish_batch(plan, batch)?;
        if !emit.emit(out).await {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Reads `[b.start, b.end)` of one bucket's changelog (only the records committed inside
/// `range`, when given) and folds it per primary key (`key_cols` index the fetched columns):
/// the last value of every key whose last change is not a delete.
async fn fold_log(
    table: &Table,
    b: &BucketRead,
    columns: &FetchColumns<'_>,
    key_cols: &[usize],
    key_types: &[DataType],
    range: Option<PinnedRange>,
) -> Result<Vec<RecordBatch>> {
    let mut fold = ChangelogFold::new(columns.schema.clone());
    let mut pipe = BucketPipeline::new(BucketFetch {
        table: table.clone(),
        read: b.clone(),
        cols: columns.cols.to_vec(),
        projected: columns.projected,
        schema: columns.schema.clone(),
        window: range,
    });
    'fetch: while let Some(batches) = pipe.next_batches().await? {
        for fb in batches {
            if let Some(range) = &range {
                if range.is_after(fb.commit_timestamp) {
                    break 'fetch;
                }
                if !range.contains(fb.commit_timestamp) {
                    continue;
                }
            }
            let keys = crate::row::encode_keys_from_batch(&fb.rows, key_cols, key_types)?;
            let n = fb.rows.num_rows();
            let changes: Vec<KeyChange> = match &fb.change_types {
                Some(c) => c
                    .iter()
                    .map(|t| KeyChange::from_change_type_byte(t.to_byte()))
                    .collect::<Result<_>>()?,
                None => vec![KeyChange::Upsert; n],
            };
            let records = keys
                .into_iter()
                .zip(changes)
                .enumerate()
                .map(|(i, (key, change))| ChangeRecord {
                    key,
                    offset: fb.first_offset + i as i64,
                    change,
                    row: i,
                });
            fold.push(&fb.rows, records)?;
        }
    }
    fold.finish(OUTPUT_ROWS)
}

/// Decodes value rows (schema id + row bytes) into a batch of the table's full schema.
pub(crate) fn values_to_batch(table: &Table, values: &[&[u8]]) -> Result<RecordBatch> {
    let info = &table.info;
    let types = info.schema().data_types();
    let format = info.descriptor.kv_format()?;
    let mut rows = Vec::with_capacity(values.len());
    for v in values {
        let (schema_id, row) = crate::row::decode_value(v)?;
        if schema_id as i32 != info.schema_id {
            return Err(Error::unsupported(format!(
                "a row of table '{}' was written with schema id {schema_id} but the table is at \
                 schema id {}; reading older schemas is not supported yet",
                table_name(table),
                info.schema_id
            )));
        }
        rows.push(match format {
            KvFormat::Indexed => crate::row::decode_indexed_row(&types, row)?,
            _ => crate::row::decode_compacted_row(&types, row)?,
        });
    }
    crate::row::rows_to_record_batch(&info.schema().to_arrow(), &types, &rows)
}

/// The latest view of one bucket of a primary-key table (rows of the full table schema), and
/// the log offset it reflects: changes from that offset on are not in it.
///
/// Two paths, chosen by what the bucket's leader offers:
/// - **ScanKv** (API 1061; Apache Fluss 1.0 and riverlet-server): the server scans its KV
///   state.
/// - **Changelog replay** (Apache Fluss 0.9.x, which has no ScanKv): what Fluss's own
///   connectors do for a bucket without a KV snapshot. GetLatestKvSnapshots tells whether the
///   bucket has a snapshot; the changelog is read from the earliest offset to the high
///   watermark and folded per key (last `+I`/`+U` wins, `-D` removes). That is exact while the
///   log still starts at offset 0, snapshot or not (a snapshot does not truncate the log). When
///   a snapshot exists and the log no longer starts at 0 (retention removed its head), the view
///   would need the snapshot's RocksDB files, which Riverlet does not download: that case is
///   an [`Unsupported`](crate::ErrorKind::Unsupported) error.
pub(crate) async fn latest_view_bucket(
    table: &Table,
    b: &BucketRead,
    limit: Option<i64>,
) -> Result<(Vec<RecordBatch>, i64)> {
    let info = &table.info;
    let conn = table
        .conn
        .leader(info.table_id, b.partition_id, b.bucket)
        .await?;
    if conn.api_version(ApiKey::ScanKv).is_some() {
        let (batches, offset) = scan_kv_bucket_with_offset(table, b, limit).await?;
        return Ok((batches, offset.unwrap_or(0)));
    }
    let (start, end) = replay_bounds(table, b, conn.peer()).await?;
    let full = info.schema().to_arrow();
    let all: Vec<usize> = (0..full.fields().len()).collect();
    let key_cols = info.schema().primary_key_indexes();
    let types = info.schema().data_types();
    let key_types: Vec<DataType> = key_cols.iter().map(|c| types[*c].clone()).collect();
    let read = BucketRead {
        start,
        end,
        ..b.clone()
    };
    let columns = FetchColumns {
        cols: &all,
        projected: false,
        schema: &full,
    };
    let batches = fold_log(table, &read, &columns, &key_cols, &key_types, None).await?;
    Ok((batches, end))
}

/// The offsets `[earliest, high watermark)` to replay for the latest view of a bucket on a
/// server without ScanKv, or Unsupported when a KV snapshot exists and the log no longer starts
/// at 0.
async fn replay_bounds(table: &Table, b: &BucketRead, server: &str) -> Result<(i64, i64)> {
    let info = &table.info;
    let admin = table.conn.admin();
    let earliest = admin
        .list_offsets_by_id(
            info.table_id,
            b.partition_id,
            &[b.bucket],
            OffsetSpec::Earliest,
        )
        .await?
        .get(&b.bucket)
        .copied()
        .unwrap_or(0);
    let latest = admin
        .list_offsets_by_id(
            info.table_id,
            b.partition_id,
            &[b.bucket],
            OffsetSpec::Latest,
        )
        .await?
        .get(&b.bucket)
        .copied()
        .unwrap_or(0);
    if earliest > 0 && earliest < latest {
        let req = GetLatestKvSnapshotsRequest {
            table_path: PbTablePath {
                database_name: info.table_path.database.clone(),
                table_name: info.table_path.table.clone(),
            },
            partition_name: b.partition_name.clone(),
        };
        let resp = table.conn.coordinator().await?.request(&req).await?;
        let snapshot = resp
            .latest_snapshots
            .iter()
            .find(|s| s.bucket_id == b.bucket && s.snapshot_id.is_some());
        if let Some(s) = snapshot {
            return Err(Error::unsupported(format!(
                "reading the latest view of bucket {}{} of primary-key table '{}': the tablet \
                 server at {server} has no ScanKv API (Apache Fluss 0.9.x), and the bucket's log \
                 no longer starts at offset 0 (it starts at {earliest}) while a KV snapshot (id \
                 {}, log offset {}) holds the older state; reading it would need the snapshot's \
                 RocksDB files, which Riverlet does not download. Use a server with ScanKv \
                 (Apache Fluss 1.0 or riverlet-server), or a time-range read (between).",
                b.bucket,
                b.partition_name
                    .as_ref()
                    .map(|p| format!(" of partition '{p}'"))
                    .unwrap_or_default(),
                table_name(table),
                s.snapshot_id.unwrap_or_default(),
                s.log_offset.unwrap_or_default()
            )));
        }
    }
    Ok((earliest, latest))
}

/// Reads the latest view of one bucket of a primary-key table.
async fn read_kv_bucket(plan: &Plan, b: &BucketRead, emit: &mut Emitter) -> Result<bool> {
    let (batches, _) = latest_view_bucket(&plan.table, b, kv_limit(plan, emit)).await?;
    for batch in batches {
        let out = finish_batch(plan, batch)?;
        if !emit.emit(out).await {
            return Ok(false);
        }
    }
    Ok(true)
}

fn kv_limit(plan: &Plan, emit: &Emitter) -> Option<i64> {
    // A server-side limit is only right when no filter drops rows after it.
    if plan.filter.is_some() {
        None
    } else {
        emit.remaining().map(|r| r as i64)
    }
}

/// All rows of one bucket through ScanKv (full table schema), and the log offset the scan's
/// snapshot corresponds to.
pub(crate) async fn scan_kv_bucket_with_offset(
    table: &Table,
    b: &BucketRead,
    limit: Option<i64>,
) -> Result<(Vec<RecordBatch>, Option<i64>)> {
    let info = &table.info;
    let conn = table
        .conn
        .leader(info.table_id, b.partition_id, b.bucket)
        .await?;
    let mut out = Vec::new();
    let mut scanner_id: Option<Vec<u8>> = None;
    let mut seq = 0i32;
    let mut log_offset = None;
    let mut pending: Vec<Vec<u8>> = Vec::new();
    let mut open_retries = 0u32;
    loop {
        let req = match &scanner_id {
            None => ScanKvRequest {
                bucket_scan_req: Some(PbScanReqForBucket {
                    table_id: info.table_id,
                    partition_id: b.partition_id,
                    bucket_id: b.bucket,
                    limit: limit.filter(|l| *l > 0),
                }),
                batch_size_bytes: Some(SCAN_KV_BATCH_BYTES),
                call_seq_id: Some(seq),
                ..Default::default()
            },
            Some(id) => ScanKvRequest {
                scanner_id: Some(id.clone()),
                batch_size_bytes: Some(SCAN_KV_BATCH_BYTES),
                call_seq_id: Some(seq),
                ..Default::default()
            },
        };
        let resp = conn.request(&req).await?;
        if let Some(code) = resp.error_code.filter(|c| *c != error_codes::NONE) {
            if code == error_codes::TOO_MANY_SCANNERS && scanner_id.is_none() && open_retries < 3 {
                tokio::time::sleep(std::time::Duration::from_millis(100 << open_retries)).await;
                open_retries += 1;
                continue;
            }
            if code == error_codes::NOT_LEADER_OR_FOLLOWER {
                table.conn.invalidate_table(info.table_id);
            }
            return Err(Error::from_fluss(
                code,
                format!(
                    "ScanKv of bucket {} of table '{}': {}",
                    b.bucket,
                    table_name(table),
                    resp.error_message.unwrap_or_default()
                ),
            ));
        }
        if log_offset.is_none() {
            log_offset = resp.log_offset;
        }
        if let Some(id) = resp.scanner_id {
            scanner_id = Some(id);
        }
        if let Some(records) = resp.records.filter(|r| !r.is_empty()) {
            let vb = ValueRecordBatch::new(&records)?;
            for rec in vb.records() {
                pending.push(rec?.value.to_vec());
            }
            if pending.len() >= OUTPUT_ROWS {
                let refs: Vec<&[u8]> = pending.iter().map(Vec::as_slice).collect();
                out.push(values_to_batch(table, &refs)?);
                pending.clear();
            }
        }
        if resp.has_more_results != Some(true) {
            break;
        }
        if scanner_id.is_none() {
            return Err(Error::corrupt(
                "ScanKv response says more results follow but carries no scanner id",
            ));
        }
        seq += 1;
    }
    if !pending.is_empty() {
        let refs: Vec<&[u8]> = pending.iter().map(Vec::as_slice).collect();
        out.push(values_to_batch(table, &refs)?);
    }
    Ok((out, log_offset))
}

/// The number of records of a log table (of the selected partitions and buckets), from the
/// offsets of every bucket rather than by reading the records.
pub(crate) async fn log_count(
    table: &Table,
    partitions: Option<&[PartitionSelector]>,
    buckets: Option<&[i32]>,
) -> Result<u64> {
    let bucket_ids = super::request::select_buckets(table, buckets)?;
    let parts = select_partitions(table, partitions, None).await?;
    let mut total = 0u64;
    for p in parts {
        let pid = p.map(|p| p.partition_id);
        let ends = offsets(table, pid, OffsetSpec::Latest).await?;
        let starts = offsets(table, pid, OffsetSpec::Earliest).await?;
        for bucket in &bucket_ids {
            let end = ends.get(bucket).copied().unwrap_or(0);
            let start = starts.get(bucket).copied().unwrap_or(0);
            total += (end - start).max(0) as u64;
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::log_batch::{build_arrow_log_batch, set_base_offset, set_commit_timestamp};
    use crate::record::ArrowCompression;
    use arrow_array::Int32Array;

    /// Three batches of 10 rows at offsets 0, 10, 20, committed at 100, 200, 300.
    fn log() -> Vec<u8> {
        let schema = Arc::new(ArrowSchema::new(vec![Field::new(
            "a",
            arrow_schema::DataType::Int32,
            true,
        )]));
        let rows =
            RecordBatch::try_new(schema, vec![Arc::new(Int32Array::from_iter_values(0..10))])
                .unwrap();
        let mut out = Vec::new();
        for i in 0..3i64 {
            let mut b =
                build_arrow_log_batch(1, &rows, ArrowCompression::None, None, -1, -1).unwrap();
            set_base_offset(&mut b, i * 10).unwrap();
            set_commit_timestamp(&mut b, (i + 1) * 100).unwrap();
            out.extend_from_slice(&b);
        }
        out
    }

    #[test]
    fn next_fetch_offset_follows_the_batch_rule() {
        let log = log();
        // Whole response inside the bounds: the next fetch starts after it.
        assert_eq!(next_fetch_offset(&log, 0, Some(100), None), Some(30));
        // From inside the second batch: the first one is skipped, the rest counted.
        assert_eq!(next_fetch_offset(&log, 15, Some(100), None), Some(30));
        // The end bound is reached inside the response: no further fetch.
        assert_eq!(next_fetch_offset(&log, 0, Some(25), None), None);
        assert_eq!(next_fetch_offset(&log, 0, Some(30), None), None);
        // Nothing new (already past the response): the empty-fetch rule decides.
        assert_eq!(next_fetch_offset(&log, 30, Some(100), None), None);
        assert_eq!(next_fetch_offset(&[], 0, Some(100), None), None);
        // Batches before the window are passed over; one after its end stops the read.
        let w = PinnedRange {
            start_ms: 250,
            end_ms: 1000,
        };
        assert_eq!(next_fetch_offset(&log, 0, Some(100), Some(&w)), Some(30));
        let w = PinnedRange {
            start_ms: 0,
            end_ms: 250,
        };
        assert_eq!(next_fetch_offset(&log, 0, Some(100), Some(&w)), None);
        // Garbage: no prefetch (the decoding pass reports the error).
        assert_eq!(next_fetch_offset(&[0xff; 80], 0, Some(100), None), None);
    }
}
