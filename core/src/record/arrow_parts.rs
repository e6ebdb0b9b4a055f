//! One Arrow IPC RecordBatch message written from several record batches of one schema, as if
//! they were concatenated, without concatenating them: the writer's batches are made of the
//! caller's 8k-row pieces, and a concatenation is a copy of every byte into fresh memory
//! before compression reads it again.
//!
//! Each body buffer is compressed from the pieces' own buffers (gathered into a reused
//! per-thread buffer when there is more than one) straight into the output, so the compressed
//! bytes are written once; arrow-ipc's encoder writes them three times (per-buffer scratch,
//! body, message) and allocates per buffer. The bytes are those arrow-ipc writes for the
//! concatenated batch (same flatbuffer layout, per-buffer compression with a ZSTD frame that
//! records its size, raw with length -1 when compression does not pay), so readers see no
//! difference. Only flat columns are handled (fixed-width primitives, booleans, Utf8 and
//! Binary); other schemas and LZ4 return `false` so the caller concatenates and uses arrow-ipc.

use std::cell::RefCell;

use arrow_array::{Array, RecordBatch};
use arrow_buffer::BooleanBufferBuilder;
use arrow_schema::DataType;

use super::arrow_payload::{ArrowCompression, CONTINUATION_MARKER};
use crate::{Error, Result};

const ALIGNMENT: usize = 8;
/// The uncompressed-length prefix of a buffer stored without compression.
const NOT_COMPRESSED: i64 = -1;

/// How a column's buffers are laid out (the layouts this module writes).
#[derive(Clone, Copy)]
enum Layout {
    /// Validity and one values buffer of this many bytes per row.
    Fixed(usize),
    /// Validity and one values bitmap.
    Bool,
    /// Validity, i32 offsets and values.
    Bytes,
}

fn layout(data_type: &DataType) -> Option<Layout> {
    match data_type {
        DataType::Boolean => Some(Layout::Bool),
        DataType::Utf8 | DataType::Binary => Some(Layout::Bytes),
        DataType::FixedSizeBinary(w) => usize::try_from(*w)
            .ok()
            .filter(|w| *w > 0)
            .map(Layout::Fixed),
        other => other.primitive_width().map(Layout::Fixed),
    }
}

