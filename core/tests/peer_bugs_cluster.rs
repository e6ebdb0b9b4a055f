//! apache/fluss#4125 (#4121, and the Rust client's #4238 after a failover): an idempotent writer
//! that appends while the leader of a bucket dies and comes back keeps writing, with no
//! OUT_OF_ORDER_SEQUENCE error and no loop of them: every write is acknowledged, and every
//! acknowledged row is in the table exactly once.
//!
//! Needs a real Apache Fluss cluster with several tablet servers, started by
//! `tests/fluss-cluster/start.sh --tablets 3 WORKDIR`, in `RIVERLET_TEST_BOOTSTRAP`, and that
//! WORKDIR in `RIVERLET_TEST_FLUSS_CLUSTER_DIR`: the tests kill (SIGKILL) or freeze (SIGSTOP)
//! the tablet server leading bucket 0 with `ctl.sh` and bring it back (also when a test fails).
//! The frozen server answers the sends the writer gave up on it once it is thawed, late: those
//! answers must not be taken for the batches' later sends (the send tokens of
//! core/src/write/core.rs). Against the
//! embedded server (one server: no leader to change) or without the directory it reports
//! itself NOT APPLICABLE. tests/reliability/failover.py does the same at scale.

use crate::common;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{Int32Array, RecordBatch, StringArray};
use common::{fetch_all, ids, log_schema, not_applicable, TestEnv};
use riverlet::metadata::TableDescriptor;

const DIR_VAR: &str = "RIVERLET_TEST_FLUSS_CLUSTER_DIR";
const BUCKETS: i32 = 3;
/// Rows per write.
const ROWS: i32 = 20;
/// Writes in flight at once (more than the 5 batches per bucket a writer may have out).
const IN_FLIGHT: usize = 12;

fn batch(ids: std::ops::Range<i32>) -> RecordBatch {
    let names: Vec<String> = ids.clone().map(|i| format!("row-{i}")).collect();
    RecordBatch::try_new(
        log_schema().to_arrow(),
        vec![
            Arc::new(Int32Array::from_iter_values(ids)),
            Arc::new(StringArray::from_iter_values(names)),
        ],
    )
    .unwrap()
}

const CTL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fluss-cluster/ctl.sh");

