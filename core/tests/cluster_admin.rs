//! Cluster administration against the embedded server (issue #32 item 3): dynamic server
//! options (DescribeClusterConfigs / AlterClusterConfigs) take effect, persist across a
//! restart and refuse what Fluss does not change at run time by name; AlterDatabase persists;
//! a KV snapshot lease keeps its snapshot past the retention until released, dropped or
//! expired; ListRemoteLogManifests names the manifest of each tiered bucket; GetClusterHealth;
//! with `authorizer.enabled`, altering the configs needs ALTER on the cluster.
//!
//! Each test starts its own embedded server (restarts, on-demand snapshots, tiering options);
//! against an external server they report themselves not applicable.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use riverlet::acl::{AclBinding, OperationType, Principal, Resource};
use riverlet::client::{ClientConfig, ConfigChange, Connection, ProducerBucket, Table};
use riverlet::error::codes;
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet::row::Datum;
use riverlet_server::{LocalServer, ServerConfig};

fn embedded(reason: &str) -> bool {
    if common::is_external() {
        common::not_applicable(reason);
        return false;
    }
    true
}

fn start(dir: &Path, options: &[(&str, &str)]) -> LocalServer {
    let c = ServerConfig::new(dir)
        .with_port(0)
        .with_options(options.iter().copied())
        .unwrap();
    LocalServer::start(c).unwrap()
}

async fn connect(server: &LocalServer) -> Connection {
    Connection::connect(ClientConfig::new(server.bootstrap_servers()))
        .await
        .unwrap()
}

async fn pk_table(conn: &Connection, path: &TablePath, pk: bool) -> Table {
    conn.admin()
        .create_database(&path.database, true)
        .await
        .unwrap();
    let mut schema = Schema::builder()
        .column("k", DataType::int().not_null())
        .column("v", DataType::string());
    if pk {
        schema = schema.primary_key(["k"]);
    }
    let d = TableDescriptor::builder(schema.build().unwrap())
        .distributed_by(Some(1), Vec::<String>::new())
        .build()
        .unwrap();
    conn.admin().create_table(path, &d, false).await.unwrap();
    conn.table(path).await.unwrap()
}

async fn upsert(table: &Table, rows: &[(i32, &str)]) {
    let w = table.new_upsert_writer(None).unwrap();
    let rows: Vec<Vec<Datum>> = rows
        .iter()
        .map(|(k, v)| vec![Datum::Int(*k), Datum::String(v.to_string())])
        .collect();
    w.upsert_rows(&rows).await.unwrap();
    w.flush().await.unwrap();
}

/// (key, value, source) of `key` as DescribeClusterConfigs answers it.
async fn described(conn: &Connection, key: &str) -> Option<(Option<String>, String)> {
    conn.admin()
        .describe_cluster_configs()
        .await
        .unwrap()
        .into_iter()
        .find(|c| c.key == key)
        .map(|c| (c.value, c.source))
}

