//! A subscription reads ahead: when a poll returns rows, the buckets that delivered them are
//! already asked for their next rows, so a caller busy with those rows (a Flink source
//! converting them before it polls again) does not leave the server idle, as Fluss's own
//! LogFetcher keeps fetching while its records are consumed. The read-ahead must lose and
//! repeat nothing: offsets move only when a poll takes an answer.
//!
//! What the server is asked is seen by `common/proxy.rs`, which reads the fetch offsets of the
//! FetchLog requests going through it (real frames to the real server, forwarded unchanged).

use crate::common;
// peer_bugs and writer_abort load it too; each file keeps its own copy of the helper module.
#[allow(clippy::duplicate_mod)]
#[path = "common/proxy.rs"]
mod proxy;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Int32Array, RecordBatch, StringArray};
use common::{log_schema, TestEnv};
use prost::Message;
use proxy::{Action, Dir, Faults, Proxy};
use riverlet::metadata::TableDescriptor;
use riverlet::proto::FetchLogRequest;
use riverlet::scan::{ChangeBatch, StartupMode};
use tokio::sync::Notify;

/// FETCH_LOG.
const API_FETCH_LOG: i16 = 1015;

/// A bound on waits that must end long before it: reaching it fails the test (a liveness
/// check, not a timing assertion).
const HANG: Duration = Duration::from_secs(60);

/// Sees the FetchLog requests the client sends: the highest fetch offset asked so far.
struct FetchWatch {
    highest_offset: AtomicI64,
    changed: Notify,
}

impl Faults for FetchWatch {
    fn on_frame(&self, dir: Dir, api_key: i16, _request_id: i32, frame: &[u8]) -> Action {
        if dir == Dir::ToServer && api_key == API_FETCH_LOG {
            let req = FetchLogRequest::decode(proxy::request_body(frame))
                .expect("a FetchLog request the proxy forwards decodes");
            for b in req.tables_req.iter().flat_map(|t| &t.buckets_req) {
                self.highest_offset
                    .fetch_max(b.fetch_offset, Ordering::SeqCst);
            }
            self.changed.notify_waiters();
        }
        Action::Forward
    }
}

impl FetchWatch {
    /// Waits until a FetchLog request has asked for `offset` or later (it may have been sent
    /// already); fails after [`HANG`].
    async fn await_fetch_from(&self, offset: i64, what: &str) {
        let wait = async {
            loop {
                let changed = self.changed.notified();
                if self.highest_offset.load(Ordering::SeqCst) >= offset {
                    return;
                }
                changed.await;
            }
        };
        if tokio::time::timeout(HANG, wait).await.is_err() {
            panic!(
                "{what}: no FetchLog request from offset {offset} within {HANG:?} (highest asked: {})",
                self.highest_offset.load(Ordering::SeqCst)
            );
        }
    }
}

/// Appends `(id, "row-{id}")` rows and waits for the ack.
async fn append(table: &riverlet::client::Table, ids: std::ops::Range<i32>) {
    let names: Vec<String> = ids.clone().map(|i| format!("row-{i}")).collect();
    let batch = RecordBatch::try_new(
        log_schema().to_arrow(),
        vec![
            Arc::new(Int32Array::from_iter_values(ids)),
            Arc::new(StringArray::from_iter_values(names)),
        ],
    )
    .unwrap();
    let w = table.new_append_writer().unwrap();
    w.append_batch(&batch).await.unwrap();
    w.flush().await.unwrap();
}

/// Every id of `batches`, and checks that each batch starts where the one before it ended.
fn take(batches: &[ChangeBatch], ids: &mut Vec<i32>, next_offset: &mut i64) {
    for b in batches {
        assert_eq!(
            b.first_offset, *next_offset,
            "batches must follow each other with no gap and no repeat"
        );
        *next_offset += b.batch.num_rows() as i64;
        let col = b.batch.column(0).as_primitive::<Int32Type>();
        ids.extend(col.iter().map(|v| v.unwrap()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poll_that_returns_rows_leaves_the_next_fetch_in_flight_and_loses_nothing() {
    let env = TestEnv::new();
    let watch = Arc::new(FetchWatch {
        highest_offset: AtomicI64::new(-1),
        changed: Notify::new(),
    });
    let proxy = Proxy::start(&env.bootstrap, watch.clone(), true);
    let mut config = env.config();
    config.bootstrap_servers = proxy.bootstrap();
    let conn = riverlet::client::Connection::connect(config).await.unwrap();
    let path = env.path("read_ahead");
    let d = TableDescriptor::builder(log_schema())
        .distributed_by(Some(1), Vec::<String>::new())
        .build()
        .unwrap();
    let table = common::create_table(&conn, &path, d).await;
    append(&table, 0..100).await;

    let mut sub = table.subscribe(StartupMode::Earliest).await.unwrap();
    let (mut ids, mut next_offset) = (Vec::new(), 0i64);
    let give_up = tokio::time::Instant::now() + HANG;
    while ids.is_empty() {
        assert!(tokio::time::Instant::now() < give_up, "no rows arrived");
        let got = sub.poll(Duration::from_millis(500)).await.unwrap();
        take(&got, &mut ids, &mut next_offset);
    }
    // The poll has returned rows up to `next_offset`; nobody polls now, yet the bucket is asked
    // for what follows them (the request may have gone out before the poll returned). Without
    // the read-ahead no request asks for `next_offset` until the next poll.
    watch
        .await_fetch_from(next_offset, "read-ahead after a poll that returned rows")
        .await;

    // Rows written later still arrive, each once and in order, after those read ahead.
    append(&table, 100..250).await;
    while ids.len() < 250 {
        assert!(
            tokio::time::Instant::now() < give_up,
            "only {} of 250 rows arrived",
            ids.len()
        );
        let got = sub.poll(Duration::from_millis(500)).await.unwrap();
        take(&got, &mut ids, &mut next_offset);
    }
    assert_eq!(
        ids,
        (0..250).collect::<Vec<_>>(),
        "every row once, in order"
    );
    assert_eq!(
        sub.position().iter().map(|p| p.offset).collect::<Vec<_>>(),
        vec![250],
        "the position names the rows returned, not those read ahead"
    );
    // Nothing more is delivered (a read-ahead answer must not be handed out twice).
    let more = sub.poll(Duration::from_millis(300)).await.unwrap();
    assert!(more.is_empty(), "rows past the end: {more:?}");
    conn.close().await;
}
