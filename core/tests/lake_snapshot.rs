//! Lake snapshots through the client (`Admin::lake_snapshot`, GetLakeSnapshot) against the
//! embedded server tiering a `table.datalake.enabled` table to Iceberg: the offsets recorded per
//! bucket are where each bucket's log stood at the commit.

use crate::common;

use common::*;
use riverlet::client::OffsetSpec;
use riverlet::metadata::TableDescriptor;
use riverlet::ErrorKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lake_snapshot_records_each_buckets_log_offset() {
    let warehouse = tempfile::tempdir().unwrap();
    let Some(env) = TestEnv::embedded_lake(warehouse.path()) else {
        return;
    };
    let conn = env.connect().await;
    let admin = conn.admin();
    let path = env.path("trades");
    let d = TableDescriptor::builder(schema(false, false))
        .distributed_by(Some(3), Vec::<String>::new())
        .property("table.datalake.enabled", "true")
        .property("table.datalake.freshness", "1h")
        .build()
        .unwrap();
    let table = create_table(&conn, &path, d).await;
    // the lake catalog reaches clients as table properties, as with Fluss
    let props = &table.info().descriptor.properties;
    assert_eq!(
        props.get("table.datalake.format").map(String::as_str),
        Some("iceberg")
    );
    assert!(
        props.contains_key("table.datalake.iceberg.warehouse"),
        "{props:?}"
    );

    let e = admin.lake_snapshot(&path, None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");

    let rows: Vec<(i32, String)> = (0..40).map(|i| (i, format!("n{i}"))).collect();
    let refs: Vec<(i32, &str, &str)> = rows.iter().map(|(i, n)| (*i, n.as_str(), "eu")).collect();
    append(&table, &refs).await;
    let server = env.server.as_ref().unwrap();
    server.commit_lake().unwrap();
    let first = admin.lake_snapshot(&path, None).await.unwrap();
    assert_eq!(first.table_id, table.info().table_id);
    let latest = admin
        .list_offsets(&path, None, &[], OffsetSpec::Latest)
        .await
        .unwrap();
    assert_eq!(latest.values().sum::<i64>(), 40);
    for (bucket, end) in &latest {
        assert_eq!(first.start_offset(None, *bucket), *end, "bucket {bucket}");
    }

    append(&table, &[(100, "x", "us"), (101, "y", "us")]).await;
    server.commit_lake().unwrap();
    let second = admin.lake_snapshot(&path, None).await.unwrap();
    assert_ne!(second.snapshot_id, first.snapshot_id);
    let latest = admin
        .list_offsets(&path, None, &[], OffsetSpec::Latest)
        .await
        .unwrap();
    assert_eq!(latest.values().sum::<i64>(), 42);
    for (bucket, end) in &latest {
        assert_eq!(second.start_offset(None, *bucket), *end, "bucket {bucket}");
    }
    // an earlier snapshot by its id
    assert_eq!(
        admin
            .lake_snapshot(&path, Some(first.snapshot_id))
            .await
            .unwrap(),
        first
    );
    let e = admin.lake_snapshot(&path, Some(-5)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
}