#[track_caller]
fn assert_refused_naming(e: &riverlet::Error, what: &str) {
    assert_eq!(e.fluss_code(), Some(codes::UNKNOWN_SERVER_ERROR), "{e}");
    assert!(e.message().contains(what), "{e} does not name {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dynamic_option_takes_effect_persists_and_others_are_refused_by_name() {
    if !embedded("restarts its own embedded server") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), &[("log.segment.file-size", "1mb")]);
    let conn = connect(&server).await;
    let admin = conn.admin();
    let path = TablePath::new("cfg", "t");
    let table = pk_table(&conn, &path, true).await;
    upsert(&table, &[(1, "a")]).await;

    assert_eq!(
        described(&conn, "log.segment.file-size").await,
        Some((Some("1mb".into()), "INITIAL_SERVER_CONFIG".into()))
    );
    assert_eq!(described(&conn, "kv.snapshot.interval").await, None);
    // no periodic snapshots: the bucket has none
    let snaps = admin.latest_kv_snapshots(&path, None).await.unwrap();
    assert_eq!(snaps[0].snapshot_id, None);

    admin
        .alter_cluster_configs(&[ConfigChange::Set(
            "kv.snapshot.interval".into(),
            "50ms".into(),
        )])
        .await
        .unwrap();
    assert_eq!(
        described(&conn, "kv.snapshot.interval").await,
        Some((Some("50ms".into()), "DYNAMIC_SERVER_CONFIG".into()))
    );
    // its effect: the periodic task now snapshots the bucket (polled, bounded)
    let mut taken = None;
    for _ in 0..600 {
        taken = admin.latest_kv_snapshots(&path, None).await.unwrap()[0].snapshot_id;
        if taken.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        taken.is_some(),
        "no snapshot after kv.snapshot.interval was set"
    );

    // refused, by name: a start-up option, a Fluss-dynamic option this server does not change
    // at run time, a bad value; nothing changes
    let e = admin
        .alter_cluster_configs(&[ConfigChange::Set(
            "log.segment.file-size".into(),
            "2mb".into(),
        )])
        .await
        .unwrap_err();
    assert_refused_naming(&e, "log.segment.file-size");
    assert!(
        e.message()
            .contains("not allowed to be changed dynamically"),
        "{e}"
    );
    let e = admin
        .alter_cluster_configs(&[ConfigChange::Set("datalake.format".into(), "paimon".into())])
        .await
        .unwrap_err();
    assert_refused_naming(&e, "datalake.format");
    let e = admin
        .alter_cluster_configs(&[ConfigChange::Set(
            "kv.snapshot.interval".into(),
            "soon".into(),
        )])
        .await
        .unwrap_err();
    assert_refused_naming(&e, "soon");
    assert_eq!(
        described(&conn, "kv.snapshot.interval").await,
        Some((Some("50ms".into()), "DYNAMIC_SERVER_CONFIG".into()))
    );
    conn.close().await;
    drop(server);

    // persisted: the restarted server still has it
    let server = start(dir.path(), &[("log.segment.file-size", "1mb")]);
    let conn = connect(&server).await;
    assert_eq!(
        described(&conn, "kv.snapshot.interval").await,
        Some((Some("50ms".into()), "DYNAMIC_SERVER_CONFIG".into()))
    );
    conn.admin()
        .alter_cluster_configs(&[ConfigChange::Delete("kv.snapshot.interval".into())])
        .await
        .unwrap();
    assert_eq!(described(&conn, "kv.snapshot.interval").await, None);
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alter_database_persists_across_a_restart() {
    if !embedded("restarts its own embedded server") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), &[]);
    let conn = connect(&server).await;
    let admin = conn.admin();
    admin.create_database("shop", false).await.unwrap();
    admin
        .alter_database(
            "shop",
            &[
                ConfigChange::Set("owner".into(), "ops".into()),
                ConfigChange::Set("tier".into(), "gold".into()),
            ],
            Some("orders and customers"),
            false,
        )
        .await
        .unwrap();
    conn.close().await;
    drop(server);

    let server = start(dir.path(), &[]);
    let conn = connect(&server).await;
    let admin = conn.admin();
    let info = admin.database_info("shop").await.unwrap();
    assert_eq!(info.comment.as_deref(), Some("orders and customers"));
    let props: Vec<(&str, &str)> = info
        .custom_properties
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(props, [("owner", "ops"), ("tier", "gold")]);
    assert!(info.modified_time >= info.created_time);

    // reset one property, remove the comment (an empty one)
    admin
        .alter_database(
            "shop",
            &[ConfigChange::Delete("tier".into())],
            Some(""),
            false,
        )
        .await
        .unwrap();
    let info = admin.database_info("shop").await.unwrap();
    assert_eq!(info.comment, None);
    assert_eq!(info.custom_properties.len(), 1);
    assert_eq!(info.custom_properties["owner"], "ops");

    let e = admin
        .alter_database(
            "nowhere",
            &[ConfigChange::Set("a".into(), "b".into())],
            None,
            false,
        )
        .await
        .unwrap_err();
    assert_eq!(e.fluss_code(), Some(codes::DATABASE_NOT_EXIST), "{e}");
    assert!(e.message().contains("nowhere"), "{e}");
    admin
        .alter_database("nowhere", &[], None, true)
        .await
        .unwrap();
    conn.close().await;
}

async fn snapshot_ids(conn: &Connection, path: &TablePath) -> BTreeSet<i64> {
    conn.admin()
        .list_kv_snapshots(path, None)
        .await
        .unwrap()
        .into_iter()
        .map(|s| {
            assert_eq!(s.bucket, 0);
            s.snapshot_id
        })
        .collect()
}

