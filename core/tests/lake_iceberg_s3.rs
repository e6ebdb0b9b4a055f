//! Iceberg on S3, the seed quickstart's lake: Apache Iceberg's REST catalog test server with
//! `io-impl = org.apache.iceberg.aws.s3.S3FileIO` and its warehouse in a bucket of moto's S3
//! server (tests/lake/iceberg-rest-s3/start.sh). The embedded server, configured as the
//! quickstart configures Fluss (`datalake.iceberg.type = rest`, `uri`, `token`, `io-impl`,
//! `client.region`, and the S3 FileIO properties by Iceberg's names), tiers a log table there;
//! the union read and `$lake` return exactly the rows written, the data files are objects in
//! the bucket, pyiceberg reads the same rows through the same catalog, and a bad endpoint or
//! bucket is a typed error naming them and never the secret.
//!
//! Needs `RIVERLET_MOTO_SERVER` (or `moto_server` on the PATH), java and mvn; reports itself
//! skipped without moto. The pyiceberg check runs when `RIVERLET_LAKE_PYTHON` is set.
//!
//! Module `lake_paimon_s3`: the same with a Paimon warehouse on moto (no catalog server).

mod common;
#[path = "common/moto.rs"]
mod moto;

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

use arrow_array::{Array, Int32Array, Int64Array, RecordBatch, StringArray};
use common::*;
use futures::TryStreamExt as _;
use moto::{free_port, Moto};
use riverlet::client::{Connection, Table};
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet::scan::ReadRequest;
use riverlet::ErrorKind;

const BUCKET: &str = "lake";
/// A secret no message or log may show.
const SECRET: &str = "s3cr3t-never-shown";
/// The REST catalog's bearer token, which no message or log may show either.
const TOKEN: &str = "t0ken-never-shown";

/// The log lines of the client and the embedded server (TRACE), searched for the secrets.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The process's log lines from now on, at TRACE with the directives Riverlet's binaries add
/// ([`riverlet::logging::SECRET_SAFE_DIRECTIVES`]), through `log` records too; one capture
/// for every test of this binary (a process has one global subscriber).
fn capture_logs() -> Buffer {
    static LOGS: std::sync::OnceLock<Buffer> = std::sync::OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Buffer::default();
        let writer = logs.clone();
        let mut filter = tracing_subscriber::EnvFilter::new("trace");
        for d in riverlet::logging::SECRET_SAFE_DIRECTIVES {
            filter = filter.add_directive(d.parse().expect("a valid directive"));
        }
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .init();
        logs
    })
    .clone()
}

/// `RIVERLET_MOTO_SERVER` (a path) or `moto_server` on the PATH; None when neither runs.
fn start_moto() -> Option<Moto> {
    moto::start(&[])
}

/// [`start_moto`] with extra environment variables.
fn start_moto_with(env: &[(&str, &str)]) -> Option<Moto> {
    moto::start(env)
}

/// The REST catalog server of tests/lake/iceberg-rest-s3/start.sh, stopped on drop.
struct RestServer {
    uri: String,
    dir: tempfile::TempDir,
}

impl Drop for RestServer {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(self.dir.path().join("server.pid")) {
            let _ = std::process::Command::new("kill").arg(pid.trim()).status();
        }
    }
}

fn start_rest(endpoint: &str) -> RestServer {
    let dir = tempfile::tempdir().unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/lake/iceberg-rest-s3/start.sh"
    );
    let out = std::process::Command::new("bash")
        .args([script, dir.path().to_str().unwrap(), endpoint, BUCKET])
        .stderr(std::process::Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success(), "{script} failed");
    RestServer {
        uri: String::from_utf8(out.stdout).unwrap().trim().to_string(),
        dir,
    }
}

/// An S3 request to moto over plain HTTP (moto accepts unsigned ones), not through the code
/// under test: the status and body.
async fn s3_call(method: reqwest::Method, url: String) -> (u16, String) {
    riverlet::rpc::install_default_crypto();
    let resp = reqwest::Client::new()
        .request(method, url)
        .send()
        .await
        .unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap())
}

/// The keys of the bucket's objects under `prefix`.
async fn object_keys(endpoint: &str, prefix: &str) -> Vec<String> {
    let (status, body) = s3_call(
        reqwest::Method::GET,
        format!("{endpoint}/{BUCKET}?list-type=2&prefix={prefix}&max-keys=1000"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body.split("<Key>")
        .skip(1)
        .filter_map(|s| s.split_once("</Key>").map(|(k, _)| k.to_string()))
        .collect()
}

fn schema() -> Schema {
    Schema::builder()
        .column("id", DataType::bigint().not_null())
        .column("name", DataType::string())
        .column("qty", DataType::int())
        .build()
        .unwrap()
}

type Row = (i64, String, i32);

fn rows(ids: std::ops::Range<i64>) -> Vec<Row> {
    ids.map(|i| (i, format!("item-{i}"), (i * 37 % 101) as i32))
        .collect()
}

async fn write(table: &Table, rows: &[Row]) {
    let batch = RecordBatch::try_new(
        table.info().schema().to_arrow(),
        vec![
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| &r.1))),
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.2))),
        ],
    )
    .unwrap();
    let w = table.new_append_writer().unwrap();
    w.append_batch(&batch).await.unwrap();
    w.flush().await.unwrap();
}

