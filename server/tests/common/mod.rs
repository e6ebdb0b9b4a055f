//! Shared helpers: start a server, connect with `riverlet::rpc::ServerConnection`, build
//! batches with the core codecs, and read fetch responses back. Only the wire is used.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use arrow_array::{Int32Array, RecordBatch, StringArray};
use riverlet::metadata::{DataType, Schema, TableDescriptor};
use riverlet::proto::*;
use riverlet::record::arrow_payload::ArrowCompression;
use riverlet::record::log_batch::{build_arrow_log_batch, LogBatchIter};
use riverlet::record::ChangeType;
use riverlet::rpc::{ConnectionConfig, ServerConnection};
use riverlet_server::{LocalServer, ServerConfig};

pub const DB: &str = "test_db";

pub fn config(dir: &std::path::Path) -> ServerConfig {
    let mut c = ServerConfig::new(dir).with_port(0);
    c.fsync = riverlet_server::FsyncPolicy::Never;
    c
}

pub async fn connect(bootstrap: &str) -> Arc<ServerConnection> {
    let cfg = ConnectionConfig {
        request_timeout: Duration::from_secs(20),
        ..Default::default()
    };
    ServerConnection::connect(bootstrap, &cfg)
        .await
        .expect("connect")
}

pub fn log_schema() -> Schema {
    Schema::builder()
        .column("id", DataType::int())
        .column("name", DataType::string())
        .build()
        .unwrap()
}

pub fn pk_schema() -> Schema {
    Schema::builder()
        .column("id", DataType::int().not_null())
        .column("name", DataType::string())
        .primary_key(["id"])
        .build()
        .unwrap()
}

/// Creates the test database (if needed) and a table; returns its id.
pub async fn create_table(
    conn: &ServerConnection,
    name: &str,
    schema: Schema,
    buckets: i32,
    props: &[(&str, &str)],
) -> i64 {
    conn.request(&CreateDatabaseRequest {
        database_name: DB.into(),
        ignore_if_exists: true,
        database_json: None,
    })
    .await
    .unwrap();
    let mut b =
        TableDescriptor::builder(schema).distributed_by(Some(buckets), Vec::<String>::new());
    b = b.property("table.log.arrow.compression.type", "NONE");
    for (k, v) in props {
        b = b.property(*k, *v);
    }
    let d = b.build().unwrap();
    conn.request(&CreateTableRequest {
        table_path: PbTablePath {
            database_name: DB.into(),
            table_name: name.into(),
        },
        table_json: d.to_json(),
        ignore_if_exists: false,
    })
    .await
    .unwrap();
    table_id(conn, name).await
}

pub async fn table_id(conn: &ServerConnection, name: &str) -> i64 {
    conn.request(&GetTableInfoRequest {
        table_path: PbTablePath {
            database_name: DB.into(),
            table_name: name.into(),
        },
    })
    .await
    .unwrap()
    .table_id
}

