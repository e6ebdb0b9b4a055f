//! Fluss log record batches (`DefaultLogRecordBatch` / `LogRecordBatchFormat`).
//!
//! Every batch starts with BaseOffset (int64 @0), Length (int32 @8, = batch size − 12) and
//! Magic (int8 @12); the rest of the header depends on the format:
//!
//! | field            | V0 | V1 (0.7–0.9.x) | V1 (1.0) | V2 (1.0) |
//! |------------------|----|----------------|----------|----------|
//! | CommitTimestamp  | 13 | 13             | 13       | 13       |
//! | LeaderEpoch      | –  | 21             | –        | 21       |
//! | CRC (uint32)     | 21 | 25             | 21       | 25       |
//! | SchemaId (int16) | 25 | 29             | 25       | 29       |
//! | Attributes       | 27 | 31             | 27       | 31       |
//! | LastOffsetDelta  | 28 | 32             | 28       | 32       |
//! | WriterId (int64) | 32 | 36             | 32       | 36       |
//! | BatchSequence    | 40 | 44             | 40       | 44       |
//! | RecordCount      | 44 | 48             | 44       | 48       |
//! | StatisticsLength | –  | –              | 48       | 52       |
//! | header size      | 48 | 52             | 52       | 56       |
//!
//! All fields are little-endian. The CRC-32C covers `[SchemaId offset, end of batch)`, so the
//! server-assigned BaseOffset, CommitTimestamp and LeaderEpoch can be patched in place without
//! recomputing it. The payload is `[statistics (StatisticsLength bytes, V1.0/V2)]` then, for
//! ARROW changelog batches (append-only attribute bit clear), one change-type byte per record,
//! then the Arrow IPC RecordBatch message.
//!
//! **Magic 1 is ambiguous**: Fluss 0.7–0.9.x defined it with a leader epoch and Fluss 1.0
//! redefined it with a statistics length. [`LogRecordBatch::new`] tells them apart by their CRC:
//! the 1.0 layout stores the CRC of `[25, end)` at 21, the 0.9 layout stores the CRC of
//! `[29, end)` at 25, and only one of them matches a real batch. If neither matches (a corrupt
//! batch) the 1.0 layout is assumed when its statistics length is in range, else the 0.9 one;
//! [`LogRecordBatch::is_valid`] is then false either way. Callers that know the server line can
//! skip detection with [`LogRecordBatch::with_format`]. Clients of both lines write V0.

use std::fmt;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use super::arrow_payload::{self, ArrowCompression};
use super::batch_memory::BatchMemory;
use super::change_type::ChangeType;
use super::le;
use crate::{Error, Result};

/// Offset of BaseOffset (int64), common to all formats.
pub const BASE_OFFSET_OFFSET: usize = 0;
/// Offset of Length (int32: batch size minus [`LOG_OVERHEAD`]), common to all formats.
pub const LENGTH_OFFSET: usize = 8;
/// Offset of Magic (int8), common to all formats.
pub const MAGIC_OFFSET: usize = 12;
/// Offset of CommitTimestamp (int64), common to all formats.
pub const COMMIT_TIMESTAMP_OFFSET: usize = 13;
/// Bytes before the part counted by Length (BaseOffset + Length).
pub const LOG_OVERHEAD: usize = 12;
/// Magic 0 (Fluss ≥ 0.1; what clients write).
pub const LOG_MAGIC_V0: u8 = 0;
/// Magic 1 (0.7–0.9.x: with leader epoch; 1.0: with statistics).
pub const LOG_MAGIC_V1: u8 = 1;
/// Magic 2 (Fluss 1.0: leader epoch and statistics).
pub const LOG_MAGIC_V2: u8 = 2;
/// Writer id meaning "not idempotent".
pub const NO_WRITER_ID: i64 = -1;
/// Batch sequence meaning "none".
pub const NO_BATCH_SEQUENCE: i32 = -1;
/// Leader epoch meaning "unknown / not carried by this format".
pub const NO_LEADER_EPOCH: i32 = -1;
/// Attributes bit 0: the batch is append-only (no change-type vector).
pub const APPEND_ONLY_FLAG_MASK: u8 = 0x01;
/// The smallest possible batch (the V0 header).
pub const MIN_BATCH_SIZE: usize = v0::HEADER_SIZE;

/// Field offsets of magic 0 (48-byte header).
pub mod v0 {
    /// CRC-32C (uint32) of `[SCHEMA_ID_OFFSET, end)`.
    pub const CRC_OFFSET: usize = 21;
    /// SchemaId (int16).
    pub const SCHEMA_ID_OFFSET: usize = 25;
    /// Attributes (int8).
    pub const ATTRIBUTES_OFFSET: usize = 27;
    /// LastOffsetDelta (int32).
    pub const LAST_OFFSET_DELTA_OFFSET: usize = 28;
    /// WriterId (int64).
    pub const WRITER_ID_OFFSET: usize = 32;
    /// BatchSequence (int32).
    pub const BATCH_SEQUENCE_OFFSET: usize = 40;
    /// RecordCount (int32).
    pub const RECORD_COUNT_OFFSET: usize = 44;
    /// Header size; records start here.
    pub const HEADER_SIZE: usize = 48;
}

