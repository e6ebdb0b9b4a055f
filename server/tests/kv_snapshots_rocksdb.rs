//! KV snapshots as RocksDB files in Apache Fluss's layout (riverlet-server's `kv-snapshot`
//! feature): what GetKvSnapshotMetadata names is Fluss's layout (`snap-{id}/` private files and
//! `_METADATA`, SSTs under UUID names in `shared/`), core's RocksDB reader (riverlet's
//! `kv-snapshot`) reads back exactly the rows written (an update's last value, a deleted key
//! absent), retention keeps the latest two (their shared files too), and a restart keeps them.
//! Fluss's own Java client reads the same snapshots in tests/kv-snapshot-java/.
//!
//!   cargo test -p riverlet-server --features kv-snapshot --test kv_snapshots_rocksdb

mod common;
#[path = "../../core/tests/common/kv_rows.rs"]
mod kv_rows;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use riverlet::client::{ClientConfig, Connection, Table};
use riverlet::metadata::TablePath;
use riverlet::proto::{GetKvSnapshotMetadataRequest, GetKvSnapshotMetadataResponse};
use riverlet_server::LocalServer;

use kv_rows::{delete, expected, rows_of, upsert};

const BUCKETS: i32 = 2;

async fn pk_table(conn: &Connection, name: &str) -> Table {
    kv_rows::pk_table(conn, name, BUCKETS).await
}

/// A read-optimized read: every bucket's latest KV snapshot, read by core's RocksDB reader.
async fn snapshot_rows(table: &Table) -> BTreeMap<i32, String> {
    rows_of(&table.scan().read_optimized(true).collect().await.unwrap())
}

async fn metadata(
    bootstrap: &str,
    table_id: i64,
    bucket: i32,
    snapshot_id: i64,
) -> riverlet::Result<GetKvSnapshotMetadataResponse> {
    let conn = common::connect(bootstrap).await;
    conn.request(&GetKvSnapshotMetadataRequest {
        table_id,
        partition_id: None,
        bucket_id: bucket,
        snapshot_id,
    })
    .await
}

fn local(url: &str) -> PathBuf {
    PathBuf::from(
        url.strip_prefix("file://")
            .unwrap_or_else(|| panic!("not a file:// URL: {url}")),
    )
}

/// The latest snapshot id of every bucket that has one.
async fn latest(conn: &Connection, path: &TablePath) -> BTreeMap<i32, i64> {
    conn.admin()
        .latest_kv_snapshots(path, None)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|s| s.snapshot_id.map(|id| (s.bucket, id)))
        .collect()
}

