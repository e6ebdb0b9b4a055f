//! Primary-key handlers: put (with merge engines and auto-increment), lookup, prefix lookup,
//! limit scan and the ScanKv sessions.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bytes::Bytes;
use riverlet::error::codes as error_codes;
use riverlet::proto::*;
use riverlet::record::log_batch;
use riverlet::scan::time::now_millis as now_ms;
use riverlet::{Error, Result};

use super::{answer, check_acks, fluss, lock, read_bucket, write_bucket, ErrorFields, Server};
use crate::catalog::TableMeta;
use crate::merge;
use crate::tablets::{Bucket, TableBucket};
use crate::writers::SequenceCheck;

/// Idle ScanKv sessions are dropped after this long (Fluss `kv.scanner.ttl` default 10 min).
const SCANNER_TTL: Duration = Duration::from_secs(600);
/// Upper bound of one ScanKv response (Fluss `kv.scanner.max-batch-size` default 8 MiB).
const SCANNER_MAX_BATCH: usize = 8 * 1024 * 1024;

pub(super) struct ScanSession {
    bucket: TableBucket,
    values: Vec<Vec<u8>>,
    pos: usize,
    call_seq: i32,
    last_access: Instant,
}

impl ScanSession {
    /// The table the scanner reads (its continuations are authorized against it).
    pub(super) fn table_id(&self) -> i64 {
        self.bucket.table_id
    }
}

