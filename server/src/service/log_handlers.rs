//! Log handlers: produce, fetch (long-polling, with column projection), list offsets and
//! per-bucket table statistics.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use riverlet::error::codes as error_codes;
use riverlet::proto::*;
use riverlet::record::log_batch::{self, LogBatchIter};
use riverlet::scan::time::now_millis as now_ms;
use riverlet::{Error, Result};

use super::{answer, check_acks, fluss, read_bucket, write_bucket, ErrorFields, Server};
use crate::catalog::TableMeta;

/// Fluss's `FetchParams.FETCH_FROM_EARLIEST_OFFSET`.
const FETCH_FROM_EARLIEST_OFFSET: i64 = -2;

impl Server {
    pub(super) fn produce_log(&self, r: ProduceLogRequest) -> Result<ProduceLogResponse> {
        check_acks(r.acks)?;
        let meta = self.table(r.table_id);
        let mut out = Vec::new();
        for b in r.buckets_req {
            let res = meta.as_ref().map_err(Clone::clone).and_then(|meta| {
                if meta.is_pk() {
                    return Err(fluss(
                        error_codes::INVALID_TABLE_EXCEPTION,
                        format!(
                            "Cannot produce log records to primary key table '{}'; use PutKv.",
                            meta.path()
                        ),
                    ));
                }
                let (_, bucket) = self.bucket(meta, b.partition_id, b.bucket_id)?;
                crate::validate::log_records(meta, &b.records, &self.config)?;
                let mut g = write_bucket(&bucket);
                g.log.append(b.records.to_vec())
            });
            let base = PbProduceLogRespForBucket {
                partition_id: b.partition_id,
                bucket_id: b.bucket_id,
                ..Default::default()
            };
            out.push(answer(base, res, |a, r| {
                a.base_offset = Some(r.base_offset)
            }));
        }
        Ok(ProduceLogResponse { buckets_resp: out })
    }

    pub(super) async fn fetch_log(
        self: &Arc<Self>,
        r: FetchLogRequest,
    ) -> Result<FetchLogResponse> {
        let wait = Duration::from_millis(r.max_wait_ms.unwrap_or(0).max(0) as u64);
        let deadline = Instant::now() + wait;
        let min_bytes = r.min_bytes.unwrap_or(1).max(0) as usize;
        let r = Arc::new(r);
        loop {
            let notified = self.appended.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let s = self.clone();
            let req = r.clone();
            let (resp, total, errors) = tokio::task::spawn_blocking(move || s.fetch_once(&req))
                .await
                .map_err(|e| Error::internal(format!("fetch task failed: {e}")))?;
            let now = Instant::now();
            if total >= min_bytes.max(1) || errors || now >= deadline {
                return Ok(resp);
            }
            let _ = tokio::time::timeout(deadline - now, notified).await;
        }
    }

    fn fetch_once(&self, r: &FetchLogRequest) -> (FetchLogResponse, usize, bool) {
        let mut limit = r.max_bytes.max(0) as usize;
        let mut min_one = true;
        let mut total = 0usize;
        let mut errors = false;
        let mut tables = Vec::new();
        for t in &r.tables_req {
            let meta = self.table(t.table_id);
            let projection = meta.as_ref().map_err(Clone::clone).and_then(|m| {
                if t.projection_pushdown_enabled {
                    check_projection(m, &t.projected_fields).map(Some)
                } else {
                    Ok(None)
                }
            });
            let mut buckets = Vec::new();
            for b in &t.buckets_req {
                let res = meta.as_ref().map_err(Clone::clone).and_then(|meta| {
                    let proj = projection.clone()?;
                    let (_, bucket) = self.bucket(meta, b.partition_id, b.bucket_id)?;
                    let g = read_bucket(&bucket);
                    let want = limit.min(b.max_fetch_bytes.max(0) as usize);
                    // Fluss's FETCH_FROM_EARLIEST_OFFSET (-2): read from the log start offset
                    let offset = if b.fetch_offset == FETCH_FROM_EARLIEST_OFFSET {
                        g.log.log_start_offset()
                    } else {
                        b.fetch_offset
                    };
                    let bytes = g.log.read(offset, want, min_one)?;
                    let bytes = match &proj {
                        Some(fields) if !bytes.is_empty() => project(meta, &bytes, fields)?,
                        _ => bytes,
                    };
                    Ok((bytes, g.log.high_watermark(), g.log.log_start_offset()))
                });
                let mut a = PbFetchLogRespForBucket {
                    partition_id: b.partition_id,
                    bucket_id: b.bucket_id,
                    ..Default::default()
                };
                match res {
                    Ok((bytes, hw, start)) => {
                        if !bytes.is_empty() {
                            min_one = false;
                        }
                        limit = limit.saturating_sub(bytes.len());
                        total += bytes.len();
                        a.high_watermark = Some(hw);
                        a.log_start_offset = Some(start);
                        a.records = Some(Bytes::from(bytes));
                    }
                    Err(e) => {
                        errors = true;
                        a.set_error(&e);
                    }
                }
                buckets.push(a);
            }
            tables.push(PbFetchLogRespForTable {
                table_id: t.table_id,
                buckets_resp: buckets,
            });
        }
        (
            FetchLogResponse {
                tables_resp: tables,
            },
            total,
            errors,
        )
    }

