//! Log tables through real TCP: offsets and commit timestamps, time lookups, TTL, idempotence,
//! projection, long polling, restarts (clean and SIGKILL), torn tails, SASL, concurrency.

use crate::common;

use std::time::Duration;

use common::*;
use riverlet::error::codes;
use riverlet::proto::*;
use riverlet::rpc::{ConnectionConfig, SaslConfig, ServerConnection};

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn produce_fetch_offsets_and_monotonic_commit_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.segment_bytes = 600; // several segments
    cfg.index_interval_bytes = 1;
    let srv = start(cfg);
    let conn = connect(&srv.bootstrap_servers()).await;
    let tid = create_table(&conn, "t", log_schema(), 1, &[]).await;
    let before = now_ms();
    let mut expected = 0;
    for i in 0..10 {
        let ids: Vec<i32> = (0..=i).collect();
        let base = produce(&conn, tid, 0, log_batch(&ids, -1, -1))
            .await
            .unwrap();
        assert_eq!(base, expected);
        expected += ids.len() as i64;
    }
    let schema = log_schema().to_arrow();
    let all = fetch_all(&conn, tid, 0, 0, &schema).await;
    assert_eq!(all.len(), 10);
    let mut prev = 0;
    for (i, b) in all.iter().enumerate() {
        assert_eq!(b.batch.num_rows(), i + 1);
        assert!(b.commit_ts >= prev, "commit timestamps never decrease");
        assert!(b.commit_ts >= before && b.commit_ts <= now_ms());
        prev = b.commit_ts;
    }
    // fetching from the middle of a batch returns the whole batch containing the offset
    let (hw, bytes) = fetch_raw(&conn, tid, 0, 4, None, None).await.unwrap();
    assert_eq!(hw, expected);
    let got = decode_batches(&bytes, &schema);
    assert_eq!(got[0].base_offset, 3);
    assert_eq!(list_offset(&conn, tid, 0, 0, None).await.unwrap(), 0);
    assert_eq!(list_offset(&conn, tid, 0, 1, None).await.unwrap(), expected);
    // fetch offset -2 (Fluss's FETCH_FROM_EARLIEST_OFFSET, sent by fluss-rust/pyfluss) = log start
    let (_, bytes) = fetch_raw(&conn, tid, 0, -2, None, None).await.unwrap();
    assert_eq!(decode_batches(&bytes, &schema)[0].base_offset, 0);
    // out of range
    assert_eq!(
        fetch_raw(&conn, tid, 0, expected + 5, None, None)
            .await
            .unwrap_err(),
        codes::LOG_OFFSET_OUT_OF_RANGE_EXCEPTION
    );
    // unknown bucket
    assert_eq!(
        produce(&conn, tid, 7, log_batch(&[1], -1, -1))
            .await
            .unwrap_err()
            .0,
        codes::UNKNOWN_TABLE_OR_BUCKET_EXCEPTION
    );
    srv.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_offsets_by_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.segment_bytes = 500;
    cfg.index_interval_bytes = 200;
    let srv = start(cfg);
    let conn = connect(&srv.bootstrap_servers()).await;
    let tid = create_table(&conn, "ts", log_schema(), 1, &[]).await;
    for i in 0..12 {
        produce(&conn, tid, 0, log_batch(&[i, i + 100], -1, -1))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    let schema = log_schema().to_arrow();
    let all = fetch_all(&conn, tid, 0, 0, &schema).await;
    for b in &all {
        // the first batch whose commit timestamp is >= t
        let expect = all
            .iter()
            .find(|x| x.commit_ts >= b.commit_ts)
            .unwrap()
            .base_offset;
        assert_eq!(
            list_offset(&conn, tid, 0, 2, Some(b.commit_ts))
                .await
                .unwrap(),
            expect
        );
        let expect_next = all
            .iter()
            .find(|x| x.commit_ts > b.commit_ts)
            .map(|x| x.base_offset)
            .unwrap_or(24);
        assert_eq!(
            list_offset(&conn, tid, 0, 2, Some(b.commit_ts + 1))
                .await
                .unwrap(),
            expect_next
        );
    }
    assert_eq!(list_offset(&conn, tid, 0, 2, Some(0)).await.unwrap(), 0);
    // past the last batch (but not in the future): the latest offset
    let last = all.last().unwrap().commit_ts;
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert_eq!(
        list_offset(&conn, tid, 0, 2, Some(last + 2)).await.unwrap(),
        24
    );
    // in the future: INVALID_TIMESTAMP
    assert_eq!(
        list_offset(&conn, tid, 0, 2, Some(now_ms() + 60_000))
            .await
            .unwrap_err(),
        codes::INVALID_TIMESTAMP_EXCEPTION
    );
    srv.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ttl_deletes_whole_expired_segments() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.segment_bytes = 300; // roughly one batch per segment
    cfg.ttl_check_interval = Duration::from_millis(100);
    let srv = start(cfg);
    let conn = connect(&srv.bootstrap_servers()).await;
    let tid = create_table(&conn, "ttl", log_schema(), 1, &[("table.log.ttl", "1s")]).await;
    for i in 0..5 {
        produce(&conn, tid, 0, log_batch(&[i], -1, -1))
            .await
            .unwrap();
    }
    assert_eq!(list_offset(&conn, tid, 0, 0, None).await.unwrap(), 0);
    tokio::time::sleep(Duration::from_millis(1800)).await;
    // everything expired: all segments deleted, the start offset moved to the end
    assert_eq!(list_offset(&conn, tid, 0, 0, None).await.unwrap(), 5);
    assert_eq!(list_offset(&conn, tid, 0, 1, None).await.unwrap(), 5);
    assert_eq!(
        fetch_raw(&conn, tid, 0, 0, None, None).await.unwrap_err(),
        codes::LOG_OFFSET_OUT_OF_RANGE_EXCEPTION
    );
    // writing continues at the same offsets
    assert_eq!(
        produce(&conn, tid, 0, log_batch(&[9], -1, -1))
            .await
            .unwrap(),
        5
    );
    let schema = log_schema().to_arrow();
    assert_eq!(ids_of(&fetch_all(&conn, tid, 0, 5, &schema).await), vec![9]);
    srv.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotent_writes_are_deduplicated() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(config(dir.path()));
    let conn = connect(&srv.bootstrap_servers()).await;
    let tid = create_table(&conn, "idem", log_schema(), 1, &[]).await;
    let w = conn
        .request(&InitWriterRequest {
            table_path: vec![PbTablePath {
                database_name: DB.into(),
                table_name: "idem".into(),
            }],
        })
        .await
        .unwrap()
        .writer_id;
    let w2 = conn
        .request(&InitWriterRequest { table_path: vec![] })
        .await
        .unwrap()
        .writer_id;
    assert_ne!(w, w2);
    assert_eq!(
        produce(&conn, tid, 0, log_batch(&[1, 2], w, 0))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        produce(&conn, tid, 0, log_batch(&[3], w, 1)).await.unwrap(),
        2
    );
    // a retry of sequence 0 is acked with its original offset and not stored again
    assert_eq!(
        produce(&conn, tid, 0, log_batch(&[1, 2], w, 0))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        produce(&conn, tid, 0, log_batch(&[3], w, 1)).await.unwrap(),
        2
    );
    assert_eq!(list_offset(&conn, tid, 0, 1, None).await.unwrap(), 3);
    // a gap is rejected
    let e = produce(&conn, tid, 0, log_batch(&[4], w, 5))
        .await
        .unwrap_err();
    assert_eq!(e.0, codes::OUT_OF_ORDER_SEQUENCE_EXCEPTION, "{}", e.1);
    // a new writer must start at 0
    let e = produce(&conn, tid, 0, log_batch(&[4], w2, 3))
        .await
        .unwrap_err();
    assert_eq!(e.0, codes::OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    assert_eq!(
        produce(&conn, tid, 0, log_batch(&[4], w2, 0))
            .await
            .unwrap(),
        3
    );
    drop(conn);
    srv.shutdown().unwrap();
    // the writer state survives a restart (rebuilt from the log)
    let srv = start(config(dir.path()));
    let conn = connect(&srv.bootstrap_servers()).await;
    assert_eq!(
        produce(&conn, tid, 0, log_batch(&[3], w, 1)).await.unwrap(),
        2
    );
    assert_eq!(
        produce(&conn, tid, 0, log_batch(&[5], w, 2)).await.unwrap(),
        4
    );
    srv.shutdown().unwrap();
}

/// Produce requests in flight together on one connection are appended in the order they
/// arrived: large requests interleaved with small ones keep their places, so every sequence
/// number is accepted and the log holds the rows in request order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn produce_requests_in_flight_on_one_connection_are_appended_in_arrival_order() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};

    let dir = tempfile::tempdir().unwrap();
    let srv = start(config(dir.path()));
    let conn = connect(&srv.bootstrap_servers()).await;
    let tid = create_table(&conn, "pipelined", log_schema(), 1, &[]).await;
    let w = conn
        .request(&InitWriterRequest { table_path: vec![] })
        .await
        .unwrap()
        .writer_id;
    let mut expected_ids = Vec::new();
    let mut expected_bases = Vec::new();
    let mut batches = Vec::new();
    for seq in 0..12 {
        let n = if seq % 2 == 0 { 20_000 } else { 1 };
        let first = expected_ids.len() as i32;
        let ids: Vec<i32> = (first..first + n).collect();
        expected_bases.push(Ok(first as i64));
        expected_ids.extend_from_slice(&ids);
        batches.push(log_batch(&ids, w, seq));
    }
    let mut requests: Vec<_> = batches
        .into_iter()
        .map(|b| Box::pin(produce(&conn, tid, 0, b)))
        .collect();
    // The first poll of a request queues its frame on the connection: poll each once, in
    // order, so they are all on the wire before any answer is awaited.
    let mut cx = Context::from_waker(Waker::noop());
    let mut answers: Vec<Option<Result<i64, (i32, String)>>> = requests
        .iter_mut()
        .map(|r| match r.as_mut().poll(&mut cx) {
            Poll::Ready(a) => Some(a),
            Poll::Pending => None,
        })
        .collect();
    for (r, a) in requests.into_iter().zip(answers.iter_mut()) {
        if a.is_none() {
            *a = Some(r.await);
        }
    }
    let answers: Vec<_> = answers.into_iter().map(Option::unwrap).collect();
    assert_eq!(answers, expected_bases);
    let schema = log_schema().to_arrow();
    let fetched = fetch_all(&conn, tid, 0, 0, &schema).await;
    assert_eq!(ids_of(&fetched), expected_ids);
    srv.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn projection_pushdown_returns_only_projected_columns() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(config(dir.path()));
    let conn = connect(&srv.bootstrap_servers()).await;
    let tid = create_table(&conn, "proj", log_schema(), 1, &[]).await;
    produce(&conn, tid, 0, log_batch(&[1, 2, 3], -1, -1))
        .await
        .unwrap();
    let (_, bytes) = fetch_raw(&conn, tid, 0, 0, Some(vec![1]), None)
        .await
        .unwrap();
    let projected = std::sync::Arc::new(log_schema().to_arrow().project(&[1]).unwrap());
    let got = decode_projected_batches(&bytes, &projected);
    assert_eq!(got[0].batch.num_columns(), 1);
    assert_eq!(got[0].batch.num_rows(), 3);
    assert_eq!(got[0].base_offset, 0);
    assert_eq!(
        fetch_raw(&conn, tid, 0, 0, Some(vec![1, 0]), None)
            .await
            .unwrap_err(),
        codes::INVALID_COLUMN_PROJECTION
    );
    srv.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_long_polls_until_data_arrives() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(config(dir.path()));
    let conn = connect(&srv.bootstrap_servers()).await;
    let tid = create_table(&conn, "poll", log_schema(), 1, &[]).await;
    // The fetch is sent first on an empty bucket with a long wait; it can only return data
    // because the produce sent after it woke it up (no timing claim: the wait is the bound).
    let c2 = conn.clone();
    let fetch = tokio::spawn(async move { fetch_raw(&c2, tid, 0, 0, None, Some(60_000)).await });
    tokio::task::yield_now().await;
    produce(&conn, tid, 0, log_batch(&[7], -1, -1))
        .await
        .unwrap();
    let (_, bytes) = fetch.await.unwrap().unwrap();
    let got = decode_batches(&bytes, &log_schema().to_arrow());
    assert_eq!(ids_of(&got), vec![7]);
    // nothing new: the wait runs out and the answer is empty (not an error)
    let (_, bytes) = fetch_raw(&conn, tid, 0, 1, None, Some(100)).await.unwrap();
    assert!(bytes.is_empty());
    srv.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_after_clean_shutdown_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.fsync = riverlet_server::FsyncPolicy::Always;
    cfg.segment_bytes = 400;
    let srv = start(cfg.clone());
    let conn = connect(&srv.bootstrap_servers()).await;
    let tid = create_table(&conn, "r", log_schema(), 2, &[]).await;
    for i in 0..6 {
        produce(&conn, tid, i % 2, log_batch(&[i], -1, -1))
            .await
            .unwrap();
    }
    drop(conn);
    drop(srv); // Drop shuts down cleanly
    let srv = start(cfg);
    let conn = connect(&srv.bootstrap_servers()).await;
    assert_eq!(table_id(&conn, "r").await, tid);
    let schema = log_schema().to_arrow();
    assert_eq!(
        ids_of(&fetch_all(&conn, tid, 0, 0, &schema).await),
        vec![0, 2, 4]
    );
    assert_eq!(
        ids_of(&fetch_all(&conn, tid, 1, 0, &schema).await),
        vec![1, 3, 5]
    );
    assert_eq!(
        produce(&conn, tid, 0, log_batch(&[6], -1, -1))
            .await
            .unwrap(),
        3
    );
    srv.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_after_sigkill_of_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, bootstrap) = spawn_server_binary(dir.path());
    let conn = connect(&bootstrap).await;
    let tid = create_table(&conn, "k", log_schema(), 1, &[]).await;
    for i in 0..20 {
        produce(&conn, tid, 0, log_batch(&[i], -1, -1))
            .await
            .unwrap();
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    drop(conn);
    let srv = start(config(dir.path()));
    let conn = connect(&srv.bootstrap_servers()).await;
    let schema = log_schema().to_arrow();
    let ids = ids_of(&fetch_all(&conn, tid, 0, 0, &schema).await);
    assert_eq!(ids, (0..20).collect::<Vec<_>>());
    srv.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn torn_tail_is_truncated_on_restart() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path());
    let srv = start(cfg.clone());
    let conn = connect(&srv.bootstrap_servers()).await;
    let tid = create_table(&conn, "torn", log_schema(), 1, &[]).await;
    for i in 0..3 {
        produce(&conn, tid, 0, log_batch(&[i], -1, -1))
            .await
            .unwrap();
    }
    drop(conn);
    srv.shutdown().unwrap();
    // simulate a crash in the middle of writing a 4th batch: half a batch at the end
    let seg = dir
        .path()
        .join("tablets")
        .join(tid.to_string())
        .join("0/log/00000000000000000000.log");
    let mut bytes = std::fs::read(&seg).unwrap();
    let good = bytes.len();
    let half = log_batch(&[99, 98, 97], -1, -1);
    bytes.extend_from_slice(&half[..half.len() / 2]);
    std::fs::write(&seg, &bytes).unwrap();
    let srv = start(cfg);
    assert_eq!(std::fs::metadata(&seg).unwrap().len() as usize, good);
    let conn = connect(&srv.bootstrap_servers()).await;
    let schema = log_schema().to_arrow();
    assert_eq!(
        ids_of(&fetch_all(&conn, tid, 0, 0, &schema).await),
        vec![0, 1, 2]
    );
    assert_eq!(
        produce(&conn, tid, 0, log_batch(&[3], -1, -1))
            .await
            .unwrap(),
        3
    );
    drop(conn);
    srv.shutdown().unwrap();
    // a corrupted (bit-flipped) last batch is dropped too
    let mut bytes = std::fs::read(&seg).unwrap();
    let n = bytes.len();
    bytes[n - 3] ^= 0xff;
    std::fs::write(&seg, &bytes).unwrap();
    let srv = start(config(dir.path()));
    let conn = connect(&srv.bootstrap_servers()).await;
    assert_eq!(
        ids_of(&fetch_all(&conn, tid, 0, 0, &schema).await),
        vec![0, 1, 2]
    );
    srv.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_plain_accepts_and_rejects() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(config(dir.path()).with_sasl_user("admin", "secret"));
    let ok = ConnectionConfig {
        sasl: Some(SaslConfig {
            username: "admin".into(),
            password: "secret".into(),
        }),
        ..Default::default()
    };
    let conn = ServerConnection::connect(&srv.bootstrap_servers(), &ok)
        .await
        .unwrap();
    conn.request(&ListDatabasesRequest::default())
        .await
        .unwrap();
    let bad = ConnectionConfig {
        sasl: Some(SaslConfig {
            username: "admin".into(),
            password: "wrong".into(),
        }),
        ..Default::default()
    };
    let e = ServerConnection::connect(&srv.bootstrap_servers(), &bad)
        .await
        .err()
        .unwrap();
    assert_eq!(e.fluss_code(), Some(codes::AUTHENTICATE_EXCEPTION), "{e}");
    assert!(e.message().contains("Invalid username or password"), "{e}");
    // a plaintext client gets ApiVersions, then every other request is refused
    let plain = ServerConnection::connect(&srv.bootstrap_servers(), &ConnectionConfig::default())
        .await
        .unwrap();
    let e = plain
        .request(&ListDatabasesRequest::default())
        .await
        .unwrap_err();
    assert_eq!(e.fluss_code(), Some(codes::AUTHENTICATE_EXCEPTION));
    assert!(
        e.message().contains("has not completed authentication"),
        "{e}"
    );
    srv.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_concurrent_connections() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(config(dir.path()));
    let boot = srv.bootstrap_servers();
    let conn = connect(&boot).await;
    let tid = create_table(&conn, "conc", log_schema(), 2, &[]).await;
    let mut tasks = Vec::new();
    for c in 0..8 {
        let boot = boot.clone();
        tasks.push(tokio::spawn(async move {
            let conn = connect(&boot).await;
            for i in 0..15 {
                produce(&conn, tid, (c + i) % 2, log_batch(&[c * 100 + i], -1, -1))
                    .await
                    .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let total = list_offset(&conn, tid, 0, 1, None).await.unwrap()
        + list_offset(&conn, tid, 1, 1, None).await.unwrap();
    assert_eq!(total, 120);
    srv.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catalog_errors_and_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(config(dir.path()));
    let conn = connect(&srv.bootstrap_servers()).await;
    let dbs = conn
        .request(&ListDatabasesRequest::default())
        .await
        .unwrap();
    assert!(dbs.database_name.contains(&"fluss".to_string()));
    let tid = create_table(&conn, "m", log_schema(), 3, &[]).await;
    let md = conn
        .request(&MetadataRequest {
            table_path: vec![PbTablePath {
                database_name: DB.into(),
                table_name: "m".into(),
            }],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(md.coordinator_server.as_ref().unwrap().node_id, 0);
    assert_eq!(md.tablet_servers.len(), 1);
    let t = &md.table_metadata[0];
    assert_eq!(t.table_id, tid);
    assert_eq!(t.bucket_metadata.len(), 3);
    assert!(t.bucket_metadata.iter().all(|b| b.leader_id == Some(0)));
    let e = conn
        .request(&GetTableInfoRequest {
            table_path: PbTablePath {
                database_name: DB.into(),
                table_name: "nope".into(),
            },
        })
        .await
        .unwrap_err();
    assert_eq!(e.fluss_code(), Some(codes::TABLE_NOT_EXIST));
    let e = conn
        .request(&CreateDatabaseRequest {
            database_name: DB.into(),
            ignore_if_exists: false,
            database_json: None,
        })
        .await
        .unwrap_err();
    assert_eq!(e.fluss_code(), Some(codes::DATABASE_ALREADY_EXIST));
    // auto partitioning is rejected clearly
    let d = riverlet::metadata::TableDescriptor::builder(log_schema())
        .partitioned_by(["name"])
        .property("table.auto-partition.enabled", "true")
        .property("table.auto-partition.time-unit", "DAY")
        .build()
        .unwrap();
    let e = conn
        .request(&CreateTableRequest {
            table_path: PbTablePath {
                database_name: DB.into(),
                table_name: "auto".into(),
            },
            table_json: d.to_json(),
            ignore_if_exists: false,
        })
        .await
        .unwrap_err();
    assert_eq!(e.fluss_code(), Some(codes::INVALID_CONFIG_EXCEPTION), "{e}");
    // a table property that is not a `table.*` option is refused, naming it, as Fluss does
    // (a custom property takes it); the table is not created
    let create = |d: riverlet::metadata::TableDescriptor| CreateTableRequest {
        table_path: PbTablePath {
            database_name: DB.into(),
            table_name: "props".into(),
        },
        table_json: d.to_json(),
        ignore_if_exists: false,
    };
    let builder = || riverlet::metadata::TableDescriptor::builder(log_schema());
    let e = conn
        .request(&create(
            builder()
                .property("paimon.file.format", "orc")
                .build()
                .unwrap(),
        ))
        .await
        .unwrap_err();
    assert_eq!(e.fluss_code(), Some(codes::INVALID_CONFIG_EXCEPTION), "{e}");
    assert!(e.to_string().contains("'paimon.file.format'"), "{e}");
    assert!(e.to_string().contains("customProperty"), "{e}");
    conn.request(&create(
        builder()
            .custom_property("paimon.file.format", "orc")
            .build()
            .unwrap(),
    ))
    .await
    .unwrap();
    srv.shutdown().unwrap();
}

/// Malformed input never crashes the server: a garbage body gets an error response, an unknown
/// API key is dropped (as Fluss does), an oversized frame closes only that connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_do_not_crash() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.max_frame_size = 1024;
    let srv = start(cfg);
    let mut s = tokio::net::TcpStream::connect(srv.local_addr())
        .await
        .unwrap();
    // unknown key 4242: no answer; then GetTableInfo (1007) with a garbage body: error response
    let f1 = riverlet::rpc::frame::encode_request_frame(4242, 0, 1, b"xx").unwrap();
    let f2 =
        riverlet::rpc::frame::encode_request_frame(1007, 0, 2, &[0x0a, 0xff, 0xff, 0xff]).unwrap();
    s.write_all(&f1).await.unwrap();
    s.write_all(&f2).await.unwrap();
    let mut len = [0u8; 4];
    s.read_exact(&mut len).await.unwrap();
    let mut body = vec![0u8; i32::from_be_bytes(len) as usize];
    s.read_exact(&mut body).await.unwrap();
    assert_eq!(body[0], 1, "ERROR_RESPONSE");
    assert_eq!(i32::from_be_bytes(body[1..5].try_into().unwrap()), 2);
    // oversized frame: connection closed (after a SERVER_FAILURE frame)
    s.write_all(&(1_000_000i32).to_be_bytes()).await.unwrap();
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut rest)).await;
    // the server still serves others
    let conn = connect(&srv.bootstrap_servers()).await;
    conn.request(&ListDatabasesRequest::default())
        .await
        .unwrap();
    srv.shutdown().unwrap();
}