/// What one thread keeps between batches: the flatbuffer builder, the ZSTD context (for the
/// level it was made with) and the buffer pieces are gathered into.
struct Scratch {
    fbb: flatbuffers::FlatBufferBuilder<'static>,
    zstd: Option<(i32, zstd::bulk::Compressor<'static>)>,
    gather: Vec<u8>,
}

thread_local! {
    static SCRATCH: RefCell<Option<Scratch>> = const { RefCell::new(None) };
}

/// Appends to `out` the encapsulated IPC RecordBatch message (continuation marker, metadata
/// length, flatbuffer `Message`, padding, body) of the concatenation of `parts`, compressed
/// with `compression`. Returns `Ok(false)` with `out` untouched when the parts have no rows,
/// differ in schema, hold a column of a layout this module does not write, or the
/// compression is LZ4: the caller then concatenates and encodes with arrow-ipc.
pub(crate) fn encode_arrow_parts_into(
    parts: &[RecordBatch],
    compression: ArrowCompression,
    out: &mut Vec<u8>,
) -> Result<bool> {
    let level = match compression {
        ArrowCompression::None => None,
        ArrowCompression::Zstd { level } => Some(level),
        ArrowCompression::Lz4Frame => return Ok(false),
    };
    let Some(first) = parts.first() else {
        return Ok(false);
    };
    let schema = first.schema();
    if parts[1..]
        .iter()
        .any(|p| p.schema().fields() != schema.fields())
    {
        return Ok(false);
    }
    let mut layouts = Vec::with_capacity(schema.fields().len());
    for f in schema.fields() {
        match layout(f.data_type()) {
            Some(l) => layouts.push(l),
            None => return Ok(false),
        }
    }
    let rows: usize = parts.iter().map(|p| p.num_rows()).sum();
    if rows == 0 {
        return Ok(false);
    }
    SCRATCH.with(|cell| {
        let mut slot = cell
            .try_borrow_mut()
            .map_err(|_| Error::internal("arrow parts encoder re-entered on one thread"))?;
        let scratch = slot.get_or_insert_with(|| Scratch {
            fbb: flatbuffers::FlatBufferBuilder::new(),
            zstd: None,
            gather: Vec::new(),
        });
        let start = out.len();
        let r = encode(parts, &layouts, rows, level, scratch, out);
        if r.is_err() {
            out.truncate(start);
            // Do not carry a context out of a failed encode into the next batch.
            *slot = None;
        }
        r.map(|()| true)
    })
}

fn pad(len: usize) -> usize {
    (ALIGNMENT - len % ALIGNMENT) % ALIGNMENT
}

/// Writes the message header (continuation, length, flatbuffer, padding) of a batch with
/// `nodes` and `buffers` into the scratch builder and returns its bytes.
fn header<'a>(
    fbb: &'a mut flatbuffers::FlatBufferBuilder<'static>,
    rows: usize,
    nodes: &[arrow_ipc::FieldNode],
    buffers: &[arrow_ipc::Buffer],
    body_len: usize,
    compressed: bool,
) -> &'a [u8] {
    fbb.reset();
    // The same build order as arrow-ipc's writer, so the bytes are the same.
    let compression = compressed.then(|| {
        let mut c = arrow_ipc::BodyCompressionBuilder::new(fbb);
        c.add_method(arrow_ipc::BodyCompressionMethod::BUFFER);
        c.add_codec(arrow_ipc::CompressionType::ZSTD);
        c.finish()
    });
    let buffers = fbb.create_vector(buffers);
    let nodes = fbb.create_vector(nodes);
    let mut batch = arrow_ipc::RecordBatchBuilder::new(fbb);
    batch.add_length(rows as i64);
    batch.add_nodes(nodes);
    batch.add_buffers(buffers);
    if let Some(c) = compression {
        batch.add_compression(c);
    }
    let batch = batch.finish();
    let mut message = arrow_ipc::MessageBuilder::new(fbb);
    message.add_version(arrow_ipc::MetadataVersion::V5);
    message.add_header_type(arrow_ipc::MessageHeader::RecordBatch);
    message.add_bodyLength(body_len as i64);
    message.add_header(batch.as_union_value());
    let root = message.finish();
    fbb.finish(root, None);
    fbb.finished_data()
}

/// The length of the encapsulation prefix (marker, length) plus the padded flatbuffer.
fn framed_len(metadata_len: usize) -> usize {
    let n = 8 + metadata_len;
    n + pad(n)
}

fn write_frame(dst: &mut [u8], metadata: &[u8]) {
    let padded = dst.len() - 8;
    dst[..4].copy_from_slice(&CONTINUATION_MARKER.to_le_bytes());
    dst[4..8].copy_from_slice(&(padded as i32).to_le_bytes());
    dst[8..8 + metadata.len()].copy_from_slice(metadata);
    dst[8 + metadata.len()..].fill(0);
}

