//! Read-optimized reads of primary-key tables (Fluss's `read.optimized`): each bucket's latest
//! KV snapshot without the log after it. The embedded server takes the snapshots (periodically,
//! `kv.snapshot.interval`, or on the test's demand, as Fluss's test harness does), so the
//! expected rows are exactly what was written before the snapshot.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use riverlet::client::{ClientConfig, Connection, OffsetSpec, Table};
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet::row::Datum;
use riverlet::ErrorKind;
use riverlet_server::{LocalServer, ServerConfig};

#[path = "common/kv_rows.rs"]
mod kv_rows;

use kv_rows::{delete, expected, rows_of, upsert};

const BUCKETS: i32 = 3;

async fn pk_table(conn: &Connection, name: &str) -> Table {
    kv_rows::pk_table(conn, name, BUCKETS).await
}

async fn read_optimized(table: &Table) -> BTreeMap<i32, String> {
    rows_of(&table.scan().read_optimized(true).collect().await.unwrap())
}

async fn latest(table: &Table) -> BTreeMap<i32, String> {
    rows_of(&table.scan().collect().await.unwrap())
}

/// Whether every bucket's latest snapshot covers its whole log (buckets never written have
/// none), and the snapshot ids.
async fn snapshots_cover_the_log(table: &Table) -> (bool, Vec<Option<i64>>) {
    let path = &table.info.table_path;
    let hw = table
        .conn
        .admin()
        .list_offsets(path, None, &[], OffsetSpec::Latest)
        .await
        .unwrap();
    let snaps = table
        .conn
        .admin()
        .latest_kv_snapshots(path, None)
        .await
        .unwrap();
    assert_eq!(snaps.len(), BUCKETS as usize);
    let covered = snaps
        .iter()
        .all(|s| s.log_offset.unwrap_or(0) == hw[&s.bucket]);
    (covered, snaps.iter().map(|s| s.snapshot_id).collect())
}

async fn wait_until_snapshots_cover_the_log(table: &Table) -> Vec<Option<i64>> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (covered, ids) = snapshots_cover_the_log(table).await;
        if covered {
            return ids;
        }
        assert!(
            Instant::now() < deadline,
            "the periodic KV snapshots never caught up with the log: {ids:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn snapshot_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            snapshot_files(&p, out);
        } else if p.file_name().and_then(|n| n.to_str())
            == Some(riverlet::record::kv_snapshot::KV_SNAPSHOT_FILE_NAME)
        {
            out.push(p);
        }
    }
}

