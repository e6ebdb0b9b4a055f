//! Issue 32 item 5b: a produced batch larger than the server's `log.segment.file-size`.
//!
//! Fluss 0.9.1 takes such a batch: no check of its tablet server compares a batch with the
//! segment size (RECORD_TOO_LARGE is only a code in its error table); `LogTablet` rolls the
//! segment and the batch gets one of its own, larger than the option. The embedded server
//! does the same, so one flush of many rows, or one row larger than a segment, lands exactly
//! once and in order. The embedded server runs with 64 KiB segments; against an external server
//! the test means the same when it was started with a small segment size
//! (`tests/fluss-cluster/start.sh --conf 'log.segment.file-size: 64kb'`).
//!
//! A request frame larger than the server's `netty.server.max-request-size` is another matter:
//! the server refuses the frame and closes the connection. A row whose batch alone is over that
//! limit fails fast, as RECORD_TOO_LARGE (kind InvalidArgument) naming its size, the limit and
//! the option; the writes sent with it on the same connection are resent and land once, in
//! order.

use crate::common;
// peer_bugs, writer_abort and subscribe_read_ahead load it too; each file keeps its own copy.
#[allow(clippy::duplicate_mod)]
#[path = "common/proxy.rs"]
mod proxy;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Int32Array, RecordBatch, StringArray};
use common::*;
use proxy::{Action, Dir, Faults, Proxy, API_PRODUCE_LOG};
use riverlet::metadata::{DataType, Schema, TableDescriptor};
use riverlet::proto::{FetchLogRequest, PbFetchLogReqForBucket, PbFetchLogReqForTable};
use riverlet::record::LogBatchIter;
use tokio::sync::Notify;

const SEGMENT: usize = 64 * 1024;

fn env() -> TestEnv {
    if is_external() {
        TestEnv::new()
    } else {
        TestEnv::embedded_only("", |c| c.segment_bytes = SEGMENT as u64).unwrap()
    }
}

/// Text that does not compress much: `len` hex digits from a xorshift seeded by `seed`.
fn noise(seed: u64, len: usize) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from_digit((x & 15) as u32, 16).unwrap()
        })
        .collect()
}

fn schema(pk: bool) -> Schema {
    let b = Schema::builder()
        .column("id", DataType::int().not_null())
        .column("text", DataType::string());
    if pk { b.primary_key(["id"]) } else { b }.build().unwrap()
}

fn batch(pk: bool, ids: std::ops::Range<i32>, len: usize) -> RecordBatch {
    let texts: Vec<String> = ids.clone().map(|i| noise(i as u64, len)).collect();
    RecordBatch::try_new(
        schema(pk).to_arrow(),
        vec![
            Arc::new(Int32Array::from_iter_values(ids)),
            Arc::new(StringArray::from_iter_values(texts)),
        ],
    )
    .unwrap()
}

/// (id, text) of every row, in the order read.
fn rows_in_order(batches: &[RecordBatch]) -> Vec<(i32, String)> {
    let mut out = Vec::new();
    for b in batches {
        let id = b.column_by_name("id").unwrap().as_primitive::<Int32Type>();
        let text = b.column_by_name("text").unwrap().as_string::<i32>();
        for i in 0..b.num_rows() {
            out.push((id.value(i), text.value(i).to_string()));
        }
    }
    out
}

