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
    PbPredicate,
};
use crate::record::batch_memory::BatchMemory;
use crate::record::{ChangeType, LogBatchIter, LogRecordBatch};
use crate::rpc::ApiKey;
use crate::{Error, Result};

use super::plan::{table_name, BucketRead};

/// Bytes asked per bucket in one FetchLog.
pub(super) const FETCH_BUCKET_BYTES: i32 = 8 * 1024 * 1024;
/// Bytes asked per bucket in one FetchLog of a time-range read: a window usually ends long
/// before 8 MiB of log, and what the server sends past its end is wasted.
pub(super) const WINDOW_FETCH_BUCKET_BYTES: i32 = 2 * 1024 * 1024;
/// Bytes asked per FetchLog.
const FETCH_MAX_BYTES: i32 = 16 * 1024 * 1024;
/// Bytes asked per ScanKv round trip.
/// Empty fetch responses tolerated in a row before a read below the high watermark gives up.
pub(super) const MAX_EMPTY_FETCHES: u32 = 50;

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
    /// Where decoded batches are placed.
    pub memory: BatchMemory<'a>,
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
    let ask = BucketAsk {
        read: b,
        offset,
        max_bytes: if window.is_some() {
            WINDOW_FETCH_BUCKET_BYTES
        } else {
            FETCH_BUCKET_BYTES
        },
    };
    let answer = fetch_buckets(
        table,
        std::slice::from_ref(&ask),
        columns.cols,
        columns.projected,
        max_wait_ms,
        FETCH_MAX_BYTES,
        None,
    )
    .await?
    .pop()
    .ok_or_else(|| Error::internal("FetchLog answer without its bucket"))?;
    let (out, next) = decode_records(table, &answer.records, offset, end, columns, window)?;
    Ok((out, next, answer.high_watermark))
}

/// One bucket of a FetchLog: where to read and how many bytes at most.
pub(super) struct BucketAsk<'a> {
    pub(super) read: &'a BucketRead,
    pub(super) offset: i64,
    pub(super) max_bytes: i32,
}

/// What a FetchLog returned for one bucket.
pub(super) struct BucketAnswer {
    pub(super) records: bytes::Bytes,
    pub(super) high_watermark: Option<i64>,
    /// How far the server read while leaving out batches by their statistics (Fluss's
    /// `filtered_end_offset`): the next fetch starts at the later of this and the records' end.
    pub(super) filtered_end_offset: Option<i64>,
    /// How many batches the server left out (riverlet-server reports it; 0 otherwise).
    pub(super) skipped_batches: i64,
}

/// A batch filter a read pushes to the server (FetchLog's `filter_predicate` with
/// `filter_schema_id`, Fluss 1.0): the server may leave out batches whose statistics exclude it.
#[derive(Debug, Clone)]
pub(crate) struct PushedFilter {
    pub(crate) predicate: PbPredicate,
    pub(crate) schema_id: i32,
}

