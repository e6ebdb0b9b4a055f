//! Iceberg tiering of `table.datalake.enabled` tables: what the lake holds after each commit
//! (read back with the iceberg crate and, when RIVERLET_LAKE_PYTHON names a Python with
//! pyiceberg, with pyiceberg), what GetLakeSnapshot answers, and both across a restart.
//! Expected values come from the rows the tests write.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{Decimal128Array, Int32Array, RecordBatch, StringArray};
use common::*;
use futures::TryStreamExt;
use iceberg::{Catalog, CatalogBuilder, TableIdent};
use riverlet::metadata::{DataType, Schema, TableDescriptor};
use riverlet::proto::*;
use riverlet::record::arrow_payload::ArrowCompression;
use riverlet::record::log_batch::build_arrow_log_batch;
use riverlet_server::ServerConfig;

fn trades_schema() -> Schema {
    Schema::builder()
        .column("trade_id", DataType::int().not_null())
        .column("side", DataType::string())
        .column("notional", DataType::decimal(15, 2))
        .build()
        .unwrap()
}

/// One written trade: (trade_id, side, notional in cents).
type Trade = (i32, String, i128);

fn trades_batch(trades: &[Trade]) -> Vec<u8> {
    let schema = trades_schema().to_arrow();
    let rows = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int32Array::from(
                trades.iter().map(|t| t.0).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(
                trades.iter().map(|t| t.1.clone()).collect::<Vec<_>>(),
            )),
            Arc::new(
                Decimal128Array::from(trades.iter().map(|t| t.2).collect::<Vec<_>>())
                    .with_precision_and_scale(15, 2)
                    .unwrap(),
            ),
        ],
    )
    .unwrap();
    build_arrow_log_batch(1, &rows, ArrowCompression::None, None, -1, -1).unwrap()
}

fn trades(from: i32, n: i32) -> Vec<Trade> {
    (from..from + n)
        .map(|i| {
            let side = if i % 3 == 0 { "SELL" } else { "BUY" };
            (i, side.to_string(), (i as i128) * 1234 + 5)
        })
        .collect()
}

fn lake_config(dir: &std::path::Path) -> ServerConfig {
    config(&dir.join("data"))
        .with_options([
            ("datalake.format", "iceberg"),
            (
                "datalake.iceberg.warehouse",
                dir.join("warehouse").to_str().unwrap(),
            ),
        ])
        .unwrap()
}

async fn create_lake_table(conn: &riverlet::rpc::ServerConnection, name: &str) -> i64 {
    create_table(
        conn,
        name,
        trades_schema(),
        3,
        &[
            ("table.datalake.enabled", "true"),
            // the periodic commit stays out of the way: the tests commit on demand
            ("table.datalake.freshness", "1h"),
        ],
    )
    .await
}

async fn lake_snapshot(
    conn: &riverlet::rpc::ServerConnection,
    name: &str,
    snapshot_id: Option<i64>,
) -> Result<GetLakeSnapshotResponse, riverlet::Error> {
    conn.request(&GetLakeSnapshotRequest {
        table_path: PbTablePath {
            database_name: DB.into(),
            table_name: name.into(),
        },
        snapshot_id,
        readable: None,
    })
    .await
}

fn offsets_of(r: &GetLakeSnapshotResponse) -> BTreeMap<i32, i64> {
    r.bucket_snapshots
        .iter()
        .map(|b| (b.bucket_id, b.log_offset.unwrap()))
        .collect()
}

