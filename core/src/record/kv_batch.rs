//! KV record batches, the payload of PutKv (Fluss `DefaultKvRecordBatch` / `DefaultKvRecord`).
//!
//! Header (28 bytes, little-endian): Length int32 @0 (= size − 4), Magic int8 @4, CRC-32C
//! uint32 @5 over `[9, end)`, SchemaId int16 @9, Attributes int8 @11 (unused, 0),
//! WriterId int64 @12, BatchSequence int32 @20, RecordCount int32 @24, records @28.
//!
//! Each record: Length int32 (bytes after this field) | KeyLength unsigned varint | key |
//! row bytes. No row bytes means the record deletes the key.

use std::fmt;

use super::le;
use crate::{Error, Result};

/// Length (int32).
pub const KV_LENGTH_OFFSET: usize = 0;
/// Magic (int8).
pub const KV_MAGIC_OFFSET: usize = 4;
/// CRC-32C (uint32) of `[KV_SCHEMA_ID_OFFSET, end)`.
pub const KV_CRC_OFFSET: usize = 5;
/// SchemaId (int16).
pub const KV_SCHEMA_ID_OFFSET: usize = 9;
/// Attributes (int8, unused).
pub const KV_ATTRIBUTES_OFFSET: usize = 11;
/// WriterId (int64).
pub const KV_WRITER_ID_OFFSET: usize = 12;
/// BatchSequence (int32).
pub const KV_BATCH_SEQUENCE_OFFSET: usize = 20;
/// RecordCount (int32).
pub const KV_RECORD_COUNT_OFFSET: usize = 24;
/// Header size; records start here.
pub const KV_HEADER_SIZE: usize = 28;
/// Bytes not counted by Length.
pub const KV_OVERHEAD: usize = 4;
/// The only KV batch magic.
pub const KV_MAGIC_V0: u8 = 0;

/// Builds one KV record batch in memory.
#[derive(Debug, Clone)]
pub struct KvBatchBuilder {
    schema_id: i16,
    buf: Vec<u8>,
    count: i32,
}

impl KvBatchBuilder {
    /// An empty batch for rows of `schema_id`.
    pub fn new(schema_id: i16) -> Self {
        KvBatchBuilder {
            schema_id,
            buf: vec![0u8; KV_HEADER_SIZE],
            count: 0,
        }
    }

    /// Bytes one record with this key and value takes (including its length field).
    pub fn record_size(key: &[u8], value: Option<&[u8]>) -> usize {
        let key_len = u32::try_from(key.len()).unwrap_or(u32::MAX);
        4 + le::unsigned_varint_len(key_len) + key.len() + value.map_or(0, <[u8]>::len)
    }

    /// Appends an upsert (`Some(row bytes)`) or a delete (`None`) of `key`.
    /// An empty `Some(&[])` row is rejected: on the wire it would read back as a delete.
    pub fn append(&mut self, key: &[u8], value: Option<&[u8]>) -> Result<()> {
        if value.is_some_and(<[u8]>::is_empty) {
            return Err(Error::invalid(
                "empty KV value row (it would be read as a delete)",
            ));
        }
        let key_len = u32::try_from(key.len()).map_err(|_| Error::invalid("KV key too large"))?;
        let body = Self::record_size(key, value) - 4;
        let body_i32 = i32::try_from(body).map_err(|_| Error::invalid("KV record too large"))?;
        if self.count == i32::MAX
            || self
                .buf
                .len()
                .checked_add(body + 4)
                .is_none_or(|t| t - KV_OVERHEAD > i32::MAX as usize)
        {
            return Err(Error::invalid("KV batch too large"));
        }
        self.buf.extend_from_slice(&body_i32.to_le_bytes());
        le::put_unsigned_varint(&mut self.buf, key_len);
        self.buf.extend_from_slice(key);
        if let Some(v) = value {
            self.buf.extend_from_slice(v);
        }
        self.count += 1;
        Ok(())
    }

    /// Records appended so far.
    pub fn record_count(&self) -> i32 {
        self.count
    }

    /// Whether no record was appended.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Current batch size in bytes, header included.
    pub fn size_in_bytes(&self) -> usize {
        self.buf.len()
    }