/// Field offsets of magic 1 as defined by Fluss 0.7–0.9.x (52-byte header, leader epoch).
pub mod v1_leader_epoch {
    /// LeaderEpoch (int32).
    pub const LEADER_EPOCH_OFFSET: usize = 21;
    /// CRC-32C (uint32) of `[SCHEMA_ID_OFFSET, end)`.
    pub const CRC_OFFSET: usize = 25;
    /// SchemaId (int16).
    pub const SCHEMA_ID_OFFSET: usize = 29;
    /// Attributes (int8).
    pub const ATTRIBUTES_OFFSET: usize = 31;
    /// LastOffsetDelta (int32).
    pub const LAST_OFFSET_DELTA_OFFSET: usize = 32;
    /// WriterId (int64).
    pub const WRITER_ID_OFFSET: usize = 36;
    /// BatchSequence (int32).
    pub const BATCH_SEQUENCE_OFFSET: usize = 44;
    /// RecordCount (int32).
    pub const RECORD_COUNT_OFFSET: usize = 48;
    /// Header size; records start here.
    pub const HEADER_SIZE: usize = 52;
}

/// Field offsets of magic 1 as defined by Fluss 1.0 (52-byte header, statistics length).
pub mod v1_statistics {
    /// CRC-32C (uint32) of `[SCHEMA_ID_OFFSET, end)`.
    pub const CRC_OFFSET: usize = 21;
    /// SchemaId (int16).
    pub const SCHEMA_ID_OFFSET: usize = 25;
    /// Attributes (int8).
    pub const ATTRIBUTES_OFFSET: usize = 27;
    /// LastOffsetDelta (int32).
    pub const LAST_OFFSET_DELTA_OFFSET: usize = 28;
    /// WriterId (int64).
    pub const WRITER_ID_OFFSET: usize = 32;
    /// BatchSequence (int32).
    pub const BATCH_SEQUENCE_OFFSET: usize = 40;
    /// RecordCount (int32).
    pub const RECORD_COUNT_OFFSET: usize = 44;
    /// StatisticsLength (int32); statistics follow the fixed header.
    pub const STATISTICS_LENGTH_OFFSET: usize = 48;
    /// Fixed header size; statistics then records start here.
    pub const HEADER_SIZE: usize = 52;
}

/// Field offsets of magic 2 (Fluss 1.0, 56-byte header).
pub mod v2 {
    /// LeaderEpoch (int32).
    pub const LEADER_EPOCH_OFFSET: usize = 21;
    /// CRC-32C (uint32) of `[SCHEMA_ID_OFFSET, end)`.
    pub const CRC_OFFSET: usize = 25;
    /// SchemaId (int16).
    pub const SCHEMA_ID_OFFSET: usize = 29;
    /// Attributes (int8).
    pub const ATTRIBUTES_OFFSET: usize = 31;
    /// LastOffsetDelta (int32).
    pub const LAST_OFFSET_DELTA_OFFSET: usize = 32;
    /// WriterId (int64).
    pub const WRITER_ID_OFFSET: usize = 36;
    /// BatchSequence (int32).
    pub const BATCH_SEQUENCE_OFFSET: usize = 44;
    /// RecordCount (int32).
    pub const RECORD_COUNT_OFFSET: usize = 48;
    /// StatisticsLength (int32); statistics follow the fixed header.
    pub const STATISTICS_LENGTH_OFFSET: usize = 52;
    /// Fixed header size; statistics then records start here.
    pub const HEADER_SIZE: usize = 56;
}

/// The header layout of one batch format, as offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchLayout {
    /// The magic byte.
    pub magic: u8,
    /// LeaderEpoch offset, when the format has one.
    pub leader_epoch: Option<usize>,
    /// CRC offset.
    pub crc: usize,
    /// SchemaId offset (also where the CRC range starts).
    pub schema_id: usize,
    /// Attributes offset.
    pub attributes: usize,
    /// LastOffsetDelta offset.
    pub last_offset_delta: usize,
    /// WriterId offset.
    pub writer_id: usize,
    /// BatchSequence offset.
    pub batch_sequence: usize,
    /// RecordCount offset.
    pub record_count: usize,
    /// StatisticsLength offset, when the format has statistics.
    pub statistics_length: Option<usize>,
    /// Fixed header size.
    pub header_size: usize,
}

/// Layout of magic 0.
pub const LAYOUT_V0: BatchLayout = BatchLayout {
    magic: LOG_MAGIC_V0,
    leader_epoch: None,
    crc: v0::CRC_OFFSET,
    schema_id: v0::SCHEMA_ID_OFFSET,
    attributes: v0::ATTRIBUTES_OFFSET,
    last_offset_delta: v0::LAST_OFFSET_DELTA_OFFSET,
    writer_id: v0::WRITER_ID_OFFSET,
    batch_sequence: v0::BATCH_SEQUENCE_OFFSET,
    record_count: v0::RECORD_COUNT_OFFSET,
    statistics_length: None,
    header_size: v0::HEADER_SIZE,
};

/// Layout of magic 1 in Fluss 0.7–0.9.x.
pub const LAYOUT_V1_LEADER_EPOCH: BatchLayout = BatchLayout {
    magic: LOG_MAGIC_V1,
    leader_epoch: Some(v1_leader_epoch::LEADER_EPOCH_OFFSET),
    crc: v1_leader_epoch::CRC_OFFSET,
    schema_id: v1_leader_epoch::SCHEMA_ID_OFFSET,
    attributes: v1_leader_epoch::ATTRIBUTES_OFFSET,
    last_offset_delta: v1_leader_epoch::LAST_OFFSET_DELTA_OFFSET,
    writer_id: v1_leader_epoch::WRITER_ID_OFFSET,
    batch_sequence: v1_leader_epoch::BATCH_SEQUENCE_OFFSET,
    record_count: v1_leader_epoch::RECORD_COUNT_OFFSET,
    statistics_length: None,
    header_size: v1_leader_epoch::HEADER_SIZE,
};

