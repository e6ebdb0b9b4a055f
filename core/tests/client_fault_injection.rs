//! Fault injection for the writer pipeline: faults a healthy single-node server never produces
//! (a NOT_LEADER_OR_FOLLOWER answer that must trigger a metadata refresh and a retry with the
//! same sequence, an injected error code that must reach the write's future), played by a
//! scripted peer over real TCP and real framing. Every behaviour a real server can show is
//! asserted against the real servers instead (embedded riverlet-server and Apache Fluss: the
//! other `client_*`, `scan_*` and `time_range_*` suites); this file only covers the error paths.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow_array::{Int32Array, RecordBatch, StringArray};
use prost::Message;
use riverlet::client::{ClientConfig, Connection, OffsetSpec};
use riverlet::error::codes;
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet::proto::*;
use riverlet::record::log_batch::LogBatchIter;
use riverlet::rpc::frame::{
    decode_request_header, encode_error_response, encode_success_response_message, read_frame,
};
use riverlet::rpc::NegotiatedVersions;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

const TABLE_ID: i64 = 7;
const WRITER_ID: i64 = 42;

#[derive(Default)]
struct MockState {
    port: u16,
    descriptor_json: Vec<u8>,
    buckets: i32,
    metadata_requests: usize,
    init_writer_requests: usize,
    /// (bucket, writer id, batch sequence, record count) of every accepted batch.
    batches: Vec<(i32, i64, i32, i32)>,
    /// Errors to answer for the next produce of a bucket, popped one by one.
    inject: HashMap<i32, Vec<i32>>,
    log_end: HashMap<i32, i64>,
    /// Behave like a real server's idempotence check: per bucket and writer, a batch whose
    /// sequence was already appended is acked without appending it again, and one that does
    /// not follow the last appended sequence gets OUT_OF_ORDER_SEQUENCE.
    enforce_sequences: bool,
    /// (bucket, writer id) -> last appended sequence.
    last_sequence: HashMap<(i32, i64), i32>,
    /// Hold produce requests until this many arrived on a connection (or a second passed),
    /// then answer them in arrival order: batches the writer has in flight at once.
    hold_produces: usize,
    /// The most produce requests held at once.
    max_held: usize,
}

type Shared = Arc<Mutex<MockState>>;