    /// The finished batch bytes with the given writer state (call again to rebuild with a new
    /// writer id / sequence on retry).
    pub fn build(&self, writer_id: i64, batch_sequence: i32) -> Vec<u8> {
        let mut out = self.buf.clone();
        let length = (out.len() - KV_OVERHEAD) as i32;
        le::put(&mut out, KV_LENGTH_OFFSET, &length.to_le_bytes());
        le::put(&mut out, KV_MAGIC_OFFSET, &[KV_MAGIC_V0]);
        le::put(&mut out, KV_SCHEMA_ID_OFFSET, &self.schema_id.to_le_bytes());
        le::put(&mut out, KV_ATTRIBUTES_OFFSET, &[0]);
        le::put(&mut out, KV_WRITER_ID_OFFSET, &writer_id.to_le_bytes());
        le::put(
            &mut out,
            KV_BATCH_SEQUENCE_OFFSET,
            &batch_sequence.to_le_bytes(),
        );
        le::put(&mut out, KV_RECORD_COUNT_OFFSET, &self.count.to_le_bytes());
        let crc = crc32c::crc32c(out.get(KV_SCHEMA_ID_OFFSET..).unwrap_or_default());
        le::put(&mut out, KV_CRC_OFFSET, &crc.to_le_bytes());
        out
    }
}

/// Overwrites WriterId and BatchSequence of a built KV batch in place and recomputes the CRC
/// (both lie inside it), so a batch encoded once can be numbered when it is sent.
pub fn set_kv_writer_state(batch: &mut [u8], writer_id: i64, batch_sequence: i32) -> Result<()> {
    if batch.len() < KV_HEADER_SIZE {
        return Err(Error::corrupt(format!(
            "KV batch of {} bytes is shorter than its {KV_HEADER_SIZE}-byte header",
            batch.len()
        )));
    }
    le::put(batch, KV_WRITER_ID_OFFSET, &writer_id.to_le_bytes());
    le::put(
        batch,
        KV_BATCH_SEQUENCE_OFFSET,
        &batch_sequence.to_le_bytes(),
    );
    let crc = crc32c::crc32c(batch.get(KV_SCHEMA_ID_OFFSET..).unwrap_or_default());
    le::put(batch, KV_CRC_OFFSET, &crc.to_le_bytes());
    Ok(())
}

/// One KV record: a key and its row bytes (`None` = delete).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvRecord<'a> {
    /// The encoded primary key.
    pub key: &'a [u8],
    /// The row bytes, or `None` for a delete.
    pub value: Option<&'a [u8]>,
}

impl KvRecord<'_> {
    /// Whether this record deletes its key.
    pub fn is_delete(&self) -> bool {
        self.value.is_none()
    }
}

/// A zero-copy view of one KV record batch; construction checks the header.
#[derive(Clone, Copy)]
pub struct KvRecordBatch<'a> {
    data: &'a [u8],
}

impl<'a> KvRecordBatch<'a> {
    /// Views the batch at the start of `data` (extra bytes after it are ignored).
    pub fn new(data: &'a [u8]) -> Result<Self> {
        let length = le::i32_at(data, KV_LENGTH_OFFSET)
            .ok_or_else(|| Error::corrupt("KV batch shorter than its length field"))?;
        let size = usize::try_from(length)
            .ok()
            .and_then(|l| l.checked_add(KV_OVERHEAD))
            .filter(|&s| s >= KV_HEADER_SIZE)
            .ok_or_else(|| Error::corrupt(format!("KV batch has a bad length field {length}")))?;
        let data = data.get(..size).ok_or_else(|| {
            Error::corrupt(format!(
                "KV batch truncated: {size} bytes declared, {} present",
                data.len()
            ))
        })?;
        let batch = KvRecordBatch { data };
        if batch.magic() != KV_MAGIC_V0 {
            return Err(Error::corrupt(format!(
                "unsupported KV batch magic {}",
                batch.magic()
            )));
        }
        if batch.record_count() < 0 {
            return Err(Error::corrupt(format!(
                "KV batch has a negative record count {}",
                batch.record_count()
            )));
        }
        Ok(batch)
    }

