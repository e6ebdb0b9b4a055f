//! The Arrow payload of an ARROW-format log batch: exactly one encapsulated Arrow IPC
//! RecordBatch message (continuation marker `0xFFFFFFFF`, int32 metadata length, flatbuffer
//! `Message`, body), with no Schema message before it and no end-of-stream marker after it.
//! The schema is known from the table's schema id.
//!
//! Encoding uses arrow-ipc's `IpcDataGenerator` + `write_message` with metadata version V5 and
//! 8-byte alignment, which is what Fluss's Java `MessageSerializer` (IpcOption.DEFAULT) writes.
//! Body compression follows the Arrow spec (per buffer: int64 uncompressed length, or -1 when
//! stored raw, then the LZ4_FRAME / ZSTD bytes).

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::str::FromStr;

use arrow_array::RecordBatch;
use arrow_buffer::Buffer;
use arrow_ipc::writer::{
    write_message, DictionaryTracker, IpcDataGenerator, IpcWriteContext, IpcWriteOptions,
};
use arrow_ipc::{CompressionType, MetadataVersion};
use arrow_schema::SchemaRef;

use super::batch_memory::BatchMemory;
use super::{ipc_body, le};
use crate::{Error, Result};

/// The IPC continuation marker that starts every encapsulated message.
pub const CONTINUATION_MARKER: u32 = 0xFFFF_FFFF;
/// Fluss's default ZSTD level (`table.log.arrow.compression.zstd.level`).
pub const DEFAULT_ZSTD_LEVEL: i32 = 3;
/// Largest uncompressed size a single compressed buffer may declare before we refuse it.
pub const MAX_DECOMPRESSED_BUFFER: u64 = 1 << 30;
/// Largest total uncompressed size all buffers of one message may declare.
pub const MAX_DECOMPRESSED_TOTAL: u64 = 1 << 31;
/// Alignment of the metadata and of every body buffer of a message: what Fluss's Java writer
/// uses (`IpcOption.DEFAULT`), the Arrow format's minimum.
pub(super) const IPC_ALIGNMENT: usize = 8;

/// Arrow body compression of log batches (`table.log.arrow.compression.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArrowCompression {
    /// No compression ("NONE").
    None,
    /// LZ4 frame format ("LZ4_FRAME").
    Lz4Frame,
    /// Zstandard ("ZSTD") at the given level.
    Zstd {
        /// Compression level (Fluss default 3).
        level: i32,
    },
}

impl Default for ArrowCompression {
    /// Fluss's default: ZSTD level 3.
    fn default() -> Self {
        ArrowCompression::Zstd {
            level: DEFAULT_ZSTD_LEVEL,
        }
    }
}

impl ArrowCompression {
    /// ZSTD at Fluss's default level 3.
    pub fn zstd() -> Self {
        Self::default()
    }

    /// Parses a Fluss property value "NONE", "LZ4_FRAME" or "ZSTD" (case-insensitive);
    /// `zstd_level` (from `table.log.arrow.compression.zstd.level`) defaults to 3.
    pub fn from_property(value: &str, zstd_level: Option<i32>) -> Result<Self> {
        match value.trim().to_ascii_uppercase().as_str() {
            "NONE" => Ok(ArrowCompression::None),
            "LZ4_FRAME" => Ok(ArrowCompression::Lz4Frame),
            "ZSTD" => Ok(ArrowCompression::Zstd {
                level: zstd_level.unwrap_or(DEFAULT_ZSTD_LEVEL),
            }),
            _ => Err(Error::invalid(format!(
                "unknown arrow compression type '{value}' (expected NONE, LZ4_FRAME or ZSTD)"
            ))),
        }
    }

    /// The Fluss property value: "NONE", "LZ4_FRAME" or "ZSTD".
    pub fn as_str(self) -> &'static str {
        match self {
            ArrowCompression::None => "NONE",
            ArrowCompression::Lz4Frame => "LZ4_FRAME",
            ArrowCompression::Zstd { .. } => "ZSTD",
        }
    }

    fn write_options(self) -> Result<IpcWriteOptions> {
        let base = IpcWriteOptions::try_new(IPC_ALIGNMENT, false, MetadataVersion::V5)
            .map_err(|e| Error::internal(format!("arrow ipc options: {e}")))?;
        let opts = match self {
            ArrowCompression::None => base,
            ArrowCompression::Lz4Frame => {
                base.try_with_compression(Some(CompressionType::LZ4_FRAME))?
            }
            ArrowCompression::Zstd { level } => base
                .try_with_compression(Some(CompressionType::ZSTD))?
                .try_with_compression_level(Some(level))
                .map_err(|e| Error::invalid(format!("bad ZSTD level {level}: {e}")))?,
        };
        Ok(opts)
    }
}

