//! Validation of the record batches a client sends (ProduceLog and PutKv) before anything is
//! stored: the server trusts no header field, no schema id and no payload it did not check.
//!
//! Rejections carry Fluss's error codes as Fluss's tablet server answers them:
//! - CORRUPT_RECORD_EXCEPTION: a batch that does not parse, fails its CRC, whose record count and
//!   LastOffsetDelta disagree, or whose payload does not decode against the table's schema;
//! - SCHEMA_NOT_EXIST: a schema id the table does not have.
//!
//! A batch larger than `log.segment.file-size` is accepted, as Fluss 0.9.1's tablet server
//! takes it (no check there compares a batch with the segment size; `LogTablet` rolls and the
//! batch gets a segment of its own): the log rolls the same way. The only size bound is the
//! request frame (`netty.server.max-request-size`), enforced where frames are read (`net.rs`).

use riverlet::error::codes as error_codes;
use riverlet::metadata::evolution::widen_row;
use riverlet::metadata::table::LogFormat;
use riverlet::record::kv_batch::KvRecordBatch;
use riverlet::record::log_batch::{LogBatchIter, LogRecordBatch};
use riverlet::{Error, Result};

use crate::batch::BatchInfo;
use crate::catalog::TableMeta;

fn corrupt(msg: String) -> Error {
    Error::from_fluss(error_codes::CORRUPT_RECORD_EXCEPTION, msg)
}

fn check_schema_id(meta: &TableMeta, schema_id: i16) -> Result<()> {
    // Schema ids start at 1; the server keeps every table's schemas up to `entry.schema_id`.
    let latest = meta.entry.schema_id;
    if schema_id < 1 || i32::from(schema_id) > latest {
        return Err(Error::from_fluss(
            error_codes::SCHEMA_NOT_EXIST,
            format!(
                "Invalid schema id: {schema_id} for table {}, latest schema id: {latest}",
                meta.path()
            ),
        ));
    }
    Ok(())
}

/// Checks every batch of a ProduceLog bucket request for a log table: complete and CRC-valid
/// batches with nothing trailing, `LastOffsetDelta == record count - 1` (0 for an empty batch),
/// a schema id of the table and a payload that decodes, row by row,
/// against the table's schema with exactly the declared number of records. This is the one
/// structure check of produced batches: the log appends what it returns without parsing again.
/// Returns the header facts of the batches, in order.
pub fn log_records(meta: &TableMeta, records: &[u8]) -> Result<Vec<BatchInfo>> {
    let mut pos = 0usize;
    let mut infos = Vec::new();
    for (i, item) in LogBatchIter::new(records).enumerate() {
        let b = item.map_err(|e| corrupt(format!("log batch {i}: {}", e.message())))?;
        log_batch(meta, &b, i)?;
        pos += b.size_in_bytes();
        infos.push(crate::batch::info(&b));
    }
    if pos != records.len() {
        return Err(corrupt(format!(
            "{} bytes after the last complete log batch (at byte {pos}) are not a batch",
            records.len() - pos
        )));
    }
    Ok(infos)
}