    pub(super) fn list_offsets(&self, r: ListOffsetsRequest) -> Result<ListOffsetsResponse> {
        let meta = self.table(r.table_id);
        let mut out = Vec::new();
        for &bucket_id in &r.bucket_id {
            let res = meta.as_ref().map_err(Clone::clone).and_then(|meta| {
                let (tb, bucket) = self.bucket(meta, r.partition_id, bucket_id)?;
                let g = read_bucket(&bucket);
                match r.offset_type {
                    0 => Ok(g.log.log_start_offset()),
                    1 => Ok(g.log.high_watermark()),
                    2 => {
                        let Some(ts) = r.start_timestamp else {
                            return Err(fluss(
                                error_codes::UNKNOWN_SERVER_ERROR,
                                "startTimestamp is not present while list offset by timestamp.",
                            ));
                        };
                        let now = now_ms();
                        let max = g.log.max_timestamp();
                        if ts > now {
                            return Err(fluss(
                                error_codes::INVALID_TIMESTAMP_EXCEPTION,
                                format!(
                                    "Get offset error for table bucket {tb}, the fetch timestamp {ts} \
                                     is larger than the current timestamp {now}"
                                ),
                            ));
                        }
                        if ts > max {
                            return Ok(g.log.high_watermark());
                        }
                        g.log.offset_for_timestamp(ts)?.ok_or_else(|| {
                            fluss(
                                error_codes::INVALID_TIMESTAMP_EXCEPTION,
                                format!(
                                    "Lookup offset error for table bucket {tb}, the fetch timestamp \
                                     {ts} is larger than the max timestamp {max}"
                                ),
                            )
                        })
                    }
                    t => Err(fluss(
                        error_codes::UNKNOWN_SERVER_ERROR,
                        format!("Invalid list offset type: {t}"),
                    )),
                }
            });
            let base = PbListOffsetsRespForBucket {
                bucket_id,
                ..Default::default()
            };
            out.push(answer(base, res, |a, o| a.offset = Some(o)));
        }
        Ok(ListOffsetsResponse { buckets_resp: out })
    }

    pub(super) fn table_stats(&self, r: GetTableStatsRequest) -> Result<GetTableStatsResponse> {
        let meta = self.table(r.table_id);
        let mut out = Vec::new();
        for b in r.buckets_req {
            let res = meta.as_ref().map_err(Clone::clone).and_then(|meta| {
                let (_, bucket) = self.bucket(meta, b.partition_id, b.bucket_id)?;
                let g = read_bucket(&bucket);
                Ok(match &g.kv {
                    Some(kv) => kv.len() as i64,
                    None => g.log.high_watermark() - g.log.log_start_offset(),
                })
            });
            let base = PbTableStatsRespForBucket {
                partition_id: b.partition_id,
                bucket_id: b.bucket_id,
                ..Default::default()
            };
            out.push(answer(base, res, |a, n| a.row_count = Some(n)));
        }
        Ok(GetTableStatsResponse { buckets_resp: out })
    }
}

fn check_projection(meta: &TableMeta, fields: &[i32]) -> Result<Vec<usize>> {
    let bad = |m: String| fluss(error_codes::INVALID_COLUMN_PROJECTION, m);
    if meta.log_format != riverlet::metadata::table::LogFormat::Arrow {
        return Err(bad(format!(
            "Column projection is only supported for ARROW format, but the table {} is {} format.",
            meta.path(),
            meta.log_format
        )));
    }
    if fields.is_empty() {
        return Err(bad(
            "Empty projection is not supported. Please project at least one column.".to_string(),
        ));
    }
    let n = meta.types.len() as i32;
    let mut prev = -1;
    for &f in fields {
        if f < prev {
            return Err(bad(format!(
                "The projection indexes should be in field order, but is {fields:?}"
            )));
        } else if f == prev {
            return Err(bad(format!(
                "The projection indexes should not contain duplicated fields, but is {fields:?}"
            )));
        } else if f >= n {
            return Err(bad(format!(
                "Projected fields {fields:?} is out of bound for schema with {n} fields."
            )));
        }
        prev = f;
    }
    Ok(fields.iter().map(|f| *f as usize).collect())
}

/// Re-encodes stored batches keeping only the projected Arrow columns (header fields kept).
///
/// Like Fluss's `FileLogProjection`, the header keeps the stored batch's CRC, which no longer
/// matches the re-encoded payload: clients skip the CRC check of projected fetches.
fn project(meta: &TableMeta, bytes: &[u8], fields: &[usize]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len());
    for item in LogBatchIter::new(bytes) {
        let b = item?;
        // A batch written before an ADD COLUMN has its own (shorter) schema.
        let arrow = meta.arrow_of(i32::from(b.schema_id()))?;
        if let Some(f) = fields.iter().find(|f| **f >= arrow.fields().len()) {
            return Err(Error::from_fluss(
                riverlet::error::codes::INVALID_COLUMN_PROJECTION,
                format!(
                    "Projected field {f} does not exist in schema id {} of table {} (a batch \
                     written before the column was added); fetch without projection",
                    b.schema_id(),
                    meta.path()
                ),
            ));
        }
        let (cts, rb) = b.arrow_records_projected(arrow, fields)?;
        let mut nb = log_batch::build_arrow_log_batch(
            b.schema_id(),
            &rb,
            meta.compression,
            cts.as_deref(),
            b.writer_id(),
            b.batch_sequence(),
        )?;
        log_batch::set_base_offset(&mut nb, b.base_offset())?;
        log_batch::set_commit_timestamp(&mut nb, b.commit_timestamp())?;
        log_batch::set_crc(&mut nb, b.crc())?;
        out.extend_from_slice(&nb);
    }
    Ok(out)
}