fn respond(state: &Shared, api_key: i16, request_id: i32, body: &[u8]) -> Vec<u8> {
    let mut st = state.lock().unwrap();
    match api_key {
        1000 => encode_success_response_message(
            request_id,
            &ApiVersionsResponse {
                api_versions: NegotiatedVersions::riverlet_api_versions(),
                server_type: Some(1),
            },
        )
        .unwrap(),
        1012 => {
            st.metadata_requests += 1;
            let req = MetadataRequest::decode(body).unwrap();
            let node = PbServerNode {
                node_id: 0,
                host: "127.0.0.1".into(),
                port: st.port as i32,
                listeners: None,
                rack: None,
            };
            let table_metadata = req
                .table_path
                .iter()
                .map(|p| PbTableMetadata {
                    table_path: p.clone(),
                    table_id: TABLE_ID,
                    schema_id: 1,
                    table_json: st.descriptor_json.clone(),
                    bucket_metadata: (0..st.buckets)
                        .map(|b| PbBucketMetadata {
                            bucket_id: b,
                            leader_id: Some(0),
                            replica_id: vec![0],
                            leader_epoch: Some(0),
                        })
                        .collect(),
                    created_time: 1,
                    modified_time: 1,
                    remote_data_dir: None,
                })
                .collect();
            encode_success_response_message(
                request_id,
                &MetadataResponse {
                    coordinator_server: Some(node.clone()),
                    tablet_servers: vec![node],
                    table_metadata,
                    partition_metadata: vec![],
                },
            )
            .unwrap()
        }
        1007 => {
            let req = GetTableInfoRequest::decode(body).unwrap();
            if req.table_path.table_name != "t" {
                return encode_error_response(
                    request_id,
                    codes::TABLE_NOT_EXIST,
                    &format!(
                        "Table '{}.{}' does not exist.",
                        req.table_path.database_name, req.table_path.table_name
                    ),
                );
            }
            encode_success_response_message(
                request_id,
                &GetTableInfoResponse {
                    table_id: TABLE_ID,
                    schema_id: 1,
                    table_json: st.descriptor_json.clone(),
                    created_time: 1,
                    modified_time: 1,
                    remote_data_dir: None,
                },
            )
            .unwrap()
        }
        1026 => {
            st.init_writer_requests += 1;
            encode_success_response_message(
                request_id,
                &InitWriterResponse {
                    writer_id: WRITER_ID,
                },
            )
            .unwrap()
        }
        1014 => {
            let req = ProduceLogRequest::decode(body).unwrap();
            assert_eq!(req.table_id, TABLE_ID);
            let mut resp = ProduceLogResponse::default();
            for b in req.buckets_req {
                if let Some(code) = st.inject.get_mut(&b.bucket_id).and_then(|v| {
                    if v.is_empty() {
                        None
                    } else {
                        Some(v.remove(0))
                    }
                }) {
                    resp.buckets_resp.push(PbProduceLogRespForBucket {
                        partition_id: b.partition_id,
                        bucket_id: b.bucket_id,
                        error_code: Some(code),
                        error_message: Some(format!("injected error {code}")),
                        base_offset: None,
                    });
                    continue;
                }
                let end = *st.log_end.get(&b.bucket_id).unwrap_or(&0);
                let mut count = 0i64;
                let mut refused = None;
                for batch in LogBatchIter::new(&b.records) {
                    let batch = batch.unwrap();
                    assert!(batch.is_valid());
                    assert_eq!(batch.magic(), 0);
                    if st.enforce_sequences {
                        let key = (b.bucket_id, batch.writer_id());
                        let last = st.last_sequence.get(&key).copied().unwrap_or(-1);
                        let seq = batch.batch_sequence();
                        if seq <= last {
                            continue; // a duplicate: acked, not appended again
                        }
                        if seq != last + 1 {
                            refused = Some(codes::OUT_OF_ORDER_SEQUENCE_EXCEPTION);
                            break;
                        }
                        st.last_sequence.insert(key, seq);
                    }
                    st.batches.push((
                        b.bucket_id,
                        batch.writer_id(),
                        batch.batch_sequence(),
                        batch.record_count(),
                    ));
                    count += batch.record_count() as i64;
                }
                if let Some(code) = refused {
                    resp.buckets_resp.push(PbProduceLogRespForBucket {
                        partition_id: b.partition_id,
                        bucket_id: b.bucket_id,
                        error_code: Some(code),
                        error_message: Some("out of order batch sequence".into()),
                        base_offset: None,
                    });
                    continue;
                }
                st.log_end.insert(b.bucket_id, end + count);
                resp.buckets_resp.push(PbProduceLogRespForBucket {
                    partition_id: b.partition_id,
                    bucket_id: b.bucket_id,
                    error_code: None,
                    error_message: None,
                    base_offset: Some(end),
                });
            }
            encode_success_response_message(request_id, &resp).unwrap()
        }
        1021 => {
            let req = ListOffsetsRequest::decode(body).unwrap();
            let buckets_resp = req
                .bucket_id
                .iter()
                .map(|b| PbListOffsetsRespForBucket {
                    bucket_id: *b,
                    error_code: None,
                    error_message: None,
                    offset: Some(if req.offset_type == 1 {
                        *st.log_end.get(b).unwrap_or(&0)
                    } else {
                        0
                    }),
                })
                .collect();
            encode_success_response_message(request_id, &ListOffsetsResponse { buckets_resp })
                .unwrap()
        }
        other => encode_error_response(
            request_id,
            codes::UNSUPPORTED_VERSION,
            &format!("mock does not serve {other}"),
        ),
    }
}

