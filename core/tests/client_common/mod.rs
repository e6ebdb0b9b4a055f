//! Shared helpers of the client integration tests: an embedded server on a free port, and raw
//! reads (FetchLog / Lookup) to check what writers wrote without depending on the scanners.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use riverlet::client::{ClientConfig, Connection, Table};
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet::proto::{
    FetchLogRequest, LookupRequest, PbFetchLogReqForBucket, PbFetchLogReqForTable,
    PbLookupReqForBucket,
};
use riverlet::record::log_batch::LogBatchIter;
use riverlet::row::Datum;

/// A running embedded server and its data directory.
pub struct TestServer {
    pub server: riverlet_server::LocalServer,
    pub dir: tempfile::TempDir,
    pub bootstrap: String,
}

/// Starts an embedded server on a free port.
pub async fn start_server() -> TestServer {
    start_server_with(|_| {}).await
}

/// Starts an embedded server, letting the test adjust its config.
pub async fn start_server_with(f: impl FnOnce(&mut riverlet_server::ServerConfig)) -> TestServer {
    let dir = tempfile::tempdir().unwrap();
    let mut config = riverlet_server::ServerConfig::new(dir.path());
    config.port = 0;
    f(&mut config);
    let server = riverlet_server::LocalServer::start(config).unwrap();
    let bootstrap = server.bootstrap_servers();
    TestServer {
        server,
        dir,
        bootstrap,
    }
}

/// Client settings for tests: short linger, small retries.
pub fn test_config(bootstrap: &str) -> ClientConfig {
    let mut c = ClientConfig::new(bootstrap);
    c.writer.linger = Duration::from_millis(5);
    c.request_timeout = Duration::from_secs(10);
    c.connect_timeout = Duration::from_secs(5);
    c.retries = 2;
    c
}

pub async fn connect(server: &TestServer) -> Connection {
    Connection::connect(test_config(&server.bootstrap))
        .await
        .unwrap()
}

/// Creates `db` (if needed) and a table, and opens it.
pub async fn create_table(
    conn: &Connection,
    path: &TablePath,
    descriptor: TableDescriptor,
) -> Table {
    let admin = conn.admin();
    admin.create_database(&path.database, true).await.unwrap();
    admin.create_table(path, &descriptor, false).await.unwrap();
    conn.table(path).await.unwrap()
}

pub fn log_schema() -> Schema {
    Schema::builder()
        .column("id", DataType::int().not_null())
        .column("name", DataType::string())
        .build()
        .unwrap()
}

/// Every row of one bucket (or one bucket of a partition), read with raw FetchLog requests up to
/// the high watermark.
pub async fn fetch_bucket(
    conn: &Connection,
    table: &Table,
    partition_id: Option<i64>,
    bucket: i32,
) -> Vec<RecordBatch> {
    let schema: SchemaRef = table.info().descriptor.schema.to_arrow();
    let mut out = Vec::new();
    let mut offset = 0i64;
    for _ in 0..1000 {
        let req = FetchLogRequest {
            follower_server_id: -1,
            max_bytes: 16 << 20,
            tables_req: vec![PbFetchLogReqForTable {
                table_id: table.info().table_id,
                projection_pushdown_enabled: false,
                projected_fields: vec![],
                buckets_req: vec![PbFetchLogReqForBucket {
                    partition_id,
                    bucket_id: bucket,
                    fetch_offset: offset,
                    max_fetch_bytes: 16 << 20,
                }],
                filter_predicate: None,
                filter_schema_id: None,
            }],
            max_wait_ms: Some(0),
            min_bytes: Some(0),
            read_preference: None,
        };
        let resp = conn
            .request_leader(table.info().table_id, partition_id, bucket, &req)
            .await
            .unwrap();
        let b = &resp.tables_resp[0].buckets_resp[0];
        assert!(
            b.error_code.unwrap_or(0) == 0,
            "fetch error {:?} {:?}",
            b.error_code,
            b.error_message
        );
        let hw = b.high_watermark.unwrap_or(0);
        let records = b.records.clone().unwrap_or_default();
        let mut progressed = false;
        for batch in LogBatchIter::new(&records) {
            let batch = batch.unwrap();
            assert!(batch.is_valid(), "bad CRC in a fetched batch");
            let (_, rb) = batch.arrow_records(&schema).unwrap();
            let skip = (offset - batch.base_offset()).max(0) as usize;
            if skip < rb.num_rows() {
                out.push(rb.slice(skip, rb.num_rows() - skip));
            }
            offset = batch.next_offset();
            progressed = true;
        }
        if offset >= hw || !progressed {
            break;
        }
    }
    out
}

/// All rows of every bucket of a non-partitioned log table, concatenated.
pub async fn fetch_all(
    conn: &Connection,
    table: &Table,
    partition_id: Option<i64>,
) -> Vec<RecordBatch> {
    let buckets = table.info().descriptor.bucket_count.unwrap_or(1);
    let mut out = Vec::new();
    for b in 0..buckets {
        out.extend(fetch_bucket(conn, table, partition_id, b).await);
    }
    out
}

pub fn total_rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(|b| b.num_rows()).sum()
}

/// Point lookup of a primary-key table by its key values (PK minus partition keys); returns the
/// decoded row.
pub async fn lookup(
    conn: &Connection,
    table: &Table,
    partition_id: Option<i64>,
    key: &[Datum],
) -> Option<Vec<Datum>> {
    let d = &table.info().descriptor;
    let pk = d.schema.primary_key.clone().unwrap();
    let key_cols: Vec<usize> = pk
        .iter()
        .filter(|k| !d.partition_keys.contains(k))
        .map(|k| d.schema.column_index(k).unwrap())
        .collect();
    let types: Vec<DataType> = d
        .schema
        .columns
        .iter()
        .map(|c| c.data_type.clone())
        .collect();
    let key_types: Vec<DataType> = key_cols.iter().map(|i| types[*i].clone()).collect();
    let key_bytes = riverlet::row::encode_key(&key_types, key).unwrap();
    let buckets = d.bucket_count.unwrap_or(1);
    let bucket = riverlet::row::fluss_bucket(&key_bytes, buckets);
    let req = LookupRequest {
        table_id: table.info().table_id,
        buckets_req: vec![PbLookupReqForBucket {
            partition_id,
            bucket_id: bucket,
            keys: vec![key_bytes],
            original_partition_name: None,
        }],
        insert_if_not_exists: None,
        acks: None,
        timeout_ms: None,
    };
    let resp = conn
        .request_leader(table.info().table_id, partition_id, bucket, &req)
        .await
        .unwrap();
    let b = &resp.buckets_resp[0];
    assert!(
        b.error_code.unwrap_or(0) == 0,
        "lookup error {:?}",
        b.error_message
    );
    let v = b.values.first()?.values.clone()?;
    let (_schema_id, row) = riverlet::row::decode_value(&v).unwrap();
    Some(riverlet::row::decode_compacted_row(&types, row).unwrap())
}

pub fn arc<T>(t: T) -> Arc<T> {
    Arc::new(t)
}