/// Sends one FetchLog carrying every bucket of `asks` (they must share a leader: it is sent to
/// the leader of the first) and returns each bucket's records and high watermark, in the order
/// of `asks`. A bucket error becomes an error with its Fluss code.
pub(super) async fn fetch_buckets(
    table: &Table,
    asks: &[BucketAsk<'_>],
    fetch_cols: &[usize],
    projected: bool,
    max_wait_ms: Option<i32>,
    max_bytes: i32,
    filter: Option<&PushedFilter>,
) -> Result<Vec<BucketAnswer>> {
    let info = &table.info;
    let Some(first) = asks.first() else {
        return Ok(Vec::new());
    };
    // Fluss added the filter fields without a new FetchLog version; a server that has the 1.0
    // APIs (ScanKv) understands them. Older servers are never sent one (their tables cannot
    // have statistics columns anyway, and the exact filter runs on the client either way).
    let filter = match filter {
        Some(f) => table
            .conn
            .leader(info.table_id, first.read.partition_id, first.read.bucket)
            .await?
            .api_version(ApiKey::ScanKv)
            .map(|_| f),
        None => None,
    };
    let req = FetchLogRequest {
        follower_server_id: -1,
        max_bytes,
        tables_req: vec![PbFetchLogReqForTable {
            table_id: info.table_id,
            projection_pushdown_enabled: projected,
            projected_fields: if projected {
                fetch_cols.iter().map(|c| *c as i32).collect()
            } else {
                vec![]
            },
            buckets_req: asks
                .iter()
                .map(|a| PbFetchLogReqForBucket {
                    partition_id: a.read.partition_id,
                    bucket_id: a.read.bucket,
                    fetch_offset: a.offset,
                    max_fetch_bytes: a.max_bytes,
                })
                .collect(),
            filter_predicate: filter.map(|f| f.predicate.clone()),
            filter_schema_id: filter.map(|f| f.schema_id),
        }],
        max_wait_ms,
        min_bytes: max_wait_ms.map(|_| 1),
        ..Default::default()
    };
    let resp = table
        .conn
        .request_leader(
            info.table_id,
            first.read.partition_id,
            first.read.bucket,
            &req,
        )
        .await
        .map_err(|e| {
            // The connection's error names the server; say which table and buckets it served.
            let buckets: Vec<String> = asks.iter().map(|a| a.read.describe()).collect();
            e.context(format!(
                "fetching {} of table '{}'",
                buckets.join(", "),
                table_name(table)
            ))
        })?;
    let mut answers: Vec<PbFetchLogRespForBucket> = resp
        .tables_resp
        .into_iter()
        .flat_map(|t| t.buckets_resp)
        .collect();
    let mut out = Vec::with_capacity(asks.len());
    for a in asks {
        let b = a.read;
        let i = answers
            .iter()
            .position(|r| r.bucket_id == b.bucket && r.partition_id == b.partition_id)
            .ok_or_else(|| {
                Error::corrupt(format!(
                    "FetchLog response has no result for bucket {} of table '{}'",
                    b.bucket,
                    table_name(table)
                ))
            })?;
        let resp = answers.swap_remove(i);
        let remote = resp.remote_log_fetch_info.clone();
        let mut answer = bucket_answer(table, a, resp)?;
        if let Some(info) = remote.filter(|_| answer.records.is_empty()) {
            answer.records = read_remote(table, a, &info, fetch_cols, projected).await?;
        }
        out.push(answer);
    }
    Ok(out)
}

/// Reads what a FetchLog answered with remote log segments instead of records: the log batches
/// of the first segment from its start position, at most the bucket's fetch size (but at
/// least one whole batch), straight from the remote directory. The next fetch continues after
/// the last whole batch read, so a segment is read in bounded steps, and the server answers
/// from the next segment (or its local log) once this one is done. Batches before the fetch
/// offset are skipped by the readers, as in a local answer.
async fn read_remote(
    table: &Table,
    ask: &BucketAsk<'_>,
    info: &crate::proto::PbRemoteLogFetchInfo,
    fetch_cols: &[usize],
    projected: bool,
) -> Result<bytes::Bytes> {
    let describe = || {
        format!(
            "{} of table '{}' at offset {}",
            ask.read.describe(),
            table_name(table),
            ask.offset
        )
    };
    let seg = info.remote_log_segments.first().ok_or_else(|| {
        Error::corrupt(format!(
            "FetchLog answered remote log segments without any for {}",
            describe()
        ))
    })?;
    let dir = table
        .conn
        .remote_dir(&info.remote_log_tablet_dir)
        .await
        .map_err(|e| e.context(describe()))?;
    let file =
        crate::remote::segment_log_file(&seg.remote_log_segment_id, seg.remote_log_start_offset);
    let size = u64::try_from(seg.segment_size_in_bytes).unwrap_or(0);
    let pos = u64::try_from(info.first_start_pos.unwrap_or(0)).unwrap_or(0);
    if pos >= size {
        return Ok(bytes::Bytes::new());
    }
    let want = u64::try_from(ask.max_bytes.max(1)).unwrap_or(1);
    let mut data = dir
        .get_range(&file, pos..size.min(pos + want))
        .await
        .map_err(|e| e.context(describe()))?;
    if let Some(first) = crate::record::log_batch::batch_size_from_prefix(&data) {
        if first > data.len() {
            // one batch larger than the fetch size: read it whole
            data = dir
                .get_range(&file, pos..size.min(pos + first as u64))
                .await
                .map_err(|e| e.context(describe()))?;
        }
    }
    // keep whole batches only: the next fetch starts where they end
    let mut iter = LogBatchIter::new(&data);
    for b in iter.by_ref() {
        b?;
    }
    let whole = iter.position();
    let data = data.slice(..whole);
    if projected && !data.is_empty() {
        let schema_of = |id: i16| Ok(table.info.schema_by_id(i32::from(id))?.to_arrow());
        let bytes = crate::record::log_batch::project_arrow_batches(
            &data,
            &schema_of,
            fetch_cols,
            crate::record::ArrowCompression::None,
        )?;
        return Ok(bytes::Bytes::from(bytes));
    }
    Ok(data)
}

/// The records of one bucket's FetchLog result, or its error.
fn bucket_answer(
    table: &Table,
    ask: &BucketAsk<'_>,
    bucket_resp: PbFetchLogRespForBucket,
) -> Result<BucketAnswer> {
    let (b, offset) = (ask.read, ask.offset);
    if let Some(code) = bucket_resp.error_code.filter(|c| *c != codes::NONE) {
        if code == codes::NOT_LEADER_OR_FOLLOWER || code == codes::UNKNOWN_TABLE_OR_BUCKET_EXCEPTION
        {
            table.conn.invalidate_table(table.info.table_id);
        }
        return Err(Error::from_fluss(
            code,
            format!(
                "fetching {} of table '{}' at offset {offset}: {}",
                b.describe(),
                table_name(table),
                bucket_resp.error_message.clone().unwrap_or_default()
            ),
        ));
    }
    let high_watermark = bucket_resp.high_watermark;
    let records = bucket_resp.records.unwrap_or_default();
    Ok(BucketAnswer {
        records,
        high_watermark,
        filtered_end_offset: bucket_resp.filtered_end_offset,
        skipped_batches: bucket_resp.skipped_batches.unwrap_or(0).max(0),
    })
}

/// What a read does with one log batch of a response, judged from its header alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BatchStep {
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
/// next fetch offset ([`next_fetch`]) and by the decoding pass ([`decode_records`]).
/// A time-range read judges a batch by the commit timestamp in its header, before paying for its
/// CRC and Arrow decoding.
pub(super) fn judge_batch(
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

/// What a response means for the bucket's next fetch, judged from the batch headers alone (no
/// CRC check, no Arrow decoding), so the next fetch can be sent before this one is decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NextFetch {
    /// Fetch again from this offset.
    At(i64),
    /// No further fetch: the response ends the read (window end, end bound reached) or does
    /// not parse (the decoding pass reports it).
    Stop,
    /// The response holds nothing past the fetch offset (the empty-fetch rule decides).
    NoProgress,
}

/// The [`NextFetch`] of a response fetched at `offset`.
pub(super) fn next_fetch(
    records: &[u8],
    offset: i64,
    end: Option<i64>,
    window: Option<&PinnedRange>,
) -> NextFetch {
    let mut next = offset;
    for batch in LogBatchIter::new(records) {
        let Ok(batch) = batch else {
            return NextFetch::Stop;
        };
        match judge_batch(&batch, offset, end, window) {
            BatchStep::Before => {}
            BatchStep::PastEnd => return NextFetch::Stop,
            BatchStep::AfterWindow => return NextFetch::Stop,
            BatchStep::BeforeWindow | BatchStep::Decode => next = batch.next_offset(),
        }
    }
    if end.is_some_and(|e| next >= e) {
        NextFetch::Stop
    } else if next > offset {
        NextFetch::At(next)
    } else {
        NextFetch::NoProgress
    }
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
    let fetch_schema = columns.schema;
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
        next = batch.next_offset();
        out.extend(decode_batch(table, &batch, offset, end, columns)?);
    }
    Ok((out, next))
}

