//! Shared helpers of the scan and time-range integration tests: an embedded server on a free
//! port, table creation, writes separated by marked commit-time boundaries, and result reading.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema as ArrowSchema};
use riverlet::client::{ClientConfig, Connection, Table};
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet::row::Datum;

/// A running embedded server and its data directory.
pub struct TestServer {
    pub server: riverlet_server::AsyncServer,
    pub dir: tempfile::TempDir,
    pub bootstrap: String,
}

/// Starts an embedded server on a free port in the current runtime.
pub async fn start_server() -> TestServer {
    start_server_with(|_| {}).await
}

/// Starts an embedded server, letting the test adjust its config.
pub async fn start_server_with(f: impl FnOnce(&mut riverlet_server::ServerConfig)) -> TestServer {
    let dir = tempfile::tempdir().unwrap();
    let mut config = riverlet_server::ServerConfig::new(dir.path()).with_port(0);
    f(&mut config);
    let server = riverlet_server::AsyncServer::start(config).await.unwrap();
    let bootstrap = server.bootstrap_servers();
    TestServer {
        server,
        dir,
        bootstrap,
    }
}

/// Client settings for tests: short linger.
pub fn test_config(bootstrap: &str) -> ClientConfig {
    let mut c = ClientConfig::new(bootstrap);
    c.writer.linger = Duration::from_millis(2);
    c.request_timeout = Duration::from_secs(10);
    c.connect_timeout = Duration::from_secs(5);
    c
}

pub async fn connect(server: &TestServer) -> Connection {
    Connection::connect(test_config(&server.bootstrap))
        .await
        .unwrap()
}

/// Creates `db` (if needed) and a table, and opens it.
pub async fn create_table(conn: &Connection, path: &TablePath, d: TableDescriptor) -> Table {
    let admin = conn.admin();
    admin.create_database(&path.database, true).await.unwrap();
    admin.create_table(path, &d, false).await.unwrap();
    conn.table(path).await.unwrap()
}

/// `id INT NOT NULL, name STRING, region STRING NOT NULL` (PK (id, region) when `pk`).
pub fn schema(pk: bool, partitioned: bool) -> Schema {
    let mut b = Schema::builder()
        .column("id", DataType::int().not_null())
        .column("name", DataType::string())
        .column("region", DataType::string().not_null());
    if pk {
        b = if partitioned {
            b.primary_key(["id", "region"])
        } else {
            b.primary_key(["id"])
        };
    }
    b.build().unwrap()
}

pub fn descriptor(pk: bool, partitioned: bool, buckets: i32) -> TableDescriptor {
    let mut d = TableDescriptor::builder(schema(pk, partitioned))
        .distributed_by(Some(buckets), Vec::<String>::new());
    if partitioned {
        d = d.partitioned_by(["region"]);
    }
    d.build().unwrap()
}

/// Creates the partitions `eu` and `us` of a partitioned table.
pub async fn create_regions(conn: &Connection, path: &TablePath) {
    for r in ["eu", "us"] {
        conn.admin()
            .create_partition(
                path,
                &riverlet::metadata::PartitionSpec::new([("region", r)]),
                true,
            )
            .await
            .unwrap();
    }
}

pub fn rows_batch(rows: &[(i32, &str, &str)]) -> RecordBatch {
    let schema = Arc::new(ArrowSchema::new(vec![
        Field::new("id", ArrowType::Int32, false),
        Field::new("name", ArrowType::Utf8, true),
        Field::new("region", ArrowType::Utf8, false),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1))),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.2))),
        ],
    )
    .unwrap()
}

pub fn row(id: i32, name: &str, region: &str) -> Vec<Datum> {
    vec![
        Datum::Int(id),
        Datum::String(name.into()),
        Datum::String(region.into()),
    ]
}

/// The current time in epoch ms, a few ms away from any commit: sleeps before and after.
pub async fn boundary() -> i64 {
    tokio::time::sleep(Duration::from_millis(4)).await;
    let t = riverlet::scan::time::now_millis();
    tokio::time::sleep(Duration::from_millis(4)).await;
    t
}

/// Appends rows and waits for the ack.
pub async fn append(table: &Table, rows: &[(i32, &str, &str)]) {
    let w = table.new_append_writer().unwrap();
    w.append_batch(&rows_batch(rows)).await.unwrap();
    w.flush().await.unwrap();
}

/// Upserts rows and waits for the ack.
pub async fn upsert(table: &Table, rows: &[(i32, &str, &str)]) {
    let w = table.new_upsert_writer(None).unwrap();
    w.upsert_batch(&rows_batch(rows)).await.unwrap();
    w.flush().await.unwrap();
}

/// Deletes keys (full rows given) and waits for the ack.
pub async fn delete(table: &Table, rows: &[(i32, &str, &str)]) {
    let w = table.new_upsert_writer(None).unwrap();
    w.delete_batch(&rows_batch(rows)).await.unwrap();
    w.flush().await.unwrap();
}

/// (id, name, region) of every row, sorted; columns found by name.
pub fn triples(batches: &[RecordBatch]) -> Vec<(i32, String, String)> {
    let mut out = Vec::new();
    for b in batches {
        let ids = b.column_by_name("id").unwrap().as_primitive::<Int32Type>();
        let names = b
            .column_by_name("name")
            .map(|c| c.as_string::<i32>().clone());
        let regions = b
            .column_by_name("region")
            .map(|c| c.as_string::<i32>().clone());
        for i in 0..b.num_rows() {
            out.push((
                ids.value(i),
                names
                    .as_ref()
                    .map(|n| {
                        if n.is_null(i) {
                            "<null>".into()
                        } else {
                            n.value(i).to_string()
                        }
                    })
                    .unwrap_or_default(),
                regions
                    .as_ref()
                    .map(|r| r.value(i).to_string())
                    .unwrap_or_default(),
            ));
        }
    }
    out.sort();
    out
}

/// Sorted ids of every row.
pub fn ids(batches: &[RecordBatch]) -> Vec<i32> {
    let mut v: Vec<i32> = batches
        .iter()
        .flat_map(|b| {
            b.column_by_name("id")
                .unwrap()
                .as_primitive::<Int32Type>()
                .values()
                .to_vec()
        })
        .collect();
    v.sort();
    v
}

/// Id -> name of every row (asserting ids are unique).
pub fn by_id(batches: &[RecordBatch]) -> BTreeMap<i32, String> {
    let mut m = BTreeMap::new();
    for (id, name, _) in triples(batches) {
        assert!(m.insert(id, name).is_none(), "id {id} twice");
    }
    m
}

/// A unique table path per test.
pub fn path(name: &str) -> TablePath {
    TablePath::new("scan_db", name)
}
