//! A subscription outlives its server going away: while the server is down `poll` returns
//! nothing instead of an error (Fluss's log scanner refreshes its metadata and keeps each
//! bucket's offset, and raises nothing for a broken connection), and once the server is back on
//! the same port and data directory the subscription carries on from where it was, with no row
//! missing and none twice. Embedded server only: the test stops and restarts it.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use riverlet::client::{ClientConfig, Connection};
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet::row::Datum;
use riverlet::scan::{StartupMode, Subscription};
use riverlet_server::{AsyncServer, ServerConfig};

const BUCKETS: i32 = 3;

async fn append(conn: &Connection, path: &TablePath, ids: std::ops::Range<i32>) {
    let table = conn.table(path).await.unwrap();
    let w = table.new_append_writer().unwrap();
    let rows: Vec<Vec<Datum>> = ids.map(|i| vec![Datum::Int(i)]).collect();
    w.append_rows(&rows).await.unwrap();
    w.flush().await.unwrap();
}

/// Polls until `want` rows in all were received (bounded: fails after 60 s), recording each id
/// and each (bucket, first offset, rows) so gaps and repeats show.
async fn poll_until(
    sub: &mut Subscription,
    want: usize,
    ids: &mut Vec<i32>,
    spans: &mut BTreeMap<i32, Vec<(i64, usize)>>,
) {
    let give_up = Instant::now() + Duration::from_secs(60);
    while ids.len() < want {
        assert!(
            Instant::now() < give_up,
            "only {} of {want} rows arrived",
            ids.len()
        );
        for b in sub.poll(Duration::from_millis(200)).await.unwrap() {
            let col = b.batch.column(0).as_primitive::<Int32Type>();
            ids.extend(col.iter().map(|v| v.unwrap()));
            spans
                .entry(b.bucket)
                .or_default()
                .push((b.first_offset, b.batch.num_rows()));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_waits_out_its_server_and_resumes_without_gaps_or_repeats() {
    let data = tempfile::tempdir().unwrap();
    let server = AsyncServer::start(ServerConfig::new(data.path()).with_port(0))
        .await
        .unwrap();
    let port = server.local_addr().port();
    let bootstrap = server.bootstrap_servers();
    let path = TablePath::new("d", "log");
    let mut config = ClientConfig::new(&bootstrap);
    config.request_timeout = Duration::from_secs(5);
    let conn = Connection::connect(config).await.unwrap();
    conn.admin().create_database("d", false).await.unwrap();
    let schema = Schema::builder()
        .column("id", DataType::int().not_null())
        .build()
        .unwrap();
    let d = TableDescriptor::builder(schema)
        .distributed_by(Some(BUCKETS), Vec::<String>::new())
        .build()
        .unwrap();
    conn.admin().create_table(&path, &d, false).await.unwrap();
    append(&conn, &path, 0..30).await;

    let table = conn.table(&path).await.unwrap();
    let mut sub = table.subscribe(StartupMode::Earliest).await.unwrap();
    let (mut ids, mut spans) = (Vec::new(), BTreeMap::new());
    poll_until(&mut sub, 30, &mut ids, &mut spans).await;

    // The server goes away: polls return (empty) and raise nothing.
    server.shutdown().await.unwrap();
    for _ in 0..5 {
        let got = sub.poll(Duration::from_millis(300)).await;
        assert!(
            matches!(&got, Ok(b) if b.is_empty()),
            "poll while the server is down must return no rows and no error, got {got:?}"
        );
    }

    // It comes back on the same port and data directory; new rows arrive after the old ones.
    let server = AsyncServer::start(ServerConfig::new(data.path()).with_port(port))
        .await
        .unwrap();
    append(&conn, &path, 30..60).await;
    poll_until(&mut sub, 60, &mut ids, &mut spans).await;

    ids.sort_unstable();
    assert_eq!(ids, (0..60).collect::<Vec<_>>(), "every row exactly once");
    for (bucket, s) in &spans {
        let mut next = 0;
        for (first, n) in s {
            assert_eq!(
                *first, next,
                "bucket {bucket}: batches must follow each other"
            );
            next = first + *n as i64;
        }
    }
    server.shutdown().await.unwrap();
}