fn files_in(dir: &Path) -> BTreeSet<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[test]
fn kv_snapshot_interval_defaults_to_flusss() {
    // Apache Fluss 0.9.1, ConfigOptions.KV_SNAPSHOT_INTERVAL: 10 minutes.
    assert_eq!(
        riverlet_server::ServerConfig::new("/unused").kv_snapshot_interval,
        Some(Duration::from_secs(600))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rocksdb_snapshots_in_flusss_layout_read_back_and_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = LocalServer::start(common::config(dir.path())).unwrap();
    let bootstrap = server.bootstrap_servers();
    let conn = Connection::connect(ClientConfig::new(bootstrap.clone()))
        .await
        .unwrap();
    let table = pk_table(&conn, "snap").await;
    let path = TablePath::new("d", "snap");
    let table_id = table.info().table_id;

    upsert(&table, &[(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e")]).await;
    upsert(&table, &[(2, "b2")]).await;
    delete(&table, &[4]).await;
    server.take_kv_snapshots();
    let first = latest(&conn, &path).await;
    assert_eq!(first.len(), BUCKETS as usize, "{first:?}");
    let want = expected(&[(1, "a"), (2, "b2"), (3, "c"), (5, "e")]);
    assert_eq!(snapshot_rows(&table).await, want);

    // What GetKvSnapshotMetadata names is Fluss's layout: private files (named by UUIDs) in
    // snap-{id}/ beside _METADATA, SSTs in the bucket's shared/, each with its RocksDB name.
    let mut sst_files = 0;
    for (&bucket, &id) in &first {
        let m = metadata(&bootstrap, table_id, bucket, id).await.unwrap();
        let names: BTreeSet<&str> = m
            .snapshot_files
            .iter()
            .map(|f| f.local_file_name.as_str())
            .collect();
        assert!(names.contains("CURRENT"), "{names:?}");
        assert!(
            names.iter().any(|n| n.starts_with("MANIFEST-")),
            "{names:?}"
        );
        for f in &m.snapshot_files {
            let p = local(&f.remote_path);
            assert!(p.is_file(), "{}", p.display());
            let parent = p.parent().unwrap();
            let remote_name = p.file_name().unwrap().to_str().unwrap();
            assert!(uuid::Uuid::parse_str(remote_name).is_ok(), "{remote_name}");
            if f.local_file_name.ends_with(".sst") {
                sst_files += 1;
                assert_eq!(parent.file_name().unwrap(), "shared", "{}", p.display());
            } else {
                assert_eq!(
                    parent.file_name().unwrap().to_str().unwrap(),
                    format!("snap-{id}"),
                    "{}",
                    p.display()
                );
                assert!(parent.join("_METADATA").is_file());
            }
        }
        // _METADATA: Fluss's CompletedSnapshot JSON, naming the same files and log offset.
        let snap_dir = local(&m.snapshot_files[0].remote_path)
            .parent()
            .unwrap()
            .to_path_buf();
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(snap_dir.join("_METADATA")).unwrap()).unwrap();
        assert_eq!(doc["version"], 1);
        assert_eq!(doc["table_id"], table_id);
        assert_eq!(doc["bucket_id"], bucket);
        assert_eq!(doc["snapshot_id"], id);
        assert_eq!(doc["log_offset"], m.log_offset);
        let handle = &doc["kv_snapshot_handle"];
        let listed = handle["private_file_handles"].as_array().unwrap().len()
            + handle["shared_file_handles"].as_array().unwrap().len();
        assert_eq!(listed, m.snapshot_files.len());
    }
    // Five keys went into two buckets: at least one bucket holds rows, so an SST.
    assert!(sst_files >= 1);

    // The log after the snapshot is not in it; the next snapshot has it.
    upsert(&table, &[(6, "f")]).await;
    delete(&table, &[1]).await;
    assert_eq!(snapshot_rows(&table).await, want);
    server.take_kv_snapshots();
    let want2 = expected(&[(2, "b2"), (3, "c"), (5, "e"), (6, "f")]);
    assert_eq!(snapshot_rows(&table).await, want2);

    // A third round: the first snapshot of each bucket that took three goes, with its shared
    // files; the latest two stay.
    upsert(
        &table,
        &[(1, "a3"), (2, "b3"), (3, "c3"), (5, "e3"), (6, "f3")],
    )
    .await;
    server.take_kv_snapshots();
    let third = latest(&conn, &path).await;
    let mut live_shared = BTreeSet::new();
    let mut shared_dirs = BTreeSet::new();
    for (&bucket, &id) in &third {
        let oldest = first[&bucket];
        if id >= oldest + 2 {
            let gone = metadata(&bootstrap, table_id, bucket, oldest).await;
            assert!(
                gone.is_err(),
                "snapshot {oldest} of bucket {bucket} is still served"
            );
        }
        for keep in [id - 1, id] {
            let m = metadata(&bootstrap, table_id, bucket, keep).await.unwrap();
            for f in m.snapshot_files {
                let p = local(&f.remote_path);
                if f.local_file_name.ends_with(".sst") {
                    shared_dirs.insert(p.parent().unwrap().to_path_buf());
                    live_shared.insert(p);
                }
            }
        }
    }
    let on_disk: BTreeSet<PathBuf> = shared_dirs.iter().flat_map(|d| files_in(d)).collect();
    assert_eq!(
        on_disk, live_shared,
        "shared/ holds exactly the retained snapshots' SSTs"
    );
    let want3 = expected(&[(1, "a3"), (2, "b3"), (3, "c3"), (5, "e3"), (6, "f3")]);
    assert_eq!(snapshot_rows(&table).await, want3);

    // A restart keeps the snapshots: the same ids, the same rows.
    drop(table);
    conn.close().await;
    drop(server);
    let server = LocalServer::start(common::config(dir.path())).unwrap();
    let conn = Connection::connect(ClientConfig::new(server.bootstrap_servers()))
        .await
        .unwrap();
    assert_eq!(latest(&conn, &path).await, third);
    let table = conn.table(&path).await.unwrap();
    assert_eq!(snapshot_rows(&table).await, want3);
    // ... and the ids go on from them.
    upsert(&table, &[(7, "g")]).await;
    server.take_kv_snapshots();
    let after = latest(&conn, &path).await;
    assert!(
        after.iter().any(|(b, id)| *id == third[b] + 1),
        "{third:?} -> {after:?}"
    );
    conn.close().await;
}