/// Writes a change and takes a snapshot of it; returns its id.
async fn new_snapshot(server: &LocalServer, conn: &Connection, table: &Table, v: &str) -> i64 {
    upsert(table, &[(1, v)]).await;
    server.take_kv_snapshots();
    conn.admin()
        .latest_kv_snapshots(&table.info.table_path, None)
        .await
        .unwrap()[0]
        .snapshot_id
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_keeps_its_snapshot_until_released_dropped_or_expired() {
    if !embedded("takes KV snapshots on demand and restarts its own embedded server") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), &[]);
    let conn = connect(&server).await;
    let admin = conn.admin();
    let path = TablePath::new("lease", "t");
    let table = pk_table(&conn, &path, true).await;
    let b0 = ProducerBucket {
        table_id: table.info.table_id,
        partition_id: None,
        bucket: 0,
    };
    let s0 = new_snapshot(&server, &conn, &table, "v0").await;
    let hour = Duration::from_secs(3600);
    let missing = admin
        .acquire_kv_snapshot_lease("job-1", hour, &[(b0, s0)])
        .await
        .unwrap();
    assert!(missing.is_empty(), "{missing:?}");
    let s1 = new_snapshot(&server, &conn, &table, "v1").await;
    let s2 = new_snapshot(&server, &conn, &table, "v2").await;
    // the retention keeps the latest two, and the leased one
    assert_eq!(
        snapshot_ids(&conn, &path).await,
        BTreeSet::from([s0, s1, s2])
    );
    // a snapshot the bucket does not have is answered unavailable
    let missing = admin
        .acquire_kv_snapshot_lease("job-2", hour, &[(b0, s2 + 100)])
        .await
        .unwrap();
    assert_eq!(missing, vec![(b0, s2 + 100)]);
    conn.close().await;
    drop(server);

    // the lease survives a restart, and still keeps s0 after more snapshots
    let server = start(dir.path(), &[]);
    let conn = connect(&server).await;
    let admin = conn.admin();
    let table = conn.table(&path).await.unwrap();
    let s3 = new_snapshot(&server, &conn, &table, "v3").await;
    assert_eq!(
        snapshot_ids(&conn, &path).await,
        BTreeSet::from([s0, s2, s3])
    );

    admin
        .release_kv_snapshot_lease("job-1", &[b0])
        .await
        .unwrap();
    assert_eq!(snapshot_ids(&conn, &path).await, BTreeSet::from([s2, s3]));

    // dropping a lease frees its snapshot too
    admin
        .acquire_kv_snapshot_lease("job-3", hour, &[(b0, s2)])
        .await
        .unwrap();
    let s4 = new_snapshot(&server, &conn, &table, "v4").await;
    let s5 = new_snapshot(&server, &conn, &table, "v5").await;
    assert_eq!(
        snapshot_ids(&conn, &path).await,
        BTreeSet::from([s2, s4, s5])
    );
    admin.drop_kv_snapshot_lease("job-3").await.unwrap();
    assert_eq!(snapshot_ids(&conn, &path).await, BTreeSet::from([s4, s5]));

    // an expired lease keeps nothing (1 ms lease, checked once it has certainly passed)
    admin
        .acquire_kv_snapshot_lease("job-4", Duration::from_millis(1), &[(b0, s4)])
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let s6 = new_snapshot(&server, &conn, &table, "v6").await;
    assert_eq!(snapshot_ids(&conn, &path).await, BTreeSet::from([s5, s6]));

    // only primary-key tables have KV snapshots
    let log = pk_table(&conn, &TablePath::new("lease", "log"), false).await;
    let e = admin
        .acquire_kv_snapshot_lease(
            "job-5",
            hour,
            &[(
                ProducerBucket {
                    table_id: log.info.table_id,
                    partition_id: None,
                    bucket: 0,
                },
                0,
            )],
        )
        .await
        .unwrap_err();
    assert_eq!(
        e.fluss_code(),
        Some(codes::NON_PRIMARY_KEY_TABLE_EXCEPTION),
        "{e}"
    );
    assert!(e.message().contains("lease.log"), "{e}");
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_log_manifests_name_each_tiered_bucket() {
    if !embedded("needs an embedded server with remote.data.dir and 2 KiB segments") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let remote = tempfile::tempdir().unwrap();
    let server = start(
        dir.path(),
        &[
            ("remote.data.dir", remote.path().to_str().unwrap()),
            ("log.segment.file-size", "2kb"),
            ("table.log.tiered.local-segments", "1"),
            ("remote.log.task-interval-duration", "50ms"),
        ],
    );
    let conn = connect(&server).await;
    let admin = conn.admin();
    let path = TablePath::new("tiered", "t");
    let table = pk_table(&conn, &path, false).await;
    assert!(admin
        .list_remote_log_manifests(&path, None)
        .await
        .unwrap()
        .is_empty());
    let w = table.new_append_writer().unwrap();
    for g in 0..12 {
        let rows: Vec<Vec<Datum>> = (0..40)
            .map(|i| {
                vec![
                    Datum::Int(g * 100 + i),
                    Datum::String(format!("payload-{g}-{i:04}")),
                ]
            })
            .collect();
        w.append_rows(&rows).await.unwrap();
        w.flush().await.unwrap();
    }
    let mut listed = Vec::new();
    for _ in 0..1200 {
        listed = admin.list_remote_log_manifests(&path, None).await.unwrap();
        if !listed.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(listed.len(), 1, "{listed:?}");
    let m = &listed[0];
    assert_eq!(m.bucket.table_id, table.info.table_id);
    assert_eq!((m.bucket.partition_id, m.bucket.bucket), (None, 0));
    assert!(
        m.manifest_path.starts_with(remote.path().to_str().unwrap()),
        "{m:?}"
    );
    // the manifest file is there, and its last segment ends at the offset answered (a later
    // round may have replaced it: then the listing is read again)
    let mut checked = false;
    for _ in 0..20 {
        let m = &admin.list_remote_log_manifests(&path, None).await.unwrap()[0];
        let Ok(bytes) = std::fs::read(&m.manifest_path) else {
            continue;
        };
        let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let segs = json["remote_log_segments"].as_array().unwrap();
        let end = segs.last().unwrap()["end_offset"].as_i64().unwrap();
        assert_eq!(end, m.remote_log_end_offset, "{json}");
        assert!(end > 0 && end <= 12 * 40, "{end}");
        checked = true;
        break;
    }
    assert!(checked, "the listed manifest kept disappearing");
    let e = admin
        .list_remote_log_manifests(&path, Some("p1"))
        .await
        .unwrap_err();
    assert_eq!(
        e.fluss_code(),
        Some(codes::TABLE_NOT_PARTITIONED_EXCEPTION),
        "{e}"
    );
    assert!(e.message().contains("tiered.t"), "{e}");
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_health_counts_every_bucket_green() {
    if !embedded("counts the buckets of its own embedded server") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), &[]);
    let conn = connect(&server).await;
    let h = conn.admin().cluster_health().await.unwrap();
    assert_eq!((h.replicas, h.status), (0, "GREEN"));
    pk_table(&conn, &TablePath::new("h", "a"), true).await;
    pk_table(&conn, &TablePath::new("h", "b"), false).await;
    let h = conn.admin().cluster_health().await.unwrap();
    assert_eq!(
        (
            h.replicas,
            h.in_sync_replicas,
            h.leader_replicas,
            h.active_leader_replicas,
            h.status
        ),
        (2, 2, 2, 2, "GREEN")
    );
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn altering_configs_needs_alter_on_the_cluster() {
    if !embedded("needs an embedded server with authorizer.enabled and our users") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let c = ServerConfig::new(dir.path())
        .with_port(0)
        .with_sasl_user("admin", "admin-pw")
        .with_sasl_user("alice", "alice-pw")
        .with_options([
            ("authorizer.enabled", "true"),
            ("super.users", "User:admin"),
        ])
        .unwrap();
    let server = LocalServer::start(c).unwrap();
    let login = |u: &str, p: &str| {
        Connection::connect(ClientConfig::new(server.bootstrap_servers()).with_sasl_plain(u, p))
    };
    let admin = login("admin", "admin-pw").await.unwrap();
    let alice = login("alice", "alice-pw").await.unwrap();
    let change = [ConfigChange::Set(
        "kv.snapshot.interval".into(),
        "1 h".into(),
    )];

    let e = alice
        .admin()
        .alter_cluster_configs(&change)
        .await
        .unwrap_err();
    assert_eq!(e.fluss_code(), Some(codes::AUTHORIZATION_EXCEPTION), "{e}");
    assert!(
        e.message().contains("alice") && e.message().contains("ALTER"),
        "{e}"
    );
    let e = alice.admin().describe_cluster_configs().await.unwrap_err();
    assert_eq!(e.fluss_code(), Some(codes::AUTHORIZATION_EXCEPTION), "{e}");
    assert!(described(&admin, "kv.snapshot.interval").await.is_none());

    admin
        .admin()
        .create_acls(&[AclBinding::allow(
            Resource::cluster(),
            Principal::user("alice"),
            OperationType::Alter,
        )])
        .await
        .unwrap();
    alice.admin().alter_cluster_configs(&change).await.unwrap();
    // ALTER implies DESCRIBE
    assert_eq!(
        described(&alice, "kv.snapshot.interval").await,
        Some((Some("1 h".into()), "DYNAMIC_SERVER_CONFIG".into()))
    );
    alice.close().await;
    admin.close().await;
}