/// Layout of magic 1 in Fluss 1.0.
pub const LAYOUT_V1_STATISTICS: BatchLayout = BatchLayout {
    magic: LOG_MAGIC_V1,
    leader_epoch: None,
    crc: v1_statistics::CRC_OFFSET,
    schema_id: v1_statistics::SCHEMA_ID_OFFSET,
    attributes: v1_statistics::ATTRIBUTES_OFFSET,
    last_offset_delta: v1_statistics::LAST_OFFSET_DELTA_OFFSET,
    writer_id: v1_statistics::WRITER_ID_OFFSET,
    batch_sequence: v1_statistics::BATCH_SEQUENCE_OFFSET,
    record_count: v1_statistics::RECORD_COUNT_OFFSET,
    statistics_length: Some(v1_statistics::STATISTICS_LENGTH_OFFSET),
    header_size: v1_statistics::HEADER_SIZE,
};

/// Layout of magic 2.
pub const LAYOUT_V2: BatchLayout = BatchLayout {
    magic: LOG_MAGIC_V2,
    leader_epoch: Some(v2::LEADER_EPOCH_OFFSET),
    crc: v2::CRC_OFFSET,
    schema_id: v2::SCHEMA_ID_OFFSET,
    attributes: v2::ATTRIBUTES_OFFSET,
    last_offset_delta: v2::LAST_OFFSET_DELTA_OFFSET,
    writer_id: v2::WRITER_ID_OFFSET,
    batch_sequence: v2::BATCH_SEQUENCE_OFFSET,
    record_count: v2::RECORD_COUNT_OFFSET,
    statistics_length: Some(v2::STATISTICS_LENGTH_OFFSET),
    header_size: v2::HEADER_SIZE,
};

/// A concrete log batch format (magic 1 split by Fluss line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BatchFormat {
    /// Magic 0.
    V0,
    /// Magic 1 as in Fluss 0.7–0.9.x (leader epoch, no statistics).
    V1LeaderEpoch,
    /// Magic 1 as in Fluss 1.0 (statistics, no leader epoch).
    V1Statistics,
    /// Magic 2 (Fluss 1.0).
    V2,
}

impl BatchFormat {
    /// The header layout.
    pub const fn layout(self) -> &'static BatchLayout {
        match self {
            BatchFormat::V0 => &LAYOUT_V0,
            BatchFormat::V1LeaderEpoch => &LAYOUT_V1_LEADER_EPOCH,
            BatchFormat::V1Statistics => &LAYOUT_V1_STATISTICS,
            BatchFormat::V2 => &LAYOUT_V2,
        }
    }

    /// The magic byte.
    pub const fn magic(self) -> u8 {
        self.layout().magic
    }

    /// Detects the format of one complete batch (`batch.len()` = its size). For magic 1 this
    /// compares the CRCs of both layouts (see the module docs).
    pub fn detect(batch: &[u8]) -> Result<BatchFormat> {
        let magic = le::u8_at(batch, MAGIC_OFFSET)
            .ok_or_else(|| Error::corrupt("log batch shorter than its magic byte"))?;
        match magic {
            LOG_MAGIC_V0 => Ok(BatchFormat::V0),
            LOG_MAGIC_V2 => Ok(BatchFormat::V2),
            LOG_MAGIC_V1 => {
                let new_ok = crc_matches(batch, &LAYOUT_V1_STATISTICS);
                let old_ok = crc_matches(batch, &LAYOUT_V1_LEADER_EPOCH);
                Ok(match (new_ok, old_ok) {
                    (true, false) => BatchFormat::V1Statistics,
                    (false, true) => BatchFormat::V1LeaderEpoch,
                    _ if statistics_in_range(batch, &LAYOUT_V1_STATISTICS) => {
                        BatchFormat::V1Statistics
                    }
                    _ => BatchFormat::V1LeaderEpoch,
                })
            }
            other => Err(Error::corrupt(format!(
                "unsupported log batch magic {other}"
            ))),
        }
    }
}

fn crc_matches(batch: &[u8], layout: &BatchLayout) -> bool {
    match (le::u32_at(batch, layout.crc), batch.get(layout.schema_id..)) {
        (Some(stored), Some(range)) if batch.len() >= layout.header_size => {
            stored == crc32c::crc32c(range)
        }
        _ => false,
    }
}

fn statistics_in_range(batch: &[u8], layout: &BatchLayout) -> bool {
    let Some(off) = layout.statistics_length else {
        return true;
    };
    match le::i32_at(batch, off).and_then(|l| usize::try_from(l).ok()) {
        Some(len) => layout
            .header_size
            .checked_add(len)
            .is_some_and(|end| end <= batch.len()),
        None => false,
    }
}

/// A zero-copy view of one log record batch. Construction checks the header is complete and
/// self-consistent; accessors then never fail. The CRC is checked by [`Self::is_valid`] /
/// [`Self::ensure_valid`], not by construction.
#[derive(Clone, Copy)]
pub struct LogRecordBatch<'a> {
    data: &'a [u8],
    format: BatchFormat,
    records_offset: usize,
}

impl<'a> LogRecordBatch<'a> {
    /// Views the batch at the start of `data` (extra bytes after it are ignored), detecting
    /// its format. Truncated or garbage headers are [`ErrorKind::Corrupt`](crate::ErrorKind::Corrupt).
    pub fn new(data: &'a [u8]) -> Result<Self> {
        let batch = Self::slice_batch(data)?;
        let format = BatchFormat::detect(batch)?;
        Self::build(batch, format)
    }