fn ctl(action: &str, role: &str, dir: &str) {
    let out = std::process::Command::new("bash")
        .args([CTL, action, role, dir])
        .output()
        .expect("running ctl.sh");
    assert!(
        out.status.success(),
        "ctl.sh {action} {role}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// How the leader of bucket 0 is taken away.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fault {
    /// SIGKILL, then `ctl.sh start`: its connections break at once.
    Kill,
    /// SIGSTOP, then SIGCONT: its connections stay open and unanswered, so the writer gives
    /// its sends up on a leader recheck; once thawed, the server answers them, late.
    Freeze,
}

impl Fault {
    fn actions(self) -> (&'static str, &'static str) {
        match self {
            Fault::Kill => ("kill", "start"),
            Fault::Freeze => ("freeze", "thaw"),
        }
    }
}

/// Brings the tablet server back when dropped (after a failed assertion too), so the cluster
/// is whole for whatever runs next.
struct Undo {
    action: &'static str,
    role: String,
    dir: String,
    done: bool,
}

impl Undo {
    fn now(&mut self) {
        if !self.done {
            self.done = true;
            ctl(self.action, &self.role, &self.dir);
        }
    }
}

impl Drop for Undo {
    fn drop(&mut self) {
        if !self.done {
            self.done = true;
            let out = std::process::Command::new("bash")
                .args([CTL, self.action, &self.role, &self.dir])
                .output();
            eprintln!("{} {} after a failure: {out:?}", self.action, self.role);
        }
    }
}

/// Waits (bounded) until tablet server `id` is a live server of the cluster again: a thawed
/// server registers again only once it finds its ZooKeeper session expired, a few seconds
/// later, and the next test must find the whole cluster (a table of replication factor 3 needs
/// three live servers).
async fn await_server_back(conn: &riverlet::client::Connection, id: i32) {
    let give_up = Instant::now() + Duration::from_secs(90);
    loop {
        let listed = async {
            let s = conn.any_tablet_server().await?;
            s.request(&riverlet::proto::MetadataRequest::default())
                .await
        }
        .await
        .map(|m| m.tablet_servers.iter().any(|n| n.node_id == id));
        if matches!(listed, Ok(true)) {
            return;
        }
        assert!(
            Instant::now() < give_up,
            "tablet server {id} did not come back: {listed:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// One fault at a time: the tests of this file share the cluster.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotent_writer_goes_on_through_a_killed_leader_without_out_of_order_errors() {
    writes_through(Fault::Kill).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotent_writer_goes_on_through_a_frozen_leader_and_its_late_answers() {
    writes_through(Fault::Freeze).await;
}

async fn writes_through(fault: Fault) {
    if !common::is_external() {
        not_applicable("needs a real Fluss cluster with several tablet servers");
        return;
    }
    let Some(dir) = std::env::var(DIR_VAR).ok().filter(|d| !d.is_empty()) else {
        not_applicable(&format!(
            "{DIR_VAR} is not set: the test needs the cluster's WORKDIR to kill, freeze and \
             restart a tablet server with tests/fluss-cluster/ctl.sh"
        ));
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    // What the client did (leader moves seen, sends given up, retries), in the test's output.
    let _ = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .with_test_writer()
        .try_init();
    let env = TestEnv::new();
    let conn = env.connect().await;
    let path = env.path("failover");
    let d = TableDescriptor::builder(log_schema())
        .distributed_by(Some(BUCKETS), ["id"])
        .build()
        .unwrap();
    let table = common::create_table(&conn, &path, d).await;
    let leaders = table.bucket_leaders().await.unwrap();
    let victim = leaders[0].leader.clone().expect("bucket 0 has a leader");
    let (take, give) = fault.actions();
    eprintln!(
        "leaders: {:?}; {take} tablet-{}",
        leaders
            .iter()
            .map(|l| l.leader.as_ref().map(|n| n.id))
            .collect::<Vec<_>>(),
        victim.id
    );

    // The writer: writes of ROWS rows, IN_FLIGHT of them unanswered at a time, until told to
    // stop; every write's outcome is kept.
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let table = table.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let w = table.new_append_writer().unwrap();
            let mut pending = VecDeque::new();
            let mut done: Vec<(std::ops::Range<i32>, riverlet::Result<()>)> = Vec::new();
            let mut next = 0;
            while !stop.load(Ordering::SeqCst) {
                let ids = next..next + ROWS;
                next += ROWS;
                pending.push_back((ids.clone(), w.append_batch(&batch(ids))));
                if pending.len() >= IN_FLIGHT {
                    let (ids, f) = pending.pop_front().unwrap();
                    done.push((ids, f.await));
                }
            }
            for (ids, f) in pending {
                done.push((ids, f.await));
            }
            let flushed = w.flush().await;
            (done, flushed)
        })
    };

    tokio::time::sleep(Duration::from_secs(1)).await;
    let role = format!("tablet-{}", victim.id);
    let mut undo = Undo {
        action: give,
        role: role.clone(),
        dir: dir.clone(),
        done: false,
    };
    {
        let (role, dir) = (role.clone(), dir.clone());
        tokio::task::spawn_blocking(move || ctl(take, &role, &dir))
            .await
            .unwrap();
    }
    // Bucket 0 gets another leader once ZooKeeper expires the server's session.
    let give_up = Instant::now() + Duration::from_secs(90);
    loop {
        let now = table.bucket_leaders().await.unwrap();
        if now[0].leader.as_ref().is_some_and(|n| n.id != victim.id) {
            eprintln!("bucket 0 now led by {:?}", now[0].leader);
            break;
        }
        assert!(
            Instant::now() < give_up,
            "bucket 0 got no new leader: {now:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // Writes go on through the new leader for a while, then the old one comes back (as a
    // follower; a frozen one answers what it was sent before, late) and they go on again.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut undo = tokio::task::spawn_blocking(move || {
        undo.now();
        undo
    })
    .await
    .unwrap();
    undo.done = true;
    await_server_back(&conn, victim.id).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, Ordering::SeqCst);
    let (done, flushed) = tokio::time::timeout(Duration::from_secs(180), writer)
        .await
        .expect("the writer did not finish")
        .unwrap();

    let failed: Vec<_> = done.iter().filter(|(_, r)| r.is_err()).collect();
    assert!(
        failed.is_empty(),
        "{fault:?}: {} of {} writes failed, the first: {:?}",
        failed.len(),
        done.len(),
        failed.first()
    );
    flushed.unwrap();
    let mut acked: Vec<i32> = done.iter().flat_map(|(ids, _)| ids.clone()).collect();
    acked.sort();
    let rows = ids(&fetch_all(&conn, &table, None).await);
    assert_eq!(
        rows.len(),
        acked.len(),
        "{fault:?}: rows lost or written twice"
    );
    assert_eq!(
        rows, acked,
        "{fault:?}: every acknowledged row exactly once"
    );
    eprintln!(
        "{fault:?}: {} writes, {} rows, all acknowledged once",
        done.len(),
        acked.len()
    );
    conn.close().await;
}

/// apache/fluss#4149 (and #2710): a new table whose buckets get no serving leader for a long
/// time. The table is created (replication factor 1) while one tablet server is frozen but
/// still registered, so some buckets go to it: first their leader is named but does not
/// answer (#4149's situation, there a server still recovering), then ZooKeeper expires the
/// server and the buckets have no leader at all. In both phases a write ends within the
/// writer's delivery timeout (plus one request timeout) in a typed error naming the table and
/// the bucket, instead of retrying for ever; so does a read in the second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_table_whose_bucket_gets_no_leader_fails_writes_naming_table_and_bucket() {
    if !common::is_external() {
        not_applicable("needs a real Fluss cluster with several tablet servers");
        return;
    }
    let Some(dir) = std::env::var(DIR_VAR).ok().filter(|d| !d.is_empty()) else {
        not_applicable(&format!(
            "{DIR_VAR} is not set: the test needs the cluster's WORKDIR to freeze a tablet \
             server with tests/fluss-cluster/ctl.sh"
        ));
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let env = TestEnv::new();
    let mut config = env.config();
    config.request_timeout = Duration::from_secs(8);
    config.writer.delivery_timeout = Duration::from_secs(5);
    let conn = riverlet::client::Connection::connect(config).await.unwrap();
    let before = {
        let probe = env.path("probe");
        let d = TableDescriptor::builder(log_schema())
            .distributed_by(Some(BUCKETS), ["id"])
            .build()
            .unwrap();
        let t = common::create_table(&conn, &probe, d).await;
        t.bucket_leaders().await.unwrap()
    };
    // Any tablet server: it will be frozen.
    let victim = before[0].leader.clone().expect("a leader").id;
    let role = format!("tablet-{victim}");
    let mut undo = Undo {
        action: "thaw",
        role: role.clone(),
        dir: dir.clone(),
        done: false,
    };
    {
        let (role, dir) = (role.clone(), dir.clone());
        tokio::task::spawn_blocking(move || ctl("freeze", &role, &dir))
            .await
            .unwrap();
    }
    // Created while the frozen server is still registered: some buckets go to it, with one
    // replica each.
    const NEW_BUCKETS: i32 = 6;
    let path = env.path("no_leader");
    let d = TableDescriptor::builder(log_schema())
        .distributed_by(Some(NEW_BUCKETS), ["id"])
        .property("table.replication.factor", "1")
        .build()
        .unwrap();
    conn.admin().create_table(&path, &d, false).await.unwrap();
    let table = conn.table(&path).await.unwrap();
    let w = table.new_append_writer().unwrap();
    let e = tokio::time::timeout(Duration::from_secs(120), w.append_batch(&batch(0..200)))
        .await
        .expect("the write neither succeeded nor failed within 120 s")
        .expect_err("a write to a bucket that never got a leader succeeded");
    let leaders = table.bucket_leaders().await.unwrap();
    eprintln!("write error: {e}; leaders now: {leaders:?}");
    let stranded: Vec<i32> = leaders
        .iter()
        .filter(|l| l.leader.as_ref().is_none_or(|n| n.id == victim))
        .map(|l| l.bucket)
        .collect();
    assert!(
        !stranded.is_empty(),
        "every bucket got a leader on a live server: {leaders:?}"
    );
    assert!(
        e.is_retriable() || matches!(e.kind(), riverlet::ErrorKind::Timeout),
        "not the error of a bucket without a serving leader: {e}"
    );
    assert!(e.message().contains(&path.to_string()), "{e}");
    assert!(
        stranded
            .iter()
            .any(|b| e.message().contains(&format!("bucket {b} "))),
        "the error names none of the buckets without a leader {stranded:?}: {e}"
    );

    // Once ZooKeeper has expired the frozen server, the coordinator takes its buckets offline
    // (one replica: nobody else can lead them): the metadata names no leader for them at all.
    let give_up = Instant::now() + Duration::from_secs(60);
    let leaderless: Vec<i32> = loop {
        let l = table.bucket_leaders().await.unwrap();
        let none: Vec<i32> = l
            .iter()
            .filter(|l| l.leader.is_none())
            .map(|l| l.bucket)
            .collect();
        if !none.is_empty() {
            break none;
        }
        assert!(Instant::now() < give_up, "no bucket lost its leader: {l:?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let names_one = |e: &riverlet::Error| {
        e.message().contains(&path.to_string())
            && leaderless
                .iter()
                .any(|b| e.message().contains(&format!("bucket {b} ")))
    };
    let e = tokio::time::timeout(Duration::from_secs(120), w.append_batch(&batch(1000..1200)))
        .await
        .expect("the write neither succeeded nor failed within 120 s")
        .expect_err("a write to a bucket without a leader succeeded");
    eprintln!("write error with no leader: {e}");
    assert_eq!(
        e.fluss_code(),
        Some(riverlet::error::codes::LEADER_NOT_AVAILABLE_EXCEPTION),
        "{e}"
    );
    assert!(
        names_one(&e),
        "not naming the table and a leaderless bucket {leaderless:?}: {e}"
    );
    // A read of the table ends the same way.
    let r = tokio::time::timeout(Duration::from_secs(120), table.scan().collect())
        .await
        .expect("the read neither succeeded nor failed within 120 s");
    let e = r.expect_err("a read of a table with a leaderless bucket succeeded");
    eprintln!("read error with no leader: {e}");
    assert!(e.is_retriable(), "{e}");
    assert!(
        names_one(&e),
        "not naming the table and a leaderless bucket {leaderless:?}: {e}"
    );

    let mut undo = tokio::task::spawn_blocking(move || {
        undo.now();
        undo
    })
    .await
    .unwrap();
    undo.done = true;
    // Leave the cluster whole for what runs next.
    await_server_back(&conn, victim).await;
    conn.close().await;
}
