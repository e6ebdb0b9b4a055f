//! The one harness of the integration tests (`client_*`, `scan_*`, `time_range_*`).
//!
//! Server choice:
//! - by default every test starts its own embedded `riverlet_server::LocalServer` on a free port;
//! - with `RIVERLET_TEST_BOOTSTRAP=host:port` the tests use that server instead (for example a
//!   real Apache Fluss cluster from `tests/fluss-cluster/start.sh`), and the SASL test uses
//!   `RIVERLET_TEST_SASL_BOOTSTRAP`, `RIVERLET_TEST_SASL_USERNAME`, `RIVERLET_TEST_SASL_PASSWORD`.
//!
//! Every test works in its own database (unique name, created by [`TestEnv`] and dropped with
//! cascade when it goes out of scope, also after a failed assertion). Tests that need control
//! only the embedded server gives (tiny segments, SASL users of our choosing, ...) get their
//! environment from [`TestEnv::embedded_only`], which against another server prints a
//! `NOT APPLICABLE` line naming the test and the reason (to stderr, uncaptured, and to the file
//! `RIVERLET_TEST_NOT_APPLICABLE_LOG` when set) instead of running it: nothing is skipped
//! silently.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema as ArrowSchema, SchemaRef};
use riverlet::client::{ClientConfig, Connection, Table};
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet::proto::{
    FetchLogRequest, LookupRequest, PbFetchLogReqForBucket, PbFetchLogReqForTable,
    PbLookupReqForBucket,
};
use riverlet::record::log_batch::LogBatchIter;
use riverlet::row::Datum;
use riverlet::rpc::SaslConfig;

/// The environment variable naming an external server.
pub const BOOTSTRAP_VAR: &str = "RIVERLET_TEST_BOOTSTRAP";

/// The external server's address, when one is configured.
pub fn external_bootstrap() -> Option<String> {
    std::env::var(BOOTSTRAP_VAR)
        .ok()
        .filter(|s| !s.trim().is_empty())
}

/// Whether the tests run against an external server.
pub fn is_external() -> bool {
    external_bootstrap().is_some()
}

/// The running test's name (libtest names the thread after it).
pub fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("<unnamed test>")
        .to_string()
}

/// Reports that the running test does not apply to the external server, and why.
pub fn not_applicable(reason: &str) {
    let line = format!(
        "NOT APPLICABLE to the server at {}: {} ({reason})",
        external_bootstrap().unwrap_or_default(),
        test_name()
    );
    // Written to the stderr handle directly, so libtest's capture does not hide it.
    let _ = writeln!(std::io::stderr(), "{line}");
    if let Ok(path) = std::env::var("RIVERLET_TEST_NOT_APPLICABLE_LOG") {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(f, "{line}");
        }
    }
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A fresh database name: `it_<test>_<pid>_<n>_<time>`, within Fluss's name rules.
fn unique_db_name() -> String {
    let test = test_name();
    let short: String = test
        .rsplit("::")
        .next()
        .unwrap_or("t")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(40)
        .collect();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "it_{short}_{}_{}_{nanos:x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Runs a future to completion on a private runtime in a plain thread, so it works from sync
/// code, from inside a runtime and from `Drop`.
fn run_detached<T: Send + 'static>(
    f: impl FnOnce() -> std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>> + Send + 'static,
) -> T {
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("test helper runtime")
            .block_on(f())
    })
    .join()
    .expect("test helper thread panicked")
}

/// A server to test against and this test's own database.
pub struct TestEnv {
    /// The bootstrap address.
    pub bootstrap: String,
    /// This test's database (created; dropped on drop).
    pub db: String,
    /// SASL credentials every connection of this environment uses.
    pub sasl: Option<SaslConfig>,
    /// The embedded server (None against an external one).
    pub server: Option<riverlet_server::LocalServer>,
    dir: Option<tempfile::TempDir>,
    drop_db: bool,
}