    /// Views the batch at the start of `data` as the given format, skipping detection.
    /// Fails when the magic byte does not belong to `format`.
    pub fn with_format(data: &'a [u8], format: BatchFormat) -> Result<Self> {
        let batch = Self::slice_batch(data)?;
        let magic = le::u8_at(batch, MAGIC_OFFSET).unwrap_or(u8::MAX);
        if magic != format.magic() {
            return Err(Error::corrupt(format!(
                "log batch magic {magic} is not {format:?}"
            )));
        }
        Self::build(batch, format)
    }

    fn slice_batch(data: &'a [u8]) -> Result<&'a [u8]> {
        let length = le::i32_at(data, LENGTH_OFFSET)
            .ok_or_else(|| Error::corrupt("log batch shorter than its length field"))?;
        let size = usize::try_from(length)
            .ok()
            .and_then(|l| l.checked_add(LOG_OVERHEAD))
            .filter(|&s| s >= MIN_BATCH_SIZE)
            .ok_or_else(|| Error::corrupt(format!("log batch has a bad length field {length}")))?;
        data.get(..size).ok_or_else(|| {
            Error::corrupt(format!(
                "log batch truncated: {size} bytes declared, {} present",
                data.len()
            ))
        })
    }

    fn build(data: &'a [u8], format: BatchFormat) -> Result<Self> {
        let layout = format.layout();
        if data.len() < layout.header_size {
            return Err(Error::corrupt(format!(
                "log batch of {} bytes is smaller than the {}-byte {format:?} header",
                data.len(),
                layout.header_size
            )));
        }
        let count = le::i32_at(data, layout.record_count).unwrap_or(-1);
        if count < 0 {
            return Err(Error::corrupt(format!(
                "log batch has a negative record count {count}"
            )));
        }
        let records_offset = match layout.statistics_length {
            None => layout.header_size,
            Some(off) => {
                let stats = le::i32_at(data, off).unwrap_or(-1);
                usize::try_from(stats)
                    .ok()
                    .and_then(|s| layout.header_size.checked_add(s))
                    .filter(|&end| end <= data.len())
                    .ok_or_else(|| {
                        Error::corrupt(format!("log batch statistics length {stats} out of range"))
                    })?
            }
        };
        Ok(LogRecordBatch {
            data,
            format,
            records_offset,
        })
    }

    fn i32_at(&self, off: usize) -> i32 {
        le::i32_at(self.data, off).unwrap_or_default()
    }

    fn i64_at(&self, off: usize) -> i64 {
        le::i64_at(self.data, off).unwrap_or_default()
    }

    fn layout(&self) -> &'static BatchLayout {
        self.format.layout()
    }

    /// The detected (or given) format.
    pub fn format(&self) -> BatchFormat {
        self.format
    }