fn encode(
    parts: &[RecordBatch],
    layouts: &[Layout],
    rows: usize,
    level: Option<i32>,
    scratch: &mut Scratch,
    out: &mut Vec<u8>,
) -> Result<()> {
    let n_buffers: usize = layouts
        .iter()
        .map(|l| if matches!(l, Layout::Bytes) { 3 } else { 2 })
        .sum();
    // The header's size depends only on the number of nodes and buffers (fixed-size structs,
    // non-zero length and body length), so it is laid out first with placeholders and the
    // body is written right after it: no copy of the body to put the header in front.
    let placeholder_nodes = vec![arrow_ipc::FieldNode::new(0, 0); layouts.len()];
    let placeholder_buffers = vec![arrow_ipc::Buffer::new(0, 0); n_buffers];
    let reserved = framed_len(
        header(
            &mut scratch.fbb,
            rows,
            &placeholder_nodes,
            &placeholder_buffers,
            ALIGNMENT,
            level.is_some(),
        )
        .len(),
    );
    // Room for the body in the worst case, so the output never reallocates (pages never
    // written are never touched either).
    let mut raw = 0usize;
    for (c, l) in layouts.iter().enumerate() {
        raw += rows / 8 + 1;
        raw += match l {
            Layout::Fixed(w) => rows * w,
            Layout::Bool => rows / 8 + 1,
            Layout::Bytes => {
                (rows + 1) * 4
                    + parts
                        .iter()
                        .map(|p| value_range(p.column(c).as_ref()).map_or(0, |(s, e)| e - s))
                        .sum::<usize>()
            }
        };
    }
    let per_buffer = 8 + ALIGNMENT + 64;
    out.reserve(reserved + raw + raw / 128 + n_buffers * per_buffer);
    let frame_at = out.len();
    out.resize(frame_at + reserved, 0);
    let body_at = out.len();

    let mut nodes = Vec::with_capacity(layouts.len());
    let mut buffers = Vec::with_capacity(n_buffers);
    let mut sink = Sink {
        out,
        body_at,
        level,
        zstd: &mut scratch.zstd,
        buffers: &mut buffers,
    };
    let gather = &mut scratch.gather;
    for (c, l) in layouts.iter().enumerate() {
        let cols: Vec<&dyn Array> = parts.iter().map(|p| p.column(c).as_ref()).collect();
        let nulls: usize = cols.iter().map(|a| a.null_count()).sum();
        nodes.push(arrow_ipc::FieldNode::new(rows as i64, nulls as i64));
        // Validity: none written when there are no nulls (as arrow-ipc does).
        if nulls == 0 {
            sink.put(&[])?;
        } else {
            let mut bits = BooleanBufferBuilder::new(rows);
            for a in &cols {
                match a.nulls() {
                    Some(n) => bits.append_buffer(n.inner()),
                    None => bits.append_n(a.len(), true),
                }
            }
            sink.put(bits.as_slice())?;
        }
        match l {
            Layout::Fixed(w) => {
                let datas: Vec<_> = cols.iter().map(|a| a.to_data()).collect();
                let mut slices = Vec::with_capacity(datas.len());
                for d in &datas {
                    let buf = d
                        .buffers()
                        .first()
                        .ok_or_else(|| Error::internal("fixed-width column without values"))?;
                    let from = d.offset() * w;
                    let to = from + d.len() * w;
                    slices.push(buf.as_slice().get(from..to).ok_or_else(|| {
                        Error::internal("fixed-width column shorter than its length")
                    })?);
                }
                sink.put(gathered(&slices, gather))?;
            }
            Layout::Bool => {
                let mut bits = BooleanBufferBuilder::new(rows);
                for a in &cols {
                    let b = a
                        .as_any()
                        .downcast_ref::<arrow_array::BooleanArray>()
                        .ok_or_else(|| Error::internal("boolean column of another type"))?;
                    bits.append_buffer(b.values());
                }
                sink.put(bits.as_slice())?;
            }
            Layout::Bytes => {
                let datas: Vec<_> = cols.iter().map(|a| a.to_data()).collect();
                // Offsets rebased onto the concatenated values.
                gather.clear();
                gather.reserve((rows + 1) * 4);
                gather.extend_from_slice(&0i32.to_le_bytes());
                let mut base = 0usize;
                let mut values = Vec::with_capacity(datas.len());
                for d in &datas {
                    let (offsets, bytes) = offsets_and_values(d)?;
                    let first = offsets[0] as usize;
                    for o in &offsets[1..] {
                        let rel = usize::try_from(*o)
                            .ok()
                            .and_then(|o| o.checked_sub(first))
                            .ok_or_else(|| Error::internal("string column offsets decrease"))?;
                        let v = base + rel;
                        let v = i32::try_from(v).map_err(|_| {
                            Error::invalid(format!(
                                "string/binary column of {v} bytes does not fit in one Arrow batch"
                            ))
                        })?;
                        gather.extend_from_slice(&v.to_le_bytes());
                    }
                    let last = offsets[offsets.len() - 1] as usize;
                    values.push(bytes.get(first..last).ok_or_else(|| {
                        Error::internal("string column offsets beyond its values")
                    })?);
                    base += last - first;
                }
                sink.put(gather)?;
                sink.put(gathered(&values, gather))?;
            }
        }
    }
    let body_len = sink.out.len() - body_at;
    let metadata = header(
        &mut scratch.fbb,
        rows,
        &nodes,
        &buffers,
        body_len,
        level.is_some(),
    );
    let framed = framed_len(metadata.len());
    if framed == reserved {
        write_frame(&mut out[frame_at..body_at], metadata);
    } else {
        // Not expected (the size is fixed by the counts), but correct either way.
        let body = out.split_off(body_at);
        out.truncate(frame_at);
        out.resize(frame_at + framed, 0);
        write_frame(&mut out[frame_at..], metadata);
        out.extend_from_slice(&body);
    }
    Ok(())
}