pub fn rows(ids: &[i32]) -> RecordBatch {
    let schema = log_schema().to_arrow();
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int32Array::from(ids.to_vec())),
            Arc::new(StringArray::from(
                ids.iter().map(|i| format!("n{i}")).collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}

pub fn log_batch(ids: &[i32], writer_id: i64, seq: i32) -> Vec<u8> {
    build_arrow_log_batch(1, &rows(ids), ArrowCompression::None, None, writer_id, seq).unwrap()
}

/// Produces one batch; returns (base offset) or the bucket error code.
pub async fn produce(
    conn: &ServerConnection,
    table_id: i64,
    bucket: i32,
    batch: Vec<u8>,
) -> Result<i64, (i32, String)> {
    let r = conn
        .request(&ProduceLogRequest {
            acks: -1,
            table_id,
            timeout_ms: 10_000,
            buckets_req: vec![PbProduceLogReqForBucket {
                partition_id: None,
                bucket_id: bucket,
                records: batch.into(),
            }],
        })
        .await
        .unwrap();
    let b = &r.buckets_resp[0];
    match b.error_code {
        Some(c) if c != 0 => Err((c, b.error_message.clone().unwrap_or_default())),
        _ => Ok(b.base_offset.unwrap()),
    }
}

#[derive(Debug, Clone)]
pub struct Fetched {
    pub base_offset: i64,
    pub next_offset: i64,
    pub commit_ts: i64,
    pub change_types: Option<Vec<ChangeType>>,
    pub batch: RecordBatch,
}

pub fn decode_batches(bytes: &[u8], schema: &arrow_schema::SchemaRef) -> Vec<Fetched> {
    decode_batches_checked(bytes, schema, true)
}

/// Batches of a projected fetch: like Fluss, the server keeps the stored batch's CRC while the
/// payload is re-encoded, so the CRC is not checked (and must NOT match).
pub fn decode_projected_batches(bytes: &[u8], schema: &arrow_schema::SchemaRef) -> Vec<Fetched> {
    for b in LogBatchIter::new(bytes) {
        assert!(
            !b.unwrap().is_valid(),
            "a projected batch should keep the stored CRC (Fluss's FileLogProjection)"
        );
    }
    decode_batches_checked(bytes, schema, false)
}

fn decode_batches_checked(
    bytes: &[u8],
    schema: &arrow_schema::SchemaRef,
    check_crc: bool,
) -> Vec<Fetched> {
    LogBatchIter::new(bytes)
        .map(|b| {
            let b = b.unwrap();
            assert!(!check_crc || b.is_valid(), "fetched batch CRC");
            let (ct, batch) = b.arrow_records(schema).unwrap();
            Fetched {
                base_offset: b.base_offset(),
                next_offset: b.next_offset(),
                commit_ts: b.commit_timestamp(),
                change_types: ct,
                batch,
            }
        })
        .collect()
}

/// One fetch: (high watermark, raw bytes) or error code.
pub async fn fetch_raw(
    conn: &ServerConnection,
    table_id: i64,
    bucket: i32,
    offset: i64,
    projection: Option<Vec<i32>>,
    max_wait_ms: Option<i32>,
) -> Result<(i64, Vec<u8>), i32> {
    let r = conn
        .request(&FetchLogRequest {
            follower_server_id: -1,
            max_bytes: 16 * 1024 * 1024,
            tables_req: vec![PbFetchLogReqForTable {
                table_id,
                projection_pushdown_enabled: projection.is_some(),
                projected_fields: projection.unwrap_or_default(),
                buckets_req: vec![PbFetchLogReqForBucket {
                    partition_id: None,
                    bucket_id: bucket,
                    fetch_offset: offset,
                    max_fetch_bytes: 8 * 1024 * 1024,
                }],
                ..Default::default()
            }],
            max_wait_ms,
            min_bytes: Some(1),
            ..Default::default()
        })
        .await
        .unwrap();
    let b = &r.tables_resp[0].buckets_resp[0];
    if let Some(c) = b.error_code.filter(|c| *c != 0) {
        return Err(c);
    }
    Ok((
        b.high_watermark.unwrap(),
        b.records.as_ref().map(|r| r.to_vec()).unwrap_or_default(),
    ))
}

/// Reads the whole bucket from `from` to the high watermark.
pub async fn fetch_all(
    conn: &ServerConnection,
    table_id: i64,
    bucket: i32,
    from: i64,
    schema: &arrow_schema::SchemaRef,
) -> Vec<Fetched> {
    let mut out = Vec::new();
    let mut offset = from;
    loop {
        let (hw, bytes) = fetch_raw(conn, table_id, bucket, offset, None, None)
            .await
            .expect("fetch");
        if offset >= hw {
            break;
        }
        let batches = decode_batches(&bytes, schema);
        assert!(
            !batches.is_empty(),
            "no progress at offset {offset} (hw {hw})"
        );
        offset = batches.last().unwrap().next_offset;
        out.extend(batches);
    }
    out
}

pub async fn list_offset(
    conn: &ServerConnection,
    table_id: i64,
    bucket: i32,
    offset_type: i32,
    ts: Option<i64>,
) -> Result<i64, i32> {
    let r = conn
        .request(&ListOffsetsRequest {
            follower_server_id: -1,
            offset_type,
            table_id,
            partition_id: None,
            bucket_id: vec![bucket],
            start_timestamp: ts,
        })
        .await
        .unwrap();
    let b = &r.buckets_resp[0];
    match b.error_code {
        Some(c) if c != 0 => Err(c),
        _ => Ok(b.offset.unwrap()),
    }
}

pub fn ids_of(f: &[Fetched]) -> Vec<i32> {
    f.iter()
        .flat_map(|b| {
            let a = b
                .batch
                .column(0)
                .as_any()
                .downcast_ref::<Int32Array>()
                .unwrap()
                .clone();
            a.values().to_vec()
        })
        .collect()
}

pub fn start(cfg: ServerConfig) -> LocalServer {
    LocalServer::start(cfg).expect("server start")
}

/// Starts the `riverlet-server` binary on `data_dir` (port 0) and returns the child and the
/// bootstrap address it printed; the restart tests kill it with SIGKILL.
pub fn spawn_server_binary(data_dir: &std::path::Path) -> (std::process::Child, String) {
    use std::io::{BufRead, BufReader};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_riverlet-server"))
        .args(["--data-dir", data_dir.to_str().unwrap(), "--port", "0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let bootstrap = line
        .trim()
        .strip_prefix("bootstrap: ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    (child, bootstrap)
}

/// Sends one KV batch to bucket 0 of table `tid` (`target`: the partial-update columns, empty for
/// whole rows) and returns the bucket's log end offset or its (error code, message).
pub async fn put_kv(
    conn: &ServerConnection,
    tid: i64,
    batch: Vec<u8>,
    target: Vec<i32>,
) -> Result<i64, (i32, String)> {
    let r = conn
        .request(&riverlet::proto::PutKvRequest {
            acks: -1,
            table_id: tid,
            timeout_ms: 10_000,
            target_columns: target,
            buckets_req: vec![riverlet::proto::PbPutKvReqForBucket {
                partition_id: None,
                bucket_id: 0,
                records: batch.into(),
            }],
            agg_mode: None,
        })
        .await
        .unwrap();
    let b = &r.buckets_resp[0];
    match b.error_code {
        Some(c) if c != 0 => Err((c, b.error_message.clone().unwrap_or_default())),
        _ => Ok(b.log_end_offset.unwrap()),
    }
}