    /// The whole batch's bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.data
    }

    /// Offset of the first record.
    pub fn base_offset(&self) -> i64 {
        self.i64_at(BASE_OFFSET_OFFSET)
    }

    /// The Length field (batch size − 12).
    pub fn length(&self) -> i32 {
        self.i32_at(LENGTH_OFFSET)
    }

    /// Total batch size in bytes.
    pub fn size_in_bytes(&self) -> usize {
        self.data.len()
    }

    /// The magic byte.
    pub fn magic(&self) -> u8 {
        self.layout().magic
    }

    /// Server commit time (ms since epoch) shared by all records.
    pub fn commit_timestamp(&self) -> i64 {
        self.i64_at(COMMIT_TIMESTAMP_OFFSET)
    }

    /// The leader epoch, or [`NO_LEADER_EPOCH`] when the format has none.
    pub fn leader_epoch(&self) -> i32 {
        self.layout()
            .leader_epoch
            .map_or(NO_LEADER_EPOCH, |off| self.i32_at(off))
    }

    /// The stored CRC-32C.
    pub fn crc(&self) -> u32 {
        le::u32_at(self.data, self.layout().crc).unwrap_or_default()
    }

    /// The CRC-32C computed over `[schema id offset, end)`.
    pub fn compute_crc(&self) -> u32 {
        crc32c::crc32c(self.data.get(self.layout().schema_id..).unwrap_or_default())
    }

    /// Whether the stored CRC matches the bytes.
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
                "log batch at offset {} is corrupt (stored crc {stored:#010x}, computed {computed:#010x})",
                self.base_offset()
            )))
        }
    }

    /// The table schema id the records were written with.
    pub fn schema_id(&self) -> i16 {
        le::i16_at(self.data, self.layout().schema_id).unwrap_or_default()
    }

    /// The attributes byte.
    pub fn attributes(&self) -> u8 {
        le::u8_at(self.data, self.layout().attributes).unwrap_or_default()
    }

    /// Whether the append-only bit is set (no change-type vector).
    pub fn is_append_only(&self) -> bool {
        self.attributes() & APPEND_ONLY_FLAG_MASK != 0
    }

    /// LastOffsetDelta (record count − 1, or 0 for an empty batch).
    pub fn last_offset_delta(&self) -> i32 {
        self.i32_at(self.layout().last_offset_delta)
    }

    /// Offset of the last record: base offset + last offset delta.
    pub fn last_offset(&self) -> i64 {
        self.base_offset()
            .wrapping_add(i64::from(self.last_offset_delta()))
    }

    /// The offset after this batch.
    pub fn next_offset(&self) -> i64 {
        self.last_offset().wrapping_add(1)
    }

    /// Writer id ([`NO_WRITER_ID`] when not idempotent).
    pub fn writer_id(&self) -> i64 {
        self.i64_at(self.layout().writer_id)
    }

    /// Batch sequence ([`NO_BATCH_SEQUENCE`] when none).
    pub fn batch_sequence(&self) -> i32 {
        self.i32_at(self.layout().batch_sequence)
    }

    /// Number of records (never negative).
    pub fn record_count(&self) -> i32 {
        self.i32_at(self.layout().record_count)
    }

    /// The statistics bytes (empty for formats without statistics or when absent).
    pub fn statistics(&self) -> &'a [u8] {
        self.data
            .get(self.layout().header_size..self.records_offset)
            .unwrap_or_default()
    }

    /// The record payload: everything after the header and statistics.
    pub fn records(&self) -> &'a [u8] {
        self.data.get(self.records_offset..).unwrap_or_default()
    }

    /// The per-record change types of a changelog batch; `None` for an append-only batch.
    pub fn change_types(&self) -> Result<Option<Vec<ChangeType>>> {
        if self.is_append_only() {
            return Ok(None);
        }
        let (vector, _) = self.split_change_types()?;
        ChangeType::decode_vector(vector).map(Some)
    }

    fn split_change_types(&self) -> Result<(&'a [u8], &'a [u8])> {
        let records = self.records();
        if self.is_append_only() {
            return Ok((&[], records));
        }
        let n = self.record_count() as usize;
        if records.len() < n {
            return Err(Error::corrupt(format!(
                "changelog batch payload of {} bytes is shorter than its {n}-record change-type vector",
                records.len()
            )));
        }
        Ok(records.split_at(n))
    }

    /// The Arrow IPC message bytes (after the change-type vector, if any). Empty when the batch
    /// has no records (Fluss writes no Arrow message for an empty batch).
    pub fn arrow_payload(&self) -> Result<&'a [u8]> {
        self.split_change_types().map(|(_, arrow)| arrow)
    }

    /// Decodes an ARROW batch with the Arrow schema of its schema id: the change types (`None`
    /// for append-only batches) and the rows. Does not check the CRC.
    pub fn arrow_records(
        &self,
        schema: &SchemaRef,
    ) -> Result<(Option<Vec<ChangeType>>, RecordBatch)> {
        self.arrow_records_inner(schema, None, BatchMemory::PerBatch)
    }

    /// Like [`Self::arrow_records`], with the decoded buffers placed in `memory`.
    pub fn arrow_records_in(
        &self,
        schema: &SchemaRef,
        memory: BatchMemory<'_>,
    ) -> Result<(Option<Vec<ChangeType>>, RecordBatch)> {
        self.arrow_records_inner(schema, None, memory)
    }

    /// Like [`Self::arrow_records`] but decodes only the columns at `projection`.
    pub fn arrow_records_projected(
        &self,
        schema: &SchemaRef,
        projection: &[usize],
    ) -> Result<(Option<Vec<ChangeType>>, RecordBatch)> {
        self.arrow_records_inner(schema, Some(projection), BatchMemory::PerBatch)
    }

    fn arrow_records_inner(
        &self,
        schema: &SchemaRef,
        projection: Option<&[usize]>,
        memory: BatchMemory<'_>,
    ) -> Result<(Option<Vec<ChangeType>>, RecordBatch)> {
        let change_types = self.change_types()?;
        let count = self.record_count() as usize;
        if count == 0 {
            let empty_schema = match projection {
                Some(p) => std::sync::Arc::new(schema.project(p)?),
                None => schema.clone(),
            };
            return Ok((change_types, RecordBatch::new_empty(empty_schema)));
        }
        let payload = self.arrow_payload()?;
        let batch = match projection {
            Some(p) => arrow_payload::decode_arrow_batch_projected(payload, schema, p)?,
            None => arrow_payload::decode_arrow_batch_in(payload, schema, memory)?,
        };
        if batch.num_rows() != count {
            return Err(Error::corrupt(format!(
                "log batch declares {count} records but its Arrow payload has {} rows",
                batch.num_rows()
            )));
        }
        Ok((change_types, batch))
    }
}

impl fmt::Debug for LogRecordBatch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogRecordBatch")
            .field("format", &self.format)
            .field("base_offset", &self.base_offset())
            .field("size", &self.size_in_bytes())
            .field("commit_timestamp", &self.commit_timestamp())
            .field("schema_id", &self.schema_id())
            .field("attributes", &self.attributes())
            .field("record_count", &self.record_count())
            .field("last_offset_delta", &self.last_offset_delta())
            .field("writer_id", &self.writer_id())
            .field("batch_sequence", &self.batch_sequence())
            .field("crc", &self.crc())
            .finish()
    }
}

/// Iterates the batches of a buffer of concatenated batches (a fetch response's records).
/// A truncated trailing batch ends iteration cleanly (as Fluss's `MemorySegmentLogInputStream`
/// does); a garbage header yields one error and then ends.
#[derive(Debug, Clone)]
pub struct LogBatchIter<'a> {
    data: &'a [u8],
    pos: usize,
    done: bool,
}

impl<'a> LogBatchIter<'a> {
    /// Iterates the batches in `data`.
    pub fn new(data: &'a [u8]) -> Self {
        LogBatchIter {
            data,
            pos: 0,
            done: false,
        }
    }

    /// Bytes consumed by the batches returned so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The bytes not yet returned as batches (e.g. a truncated tail).
    pub fn remaining(&self) -> &'a [u8] {
        self.data.get(self.pos..).unwrap_or_default()
    }
}

