//! Hostile record batches over the real wire: every produced log batch and every KV batch is
//! validated before anything is stored, rejected with Fluss's error code, and a valid write
//! still works (at the offset it would have had) afterwards.

use crate::common;

use std::sync::Arc;

use arrow_array::{Int32Array, Int64Array, RecordBatch};
use common::*;
use riverlet::error::codes as error_codes;
use riverlet::metadata::DataType;
use riverlet::proto::*;
use riverlet::record::arrow_payload::ArrowCompression;
use riverlet::record::kv_batch::{KvBatchBuilder, KV_CRC_OFFSET, KV_SCHEMA_ID_OFFSET};
use riverlet::record::log_batch::{build_arrow_log_batch, LogRecordBatch};
use riverlet::row::{encode_compacted_row, encode_key, Datum};
use riverlet::rpc::ServerConnection;

/// Overwrites `bytes` at `at` in a log batch and recomputes its CRC, so only the field is wrong.
fn patch_log(
    mut batch: Vec<u8>,
    field: impl Fn(&riverlet::record::log_batch::BatchLayout) -> usize,
    bytes: &[u8],
) -> Vec<u8> {
    let layout = *LogRecordBatch::new(&batch).unwrap().format().layout();
    let at = field(&layout);
    batch[at..at + bytes.len()].copy_from_slice(bytes);
    let crc = crc32c::crc32c(&batch[layout.schema_id..]);
    batch[layout.crc..layout.crc + 4].copy_from_slice(&crc.to_le_bytes());
    batch
}

/// Replaces the payload after the header (and fixes length and CRC).
fn with_payload(batch: Vec<u8>, payload: &[u8]) -> Vec<u8> {
    let layout = *LogRecordBatch::new(&batch).unwrap().format().layout();
    let mut out = batch[..layout.header_size].to_vec();
    out.extend_from_slice(payload);
    let len = (out.len() - 12) as i32;
    out[8..12].copy_from_slice(&len.to_le_bytes());
    let crc = crc32c::crc32c(&out[layout.schema_id..]);
    out[layout.crc..layout.crc + 4].copy_from_slice(&crc.to_le_bytes());
    out
}

fn payload(batch: &[u8]) -> Vec<u8> {
    LogRecordBatch::new(batch).unwrap().records().to_vec()
}

