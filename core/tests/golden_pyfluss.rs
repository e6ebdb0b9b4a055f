//! Golden tests against request frames the official client wrote.
//!
//! Every `.bin` under `core/tests/golden/` is one whole request frame captured from pyfluss
//! 1.0.0 (the official Apache Fluss Python client, a binding of fluss-rust) by
//! `tests/interop/capture_golden.py`; the `.md` beside each says what it holds. These tests
//! decode those bytes with Riverlet's codecs and check every field, so a codec that drifts from
//! what the official client writes fails here.

use std::sync::Arc;

use arrow_array::{Array, Float64Array, Int32Array, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema as ArrowSchema};
use prost::Message;
use riverlet::proto;
use riverlet::record::{KvRecordBatch, LogBatchIter, LogRecordBatch};
use riverlet::rpc::frame::decode_request_header;

fn golden(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("read {path}: {e}"))
}

/// Strips the 4-byte big-endian length prefix, checking it against the file's size.
fn frame_without_length(bytes: &[u8]) -> &[u8] {
    let len = u32::from_be_bytes(bytes[..4].try_into().unwrap()) as usize;
    assert_eq!(len, bytes.len() - 4, "length prefix excludes itself");
    &bytes[4..]
}

#[test]
fn api_versions_request_frame_decodes() {
    let bytes = golden("pyfluss_api_versions_request.bin");
    let (header, body) = decode_request_header(frame_without_length(&bytes)).unwrap();
    assert_eq!(header.api_key, 1000);
    assert_eq!(header.api_version, 0);
    assert_eq!(header.request_id, 0);
    let req = proto::ApiVersionsRequest::decode(body).unwrap();
    assert_eq!(req.client_software_name, "fluss-rust");
    assert_eq!(req.client_software_version, "1.0.0");
    // Our encoder writes the same bytes for the same message.
    let ours = riverlet::rpc::frame::encode_request(1000, 0, 0, &req).unwrap();
    assert_eq!(ours, bytes);
}

#[test]
fn produce_log_arrow_batch_from_pyfluss_decodes() {
    let bytes = golden("pyfluss_produce_log_request.bin");
    let (header, body) = decode_request_header(frame_without_length(&bytes)).unwrap();
    assert_eq!(
        (header.api_key, header.api_version, header.request_id),
        (1014, 0, 3)
    );
    let req = proto::ProduceLogRequest::decode(body).unwrap();
    assert_eq!(req.acks, -1);
    assert_eq!(req.table_id, 100);
    assert_eq!(req.timeout_ms, 30000);
    assert_eq!(req.buckets_req.len(), 1);
    let records = &req.buckets_req[0].records;
    assert_eq!(records.len(), 816);

    let batch = LogRecordBatch::new(records).unwrap();
    assert_eq!(batch.magic(), 0);
    assert_eq!(batch.base_offset(), 0);
    assert_eq!(batch.length(), 804);
    assert_eq!(batch.commit_timestamp(), 0);
    assert_eq!(batch.crc(), 0x154a_1962);
    assert!(batch.is_valid(), "CRC-32C over [25, end) matches pyfluss's");
    assert_eq!(batch.schema_id(), 1);
    assert!(batch.is_append_only());
    assert_eq!(batch.last_offset_delta(), 2);
    assert_eq!(batch.writer_id(), 7);
    assert_eq!(batch.batch_sequence(), 0);
    assert_eq!(batch.record_count(), 3);
    assert_eq!(LogBatchIter::new(records).count(), 1);

    // golden_db.log_t: id INT, name STRING, score DOUBLE, all nullable.
    let schema = Arc::new(ArrowSchema::new(vec![
        Field::new("id", ArrowType::Int32, true),
        Field::new("name", ArrowType::Utf8, true),
        Field::new("score", ArrowType::Float64, true),
    ]));
    let (change_types, rb) = batch.arrow_records(&schema).unwrap();
    assert!(change_types.is_none());
    assert_eq!(rb.num_rows(), 3);
    let id = rb.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
    let name = rb.column(1).as_any().downcast_ref::<StringArray>().unwrap();
    let score = rb
        .column(2)
        .as_any()
        .downcast_ref::<Float64Array>()
        .unwrap();
    assert_eq!(id.values().to_vec(), vec![1, 2, 3]);
    assert_eq!(
        (name.value(0), name.value(1), name.is_null(2)),
        ("a", "b", true)
    );
    assert_eq!(
        (score.value(0), score.value(1), score.is_null(2)),
        (1.5, 2.5, true)
    );
}