impl<'a> Iterator for LogBatchIter<'a> {
    type Item = Result<LogRecordBatch<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let rest = self.remaining();
        let Some(length) = le::i32_at(rest, LENGTH_OFFSET) else {
            self.done = true;
            return None;
        };
        let size = usize::try_from(length)
            .ok()
            .and_then(|l| l.checked_add(LOG_OVERHEAD))
            .filter(|&s| s >= MIN_BATCH_SIZE);
        let Some(size) = size else {
            self.done = true;
            return Some(Err(Error::corrupt(format!(
                "log batch at byte {} has a bad length field {length}",
                self.pos
            ))));
        };
        let Some(batch) = rest.get(..size) else {
            self.done = true;
            return None;
        };
        match LogRecordBatch::new(batch) {
            Ok(b) => {
                self.pos += size;
                Some(Ok(b))
            }
            Err(e) => {
                self.done = true;
                Some(Err(e.context(format!("log batch at byte {}", self.pos))))
            }
        }
    }
}

impl std::iter::FusedIterator for LogBatchIter<'_> {}

/// Header values for [`encode_log_batch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogBatchHeader {
    /// BaseOffset (clients write 0; the server assigns it).
    pub base_offset: i64,
    /// CommitTimestamp (clients write 0; the server assigns it).
    pub commit_timestamp: i64,
    /// LeaderEpoch, written only by formats that have it.
    pub leader_epoch: i32,
    /// SchemaId.
    pub schema_id: i16,
    /// Attributes byte (bit 0 = append-only).
    pub attributes: u8,
    /// LastOffsetDelta.
    pub last_offset_delta: i32,
    /// WriterId.
    pub writer_id: i64,
    /// BatchSequence.
    pub batch_sequence: i32,
    /// RecordCount.
    pub record_count: i32,
}

impl LogBatchHeader {
    /// A client-side header: offsets and timestamp 0, no leader epoch, no writer,
    /// last offset delta = `record_count − 1` (0 when empty).
    pub fn new(schema_id: i16, record_count: i32, append_only: bool) -> Self {
        LogBatchHeader {
            base_offset: 0,
            commit_timestamp: 0,
            leader_epoch: NO_LEADER_EPOCH,
            schema_id,
            attributes: if append_only {
                APPEND_ONLY_FLAG_MASK
            } else {
                0
            },
            last_offset_delta: (record_count - 1).max(0),
            writer_id: NO_WRITER_ID,
            batch_sequence: NO_BATCH_SEQUENCE,
            record_count,
        }
    }
}

/// Writes the header of `format` into `out[..header_size]` (length and CRC left for
/// [`finish_batch`]).
fn write_header(out: &mut [u8], format: BatchFormat, h: &LogBatchHeader, stats_len: i32) {
    let l = format.layout();
    le::put(out, BASE_OFFSET_OFFSET, &h.base_offset.to_le_bytes());
    le::put(out, MAGIC_OFFSET, &[l.magic]);
    le::put(
        out,
        COMMIT_TIMESTAMP_OFFSET,
        &h.commit_timestamp.to_le_bytes(),
    );
    if let Some(off) = l.leader_epoch {
        le::put(out, off, &h.leader_epoch.to_le_bytes());
    }
    le::put(out, l.schema_id, &h.schema_id.to_le_bytes());
    le::put(out, l.attributes, &[h.attributes]);
    le::put(out, l.last_offset_delta, &h.last_offset_delta.to_le_bytes());
    le::put(out, l.writer_id, &h.writer_id.to_le_bytes());
    le::put(out, l.batch_sequence, &h.batch_sequence.to_le_bytes());
    le::put(out, l.record_count, &h.record_count.to_le_bytes());
    if let Some(off) = l.statistics_length {
        le::put(out, off, &stats_len.to_le_bytes());
    }
}

/// Fills in Length and the CRC once the whole batch is in `out`.
fn finish_batch(out: &mut [u8], format: BatchFormat) -> Result<()> {
    let length = out
        .len()
        .checked_sub(LOG_OVERHEAD)
        .and_then(|l| i32::try_from(l).ok())
        .ok_or_else(|| Error::invalid(format!("log batch of {} bytes is too large", out.len())))?;
    le::put(out, LENGTH_OFFSET, &length.to_le_bytes());
    let l = format.layout();
    let crc = crc32c::crc32c(out.get(l.schema_id..).unwrap_or_default());
    le::put(out, l.crc, &crc.to_le_bytes());
    Ok(())
}

/// Assembles a batch of any format from a header, statistics bytes (must be empty for V0 and
/// 0.9's V1) and an already-encoded record payload; computes Length and CRC.
pub fn encode_log_batch(
    format: BatchFormat,
    header: &LogBatchHeader,
    statistics: &[u8],
    records: &[u8],
) -> Result<Vec<u8>> {
    let layout = format.layout();
    if layout.statistics_length.is_none() && !statistics.is_empty() {
        return Err(Error::invalid(format!(
            "log batch format {format:?} cannot carry statistics"
        )));
    }
    let stats_len = i32::try_from(statistics.len())
        .map_err(|_| Error::invalid("log batch statistics too large"))?;
    let mut out = vec![0u8; layout.header_size];
    out.reserve(statistics.len() + records.len());
    write_header(&mut out, format, header, stats_len);
    out.extend_from_slice(statistics);
    out.extend_from_slice(records);
    finish_batch(&mut out, format)?;
    Ok(out)
}

