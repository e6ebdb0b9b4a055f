//! Value record batches returned by LimitScan and ScanKv (Fluss `DefaultValueRecordBatch`).
//!
//! Layout (little-endian): Length int32 @0 (= size − 4), Magic int8 @4 (0), RecordCount int32
//! @5, then records from @9, each `Length int32 (bytes after it) | SchemaId int16 | row bytes`.
//! There is no CRC.

use std::fmt;

use super::le;
use crate::{Error, Result};

/// Length (int32).
pub const VALUE_LENGTH_OFFSET: usize = 0;
/// Magic (int8).
pub const VALUE_MAGIC_OFFSET: usize = 4;
/// RecordCount (int32).
pub const VALUE_RECORD_COUNT_OFFSET: usize = 5;
/// Header size; records start here.
pub const VALUE_HEADER_SIZE: usize = 9;
/// Bytes not counted by Length.
pub const VALUE_OVERHEAD: usize = 4;
/// The only value batch magic.
pub const VALUE_MAGIC_V0: u8 = 0;

/// Encodes a value batch from `(schema id, row bytes)` pairs.
pub fn encode_value_batch(records: &[(i16, &[u8])]) -> Vec<u8> {
    let body: usize = records.iter().map(|(_, r)| 6 + r.len()).sum();
    let mut out = Vec::with_capacity(VALUE_HEADER_SIZE + body);
    out.extend_from_slice(&[0; VALUE_HEADER_SIZE]);
    for (schema_id, row) in records {
        out.extend_from_slice(&((2 + row.len()) as i32).to_le_bytes());
        out.extend_from_slice(&schema_id.to_le_bytes());
        out.extend_from_slice(row);
    }
    finish(out, records.len())
}

/// Encodes a value batch from already schema-prefixed values (`int16 schema id | row`, as
/// stored in the KV store and produced by `row::value::encode_value`).
pub fn encode_value_batch_from_values(values: &[&[u8]]) -> Vec<u8> {
    let body: usize = values.iter().map(|v| 4 + v.len()).sum();
    let mut out = Vec::with_capacity(VALUE_HEADER_SIZE + body);
    out.extend_from_slice(&[0; VALUE_HEADER_SIZE]);
    for v in values {
        out.extend_from_slice(&(v.len() as i32).to_le_bytes());
        out.extend_from_slice(v);
    }
    finish(out, values.len())
}

fn finish(mut out: Vec<u8>, count: usize) -> Vec<u8> {
    let length = (out.len() - VALUE_OVERHEAD) as i32;
    le::put(&mut out, VALUE_LENGTH_OFFSET, &length.to_le_bytes());
    le::put(&mut out, VALUE_MAGIC_OFFSET, &[VALUE_MAGIC_V0]);
    le::put(
        &mut out,
        VALUE_RECORD_COUNT_OFFSET,
        &(count as i32).to_le_bytes(),
    );
    out
}

/// One value record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueRecord<'a> {
    /// Schema id of the row.
    pub schema_id: i16,
    /// The row bytes (in the table's KV format).
    pub row: &'a [u8],
    /// `schema id | row` together (the form `row::value::decode_value` takes).
    pub value: &'a [u8],
}

/// A zero-copy view of a value batch; construction checks the header.
#[derive(Clone, Copy)]
pub struct ValueRecordBatch<'a> {
    data: &'a [u8],
}

impl<'a> ValueRecordBatch<'a> {
    /// Views the batch at the start of `data` (extra bytes after it are ignored).
    pub fn new(data: &'a [u8]) -> Result<Self> {
        let length = le::i32_at(data, VALUE_LENGTH_OFFSET)
            .ok_or_else(|| Error::corrupt("value batch shorter than its length field"))?;
        let size = usize::try_from(length)
            .ok()
            .and_then(|l| l.checked_add(VALUE_OVERHEAD))
            .filter(|&s| s >= VALUE_HEADER_SIZE)
            .ok_or_else(|| {
                Error::corrupt(format!("value batch has a bad length field {length}"))
            })?;
        let data = data.get(..size).ok_or_else(|| {
            Error::corrupt(format!(
                "value batch truncated: {size} bytes declared, {} present",
                data.len()
            ))
        })?;
        let batch = ValueRecordBatch { data };
        if batch.magic() != VALUE_MAGIC_V0 {
            return Err(Error::corrupt(format!(
                "unsupported value batch magic {}",
                batch.magic()
            )));
        }
        if batch.record_count() < 0 {
            return Err(Error::corrupt(format!(
                "value batch has a negative record count {}",
                batch.record_count()
            )));
        }
        Ok(batch)
    }

    /// Total size in bytes.
    pub fn size_in_bytes(&self) -> usize {
        self.data.len()
    }

    /// The magic byte.
    pub fn magic(&self) -> u8 {
        le::u8_at(self.data, VALUE_MAGIC_OFFSET).unwrap_or_default()
    }

    /// Number of records (never negative).
    pub fn record_count(&self) -> i32 {
        le::i32_at(self.data, VALUE_RECORD_COUNT_OFFSET).unwrap_or_default()
    }

    /// The records; a malformed record or bytes left after the declared count give Corrupt.
    pub fn records(&self) -> ValueRecordIter<'a> {
        ValueRecordIter {
            data: self.data,
            pos: VALUE_HEADER_SIZE,
            remaining: self.record_count(),
            failed: false,
        }
    }

    /// All records, or the first error.
    pub fn to_vec(&self) -> Result<Vec<ValueRecord<'a>>> {
        self.records().collect()
    }
}

impl fmt::Debug for ValueRecordBatch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValueRecordBatch")
            .field("size", &self.size_in_bytes())
            .field("record_count", &self.record_count())
            .finish()
    }
}

/// Iterator over the records of a [`ValueRecordBatch`].
#[derive(Debug, Clone)]
pub struct ValueRecordIter<'a> {
    data: &'a [u8],
    pos: usize,
    remaining: i32,
    failed: bool,
}

impl<'a> Iterator for ValueRecordIter<'a> {
    type Item = Result<ValueRecord<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let start = self.pos;
        if self.remaining <= 0 {
            if start < self.data.len() {
                self.failed = true;
                return Some(Err(Error::corrupt(format!(
                    "value batch has {} bytes after its declared records",
                    self.data.len() - start
                ))));
            }
            return None;
        }
        let len = le::i32_at(self.data, start);
        let value = len
            .and_then(|l| usize::try_from(l).ok())
            .filter(|&l| l >= 2)
            .and_then(|l| self.data.get(start + 4..(start + 4).checked_add(l)?));
        let Some(value) = value else {
            self.failed = true;
            return Some(Err(Error::corrupt(format!(
                "value record at byte {start} is truncated or has a bad length {len:?}"
            ))));
        };
        self.pos = start + 4 + value.len();
        self.remaining -= 1;
        Some(Ok(ValueRecord {
            schema_id: le::i16_at(value, 0).unwrap_or_default(),
            row: value.get(2..).unwrap_or_default(),
            value,
        }))
    }
}
