//! Behaviours where Apache Fluss and the embedded server were compared (tests/README.md): error
//! codes of missing objects (Fluss 0.9.1 answers -1 for some of them), ListOffsets semantics,
//! the table defaults the server fills in, the metadata of the cluster. They run against
//! whichever server the harness picked (common/mod.rs).

use crate::common;

use std::collections::BTreeMap;

use common::*;
use riverlet::client::OffsetSpec;
use riverlet::metadata::{PartitionSpec, TableDescriptor, TablePath};
use riverlet::proto::MetadataRequest;
use riverlet::ErrorKind;

fn assert_not_found(r: riverlet::Result<impl std::fmt::Debug>, code: i32, what: &str) {
    let e = r.expect_err(what);
    assert_eq!(e.kind(), ErrorKind::NotFound, "{what}: {e}");
    assert_eq!(e.fluss_code(), Some(code), "{what}: {e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_databases_tables_and_partitions_are_not_found() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let a = conn.admin();
    let missing = env.path("missing");
    let no_db = env.extra_db("x");
    let in_no_db = TablePath::new(no_db.as_str(), "t");
    assert_not_found(conn.table(&missing).await.map(|_| ()), 7, "open");
    assert_not_found(a.table_info(&missing).await.map(|_| ()), 7, "table_info");
    assert_not_found(a.drop_table(&missing, false).await, 7, "drop_table");
    a.drop_table(&missing, true).await.unwrap();
    assert_not_found(
        a.list_offsets(&missing, None, &[0], OffsetSpec::Latest)
            .await,
        7,
        "list_offsets",
    );
    assert_not_found(
        a.create_table(&in_no_db, &descriptor(false, false, 1), false)
            .await,
        4,
        "create_table in a missing database",
    );
    assert_not_found(
        a.drop_database(&no_db, false, true).await,
        4,
        "drop_database",
    );
    a.drop_database(&no_db, true, true).await.unwrap();
    assert_not_found(a.list_tables(&no_db).await, 4, "list_tables");
    assert!(!a.table_exists(&missing).await.unwrap());
    assert!(!a.table_exists(&in_no_db).await.unwrap());
    assert!(!a.database_exists(&no_db).await.unwrap());

    let parted = env.path("parted");
    let t = create_table(&conn, &parted, descriptor(true, true, 1)).await;
    let xx = PartitionSpec::new([("region", "xx")]);
    assert_not_found(
        a.drop_partition(&parted, &xx, false).await,
        36,
        "drop_partition",
    );
    assert_not_found(
        t.scan().partitions(["xx"]).collect().await,
        36,
        "read of a missing partition",
    );
    let e = a
        .create_partition(&parted, &PartitionSpec::new([("nope", "xx")]), false)
        .await
        .unwrap_err();
    assert_eq!(e.fluss_code(), Some(43), "{e}");
    let plain = env.path("plain");
    create_table(&conn, &plain, descriptor(false, false, 1)).await;
    let e = a.list_partitions(&plain).await.unwrap_err();
    assert_eq!(e.fluss_code(), Some(37), "{e}");
}

/// A table dropped under an open handle: every path that refreshes its metadata reports it as
/// not found, naming it (Fluss 0.9.1 answers GetMetadata with -1 and a stack trace whose cause
/// is TableNotExistException; the client reports the cause).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_table_is_not_found_for_writes_reads_and_lookups() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let a = conn.admin();
    let log_path = env.path("gone_log");
    let pk_path = env.path("gone_pk");
    let log = create_table(&conn, &log_path, descriptor(false, false, 1)).await;
    let pk = create_table(&conn, &pk_path, descriptor(true, false, 1)).await;
    append(&log, &[(1, "a", "eu")]).await;
    upsert(&pk, &[(1, "a", "eu")]).await;
    a.drop_table(&log_path, false).await.unwrap();
    a.drop_table(&pk_path, false).await.unwrap();
    // The leaders are cached: forget them, as a NOT_LEADER answer would.
    conn.invalidate_table(log.info().table_id);
    conn.invalidate_table(pk.info().table_id);

    let check = |e: riverlet::Error, what: &str, path: &TablePath| {
        assert_eq!(e.kind(), ErrorKind::NotFound, "{what}: {e}");
        assert!(e.message().contains(&path.to_string()), "{what}: {e}");
        assert!(!e.message().contains("\tat "), "{what}: a stack trace: {e}");
    };
    let w = log.new_append_writer().unwrap();
    let e = w
        .append_batch(&rows_batch(&[(2, "b", "eu")]))
        .await
        .unwrap_err();
    check(e, "append", &log_path);
    check(
        log.scan().collect().await.unwrap_err(),
        "log read",
        &log_path,
    );
    let uw = pk.new_upsert_writer(None).unwrap();
    let e = uw
        .upsert_batch(&rows_batch(&[(2, "b", "eu")]))
        .await
        .unwrap_err();
    check(e, "upsert", &pk_path);
    let l = pk.new_lookuper().unwrap();
    let e = l.lookup(&rows_batch(&[(1, "", "eu")])).await.unwrap_err();
    check(e, "lookup", &pk_path);
    check(pk.scan().collect().await.unwrap_err(), "pk read", &pk_path);
}

