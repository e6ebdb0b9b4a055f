//! Tiered log storage: the embedded server copies rolled segments to `remote.data.dir` (a
//! local directory, or S3 served by moto's server mode) and drops the local copies; reads,
//! subscriptions from earliest, time windows and ListOffsets stay exact across the boundary
//! between remote and local segments. The client reads remote segments itself, as Fluss's does.

use crate::common;
#[path = "common/moto.rs"]
mod moto;

use std::path::Path;
use std::time::Duration;

use common::*;
use riverlet::client::Table;
use riverlet::client::{Connection, OffsetSpec};
use riverlet::remote::RemoteDir;
use riverlet::scan::{StartupMode, TimePoint};

const GROUPS: usize = 12;
const PER_GROUP: i32 = 40;

/// Options of a server that tiers almost at once: 2 KiB segments, one local rolled segment
/// kept, a tiering round every 50 ms, an index entry every 256 bytes.
fn tiering_options(remote: &str) -> Vec<(String, String)> {
    [
        ("remote.data.dir", remote),
        ("log.segment.file-size", "2kb"),
        ("log.index.interval-size", "256"),
        ("table.log.tiered.local-segments", "1"),
        ("remote.log.task-interval-duration", "50ms"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn env_with(options: Vec<(String, String)>) -> Option<TestEnv> {
    TestEnv::embedded_only(
        "needs an embedded server with remote.data.dir and 2 KiB segments",
        move |c| {
            for (k, v) in &options {
                c.set(k, v).unwrap();
            }
        },
    )
}

/// FetchLog of bucket 0 at `offset`: whether the server answered with remote segments.
async fn answered_remote(conn: &Connection, table: &Table, offset: i64) -> bool {
    match remote_segments_at(conn, table, offset).await {
        Some(n) => {
            assert!(
                n > 0,
                "FetchLog at offset {offset} listed no remote segment"
            );
            true
        }
        None => false,
    }
}

/// Writes GROUPS groups of rows, one produce request each, with a time boundary between them;
/// returns the boundaries.
async fn write_groups(table: &Table) -> Vec<i64> {
    let mut bounds = vec![boundary().await];
    for g in 0..GROUPS as i32 {
        let rows: Vec<(i32, String, &str)> = (0..PER_GROUP)
            .map(|i| (g * 1000 + i, format!("payload-{g}-{i:04}"), "eu"))
            .collect();
        let refs: Vec<(i32, &str, &str)> =
            rows.iter().map(|(a, b, c)| (*a, b.as_str(), *c)).collect();
        append(table, &refs).await;
        bounds.push(boundary().await);
    }
    bounds
}

fn group_ids(g: usize) -> Vec<i32> {
    (0..PER_GROUP).map(|i| g as i32 * 1000 + i).collect()
}

/// Waits (without asserting how long it takes) until the head of bucket 0 is served from
/// remote storage while its tail is still local.
async fn wait_until_tiered(conn: &Connection, table: &Table) {
    for _ in 0..1200 {
        if answered_remote(conn, table, 0).await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("offset 0 was never moved to remote storage");
}

/// Everything a reader sees, checked on a table whose head is remote.
async fn check_reads(env: &TestEnv) {
    let conn = env.connect().await;
    let path = env.path("tiered");
    let table = create_table(&conn, &path, descriptor(false, false, 1)).await;
    let bounds = write_groups(&table).await;
    wait_until_tiered(&conn, &table).await;
    let total = GROUPS as i64 * PER_GROUP as i64;
    // the newest rows are still local: the last offset is not answered from remote
    assert!(!answered_remote(&conn, &table, total - 1).await);

    // full scan
    let all: Vec<i32> = (0..GROUPS).flat_map(group_ids).collect();
    assert_eq!(ids(&table.scan().collect().await.unwrap()), all);
    // projected scan (remote segments hold whole rows; the client projects them)
    let names = table.scan().project(&["name"]).collect().await.unwrap();
    assert_eq!(total_rows(&names), all.len());
    assert_eq!(names[0].num_columns(), 1);

    // subscription from earliest
    let mut sub = table.subscribe(StartupMode::Earliest).await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..400 {
        for b in sub.poll(Duration::from_millis(100)).await.unwrap() {
            seen.extend(ids(std::slice::from_ref(&b.batch)));
        }
        if seen.len() >= all.len() {
            break;
        }
    }
    seen.sort();
    assert_eq!(seen, all);

    // every time window, the remote ones, the local ones and those spanning both
    for g in 0..GROUPS {
        let got = ids(&table
            .scan()
            .between(bounds[g], Some(TimePoint::EpochMillis(bounds[g + 1])))
            .collect()
            .await
            .unwrap());
        assert_eq!(got, group_ids(g), "window {g}");
    }
    let wide = ids(&table
        .scan()
        .between(bounds[1], Some(TimePoint::EpochMillis(bounds[GROUPS - 1])))
        .collect()
        .await
        .unwrap());
    let want: Vec<i32> = (1..GROUPS - 1).flat_map(group_ids).collect();
    assert_eq!(wide, want);

    // ListOffsets: earliest is the remote start, latest the end; a timestamp never lands after
    // the first row committed at or after it
    let admin = conn.admin();
    let earliest = admin
        .list_offsets(&path, None, &[0], OffsetSpec::Earliest)
        .await
        .unwrap();
    assert_eq!(earliest[&0], 0);
    let latest = admin
        .list_offsets(&path, None, &[0], OffsetSpec::Latest)
        .await
        .unwrap();
    assert_eq!(latest[&0], total);
    for (g, b) in bounds.iter().enumerate().take(GROUPS) {
        let at = admin
            .list_offsets(&path, None, &[0], OffsetSpec::Timestamp(*b))
            .await
            .unwrap()[&0];
        let exact = g as i64 * PER_GROUP as i64;
        assert!(
            at <= exact && at >= 0,
            "timestamp of group {g}: offset {at}, first row at {exact}"
        );
    }
    let after = admin
        .list_offsets(&path, None, &[0], OffsetSpec::Timestamp(bounds[GROUPS]))
        .await
        .unwrap();
    assert_eq!(after[&0], total);
    conn.close().await;
}

/// The remote files in Fluss's layout: segment files under `{uuid}/`, one manifest.
fn check_layout(remote: &Path, env: &TestEnv, table_id: i64) {
    let bucket_dir = remote
        .join("log")
        .join(&env.db)
        .join(format!("tiered-{table_id}"))
        .join("0");
    let manifests: Vec<_> = std::fs::read_dir(bucket_dir.join("metadata"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    assert_eq!(manifests.len(), 1, "{manifests:?}");
    assert!(manifests[0].ends_with(".manifest"));
    let json: serde_json::Value = serde_json::from_slice(
        &std::fs::read(bucket_dir.join("metadata").join(&manifests[0])).unwrap(),
    )
    .unwrap();
    assert_eq!(json["version"], 1);
    assert_eq!(json["table"], "tiered");
    assert_eq!(json["table_id"], table_id);
    let segs = json["remote_log_segments"].as_array().unwrap();
    assert!(!segs.is_empty());
    assert_eq!(segs[0]["start_offset"], 0);
    for s in segs {
        let id = s["segment_id"].as_str().unwrap();
        let start = s["start_offset"].as_i64().unwrap();
        let log = bucket_dir.join(id).join(format!("{start:020}.log"));
        let size = std::fs::metadata(&log).unwrap().len();
        assert_eq!(s["size_in_bytes"].as_u64().unwrap(), size);
        assert!(bucket_dir
            .join(id)
            .join(format!("{start:020}.index"))
            .exists());
        assert!(bucket_dir
            .join(id)
            .join(format!("{start:020}.timeindex"))
            .exists());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_are_exact_across_local_and_remote_segments_on_a_local_dir() {
    let remote = tempfile::tempdir().unwrap();
    let Some(env) = env_with(tiering_options(remote.path().to_str().unwrap())) else {
        return;
    };
    check_reads(&env).await;
    let conn = env.connect().await;
    let table = conn.table(&env.path("tiered")).await.unwrap();
    check_layout(remote.path(), &env, table.info().table_id);
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_primary_key_tables_changelog_is_tiered_and_its_view_stays_exact() {
    let remote = tempfile::tempdir().unwrap();
    let Some(env) = env_with(tiering_options(remote.path().to_str().unwrap())) else {
        return;
    };
    let conn = env.connect().await;
    let table = create_table(&conn, &env.path("pk"), descriptor(true, false, 1)).await;
    // Each group rewrites a quarter of the keys; the view keeps each key's last write.
    let mut expected = std::collections::BTreeMap::new();
    let mut changes = 0;
    for g in 0..GROUPS as i32 {
        let rows: Vec<(i32, String)> = (0..PER_GROUP)
            .map(|i| ((g % 4) * 1000 + i, format!("payload-{g}-{i:04}")))
            .collect();
        let refs: Vec<(i32, &str, &str)> =
            rows.iter().map(|(k, v)| (*k, v.as_str(), "eu")).collect();
        upsert(&table, &refs).await;
        for (k, v) in rows {
            // an update is two changes (-U, +U), an insert one (+I)
            changes += if expected.insert(k, v).is_some() {
                2
            } else {
                1
            };
        }
    }
    wait_until_tiered(&conn, &table).await;
    assert_eq!(by_id(&table.scan().collect().await.unwrap()), expected);
    let changelog = table.scan().changelog(true).collect().await.unwrap();
    assert_eq!(
        changelog.iter().map(|b| b.num_rows()).sum::<usize>(),
        changes
    );
    conn.close().await;
}

/// Every file under `dir`, recursively (none when it does not exist).
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.path().is_dir() {
                todo.push(e.path());
            } else {
                out.push(e.path());
            }
        }
    }
    out
}

/// The segments the bucket's newest manifest lists (none without a manifest). Only complete
/// `*.manifest` files count: the server writes each one through a staging file that is renamed
/// when complete, and this runs while the server tiers, so a staging file (empty or half
/// written) can be there; names are UUIDs, so the newest is the latest modified.
fn manifest_segments(bucket_dir: &Path) -> Vec<serde_json::Value> {
    // A manifest superseded (deleted) between the listing and the read: list again.
    for _ in 0..20 {
        let newest = files_under(&bucket_dir.join("metadata"))
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "manifest"))
            .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
            .max();
        let Some((_, m)) = newest else {
            return Vec::new();
        };
        if let Ok(bytes) = std::fs::read(m) {
            let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            return json["remote_log_segments"].as_array().unwrap().clone();
        }
    }
    panic!("the bucket's newest manifest kept disappearing before it could be read")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_table_removes_its_remote_log_and_nothing_else() {
    let remote = tempfile::tempdir().unwrap();
    let Some(env) = env_with(tiering_options(remote.path().to_str().unwrap())) else {
        return;
    };
    let conn = env.connect().await;
    let (dropped, kept) = (env.path("dropped"), env.path("kept"));
    let mut dirs = Vec::new();
    for path in [&dropped, &kept] {
        let table = create_table(&conn, path, descriptor(false, false, 1)).await;
        write_groups(&table).await;
        wait_until_tiered(&conn, &table).await;
        let dir = remote.path().join("log").join(&env.db).join(format!(
            "{}-{}",
            path.table,
            table.info().table_id
        ));
        assert!(
            !files_under(&dir).is_empty(),
            "{} was not tiered",
            dir.display()
        );
        dirs.push(dir);
    }
    conn.admin().drop_table(&dropped, false).await.unwrap();
    // The server removes the files in the background: wait for it.
    for _ in 0..1200 {
        if files_under(&dirs[0]).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(files_under(&dirs[0]), Vec::<std::path::PathBuf>::new());
    // The other table of the database keeps its remote segments and reads them.
    assert!(!files_under(&dirs[1]).is_empty());
    let table = conn.table(&kept).await.unwrap();
    assert!(answered_remote(&conn, &table, 0).await);
    let all: Vec<i32> = (0..GROUPS).flat_map(group_ids).collect();
    assert_eq!(ids(&table.scan().collect().await.unwrap()), all);
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_segments_expire_with_the_table_ttl() {
    let remote = tempfile::tempdir().unwrap();
    let Some(env) = env_with(tiering_options(remote.path().to_str().unwrap())) else {
        return;
    };
    let conn = env.connect().await;
    let path = env.path("expiring");
    let mut d = descriptor(false, false, 1);
    d.properties.insert("table.log.ttl".into(), "1 s".into());
    let table = create_table(&conn, &path, d).await;
    write_groups(&table).await;
    let bucket_dir = remote
        .path()
        .join("log")
        .join(&env.db)
        .join(format!("expiring-{}", table.info().table_id))
        .join("0");
    // Segments are copied, then expire one second after their newest row: wait until a
    // manifest exists, lists none, and no segment file is left. A segment's files are copied
    // before the manifest lists it and deleted after the manifest drops it, so either check
    // alone can pass while a segment is between the two.
    let segment_files = || -> Vec<std::path::PathBuf> {
        files_under(&bucket_dir)
            .into_iter()
            .filter(|p| !p.starts_with(bucket_dir.join("metadata")))
            .collect()
    };
    let mut seen_remote = false;
    for _ in 0..1200 {
        let listed = manifest_segments(&bucket_dir).len();
        seen_remote |= listed > 0;
        if seen_remote && listed == 0 && segment_files().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(seen_remote, "no segment was ever tiered");
    assert_eq!(
        manifest_segments(&bucket_dir),
        Vec::<serde_json::Value>::new()
    );
    // The expired segments' files are gone, not just unlisted.
    assert_eq!(segment_files(), Vec::<std::path::PathBuf>::new());
    // Reads start at the new log start and return exactly the rows from there on.
    let earliest = conn
        .admin()
        .list_offsets(&path, None, &[0], OffsetSpec::Earliest)
        .await
        .unwrap()[&0];
    let total = GROUPS as i64 * PER_GROUP as i64;
    assert!(
        earliest > 0 && earliest < total,
        "earliest offset {earliest}"
    );
    assert!(!answered_remote(&conn, &table, earliest).await);
    let all: Vec<i32> = (0..GROUPS).flat_map(group_ids).collect();
    assert_eq!(
        ids(&table.scan().collect().await.unwrap()),
        all[earliest as usize..].to_vec()
    );
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tiered_segments_survive_a_restart() {
    let remote = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let options = tiering_options(remote.path().to_str().unwrap());
    let start = || {
        let mut c = riverlet_server::ServerConfig::new(data.path())
            .with_port(0)
            .with_options(options.clone())
            .unwrap();
        c.ttl_check_interval = Duration::from_secs(3600);
        riverlet_server::LocalServer::start(c).unwrap()
    };
    if is_external() {
        not_applicable("restarts the embedded server");
        return;
    }
    let server = start();
    let conn = Connection::connect(riverlet::client::ClientConfig::new(
        server.bootstrap_servers(),
    ))
    .await
    .unwrap();
    let path = riverlet::metadata::TablePath::new("d", "t");
    let table = create_table(&conn, &path, descriptor(false, false, 1)).await;
    write_groups(&table).await;
    wait_until_tiered(&conn, &table).await;
    conn.close().await;
    server.shutdown().unwrap();

    let server = start();
    let conn = Connection::connect(riverlet::client::ClientConfig::new(
        server.bootstrap_servers(),
    ))
    .await
    .unwrap();
    let table = conn.table(&path).await.unwrap();
    assert!(answered_remote(&conn, &table, 0).await);
    let all: Vec<i32> = (0..GROUPS).flat_map(group_ids).collect();
    assert_eq!(ids(&table.scan().collect().await.unwrap()), all);
    conn.close().await;
}

/// `RIVERLET_MOTO_SERVER` (a path) or `moto_server` on the PATH; None when neither runs.
fn start_moto() -> Option<moto::Moto> {
    moto::start(&[])
}

/// Creates an S3 bucket on moto (it accepts unsigned requests).
async fn create_bucket(endpoint: &str, bucket: &str) {
    riverlet::rpc::install_default_crypto();
    let resp = reqwest::Client::new()
        .put(format!("{endpoint}/{bucket}"))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "create bucket: {resp:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_are_exact_across_local_and_remote_segments_on_s3() {
    if is_external() {
        not_applicable("needs an embedded server with an S3 remote.data.dir");
        return;
    }
    let Some(moto) = start_moto() else {
        eprintln!(
            "SKIPPED: moto_server (pip install 'moto[server]') is not installed; set \
             RIVERLET_MOTO_SERVER or put it on the PATH to run the S3 tiering test"
        );
        return;
    };
    create_bucket(&moto.endpoint, "tier").await;
    let mut options = tiering_options("s3://tier/fluss");
    for (k, v) in [
        ("s3.endpoint", moto.endpoint.as_str()),
        ("s3.access-key", "testing"),
        ("s3.secret-key", "testing"),
        ("s3.region", "us-east-1"),
        ("s3.path.style.access", "true"),
    ] {
        options.push((k.to_string(), v.to_string()));
    }
    let env = env_with(options).unwrap();
    check_reads(&env).await;
    let s3 = riverlet::remote::S3Options {
        endpoint: Some(moto.endpoint.clone()),
        access_key: Some("testing".into()),
        secret_key: Some("testing".into()),
        region: Some("us-east-1".into()),
        path_style: true,
        ..Default::default()
    };
    check_large_upload(&RemoteDir::open("s3://tier/large", &s3).unwrap()).await;
}

/// A file of a bit over two upload parts goes up in parts and comes back byte for byte; then
/// deleting its directory removes it.
async fn check_large_upload(dir: &RemoteDir) {
    let len = 2 * riverlet::remote::UPLOAD_PART_BYTES + 12_345;
    let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    let local = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(local.path(), &data).unwrap();
    assert_eq!(
        dir.put_file("seg/0.log", local.path()).await.unwrap(),
        len as u64
    );
    assert!(dir.get("seg/0.log").await.unwrap() == data[..]);
    assert_eq!(dir.delete_all("seg").await.unwrap(), 1);
    assert!(dir.get("seg/0.log").await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_segment_files_upload_in_parts_to_a_local_dir() {
    let remote = tempfile::tempdir().unwrap();
    let dir = RemoteDir::open(remote.path().to_str().unwrap(), &Default::default()).unwrap();
    check_large_upload(&dir).await;
}

#[test]
fn unknown_server_options_are_refused_by_name() {
    let mut c = riverlet_server::ServerConfig::new("/nonexistent");
    let e = c.set("remote.data.dirr", "/x").unwrap_err();
    assert_eq!(e.kind(), riverlet::ErrorKind::InvalidArgument);
    assert!(e.message().contains("'remote.data.dirr'"), "{e}");
    let e = c.set("log.segment.file-size", "big").unwrap_err();
    assert!(e.message().contains("log.segment.file-size"), "{e}");
    assert!(e.message().contains("'big'"), "{e}");
    c.set("log.segment.file-size", "1mb").unwrap();
    assert_eq!(c.segment_bytes, 1 << 20);
}