impl fmt::Display for ArrowCompression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArrowCompression::Zstd { level } => write!(f, "ZSTD(level {level})"),
            other => f.write_str(other.as_str()),
        }
    }
}

impl FromStr for ArrowCompression {
    type Err = Error;
    /// Same as [`ArrowCompression::from_property`] with the default ZSTD level.
    fn from_str(s: &str) -> Result<Self> {
        ArrowCompression::from_property(s, None)
    }
}

/// Encodes `batch` as one encapsulated IPC RecordBatch message (no schema, no EOS).
///
/// Dictionary-encoded columns are not part of Fluss's type mapping and are rejected.
pub fn encode_arrow_batch(batch: &RecordBatch, compression: ArrowCompression) -> Result<Vec<u8>> {
    let opts = compression.write_options()?;
    let generator = IpcDataGenerator::default();
    let mut tracker = DictionaryTracker::new(false);
    let (dictionaries, encoded) = with_write_context(compression, |ctx| {
        generator
            .encode(batch, &mut tracker, &opts, ctx)
            .map_err(|e| Error::invalid(format!("arrow ipc encode: {e}")))
    })?;
    if !dictionaries.is_empty() {
        return Err(Error::unsupported(
            "dictionary-encoded Arrow columns cannot be written to a Fluss log batch",
        ));
    }
    let mut out = Vec::with_capacity(
        encoded.ipc_message.len() + encoded.arrow_data.len() + 2 * IPC_ALIGNMENT,
    );
    write_message(&mut out, encoded, &opts)
        .map_err(|e| Error::internal(format!("arrow ipc write: {e}")))?;
    Ok(out)
}

thread_local! {
    /// The IPC write context of this thread (its ZSTD compression context and flatbuffer
    /// builder), kept between batches: a fresh ZSTD context per buffer costs its allocation and
    /// table reset each time. Keyed by the compression it was made for (the ZSTD level is fixed
    /// when its compressor is created).
    static WRITE_CONTEXT: std::cell::RefCell<Option<(ArrowCompression, IpcWriteContext)>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `f` with this thread's reusable write context for `compression`.
fn with_write_context<T>(
    compression: ArrowCompression,
    f: impl FnOnce(&mut IpcWriteContext) -> Result<T>,
) -> Result<T> {
    WRITE_CONTEXT.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => {
            if slot.as_ref().is_some_and(|(c, _)| *c != compression) {
                *slot = None;
            }
            let (_, ctx) = slot.get_or_insert_with(|| (compression, IpcWriteContext::default()));
            let r = f(ctx);
            if r.is_err() {
                // Do not carry a context out of a failed encode into the next batch.
                *slot = None;
            }
            r
        }
        // Re-entered on the same thread (cannot happen today): use a one-off context.
        Err(_) => f(&mut IpcWriteContext::default()),
    })
}

/// Decodes one encapsulated IPC RecordBatch message with the table's Arrow `schema`.
pub fn decode_arrow_batch(bytes: &[u8], schema: &SchemaRef) -> Result<RecordBatch> {
    decode_inner(bytes, schema, None, BatchMemory::PerBatch)
}

/// Like [`decode_arrow_batch`], with the decoded buffers of a compressed message placed in
/// `memory` (see [`BatchMemory`]).
pub fn decode_arrow_batch_in(
    bytes: &[u8],
    schema: &SchemaRef,
    memory: BatchMemory<'_>,
) -> Result<RecordBatch> {
    decode_inner(bytes, schema, None, memory)
}

/// Like [`decode_arrow_batch`] but returns only the columns at `projection` (indexes into
/// `schema`, in the order given), skipping the decoding of the others.
pub fn decode_arrow_batch_projected(
    bytes: &[u8],
    schema: &SchemaRef,
    projection: &[usize],
) -> Result<RecordBatch> {
    let n = schema.fields().len();
    if let Some(bad) = projection.iter().find(|&&i| i >= n) {
        return Err(Error::invalid(format!(
            "projection column index {bad} out of range for a schema of {n} columns"
        )));
    }
    decode_inner(bytes, schema, Some(projection), BatchMemory::PerBatch)
}