    /// The whole batch's bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.data
    }

    /// Total size in bytes.
    pub fn size_in_bytes(&self) -> usize {
        self.data.len()
    }

    /// The magic byte.
    pub fn magic(&self) -> u8 {
        le::u8_at(self.data, KV_MAGIC_OFFSET).unwrap_or_default()
    }

    /// The stored CRC-32C.
    pub fn crc(&self) -> u32 {
        le::u32_at(self.data, KV_CRC_OFFSET).unwrap_or_default()
    }

    /// The CRC-32C computed over `[9, end)`.
    pub fn compute_crc(&self) -> u32 {
        crc32c::crc32c(self.data.get(KV_SCHEMA_ID_OFFSET..).unwrap_or_default())
    }

    /// Whether the CRC matches.
    pub fn is_valid(&self) -> bool {
        self.crc() == self.compute_crc()
    }

    /// [`ErrorKind::Corrupt`](crate::ErrorKind::Corrupt) when the CRC does not match.
    pub fn ensure_valid(&self) -> Result<()> {
        let (stored, computed) = (self.crc(), self.compute_crc());
        if stored == computed {
            Ok(())
        } else {
            Err(Error::corrupt(format!(
                "KV batch is corrupt (stored crc {stored:#010x}, computed {computed:#010x})"
            )))
        }
    }

    /// The schema id of the rows.
    pub fn schema_id(&self) -> i16 {
        le::i16_at(self.data, KV_SCHEMA_ID_OFFSET).unwrap_or_default()
    }

    /// The attributes byte (unused by Fluss, 0).
    pub fn attributes(&self) -> u8 {
        le::u8_at(self.data, KV_ATTRIBUTES_OFFSET).unwrap_or_default()
    }

    /// Writer id (-1 = none).
    pub fn writer_id(&self) -> i64 {
        le::i64_at(self.data, KV_WRITER_ID_OFFSET).unwrap_or_default()
    }

    /// Batch sequence (-1 = none).
    pub fn batch_sequence(&self) -> i32 {
        le::i32_at(self.data, KV_BATCH_SEQUENCE_OFFSET).unwrap_or_default()
    }

    /// Number of records (never negative).
    pub fn record_count(&self) -> i32 {
        le::i32_at(self.data, KV_RECORD_COUNT_OFFSET).unwrap_or_default()
    }

    /// The records; each item fails with Corrupt on a malformed record, and bytes left over
    /// after the declared count are reported as an error too.
    pub fn records(&self) -> KvRecordIter<'a> {
        KvRecordIter {
            data: self.data,
            pos: KV_HEADER_SIZE,
            remaining: self.record_count(),
            failed: false,
        }
    }

    /// Checks the CRC and decodes every record.
    pub fn validate(&self) -> Result<()> {
        self.ensure_valid()?;
        self.records().try_for_each(|r| r.map(|_| ()))
    }
}

impl fmt::Debug for KvRecordBatch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KvRecordBatch")
            .field("size", &self.size_in_bytes())
            .field("schema_id", &self.schema_id())
            .field("writer_id", &self.writer_id())
            .field("batch_sequence", &self.batch_sequence())
            .field("record_count", &self.record_count())
            .field("crc", &self.crc())
            .finish()
    }
}

/// Iterator over the records of a [`KvRecordBatch`].
#[derive(Debug, Clone)]
pub struct KvRecordIter<'a> {
    data: &'a [u8],
    pos: usize,
    remaining: i32,
    failed: bool,
}

impl<'a> KvRecordIter<'a> {
    fn fail(&mut self, msg: String) -> Option<Result<KvRecord<'a>>> {
        self.failed = true;
        Some(Err(Error::corrupt(msg)))
    }
}

impl<'a> Iterator for KvRecordIter<'a> {
    type Item = Result<KvRecord<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if self.remaining <= 0 {
            if self.pos < self.data.len() {
                let extra = self.data.len() - self.pos;
                return self.fail(format!(
                    "KV batch has {extra} bytes after its declared records"
                ));
            }
            return None;
        }
        let start = self.pos;
        let Some(len) = le::i32_at(self.data, start) else {
            return self.fail(format!("KV record at byte {start} truncated"));
        };
        let body_start = start + 4;
        let body = usize::try_from(len)
            .ok()
            .and_then(|l| body_start.checked_add(l))
            .and_then(|end| self.data.get(body_start..end));
        let Some(body) = body else {
            return self.fail(format!("KV record at byte {start} has a bad length {len}"));
        };
        let Some((key_len, used)) = le::unsigned_varint_at(body, 0) else {
            return self.fail(format!("KV record at byte {start} has a bad key length"));
        };
        let key = used
            .checked_add(key_len as usize)
            .and_then(|end| body.get(used..end).map(|k| (k, end)));
        let Some((key, key_end)) = key else {
            return self.fail(format!(
                "KV record at byte {start}: key of {key_len} bytes exceeds the record"
            ));
        };
        let row = body.get(key_end..).unwrap_or_default();
        self.pos = body_start + body.len();
        self.remaining -= 1;
        Some(Ok(KvRecord {
            key,
            value: (!row.is_empty()).then_some(row),
        }))
    }
}