impl Server {
    pub(super) fn put_kv(&self, r: PutKvRequest) -> Result<PutKvResponse> {
        check_acks(r.acks)?;
        let meta = self.table(r.table_id);
        let target = meta
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|m| merge::check_target_columns(m, &r.target_columns));
        let mut out = Vec::new();
        for b in &r.buckets_req {
            let res = meta.as_ref().map_err(Clone::clone).and_then(|meta| {
                let target = target.clone()?;
                self.put_bucket(meta, b, target.as_deref())
            });
            let base = PbPutKvRespForBucket {
                partition_id: b.partition_id,
                bucket_id: b.bucket_id,
                ..Default::default()
            };
            out.push(answer(base, res, |a, leo| a.log_end_offset = Some(leo)));
        }
        Ok(PutKvResponse { buckets_resp: out })
    }

    fn put_bucket(
        &self,
        meta: &TableMeta,
        b: &PbPutKvReqForBucket,
        target: Option<&[bool]>,
    ) -> Result<i64> {
        let (tb, bucket) = self.bucket(meta, b.partition_id, b.bucket_id)?;
        if !meta.is_pk() {
            return Err(fluss(
                error_codes::NON_PRIMARY_KEY_TABLE_EXCEPTION,
                format!("the primary key table not exists for {tb}"),
            ));
        }
        let decoded = crate::validate::kv_records(meta, &b.records)?;
        let kvb = riverlet::record::kv_batch::KvRecordBatch::new(&b.records).map_err(|e| {
            fluss(
                error_codes::CORRUPT_RECORD_EXCEPTION,
                e.message().to_string(),
            )
        })?;
        if !kvb.is_valid() {
            return Err(fluss(
                error_codes::CORRUPT_RECORD_EXCEPTION,
                format!("KV record batch for {tb} failed its CRC check"),
            ));
        }
        let schema_id = kvb.schema_id();
        let latest = meta.entry.schema_id as i16;
        if schema_id > latest || schema_id < 0 {
            return Err(fluss(
                error_codes::SCHEMA_NOT_EXIST,
                format!("Invalid schema id: {schema_id}, latest schema id: {latest}"),
            ));
        }
        let mut recs = Vec::new();
        for rec in kvb.records() {
            recs.push(rec.map_err(|e| {
                fluss(
                    error_codes::CORRUPT_RECORD_EXCEPTION,
                    e.message().to_string(),
                )
            })?);
        }
        // A writer that opened the table before an ADD COLUMN writes the older schema: its rows
        // are re-encoded in the latest one before they are merged and stored.
        let upgraded = if schema_id != latest {
            recs.iter()
                .map(|r| {
                    r.value
                        .map(|v| merge::upgrade_row(meta, schema_id, v))
                        .transpose()
                })
                .collect::<Result<Vec<_>>>()?
        } else {
            Vec::new()
        };
        let records: Vec<(&[u8], Option<&[u8]>)> = recs
            .iter()
            .enumerate()
            .map(|(i, r)| match upgraded.get(i) {
                Some(v) => (r.key, v.as_deref()),
                None => (r.key, r.value),
            })
            .collect();
        let (writer_id, seq) = (kvb.writer_id(), kvb.batch_sequence());
        let mut g = write_bucket(&bucket);
        let g = &mut *g;
        if let SequenceCheck::Duplicate(m) = g.log.check_sequence(writer_id, seq)? {
            return Ok(m.last_offset + 1);
        }
        self.write_kv(meta, g, &records, Some(decoded), target, (writer_id, seq))
    }

    /// Applies KV records to a bucket (merge engine, auto-increment values), appends their
    /// changelog and commits the state; the new log end offset.
    fn write_kv(
        &self,
        meta: &TableMeta,
        g: &mut Bucket,
        records: &[(&[u8], Option<&[u8]>)],
        decoded: Option<Vec<Option<Vec<riverlet::row::Datum>>>>,
        target: Option<&[bool]>,
        (writer_id, seq): (i64, i32),
    ) -> Result<i64> {
        let latest = meta.entry.schema_id as i16;
        let kv =
            g.kv.as_mut()
                .ok_or_else(|| Error::internal(format!("{} has no KV tablet", meta.path())))?;
        let table_id = meta.entry.id;
        let w = merge::apply_batch(meta, kv, latest, records, decoded, target, &mut || {
            self.tablets.sequences.next(table_id)
        })?;
        let rb = riverlet::row::arrow_rows::rows_to_record_batch(
            &meta.arrow_schema,
            &meta.types,
            &w.rows,
        )?;
        let batch = log_batch::build_arrow_log_batch(
            latest,
            &rb,
            meta.compression,
            Some(&w.change_types),
            writer_id,
            seq,
        )?;
        let info = crate::batch::info(&log_batch::LogRecordBatch::new(&batch)?);
        g.log.append(batch, &[info])?;
        let leo = g.log.log_end_offset();
        kv.commit(leo, w.mutations)?;
        Ok(leo)
    }

    /// Lookup with insert-if-not-exists (Fluss's dictionary-encoding pattern): every missing key
    /// is inserted as a write of only the primary-key columns (other columns null, the
    /// auto-increment column assigned), as Fluss's ReplicaManager does before it looks the keys
    /// up again.
    fn insert_missing_keys(
        &self,
        meta: &TableMeta,
        tb: &TableBucket,
        bucket: &std::sync::RwLock<Bucket>,
        keys: &[Vec<u8>],
    ) -> Result<()> {
        let mut g = write_bucket(bucket);
        let g = &mut *g;
        let kv =
            g.kv.as_ref()
                .ok_or_else(|| Error::internal("no KV tablet"))?;
        // In request order (the order values are assigned in), each key once.
        let mut missing: Vec<&Vec<u8>> = Vec::new();
        for k in keys {
            if kv.get(k).is_none() && !missing.contains(&k) {
                missing.push(k);
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        let pk_targets: Vec<i32> = meta.pk_indexes.iter().map(|i| *i as i32).collect();
        let target = merge::check_target_columns(meta, &pk_targets)?;
        let partition_cols: Vec<usize> = meta
            .partition_keys
            .iter()
            .filter_map(|k| meta.descriptor.schema.column_index(k))
            .collect();
        let key_cols: Vec<usize> = meta
            .pk_indexes
            .iter()
            .copied()
            .filter(|i| !partition_cols.contains(i))
            .collect();
        let key_types: Vec<_> = key_cols.iter().map(|i| meta.types[*i].clone()).collect();
        let mut template = vec![riverlet::row::Datum::Null; meta.types.len()];
        if let Some(pid) = tb.partition_id {
            let (_, partition) = lock(&self.catalog).partition_by_id(pid).ok_or_else(|| {
                fluss(
                    error_codes::PARTITION_NOT_EXISTS,
                    format!("partition {pid} of {} does not exist", meta.path()),
                )
            })?;
            for (col, (_, text)) in partition_cols.iter().zip(&partition.spec) {
                template[*col] = merge::partition_datum(&meta.types[*col], text).map_err(|e| {
                    e.context(format!(
                        "lookup with insert_if_not_exists in partition '{}' of {}",
                        partition.name,
                        meta.path()
                    ))
                })?;
            }
        }
        let mut records = Vec::with_capacity(missing.len());
        for key in missing {
            let values = riverlet::row::key::decode_key(&key_types, key)?;
            let mut row = template.clone();
            for (col, v) in key_cols.iter().zip(values) {
                row[*col] = v;
            }
            records.push((key.as_slice(), merge::encode_row(meta, &row)?));
        }
        let records: Vec<(&[u8], Option<&[u8]>)> = records
            .iter()
            .map(|(k, v)| (*k, Some(v.as_slice())))
            .collect();
        self.write_kv(
            meta,
            g,
            &records,
            None,
            target.as_deref(),
            (crate::writers::NO_WRITER_ID, -1),
        )?;
        Ok(())
    }

    fn kv_bucket_check(meta: &TableMeta, tb: &TableBucket) -> Result<()> {
        if !meta.is_pk() {
            return Err(fluss(
                error_codes::NON_PRIMARY_KEY_TABLE_EXCEPTION,
                format!("the primary key table not exists for {tb}"),
            ));
        }
        Ok(())
    }

    pub(super) fn lookup(&self, r: LookupRequest) -> Result<LookupResponse> {
        let meta = self.table(r.table_id);
        let mut out = Vec::new();
        for b in r.buckets_req {
            let res = meta.as_ref().map_err(Clone::clone).and_then(|meta| {
                let (tb, bucket) = self.bucket(meta, b.partition_id, b.bucket_id)?;
                Self::kv_bucket_check(meta, &tb)?;
                if r.insert_if_not_exists == Some(true) {
                    self.insert_missing_keys(meta, &tb, &bucket, &b.keys)?;
                }
                let g = read_bucket(&bucket);
                let kv =
                    g.kv.as_ref()
                        .ok_or_else(|| Error::internal("no KV tablet"))?;
                Ok(b.keys
                    .iter()
                    .map(|k| PbValue {
                        values: kv.get(k).map(|v| v.to_vec()),
                    })
                    .collect::<Vec<_>>())
            });
            let base = PbLookupRespForBucket {
                partition_id: b.partition_id,
                bucket_id: b.bucket_id,
                original_partition_name: b.original_partition_name.clone(),
                ..Default::default()
            };
            out.push(answer(base, res, |a, values| a.values = values));
        }
        Ok(LookupResponse { buckets_resp: out })
    }

    pub(super) fn prefix_lookup(&self, r: PrefixLookupRequest) -> Result<PrefixLookupResponse> {
        let meta = self.table(r.table_id);
        let mut out = Vec::new();
        for b in r.buckets_req {
            let res = meta.as_ref().map_err(Clone::clone).and_then(|meta| {
                let (_tb, bucket) = self.bucket(meta, b.partition_id, b.bucket_id)?;
                if !meta.is_pk() {
                    return Err(fluss(
                        error_codes::NON_PRIMARY_KEY_TABLE_EXCEPTION,
                        format!(
                            "Try to do prefix lookup on a non primary key table: {}",
                            meta.path()
                        ),
                    ));
                }
                let g = read_bucket(&bucket);
                let kv =
                    g.kv.as_ref()
                        .ok_or_else(|| Error::internal("no KV tablet"))?;
                Ok(b.keys
                    .iter()
                    .map(|k| PbValueList {
                        values: kv.prefix(k),
                    })
                    .collect::<Vec<_>>())
            });
            let base = PbPrefixLookupRespForBucket {
                partition_id: b.partition_id,
                bucket_id: b.bucket_id,
                ..Default::default()
            };
            out.push(answer(base, res, |a, lists| a.value_lists = lists));
        }
        Ok(PrefixLookupResponse { buckets_resp: out })
    }

    pub(super) fn limit_scan(&self, r: LimitScanRequest) -> Result<LimitScanResponse> {
        let res = (|| {
            let meta = self.table(r.table_id)?;
            let (_, bucket) = self.bucket(&meta, r.partition_id, r.bucket_id)?;
            let limit = r.limit.max(0) as usize;
            let g = read_bucket(&bucket);
            if let Some(kv) = &g.kv {
                let values = kv.values(limit);
                let refs: Vec<&[u8]> = values.iter().map(|v| v.as_slice()).collect();
                let bytes = riverlet::record::value_batch::encode_value_batch_from_values(&refs);
                Ok((false, bytes))
            } else {
                let hw = g.log.high_watermark();
                let mut offset = g.log.log_start_offset().max(hw - limit as i64);
                let mut bytes = Vec::new();
                while offset < hw {
                    let chunk = g.log.read(offset, i32::MAX as usize, true)?;
                    let (infos, _) = crate::batch::scan(&chunk, false);
                    let Some(last) = infos.last() else { break };
                    offset = last.next_offset;
                    bytes.extend_from_slice(&chunk);
                }
                Ok((true, bytes))
            }
        })();
        Ok(answer(
            LimitScanResponse::default(),
            res,
            |a, (is_log, bytes)| {
                a.is_log_table = Some(is_log);
                a.records = Some(Bytes::from(bytes));
            },
        ))
    }

    pub(super) fn scan_kv(&self, r: ScanKvRequest) -> Result<ScanKvResponse> {
        let res = self.scan_kv_inner(r);
        Ok(res.unwrap_or_else(|e| {
            let mut a = ScanKvResponse::default();
            a.set_error(&e);
            a
        }))
    }

    fn scan_kv_inner(&self, r: ScanKvRequest) -> Result<ScanKvResponse> {
        let invalid = |m: &str| fluss(error_codes::INVALID_SCAN_REQUEST, m.to_string());
        if r.bucket_scan_req.is_some() && r.scanner_id.is_some() {
            return Err(invalid(
                "ScanKvRequest must not set both bucket_scan_req and scanner_id.",
            ));
        }
        let close = r.close_scanner == Some(true);
        if r.bucket_scan_req.is_some() && close {
            return Err(invalid(
                "ScanKvRequest must not set close_scanner together with bucket_scan_req.",
            ));
        }
        if r.bucket_scan_req.is_none() && r.scanner_id.is_none() {
            return Err(invalid(
                "ScanKvRequest must have either bucket_scan_req (new scan) or scanner_id (continuation).",
            ));
        }
        let mut batch_size = 0usize;
        if !close {
            let Some(bs) = r.batch_size_bytes else {
                return Err(invalid(
                    "batch_size_bytes is required for data-fetching scan requests.",
                ));
            };
            if bs <= 0 {
                return Err(invalid("batch_size_bytes must be greater than 0."));
            }
            batch_size = (bs as usize).min(SCANNER_MAX_BATCH);
        }
        let mut sessions = lock(&self.scanners);
        sessions.retain(|_, s| s.last_access.elapsed() < SCANNER_TTL);
        let (id, mut session, log_offset) = if let Some(req) = &r.bucket_scan_req {
            let meta = self.table(req.table_id)?;
            let (tb, bucket) = self.bucket(&meta, req.partition_id, req.bucket_id)?;
            Self::kv_bucket_check(&meta, &tb)?;
            let g = read_bucket(&bucket);
            let kv =
                g.kv.as_ref()
                    .ok_or_else(|| Error::internal("no KV tablet"))?;
            let mut values = kv.snapshot_values();
            if let Some(limit) = req.limit.filter(|l| *l > 0) {
                values.truncate(limit as usize);
            }
            let log_offset = g.log.high_watermark();
            if values.is_empty() {
                return Ok(ScanKvResponse {
                    has_more_results: Some(false),
                    log_offset: Some(log_offset),
                    ..Default::default()
                });
            }
            let n = self.scanner_seq.fetch_add(1, Ordering::Relaxed);
            let mut id = n.to_be_bytes().to_vec();
            id.extend_from_slice(&now_ms().to_be_bytes());
            (
                id,
                ScanSession {
                    bucket: tb,
                    values,
                    pos: 0,
                    call_seq: -1,
                    last_access: Instant::now(),
                },
                Some(log_offset),
            )
        } else {
            let id = r.scanner_id.clone().unwrap_or_default();
            let Some(s) = sessions.remove(&id) else {
                if close {
                    return Ok(ScanKvResponse {
                        scanner_id: Some(id),
                        has_more_results: Some(false),
                        ..Default::default()
                    });
                }
                return Err(fluss(
                    error_codes::UNKNOWN_SCANNER_ID,
                    "Unknown scanner ID. The session may have expired or never existed.",
                ));
            };
            // the bucket may have been dropped since the scan opened
            self.tablets.get(&s.bucket)?;
            (id, s, None)
        };
        if close {
            return Ok(ScanKvResponse {
                scanner_id: Some(id),
                has_more_results: Some(false),
                ..Default::default()
            });
        }
        let Some(seq) = r.call_seq_id else {
            sessions.insert(id.clone(), session);
            return Err(invalid(
                "call_seq_id is required for ScanKV requests to ensure in-order processing and at-least-once semantics.",
            ));
        };
        if seq != session.call_seq + 1 {
            let expected = session.call_seq + 1;
            sessions.insert(id.clone(), session);
            return Err(fluss(
                error_codes::INVALID_SCAN_REQUEST,
                format!("Out-of-order scan request: expected callSeqId={expected} but got {seq}."),
            ));
        }
        // at least one record per response, then up to batch_size bytes
        let mut size = 0usize;
        let start = session.pos;
        let mut end = start;
        while end < session.values.len() && (end == start || size < batch_size) {
            size += 4 + session.values[end].len();
            end += 1;
        }
        let refs: Vec<&[u8]> = session.values[start..end]
            .iter()
            .map(|v| v.as_slice())
            .collect();
        let records = riverlet::record::value_batch::encode_value_batch_from_values(&refs);
        session.pos = end;
        session.call_seq = seq;
        session.last_access = Instant::now();
        let has_more = session.pos < session.values.len();
        if has_more {
            sessions.insert(id.clone(), session);
        }
        Ok(ScanKvResponse {
            error_code: None,
            error_message: None,
            scanner_id: Some(id),
            has_more_results: Some(has_more),
            records: Some(Bytes::from(records)),
            log_offset,
        })
    }
}
