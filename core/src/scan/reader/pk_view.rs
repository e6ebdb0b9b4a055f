//! The primary-key side of reads: the changelog folded per key inside a window, and the
//! latest view of a bucket (ScanKv, or a changelog replay on servers without it).

use arrow_array::RecordBatch;

use super::super::fold::{ChangeRecord, ChangelogFold, KeyChange};
use super::super::stream::Emitter;
use super::super::time::PinnedRange;
use crate::client::{OffsetSpec, Table};
use crate::error::codes;
use crate::metadata::{DataType, KvFormat};
use crate::proto::{GetLatestKvSnapshotsRequest, PbScanReqForBucket, PbTablePath, ScanKvRequest};
use crate::record::ValueRecordBatch;
use crate::rpc::ApiKey;
use crate::{Error, Result};

use super::fetch::FetchColumns;
use super::finish_batch;
use super::log_read::{bucket_batches, LogSource};
use super::plan::{table_name, BucketRead, Plan};

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
    let mut batches = bucket_batches(
        LogSource {
            table: table.clone(),
            cols: columns.cols.to_vec(),
            projected: columns.projected,
            schema: columns.schema.clone(),
            window: range,
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

/// The offsets `[0, high watermark)` to replay for the latest view of a bucket on a server
/// without ScanKv, or Unsupported when the log no longer starts at 0 (expired or snapshotted
/// away, entirely or in part: a replay would silently miss the older keys).
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
    // Replaying a log that no longer starts at 0 would miss the keys written before its
    // start: a silently partial (or, with the whole log expired, empty) view. Refuse instead.
    if earliest > 0 {
        let req = GetLatestKvSnapshotsRequest {
            table_path: PbTablePath::from(&info.table_path),
            partition_name: b.partition_name.clone(),
        };
        let resp = table.conn.coordinator().await?.request(&req).await?;
        let snapshot = resp
            .latest_snapshots
            .iter()
            .find(|s| s.bucket_id == b.bucket && s.snapshot_id.is_some())
            .map(|s| {
                format!(
                    " while a KV snapshot (id {}, log offset {}) holds the older state; reading \
                     it would need the snapshot's RocksDB files, which Riverlet does not download",
                    s.snapshot_id.unwrap_or_default(),
                    s.log_offset.unwrap_or_default()
                )
            })
            .unwrap_or_else(|| "; the changes before it are gone".to_string());
        return Err(Error::unsupported(format!(
            "reading the latest view of {} of primary-key table '{}': the tablet \
             server at {server} has no ScanKv API (Apache Fluss 0.9.x), and the bucket's log \
             no longer starts at offset 0 (it starts at {earliest}, its end is {latest}){snapshot}. \
             Use a server with ScanKv (Apache Fluss 1.0 or riverlet-server), or a time-range read \
             (between).",
            b.describe(),
            table_name(table),
        )));
    }
    Ok((earliest, latest))
}

/// Reads the latest view of one bucket of a primary-key table.
pub(super) async fn read_kv_bucket(
    plan: &Plan,
    b: &BucketRead,
    emit: &mut Emitter,
) -> Result<bool> {
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