impl TestEnv {
    /// The embedded server, or the external one when [`BOOTSTRAP_VAR`] is set.
    pub fn new() -> TestEnv {
        match external_bootstrap() {
            Some(b) => TestEnv::with_bootstrap(b, None, None, None),
            None => TestEnv::embedded(|_| {}, None),
        }
    }

    /// An embedded server configured by `f`; against an external server it reports the test
    /// as not applicable (with `reason`) and returns None.
    pub fn embedded_only(
        reason: &str,
        f: impl FnOnce(&mut riverlet_server::ServerConfig),
    ) -> Option<TestEnv> {
        if is_external() {
            not_applicable(reason);
            return None;
        }
        Some(TestEnv::embedded(f, None))
    }

    /// An embedded server tiering lake-enabled tables to an Iceberg warehouse (SQL catalog) in
    /// the directory `warehouse`; None (reported as not applicable) against an external server,
    /// whose lake commits a test cannot trigger.
    pub fn embedded_lake(warehouse: &std::path::Path) -> Option<TestEnv> {
        let warehouse = warehouse
            .to_str()
            .expect("a UTF-8 warehouse path")
            .to_string();
        Self::embedded_only("needs an embedded server with a lake", |c| {
            c.set("datalake.format", "iceberg").unwrap();
            c.set("datalake.iceberg.warehouse", &warehouse).unwrap();
        })
    }

    /// An embedded server tiering lake-enabled tables to Paimon: its filesystem catalog with the
    /// warehouse `warehouse`. None (reported) when the tests run against an external server.
    pub fn embedded_paimon_lake(warehouse: &std::path::Path) -> Option<TestEnv> {
        let warehouse = warehouse
            .to_str()
            .expect("a UTF-8 warehouse path")
            .to_string();
        Self::embedded_only("needs an embedded server with a lake", |c| {
            c.set("datalake.format", "paimon").unwrap();
            c.set("datalake.paimon.metastore", "filesystem").unwrap();
            c.set("datalake.paimon.warehouse", &warehouse).unwrap();
        })
    }

    /// A server that requires SASL/PLAIN, and its credentials: an embedded one with the user
    /// `alice`/`secret`, or the external one of `RIVERLET_TEST_SASL_BOOTSTRAP` (+ `_USERNAME`,
    /// `_PASSWORD`). None (reported as not applicable) when an external server is set without
    /// a SASL listener.
    pub fn sasl() -> Option<TestEnv> {
        if !is_external() {
            let creds = SaslConfig {
                username: "alice".into(),
                password: "secret".into(),
            };
            return Some(TestEnv::embedded(
                |c| {
                    c.sasl_users = Some(
                        [("alice".to_string(), "secret".to_string())]
                            .into_iter()
                            .collect(),
                    )
                },
                Some(creds),
            ));
        }
        let var = |k: &str| std::env::var(k).ok().filter(|s| !s.is_empty());
        match (
            var("RIVERLET_TEST_SASL_BOOTSTRAP"),
            var("RIVERLET_TEST_SASL_USERNAME"),
            var("RIVERLET_TEST_SASL_PASSWORD"),
        ) {
            (Some(b), Some(u), Some(p)) => Some(TestEnv::with_bootstrap(
                b,
                Some(SaslConfig {
                    username: u,
                    password: p,
                }),
                None,
                None,
            )),
            _ => {
                not_applicable(
                    "RIVERLET_TEST_SASL_BOOTSTRAP/_USERNAME/_PASSWORD are not set: the external \
                     server has no SASL listener to test",
                );
                None
            }
        }
    }

    fn embedded(
        f: impl FnOnce(&mut riverlet_server::ServerConfig),
        sasl: Option<SaslConfig>,
    ) -> TestEnv {
        let dir = tempfile::tempdir().unwrap();
        let mut config = riverlet_server::ServerConfig::new(dir.path()).with_port(0);
        f(&mut config);
        let server = riverlet_server::LocalServer::start(config).unwrap();
        let bootstrap = server.bootstrap_servers();
        TestEnv::with_bootstrap(bootstrap, sasl, Some(server), Some(dir))
    }

