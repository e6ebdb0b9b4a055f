//! Record payloads of INDEXED and COMPACTED log batches (Fluss `IndexedLogRecord` /
//! `CompactedLogRecord`). Both use the same framing per record:
//! `Length int32 (bytes after it) | Attributes int8 (the ChangeType byte) | row bytes`,
//! where the row is an IndexedRow or a CompactedRow (encoded by `row::*`).

use super::change_type::ChangeType;
use super::le;
use super::log_batch::{encode_log_batch, BatchFormat, LogBatchHeader, LogRecordBatch};
use crate::{Error, Result};

/// One row-format log record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowLogRecord<'a> {
    /// The record's change type.
    pub change_type: ChangeType,
    /// The IndexedRow / CompactedRow bytes.
    pub row: &'a [u8],
}

/// Encodes row-format log records (the payload of an INDEXED / COMPACTED log batch).
pub fn encode_row_log_records(records: &[(ChangeType, &[u8])]) -> Result<Vec<u8>> {
    let total: usize = records.iter().map(|(_, r)| 5 + r.len()).sum();
    let mut out = Vec::with_capacity(total);
    for (ct, row) in records {
        let len =
            i32::try_from(row.len() + 1).map_err(|_| Error::invalid("log record row too large"))?;
        out.extend_from_slice(&len.to_le_bytes());
        out.push(ct.to_byte());
        out.extend_from_slice(row);
    }
    Ok(out)
}

/// Builds a magic-0 INDEXED / COMPACTED log batch. `append_only` sets the attribute bit (Fluss
/// sets it for log tables; every change type must then be [`ChangeType::AppendOnly`]).
pub fn build_row_log_batch(
    schema_id: i16,
    records: &[(ChangeType, &[u8])],
    append_only: bool,
    writer_id: i64,
    batch_sequence: i32,
) -> Result<Vec<u8>> {
    if append_only && records.iter().any(|(c, _)| *c != ChangeType::AppendOnly) {
        return Err(Error::invalid(
            "an append-only log batch can only hold +A records",
        ));
    }
    let count = i32::try_from(records.len())
        .map_err(|_| Error::invalid("too many records for one log batch"))?;
    let mut header = LogBatchHeader::new(schema_id, count, append_only);
    header.writer_id = writer_id;
    header.batch_sequence = batch_sequence;
    encode_log_batch(
        BatchFormat::V0,
        &header,
        &[],
        &encode_row_log_records(records)?,
    )
}

/// Iterator over the records of an INDEXED / COMPACTED log batch payload.
#[derive(Debug, Clone)]
pub struct RowLogRecordIter<'a> {
    data: &'a [u8],
    pos: usize,
    remaining: i32,
    failed: bool,
}

impl<'a> RowLogRecordIter<'a> {
    /// Iterates `count` records in `payload`.
    pub fn new(payload: &'a [u8], count: i32) -> Self {
        RowLogRecordIter {
            data: payload,
            pos: 0,
            remaining: count,
            failed: false,
        }
    }
}

impl<'a> Iterator for RowLogRecordIter<'a> {
    type Item = Result<RowLogRecord<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.remaining <= 0 {
            return None;
        }
        let start = self.pos;
        let body = le::i32_at(self.data, start)
            .and_then(|l| usize::try_from(l).ok())
            .filter(|&l| l >= 1)
            .and_then(|l| self.data.get(start + 4..(start + 4).checked_add(l)?));
        let Some(body) = body else {
            self.failed = true;
            return Some(Err(Error::corrupt(format!(
                "log record at payload byte {start} is truncated or has a bad length"
            ))));
        };
        let change_type = match ChangeType::from_byte(body.first().copied().unwrap_or(u8::MAX)) {
            Ok(c) => c,
            Err(e) => {
                self.failed = true;
                return Some(Err(e));
            }
        };
        self.pos = start + 4 + body.len();
        self.remaining -= 1;
        Some(Ok(RowLogRecord {
            change_type,
            row: body.get(1..).unwrap_or_default(),
        }))
    }
}

impl<'a> LogRecordBatch<'a> {
    /// The records of an INDEXED / COMPACTED log batch (the row bytes still encoded).
    pub fn row_records(&self) -> RowLogRecordIter<'a> {
        RowLogRecordIter::new(self.records(), self.record_count())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_log_batch_round_trip() {
        // Framing from CompactedLogRecord.writeTo: int32 length (= 1 + row), change type byte, row.
        let recs: [(ChangeType, &[u8]); 2] = [
            (ChangeType::Insert, &[0x00, 0x0A]),
            (ChangeType::Delete, &[0x00, 0x0B, 0x01]),
        ];
        let payload = encode_row_log_records(&recs).unwrap();
        assert_eq!(
            payload,
            [3, 0, 0, 0, 1, 0x00, 0x0A, 4, 0, 0, 0, 4, 0x00, 0x0B, 0x01]
        );
        let bytes = build_row_log_batch(4, &recs, false, 9, 1).unwrap();
        let view = LogRecordBatch::new(&bytes).unwrap();
        view.ensure_valid().unwrap();
        assert!(!view.is_append_only());
        assert_eq!(view.record_count(), 2);
        let got: Vec<_> = view.row_records().map(|r| r.unwrap()).collect();
        assert_eq!(
            got[0],
            RowLogRecord {
                change_type: ChangeType::Insert,
                row: &[0x00, 0x0A]
            }
        );
        assert_eq!(got[1].change_type, ChangeType::Delete);
        assert!(build_row_log_batch(4, &recs, true, -1, -1).is_err());

        let plain =
            build_row_log_batch(4, &[(ChangeType::AppendOnly, b"r")], true, -1, -1).unwrap();
        assert!(LogRecordBatch::new(&plain).unwrap().is_append_only());

        // Truncated / garbage payloads error without panicking.
        for cut in 0..payload.len() {
            let n = RowLogRecordIter::new(&payload[..cut], 2)
                .filter(|r| r.is_err())
                .count();
            assert!(n <= 1);
        }
        let mut bad = payload.clone();
        bad[4] = 7;
        assert!(RowLogRecordIter::new(&bad, 2).next().unwrap().is_err());
    }
}