async fn snapshot_then_tail_case(fluss_0_9_apis: bool) {
    let data = tempfile::tempdir().unwrap();
    let mut cfg = ServerConfig::new(data.path()).with_port(0);
    cfg.fluss_0_9_apis = fluss_0_9_apis;
    let server = LocalServer::start(cfg).unwrap();
    let conn = Connection::connect(ClientConfig::new(server.bootstrap_servers()))
        .await
        .unwrap();
    let table = pk_table(&conn, "t").await;

    // No snapshot yet: every bucket contributes nothing (as Fluss's read.optimized).
    upsert(&table, &[(0, "a0"), (1, "a1")]).await;
    assert!(read_optimized(&table).await.is_empty());
    let snaps = conn
        .admin()
        .latest_kv_snapshots(&table.info.table_path, None)
        .await
        .unwrap();
    assert!(snaps.iter().all(|s| s.snapshot_id.is_none()), "{snaps:?}");

    upsert(
        &table,
        &[(2, "a2"), (3, "a3"), (4, "a4"), (5, "a5"), (1, "b1")],
    )
    .await;
    delete(&table, &[0]).await;
    server.take_kv_snapshots();
    let (covered, ids) = snapshots_cover_the_log(&table).await;
    assert!(covered, "{ids:?}");
    let at_snapshot = expected(&[(1, "b1"), (2, "a2"), (3, "a3"), (4, "a4"), (5, "a5")]);
    assert_eq!(read_optimized(&table).await, at_snapshot);

    // The log tail after the snapshot is not merged.
    upsert(&table, &[(2, "c2"), (6, "a6")]).await;
    delete(&table, &[3]).await;
    assert_eq!(read_optimized(&table).await, at_snapshot);
    let now = expected(&[(1, "b1"), (2, "c2"), (4, "a4"), (5, "a5"), (6, "a6")]);
    assert_eq!(latest(&table).await, now);

    // Projection, filter and limit apply to the snapshot's rows.
    let b = table
        .scan()
        .read_optimized(true)
        .filter_text("k <= 3")
        .project(&["v"])
        .collect()
        .await
        .unwrap();
    let mut vs: Vec<String> = b
        .iter()
        .flat_map(|b| {
            assert_eq!(b.num_columns(), 1);
            let v = b.column(0).as_string::<i32>();
            (0..b.num_rows())
                .map(|i| v.value(i).to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    vs.sort();
    assert_eq!(vs, ["a2", "a3", "b1"]);
    let n: usize = table
        .scan()
        .read_optimized(true)
        .limit(2)
        .collect()
        .await
        .unwrap()
        .iter()
        .map(|b| b.num_rows())
        .sum();
    assert_eq!(n, 2);

    // A snapshot whose file this client cannot read is rebuilt from the log while the log
    // still starts at offset 0: the same state.
    let mut files = Vec::new();
    snapshot_files(data.path(), &mut files);
    assert!(!files.is_empty());
    for f in &files {
        std::fs::remove_file(f).unwrap();
    }
    assert_eq!(read_optimized(&table).await, at_snapshot);

    // The next snapshot catches up with the log.
    server.take_kv_snapshots();
    let (covered, new_ids) = snapshots_cover_the_log(&table).await;
    assert!(covered);
    assert_ne!(new_ids, ids);
    assert_eq!(read_optimized(&table).await, now);

    // Options that cannot go with it.
    let e = table
        .scan()
        .read_optimized(true)
        .changelog(true)
        .collect()
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.message().contains("read-optimized"), "{e}");
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_optimized_returns_the_snapshot_state_not_the_log_tail() {
    snapshot_then_tail_case(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_optimized_without_scan_kv() {
    snapshot_then_tail_case(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn periodic_snapshots_follow_kv_snapshot_interval() {
    let data = tempfile::tempdir().unwrap();
    let cfg = ServerConfig::new(data.path())
        .with_port(0)
        .with_options([("kv.snapshot.interval", "100ms")])
        .unwrap();
    let server = LocalServer::start(cfg).unwrap();
    let conn = Connection::connect(ClientConfig::new(server.bootstrap_servers()))
        .await
        .unwrap();
    let table = pk_table(&conn, "p").await;
    upsert(&table, &[(1, "a1"), (2, "a2"), (3, "a3")]).await;
    let first = wait_until_snapshots_cover_the_log(&table).await;
    assert_eq!(
        read_optimized(&table).await,
        expected(&[(1, "a1"), (2, "a2"), (3, "a3")])
    );
    upsert(&table, &[(1, "b1"), (4, "a4")]).await;
    let second = wait_until_snapshots_cover_the_log(&table).await;
    assert_ne!(first, second);
    assert_eq!(
        read_optimized(&table).await,
        expected(&[(1, "b1"), (2, "a2"), (3, "a3"), (4, "a4")])
    );
    conn.close().await;
}

#[test]
fn kv_snapshot_interval_is_checked() {
    let c = ServerConfig::new("unused");
    assert_eq!(
        c.kv_snapshot_interval, None,
        "periodic snapshots are opt-in"
    );
    let e = c
        .clone()
        .with_options([("kv.snapshot.interval", "soon")])
        .unwrap_err();
    assert!(e.message().contains("kv.snapshot.interval"), "{e}");
    let e = c
        .clone()
        .with_options([("kv.snapshot.interval", "0 s")])
        .unwrap_err();
    assert!(e.message().contains("positive duration"), "{e}");
    let e = c
        .with_options([("kv.snapshot.intervall", "1s")])
        .unwrap_err();
    assert!(e.message().contains("kv.snapshot.intervall"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_optimized_partitioned_table_reads_each_partitions_snapshot() {
    use riverlet::metadata::PartitionSpec;
    let data = tempfile::tempdir().unwrap();
    let server = LocalServer::start(ServerConfig::new(data.path()).with_port(0)).unwrap();
    let conn = Connection::connect(ClientConfig::new(server.bootstrap_servers()))
        .await
        .unwrap();
    conn.admin().create_database("d", true).await.unwrap();
    let path = TablePath::new("d", "parted");
    let schema = Schema::builder()
        .column("k", DataType::int().not_null())
        .column("v", DataType::string())
        .column("dt", DataType::string().not_null())
        .primary_key(["k", "dt"])
        .build()
        .unwrap();
    let d = TableDescriptor::builder(schema)
        .partitioned_by(["dt"])
        .distributed_by(Some(2), Vec::<String>::new())
        .build()
        .unwrap();
    conn.admin().create_table(&path, &d, false).await.unwrap();
    for dt in ["a", "b"] {
        conn.admin()
            .create_partition(&path, &PartitionSpec::new([("dt", dt)]), false)
            .await
            .unwrap();
    }
    let table = conn.table(&path).await.unwrap();
    let w = table.new_upsert_writer(None).unwrap();
    let put = |k: i32, v: &str, dt: &str| {
        vec![
            Datum::Int(k),
            Datum::String(v.to_string()),
            Datum::String(dt.to_string()),
        ]
    };
    w.upsert_rows(&[put(1, "a1", "a"), put(2, "a2", "a"), put(1, "b1", "b")])
        .await
        .unwrap();
    w.flush().await.unwrap();
    server.take_kv_snapshots();
    w.upsert_rows(&[put(3, "a3", "a"), put(1, "B1", "b")])
        .await
        .unwrap();
    w.flush().await.unwrap();
    let mut got: Vec<(i32, String)> = Vec::new();
    for b in table.scan().read_optimized(true).collect().await.unwrap() {
        let k = b.column_by_name("k").unwrap().as_primitive::<Int32Type>();
        let v = b.column_by_name("v").unwrap().as_string::<i32>();
        for i in 0..b.num_rows() {
            got.push((k.value(i), v.value(i).to_string()));
        }
    }
    got.sort();
    assert_eq!(
        got,
        vec![
            (1, "a1".to_string()),
            (1, "b1".to_string()),
            (2, "a2".to_string())
        ]
    );
    let only_b = table
        .scan()
        .read_optimized(true)
        .partitions(["b"])
        .collect()
        .await
        .unwrap();
    assert_eq!(only_b.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
    conn.close().await;
}
