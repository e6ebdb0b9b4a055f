//! The latest view of a primary-key table on a server without ScanKv (Apache Fluss 0.9.x) is
//! built by replaying the bucket's changelog from offset 0. When the log no longer starts at 0
//! (retention or snapshot cleanup removed its head) that replay would silently miss the older
//! keys: the read must fail instead. The head is removed here as retention does: whole segment
//! files, with the server stopped.

use std::path::{Path, PathBuf};

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
    let mut logs = Vec::new();
    multi_segment_logs(data.path(), &mut logs);
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