/// Builds a magic-0 ARROW log batch from `batch`, as the Fluss client writes it.
///
/// With `change_types == None` the batch is append-only (attribute bit 0 set) and the payload is
/// the Arrow IPC message alone. With `Some(types)` (one per row) it is a changelog batch: no
/// append-only bit and the change-type vector precedes the Arrow message. An empty `batch`
/// gives a bare 48-byte header (Fluss writes no Arrow message for zero records). Base offset and
/// commit timestamp are 0 (the server assigns them).
pub fn build_arrow_log_batch(
    schema_id: i16,
    batch: &RecordBatch,
    compression: ArrowCompression,
    change_types: Option<&[ChangeType]>,
    writer_id: i64,
    batch_sequence: i32,
) -> Result<Vec<u8>> {
    let rows = batch.num_rows();
    let count = i32::try_from(rows)
        .map_err(|_| Error::invalid(format!("{rows} rows do not fit in one log batch")))?;
    if let Some(ct) = change_types {
        if ct.len() != rows {
            return Err(Error::invalid(format!(
                "{} change types given for a batch of {rows} rows",
                ct.len()
            )));
        }
    }
    let mut header = LogBatchHeader::new(schema_id, count, change_types.is_none());
    header.writer_id = writer_id;
    header.batch_sequence = batch_sequence;
    if rows == 0 {
        return arrow_v0_batch(&header, &[], &[]);
    }
    let types: Vec<u8> = change_types
        .unwrap_or_default()
        .iter()
        .map(|c| c.to_byte())
        .collect();
    let arrow = arrow_payload::encode_arrow_batch(batch, compression)?;
    arrow_v0_batch(&header, &types, &arrow)
}

/// A magic-0 ARROW log batch of `header` around its change-type bytes (empty for an
/// append-only batch) and its Arrow payload (an encapsulated RecordBatch message, empty for
/// an empty batch), length and CRC computed.
fn arrow_v0_batch(header: &LogBatchHeader, change_types: &[u8], arrow: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(v0::HEADER_SIZE + change_types.len() + arrow.len());
    out.resize(v0::HEADER_SIZE, 0);
    out.extend_from_slice(change_types);
    out.extend_from_slice(arrow);
    write_header(&mut out, BatchFormat::V0, header, 0);
    finish_batch(&mut out, BatchFormat::V0)?;
    Ok(out)
}

/// Builds an append-only ARROW log batch in Fluss 1.0's magic-1 layout carrying `statistics`
/// (an encoded statistics block, see `crate::stats::batch`), as Fluss 1.0's client writes the
/// batches of a table with `table.statistics.columns`. No writer state (stamped when sent).
pub fn build_arrow_log_batch_with_statistics(
    schema_id: i16,
    batch: &RecordBatch,
    compression: ArrowCompression,
    statistics: &[u8],
) -> Result<Vec<u8>> {
    let rows = batch.num_rows();
    let count = i32::try_from(rows)
        .map_err(|_| Error::invalid(format!("{rows} rows do not fit in one log batch")))?;
    let header = LogBatchHeader::new(schema_id, count, true);
    let arrow = if rows > 0 {
        arrow_payload::encode_arrow_batch(batch, compression)?
    } else {
        Vec::new()
    };
    encode_log_batch(BatchFormat::V1Statistics, &header, statistics, &arrow)
}

/// Builds an append-only magic-0 ARROW log batch holding the rows of `parts` (record batches
/// of one schema) one after the other, as [`build_arrow_log_batch`] of their concatenation
/// would, without concatenating them when their columns are flat (fixed-width, boolean,
/// string, binary) and the compression is ZSTD or none: each Arrow buffer is compressed from
/// the parts' buffers straight into the batch.
pub fn build_arrow_log_batch_from_parts(
    schema_id: i16,
    parts: &[RecordBatch],
    compression: ArrowCompression,
    writer_id: i64,
    batch_sequence: i32,
) -> Result<Vec<u8>> {
    let rows: usize = parts.iter().map(|p| p.num_rows()).sum();
    let count = i32::try_from(rows)
        .map_err(|_| Error::invalid(format!("{rows} rows do not fit in one log batch")))?;
    let mut out = vec![0u8; v0::HEADER_SIZE];
    if !super::arrow_parts::encode_arrow_parts_into(parts, compression, &mut out)? {
        let one = match parts {
            [one] => one.clone(),
            _ => {
                let schema = parts
                    .first()
                    .map(|p| p.schema())
                    .ok_or_else(|| Error::invalid("no record batches to build a log batch from"))?;
                arrow_select::concat::concat_batches(&schema, parts)?
            }
        };
        return build_arrow_log_batch(
            schema_id,
            &one,
            compression,
            None,
            writer_id,
            batch_sequence,
        );
    }
    let mut header = LogBatchHeader::new(schema_id, count, true);
    header.writer_id = writer_id;
    header.batch_sequence = batch_sequence;
    write_header(&mut out, BatchFormat::V0, &header, 0);
    finish_batch(&mut out, BatchFormat::V0)?;
    Ok(out)
}