/// ListOffsets: EARLIEST is the log start, LATEST the high watermark, TIMESTAMP(t) the base
/// offset of the first batch committed at or after t (the high watermark when none is), and a
/// timestamp in the future is INVALID_TIMESTAMP (38).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_offsets_semantics() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let a = conn.admin();
    let p = env.path("offsets");
    let t = create_table(&conn, &p, descriptor(false, false, 1)).await;
    let empty = a
        .list_offsets(&p, None, &[0], OffsetSpec::Timestamp(boundary().await))
        .await
        .unwrap();
    assert_eq!(empty, BTreeMap::from([(0, 0)]));
    let b0 = boundary().await;
    append(&t, &[(1, "a", "eu"), (2, "b", "eu")]).await;
    let b1 = boundary().await;
    append(&t, &[(3, "c", "eu")]).await;
    let b2 = boundary().await;
    let at = |spec| {
        let a = a.clone();
        let p = p.clone();
        async move { a.list_offsets(&p, None, &[0], spec).await.unwrap()[&0] }
    };
    assert_eq!(at(OffsetSpec::Earliest).await, 0);
    assert_eq!(at(OffsetSpec::Latest).await, 3);
    assert_eq!(at(OffsetSpec::Timestamp(b0 - 3_600_000)).await, 0);
    assert_eq!(at(OffsetSpec::Timestamp(b0)).await, 0);
    assert_eq!(at(OffsetSpec::Timestamp(b1)).await, 2);
    assert_eq!(at(OffsetSpec::Timestamp(b2)).await, 3);
    let e = a
        .list_offsets(&p, None, &[0], OffsetSpec::Timestamp(b2 + 3_600_000))
        .await
        .unwrap_err();
    assert_eq!(e.fluss_code(), Some(38), "{e}");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    // A partition name on a table without partitions.
    let e = a
        .list_offsets(&p, Some("x"), &[0], OffsetSpec::Latest)
        .await
        .unwrap_err();
    assert_eq!(e.fluss_code(), Some(37), "{e}");
}

/// What the server fills into a descriptor sent without bucket count or properties (pyfluss
/// sends `"properties":{}`): one bucket, the bucket key defaulting to the primary key, the
/// replication factor and (primary-key tables) the KV format version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_fills_table_defaults() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let a = conn.admin();
    let pk = env.path("pk_defaults");
    a.create_table(
        &pk,
        &TableDescriptor::builder(schema(true, false))
            .build()
            .unwrap(),
        false,
    )
    .await
    .unwrap();
    let info = a.table_info(&pk).await.unwrap();
    let d = &info.descriptor;
    assert_eq!(d.bucket_count, Some(1));
    assert_eq!(d.bucket_keys, vec!["id".to_string()]);
    // The server's `default.replication.factor`: 1 (Fluss's default) unless the cluster was
    // started with another, which its runner says (run-interop.sh: 3 tablet servers, factor 3).
    let replication = std::env::var("RIVERLET_TEST_REPLICATION_FACTOR")
        .ok()
        .filter(|_| env.is_external())
        .unwrap_or_else(|| "1".to_string());
    assert_eq!(
        d.properties
            .get("table.replication.factor")
            .map(String::as_str),
        Some(replication.as_str())
    );
    assert_eq!(
        d.properties
            .get("table.kv.format-version")
            .map(String::as_str),
        Some("2")
    );
    assert!(d.custom_properties.is_empty());
    assert_eq!(d.log_format().unwrap().to_string(), "ARROW");
    let log = env.path("log_defaults");
    a.create_table(
        &log,
        &TableDescriptor::builder(schema(false, false))
            .build()
            .unwrap(),
        false,
    )
    .await
    .unwrap();
    let info = a.table_info(&log).await.unwrap();
    assert_eq!(info.descriptor.bucket_count, Some(1));
    assert!(info.descriptor.bucket_keys.is_empty());
    assert!(!info
        .descriptor
        .properties
        .contains_key("table.kv.format-version"));
}

/// The cluster's metadata: a coordinator and at least one tablet server, each with an address
/// the client can reach; a table's buckets all have a leader among the tablet servers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_metadata_names_reachable_servers() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let p = env.path("meta");
    let t = create_table(&conn, &p, descriptor(false, false, 3)).await;
    let coord = conn.coordinator().await.unwrap();
    let m = coord.request(&MetadataRequest::default()).await.unwrap();
    let c = m.coordinator_server.expect("a coordinator");
    assert!(!c.host.is_empty() && c.port > 0, "{c:?}");
    assert!(!m.tablet_servers.is_empty());
    for b in 0..3 {
        let leader = conn.leader(t.info().table_id, None, b).await.unwrap();
        assert!(m
            .tablet_servers
            .iter()
            .any(|s| leader.peer().ends_with(&format!(":{}", s.port))));
    }
}