/// Checks and decodes one log batch judged [`BatchStep::Decode`] for a fetch at `offset`,
/// keeping its rows within `[offset, end)`; `None` when none are left.
pub(super) fn decode_batch(
    table: &Table,
    batch: &LogRecordBatch<'_>,
    offset: i64,
    end: Option<i64>,
    columns: &FetchColumns<'_>,
) -> Result<Option<FetchedBatch>> {
    // A projected batch keeps the header (and CRC) of the stored one while its payload is
    // re-encoded, so its CRC cannot match: Fluss's own client skips the check for projected
    // fetches, and so do we.
    if !columns.projected {
        batch.ensure_valid()?;
    }
    if batch.record_count() == 0 {
        return Ok(None);
    }
    let schema_id = batch.schema_id() as i32;
    let (change_types, rows) = if schema_id == table.info.schema_id {
        batch.arrow_records_in(columns.schema, columns.memory)?
    } else {
        // Written before an ADD COLUMN: decoded with its own schema, the added columns null.
        let older = table.info.schema_by_id(schema_id)?;
        if columns.projected {
            return Err(Error::internal(format!(
                "a projected fetch of table '{}' met a batch of schema id {schema_id}",
                table_name(table)
            )));
        }
        let (c, r) = batch.arrow_records(&older.to_arrow())?;
        (
            c,
            crate::metadata::evolution::widen_batch(&r, columns.schema)?,
        )
    };
    // Keep rows within [offset, end).
    let base = batch.base_offset();
    let from = (offset.max(base) - base) as usize;
    let to = match end {
        Some(e) => ((e.min(batch.next_offset()) - base) as usize).min(rows.num_rows()),
        None => rows.num_rows(),
    };
    if from >= to {
        return Ok(None);
    }
    let rows = rows.slice(from, to - from);
    let change_types = change_types.map(|c| c[from..to.min(c.len())].to_vec());
    Ok(Some(FetchedBatch {
        commit_timestamp: batch.commit_timestamp(),
        first_offset: base + from as i64,
        change_types,
        rows,
    }))
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
    fn next_fetch_follows_the_batch_rule() {
        use NextFetch::{At, NoProgress, Stop};
        let log = log();
        // Whole response inside the bounds: the next fetch starts after it.
        assert_eq!(next_fetch(&log, 0, Some(100), None), At(30));
        // From inside the second batch: the first one is skipped, the rest counted.
        assert_eq!(next_fetch(&log, 15, Some(100), None), At(30));
        // The end bound is reached inside the response: no further fetch.
        assert_eq!(next_fetch(&log, 0, Some(25), None), Stop);
        assert_eq!(next_fetch(&log, 0, Some(30), None), Stop);
        // Nothing new (already past the response): the empty-fetch rule decides.
        assert_eq!(next_fetch(&log, 30, Some(100), None), NoProgress);
        assert_eq!(next_fetch(&[], 0, Some(100), None), NoProgress);
        // Batches before the window are passed over; one after its end stops the read.
        let w = PinnedRange {
            start_ms: 250,
            end_ms: 1000,
        };
        assert_eq!(next_fetch(&log, 0, Some(100), Some(&w)), At(30));
        let w = PinnedRange {
            start_ms: 0,
            end_ms: 250,
        };
        assert_eq!(next_fetch(&log, 0, Some(100), Some(&w)), Stop);
        // Garbage: no further fetch (the decoding pass reports the error).
        assert_eq!(next_fetch(&[0xff; 80], 0, Some(100), None), Stop);
    }
}