/// The size in bytes of the encapsulated message at the start of `bytes`
/// (8 + metadata length + body length), validated against `bytes.len()`.
pub fn arrow_message_size(bytes: &[u8]) -> Result<usize> {
    let (meta_end, message) = parse_message(bytes)?;
    let body_len = usize::try_from(message.bodyLength())
        .map_err(|_| Error::corrupt("arrow ipc: negative body length"))?;
    let end = meta_end
        .checked_add(body_len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| Error::corrupt("arrow ipc: body runs past the end of the payload"))?;
    Ok(end)
}

/// Where the two parts Arrow Flight carries separately lie in one encapsulated IPC
/// RecordBatch message, and whether its body is compressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageParts {
    /// The flatbuffer `Message` (a `FlightData`'s header).
    pub header: Range<usize>,
    /// The body.
    pub body: Range<usize>,
    /// Whether the body's buffers are compressed (LZ4_FRAME or ZSTD).
    pub compressed: bool,
    /// The row count the message declares.
    pub rows: i64,
    /// How many field nodes it carries (one per field of its schema, children included).
    pub field_nodes: usize,
}

/// The [`MessageParts`] of the encapsulated RecordBatch message at the start of `bytes`,
/// checked as a decode checks it (flatbuffer, RecordBatch header, every buffer within the
/// body), so what is forwarded undecoded is well-formed.
pub fn split_message(bytes: &[u8]) -> Result<MessageParts> {
    let m = checked_record_batch(bytes)?;
    Ok(MessageParts {
        header: 8..m.body.start,
        compressed: m.batch.compression().is_some(),
        rows: m.batch.length(),
        field_nodes: m.batch.nodes().map_or(0, |n| n.len()),
        body: m.body,
    })
}

/// A RecordBatch message whose buffers were checked against its body.
pub(super) struct CheckedRecordBatch<'a> {
    pub(super) message: arrow_ipc::Message<'a>,
    pub(super) batch: arrow_ipc::RecordBatch<'a>,
    /// Where the body lies in the encapsulated message.
    pub(super) body: Range<usize>,
}

/// The encapsulated RecordBatch message at the start of `bytes`, with every buffer's range
/// (and declared uncompressed size) checked against its body.
pub(super) fn checked_record_batch(bytes: &[u8]) -> Result<CheckedRecordBatch<'_>> {
    let (meta_end, message) = parse_message(bytes)?;
    let batch = message.header_as_record_batch().ok_or_else(|| {
        Error::corrupt(format!(
            "arrow ipc: expected a RecordBatch message, got {:?}",
            message.header_type()
        ))
    })?;
    let body_len = usize::try_from(message.bodyLength())
        .map_err(|_| Error::corrupt("arrow ipc: negative body length"))?;
    let body_end = meta_end
        .checked_add(body_len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| Error::corrupt("arrow ipc: body runs past the end of the payload"))?;
    check_batch_against_body(&batch, &bytes[meta_end..body_end])?;
    Ok(CheckedRecordBatch {
        message,
        batch,
        body: meta_end..body_end,
    })
}

/// The flatbuffer `Message` announcing `schema`: what an Arrow IPC stream (or an Arrow Flight
/// stream, as the first `FlightData`'s header) sends before its record batches.
pub fn encode_schema_message(schema: &arrow_schema::Schema) -> Vec<u8> {
    let mut tracker = DictionaryTracker::new(false);
    IpcDataGenerator::default()
        .schema_to_bytes_with_dictionary_tracker(schema, &mut tracker, &IpcWriteOptions::default())
        .ipc_message
}

/// Splits the continuation marker and metadata off: (offset of body, verified Message).
fn parse_message(bytes: &[u8]) -> Result<(usize, arrow_ipc::Message<'_>)> {
    let marker = le::u32_at(bytes, 0)
        .ok_or_else(|| Error::corrupt("arrow ipc: payload shorter than 8 bytes"))?;
    if marker != CONTINUATION_MARKER {
        return Err(Error::corrupt(format!(
            "arrow ipc: bad continuation marker {marker:#010x}"
        )));
    }
    let meta_len = le::i32_at(bytes, 4)
        .ok_or_else(|| Error::corrupt("arrow ipc: payload shorter than 8 bytes"))?;
    let meta_len = usize::try_from(meta_len)
        .ok()
        .filter(|&l| l > 0)
        .ok_or_else(|| Error::corrupt(format!("arrow ipc: bad metadata length {meta_len}")))?;
    let meta_end = 8usize
        .checked_add(meta_len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| Error::corrupt("arrow ipc: metadata runs past the end of the payload"))?;
    let meta = bytes
        .get(8..meta_end)
        .ok_or_else(|| Error::corrupt("arrow ipc: metadata out of range"))?;
    let message = arrow_ipc::root_as_message(meta)
        .map_err(|e| Error::corrupt(format!("arrow ipc: bad message flatbuffer: {e}")))?;
    Ok((meta_end, message))
}

