//! Regression tests for bug classes that hit Apache Fluss's own clients (Java and Rust), each
//! against a real server: the embedded `riverlet-server`, or with `RIVERLET_TEST_BOOTSTRAP` a
//! real Apache Fluss cluster where the test can run there. Faults come from a TCP proxy that
//! passes real frames of the real server and only holds some back or reorders them
//! (`common/proxy.rs`), or from restarting the embedded server.
//!
//! - apache/fluss#4238 (and the Java twin #4121/#4125): an OUT_OF_ORDER_SEQUENCE answer that
//!   reflects the server's state before an earlier batch got in must not fail the batch and
//!   reset the idempotent writer when that earlier batch has been acknowledged since;
//!   likewise the late answer to a send the writer gave up must not be taken for its resend.
//! - #2746 (#2747, #4136): a writer of a table that was dropped and re-created under the same
//!   name fails with a typed error naming the table instead of writing into the new table.
//! - #3389 (#3390): admin calls find the cluster again after the server they talked to went
//!   away and came back on a new port, instead of failing on the dead cached connection.
//! - #4149: a bucket that has no leader for a long time ends a write and a read with a typed
//!   error naming the table and the bucket, after bounded retries.
//! - #3713 (the tracker entry could not be found; the invariant as the issue list states
//!   it): `poll` never returns empty while data is waiting in a subscribed bucket.
//!
//! The leader-change case (#4125 after a failover) needs several tablet servers: it is in
//! `peer_bugs_cluster.rs`.

use crate::common;
#[path = "common/proxy.rs"]
mod proxy;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow_array::{Int32Array, RecordBatch, StringArray};
use common::{fetch_all, ids, log_schema, TestEnv};
use prost::Message;
use proxy::{Action, Dir, Faults, Proxy, API_PRODUCE_LOG};
use riverlet::client::{Connection, OffsetSpec};
use riverlet::error::codes;
use riverlet::metadata::{TableDescriptor, TablePath};
use riverlet::proto::ProduceLogResponse;
use riverlet::scan::StartupMode;
use riverlet::ErrorKind;
use tokio::sync::Notify;

/// A bound on waits that must end long before it (a hang fails the test instead of the suite).
const HANG: Duration = Duration::from_secs(60);

async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(HANG, f).await {
        Ok(v) => v,
        Err(_) => panic!("{what}: still waiting after {HANG:?}"),
    }
}

/// `(id, name)` rows with the given ids.
fn batch(ids: std::ops::Range<i32>) -> RecordBatch {
    let schema = log_schema().to_arrow();
    let names: Vec<String> = ids.clone().map(|i| format!("row-{i}")).collect();
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int32Array::from_iter_values(ids)),
            Arc::new(StringArray::from_iter_values(names)),
        ],
    )
    .unwrap()
}

fn one_bucket() -> TableDescriptor {
    TableDescriptor::builder(log_schema())
        .distributed_by(Some(1), Vec::<String>::new())
        .build()
        .unwrap()
}

fn expected(ranges: &[std::ops::Range<i32>]) -> Vec<i32> {
    let mut v: Vec<i32> = ranges.iter().flat_map(|r| r.clone()).collect();
    v.sort();
    v
}

/// A connection to `env`'s server through `proxy`.
async fn connect_via(
    env: &TestEnv,
    proxy: &Proxy,
    f: impl FnOnce(&mut riverlet::client::ClientConfig),
) -> Connection {
    let mut config = env.config();
    config.bootstrap_servers = proxy.bootstrap();
    f(&mut config);
    Connection::connect(config).await.unwrap()
}

fn produce_codes(frame: &[u8]) -> Vec<i32> {
    proxy::response_body(frame)
        .and_then(|b| ProduceLogResponse::decode(b).ok())
        .map(|r| {
            r.buckets_resp
                .iter()
                .map(|b| b.error_code.unwrap_or(0))
                .collect()
        })
        .unwrap_or_default()
}

fn waiter(n: &Arc<Notify>) -> Action {
    let n = n.clone();
    Action::Hold(Box::pin(async move { n.notified().await }))
}

// ------------------------------------------------------------------------------------------
// #4238: a stale OUT_OF_ORDER_SEQUENCE answer