/// Re-encodes the ARROW log batches of `bytes` keeping only the columns at `fields` (ascending)
/// of the schema each batch was written with (`schema_of` its schema id), with the header fields (offsets, commit timestamp, writer state and
/// the stored CRC) kept: what Fluss's `FileLogProjection` answers to a projected fetch, and
/// what a reader does itself with a remote segment (always stored whole). The columns are cut
/// out of each stored message without decoding where its types allow (compression kept; see
/// [`super::arrow_projection`]), else decoded and encoded again with `compression`. The kept
/// CRC no longer matches the payload, so readers of projected batches skip the CRC check.
pub fn project_arrow_batches(
    bytes: &[u8],
    schema_of: &dyn Fn(i16) -> Result<SchemaRef>,
    fields: &[usize],
    compression: ArrowCompression,
) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len());
    for item in LogBatchIter::new(bytes) {
        let b = item?;
        let schema = schema_of(b.schema_id())?;
        // A batch written before an ADD COLUMN has its own, shorter schema.
        if let Some(f) = fields.iter().find(|f| **f >= schema.fields().len()) {
            return Err(Error::from_fluss(
                crate::error::codes::INVALID_COLUMN_PROJECTION,
                format!(
                    "projected field {f} does not exist in schema id {} (a batch written before \
                     the column was added); fetch without projection",
                    b.schema_id()
                ),
            ));
        }
        let mut nb = match project_stored(&b, &schema, fields)? {
            Some(nb) => nb,
            None => {
                let (cts, rb) = b.arrow_records_projected(&schema, fields)?;
                build_arrow_log_batch(
                    b.schema_id(),
                    &rb,
                    compression,
                    cts.as_deref(),
                    b.writer_id(),
                    b.batch_sequence(),
                )?
            }
        };
        set_base_offset(&mut nb, b.base_offset())?;
        set_commit_timestamp(&mut nb, b.commit_timestamp())?;
        set_crc(&mut nb, b.crc())?;
        out.extend_from_slice(&nb);
    }
    Ok(out)
}

/// `b` (an ARROW batch written with `schema`) as a magic-0 batch of the columns at `fields`
/// cut out of its Arrow message as stored ([`super::arrow_projection::project_message`]), its
/// change types copied; `None` for an empty batch or a message that is not cut that way (the
/// caller decodes and encodes it). Offsets, timestamp and CRC are the caller's to set.
fn project_stored(
    b: &LogRecordBatch<'_>,
    schema: &SchemaRef,
    fields: &[usize],
) -> Result<Option<Vec<u8>>> {
    let count = b.record_count();
    if count <= 0 {
        return Ok(None);
    }
    let (change_types, payload) = b.split_change_types()?;
    let Some(arrow) = super::arrow_projection::project_message(payload, schema, fields)? else {
        return Ok(None);
    };
    let mut header = LogBatchHeader::new(b.schema_id(), count, b.is_append_only());
    header.writer_id = b.writer_id();
    header.batch_sequence = b.batch_sequence();
    arrow_v0_batch(&header, change_types, &arrow).map(Some)
}

/// The total size in bytes of the log batch that starts at `prefix[0]`, read from its length
/// field, when `prefix` holds enough header bytes to tell (the batch itself may be incomplete).
pub fn batch_size_from_prefix(prefix: &[u8]) -> Option<usize> {
    let len = prefix.get(LENGTH_OFFSET..LENGTH_OFFSET + 4)?;
    let len = i32::from_le_bytes(len.try_into().ok()?);
    usize::try_from(len).ok()?.checked_add(LOG_OVERHEAD)
}

/// Overwrites BaseOffset in place (before the CRC range, so the CRC stays valid).
pub fn set_base_offset(batch: &mut [u8], base_offset: i64) -> Result<()> {
    put_header_field(batch, BASE_OFFSET_OFFSET, &base_offset.to_le_bytes())
}

/// Overwrites CommitTimestamp in place (before the CRC range, so the CRC stays valid).
pub fn set_commit_timestamp(batch: &mut [u8], commit_timestamp: i64) -> Result<()> {
    put_header_field(
        batch,
        COMMIT_TIMESTAMP_OFFSET,
        &commit_timestamp.to_le_bytes(),
    )
}

/// Overwrites LeaderEpoch in place (V2 and 0.9's V1; before the CRC range).
/// [`ErrorKind::Unsupported`](crate::ErrorKind::Unsupported) for formats without one.
pub fn set_leader_epoch(batch: &mut [u8], leader_epoch: i32) -> Result<()> {
    let format = LogRecordBatch::new(batch)?.format();
    match format.layout().leader_epoch {
        Some(off) => put_header_field(batch, off, &leader_epoch.to_le_bytes()),
        None => Err(Error::unsupported(format!(
            "log batch format {format:?} has no leader epoch"
        ))),
    }
}

/// Overwrites WriterId and BatchSequence in place and recomputes the CRC (they lie inside it).
pub fn set_writer_state(batch: &mut [u8], writer_id: i64, batch_sequence: i32) -> Result<()> {
    let view = LogRecordBatch::new(batch)?;
    let (format, size) = (view.format(), view.size_in_bytes());
    let l = format.layout();
    let region = batch
        .get_mut(..size)
        .ok_or_else(|| Error::internal("log batch size changed"))?;
    le::put(region, l.writer_id, &writer_id.to_le_bytes());
    le::put(region, l.batch_sequence, &batch_sequence.to_le_bytes());
    let crc = crc32c::crc32c(region.get(l.schema_id..).unwrap_or_default());
    le::put(region, l.crc, &crc.to_le_bytes());
    Ok(())
}

/// Overwrites the stored CRC in place with `crc` (for a re-encoded batch that keeps its
/// original header, as a projected fetch does), at the CRC offset of the batch's own format.
pub fn set_crc(batch: &mut [u8], crc: u32) -> Result<()> {
    let format = LogRecordBatch::new(batch)?.format();
    put_header_field(batch, format.layout().crc, &crc.to_le_bytes())
}

fn put_header_field(batch: &mut [u8], off: usize, bytes: &[u8]) -> Result<()> {
    if batch.len() < MIN_BATCH_SIZE || !le::put(batch, off, bytes) {
        return Err(Error::corrupt(format!(
            "log batch of {} bytes is too short to patch its header",
            batch.len()
        )));
    }
    Ok(())
}