fn rows_of(batches: &[RecordBatch]) -> Vec<Row> {
    let mut out = Vec::new();
    for b in batches {
        let col = |n: &str| b.column_by_name(n).unwrap_or_else(|| panic!("no {n}"));
        let id = col("id").as_any().downcast_ref::<Int64Array>().unwrap();
        let name = col("name").as_any().downcast_ref::<StringArray>().unwrap();
        let qty = col("qty").as_any().downcast_ref::<Int32Array>().unwrap();
        for i in 0..b.num_rows() {
            out.push((id.value(i), name.value(i).to_string(), qty.value(i)));
        }
    }
    out.sort();
    out
}

fn sorted(mut v: Vec<Row>) -> Vec<Row> {
    v.sort();
    v
}

async fn read(conn: &Connection, name: &str) -> riverlet::Result<Vec<RecordBatch>> {
    let t = conn.table(&TablePath::parse(name).unwrap()).await?;
    ReadRequest::default().to_scan(&t).collect().await
}

/// The catalog properties of the quickstart's lake, by Fluss's and Iceberg's names.
fn lake_properties(uri: &str, endpoint: &str) -> Vec<(&'static str, String)> {
    vec![
        ("type", "rest".into()),
        ("uri", uri.into()),
        ("token", TOKEN.into()),
        ("io-impl", "org.apache.iceberg.aws.s3.S3FileIO".into()),
        ("client.region", "us-east-1".into()),
        ("s3.endpoint", endpoint.into()),
        ("s3.path-style-access", "true".into()),
        ("s3.access-key-id", "testing".into()),
        ("s3.secret-access-key", SECRET.into()),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_table_tiered_to_iceberg_on_s3_and_read_back() {
    let Some(moto) = start_moto() else {
        eprintln!(
            "SKIPPED {}: moto_server (pip install 'moto[server]') is not installed; set \
             RIVERLET_MOTO_SERVER or put it on the PATH",
            test_name()
        );
        return;
    };
    let logs = capture_logs();
    let (status, body) = s3_call(reqwest::Method::PUT, format!("{}/{BUCKET}", moto.endpoint)).await;
    assert_eq!(status, 200, "create bucket: {body}");
    let rest = start_rest(&moto.endpoint);
    let props = lake_properties(&rest.uri, &moto.endpoint);
    let p = props.clone();
    let Some(env) = TestEnv::embedded_only("needs an embedded server tiering to S3", move |c| {
        c.set("datalake.format", "iceberg").unwrap();
        for (k, v) in &p {
            c.set(&format!("datalake.iceberg.{k}"), v).unwrap();
        }
    }) else {
        return;
    };
    let conn = env.connect().await;
    let path = env.path("orders");
    let d = TableDescriptor::builder(schema())
        .distributed_by(Some(3), Vec::<String>::new())
        .property("table.datalake.enabled", "true")
        .property("table.datalake.freshness", "1h")
        .build()
        .unwrap();
    let table = create_table(&conn, &path, d).await;
    // the table's info hands readers the catalog's properties, S3 ones included
    let info = &table.info().descriptor.properties;
    assert_eq!(
        info.get("table.datalake.iceberg.s3.endpoint"),
        Some(&moto.endpoint)
    );
    tracing::debug!("lake table info: {:?}", table.info());
    let name = path.to_string();
    let lake = format!("{name}$lake");

    let first = rows(0..60);
    write(&table, &first).await;
    let server = env.server.as_ref().unwrap();
    server.commit_lake().unwrap();
    let second = rows(60..90);
    write(&table, &second).await;
    server.commit_lake().unwrap();
    let s2 = conn.admin().lake_snapshot(&path, None).await.unwrap();
    let third = rows(90..110);
    write(&table, &third).await;
    let in_lake = sorted(first.iter().chain(&second).cloned().collect());
    let everything = sorted(in_lake.iter().chain(&third).cloned().collect());

    // the data files are Parquet objects in the bucket, under the table's location there
    let prefix = format!("warehouse/{}/orders/data/", env.db);
    let keys = object_keys(&moto.endpoint, &prefix).await;
    assert!(
        keys.iter().filter(|k| k.ends_with(".parquet")).count() >= 2,
        "{keys:?}"
    );
    assert!(!object_keys(
        &moto.endpoint,
        &format!("warehouse/{}/orders/metadata/", env.db)
    )
    .await
    .is_empty());

    assert_eq!(rows_of(&read(&conn, &lake).await.unwrap()), in_lake);
    assert_eq!(rows_of(&read(&conn, &name).await.unwrap()), everything);
    let snaps = read(&conn, &format!("{name}$lake$snapshots"))
        .await
        .unwrap();
    assert_eq!(total_rows(&snaps), 2);

    // pyiceberg reads the same rows from the same catalog and bucket
    if let Ok(py) = std::env::var("RIVERLET_LAKE_PYTHON") {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/lake/read_iceberg_rest.py"
        );
        let out = std::process::Command::new(py)
            .args([
                script,
                &rest.uri,
                &format!("{}.orders", env.db),
                &format!("s3.endpoint={}", moto.endpoint),
                "s3.access-key-id=testing",
                &format!("s3.secret-access-key={SECRET}"),
                "s3.region=us-east-1",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["current_snapshot_id"].as_i64(), Some(s2.snapshot_id));
        let cols: Vec<&str> = v["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        let at = |c: &str| cols.iter().position(|x| *x == c).unwrap();
        let mut py_rows: Vec<Row> = v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r[at("id")].as_i64().unwrap(),
                    r[at("name")].as_str().unwrap().to_string(),
                    r[at("qty")].as_i64().unwrap() as i32,
                )
            })
            .collect();
        py_rows.sort();
        assert_eq!(py_rows, in_lake);
    } else {
        eprintln!(
            "{}: RIVERLET_LAKE_PYTHON is not set; pyiceberg check skipped",
            test_name()
        );
    }

    check_bad_storage(&rest.uri, &moto.endpoint, &env.db).await;

    let logged = String::from_utf8_lossy(&logs.0.lock().unwrap()).to_string();
    assert!(logged.contains("lake table info"), "the log capture works");
    for secret in [SECRET, TOKEN] {
        assert!(!logged.contains(secret), "{secret} was logged");
    }
}

