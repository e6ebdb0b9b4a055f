//! A writer's abort: it stops at once, without waiting for the server, and fails every write
//! the server has not acknowledged with `ErrorKind::Closed` (a stream processor's cancelled
//! task, which restores from its last checkpoint and writes those rows again, must not wait up
//! to the delivery timeout for acknowledgements nobody needs).
//!
//! The unreachable server is the real server behind `common/proxy.rs`, which from a point on
//! holds every request frame back for good: to the client the server is there (the connections
//! stay open) but never answers, the case where a close waits for the delivery timeout.

use crate::common;
// peer_bugs loads it too (privately); each file keeps its own copy of the helper module.
#[allow(clippy::duplicate_mod)]
#[path = "common/proxy.rs"]
mod proxy;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use common::{descriptor, ids, rows_batch, TestEnv};
use proxy::{Action, Dir, Faults, Proxy, API_PRODUCE_LOG};
use riverlet::blocking::{Connection, ReadRequest, TableWriters, WriteHandle};
use riverlet::metadata::TablePath;
use riverlet::ErrorKind;

/// PUT_KV.
const API_PUT_KV: i16 = 1016;

/// A bound on waits that must end long before it: reaching it fails the test (a liveness
/// check, not a timing assertion).
const HANG: Duration = Duration::from_secs(60);

/// Once armed, holds every request frame back for good, and counts the write requests held.
#[derive(Default)]
struct Unreachable {
    armed: AtomicBool,
    /// Held PRODUCE_LOG and PUT_KV requests.
    held: Mutex<(u32, u32)>,
    changed: Condvar,
}

impl Faults for Unreachable {
    fn on_frame(&self, dir: Dir, api_key: i16, _request_id: i32, _frame: &[u8]) -> Action {
        if dir != Dir::ToServer || !self.armed.load(Ordering::SeqCst) {
            return Action::Forward;
        }
        let mut held = self.held.lock().unwrap();
        match api_key {
            API_PRODUCE_LOG => held.0 += 1,
            API_PUT_KV => held.1 += 1,
            _ => {}
        }
        self.changed.notify_all();
        Action::Hold(Box::pin(std::future::pending()))
    }
}

impl Unreachable {
    /// Waits until at least one request of each write API is held (the writers have batches
    /// in flight that will never be answered).
    fn await_writes_held(&self) {
        let held = self.held.lock().unwrap();
        let (held, timeout) = self
            .changed
            .wait_timeout_while(held, HANG, |(log, kv)| *log == 0 || *kv == 0)
            .unwrap();
        assert!(
            !timeout.timed_out(),
            "the writers sent no request within {HANG:?} (held: {held:?})"
        );
    }
}

fn create(env: &TestEnv, conn: &Connection, name: &str, pk: bool) -> TablePath {
    let path = env.path(name);
    let d = descriptor(pk, false, 2);
    conn.admin().create_table(&path, &d, false).unwrap();
    common::await_leaders_blocking(env, &path, &d);
    path
}

fn read_ids(conn: &Connection, path: &TablePath) -> Vec<i32> {
    let batches = conn
        .table(path)
        .unwrap()
        .read(&ReadRequest::default())
        .unwrap()
        .read_all()
        .unwrap();
    ids(&batches)
}

fn assert_discarded(r: riverlet::Result<()>, what: &str) {
    let e = r.expect_err(what);
    assert_eq!(e.kind(), ErrorKind::Closed, "{what}: {e}");
    assert!(e.message().contains("discarded by an abort"), "{what}: {e}");
}

