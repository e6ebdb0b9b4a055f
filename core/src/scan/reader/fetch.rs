//! Fetching log batches of one bucket: FetchLog requests, pipelined prefetches, decoding
//! within offset and time bounds, and the changelog metadata columns (shared by bounded
//! reads and subscriptions).

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, RecordBatchOptions, StringArray};
use arrow_schema::{Field, Schema as ArrowSchema, SchemaRef};

use super::super::changelog_meta_fields;
use super::super::time::PinnedRange;
use crate::client::Table;
use crate::error::codes;
use crate::proto::{
    FetchLogRequest, PbFetchLogReqForBucket, PbFetchLogReqForTable, PbFetchLogRespForBucket,
};
use crate::record::{ChangeType, LogBatchIter, LogRecordBatch};
use crate::{Error, Result};

use super::plan::{table_name, BucketRead};

/// Bytes asked per bucket in one FetchLog.
const FETCH_BUCKET_BYTES: i32 = 8 * 1024 * 1024;
/// Bytes asked per bucket in one FetchLog of a time-range read: a window usually ends long
/// before 8 MiB of log, and what the server sends past its end is wasted.
const WINDOW_FETCH_BUCKET_BYTES: i32 = 2 * 1024 * 1024;
/// Bytes asked per FetchLog.
const FETCH_MAX_BYTES: i32 = 16 * 1024 * 1024;
/// Bytes asked per ScanKv round trip.
/// Empty fetch responses tolerated in a row before a read below the high watermark gives up.
const MAX_EMPTY_FETCHES: u32 = 50;

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
    if let Some(code) = bucket_resp.error_code.filter(|c| *c != codes::NONE) {
        if code == codes::NOT_LEADER_OR_FOLLOWER || code == codes::UNKNOWN_TABLE_OR_BUCKET_EXCEPTION
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
pub(super) struct BucketFetch {
    pub(super) table: Table,
    pub(super) read: BucketRead,
    pub(super) cols: Vec<usize>,
    pub(super) projected: bool,
    pub(super) schema: SchemaRef,
    pub(super) window: Option<PinnedRange>,
}

/// A FetchLog in flight on the runtime, for `offset`; aborted when dropped unused.
pub(super) struct Prefetch {
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
pub(super) struct BucketPipeline {
    pub(super) fetch: Arc<BucketFetch>,
    pub(super) offset: i64,
    pub(super) empty: u32,
    pub(super) pending: Option<Prefetch>,
}

impl BucketPipeline {
    pub(super) fn new(fetch: BucketFetch) -> Self {
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
    pub(super) async fn prime(&mut self) {
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
    pub(super) async fn next_batches(&mut self) -> Result<Option<Vec<FetchedBatch>>> {
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
