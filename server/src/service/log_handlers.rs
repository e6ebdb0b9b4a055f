//! Log handlers: produce, fetch (long-polling, with column projection), list offsets and
//! per-bucket table statistics.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use riverlet::error::codes as error_codes;
use riverlet::proto::*;
use riverlet::record::log_batch;
use riverlet::scan::time::now_millis as now_ms;
use riverlet::{Error, Result};

use super::{answer, check_acks, fluss, read_bucket, write_bucket, ErrorFields, Server};
use crate::catalog::TableMeta;
use riverlet::stats::{BatchStatistics, StatsFilter};

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
                let infos = crate::validate::log_records(meta, &b.records)?;
                let mut g = write_bucket(&bucket);
                g.log.append(b.records.to_vec(), &infos)
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
            // A pushed batch filter (Fluss 1.0): resolved once against the table's schema.
            let filter = meta.as_ref().ok().and_then(|m| batch_filter(m, t));
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
                    let (hw, start) = (g.log.high_watermark(), g.log.log_start_offset());
                    // Below the local log start Fluss answers with the remote segments to read.
                    if offset < g.log.local_log_start_offset() {
                        if let Some((segs, pos)) = g.log.remote_fetch(offset) {
                            drop(g);
                            let info = self.remote_fetch_info(meta, b, segs, pos)?;
                            return Ok((Vec::new(), hw, start, Some(info), None));
                        }
                    }
                    let bytes = g.log.read(offset, want, min_one)?;
                    drop(g);
                    let (bytes, skipped) = match &filter {
                        Some(f) if !bytes.is_empty() => skip_batches(meta, f, bytes)?,
                        _ => (bytes, None),
                    };
                    let bytes = match &proj {
                        Some(fields) if !bytes.is_empty() => project(meta, &bytes, fields)?,
                        _ => bytes,
                    };
                    Ok((bytes, hw, start, None, skipped))
                });
                let mut a = PbFetchLogRespForBucket {
                    partition_id: b.partition_id,
                    bucket_id: b.bucket_id,
                    ..Default::default()
                };
                match res {
                    Ok((bytes, hw, start, remote, skipped)) => {
                        if !bytes.is_empty() {
                            min_one = false;
                        }
                        if let Some(s) = skipped {
                            a.filtered_end_offset = Some(s.end_offset);
                            a.skipped_batches = Some(s.batches);
                            if let Ok(m) = &meta {
                                metrics::counter!(
                                    riverlet::metrics::SERVER_FETCH_SKIPPED_BATCHES,
                                    "table" => m.path().to_string()
                                )
                                .increment(s.batches as u64);
                            }
                            if bytes.is_empty() {
                                // like data: the client acts on the skipped range now
                                total += 1;
                            }
                        }
                        limit = limit.saturating_sub(bytes.len());
                        total += bytes.len();
                        a.high_watermark = Some(hw);
                        a.log_start_offset = Some(start);
                        match remote {
                            Some(info) => {
                                // an answer to act on now, like data: no long-poll wait
                                total += 1;
                                a.remote_log_fetch_info = Some(info);
                            }
                            None => a.records = Some(Bytes::from(bytes)),
                        }
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

    /// Fluss's `RemoteLogFetchInfo` for `segs`, the first read from byte `first_pos`.
    fn remote_fetch_info(
        &self,
        meta: &TableMeta,
        b: &PbFetchLogReqForBucket,
        segs: Vec<crate::log::RemoteSegment>,
        first_pos: u64,
    ) -> Result<PbRemoteLogFetchInfo> {
        let dir = self
            .remote_log_tablet_dir(meta, b.partition_id, b.bucket_id)
            .ok_or_else(|| Error::internal("remote segments without remote.data.dir"))?;
        let partition_name = b.partition_id.and_then(|p| {
            super::lock(&self.catalog)
                .partition_by_id(p)
                .map(|(_, e)| e.name)
        });
        let too_big = |what: &str, v: u64| {
            fluss(
                error_codes::LOG_STORAGE_EXCEPTION,
                format!("remote segment {what} {v} does not fit Fluss's int32 field"),
            )
        };
        Ok(PbRemoteLogFetchInfo {
            remote_log_tablet_dir: dir.uri().to_string(),
            partition_name,
            remote_log_segments: segs
                .into_iter()
                .map(|s| {
                    Ok(PbRemoteLogSegment {
                        remote_log_segment_id: s.id,
                        remote_log_start_offset: s.start,
                        remote_log_end_offset: s.end,
                        segment_size_in_bytes: i32::try_from(s.size)
                            .map_err(|_| too_big("size", s.size))?,
                        max_timestamp: Some(s.max_timestamp),
                    })
                })
                .collect::<Result<_>>()?,
            first_start_pos: Some(
                i32::try_from(first_pos).map_err(|_| too_big("position", first_pos))?,
            ),
        })
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

/// The batches a filtered fetch left out.
struct Skipped {
    /// How many batches were left out.
    batches: i64,
    /// The offset after the last batch read (Fluss's `filtered_end_offset`).
    end_offset: i64,
}

/// The pushed filter of a table request: only for log tables whose batches carry statistics,
/// as Fluss (a predicate without `filter_schema_id`, or one that does not decode, reads
/// unfiltered: the client applies its exact filter anyway).
fn batch_filter(meta: &TableMeta, t: &PbFetchLogReqForTable) -> Option<StatsFilter> {
    let pb = t.filter_predicate.as_ref()?;
    t.filter_schema_id?;
    if meta.is_pk() || meta.log_format != riverlet::metadata::table::LogFormat::Arrow {
        return None;
    }
    match StatsFilter::from_proto(pb, &meta.descriptor.schema) {
        Ok(f) => Some(f),
        Err(e) => {
            tracing::warn!(table = %meta.path(), error = %e, "filter predicate ignored");
            None
        }
    }
}

/// Leaves out the batches of `bytes` whose statistics exclude `filter`. Batches without
/// statistics (or with statistics that do not decode) are kept, as Fluss does.
fn skip_batches(
    meta: &TableMeta,
    filter: &StatsFilter,
    bytes: Vec<u8>,
) -> Result<(Vec<u8>, Option<Skipped>)> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut skipped = 0i64;
    let mut end_offset = None;
    for b in log_batch::LogBatchIter::new(&bytes) {
        let b = b?;
        end_offset = Some(b.next_offset());
        let stats = b.statistics();
        let keep = stats.is_empty()
            || meta
                .types_of(i32::from(b.schema_id()))
                .and_then(|types| BatchStatistics::decode(stats, types))
                .map_or(true, |st| {
                    filter.may_match(&st, i64::from(b.record_count()))
                });
        if keep {
            out.extend_from_slice(b.as_bytes());
        } else {
            skipped += 1;
        }
    }
    if skipped == 0 {
        return Ok((bytes, None));
    }
    // Fluss sends it only when trailing batches were left out; the client takes the later of
    // it and the end of the records, so sending it whenever one was left out is the same.
    Ok((
        out,
        Some(Skipped {
            batches: skipped,
            end_offset: end_offset.unwrap_or_default(),
        }),
    ))
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

/// Re-encodes stored batches keeping only the projected Arrow columns (the core's rule), each
/// batch read with the schema it was written with.
fn project(meta: &TableMeta, bytes: &[u8], fields: &[usize]) -> Result<Vec<u8>> {
    let schema_of = |id: i16| meta.arrow_of(i32::from(id)).cloned();
    log_batch::project_arrow_batches(bytes, &schema_of, fields, meta.compression)
}