async fn start_mock(buckets: i32) -> (Shared, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let schema = Schema::builder()
        .column("id", DataType::int().not_null())
        .column("name", DataType::string())
        .build()
        .unwrap();
    let d = TableDescriptor::builder(schema)
        .distributed_by(Some(buckets), Vec::<String>::new())
        .property("table.log.arrow.compression.type", "LZ4_FRAME")
        .build()
        .unwrap();
    let state: Shared = Arc::new(Mutex::new(MockState {
        port,
        descriptor_json: d.to_json(),
        buckets,
        ..Default::default()
    }));
    let st = state.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let st = st.clone();
            tokio::spawn(async move {
                let (mut r, mut w) = stream.into_split();
                let mut held = Vec::new();
                loop {
                    let hold = st.lock().unwrap().hold_produces;
                    let next = if held.is_empty() {
                        read_frame(&mut r, 1 << 30).await
                    } else {
                        match tokio::time::timeout(
                            Duration::from_secs(1),
                            read_frame(&mut r, 1 << 30),
                        )
                        .await
                        {
                            Ok(f) => f,
                            Err(_) => Ok(Some(bytes::Bytes::new())), // stop holding
                        }
                    };
                    let Ok(Some(frame)) = next else { return };
                    if !frame.is_empty() {
                        let (h, _) = decode_request_header(&frame).unwrap();
                        if h.api_key == 1014 && hold > 0 {
                            held.push(frame);
                            let mut s = st.lock().unwrap();
                            s.max_held = s.max_held.max(held.len());
                            if held.len() < hold {
                                continue;
                            }
                            s.hold_produces = 0; // hold one group only
                        } else {
                            held.push(frame);
                        }
                    }
                    for frame in held.drain(..) {
                        let (h, body) = decode_request_header(&frame).unwrap();
                        let out = respond(&st, h.api_key, h.request_id, body);
                        if w.write_all(&out).await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    (state, format!("127.0.0.1:{port}"))
}

fn batch(n: i32) -> RecordBatch {
    let schema = Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("id", arrow_schema::DataType::Int32, false),
        arrow_schema::Field::new("name", arrow_schema::DataType::Utf8, true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int32Array::from((0..n).collect::<Vec<_>>())),
            Arc::new(StringArray::from(vec![Some("v"); n as usize])),
        ],
    )
    .unwrap()
}

fn config(bootstrap: &str) -> ClientConfig {
    let mut c = ClientConfig::new(bootstrap);
    c.writer.linger = Duration::from_millis(20);
    c.retry_backoff = Duration::from_millis(5);
    c
}

#[tokio::test]
async fn idempotent_sequences_and_linger_batching() {
    let (state, bootstrap) = start_mock(1).await;
    let conn = Connection::connect(config(&bootstrap)).await.unwrap();
    let table = conn.table(&TablePath::new("db", "t")).await.unwrap();
    let w = table.new_append_writer().unwrap();
    // Five small writes inside one linger window become one batch.
    let futs: Vec<_> = (0..5).map(|_| w.append_batch(&batch(3))).collect();
    for f in futs {
        f.await.unwrap();
    }
    // Then three more batches, each flushed on its own.
    for _ in 0..3 {
        w.append_batch(&batch(2));
        w.flush().await.unwrap();
    }
    {
        let st = state.lock().unwrap();
        assert_eq!(st.init_writer_requests, 1);
        assert_eq!(st.batches[0], (0, WRITER_ID, 0, 15));
        let seqs: Vec<i32> = st.batches.iter().map(|b| b.2).collect();
        assert_eq!(seqs, vec![0, 1, 2, 3]);
        assert!(st.batches.iter().all(|b| b.1 == WRITER_ID));
    }
    let latest = conn
        .admin()
        .list_offsets(&TablePath::new("db", "t"), None, &[], OffsetSpec::Latest)
        .await
        .unwrap();
    assert_eq!(latest[&0], 21);
}

#[tokio::test]
async fn not_leader_is_retried_with_the_same_sequence_after_a_refresh() {
    let (state, bootstrap) = start_mock(2).await;
    let mut c = config(&bootstrap);
    c.writer.no_key_assigner = riverlet::write::NoKeyAssigner::RoundRobin;
    let conn = Connection::connect(c).await.unwrap();
    let table = conn.table(&TablePath::new("db", "t")).await.unwrap();
    let w = table.new_append_writer().unwrap();
    w.append_batch(&batch(1)).await.unwrap();
    w.append_batch(&batch(1)).await.unwrap();
    let before = state.lock().unwrap().metadata_requests;
    state.lock().unwrap().inject.insert(
        0,
        vec![codes::NOT_LEADER_OR_FOLLOWER, codes::NOT_LEADER_OR_FOLLOWER],
    );
    state
        .lock()
        .unwrap()
        .inject
        .insert(1, vec![codes::NOT_LEADER_OR_FOLLOWER]);
    w.append_batch(&batch(4)).await.unwrap();
    w.append_batch(&batch(4)).await.unwrap();
    let st = state.lock().unwrap();
    assert!(st.metadata_requests > before, "leaders were refreshed");
    for bucket in 0..2 {
        let seqs: Vec<i32> = st
            .batches
            .iter()
            .filter(|b| b.0 == bucket)
            .map(|b| b.2)
            .collect();
        assert_eq!(seqs, vec![0, 1], "bucket {bucket}: {:?}", st.batches);
    }
}

#[tokio::test]
async fn server_errors_reach_the_caller_with_their_code() {
    let (state, bootstrap) = start_mock(1).await;
    let conn = Connection::connect(config(&bootstrap)).await.unwrap();
    let table = conn.table(&TablePath::new("db", "t")).await.unwrap();
    let w = table.new_append_writer().unwrap();
    state
        .lock()
        .unwrap()
        .inject
        .insert(0, vec![codes::RECORD_TOO_LARGE_EXCEPTION]);
    let e = w.append_batch(&batch(2)).await.unwrap_err();
    assert_eq!(e.fluss_code(), Some(codes::RECORD_TOO_LARGE_EXCEPTION));
    assert!(e.message().contains("db.t"), "{e}");
    // flush reports it once, then the writer goes on (sequence not consumed by the failure).
    assert!(w.flush().await.is_err());
    w.append_batch(&batch(2)).await.unwrap();
    w.flush().await.unwrap();
    let seqs: Vec<i32> = state.lock().unwrap().batches.iter().map(|b| b.2).collect();
    assert_eq!(seqs, vec![0]);

    // Unknown table names the table.
    let e = conn
        .table(&TablePath::new("db", "missing"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), riverlet::ErrorKind::NotFound);
    assert!(e.message().contains("db.missing"), "{e}");
}

#[tokio::test]
async fn close_flushes_and_refuses_more() {
    let (state, bootstrap) = start_mock(1).await;
    let mut c = config(&bootstrap);
    c.writer.linger = Duration::from_secs(30);
    let conn = Connection::connect(c).await.unwrap();
    let table = conn.table(&TablePath::new("db", "t")).await.unwrap();
    let w = table.new_append_writer().unwrap();
    let f = w.append_batch(&batch(5));
    w.close().await.unwrap();
    f.await.unwrap();
    assert_eq!(state.lock().unwrap().batches.len(), 1);
    let e = w.append_batch(&batch(1)).await.unwrap_err();
    assert_eq!(e.kind(), riverlet::ErrorKind::Closed);
    conn.close().await;
    assert!(conn.is_closed());
}

#[tokio::test]
async fn several_batches_in_flight_retry_in_order_without_duplicates() {
    let (state, bootstrap) = start_mock(1).await;
    {
        let mut st = state.lock().unwrap();
        st.enforce_sequences = true;
        st.hold_produces = 3;
        // The first produce fails with a retriable error: the batches sent behind it are
        // refused as out of order and must be sent again after it, in sequence order.
        st.inject.insert(0, vec![codes::NOT_LEADER_OR_FOLLOWER]);
    }
    let mut c = config(&bootstrap);
    // Every row becomes a batch of its own, so one write is several batches of one bucket.
    c.writer.batch_size = 1;
    c.writer.linger = Duration::from_secs(30);
    let conn = Connection::connect(c).await.unwrap();
    let table = conn.table(&TablePath::new("db", "t")).await.unwrap();
    let w = table.new_append_writer().unwrap();
    let f = w.append_batch(&batch(6));
    w.flush().await.unwrap();
    f.await.unwrap();
    let st = state.lock().unwrap();
    assert!(
        st.max_held >= 2,
        "the writer never had two batches of a bucket in flight (max {})",
        st.max_held
    );
    let appended: Vec<(i64, i32, i32)> = st.batches.iter().map(|b| (b.1, b.2, b.3)).collect();
    assert_eq!(
        appended,
        (0..6).map(|s| (WRITER_ID, s, 1)).collect::<Vec<_>>(),
        "each batch appended once, in sequence order"
    );
    assert_eq!(st.log_end[&0], 6);
}