/// The byte range of the values a Utf8/Binary array (slice) refers to.
fn value_range(a: &dyn Array) -> Option<(usize, usize)> {
    let d = a.to_data();
    let (offsets, _) = offsets_and_values(&d).ok()?;
    Some((offsets[0] as usize, offsets[offsets.len() - 1] as usize))
}

/// The i32 offsets (len + 1 of them, from the array's offset) and the values buffer of a
/// Utf8/Binary array.
fn offsets_and_values(d: &arrow_data::ArrayData) -> Result<(&[i32], &[u8])> {
    let bad = || Error::internal("string/binary column without offsets or values");
    let offsets: &[i32] = d.buffers().first().ok_or_else(bad)?.typed_data::<i32>();
    let offsets = offsets
        .get(d.offset()..d.offset() + d.len() + 1)
        .ok_or_else(bad)?;
    let values = d.buffers().get(1).map_or(&[][..], |b| b.as_slice());
    if offsets[0] < 0 || offsets[offsets.len() - 1] < offsets[0] {
        return Err(bad());
    }
    Ok((offsets, values))
}

/// The one slice itself, or all of them copied one after the other into `gather`.
fn gathered<'a>(slices: &[&'a [u8]], gather: &'a mut Vec<u8>) -> &'a [u8] {
    if let [one] = slices {
        return one;
    }
    gather.clear();
    for s in slices {
        gather.extend_from_slice(s);
    }
    gather
}

/// Writes body buffers into the output and records their place.
struct Sink<'a> {
    out: &'a mut Vec<u8>,
    body_at: usize,
    level: Option<i32>,
    zstd: &'a mut Option<(i32, zstd::bulk::Compressor<'static>)>,
    buffers: &'a mut Vec<arrow_ipc::Buffer>,
}