/// Every row of the Iceberg table through the iceberg crate: (trade_id, side, notional,
/// __bucket, __offset), sorted.
async fn iceberg_rows(
    warehouse: &std::path::Path,
    name: &str,
) -> Vec<(i32, String, i128, i32, i64)> {
    let catalog = iceberg_catalog_sql::SqlCatalogBuilder::default()
        .uri(format!("sqlite:{}", warehouse.join("catalog.db").display()))
        .warehouse_location(format!("file://{}", warehouse.display()))
        .sql_bind_style(iceberg_catalog_sql::SqlBindStyle::QMark)
        .with_storage_factory(Arc::new(iceberg::io::LocalFsStorageFactory))
        .load("fluss-iceberg-catalog", Default::default())
        .await
        .unwrap();
    let t = catalog
        .load_table(&TableIdent::from_strs([DB, name]).unwrap())
        .await
        .unwrap();
    let batches: Vec<arrow_array_58::RecordBatch> = t
        .scan()
        .select_all()
        .build()
        .unwrap()
        .to_arrow()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let mut out = Vec::new();
    for b in batches {
        let b = riverlet_server::lake::bridge::batch_from_58(b).unwrap();
        let col = |n: &str| b.column_by_name(n).unwrap().clone();
        let id = col("trade_id");
        let id = id.as_any().downcast_ref::<Int32Array>().unwrap();
        let side = col("side");
        let side = side.as_any().downcast_ref::<StringArray>().unwrap();
        let notional = col("notional");
        let notional = notional.as_any().downcast_ref::<Decimal128Array>().unwrap();
        let bucket = col("__bucket");
        let bucket = bucket.as_any().downcast_ref::<Int32Array>().unwrap();
        let offset = col("__offset");
        let offset = offset
            .as_any()
            .downcast_ref::<arrow_array::Int64Array>()
            .unwrap();
        for i in 0..b.num_rows() {
            out.push((
                id.value(i),
                side.value(i).to_string(),
                notional.value(i),
                bucket.value(i),
                offset.value(i),
            ));
        }
    }
    out.sort();
    out
}

/// The rows written, as the lake should hold them: (trade_id, side, notional, bucket, offset).
fn expected(written: &[(i32, Vec<Trade>)]) -> Vec<(i32, String, i128, i32, i64)> {
    let mut next: BTreeMap<i32, i64> = BTreeMap::new();
    let mut out = Vec::new();
    for (bucket, batch) in written {
        let o = next.entry(*bucket).or_default();
        for t in batch {
            out.push((t.0, t.1.clone(), t.2, *bucket, *o));
            *o += 1;
        }
    }
    out.sort();
    out
}

fn end_offsets(written: &[(i32, Vec<Trade>)]) -> BTreeMap<i32, i64> {
    let mut m: BTreeMap<i32, i64> = (0..3).map(|b| (b, 0)).collect();
    for (bucket, batch) in written {
        *m.get_mut(bucket).unwrap() += batch.len() as i64;
    }
    m
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lake_table_without_lake_is_refused_with_flusss_error() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(config(dir.path()));
    let conn = connect(&server.bootstrap_servers()).await;
    conn.request(&CreateDatabaseRequest {
        database_name: DB.into(),
        ignore_if_exists: true,
        database_json: None,
    })
    .await
    .unwrap();
    let d = TableDescriptor::builder(trades_schema())
        .distributed_by(Some(3), Vec::<String>::new())
        .property("table.datalake.enabled", "true")
        .build()
        .unwrap();
    let e = conn
        .request(&CreateTableRequest {
            table_path: PbTablePath {
                database_name: DB.into(),
                table_name: "t".into(),
            },
            table_json: d.to_json(),
            ignore_if_exists: false,
        })
        .await
        .unwrap_err();
    assert_eq!(
        e.fluss_code(),
        Some(riverlet::error::codes::INVALID_TABLE_EXCEPTION),
        "{e}"
    );
    assert!(e.message().contains("table.datalake.enabled"), "{e}");
    // and no half-created table is left behind
    let exists = conn
        .request(&TableExistsRequest {
            table_path: PbTablePath {
                database_name: DB.into(),
                table_name: "t".into(),
            },
        })
        .await
        .unwrap();
    assert!(!exists.exists);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupported_lake_tables_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(lake_config(dir.path()));
    let conn = connect(&server.bootstrap_servers()).await;
    conn.request(&CreateDatabaseRequest {
        database_name: DB.into(),
        ignore_if_exists: true,
        database_json: None,
    })
    .await
    .unwrap();
    let d = TableDescriptor::builder(pk_schema())
        .distributed_by(Some(3), Vec::<String>::new())
        .property("table.datalake.enabled", "true")
        .build()
        .unwrap();
    let e = conn
        .request(&CreateTableRequest {
            table_path: PbTablePath {
                database_name: DB.into(),
                table_name: "pk".into(),
            },
            table_json: d.to_json(),
            ignore_if_exists: false,
        })
        .await
        .unwrap_err();
    assert!(e.message().contains("primary-key tables"), "{e}");
    assert!(e.message().contains("test_db.pk"), "{e}");
}