/// The table opened through the catalog with the S3 properties `over` changed, read through
/// the iceberg crate: the error as Riverlet reports it.
async fn read_with(uri: &str, endpoint: &str, db: &str, over: &[(&str, &str)]) -> riverlet::Error {
    let mut props: BTreeMap<String, String> = lake_properties(uri, endpoint)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    for (k, v) in over {
        props.insert(k.to_string(), v.to_string());
    }
    let catalog = riverlet::lake::open_catalog(&props, "test").await.unwrap();
    let id = iceberg::TableIdent::from_strs([db, "orders"]).unwrap();
    let t = catalog.load_table(&id).await.unwrap();
    let read = async {
        let scan = t.scan().build()?;
        scan.to_arrow().await?.try_collect::<Vec<_>>().await
    };
    let e = read.await.expect_err("the read must fail");
    riverlet::lake::iceberg_err("test", e)
}

async fn check_bad_storage(uri: &str, endpoint: &str, db: &str) {
    // nothing listens at the endpoint: a network error naming it and the bucket
    let dead = format!("http://127.0.0.1:{}", free_port());
    let e = read_with(uri, endpoint, db, &[("s3.endpoint", &dead)]).await;
    let shown = format!("{e} {e:?}");
    assert_eq!(e.kind(), ErrorKind::Network, "{shown}");
    assert!(shown.contains(&dead) && shown.contains(BUCKET), "{shown}");
    assert!(!shown.contains(SECRET) && !shown.contains(TOKEN), "{shown}");

    // an endpoint that checks credentials (moto with its IAM checks on from the first
    // request) refuses the access key: an authentication error naming it and the bucket
    let strict = start_moto_with(&[("INITIAL_NO_AUTH_ACTION_COUNT", "0")]).unwrap();
    let e = read_with(uri, endpoint, db, &[("s3.endpoint", &strict.endpoint)]).await;
    let shown = format!("{e} {e:?}");
    assert_eq!(e.kind(), ErrorKind::Authentication, "{shown}");
    assert!(
        shown.contains(&strict.endpoint) && shown.contains(BUCKET),
        "{shown}"
    );
    assert!(!shown.contains(SECRET) && !shown.contains(TOKEN), "{shown}");

    // the files' bucket is missing on that endpoint (another moto): not found, naming both
    let other = start_moto().unwrap();
    let e = read_with(uri, endpoint, db, &[("s3.endpoint", &other.endpoint)]).await;
    let shown = format!("{e} {e:?}");
    assert_eq!(e.kind(), ErrorKind::NotFound, "{shown}");
    assert!(
        shown.contains(&other.endpoint) && shown.contains(BUCKET),
        "{shown}"
    );
    assert!(!shown.contains(SECRET) && !shown.contains(TOKEN), "{shown}");
}

#[path = "common/kv_rows.rs"]
mod kv_rows;
#[path = "lake_paimon_s3.rs"]
mod lake_paimon_s3;