impl Sink<'_> {
    fn put(&mut self, input: &[u8]) -> Result<()> {
        let at = self.out.len();
        if let (Some(level), false) = (self.level, input.is_empty()) {
            self.out
                .extend_from_slice(&(input.len() as i64).to_le_bytes());
            if self.zstd.as_ref().is_none_or(|(l, _)| *l != level) {
                let c = zstd::bulk::Compressor::new(level)
                    .map_err(|e| Error::invalid(format!("bad ZSTD level {level}: {e}")))?;
                *self.zstd = Some((level, c));
            }
            let Some((_, compressor)) = self.zstd.as_mut() else {
                return Err(Error::internal("no ZSTD context"));
            };
            self.out
                .reserve(zstd::zstd_safe::compress_bound(input.len()));
            // A cursor at the end: a Vec alone is written from its start.
            let mut cursor = std::io::Cursor::new(&mut *self.out);
            cursor.set_position((at + 8) as u64);
            compressor
                .compress_to_buffer(input, &mut cursor)
                .map_err(|e| Error::internal(format!("zstd compression: {e}")))?;
            if self.out.len() - at > input.len() {
                // Compression did not pay: stored raw, as arrow-ipc does.
                self.out.truncate(at);
                self.out.extend_from_slice(&NOT_COMPRESSED.to_le_bytes());
                self.out.extend_from_slice(input);
            }
        } else {
            self.out.extend_from_slice(input);
        }
        let len = self.out.len() - at;
        self.out.resize(self.out.len() + pad(len), 0);
        self.buffers.push(arrow_ipc::Buffer::new(
            (at - self.body_at) as i64,
            len as i64,
        ));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::builder::{Int32Builder, ListBuilder};
    use arrow_array::{
        ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, FixedSizeBinaryArray,
        Float64Array, Int32Array, Int64Array, StringArray, TimestampMicrosecondArray,
    };
    use arrow_schema::{Field, Schema, TimeUnit};

    use super::super::log_batch::LogRecordBatch;
    use super::super::log_batch::{build_arrow_log_batch, build_arrow_log_batch_from_parts};
    use super::*;

    const COMPRESSIONS: [ArrowCompression; 4] = [
        ArrowCompression::None,
        ArrowCompression::Zstd { level: 3 },
        ArrowCompression::Zstd { level: 1 },
        ArrowCompression::Lz4Frame,
    ];

    /// A deterministic flat batch of every layout this module writes, with nulls in some
    /// columns and values that compress (ids, timestamps, words) next to values that do not.
    fn flat(rows: usize) -> RecordBatch {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let words = [
            "",
            "a",
            "fluss",
            "riverlet",
            "ünïcödé",
            "x".repeat(40).leak(),
        ];
        let r: Vec<u64> = (0..rows).map(|_| next()).collect();
        let cols: Vec<(&str, DataType, ArrayRef)> = vec![
            (
                "id",
                DataType::Int64,
                Arc::new(Int64Array::from_iter_values(0..rows as i64)),
            ),
            (
                "ts",
                DataType::Timestamp(TimeUnit::Microsecond, None),
                Arc::new(TimestampMicrosecondArray::from_iter_values(
                    (0..rows as i64).map(|i| 1_767_225_600_000_000 + i * 1000),
                )),
            ),
            (
                "n",
                DataType::Int32,
                Arc::new(Int32Array::from_iter(
                    r.iter().map(|v| (v % 7 != 0).then_some(*v as i32)),
                )),
            ),
            (
                "amount",
                DataType::Float64,
                Arc::new(Float64Array::from_iter(
                    r.iter()
                        .map(|v| (v % 100 != 3).then_some((*v >> 11) as f64 / 7.0)),
                )),
            ),
            (
                "word",
                DataType::Utf8,
                Arc::new(StringArray::from_iter(r.iter().map(|v| {
                    (v % 5 != 1).then_some(words[(*v >> 3) as usize % words.len()])
                }))),
            ),
            (
                "flag",
                DataType::Boolean,
                Arc::new(BooleanArray::from_iter(
                    r.iter().map(|v| (v % 3 != 0).then_some(v & 16 != 0)),
                )),
            ),
            (
                "bin",
                DataType::Binary,
                Arc::new(BinaryArray::from_iter_values(
                    r.iter()
                        .map(|v| v.to_le_bytes()[..(*v % 9) as usize].to_vec()),
                )),
            ),
            (
                "fixed",
                DataType::FixedSizeBinary(3),
                Arc::new(
                    FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                        r.iter()
                            .map(|v| (v % 4 != 0).then(|| v.to_le_bytes()[..3].to_vec())),
                        3,
                    )
                    .unwrap(),
                ),
            ),
            (
                "dec",
                DataType::Decimal128(20, 2),
                Arc::new(
                    Decimal128Array::from_iter_values(r.iter().map(|v| (*v >> 20) as i128))
                        .with_precision_and_scale(20, 2)
                        .unwrap(),
                ),
            ),
            (
                "day",
                DataType::Date32,
                Arc::new(Date32Array::from_iter_values(
                    (0..rows as i32).map(|i| i / 100),
                )),
            ),
        ];
        let schema = Schema::new(
            cols.iter()
                .map(|(n, t, _)| Field::new(*n, t.clone(), true))
                .collect::<Vec<_>>(),
        );
        RecordBatch::try_new(Arc::new(schema), cols.into_iter().map(|c| c.2).collect()).unwrap()
    }

    /// `batch` cut at `cuts` into slices (zero-copy, at offsets that are not multiples of 8).
    fn cut(batch: &RecordBatch, cuts: &[usize]) -> Vec<RecordBatch> {
        let mut out = Vec::new();
        let mut from = 0;
        for &to in cuts.iter().chain(std::iter::once(&batch.num_rows())) {
            out.push(batch.slice(from, to - from));
            from = to;
        }
        out
    }

    /// The parts' log batch is the one arrow-ipc writes for their concatenation, byte for
    /// byte, and decodes to the concatenated rows.
    fn assert_same_as_concat(parts: &[RecordBatch]) {
        let schema = parts[0].schema();
        let whole = arrow_select::concat::concat_batches(&schema, parts).unwrap();
        for c in COMPRESSIONS {
            let ours = build_arrow_log_batch_from_parts(5, parts, c, 77, 3).unwrap();
            let arrow = build_arrow_log_batch(5, &whole, c, None, 77, 3).unwrap();
            assert!(
                ours == arrow,
                "{c}: bytes differ from arrow-ipc's for {} parts",
                parts.len()
            );
            let view = LogRecordBatch::new(&ours).unwrap();
            view.ensure_valid().unwrap();
            assert_eq!(view.record_count() as usize, whole.num_rows());
            let (_, decoded) = view.arrow_records(&schema).unwrap();
            assert_eq!(decoded, whole, "{c}");
        }
    }

    #[test]
    fn parts_encode_as_their_concatenation() {
        let batch = flat(3000);
        // Slices at odd offsets (bitmaps shifted by bits), a one-row part, a large part.
        assert_same_as_concat(&cut(&batch, &[5, 13, 14, 700, 2047]));
        // One part: compressed straight from its buffers.
        assert_same_as_concat(&[batch.slice(3, 2990)]);
        assert_same_as_concat(std::slice::from_ref(&batch));
        // A part without nulls next to parts with nulls in the same columns.
        let no_nulls = RecordBatch::try_new(
            batch.schema(),
            batch
                .columns()
                .iter()
                .map(|c| {
                    let data = c.to_data().into_builder().nulls(None).build().unwrap();
                    arrow_array::make_array(data)
                })
                .collect(),
        )
        .unwrap();
        assert_same_as_concat(&[batch.slice(0, 9), no_nulls.slice(9, 100), batch.slice(9, 1)]);
    }

    #[test]
    fn incompressible_buffers_are_stored_raw() {
        // Random doubles do not compress: arrow-ipc stores them raw with length -1, and so do we.
        let batch = flat(64);
        let parts = cut(&batch.project(&[3]).unwrap(), &[31]);
        assert_same_as_concat(&parts);
    }

    #[test]
    fn nested_columns_and_lz4_take_the_concatenating_path() {
        let mut list = ListBuilder::new(Int32Builder::new());
        for i in 0..100 {
            list.values().append_value(i);
            list.values().append_value(i * 2);
            list.append(i % 10 != 0);
        }
        let list = list.finish();
        let schema = Arc::new(Schema::new(vec![Field::new(
            "l",
            list.data_type().clone(),
            true,
        )]));
        let batch = RecordBatch::try_new(schema, vec![Arc::new(list)]).unwrap();
        let mut out = Vec::new();
        assert!(
            !encode_arrow_parts_into(&cut(&batch, &[50]), ArrowCompression::zstd(), &mut out)
                .unwrap()
        );
        assert!(out.is_empty());
        assert!(
            !encode_arrow_parts_into(&[flat(10)], ArrowCompression::Lz4Frame, &mut out).unwrap()
        );
        assert_same_as_concat(&cut(&batch, &[3, 50]));
    }

    #[test]
    fn no_parts_or_no_rows() {
        assert_eq!(
            build_arrow_log_batch_from_parts(1, &[], ArrowCompression::zstd(), -1, -1)
                .unwrap_err()
                .kind(),
            crate::ErrorKind::InvalidArgument
        );
        let empty = flat(10).slice(0, 0);
        assert_same_as_concat(&[empty.clone(), empty]);
    }
}