#[test]
fn unknown_and_bad_lake_options_are_errors_naming_them() {
    let mut c = ServerConfig::new("/nonexistent");
    // a format the embedded server does not tier to (Paimon's options: tests/lake_paimon.rs)
    let e = c.set("datalake.format", "lance").unwrap_err();
    assert!(e.message().contains("datalake.format"), "{e}");
    assert!(e.message().contains("lance"), "{e}");
    let e = c.set("datalake.iceberg.bogus", "x").unwrap_err();
    assert!(e.message().contains("datalake.iceberg.bogus"), "{e}");
    let e = c.set("datalake.iceberg.type", "hive").unwrap_err();
    assert!(e.message().contains("hive"), "{e}");
    // the quickstart's REST catalog options (Lakekeeper) are taken, without the prefix
    for (k, v) in [
        ("datalake.iceberg.type", "rest"),
        ("datalake.iceberg.uri", "http://lakekeeper:8181/catalog"),
        ("datalake.iceberg.warehouse", "fluss"),
        ("datalake.iceberg.token", "t0k3n"),
        (
            "datalake.iceberg.io-impl",
            "org.apache.iceberg.aws.s3.S3FileIO",
        ),
        ("datalake.iceberg.client.region", "eu-west-1"),
        ("datalake.iceberg.header.X-Tenant", "a"),
    ] {
        c.set(k, v).unwrap();
        let short = k.trim_start_matches("datalake.iceberg.");
        assert_eq!(c.datalake_iceberg.get(short).map(String::as_str), Some(v));
    }
    // secrets stay out of the config's debug form
    c.set("datalake.iceberg.credential", "client:s3cr3t")
        .unwrap();
    let debug = format!("{c:?}");
    assert!(debug.contains("http://lakekeeper:8181/catalog"), "{debug}");
    for secret in ["t0k3n", "s3cr3t"] {
        assert!(!debug.contains(secret), "{debug}");
    }
    // a prefix alone is no property
    let e = c.set("datalake.iceberg.header.", "x").unwrap_err();
    assert!(e.message().contains("datalake.iceberg.header."), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_hold_the_rows_and_record_per_bucket_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().join("warehouse");
    let server = start(lake_config(dir.path()));
    let conn = connect(&server.bootstrap_servers()).await;
    let id = create_lake_table(&conn, "trades").await;

    // no commit yet: Fluss's error
    let e = lake_snapshot(&conn, "trades", None).await.unwrap_err();
    assert_eq!(
        e.fluss_code(),
        Some(riverlet::error::codes::LAKE_SNAPSHOT_NOT_EXIST),
        "{e}"
    );
    // GetTableInfo shows the lake format, as Fluss's coordinator adds it
    let info = conn
        .request(&GetTableInfoRequest {
            table_path: PbTablePath {
                database_name: DB.into(),
                table_name: "trades".into(),
            },
        })
        .await
        .unwrap();
    let d = TableDescriptor::from_json(&info.table_json).unwrap();
    assert_eq!(d.datalake_format().as_deref(), Some("iceberg"));

    let mut written: Vec<(i32, Vec<Trade>)> = Vec::new();
    for (bucket, from, n) in [(0, 0, 5), (1, 100, 7), (0, 200, 3)] {
        let t = trades(from, n);
        produce(&conn, id, bucket, trades_batch(&t)).await.unwrap();
        written.push((bucket, t));
    }
    server.commit_lake().unwrap();
    let s1 = lake_snapshot(&conn, "trades", None).await.unwrap();
    assert_eq!(s1.table_id, id);
    assert_eq!(offsets_of(&s1), end_offsets(&written));
    assert_eq!(iceberg_rows(&warehouse, "trades").await, expected(&written));

    // nothing new: no new snapshot
    server.commit_lake().unwrap();
    assert_eq!(
        lake_snapshot(&conn, "trades", None)
            .await
            .unwrap()
            .snapshot_id,
        s1.snapshot_id
    );

    for (bucket, from, n) in [(2, 300, 4), (1, 400, 2)] {
        let t = trades(from, n);
        produce(&conn, id, bucket, trades_batch(&t)).await.unwrap();
        written.push((bucket, t));
    }
    server.commit_lake().unwrap();
    let s2 = lake_snapshot(&conn, "trades", None).await.unwrap();
    assert_ne!(s2.snapshot_id, s1.snapshot_id);
    assert_eq!(offsets_of(&s2), end_offsets(&written));
    assert_eq!(iceberg_rows(&warehouse, "trades").await, expected(&written));
    // an older snapshot by id keeps its offsets
    let again = lake_snapshot(&conn, "trades", Some(s1.snapshot_id))
        .await
        .unwrap();
    assert_eq!(offsets_of(&again), offsets_of(&s1));

    pyiceberg_check(&warehouse, "trades", &expected(&written), s2.snapshot_id);

    // a restart keeps the lake snapshots (read back from the Iceberg table)
    drop(conn);
    server.shutdown().unwrap();
    let server = start(lake_config(dir.path()));
    let conn = connect(&server.bootstrap_servers()).await;
    let after = lake_snapshot(&conn, "trades", None).await.unwrap();
    assert_eq!(after.snapshot_id, s2.snapshot_id);
    assert_eq!(offsets_of(&after), offsets_of(&s2));
    // and the next commit continues from the recorded offsets (no row twice)
    let t = trades(500, 3);
    produce(&conn, id, 2, trades_batch(&t)).await.unwrap();
    written.push((2, t));
    server.commit_lake().unwrap();
    assert_eq!(iceberg_rows(&warehouse, "trades").await, expected(&written));
    let s3 = lake_snapshot(&conn, "trades", None).await.unwrap();
    assert_eq!(offsets_of(&s3), end_offsets(&written));
}

/// pyiceberg (RIVERLET_LAKE_PYTHON: a Python with pyiceberg, tests/requirements-lake.txt)
/// opens the catalog and reads the same rows; it sees the partitioning by `__bucket` and the
/// snapshot summary Fluss's tiering writes.
fn pyiceberg_check(
    warehouse: &std::path::Path,
    name: &str,
    want: &[(i32, String, i128, i32, i64)],
    latest_snapshot: i64,
) {
    let Some(python) = std::env::var_os("RIVERLET_LAKE_PYTHON") else {
        eprintln!("SKIPPED pyiceberg check: RIVERLET_LAKE_PYTHON is not set");
        return;
    };
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/lake/read_iceberg.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(format!(
            "sqlite:///{}",
            warehouse.join("catalog.db").display()
        ))
        .arg(format!("file://{}", warehouse.display()))
        .arg("fluss-iceberg-catalog")
        .arg(format!("{DB}.{name}"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pyiceberg: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let columns: Vec<&str> = v["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(
        columns,
        [
            "trade_id",
            "side",
            "notional",
            "__bucket",
            "__offset",
            "__timestamp"
        ]
    );
    let mut got: Vec<(i32, String, i128, i32, i64)> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let notional: f64 = r[2].as_str().unwrap().parse().unwrap();
            (
                r[0].as_i64().unwrap() as i32,
                r[1].as_str().unwrap().to_string(),
                (notional * 100.0).round() as i128,
                r[3].as_i64().unwrap() as i32,
                r[4].as_i64().unwrap(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(got, want);
    let fields = &v["partition_fields"];
    assert_eq!(fields[0]["source"], "__bucket");
    assert_eq!(fields[0]["transform"], "identity");
    let snaps = v["snapshots"].as_array().unwrap();
    assert_eq!(v["current_snapshot_id"].as_i64(), Some(latest_snapshot));
    let last = snaps
        .iter()
        .find(|s| s["snapshot_id"].as_i64() == Some(latest_snapshot))
        .unwrap();
    assert_eq!(last["summary"]["commit-user"], "__fluss_lake_tiering");
    assert!(last["summary"]["fluss-offsets"].is_string());
}