async fn expect_rejected(conn: &ServerConnection, tid: i64, batch: Vec<u8>, code: i32, what: &str) {
    match produce(conn, tid, 0, batch).await {
        Ok(off) => panic!("{what}: accepted at offset {off}"),
        Err((c, msg)) => assert_eq!(
            c,
            code,
            "{what}: got {} ({msg}), expected {}",
            error_codes::name_of(c),
            error_codes::name_of(code)
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_log_batches_are_rejected_and_offsets_do_not_move() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.segment_bytes = 64 * 1024;
    let srv = start(cfg);
    let conn = connect(&srv.bootstrap_servers()).await;
    let tid = create_table(&conn, "hostile_log", log_schema(), 1, &[]).await;
    assert_eq!(
        produce(&conn, tid, 0, log_batch(&[1, 2], -1, -1)).await,
        Ok(0)
    );

    let ok = || log_batch(&[10, 11, 12], -1, -1);
    let delta = |l: &riverlet::record::log_batch::BatchLayout| l.last_offset_delta;
    let count = |l: &riverlet::record::log_batch::BatchLayout| l.record_count;
    let schema = |l: &riverlet::record::log_batch::BatchLayout| l.schema_id;
    let corrupt = error_codes::CORRUPT_RECORD_EXCEPTION;
    let cases: Vec<(&str, Vec<u8>, i32)> = vec![
        (
            "negative LastOffsetDelta",
            patch_log(ok(), delta, &(-5i32).to_le_bytes()),
            corrupt,
        ),
        (
            "huge LastOffsetDelta",
            patch_log(ok(), delta, &i32::MAX.to_le_bytes()),
            corrupt,
        ),
        (
            "LastOffsetDelta past the records",
            patch_log(ok(), delta, &3i32.to_le_bytes()),
            corrupt,
        ),
        (
            "record count above the Arrow rows",
            patch_log(
                patch_log(ok(), count, &4i32.to_le_bytes()),
                delta,
                &3i32.to_le_bytes(),
            ),
            corrupt,
        ),
        (
            "record count below the Arrow rows",
            patch_log(
                patch_log(ok(), count, &1i32.to_le_bytes()),
                delta,
                &0i32.to_le_bytes(),
            ),
            corrupt,
        ),
        (
            "unknown schema id",
            patch_log(ok(), schema, &7i16.to_le_bytes()),
            error_codes::SCHEMA_NOT_EXIST,
        ),
        (
            "schema id 0",
            patch_log(ok(), schema, &0i16.to_le_bytes()),
            error_codes::SCHEMA_NOT_EXIST,
        ),
        (
            "negative schema id",
            patch_log(ok(), schema, &(-1i16).to_le_bytes()),
            error_codes::SCHEMA_NOT_EXIST,
        ),
        (
            "garbage Arrow payload",
            with_payload(ok(), &[0xAB; 64]),
            corrupt,
        ),
        (
            "truncated Arrow payload",
            {
                let p = payload(&ok());
                with_payload(ok(), &p[..p.len() / 2])
            },
            corrupt,
        ),
        (
            "Arrow payload of another schema",
            {
                let other = RecordBatch::try_from_iter([
                    ("a", Arc::new(Int64Array::from(vec![1i64, 2, 3])) as _),
                    ("b", Arc::new(Int64Array::from(vec![4i64, 5, 6])) as _),
                    ("c", Arc::new(Int32Array::from(vec![7, 8, 9])) as _),
                ])
                .unwrap();
                build_arrow_log_batch(1, &other, ArrowCompression::None, None, -1, -1).unwrap()
            },
            corrupt,
        ),
        (
            "bad CRC",
            {
                let mut b = ok();
                let last = b.len() - 1;
                b[last] ^= 0xFF;
                b
            },
            corrupt,
        ),
        (
            "trailing bytes after the batch",
            {
                let mut b = ok();
                b.extend_from_slice(&[1, 2, 3]);
                b
            },
            corrupt,
        ),
        (
            "negative length field",
            {
                let mut b = ok();
                b[8..12].copy_from_slice(&(-100i32).to_le_bytes());
                b
            },
            corrupt,
        ),
    ];
    for (what, batch, code) in cases {
        expect_rejected(&conn, tid, batch, code, what).await;
    }

    // Nothing was stored: the next valid batch lands right after the first one.
    assert_eq!(produce(&conn, tid, 0, ok()).await, Ok(2));
    let got = fetch_all(&conn, tid, 0, 0, &log_schema().to_arrow()).await;
    assert_eq!(ids_of(&got), vec![1, 2, 10, 11, 12]);
    let offsets: Vec<(i64, i64)> = got.iter().map(|f| (f.base_offset, f.next_offset)).collect();
    assert_eq!(offsets, vec![(0, 2), (2, 5)]);

    // A batch larger than a segment is no hostile batch: Fluss's tablet server takes it (the
    // log rolls; the batch gets a segment of its own), and so does this one.
    let big: Vec<i32> = (0..20_000).collect();
    let batch = log_batch(&big, -1, -1);
    assert!(batch.len() > 64 * 1024);
    assert_eq!(produce(&conn, tid, 0, batch).await, Ok(5));
    assert_eq!(produce(&conn, tid, 0, ok()).await, Ok(20_005));
    let got = fetch_all(&conn, tid, 0, 0, &log_schema().to_arrow()).await;
    let want: Vec<i32> = [1, 2, 10, 11, 12]
        .into_iter()
        .chain(big)
        .chain([10, 11, 12])
        .collect();
    assert!(ids_of(&got) == want, "the rows after the large batch");
    srv.shutdown().unwrap();
}

/// A ProduceLog request mixing a valid and a hostile bucket: the valid one is stored, the
/// hostile one is answered with its own error code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_bucket_does_not_fail_its_neighbours() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(config(dir.path()));
    let conn = connect(&srv.bootstrap_servers()).await;
    let tid = create_table(&conn, "two_buckets", log_schema(), 2, &[]).await;
    let bad = patch_log(
        log_batch(&[5], -1, -1),
        |l| l.last_offset_delta,
        &(-1i32).to_le_bytes(),
    );
    let r = conn
        .request(&ProduceLogRequest {
            acks: -1,
            table_id: tid,
            timeout_ms: 10_000,
            buckets_req: vec![
                PbProduceLogReqForBucket {
                    partition_id: None,
                    bucket_id: 0,
                    records: bad.into(),
                },
                PbProduceLogReqForBucket {
                    partition_id: None,
                    bucket_id: 1,
                    records: log_batch(&[6], -1, -1).into(),
                },
            ],
        })
        .await
        .unwrap();
    assert_eq!(
        r.buckets_resp[0].error_code,
        Some(error_codes::CORRUPT_RECORD_EXCEPTION)
    );
    assert_eq!(r.buckets_resp[1].error_code, None);
    assert_eq!(r.buckets_resp[1].base_offset, Some(0));
    srv.shutdown().unwrap();
}

fn key(k: i32) -> Vec<u8> {
    encode_key(&[DataType::int().not_null()], &[Datum::Int(k)]).unwrap()
}

fn pk_types() -> Vec<DataType> {
    pk_schema()
        .columns
        .iter()
        .map(|c| c.data_type.clone())
        .collect()
}

fn pk_row(k: i32, name: &str) -> Vec<u8> {
    encode_compacted_row(&pk_types(), &[Datum::Int(k), Datum::String(name.into())]).unwrap()
}

fn kv_batch(records: &[(Vec<u8>, Option<Vec<u8>>)]) -> Vec<u8> {
    let mut b = KvBatchBuilder::new(1);
    for (k, r) in records {
        b.append(k, r.as_deref()).unwrap();
    }
    b.build(-1, -1)
}

fn fix_kv_crc(mut b: Vec<u8>) -> Vec<u8> {
    let crc = crc32c::crc32c(&b[KV_SCHEMA_ID_OFFSET..]);
    b[KV_CRC_OFFSET..KV_CRC_OFFSET + 4].copy_from_slice(&crc.to_le_bytes());
    b
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_kv_batches_are_rejected_and_state_is_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(config(dir.path()));
    let conn = connect(&srv.bootstrap_servers()).await;
    let tid = create_table(&conn, "hostile_kv", pk_schema(), 1, &[]).await;
    assert_eq!(
        put_kv(
            &conn,
            tid,
            kv_batch(&[(key(1), Some(pk_row(1, "a")))]),
            vec![]
        )
        .await,
        Ok(1)
    );

    let corrupt = error_codes::CORRUPT_RECORD_EXCEPTION;
    let good = || kv_batch(&[(key(2), Some(pk_row(2, "b")))]);
    let cases: Vec<(&str, Vec<u8>, i32)> = vec![
        (
            "row that is not a CompactedRow",
            kv_batch(&[(key(2), Some(vec![0xFF; 3]))]),
            corrupt,
        ),
        (
            "row of another schema",
            kv_batch(&[(
                key(2),
                Some(
                    encode_compacted_row(
                        &[DataType::bigint(), DataType::bigint(), DataType::bigint()],
                        &[Datum::BigInt(1), Datum::BigInt(2), Datum::BigInt(3)],
                    )
                    .unwrap(),
                ),
            )]),
            corrupt,
        ),
        (
            "empty key",
            kv_batch(&[(Vec::new(), Some(pk_row(2, "b")))]),
            corrupt,
        ),
        (
            "unknown schema id",
            {
                let mut b = good();
                b[KV_SCHEMA_ID_OFFSET..KV_SCHEMA_ID_OFFSET + 2]
                    .copy_from_slice(&9i16.to_le_bytes());
                fix_kv_crc(b)
            },
            error_codes::SCHEMA_NOT_EXIST,
        ),
        (
            "bad CRC",
            {
                let mut b = good();
                let last = b.len() - 1;
                b[last] ^= 0x55;
                b
            },
            corrupt,
        ),
        (
            "trailing bytes",
            {
                let mut b = good();
                b.extend_from_slice(&[0; 9]);
                b
            },
            corrupt,
        ),
        (
            "record count above the records",
            {
                let mut b = good();
                let at = riverlet::record::kv_batch::KV_RECORD_COUNT_OFFSET;
                b[at..at + 4].copy_from_slice(&5i32.to_le_bytes());
                fix_kv_crc(b)
            },
            corrupt,
        ),
        (
            "negative record count",
            {
                let mut b = good();
                let at = riverlet::record::kv_batch::KV_RECORD_COUNT_OFFSET;
                b[at..at + 4].copy_from_slice(&(-3i32).to_le_bytes());
                fix_kv_crc(b)
            },
            corrupt,
        ),
    ];
    for (what, batch, code) in cases {
        match put_kv(&conn, tid, batch, vec![]).await {
            Ok(leo) => panic!("{what}: accepted (log end offset {leo})"),
            Err((c, msg)) => assert_eq!(
                c,
                code,
                "{what}: got {} ({msg}), expected {}",
                error_codes::name_of(c),
                error_codes::name_of(code)
            ),
        }
    }
    // The changelog did not move: the valid write is offset 1.
    assert_eq!(put_kv(&conn, tid, good(), vec![]).await, Ok(2));
    let r = conn
        .request(&LookupRequest {
            table_id: tid,
            buckets_req: vec![PbLookupReqForBucket {
                partition_id: None,
                bucket_id: 0,
                keys: vec![key(1), key(2)],
                original_partition_name: None,
            }],
            ..Default::default()
        })
        .await
        .unwrap();
    let found: Vec<bool> = r.buckets_resp[0]
        .values
        .iter()
        .map(|v| v.values.is_some())
        .collect();
    assert_eq!(found, vec![true, true]);
    srv.shutdown().unwrap();
}

/// Reads one response frame; its request id.
async fn response_id(s: &mut tokio::net::TcpStream) -> i32 {
    use tokio::io::AsyncReadExt;
    let mut len = [0u8; 4];
    s.read_exact(&mut len).await.unwrap();
    let mut body = vec![0u8; i32::from_be_bytes(len) as usize];
    s.read_exact(&mut body).await.unwrap();
    i32::from_be_bytes(body[1..5].try_into().unwrap())
}

/// With one request in flight per connection, a pipelined ApiVersions waits behind a
/// long-polling fetch: responses come back in request order. (Without the bound ApiVersions
/// would be answered while the fetch still waits.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_flight_requests_per_connection_are_bounded() {
    use tokio::io::AsyncWriteExt;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.max_in_flight_per_connection = 1;
    let srv = start(cfg);
    let conn = connect(&srv.bootstrap_servers()).await;
    let tid = create_table(&conn, "inflight", log_schema(), 1, &[]).await;
    let fetch = FetchLogRequest {
        follower_server_id: -1,
        max_bytes: 1024 * 1024,
        tables_req: vec![PbFetchLogReqForTable {
            table_id: tid,
            buckets_req: vec![PbFetchLogReqForBucket {
                partition_id: None,
                bucket_id: 0,
                fetch_offset: 0,
                max_fetch_bytes: 1024 * 1024,
            }],
            ..Default::default()
        }],
        max_wait_ms: Some(1500),
        min_bytes: Some(1),
        ..Default::default()
    };
    use prost::Message;
    let mut s = tokio::net::TcpStream::connect(srv.local_addr())
        .await
        .unwrap();
    let f1 =
        riverlet::rpc::frame::encode_request_frame(1015, 0, 1, &fetch.encode_to_vec()).unwrap();
    let f2 = riverlet::rpc::frame::encode_request_frame(1000, 0, 2, &[]).unwrap();
    s.write_all(&f1).await.unwrap();
    s.write_all(&f2).await.unwrap();
    assert_eq!(response_id(&mut s).await, 1);
    assert_eq!(response_id(&mut s).await, 2);
    srv.shutdown().unwrap();
}