#[test]
fn abort_returns_while_the_server_does_not_answer_and_fails_unacknowledged_writes() {
    let env = TestEnv::new();
    let direct = Connection::connect(env.config()).unwrap();
    let log = create(&env, &direct, "abort_log", false);
    let kv = create(&env, &direct, "abort_kv", true);

    // The proxy's tasks run on a runtime of the test's own (the blocking facade has its own).
    let rt = tokio::runtime::Runtime::new().unwrap();
    let faults = Arc::new(Unreachable::default());
    let proxy = {
        let _in = rt.enter();
        Proxy::start(&env.bootstrap, faults.clone(), true)
    };
    let mut config = env.config();
    config.bootstrap_servers = proxy.bootstrap();
    // A close would wait this long for the acks: longer than the test's bound.
    config.writer.delivery_timeout = Duration::from_secs(24 * 3600);
    let conn = Connection::connect(config).unwrap();

    // An append writer of its own, and the table-level writers a binding uses (upserts).
    let appender = Arc::new(conn.table(&log).unwrap().new_append_writer().unwrap());
    let writers = Arc::new(TableWriters::new(conn.table(&kv).unwrap()));
    appender
        .append(&rows_batch(&[(1, "a", "eu"), (2, "b", "eu")]))
        .unwrap()
        .wait()
        .unwrap();
    let upserter = writers.upsert_writer(None).unwrap();
    upserter
        .upsert(&rows_batch(&[(1, "a", "eu")]))
        .unwrap()
        .wait()
        .unwrap();

    // From here on the server answers nothing.
    faults.armed.store(true, Ordering::SeqCst);
    let mut pending: Vec<(String, WriteHandle)> = Vec::new();
    // The same rows through both writers.
    let mut write_both = |i: i32, rows: &[(i32, &str, &str)]| {
        pending.push((
            format!("append {i}"),
            appender.append(&rows_batch(rows)).unwrap(),
        ));
        pending.push((
            format!("upsert {i}"),
            upserter.upsert(&rows_batch(rows)).unwrap(),
        ));
    };
    for i in 10..20 {
        write_both(i, &[(i, "x", "eu"), (i + 100, "y", "eu")]);
    }
    faults.await_writes_held();
    // More writes queued behind the ones in flight.
    for i in 20..25 {
        write_both(i, &[(i, "z", "us")]);
    }
    assert!(appender.inner().buffered_bytes() > 0);
    assert!(upserter.inner().buffered_bytes() > 0);

    let (done_tx, done_rx) = mpsc::channel();
    {
        let appender = appender.clone();
        let writers = writers.clone();
        std::thread::spawn(move || {
            let r = appender.abort().and_then(|()| writers.abort());
            let _ = done_tx.send(r);
        });
    }
    match done_rx.recv_timeout(HANG) {
        Ok(r) => r.unwrap(),
        Err(_) => panic!("abort did not return within {HANG:?} while the server did not answer"),
    }

    for (what, handle) in pending {
        assert_discarded(handle.wait(), &what);
    }
    // The buffered bytes were released.
    assert_eq!(appender.inner().buffered_bytes(), 0);
    assert_eq!(upserter.inner().buffered_bytes(), 0);
    // Later calls of the aborted writers fail Closed.
    let e = appender
        .append(&rows_batch(&[(30, "late", "eu")]))
        .expect_err("an append after the abort");
    assert_eq!(e.kind(), ErrorKind::Closed, "{e}");
    let e = upserter
        .upsert(&rows_batch(&[(30, "late", "eu")]))
        .expect_err("an upsert after the abort");
    assert_eq!(e.kind(), ErrorKind::Closed, "{e}");
    let e = appender.flush().expect_err("a flush after the abort");
    assert_eq!(e.kind(), ErrorKind::Closed, "{e}");
    // Aborting again does nothing.
    appender.abort().unwrap();
    writers.abort().unwrap();

    // What was acknowledged before the abort is in the tables, and nothing else (the proxy
    // never passed the later requests on).
    assert_eq!(read_ids(&direct, &log), vec![1, 2]);
    assert_eq!(read_ids(&direct, &kv), vec![1]);
    drop(rt);
}

#[test]
fn rows_acknowledged_before_an_abort_stay_and_a_new_writer_writes_again() {
    let env = TestEnv::new();
    let conn = Connection::connect(env.config()).unwrap();
    for (name, pk) in [("after_abort_log", false), ("after_abort_kv", true)] {
        let path = create(&env, &conn, name, pk);
        let writers = TableWriters::new(conn.table(&path).unwrap());
        let write = |rows: &[(i32, &str, &str)]| -> WriteHandle {
            let batch = rows_batch(rows);
            if pk {
                writers.upsert_writer(None).unwrap().upsert(&batch).unwrap()
            } else {
                writers.append_writer().unwrap().append(&batch).unwrap()
            }
        };
        write(&[(1, "a", "eu"), (2, "b", "us")]);
        write(&[(3, "c", "eu")]);
        writers.flush().unwrap();
        // Written, not waited for: the abort may or may not find them unacknowledged.
        let racing = write(&[(4, "d", "eu")]);
        writers.abort().unwrap();
        let raced = racing.wait();
        if let Err(e) = &raced {
            assert_eq!(e.kind(), ErrorKind::Closed, "{name}: {e}");
        }
        let mut expected = vec![1, 2, 3];
        // An acknowledged write is in the table; a discarded one may be too (a sent batch
        // can still be appended), and is then the only other row.
        let after_abort = read_ids(&conn, &path);
        if raced.is_ok() || after_abort.contains(&4) {
            expected.push(4);
        }
        assert_eq!(after_abort, expected, "{name}");

        // The same table-level writers open new writers (a new writer id) and write again.
        write(&[(5, "e", "eu"), (6, "f", "us")]).wait().unwrap();
        writers.close().unwrap();
        expected.extend([5, 6]);
        assert_eq!(read_ids(&conn, &path), expected, "{name}");
    }
}