#[test]
fn put_kv_batches_from_pyfluss_decode() {
    // pk_t(id INT PK, name STRING, qty BIGINT): two upserts, then a delete of id=2.
    let bytes = golden("pyfluss_put_kv_upsert_request.bin");
    let (header, body) = decode_request_header(frame_without_length(&bytes)).unwrap();
    assert_eq!((header.api_key, header.api_version), (1016, 2));
    let req = proto::PutKvRequest::decode(body).unwrap();
    assert_eq!(req.table_id, 101);
    assert!(req.target_columns.is_empty());
    let kv = KvRecordBatch::new(&req.buckets_req[0].records).unwrap();
    assert!(kv.is_valid());
    assert_eq!(kv.schema_id(), 1);
    assert_eq!(kv.writer_id(), 7);
    let recs: Vec<_> = kv.records().map(|r| r.unwrap()).collect();
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[0].key, &[0x01]);
    assert_eq!(recs[0].value, Some(&[0x00, 0x01, 0x01, 0x78, 0x0a][..]));
    assert_eq!(recs[1].key, &[0x02]);
    assert_eq!(recs[1].value, Some(&[0x00, 0x02, 0x01, 0x79, 0x14][..]));
    // Our builder writes the very same bytes for the same records.
    let mut ours = riverlet::record::KvBatchBuilder::new(kv.schema_id());
    for r in &recs {
        ours.append(r.key, r.value).unwrap();
    }
    assert_eq!(
        ours.build(kv.writer_id(), kv.batch_sequence()),
        req.buckets_req[0].records.to_vec()
    );

    let bytes = golden("pyfluss_put_kv_delete_request.bin");
    let (_, body) = decode_request_header(frame_without_length(&bytes)).unwrap();
    let req = proto::PutKvRequest::decode(body).unwrap();
    let kv = KvRecordBatch::new(&req.buckets_req[0].records).unwrap();
    assert!(kv.is_valid());
    let recs: Vec<_> = kv.records().map(|r| r.unwrap()).collect();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].key, &[0x02]);
    assert_eq!(
        recs[0].value, None,
        "a record without row bytes is a delete"
    );

    let bytes = golden("pyfluss_put_kv_partial_update_request.bin");
    let (_, body) = decode_request_header(frame_without_length(&bytes)).unwrap();
    let req = proto::PutKvRequest::decode(body).unwrap();
    assert_eq!(req.target_columns, vec![0, 2]);
}

#[test]
fn create_table_json_and_kv_rows_from_pyfluss_decode() {
    use riverlet::metadata::TableDescriptor;
    use riverlet::row::{decode_compacted_row, Datum};

    let bytes = golden("pyfluss_create_table_pk_request.bin");
    let (header, body) = decode_request_header(frame_without_length(&bytes)).unwrap();
    assert_eq!(header.api_key, 1005);
    let req = proto::CreateTableRequest::decode(body).unwrap();
    let desc = TableDescriptor::from_json(&req.table_json).unwrap();
    assert_eq!(desc.bucket_count, Some(1));
    assert_eq!(desc.bucket_keys, vec!["id".to_string()]);
    assert!(desc.has_primary_key());
    let names: Vec<_> = desc
        .schema
        .columns
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["id", "name", "qty"]);
    assert!(
        !desc.schema.columns[0].data_type.nullable,
        "PK column is NOT NULL"
    );

    // The upsert rows of the PutKv capture are CompactedRows of (id, name, qty).
    let types = desc.schema.data_types();
    let row = decode_compacted_row(&types, &[0x00, 0x01, 0x01, 0x78, 0x0a]).unwrap();
    assert_eq!(
        row,
        vec![Datum::Int(1), Datum::String("x".into()), Datum::BigInt(10)]
    );
    let ours = riverlet::row::encode_compacted_row(&types, &row).unwrap();
    assert_eq!(ours, [0x00, 0x01, 0x01, 0x78, 0x0a]);
    // The partial update (id, qty=11) leaves name null in the bitset.
    let partial = decode_compacted_row(&types, &[0x02, 0x01, 0x0b]).unwrap();
    assert_eq!(partial, vec![Datum::Int(1), Datum::Null, Datum::BigInt(11)]);
}
