//! The primary-key side of reads: the changelog folded per key inside a window, the latest
//! view of a bucket (ScanKv, or a changelog replay on servers without it) and the state of a
//! bucket's KV snapshot (read-optimized reads).

use arrow_array::RecordBatch;

use super::super::fold::{ChangeRecord, ChangelogFold, KeyChange};
use super::super::stream::Emitter;
use super::super::time::PinnedRange;
use crate::client::{OffsetSpec, Table};
use crate::error::codes;
use crate::metadata::{DataType, KvFormat};
use crate::proto::{PbScanReqForBucket, ScanKvRequest};
use crate::record::batch_memory::BatchMemory;
use crate::record::ValueRecordBatch;
use crate::rpc::ApiKey;
use crate::{Error, Result};

use super::fetch::FetchColumns;
use super::finish_batch;
use super::log_read::{bucket_batches, LogSource, ReadMemory};
use super::plan::{table_name, BucketRead, KvLake, Plan};
use super::snapshot::{latest_snapshots, read_snapshot, SnapshotRef};

const SCAN_KV_BATCH_BYTES: i32 = 4 * 1024 * 1024;
/// Rows per output batch of folds and KV scans.
const OUTPUT_ROWS: usize = 8192;

/// Folds one bucket's changelog inside the window, then emits the surviving values.
pub(super) async fn fold_bucket(plan: &Plan, b: &BucketRead, emit: &mut Emitter) -> Result<bool> {
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
        Vec::new(),
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
/// the last value of every key whose last change is not a delete. `base` is the state before
/// `b.start` (a KV snapshot's rows, of the fetched columns) that the changelog applies to.
async fn fold_log(
    table: &Table,
    b: &BucketRead,
    columns: &FetchColumns<'_>,
    key_cols: &[usize],
    key_types: &[DataType],
    range: Option<PinnedRange>,
    base: Vec<RecordBatch>,
) -> Result<Vec<RecordBatch>> {
    let mut fold = ChangelogFold::new(columns.schema.clone());
    // The base rows come before every log record: offsets below any real one.
    let mut base_offset = i64::MIN;
    for batch in base {
        let keys = crate::row::encode_keys_from_batch(&batch, key_cols, key_types)?;
        let records: Vec<ChangeRecord> = keys
            .into_iter()
            .enumerate()
            .map(|(i, key)| {
                base_offset += 1;
                ChangeRecord {
                    key,
                    offset: base_offset,
                    change: KeyChange::Upsert,
                    row: i,
                }
            })
            .collect();
        fold.push(&batch, records)?;
    }
    let mut batches = bucket_batches(
        LogSource {
            table: table.clone(),
            cols: columns.cols.to_vec(),
            projected: columns.projected,
            schema: columns.schema.clone(),
            window: range,
            pushed: None,
            memory: ReadMemory::Allocated,
        },
        b.clone(),
    );
    // The reader hands out only batches committed inside the window (if any).
    while let Some(fb) = batches.next().await? {
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
    fold.finish(OUTPUT_ROWS)
}

/// Decodes value rows (schema id + row bytes) into a batch of the table's full schema. A row
/// written under an older schema id (before an ADD COLUMN) is decoded with that schema and
/// gets nulls for the added columns.
pub(crate) fn values_to_batch(table: &Table, values: &[&[u8]]) -> Result<RecordBatch> {
    let info = &table.info;
    let types = info.schema().data_types();
    let format = info.descriptor.kv_format()?;
    let mut rows = Vec::with_capacity(values.len());
    for v in values {
        let (schema_id, row) = crate::row::decode_value(v)?;
        let schema_id = schema_id as i32;
        let older;
        let row_types: &[DataType] = if schema_id == info.schema_id {
            &types
        } else {
            older = info.schema_by_id(schema_id)?.data_types();
            &older
        };
        let decoded = match format {
            KvFormat::Indexed => crate::row::decode_indexed_row(row_types, row)?,
            _ => crate::row::decode_compacted_row(row_types, row)?,
        };
        rows.push(crate::metadata::evolution::widen_row(decoded, types.len()));
    }
    crate::row::rows_to_record_batch(&info.schema().to_arrow(), &types, &rows)
}

/// The latest view of one bucket of a primary-key table (rows of the full table schema), and
/// the log offset it reflects: changes from that offset on are not in it.
///
/// With `lake` (a union read, see `plan::pk_union_candidate`): the bucket's merged state in
/// that lake snapshot with the changelog from the snapshot's offset folded over it, as
/// Fluss's batch union read. Otherwise two paths, chosen by what the bucket's leader offers:
/// - **ScanKv** (API 1061; Apache Fluss 1.0 and riverlet-server): the server scans its KV
///   state.
/// - **Changelog replay** (Apache Fluss 0.9.x, which has no ScanKv): what Fluss's own
///   connectors do, a KV snapshot's state with the changelog after it merged in. The changelog
///   is read up to the high watermark and folded per key (last `+I`/`+U` wins, `-D` removes)
///   from offset 0 while the log still starts there (exact, snapshot or not: a snapshot does
///   not truncate the log). When the log no longer starts at 0 (retention removed its head),
///   the fold starts from the bucket's latest KV snapshot instead, which must cover the
///   missing head and be readable (see [`read_snapshot`]; Fluss's RocksDB snapshots are, with
///   the `kv-snapshot` feature):
///   otherwise the view would silently miss the older keys, and the read is an
///   [`Unsupported`](crate::ErrorKind::Unsupported) error.
pub(crate) async fn latest_view_bucket(
    table: &Table,
    b: &BucketRead,
    limit: Option<i64>,
    lake: Option<&KvLake>,
) -> Result<(Vec<RecordBatch>, i64)> {
    let info = &table.info;
    if let Some(lake) = lake {
        return lake_union_bucket(table, b, lake).await;
    }
    let conn = table
        .conn
        .leader(info.table_id, b.partition_id, b.bucket)
        .await?;
    if conn.api_version(ApiKey::ScanKv).is_some() {
        let (batches, offset) = scan_kv_bucket_with_offset(table, b, limit).await?;
        return Ok((batches, offset.unwrap_or(0)));
    }
    let (earliest, end) = log_bounds(table, b).await?;
    let mut start = earliest;
    let mut base = Vec::new();
    if earliest > 0 {
        let why = match latest_snapshots(table, b.partition_name.as_deref())
            .await?
            .get(&b.bucket)
        {
            None => {
                "; the changes before it are gone and the bucket has no KV snapshot".to_string()
            }
            Some(s) if s.log_offset < earliest => format!(
                "; its latest KV snapshot (id {}, log offset {}) does not reach the log's start, \
                 so the changes between are gone",
                s.id, s.log_offset
            ),
            Some(s) => match read_snapshot(table, b, *s).await? {
                Ok(rows) => {
                    base = rows;
                    start = s.log_offset;
                    String::new()
                }
                Err(why) => format!(
                    " while a KV snapshot (id {}, log offset {}) holds the older state, but {why}",
                    s.id, s.log_offset
                ),
            },
        };
        if !why.is_empty() {
            return Err(Error::unsupported(format!(
                "reading the latest view of {} of primary-key table '{}': the tablet \
                 server at {} has no ScanKv API (Apache Fluss 0.9.x), and the bucket's log \
                 no longer starts at offset 0 (it starts at {earliest}, its end is {end}){why}. \
                 Use a server with ScanKv (Apache Fluss 1.0 or riverlet-server), or a time-range \
                 read (between).",
                b.describe(),
                table_name(table),
                conn.peer(),
            )));
        }
    }
    let batches = fold_full_rows(table, b, start, end, base).await?;
    Ok((batches, end.max(start)))
}

/// One bucket of a primary-key union read: its merged state in the lake snapshot, with the
/// changelog from the snapshot's offset for the bucket (0 when the lake has none of it) to the
/// high watermark folded over it. The log must still hold that offset: otherwise changes
/// between the lake and the log are gone, and the read is an `Unsupported` error.
#[cfg(feature = "lake")]
async fn lake_union_bucket(
    table: &Table,
    b: &BucketRead,
    kv_lake: &KvLake,
) -> Result<(Vec<RecordBatch>, i64)> {
    let lake = &kv_lake.snapshot;
    let start = lake.start_offset(b.partition_id, b.bucket);
    let (earliest, end) = log_bounds(table, b).await?;
    if start < earliest {
        return Err(Error::unsupported(format!(
            "union read of {} of primary-key table '{}': lake snapshot {} holds its changes \
             before offset {start}, but its log now starts at {earliest}, so the changes \
             between are gone",
            b.describe(),
            table_name(table),
            lake.snapshot_id
        )));
    }
    let base = kv_lake
        .states
        .bucket(b.partition_name.as_deref(), b.bucket)
        .await?;
    let batches = fold_full_rows(table, b, start, end, base).await?;
    Ok((batches, end.max(start)))
}

/// Without feature `lake` no plan has a lake snapshot.
#[cfg(not(feature = "lake"))]
async fn lake_union_bucket(
    _: &Table,
    _: &BucketRead,
    _: &KvLake,
) -> Result<(Vec<RecordBatch>, i64)> {
    Err(Error::internal(
        "a union read planned without the lake feature",
    ))
}

/// `[start, end)` of one bucket's changelog folded per key over `base`, full table schema.
async fn fold_full_rows(
    table: &Table,
    b: &BucketRead,
    start: i64,
    end: i64,
    base: Vec<RecordBatch>,
) -> Result<Vec<RecordBatch>> {
    let info = &table.info;
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
        memory: BatchMemory::PerBatch,
    };
    if start >= end {
        if base.is_empty() {
            return Ok(Vec::new());
        }
        // Nothing to merge: the base (already one row per key) is the state.
        return Ok(base);
    }
    fold_log(table, &read, &columns, &key_cols, &key_types, None, base).await
}

/// The log start offset and high watermark of one bucket.
async fn log_bounds(table: &Table, b: &BucketRead) -> Result<(i64, i64)> {
    let info = &table.info;
    let admin = table.conn.admin();
    let get = |spec| {
        let admin = admin.clone();
        async move {
            Ok::<i64, Error>(
                admin
                    .list_offsets_by_id(info.table_id, b.partition_id, &[b.bucket], spec)
                    .await?
                    .get(&b.bucket)
                    .copied()
                    .unwrap_or(0),
            )
        }
    };
    let earliest = get(OffsetSpec::Earliest).await?;
    let latest = get(OffsetSpec::Latest).await?;
    Ok((earliest, latest))
}

/// One bucket of a read-optimized read: the state of its latest KV snapshot, never the log
/// after it (as Fluss's `read.optimized`: stale by design). A bucket without a snapshot
/// contributes no rows, as in Fluss.
pub(super) async fn read_snapshot_bucket(
    plan: &Plan,
    b: &BucketRead,
    emit: &mut Emitter,
) -> Result<bool> {
    let Some(snap) = plan.snapshots.get(&(b.partition_id, b.bucket)).copied() else {
        return Ok(true);
    };
    let batches = snapshot_state(&plan.table, b, snap).await?;
    for batch in batches {
        let out = finish_batch(plan, batch)?;
        if !emit.emit(out).await {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The state of a bucket as of a KV snapshot (full table schema): the snapshot's rows when
/// Riverlet can read them; otherwise, while the log still starts at 0, the changelog up to the
/// snapshot's log offset folded per key, which is the same state exactly (this is how a
/// read-optimized read works against Apache Fluss 0.9.x); otherwise Unsupported.
async fn snapshot_state(
    table: &Table,
    b: &BucketRead,
    snap: SnapshotRef,
) -> Result<Vec<RecordBatch>> {
    let why = match read_snapshot(table, b, snap).await? {
        Ok(rows) => return Ok(rows),
        Err(why) => why,
    };
    let (earliest, _) = log_bounds(table, b).await?;
    if earliest > 0 {
        return Err(Error::unsupported(format!(
            "read-optimized read of {} of primary-key table '{}': its KV snapshot {} (log offset \
             {}) cannot be read: {why}; and the bucket's log no longer starts at offset 0 (it \
             starts at {earliest}), so the snapshot's state cannot be rebuilt from the log either",
            b.describe(),
            table_name(table),
            snap.id,
            snap.log_offset
        )));
    }
    fold_full_rows(table, b, 0, snap.log_offset, Vec::new()).await
}

/// Reads the latest view of one bucket of a primary-key table.
pub(super) async fn read_kv_bucket(
    plan: &Plan,
    b: &BucketRead,
    emit: &mut Emitter,
) -> Result<bool> {
    let (batches, _) =
        latest_view_bucket(&plan.table, b, kv_limit(plan, emit), plan.kv_lake.as_ref()).await?;
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
        if let Some(code) = resp.error_code.filter(|c| *c != codes::NONE) {
            if code == codes::TOO_MANY_SCANNERS && scanner_id.is_none() && open_retries < 3 {
                tokio::time::sleep(std::time::Duration::from_millis(100 << open_retries)).await;
                open_retries += 1;
                continue;
            }
            if code == codes::NOT_LEADER_OR_FOLLOWER {
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