    fn with_bootstrap(
        bootstrap: String,
        sasl: Option<SaslConfig>,
        server: Option<riverlet_server::LocalServer>,
        dir: Option<tempfile::TempDir>,
    ) -> TestEnv {
        let db = unique_db_name();
        let mut env = TestEnv {
            bootstrap,
            db,
            sasl,
            server,
            dir,
            drop_db: false,
        };
        let config = env.config();
        let name = env.db.clone();
        let created = run_detached(move || {
            Box::pin(async move {
                let conn = Connection::connect(config).await?;
                let r = conn.admin().create_database(&name, false).await;
                conn.close().await;
                r
            })
        });
        if let Err(e) = created {
            panic!(
                "creating the test database '{}' on {}: {e}",
                env.db, env.bootstrap
            );
        }
        env.drop_db = true;
        env
    }

    /// Whether this environment is an external server.
    pub fn is_external(&self) -> bool {
        self.server.is_none()
    }

    /// A table path in this test's database.
    pub fn path(&self, table: &str) -> TablePath {
        TablePath::new(self.db.as_str(), table)
    }

    /// Another database name unique to this test (not created), dropped with the environment.
    pub fn extra_db(&self, suffix: &str) -> String {
        format!("{}_{suffix}", self.db)
    }

    /// Client settings for tests: short linger, few retries, this environment's credentials.
    pub fn config(&self) -> ClientConfig {
        let mut c = ClientConfig::new(self.bootstrap.as_str());
        c.writer.linger = Duration::from_millis(5);
        c.request_timeout = Duration::from_secs(20);
        c.connect_timeout = Duration::from_secs(5);
        c.retries = 2;
        if let Some(s) = &self.sasl {
            c = c.with_sasl_plain(s.username.as_str(), s.password.as_str());
        }
        c
    }

    /// A connection with [`TestEnv::config`].
    pub async fn connect(&self) -> Connection {
        Connection::connect(self.config()).await.unwrap()
    }
}

impl Default for TestEnv {
    fn default() -> Self {
        TestEnv::new()
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        if !self.drop_db {
            return;
        }
        let config = self.config();
        let dbs = vec![self.db.clone(), self.extra_db("adm"), self.extra_db("x")];
        let r = run_detached(move || {
            Box::pin(async move {
                let conn = Connection::connect(config).await?;
                let admin = conn.admin();
                let mut result = Ok(());
                for db in dbs {
                    if let Err(e) = admin.drop_database(&db, true, true).await {
                        result = Err(e);
                    }
                }
                conn.close().await;
                result
            })
        });
        if let Err(e) = r {
            let _ = writeln!(
                std::io::stderr(),
                "warning: dropping test database '{}' on {}: {e}",
                self.db,
                self.bootstrap
            );
        }
    }
}

/// Creates a table and opens it (its database is created if missing); against an external
/// server, only once every bucket has a leader ([`await_leaders`]).
pub async fn create_table(conn: &Connection, path: &TablePath, d: TableDescriptor) -> Table {
    let admin = conn.admin();
    admin.create_database(&path.database, true).await.unwrap();
    admin.create_table(path, &d, false).await.unwrap();
    await_leaders(conn, path, &d).await;
    conn.table(path).await.unwrap()
}

/// [`await_leaders`] from sync code (the blocking facade's tests), on its own connection.
pub fn await_leaders_blocking(env: &TestEnv, path: &TablePath, d: &TableDescriptor) {
    if !is_external() {
        return;
    }
    let (config, path, d) = (env.config(), path.clone(), d.clone());
    run_detached(move || {
        Box::pin(async move {
            let conn = Connection::connect(config).await.unwrap();
            await_leaders(&conn, &path, &d).await;
        })
    });
}