/// Once armed: holds the first produce request back, lets the second one through (the server
/// answers it OUT_OF_ORDER_SEQUENCE: its predecessor has not arrived), holds that answer, sends
/// the first request on (the server appends it and acknowledges it), and lets the held
/// OUT_OF_ORDER answer through only when the test says so, after the client has taken the
/// acknowledgement of the first: the client then sees an OUT_OF_ORDER answer for the very
/// batch that is next after its last acknowledged one, stale by one acknowledgement.
#[derive(Default)]
struct StaleOutOfOrder {
    armed: AtomicBool,
    produces: Mutex<u32>,
    second_id: Mutex<Option<i32>>,
    second_codes: Mutex<Vec<i32>>,
    first_held: Arc<Notify>,
    second_answered: Arc<Notify>,
    send_first: Arc<Notify>,
    release_second: Arc<Notify>,
}

impl Faults for StaleOutOfOrder {
    fn on_frame(&self, dir: Dir, api_key: i16, request_id: i32, frame: &[u8]) -> Action {
        if api_key != API_PRODUCE_LOG || !self.armed.load(Ordering::SeqCst) {
            return Action::Forward;
        }
        match dir {
            Dir::ToServer => {
                let mut n = self.produces.lock().unwrap();
                *n += 1;
                match *n {
                    1 => {
                        self.first_held.notify_one();
                        waiter(&self.send_first)
                    }
                    2 => {
                        *self.second_id.lock().unwrap() = Some(request_id);
                        Action::Forward
                    }
                    _ => Action::Forward,
                }
            }
            Dir::ToClient => {
                if *self.second_id.lock().unwrap() != Some(request_id) {
                    return Action::Forward;
                }
                *self.second_codes.lock().unwrap() = produce_codes(frame);
                self.armed.store(false, Ordering::SeqCst);
                self.send_first.notify_one();
                self.second_answered.notify_one();
                waiter(&self.release_second)
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_out_of_order_answer_does_not_fail_the_batch_or_reset_the_writer() {
    let env = TestEnv::new();
    let faults = Arc::new(StaleOutOfOrder::default());
    let proxy = Proxy::start(&env.bootstrap, faults.clone(), true);
    let conn = connect_via(&env, &proxy, |_| {}).await;
    let path = env.path("stale_ooo");
    let table = common::create_table(&conn, &path, one_bucket()).await;
    let w = table.new_append_writer().unwrap();
    // The writer's first batch: the server now knows the writer and its sequence.
    within("warm-up write", w.append_batch(&batch(0..10)))
        .await
        .unwrap();

    faults.armed.store(true, Ordering::SeqCst);
    let a = w.append_batch(&batch(100..110));
    within("the first batch to be held", faults.first_held.notified()).await;
    let b = w.append_batch(&batch(200..210));
    within(
        "the second batch's answer",
        faults.second_answered.notified(),
    )
    .await;
    assert_eq!(
        *faults.second_codes.lock().unwrap(),
        vec![codes::OUT_OF_ORDER_SEQUENCE_EXCEPTION],
        "the server answers the batch that overtook its predecessor OUT_OF_ORDER_SEQUENCE"
    );
    within("the first batch's ack", a).await.unwrap();
    // Only now does the client see the OUT_OF_ORDER answer: its batch is the one after the
    // last acknowledged, but the answer is older than that acknowledgement.
    faults.release_second.notify_one();
    let b = within("the second batch", b).await;
    assert!(
        b.is_ok(),
        "a stale OUT_OF_ORDER answer failed the batch (the server has its predecessor now): {}",
        b.unwrap_err()
    );
    // The writer keeps going, with no error left over.
    within("a later write", w.append_batch(&batch(300..310)))
        .await
        .unwrap();
    within("flush", w.flush()).await.unwrap();

    let rows = ids(&fetch_all(&conn, &table, None).await);
    assert_eq!(
        rows,
        expected(&[0..10, 100..110, 200..210, 300..310]),
        "every acknowledged row exactly once"
    );
    conn.close().await;
}

// ------------------------------------------------------------------------------------------
// The late answer to a send the writer gave up

/// Once armed: holds the answer to the first produce request until the test releases it.
#[derive(Default)]
struct LateAnswer {
    armed: AtomicBool,
    held: Arc<Notify>,
    release: Arc<Notify>,
    held_codes: Mutex<Vec<i32>>,
    produces_after: Mutex<u32>,
}

impl Faults for LateAnswer {
    fn on_frame(&self, dir: Dir, api_key: i16, _request_id: i32, frame: &[u8]) -> Action {
        if api_key != API_PRODUCE_LOG {
            return Action::Forward;
        }
        if dir == Dir::ToServer {
            *self.produces_after.lock().unwrap() += 1;
            return Action::Forward;
        }
        if !self.armed.swap(false, Ordering::SeqCst) {
            return Action::Forward;
        }
        *self.held_codes.lock().unwrap() = produce_codes(frame);
        self.held.notify_one();
        waiter(&self.release)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_answer_to_a_given_up_send_is_not_taken_for_the_resend() {
    let env = TestEnv::new();
    let faults = Arc::new(LateAnswer::default());
    let proxy = Proxy::start(&env.bootstrap, faults.clone(), true);
    // Past the writer's 2 s leader recheck (the leader has not moved: the send stays), then the
    // request timeout gives the send up and the batch goes again.
    let conn = connect_via(&env, &proxy, |c| c.request_timeout = Duration::from_secs(3)).await;
    let path = env.path("late_answer");
    let table = common::create_table(&conn, &path, one_bucket()).await;
    let w = table.new_append_writer().unwrap();
    within("warm-up write", w.append_batch(&batch(0..10)))
        .await
        .unwrap();

    faults.armed.store(true, Ordering::SeqCst);
    *faults.produces_after.lock().unwrap() = 0;
    let a = w.append_batch(&batch(100..110));
    within("the answer to be held", faults.held.notified()).await;
    assert_eq!(
        *faults.held_codes.lock().unwrap(),
        vec![codes::NONE],
        "the held answer acknowledges the batch (the server appended it)"
    );
    // The batch is acknowledged through its resend (the server knows it: a duplicate).
    within("the batch", a).await.unwrap();
    assert!(
        *faults.produces_after.lock().unwrap() >= 2,
        "the batch was sent again after its first send was given up"
    );
    // Now the first send's answer arrives, late.
    faults.release.notify_one();
    let c = w.append_batch(&batch(200..210));
    within("a later write", c).await.unwrap();
    within("another write", w.append_batch(&batch(300..310)))
        .await
        .unwrap();
    within("flush", w.flush()).await.unwrap();

    let rows = ids(&fetch_all(&conn, &table, None).await);
    assert_eq!(
        rows,
        expected(&[0..10, 100..110, 200..210, 300..310]),
        "every acknowledged row exactly once"
    );
    conn.close().await;
}

// ------------------------------------------------------------------------------------------
// #2746: a writer of a dropped and re-created table

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_of_a_dropped_and_recreated_table_fails_naming_it() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let path = env.path("recreated");
    let old = common::create_table(&conn, &path, one_bucket()).await;
    let w = old.new_append_writer().unwrap();
    within("first write", w.append_batch(&batch(0..10)))
        .await
        .unwrap();

    // Another client drops the table and creates it again under the same name.
    let other = env.connect().await;
    other.admin().drop_table(&path, false).await.unwrap();
    other
        .admin()
        .create_table(&path, &one_bucket(), false)
        .await
        .unwrap();
    common::await_leaders(&other, &path, &one_bucket()).await;
    let new_id = other.admin().table_info(&path).await.unwrap().table_id;
    assert_ne!(new_id, old.info().table_id);

    let r = within(
        "a write through the old writer",
        w.append_batch(&batch(100..110)),
    )
    .await;
    let e = r.expect_err("a write through a writer of the dropped table succeeded");
    assert_eq!(e.fluss_code(), Some(codes::TABLE_NOT_EXIST), "{e}");
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    assert!(e.message().contains(&path.to_string()), "{e}");
    // The flush reports it too; nothing hangs.
    assert!(within("flush", w.flush()).await.is_err());

    // The new table did not get the rows.
    let new = other.table(&path).await.unwrap();
    let rows = fetch_all(&other, &new, None).await;
    assert_eq!(
        ids(&rows),
        Vec::<i32>::new(),
        "rows of the old writer went into the new table"
    );
    // And a new writer writes into the new table.
    let w2 = new.new_append_writer().unwrap();
    within(
        "a write to the new table",
        w2.append_batch(&batch(200..205)),
    )
    .await
    .unwrap();
    assert_eq!(
        ids(&fetch_all(&other, &new, None).await),
        (200..205).collect::<Vec<_>>()
    );
    conn.close().await;
    other.close().await;
}

/// The same with a partitioned table: the old writer's partition (same name, new ids) must not
/// receive its rows either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_of_a_dropped_and_recreated_partitioned_table_fails_naming_it() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let path = env.path("recreated_parts");
    let d = common::descriptor(false, true, 1);
    let old = common::create_table(&conn, &path, d.clone()).await;
    common::create_regions(&conn, &path).await;
    let w = old.new_append_writer().unwrap();
    within(
        "first write",
        w.append_batch(&common::rows_batch(&[(1, "a", "eu"), (2, "b", "us")])),
    )
    .await
    .unwrap();

    let other = env.connect().await;
    other.admin().drop_table(&path, false).await.unwrap();
    other.admin().create_table(&path, &d, false).await.unwrap();
    common::create_regions(&other, &path).await;

    let r = within(
        "a write through the old writer",
        w.append_batch(&common::rows_batch(&[(3, "c", "eu")])),
    )
    .await;
    let e = r.expect_err("a write through a writer of the dropped table succeeded");
    assert_eq!(e.fluss_code(), Some(codes::TABLE_NOT_EXIST), "{e}");
    assert!(e.message().contains(&path.to_string()), "{e}");

    let new = other.table(&path).await.unwrap();
    for p in other.partitions(&path).await.unwrap() {
        let rows = fetch_all(&other, &new, Some(p.partition_id)).await;
        assert_eq!(
            common::total_rows(&rows),
            0,
            "rows of the old writer went into partition {} of the new table",
            p.name
        );
    }
    conn.close().await;
    other.close().await;
}

// ------------------------------------------------------------------------------------------
// #3389: admin calls after the server came back elsewhere

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_calls_find_the_server_again_after_it_moved_to_a_new_port() {
    if common::is_external() {
        common::not_applicable("restarts the embedded server on a new port");
        return;
    }
    use riverlet_server::{AsyncServer, ServerConfig};
    let data = tempfile::tempdir().unwrap();
    let server = AsyncServer::start(ServerConfig::new(data.path()).with_port(0))
        .await
        .unwrap();
    // The client bootstraps from a stable address (a plain forwarder, as a load balancer or a
    // DNS name would be); the metadata then names the server's own address, which it caches.
    let front = Proxy::start(
        &server.bootstrap_servers(),
        Arc::new(proxy::NoFaults),
        false,
    );
    let mut config = riverlet::client::ClientConfig::new(front.bootstrap().as_str());
    config.request_timeout = Duration::from_secs(20);
    config.connect_timeout = Duration::from_secs(5);
    let conn = Connection::connect(config).await.unwrap();
    let admin = conn.admin();
    admin.create_database("moved", false).await.unwrap();
    let path = TablePath::new("moved", "t");
    let table = common::create_table(&conn, &path, one_bucket()).await;
    let w = table.new_append_writer().unwrap();
    within("write", w.append_batch(&batch(0..7))).await.unwrap();
    w.close().await.unwrap();
    let old_address = server.bootstrap_servers();

    // The server goes away and comes back on another port with the same data.
    server.shutdown().await.unwrap();
    let server = AsyncServer::start(ServerConfig::new(data.path()).with_port(0))
        .await
        .unwrap();
    assert_ne!(server.bootstrap_servers(), old_address);
    front.retarget(&server.bootstrap_servers());

    // Read-only calls (answered by any server), a call to the bucket's leader and a
    // coordinator call: each must succeed after the client finds the server again.
    let tables = within("list_tables", admin.list_tables("moved"))
        .await
        .unwrap();
    assert_eq!(tables, vec!["t".to_string()]);
    let offsets = within(
        "list_offsets",
        admin.list_offsets(&path, None, &[], OffsetSpec::Latest),
    )
    .await
    .unwrap();
    assert_eq!(offsets, BTreeMap::from([(0, 7)]));
    let other = TablePath::new("moved", "t2");
    within(
        "create_table",
        admin.create_table(&other, &one_bucket(), false),
    )
    .await
    .unwrap();
    assert!(within("table_exists", admin.table_exists(&other))
        .await
        .unwrap());
    conn.close().await;
    server.shutdown().await.unwrap();
}

// ------------------------------------------------------------------------------------------
// #4149: a bucket without a leader for a long time

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bucket_that_never_gets_a_leader_ends_in_an_error_naming_table_and_bucket() {
    // The proxy takes bucket 1's leader out of every metadata answer, so to this client the
    // bucket has no leader, as during Fluss's create-table race or while a restarted server
    // has not yet taken the bucket over. The server itself is real and healthy.
    let env = TestEnv::new();
    let path = env.path("leaderless");
    let d = TableDescriptor::builder(log_schema())
        .distributed_by(Some(2), ["id"])
        .build()
        .unwrap();
    let direct = env.connect().await;
    let created = common::create_table(&direct, &path, d).await;
    let table_id = created.info().table_id;
    let proxy = Proxy::start(&env.bootstrap, Arc::new(proxy::NoFaults), true);
    proxy.hide_leader(table_id, 1);
    let conn = connect_via(&env, &proxy, |c| {
        c.writer.delivery_timeout = Duration::from_secs(3);
    })
    .await;
    let table = conn.table(&path).await.unwrap();

    // Rows hashed over both buckets: the write fails for bucket 1.
    let w = table.new_append_writer().unwrap();
    let e = within(
        "a write to the leaderless bucket",
        w.append_batch(&batch(0..40)),
    )
    .await
    .expect_err("a write to a bucket with no leader succeeded");
    assert_eq!(
        e.fluss_code(),
        Some(codes::LEADER_NOT_AVAILABLE_EXCEPTION),
        "{e}"
    );
    assert!(e.message().contains(&path.to_string()), "{e}");
    assert!(e.message().contains("bucket 1"), "{e}");

    // A read of the whole table ends the same way.
    let e = within("a read of the table", table.scan().collect())
        .await
        .expect_err("a read of a table with a leaderless bucket succeeded");
    assert!(e.is_retriable() || e.kind() == ErrorKind::Network, "{e}");
    assert!(e.message().contains(&path.to_string()), "{e}");
    assert!(e.message().contains("bucket 1"), "{e}");
    conn.close().await;
    direct.close().await;
}

// ------------------------------------------------------------------------------------------
// #3713: poll never returns empty while data is waiting

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn poll_returns_rows_while_any_bucket_has_data_waiting() {
    const BUCKETS: i32 = 8;
    let env = TestEnv::new();
    let mut config = env.config();
    config.writer.no_key_assigner = riverlet::client::NoKeyAssigner::RoundRobin;
    let conn = Connection::connect(config).await.unwrap();
    let path = env.path("many_buckets");
    let d = TableDescriptor::builder(log_schema())
        .distributed_by(Some(BUCKETS), Vec::<String>::new())
        .build()
        .unwrap();
    let table = common::create_table(&conn, &path, d).await;

    // Subscribed before any data: the first polls find nothing (rightly) and leave fetches
    // waiting at every bucket.
    let mut sub = table.subscribe(StartupMode::Earliest).await.unwrap();
    for _ in 0..3 {
        let got = sub.poll(Duration::from_millis(100)).await.unwrap();
        assert!(got.is_empty(), "rows from an empty table");
    }

    // Many small batches in every bucket.
    let w = table.new_append_writer().unwrap();
    let mut next = 0;
    let mut writes = Vec::new();
    for _ in 0..40 {
        writes.push(w.append_batch(&batch(next..next + 25)));
        next += 25;
    }
    within("flush", w.flush()).await.unwrap();
    for write in writes {
        write.await.unwrap();
    }
    let latest = conn
        .admin()
        .list_offsets(&path, None, &[], OffsetSpec::Latest)
        .await
        .unwrap();
    assert_eq!(latest.len(), BUCKETS as usize);
    assert!(
        latest.values().all(|o| *o > 0),
        "every bucket has data: {latest:?}"
    );

    let mut seen: Vec<i32> = Vec::new();
    let mut polls = 0;
    loop {
        let behind: Vec<(i32, i64, i64)> = sub
            .position()
            .iter()
            .filter_map(|p| {
                let hw = latest[&p.bucket];
                (p.offset < hw).then_some((p.bucket, p.offset, hw))
            })
            .collect();
        if behind.is_empty() {
            break;
        }
        polls += 1;
        assert!(polls < 1000, "never caught up: {behind:?}");
        let got = sub.poll(Duration::from_secs(10)).await.unwrap();
        assert!(
            !got.is_empty(),
            "poll {polls} returned nothing while data was waiting (bucket, position, high \
             watermark): {behind:?}"
        );
        for b in got {
            seen.extend(ids(std::slice::from_ref(&b.batch)));
        }
    }
    seen.sort();
    assert_eq!(
        seen,
        (0..next).collect::<Vec<_>>(),
        "every row exactly once"
    );
    conn.close().await;
}