fn log_batch(meta: &TableMeta, b: &LogRecordBatch<'_>, i: usize) -> Result<()> {
    if !b.is_valid() {
        return Err(corrupt(format!(
            "log batch {i} is corrupt (stored crc = {}, computed crc = {})",
            b.crc(),
            b.compute_crc()
        )));
    }
    let count = b.record_count();
    let delta = b.last_offset_delta();
    let expected = count.saturating_sub(1).max(0);
    if delta != expected {
        return Err(corrupt(format!(
            "log batch {i} declares {count} records but LastOffsetDelta {delta} \
             (expected {expected})"
        )));
    }
    check_schema_id(meta, b.schema_id())?;
    // The fetch path skips batches by these statistics: keep only ones that decode.
    let stats = b.statistics();
    if !stats.is_empty() {
        let types = meta.types_of(i32::from(b.schema_id()))?;
        riverlet::stats::BatchStatistics::decode(stats, types).map_err(|e| {
            corrupt(format!(
                "log batch {i}: its statistics do not decode: {}",
                e.message()
            ))
        })?;
    }
    if count == 0 {
        return Ok(());
    }
    match meta.log_format {
        LogFormat::Arrow => {
            let arrow = meta.arrow_of(i32::from(b.schema_id()))?;
            let (change_types, rows) = b.arrow_records(arrow).map_err(|e| {
                corrupt(format!(
                    "log batch {i}: the Arrow payload does not decode with the schema of {}: {}",
                    meta.path(),
                    e.message()
                ))
            })?;
            if let Some(ct) = change_types {
                if ct.len() != count as usize {
                    return Err(corrupt(format!(
                        "log batch {i} has {} change types for {count} records",
                        ct.len()
                    )));
                }
            }
            // Arrow itself rejects nulls in a NOT NULL column while decoding.
            debug_assert_eq!(rows.num_rows(), count as usize);
            Ok(())
        }
        LogFormat::Indexed | LogFormat::Compacted => {
            let mut n = 0i32;
            for rec in b.row_records() {
                let rec = rec.map_err(|e| corrupt(format!("log batch {i}: {}", e.message())))?;
                decode_log_row(meta, b.schema_id(), rec.row).map_err(|e| {
                    corrupt(format!(
                        "log batch {i}, record {n}: the row does not decode with the schema of {}: {}",
                        meta.path(),
                        e.message()
                    ))
                })?;
                n += 1;
            }
            if n != count {
                return Err(corrupt(format!(
                    "log batch {i} declares {count} records but holds {n}"
                )));
            }
            Ok(())
        }
    }
}

fn decode_log_row(
    meta: &TableMeta,
    schema_id: i16,
    row: &[u8],
) -> Result<Vec<riverlet::row::Datum>> {
    let types = meta.types_of(i32::from(schema_id))?;
    if meta.log_format == LogFormat::Indexed {
        riverlet::row::indexed::decode_indexed_row(types, row)
    } else {
        riverlet::row::compacted::decode_compacted_row(types, row)
    }
}

fn decode_kv_row(
    meta: &TableMeta,
    schema_id: i16,
    row: &[u8],
) -> Result<Vec<riverlet::row::Datum>> {
    let types = meta.types_of(i32::from(schema_id))?;
    if meta.kv_indexed {
        riverlet::row::indexed::decode_indexed_row(types, row)
    } else {
        riverlet::row::compacted::decode_compacted_row(types, row)
    }
}

/// Checks a PutKv bucket request's batch for a primary-key table: a CRC-valid batch of the
/// declared size with nothing trailing, a schema id of the table, and every
/// record decodable: a non-empty key and, unless it is a delete, a row of the table's
/// schema. Returns the decoded rows in record order (None for a delete), so that applying the
/// batch does not decode them a second time.
pub fn kv_records(
    meta: &TableMeta,
    records: &[u8],
) -> Result<Vec<Option<Vec<riverlet::row::Datum>>>> {
    let b = KvRecordBatch::new(records).map_err(|e| corrupt(e.message().to_string()))?;
    if b.size_in_bytes() != records.len() {
        return Err(corrupt(format!(
            "KV batch declares {} bytes but the request carries {}",
            b.size_in_bytes(),
            records.len()
        )));
    }
    if !b.is_valid() {
        return Err(corrupt(format!(
            "KV batch is corrupt (stored crc = {}, computed crc = {})",
            b.crc(),
            b.compute_crc()
        )));
    }
    if b.record_count() < 0 {
        return Err(corrupt(format!(
            "KV batch has a negative record count {}",
            b.record_count()
        )));
    }
    check_schema_id(meta, b.schema_id())?;
    let mut rows = Vec::with_capacity(usize::try_from(b.record_count()).unwrap_or(0).min(1 << 20));
    for (n, rec) in b.records().enumerate() {
        let rec = rec.map_err(|e| corrupt(format!("KV record {n}: {}", e.message())))?;
        if rec.key.is_empty() {
            return Err(corrupt(format!("KV record {n} has an empty key")));
        }
        let row = match rec.value {
            // A writer that opened the table before an ADD COLUMN writes an older schema; its
            // rows are widened to the latest one (the new columns null), as they will be stored.
            Some(v) => Some(
                decode_kv_row(meta, b.schema_id(), v)
                    .map(|r| widen_row(r, meta.types.len()))
                    .map_err(|e| {
                        corrupt(format!(
                            "KV record {n}: the row does not decode with the schema of {}: {}",
                            meta.path(),
                            e.message()
                        ))
                    })?,
            ),
            None => None,
        };
        rows.push(row);
    }
    Ok(rows)
}