/// The sizes of the stored batches of bucket 0, from raw FetchLog answers.
async fn stored_batch_sizes(conn: &riverlet::client::Connection, table_id: i64) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut offset = 0;
    loop {
        let req = FetchLogRequest {
            follower_server_id: -1,
            max_bytes: 16 << 20,
            tables_req: vec![PbFetchLogReqForTable {
                table_id,
                projection_pushdown_enabled: false,
                projected_fields: vec![],
                buckets_req: vec![PbFetchLogReqForBucket {
                    partition_id: None,
                    bucket_id: 0,
                    fetch_offset: offset,
                    max_fetch_bytes: 16 << 20,
                }],
                filter_predicate: None,
                filter_schema_id: None,
            }],
            max_wait_ms: Some(0),
            min_bytes: Some(0),
            read_preference: None,
        };
        let resp = conn.request_leader(table_id, None, 0, &req).await.unwrap();
        let b = &resp.tables_resp[0].buckets_resp[0];
        let records = b.records.clone().unwrap_or_default();
        let before = sizes.len();
        for batch in LogBatchIter::new(&records) {
            let batch = batch.unwrap();
            sizes.push(batch.size_in_bytes());
            offset = batch.next_offset();
        }
        if sizes.len() == before || offset >= b.high_watermark.unwrap_or(0) {
            return sizes;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_batches_larger_than_a_segment_land_once_in_order() {
    let env = env();
    let conn = env.connect().await;
    let d = TableDescriptor::builder(schema(false))
        .distributed_by(Some(1), Vec::<String>::new())
        .build()
        .unwrap();
    let table = create_table(&conn, &env.path("big_log"), d).await;
    let w = table.new_append_writer().unwrap();
    // Many rows in one flush (one batch of about 600 KB), then one row alone larger than a
    // segment, then a small batch after them.
    let many = batch(false, 0..2000, 300);
    let huge = batch(false, 2000..2001, 4 * SEGMENT);
    let small = batch(false, 2001..2011, 10);
    for b in [&many, &huge, &small] {
        w.append_batch(b).await.unwrap();
        w.flush().await.unwrap();
    }

    let got = rows_in_order(&fetch_bucket(&conn, &table, None, 0).await);
    let want = rows_in_order(&[many, huge, small]);
    assert_eq!(got.len(), want.len());
    assert!(
        got == want,
        "rows differ from the rows written, or their order"
    );
    // The server holds batches larger than a segment (the many rows, the huge row).
    let sizes = stored_batch_sizes(&conn, table.info().table_id).await;
    assert!(
        sizes.iter().filter(|s| **s > SEGMENT).count() >= 2,
        "stored batch sizes {sizes:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kv_batches_larger_than_a_segment_are_applied() {
    let env = env();
    let conn = env.connect().await;
    let d = TableDescriptor::builder(schema(true))
        .distributed_by(Some(1), Vec::<String>::new())
        .build()
        .unwrap();
    let table = create_table(&conn, &env.path("big_kv"), d).await;
    let w = table.new_upsert_writer(None).unwrap();
    let many = batch(true, 0..1000, 300);
    let huge = batch(true, 1000..1001, 4 * SEGMENT);
    for b in [&many, &huge] {
        w.upsert_batch(b).await.unwrap();
        w.flush().await.unwrap();
    }
    for id in [0, 499, 999, 1000] {
        let row = lookup(&conn, &table, None, &[riverlet::row::Datum::Int(id)])
            .await
            .unwrap_or_else(|| panic!("key {id} missing"));
        let len = if id == 1000 { 4 * SEGMENT } else { 300 };
        assert_eq!(
            row[1],
            riverlet::row::Datum::String(noise(id as u64, len)),
            "key {id}"
        );
    }
    // Its changelog: every upsert once, in order.
    let log = rows_in_order(&fetch_bucket(&conn, &table, None, 0).await);
    let ids: Vec<i32> = log.iter().map(|r| r.0).collect();
    assert_eq!(ids, (0..1001).collect::<Vec<_>>());
}

/// The request frame limit of the server of the row-too-large tests.
const FRAME_LIMIT: usize = 1024 * 1024;

fn small_frame_env() -> Option<TestEnv> {
    TestEnv::embedded_only(
        "sets netty.server.max-request-size on a server of its own",
        |c| c.set("netty.server.max-request-size", "1mb").unwrap(),
    )
}

/// The number of bytes the message states right after `marker`.
fn bytes_after(message: &str, marker: &str) -> usize {
    let at = message
        .find(marker)
        .unwrap_or_else(|| panic!("no '{marker}' in: {message}"));
    let rest = &message[at + marker.len()..];
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end]
        .parse()
        .unwrap_or_else(|_| panic!("no size after '{marker}' in: {message}"))
}

/// The row's write failed as too large for the server, naming its size, the limit and the option.
fn assert_record_too_large(e: &riverlet::Error) {
    assert_eq!(e.kind(), riverlet::ErrorKind::InvalidArgument, "{e}");
    assert_eq!(
        e.fluss_code(),
        Some(riverlet::error::codes::RECORD_TOO_LARGE_EXCEPTION),
        "{e}"
    );
    let msg = e.to_string();
    assert!(msg.contains("netty.server.max-request-size"), "{msg}");
    assert_eq!(bytes_after(&msg, "request limit of "), FRAME_LIMIT, "{msg}");
    // Hex text compresses to about half: the row's batch is well over the limit.
    let batch = bytes_after(&msg, "a record batch of ");
    assert!(batch > FRAME_LIMIT, "{msg}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_row_over_the_request_limit_fails_naming_the_option() {
    let Some(env) = small_frame_env() else {
        return;
    };
    let conn = env.connect().await;
    let d = TableDescriptor::builder(schema(false))
        .distributed_by(Some(1), Vec::<String>::new())
        .build()
        .unwrap();
    let table = create_table(&conn, &env.path("row_too_large_log"), d).await;
    let w = table.new_append_writer().unwrap();
    // Rows before and after the huge one, in flight with it on the same connection.
    let before = batch(false, 0..10, 100);
    let huge = batch(false, 10..11, 4 * FRAME_LIMIT);
    let after = batch(false, 11..21, 100);
    let (a, h, b) = (
        w.append_batch(&before),
        w.append_batch(&huge),
        w.append_batch(&after),
    );
    let (a, h, b) = tokio::join!(a, h, b);
    a.unwrap();
    b.unwrap();
    assert_record_too_large(&h.unwrap_err());
    // The writer goes on after it.
    let last = batch(false, 21..25, 100);
    w.append_batch(&last).await.unwrap();
    w.flush()
        .await
        .unwrap_or_else(|e| assert_record_too_large(&e));

    let got = rows_in_order(&fetch_bucket(&conn, &table, None, 0).await);
    let want = rows_in_order(&[before, after, last]);
    assert_eq!(
        got.iter().map(|r| r.0).collect::<Vec<_>>(),
        want.iter().map(|r| r.0).collect::<Vec<_>>()
    );
    assert!(got == want, "rows differ from the rows written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kv_row_over_the_request_limit_fails_naming_the_option() {
    let Some(env) = small_frame_env() else {
        return;
    };
    let conn = env.connect().await;
    let d = TableDescriptor::builder(schema(true))
        .distributed_by(Some(2), Vec::<String>::new())
        .build()
        .unwrap();
    let table = create_table(&conn, &env.path("row_too_large_kv"), d).await;
    let w = table.new_upsert_writer(None).unwrap();
    let before = batch(true, 0..50, 100);
    let huge = batch(true, 50..51, 4 * FRAME_LIMIT);
    let after = batch(true, 51..100, 100);
    let (a, h, b) = tokio::join!(
        w.upsert_batch(&before),
        w.upsert_batch(&huge),
        w.upsert_batch(&after)
    );
    a.unwrap();
    b.unwrap();
    assert_record_too_large(&h.unwrap_err());
    for id in (0..100).filter(|i| *i != 50) {
        let row = lookup(&conn, &table, None, &[riverlet::row::Datum::Int(id)])
            .await
            .unwrap_or_else(|| panic!("key {id} missing"));
        assert_eq!(
            row[1],
            riverlet::row::Datum::String(noise(id as u64, 100)),
            "key {id}"
        );
    }
    assert!(
        lookup(&conn, &table, None, &[riverlet::row::Datum::Int(50)])
            .await
            .is_none(),
        "the refused row was written"
    );
}

/// Holds back the server's answer to the first ProduceLog request for good: the request is
/// appended, but the client learns that only if it asks again.
#[derive(Default)]
struct LoseFirstProduceAnswer {
    produce_answers: AtomicU32,
    lost: Notify,
}

impl Faults for LoseFirstProduceAnswer {
    fn on_frame(&self, dir: Dir, api_key: i16, _request_id: i32, _frame: &[u8]) -> Action {
        if dir == Dir::ToClient
            && api_key == API_PRODUCE_LOG
            && self.produce_answers.fetch_add(1, Ordering::SeqCst) == 0
        {
            self.lost.notify_one();
            return Action::Hold(Box::pin(std::future::pending()));
        }
        Action::Forward
    }
}

/// A write whose answer was lost when the server closed the connection for a later, too large
/// request of the same writer is in the log already. The writer sends it again under the same
/// writer id, where the server recognizes the duplicate, before the failed row makes it take
/// a new writer id for what follows: renumbered, the rows were appended twice (seen in `make
/// test` as the rows before the huge one read twice in the test above).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_whose_answer_was_lost_with_a_refused_request_lands_once() {
    let Some(env) = small_frame_env() else {
        return;
    };
    let faults = Arc::new(LoseFirstProduceAnswer::default());
    let proxy = Proxy::start(&env.bootstrap, faults.clone(), true);
    let mut config = env.config();
    config.bootstrap_servers = proxy.bootstrap();
    let conn = riverlet::client::Connection::connect(config).await.unwrap();
    let d = TableDescriptor::builder(schema(false))
        .distributed_by(Some(1), Vec::<String>::new())
        .build()
        .unwrap();
    let table = create_table(&conn, &env.path("lost_answer_log"), d).await;
    let w = table.new_append_writer().unwrap();

    let before = batch(false, 0..10, 100);
    let first = w.append_batch(&before);
    tokio::pin!(first);
    // The first request is appended and its answer held by the proxy (the write still waits).
    let lost = faults.lost.notified();
    tokio::select! {
        r = &mut first => panic!("the first write was answered although its answer is held: {r:?}"),
        _ = tokio::time::timeout(Duration::from_secs(60), lost) => {}
    }
    assert_eq!(
        faults.produce_answers.load(Ordering::SeqCst),
        1,
        "no ProduceLog answer reached the proxy within 60 s"
    );
    // A row too large for any request: the server refuses its frame and closes the connection.
    let huge = batch(false, 10..11, 4 * FRAME_LIMIT);
    assert_record_too_large(&w.append_batch(&huge).await.unwrap_err());
    first.await.unwrap();
    let after = batch(false, 11..21, 100);
    w.append_batch(&after).await.unwrap();
    // A flush reports the writer's first error since the last flush: the refused row's.
    w.flush()
        .await
        .unwrap_or_else(|e| assert_record_too_large(&e));

    let got = rows_in_order(&fetch_bucket(&conn, &table, None, 0).await);
    let want = rows_in_order(&[before, after]);
    assert_eq!(
        got.iter().map(|r| r.0).collect::<Vec<_>>(),
        want.iter().map(|r| r.0).collect::<Vec<_>>()
    );
    assert!(got == want, "rows differ from the rows written");
}