fn decode_inner(
    bytes: &[u8],
    schema: &SchemaRef,
    projection: Option<&[usize]>,
    memory: BatchMemory<'_>,
) -> Result<RecordBatch> {
    let CheckedRecordBatch {
        message,
        batch,
        body,
    } = checked_record_batch(bytes)?;
    let body = &bytes[body];
    let version = message.version();

    // A whole ZSTD message (the default of Fluss tables) is decompressed into one region;
    // a projection leaves it to arrow-ipc, which decompresses only the projected columns.
    let zstd = batch
        .compression()
        .is_some_and(|c| c.codec() == CompressionType::ZSTD);
    if zstd && projection.is_none() {
        let decompressed = ipc_body::decompress_zstd_body(&batch, body, memory)?;
        return read_batch(
            &decompressed.body,
            decompressed.batch()?,
            schema,
            None,
            version,
        );
    }
    read_batch(&Buffer::from(body), batch, schema, projection, version)
}

/// arrow-ipc's decoding of a message whose ranges were checked.
fn read_batch(
    buffer: &Buffer,
    batch: arrow_ipc::RecordBatch<'_>,
    schema: &SchemaRef,
    projection: Option<&[usize]>,
    version: MetadataVersion,
) -> Result<RecordBatch> {
    let dictionaries = HashMap::new();
    // arrow-ipc validates the arrays it builds, and we checked every buffer range above;
    // the unwind guard turns any remaining arrow-internal panic on hostile input into Corrupt.
    let result = catch_unwind(AssertUnwindSafe(|| {
        arrow_ipc::reader::read_record_batch(
            buffer,
            batch,
            schema.clone(),
            &dictionaries,
            projection,
            &version,
        )
    }));
    match result {
        Ok(Ok(rb)) => Ok(rb),
        Ok(Err(e)) => Err(Error::corrupt(format!("arrow ipc decode: {e}"))),
        Err(_) => Err(Error::corrupt("arrow ipc decode: malformed record batch")),
    }
}

/// Checks the flatbuffer's row count, field nodes and buffer ranges (and declared uncompressed
/// sizes) against the body so arrow-ipc never slices out of range or allocates absurd sizes.
fn check_batch_against_body(batch: &arrow_ipc::RecordBatch<'_>, body: &[u8]) -> Result<()> {
    let rows = batch.length();
    if !(0..=i32::MAX as i64).contains(&rows) {
        return Err(Error::corrupt(format!("arrow ipc: bad row count {rows}")));
    }
    if let Some(nodes) = batch.nodes() {
        for node in nodes.iter() {
            if node.length() < 0 || node.null_count() < 0 || node.null_count() > node.length() {
                return Err(Error::corrupt(format!(
                    "arrow ipc: bad field node (length {}, nulls {})",
                    node.length(),
                    node.null_count()
                )));
            }
        }
    }
    let compressed = batch.compression().is_some();
    let mut declared_total: u64 = 0;
    if let Some(buffers) = batch.buffers() {
        for b in buffers.iter() {
            let (off, len) = (b.offset(), b.length());
            let range = usize::try_from(off)
                .ok()
                .zip(usize::try_from(len).ok())
                .and_then(|(o, l)| Some(o..o.checked_add(l)?))
                .filter(|r| r.end <= body.len())
                .ok_or_else(|| {
                    Error::corrupt(format!(
                        "arrow ipc: buffer (offset {off}, length {len}) outside the {}-byte body",
                        body.len()
                    ))
                })?;
            if compressed && !range.is_empty() {
                let declared = le::i64_at(body, range.start).ok_or_else(|| {
                    Error::corrupt("arrow ipc: compressed buffer shorter than its length prefix")
                })?;
                if declared != -1 {
                    let d = u64::try_from(declared)
                        .ok()
                        .filter(|&d| d <= MAX_DECOMPRESSED_BUFFER)
                        .ok_or_else(|| {
                            Error::corrupt(format!(
                                "arrow ipc: bad uncompressed buffer length {declared}"
                            ))
                        })?;
                    declared_total += d;
                    if declared_total > MAX_DECOMPRESSED_TOTAL {
                        return Err(Error::corrupt(
                            "arrow ipc: declared uncompressed size too large",
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}
