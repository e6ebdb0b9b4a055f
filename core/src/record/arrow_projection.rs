//! Cutting columns out of an encapsulated Arrow IPC RecordBatch message without decoding it:
//! what a projected fetch answers (Fluss's `FileLogProjection` does the same).
//!
//! A RecordBatch message lists its field nodes and buffers depth-first, field by field, and
//! compresses each buffer on its own (Arrow's only body compression is per buffer). So the
//! message of some top-level columns is their nodes and their buffers, copied as stored,
//! compressed or not, under a new flatbuffer header. Before this, a projected fetch decoded
//! every stored batch and encoded the projected columns again: on the embedded server, ZSTD
//! decompression and level-3 compression of the columns asked for, per fetch.

use arrow_ipc::MetadataVersion;
use arrow_schema::{DataType, SchemaRef};

use super::arrow_payload::{
    checked_record_batch, CheckedRecordBatch, CONTINUATION_MARKER, IPC_ALIGNMENT as ALIGNMENT,
};
use crate::{Error, Result};

/// The field nodes and buffers a column of type `dt` (its children included) takes in a
/// RecordBatch message, in the order the message lists them; `None` for a type whose layout is
/// not cut here (view types with their variadic buffers, unions, dictionaries, run-end encoded,
/// null), none of which Fluss's type mapping produces.
fn ipc_layout(dt: &DataType) -> Option<(usize, usize)> {
    use DataType as D;
    let (nodes, buffers) = match dt {
        D::Boolean
        | D::Int8
        | D::Int16
        | D::Int32
        | D::Int64
        | D::UInt8
        | D::UInt16
        | D::UInt32
        | D::UInt64
        | D::Float16
        | D::Float32
        | D::Float64
        | D::Decimal32(..)
        | D::Decimal64(..)
        | D::Decimal128(..)
        | D::Decimal256(..)
        | D::Date32
        | D::Date64
        | D::Time32(_)
        | D::Time64(_)
        | D::Timestamp(..)
        | D::Duration(_)
        | D::Interval(_)
        | D::FixedSizeBinary(_) => (1, 2),
        D::Utf8 | D::Binary | D::LargeUtf8 | D::LargeBinary => (1, 3),
        D::List(child) | D::LargeList(child) | D::Map(child, _) => {
            let (n, b) = ipc_layout(child.data_type())?;
            (1 + n, 2 + b)
        }
        D::FixedSizeList(child, _) => {
            let (n, b) = ipc_layout(child.data_type())?;
            (1 + n, 1 + b)
        }
        D::Struct(children) => children.iter().try_fold((1, 1), |(n, b), c| {
            let (cn, cb) = ipc_layout(c.data_type())?;
            Some((n + cn, b + cb))
        })?,
        _ => return None,
    };
    Some((nodes, buffers))
}

