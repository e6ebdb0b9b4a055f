//! The latest view of a primary-key table on a server without ScanKv (Apache Fluss 0.9.x) is
//! built by replaying the bucket's changelog from offset 0. When the log no longer starts at 0
//! (retention or snapshot cleanup removed its head) that replay would silently miss the older
//! keys: the read must fail instead. The head is removed here as retention does: whole segment
//! files, with the server stopped. When the bucket's latest KV snapshot covers the removed
//! head (and its file is readable), the view is that snapshot with the rest of the log merged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;

use riverlet::client::{ClientConfig, Connection};
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet::row::Datum;
use riverlet::ErrorKind;
use riverlet_server::{LocalServer, ServerConfig};

fn config(dir: &Path) -> ServerConfig {
    let mut c = ServerConfig::new(dir).with_port(0);
    c.fluss_0_9_apis = true;
    c.segment_bytes = 512;
    c
}

/// The log directories holding more than one segment (`<base>.log` files), with their bases.
fn multi_segment_logs(dir: &Path, out: &mut Vec<(PathBuf, Vec<i64>)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut bases = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            multi_segment_logs(&path, out);
        } else if let Some(stem) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".log"))
        {
            if let Ok(b) = stem.parse::<i64>() {
                bases.push(b);
            }
        }
    }
    if bases.len() > 1 {
        bases.sort_unstable();
        out.push((dir.to_path_buf(), bases));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changelog_that_no_longer_starts_at_zero_is_refused_not_replayed() {
    let data = tempfile::tempdir().unwrap();
    let path = TablePath::new("d", "pk");
    {
        let server = LocalServer::start(config(data.path())).unwrap();
        let conn = Connection::connect(ClientConfig::new(server.bootstrap_servers()))
            .await
            .unwrap();
        conn.admin().create_database("d", false).await.unwrap();
        let schema = Schema::builder()
            .column("k", DataType::int().not_null())
            .column("v", DataType::string())
            .primary_key(["k"])
            .build()
            .unwrap();
        let d = TableDescriptor::builder(schema)
            .distributed_by(Some(1), Vec::<String>::new())
            .build()
            .unwrap();
        conn.admin().create_table(&path, &d, false).await.unwrap();
        let table = conn.table(&path).await.unwrap();
        let w = table.new_upsert_writer(None).unwrap();
        for round in 0..20 {
            // new keys each round: a replay from past the head would miss the first ones
            let rows: Vec<Vec<Datum>> = (0..10)
                .map(|k| vec![Datum::Int(round * 10 + k), Datum::String(format!("v{k}"))])
                .collect();
            w.upsert_rows(&rows).await.unwrap();
        }
        w.flush().await.unwrap();
        // With the whole log the replay sees every key.
        assert_eq!(table.count().await.unwrap(), 200);
        conn.close().await;
        drop(server);
    }
    remove_head_segments(data.path());

    let server = LocalServer::start(config(data.path())).unwrap();
    let conn = Connection::connect(ClientConfig::new(server.bootstrap_servers()))
        .await
        .unwrap();
    let table = conn.table(&path).await.unwrap();
    let e = table.scan().collect().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    assert!(e.message().contains("no longer starts at offset 0"), "{e}");
    conn.close().await;
}

fn remove_head_segments(dir: &Path) {
    let mut logs = Vec::new();
    multi_segment_logs(dir, &mut logs);
    assert!(
        !logs.is_empty(),
        "the changelog did not roll into several segments"
    );
    for (dir, bases) in &logs {
        let head = format!("{:020}", bases[0]);
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            if e.file_name().to_string_lossy().starts_with(&head) {
                std::fs::remove_file(e.path()).unwrap();
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kv_snapshot_covering_the_missing_head_gives_the_exact_view() {
    let data = tempfile::tempdir().unwrap();
    let path = TablePath::new("d", "pk");
    let mut expected: BTreeMap<i32, String> = BTreeMap::new();
    let snapshot_offset;
    {
        let server = LocalServer::start(config(data.path())).unwrap();
        let conn = Connection::connect(ClientConfig::new(server.bootstrap_servers()))
            .await
            .unwrap();
        conn.admin().create_database("d", false).await.unwrap();
        let schema = Schema::builder()
            .column("k", DataType::int().not_null())
            .column("v", DataType::string())
            .primary_key(["k"])
            .build()
            .unwrap();
        let d = TableDescriptor::builder(schema)
            .distributed_by(Some(1), Vec::<String>::new())
            .build()
            .unwrap();
        conn.admin().create_table(&path, &d, false).await.unwrap();
        let table = conn.table(&path).await.unwrap();
        let w = table.new_upsert_writer(None).unwrap();
        for round in 0..20 {
            if round == 10 {
                w.flush().await.unwrap();
                server.take_kv_snapshots();
            }
            let rows: Vec<Vec<Datum>> = (0..10)
                .map(|k| {
                    vec![
                        Datum::Int(round * 10 + k),
                        Datum::String(format!("r{round}")),
                    ]
                })
                .collect();
            for r in &rows {
                if let (Datum::Int(k), Datum::String(v)) = (&r[0], &r[1]) {
                    expected.insert(*k, v.clone());
                }
            }
            w.upsert_rows(&rows).await.unwrap();
        }
        // After the snapshot: an update and a delete of keys the snapshot holds.
        w.upsert_row(&[Datum::Int(3), Datum::String("late".into())])
            .await
            .unwrap();
        w.delete_row(&[Datum::Int(4), Datum::Null]).await.unwrap();
        w.flush().await.unwrap();
        expected.insert(3, "late".to_string());
        expected.remove(&4);
        let snaps = conn.admin().latest_kv_snapshots(&path, None).await.unwrap();
        assert_eq!(snaps[0].snapshot_id, Some(0), "{snaps:?}");
        snapshot_offset = snaps[0].log_offset.unwrap();
        conn.close().await;
        drop(server);
    }
    remove_head_segments(data.path());

    let server = LocalServer::start(config(data.path())).unwrap();
    let conn = Connection::connect(ClientConfig::new(server.bootstrap_servers()))
        .await
        .unwrap();
    let table = conn.table(&path).await.unwrap();
    let earliest = conn
        .admin()
        .list_offsets(&path, None, &[0], riverlet::client::OffsetSpec::Earliest)
        .await
        .unwrap()[&0];
    assert!(
        earliest > 0 && earliest <= snapshot_offset,
        "log starts at {earliest}, snapshot at {snapshot_offset}"
    );
    let mut got = BTreeMap::new();
    for b in table.scan().collect().await.unwrap() {
        let k = b.column(0).as_primitive::<Int32Type>();
        let v = b.column(1).as_string::<i32>();
        for i in 0..b.num_rows() {
            got.insert(k.value(i), v.value(i).to_string());
        }
    }
    assert_eq!(got, expected);
    assert_eq!(table.count().await.unwrap(), 199);

    // Without a readable snapshot file the read is refused again, saying why.
    let mut files = Vec::new();
    find_files(
        data.path(),
        riverlet::record::kv_snapshot::KV_SNAPSHOT_FILE_NAME,
        &mut files,
    );
    assert!(!files.is_empty());
    for f in files {
        std::fs::remove_file(f).unwrap();
    }
    let e = table.scan().collect().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    assert!(e.message().contains("no longer starts at offset 0"), "{e}");
    assert!(e.message().contains("cannot be read"), "{e}");
    conn.close().await;
}

fn find_files(dir: &Path, name: &str, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            find_files(&p, name, out);
        } else if p.file_name().and_then(|n| n.to_str()) == Some(name) {
            out.push(p);
        }
    }
}