/// Against an external server, waits until every bucket of the just-created table `path` (made
/// from `d`) has a leader, i.e. a ListOffsets of every bucket answers. Apache Fluss 0.9.1's
/// coordinator sometimes never assigns buckets to a new table (the create-table race of
/// tests/README.md), so after 20 s without leaders the table is dropped and created again, up
/// to three attempts. Partitioned tables are not probed (their buckets come with partitions);
/// the embedded server assigns leaders when it creates a table, so there this does nothing.
pub async fn await_leaders(conn: &Connection, path: &TablePath, d: &TableDescriptor) {
    if !is_external() || !d.partition_keys.is_empty() {
        return;
    }
    let admin = conn.admin();
    for attempt in 1..=3 {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            match admin
                .list_offsets(path, None, &[], riverlet::client::OffsetSpec::Latest)
                .await
            {
                Ok(_) => return,
                // LEADER_NOT_AVAILABLE until the coordinator elects one; then, for a moment,
                // UNKNOWN_TABLE_OR_BUCKET or NOT_LEADER_OR_FOLLOWER while the tablet server
                // creates the replica: all retriable.
                Err(e) if e.is_retriable() => {
                    if std::time::Instant::now() > deadline {
                        assert!(attempt < 3, "table {path} never got leaders: {e}");
                        break;
                    }
                }
                Err(e) => panic!("listing the offsets of new table {path}: {e}"),
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        eprintln!(
            "table {path} got no leader within 20 s (Apache Fluss's create-table race, \
             tests/README.md): re-creating it"
        );
        admin.drop_table(path, false).await.unwrap();
        admin.create_table(path, d, false).await.unwrap();
    }
}

// ------------------------------------------------------------------------------------------
// Raw reads (FetchLog / Lookup), to check what writers wrote without the scanners.

/// `id INT NOT NULL, name STRING`.
/// How the server answers one FetchLog of bucket 0 of `table` at `offset` (no wait, 1 MiB),
/// asserted free of errors: `Some(n)` when it listed `n` remote segments (then with no records),
/// `None` when it answered from its local log. For the tiering tests.
pub async fn remote_segments_at(conn: &Connection, table: &Table, offset: i64) -> Option<usize> {
    let req = FetchLogRequest {
        follower_server_id: -1,
        max_bytes: 1 << 20,
        tables_req: vec![PbFetchLogReqForTable {
            table_id: table.info().table_id,
            projection_pushdown_enabled: false,
            projected_fields: vec![],
            buckets_req: vec![PbFetchLogReqForBucket {
                partition_id: None,
                bucket_id: 0,
                fetch_offset: offset,
                max_fetch_bytes: 1 << 20,
            }],
            filter_predicate: None,
            filter_schema_id: None,
        }],
        max_wait_ms: Some(0),
        min_bytes: Some(0),
        read_preference: None,
    };
    let resp = conn
        .request_leader(table.info().table_id, None, 0, &req)
        .await
        .unwrap();
    let b = &resp.tables_resp[0].buckets_resp[0];
    assert_eq!(
        b.error_code.unwrap_or(0),
        0,
        "FetchLog at offset {offset}: {:?}",
        b.error_message
    );
    let info = b.remote_log_fetch_info.as_ref()?;
    assert!(
        b.records.as_ref().is_none_or(|r| r.is_empty()),
        "FetchLog at offset {offset} answered remote segments and records"
    );
    Some(info.remote_log_segments.len())
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

/// All rows of every bucket of a log table (or of one partition), concatenated.
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

/// The number of rows of some batches.
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

// ------------------------------------------------------------------------------------------
// The (id, name, region) tables of the scan and time-range tests.

/// `id INT NOT NULL, name STRING, region STRING NOT NULL` (PK `id`, or `(id, region)` when
/// partitioned by region).
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

/// A descriptor of [`schema`] with `buckets` buckets (partitioned by `region` if asked).
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

/// A batch of (id, name, region) rows.
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

/// One (id, name, region) row as datums.
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