/// The encapsulated RecordBatch message at the start of `bytes`, written with `schema`, cut
/// down to its top-level columns at `fields` (indexes into `schema`, ascending): their field
/// nodes and buffers copied as stored, the message's compression kept. `None` when a column of
/// `schema` has a layout not cut here (view types, unions, dictionaries, null), or the
/// message's node or buffer count is not the one `schema` implies: the caller then decodes the
/// message instead (and a decode reports what is wrong with it). The message is checked as a
/// decode checks it first.
pub fn project_message(
    bytes: &[u8],
    schema: &SchemaRef,
    fields: &[usize],
) -> Result<Option<Vec<u8>>> {
    let CheckedRecordBatch {
        message,
        batch,
        body,
    } = checked_record_batch(bytes)?;
    let body = &bytes[body];
    if batch.variadicBufferCounts().is_some_and(|v| !v.is_empty()) {
        return Ok(None);
    }
    // Where each top-level column's nodes and buffers start, and how many it has.
    let mut spans = Vec::with_capacity(schema.fields().len());
    let (mut node_at, mut buffer_at) = (0usize, 0usize);
    for f in schema.fields() {
        let Some((nodes, buffers)) = ipc_layout(f.data_type()) else {
            return Ok(None);
        };
        spans.push((node_at, nodes, buffer_at, buffers));
        node_at += nodes;
        buffer_at += buffers;
    }
    let nodes_in: Vec<arrow_ipc::FieldNode> = batch
        .nodes()
        .map(|v| v.iter().copied().collect())
        .unwrap_or_default();
    let buffers_in: Vec<(i64, i64)> = batch
        .buffers()
        .map(|v| v.iter().map(|b| (b.offset(), b.length())).collect())
        .unwrap_or_default();
    if nodes_in.len() != node_at || buffers_in.len() != buffer_at {
        return Ok(None);
    }

    let mut nodes = Vec::new();
    let mut buffers = Vec::new();
    let mut out_body: Vec<u8> = Vec::with_capacity(body.len());
    let mut previous: Option<usize> = None;
    for &f in fields {
        if previous.is_some_and(|p| p >= f) {
            return Err(Error::invalid(format!(
                "projected fields {fields:?} are not ascending"
            )));
        }
        previous = Some(f);
        let &(n0, n, b0, k) = spans.get(f).ok_or_else(|| {
            Error::invalid(format!(
                "projected field {f} is out of range for a schema of {} fields",
                spans.len()
            ))
        })?;
        nodes.extend_from_slice(&nodes_in[n0..n0 + n]);
        for &(offset, length) in &buffers_in[b0..b0 + k] {
            // Within the body: checked_record_batch checked every buffer's range.
            let start = usize::try_from(offset).unwrap_or_default();
            let len = usize::try_from(length).unwrap_or_default();
            let source = body
                .get(start..start + len)
                .ok_or_else(|| Error::corrupt("arrow ipc: buffer outside the body"))?;
            let at = out_body.len().next_multiple_of(ALIGNMENT);
            out_body.resize(at, 0);
            out_body.extend_from_slice(source);
            buffers.push(arrow_ipc::Buffer::new(at as i64, len as i64));
        }
    }
    out_body.resize(out_body.len().next_multiple_of(ALIGNMENT), 0);

    let mut fbb = flatbuffers::FlatBufferBuilder::with_capacity(256 + 16 * buffers.len());
    let nodes = fbb.create_vector(&nodes);
    let buffers = fbb.create_vector(&buffers);
    let compression = batch.compression().map(|c| {
        arrow_ipc::BodyCompression::create(
            &mut fbb,
            &arrow_ipc::BodyCompressionArgs {
                codec: c.codec(),
                method: c.method(),
            },
        )
    });
    let record_batch = arrow_ipc::RecordBatch::create(
        &mut fbb,
        &arrow_ipc::RecordBatchArgs {
            length: batch.length(),
            nodes: Some(nodes),
            buffers: Some(buffers),
            compression,
            variadicBufferCounts: None,
        },
    );
    let version: MetadataVersion = message.version();
    let root = arrow_ipc::Message::create(
        &mut fbb,
        &arrow_ipc::MessageArgs {
            version,
            header_type: arrow_ipc::MessageHeader::RecordBatch,
            header: Some(record_batch.as_union_value()),
            bodyLength: out_body.len() as i64,
            custom_metadata: None,
        },
    );
    fbb.finish(root, None);
    let meta = fbb.finished_data();
    // Encapsulated: marker, metadata length (padding included, so the body starts aligned),
    // metadata, padding, body.
    let meta_len = (8 + meta.len()).next_multiple_of(ALIGNMENT) - 8;
    let meta_len_i32 = i32::try_from(meta_len)
        .map_err(|_| Error::internal("projected arrow ipc metadata over 2 GiB"))?;
    let mut out = Vec::with_capacity(8 + meta_len + out_body.len());
    out.extend_from_slice(&CONTINUATION_MARKER.to_le_bytes());
    out.extend_from_slice(&meta_len_i32.to_le_bytes());
    out.extend_from_slice(meta);
    out.resize(8 + meta_len, 0);
    out.extend_from_slice(&out_body);
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::builder::{Int64Builder, MapBuilder, StringBuilder};
    use arrow_array::{
        ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, FixedSizeBinaryArray,
        Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, Int8Array, ListArray,
        RecordBatch, StringArray, StringViewArray, StructArray, TimestampMicrosecondArray,
    };
    use arrow_schema::{Field, Fields, Schema};

    use super::*;
    use crate::record::arrow_payload::{decode_arrow_batch, encode_arrow_batch, ArrowCompression};
    use crate::record::change_type::ChangeType;
    use crate::record::log_batch::{
        build_arrow_log_batch, project_arrow_batches, set_base_offset, LogRecordBatch,
    };
    use crate::ErrorKind;

    /// One column of every type Fluss maps to Arrow, nested ones included, each with nulls.
    fn every_type() -> RecordBatch {
        let rows = 7;
        let some = |i: usize| i % 3 != 1;
        let mut map = MapBuilder::new(None, StringBuilder::new(), Int64Builder::new());
        for i in 0..rows {
            if some(i) {
                for k in 0..i % 3 {
                    map.keys().append_value(format!("k{k}"));
                    map.values().append_value((i * 10 + k) as i64);
                }
            }
            map.append(some(i)).unwrap();
        }
        let list = ListArray::from_iter_primitive::<arrow_array::types::Int32Type, _, _>(
            (0..rows).map(|i| some(i).then(|| (0..i as i32).map(|v| (v != 2).then_some(v)))),
        );
        let strukt = StructArray::from(vec![
            (
                Arc::new(Field::new("a", DataType::Int32, true)),
                Arc::new(Int32Array::from_iter(
                    (0..rows).map(|i| some(i).then_some(i as i32)),
                )) as ArrayRef,
            ),
            (
                Arc::new(Field::new("b", DataType::Utf8, true)),
                Arc::new(StringArray::from_iter(
                    (0..rows).map(|i| (i % 2 == 0).then(|| format!("s{i}"))),
                )) as ArrayRef,
            ),
        ]);
        let columns: Vec<ArrayRef> = vec![
            Arc::new(BooleanArray::from_iter(
                (0..rows).map(|i| some(i).then_some(i % 2 == 0)),
            )),
            Arc::new(Int8Array::from_iter(
                (0..rows).map(|i| some(i).then_some(i as i8)),
            )),
            Arc::new(Int16Array::from_iter(
                (0..rows).map(|i| some(i).then_some(-(i as i16))),
            )),
            Arc::new(Int32Array::from_iter(
                (0..rows).map(|i| some(i).then_some(i as i32 * 7)),
            )),
            Arc::new(Int64Array::from_iter(
                (0..rows).map(|i| some(i).then_some((i as i64) << 40)),
            )),
            Arc::new(Float32Array::from_iter(
                (0..rows).map(|i| some(i).then_some(i as f32 / 4.0)),
            )),
            Arc::new(Float64Array::from_iter(
                (0..rows).map(|i| some(i).then_some(i as f64 * 1.5)),
            )),
            Arc::new(
                Decimal128Array::from_iter((0..rows).map(|i| some(i).then_some(i as i128 * 101)))
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
            Arc::new(Date32Array::from_iter(
                (0..rows).map(|i| some(i).then_some(i as i32 - 3)),
            )),
            Arc::new(TimestampMicrosecondArray::from_iter(
                (0..rows).map(|i| some(i).then_some(i as i64 * 1_000_001)),
            )),
            Arc::new(StringArray::from_iter(
                (0..rows).map(|i| some(i).then(|| "x".repeat(i))),
            )),
            Arc::new(BinaryArray::from_iter(
                (0..rows).map(|i| some(i).then(|| vec![i as u8; i])),
            )),
            Arc::new(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                    (0..rows).map(|i| some(i).then_some([i as u8; 4])),
                    4,
                )
                .unwrap(),
            ),
            Arc::new(list),
            Arc::new(map.finish()),
            Arc::new(strukt),
        ];
        let fields: Vec<Field> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| Field::new(format!("c{i}"), c.data_type().clone(), true))
            .collect();
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
    }

    /// The byte ranges of the buffers of an encapsulated message's body.
    fn buffers_of(bytes: &[u8]) -> Vec<Vec<u8>> {
        let m = checked_record_batch(bytes).unwrap();
        let body = &bytes[m.body];
        m.batch
            .buffers()
            .unwrap()
            .iter()
            .map(|b| body[b.offset() as usize..(b.offset() + b.length()) as usize].to_vec())
            .collect()
    }

    #[test]
    fn projected_messages_decode_to_arrow_s_own_projection_for_every_type() {
        let batch = every_type();
        let schema = batch.schema();
        let n = schema.fields().len();
        let projections: Vec<Vec<usize>> = vec![
            vec![0],
            vec![n - 1],
            vec![3, 10],
            vec![1, 7, 9, 12, 13, 14],
            (0..n).collect(),
            (0..n).filter(|i| i % 2 == 1).collect(),
        ];
        for compression in [ArrowCompression::zstd(), ArrowCompression::None] {
            let bytes = encode_arrow_batch(&batch, compression).unwrap();
            let all = buffers_of(&bytes);
            for fields in &projections {
                let cut = project_message(&bytes, &schema, fields)
                    .unwrap()
                    .unwrap_or_else(|| panic!("{fields:?} not cut"));
                let want = batch.project(fields).unwrap();
                let got = decode_arrow_batch(&cut, &want.schema()).unwrap();
                assert_eq!(got, want, "{compression} {fields:?}");
                // Copied as stored: every buffer of the cut message is one of the source's,
                // in order, compressed bytes and all.
                let kept = buffers_of(&cut);
                let mut source = all.iter();
                assert!(
                    kept.iter().all(|k| source.any(|s| s == k)),
                    "{compression} {fields:?}: a buffer was re-encoded"
                );
            }
        }
    }

    #[test]
    fn bad_projections_are_invalid_and_other_layouts_are_left_to_the_decoder() {
        let batch = every_type();
        let schema = batch.schema();
        let bytes = encode_arrow_batch(&batch, ArrowCompression::zstd()).unwrap();
        for fields in [vec![3, 1], vec![2, 2], vec![schema.fields().len()]] {
            let err = project_message(&bytes, &schema, &fields).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{fields:?}");
        }
        // A schema with one column more than the message: not cut (a decode reports it).
        let mut wider: Vec<Arc<Field>> = schema.fields().iter().cloned().collect();
        wider.push(Arc::new(Field::new("extra", DataType::Int32, true)));
        let wider = Arc::new(Schema::new(Fields::from(wider)));
        assert!(project_message(&bytes, &wider, &[0]).unwrap().is_none());
        // View types carry variadic buffers: not cut.
        let views = RecordBatch::try_from_iter([
            ("id", Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef),
            (
                "v",
                Arc::new(StringViewArray::from(vec![
                    "a",
                    "a string longer than twelve",
                ])) as ArrayRef,
            ),
        ])
        .unwrap();
        let bytes = encode_arrow_batch(&views, ArrowCompression::zstd()).unwrap();
        assert!(project_message(&bytes, &views.schema(), &[0])
            .unwrap()
            .is_none());
        // Not a message at all.
        let err = project_message(&[1, 2, 3], &schema, &[0]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corrupt);
    }

    #[test]
    fn projected_log_batches_keep_their_header_fields_and_change_types() {
        let batch = every_type();
        let schema = batch.schema();
        let types: Vec<ChangeType> = (0..batch.num_rows())
            .map(|i| {
                [
                    ChangeType::Insert,
                    ChangeType::UpdateBefore,
                    ChangeType::UpdateAfter,
                    ChangeType::Delete,
                ][i % 4]
            })
            .collect();
        let mut first =
            build_arrow_log_batch(3, &batch, ArrowCompression::zstd(), Some(&types), 77, 5)
                .unwrap();
        set_base_offset(&mut first, 100).unwrap();
        let mut second =
            build_arrow_log_batch(3, &batch, ArrowCompression::zstd(), None, -1, -1).unwrap();
        set_base_offset(&mut second, 107).unwrap();
        let stored = [first.clone(), second.clone()].concat();
        let fields = [2, 13, 15];
        let schema_of = |id: i16| {
            assert_eq!(id, 3);
            Ok(schema.clone())
        };
        let out =
            project_arrow_batches(&stored, &schema_of, &fields, ArrowCompression::None).unwrap();
        let want = batch.project(&fields).unwrap();
        let mut at = 0;
        for (source, change_types) in [(&first, Some(types.clone())), (&second, None)] {
            let s = LogRecordBatch::new(source).unwrap();
            let p = LogRecordBatch::new(&out[at..]).unwrap();
            at += p.size_in_bytes();
            assert_eq!(p.base_offset(), s.base_offset());
            assert_eq!(p.record_count(), s.record_count());
            assert_eq!(
                (p.writer_id(), p.batch_sequence()),
                (s.writer_id(), s.batch_sequence())
            );
            assert_eq!(p.crc(), s.crc());
            let (ct, rows) = p.arrow_records(&want.schema()).unwrap();
            assert_eq!(ct, change_types);
            assert_eq!(rows, want);
        }
        assert_eq!(at, out.len());
    }
}
