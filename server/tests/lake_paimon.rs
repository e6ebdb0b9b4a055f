//! Paimon tiering (`datalake.format = paimon`) of a partitioned log table with a bucket key, a
//! log table without one, a primary-key table with updates and deletes, a partitioned one, and
//! a table of every scalar type: the Paimon tables' layout (columns and types incl. the system
//! columns, primary and partition keys, `bucket`, `bucket-key`, `changelog-producer`), their
//! rows per bucket and partition, the primary-key tables' merged state, what GetLakeSnapshot
//! answers, and all of it across a restart. The
//! tables are read back with the paimon crate and with Apache Paimon's own readers, which also
//! check each row's bucket against Paimon's bucket function: its Java library when
//! RIVERLET_PAIMON_JAVA_CP holds the classpath of tests/paimon-java (tests/paimon-java/run.sh
//! sets it), and pypaimon (PyPI) when RIVERLET_PAIMON_PYTHON names a Python that has it
//! (tests/paimon-python, .venv-paimon from tests/run-all.sh).
//! Expected values come from the rows the test writes.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{Int32Array, Int64Array, RecordBatch, StringArray};
use common::*;
use futures::TryStreamExt;
use riverlet::blocking::{block_on, Connection};
use riverlet::client::OffsetSpec;
use riverlet::metadata::{AddColumn, DataType, Schema, TableDescriptor, TablePath};
use riverlet::row::Datum;
use riverlet_server::ServerConfig;

const DAYS: [&str; 2] = ["2026-01-01", "2026-01-02"];

fn lake_config(dir: &Path) -> ServerConfig {
    config(&dir.join("data"))
        .with_options([
            ("datalake.format", "paimon"),
            (
                "datalake.paimon.warehouse",
                dir.join("paimon").to_str().unwrap(),
            ),
        ])
        .unwrap()
}

fn path(name: &str) -> TablePath {
    TablePath::new(DB, name)
}

fn lake_props(b: riverlet::metadata::TableDescriptorBuilder) -> TableDescriptor {
    b.property("table.datalake.enabled", "true")
        // the periodic commit stays out of the way: the test commits on demand
        .property("table.datalake.freshness", "1h")
        .build()
        .unwrap()
}

fn create_tables(conn: &Connection) {
    let admin = conn.admin();
    admin.create_database(DB, true).unwrap();
    let events = Schema::builder()
        .column("id", DataType::int().not_null())
        .column("dt", DataType::string().not_null())
        .column("amount", DataType::bigint())
        .build()
        .unwrap();
    let d = lake_props(
        TableDescriptor::builder(events)
            .partitioned_by(["dt"])
            .distributed_by(Some(3), ["id"]),
    );
    admin.create_table(&path("events"), &d, false).unwrap();
    for day in DAYS {
        let spec = riverlet::metadata::PartitionSpec::new([("dt", day)]);
        admin
            .create_partition(&path("events"), &spec, true)
            .unwrap();
    }
    let clicks = Schema::builder()
        .column("id", DataType::int())
        .column("page", DataType::string())
        .build()
        .unwrap();
    let d =
        lake_props(TableDescriptor::builder(clicks).distributed_by(Some(2), Vec::<String>::new()));
    admin.create_table(&path("clicks"), &d, false).unwrap();
    let users = Schema::builder()
        .column("id", DataType::int().not_null())
        .column("name", DataType::string())
        .column("score", DataType::bigint())
        .primary_key(["id"])
        .build()
        .unwrap();
    let d = lake_props(TableDescriptor::builder(users).distributed_by(Some(3), ["id"]));
    admin.create_table(&path("users"), &d, false).unwrap();
}

/// (id, dt, amount) of the events written.
type Event = (i32, String, i64);

fn write_events(conn: &Connection, events: &[Event]) {
    let t = conn.table(&path("events")).unwrap();
    let b = RecordBatch::try_new(
        t.arrow_schema(),
        vec![
            Arc::new(Int32Array::from_iter_values(events.iter().map(|e| e.0))),
            Arc::new(StringArray::from_iter_values(events.iter().map(|e| &e.1))),
            Arc::new(Int64Array::from_iter_values(events.iter().map(|e| e.2))),
        ],
    )
    .unwrap();
    let w = t.new_append_writer().unwrap();
    w.append(&b).unwrap().wait().unwrap();
    w.close().unwrap();
}

fn events(from: i32, n: i32) -> Vec<Event> {
    (from..from + n)
        .map(|i| (i, DAYS[(i % 2) as usize].to_string(), i as i64 * 100 + 7))
        .collect()
}

fn write_clicks(conn: &Connection, ids: &[i32]) {
    let t = conn.table(&path("clicks")).unwrap();
    let b = RecordBatch::try_new(
        t.arrow_schema(),
        vec![
            Arc::new(Int32Array::from(ids.to_vec())),
            Arc::new(StringArray::from_iter_values(
                ids.iter().map(|i| format!("/p{i}")),
            )),
        ],
    )
    .unwrap();
    let w = t.new_append_writer().unwrap();
    w.append(&b).unwrap().wait().unwrap();
    w.close().unwrap();
}

/// One change to the users table: upsert (id, name, score) or delete id.
enum Change {
    Upsert(i32, &'static str, i64),
    Delete(i32),
}

/// Applies the changes through an upsert writer and to `state` (the expected latest values).
fn write_users(conn: &Connection, changes: &[Change], state: &mut BTreeMap<i32, (String, i64)>) {
    let t = conn.table(&path("users")).unwrap();
    let w = t.new_upsert_writer(None).unwrap();
    for c in changes {
        match c {
            Change::Upsert(id, name, score) => {
                w.upsert_rows(&[vec![
                    Datum::Int(*id),
                    Datum::String(name.to_string()),
                    Datum::BigInt(*score),
                ]])
                .unwrap();
                state.insert(*id, (name.to_string(), *score));
            }
            Change::Delete(id) => {
                w.delete_rows(&[vec![Datum::Int(*id), Datum::Null, Datum::Null]])
                    .unwrap();
                state.remove(id);
            }
        }
    }
    w.flush().unwrap();
    w.close().unwrap();
}

/// A Paimon table as a reader sees it.
#[derive(Debug, Default)]
struct LakeTable {
    /// (name, Paimon type as SQL).
    fields: Vec<(String, String)>,
    /// Each field's comment.
    comments: Vec<Option<String>>,
    /// The id of the table's (latest) Paimon schema.
    schema_id: i64,
    primary_keys: Vec<String>,
    partition_keys: Vec<String>,
    options: BTreeMap<String, String>,
    /// (id, commit user, commit identifier) of the latest snapshot.
    snapshot: Option<(i64, String, i64)>,
    rows: Vec<LakeRow>,
}

/// One row of a Paimon read: the bucket of its split, its partition (values joined by `$`),
/// the bucket Paimon's bucket function gives it (Paimon's own readers only) and its values as text
/// (None: null), in the table's column order.
#[derive(Debug, Clone)]
struct LakeRow {
    split_bucket: i32,
    partition: String,
    paimon_bucket: Option<i32>,
    values: Vec<Option<String>>,
}

impl LakeTable {
    fn col(&self, name: &str) -> usize {
        self.fields.iter().position(|(n, _)| n == name).unwrap()
    }

    fn value(&self, row: &LakeRow, name: &str) -> String {
        row.values[self.col(name)].clone().unwrap()
    }
}

/// The table read with the paimon crate: its latest snapshot, merged by key.
async fn read_with_crate(warehouse: &Path, name: &str) -> LakeTable {
    let mut options = paimon::Options::new();
    options.set("warehouse", warehouse.display().to_string());
    let catalog = paimon::CatalogFactory::create(options).await.unwrap();
    let t = catalog
        .get_table(&paimon::catalog::Identifier::new(DB, name))
        .await
        .unwrap();
    let schema = t.schema();
    let mut out = LakeTable {
        fields: schema
            .fields()
            .iter()
            .map(|f| {
                // the crate spells VARBINARY of the maximum length out; Paimon's Java names it
                // BYTES (as it names VARCHAR of that length STRING, which the crate does too)
                let ty = f.data_type().to_string();
                let ty = ty.replace("VARBINARY(2147483647)", "BYTES");
                (f.name().to_string(), ty)
            })
            .collect(),
        comments: schema
            .fields()
            .iter()
            .map(|f| f.description().map(str::to_string))
            .collect(),
        schema_id: schema.id(),
        primary_keys: schema.primary_keys().to_vec(),
        partition_keys: schema.partition_keys().to_vec(),
        options: schema
            .options()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        ..LakeTable::default()
    };
    out.snapshot = t
        .snapshot_manager()
        .get_latest_snapshot()
        .await
        .unwrap()
        .map(|s| (s.id(), s.commit_user().to_string(), s.commit_identifier()));
    let rb = t.new_read_builder();
    let plan = rb.new_scan().plan().await.unwrap();
    for split in plan.splits() {
        let batches: Vec<_> = rb
            .new_read()
            .unwrap()
            .to_arrow(std::slice::from_ref(split))
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        for b in batches {
            let b = riverlet_server::lake::bridge::batch_from_58(b).unwrap();
            for i in 0..b.num_rows() {
                let values: Vec<Option<String>> = b
                    .columns()
                    .iter()
                    .map(|c| {
                        // a zoned timestamp (__timestamp) as its epoch value: formatting a
                        // named zone needs zone data the build does not carry
                        let c = match c.data_type() {
                            arrow_schema::DataType::Timestamp(_, Some(_)) => {
                                arrow_cast::cast(c, &arrow_schema::DataType::Int64).unwrap()
                            }
                            _ => c.clone(),
                        };
                        (!arrow_array::Array::is_null(&c, i))
                            .then(|| arrow_cast::display::array_value_to_string(&c, i).unwrap())
                    })
                    .collect();
                let partition = out
                    .partition_keys
                    .iter()
                    .map(|k| values[out.col(k)].clone().unwrap())
                    .collect::<Vec<_>>()
                    .join("$");
                out.rows.push(LakeRow {
                    split_bucket: split.bucket(),
                    partition,
                    paimon_bucket: None,
                    values,
                });
            }
        }
    }
    out
}

/// The tables as Apache Paimon's own readers read them, each as (reader, tables): its Java
/// library (tests/paimon-java/PaimonLakeProbe.java) when RIVERLET_PAIMON_JAVA_CP holds its
/// classpath, and pypaimon, its Python reader from PyPI (tests/paimon-python/probe.py), when
/// RIVERLET_PAIMON_PYTHON names a Python that has it. A reader not configured reports itself
/// skipped; both probes print the same JSON, so both meet the same expected rows.
fn read_with_paimon(warehouse: &Path, names: &[&str]) -> Vec<(&'static str, Tables)> {
    let mut readers = Vec::new();
    let tables: Vec<String> = names.iter().map(|n| format!("{DB}.{n}")).collect();
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    match std::env::var_os("RIVERLET_PAIMON_JAVA_CP") {
        Some(cp) => {
            let mut java = std::process::Command::new("java");
            java.arg("-cp")
                .arg(cp)
                .arg(here.join("../tests/paimon-java/PaimonLakeProbe.java"))
                .arg(warehouse)
                .args(&tables);
            readers.push(("Apache Paimon (Java)", run_probe("Paimon Java probe", java)));
        }
        None => eprintln!("SKIPPED Paimon Java check: RIVERLET_PAIMON_JAVA_CP is not set"),
    }
    match std::env::var_os("RIVERLET_PAIMON_PYTHON") {
        Some(python) => {
            let mut py = std::process::Command::new(python);
            py.arg(here.join("../tests/paimon-python/probe.py"))
                .arg(warehouse)
                .args(&tables);
            let mut tables = run_probe("pypaimon probe", py);
            // pypaimon shows a type as the schema file spells it, and the paimon crate (0.4.0)
            // that writes the file spells BYTES out as VARBINARY(2147483647) where Paimon's Java
            // (Fluss's writer) writes BYTES: same type, other text (see read_with_crate)
            for t in tables.values_mut() {
                for (_, ty) in &mut t.fields {
                    *ty = ty.replace("VARBINARY(2147483647)", "BYTES");
                }
            }
            readers.push(("pypaimon", tables));
        }
        None => eprintln!("SKIPPED pypaimon check: RIVERLET_PAIMON_PYTHON is not set"),
    }
    readers
}

type Tables = BTreeMap<String, LakeTable>;

/// Runs a probe and parses its lines: one JSON object per table (see PaimonLakeProbe.java);
/// lines that are not JSON are the library's logging.
fn run_probe(label: &str, mut probe: std::process::Command) -> Tables {
    let out = probe.output().unwrap();
    assert!(
        out.status.success(),
        "{label}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut tables = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue; // a log line of the library
        };
        let strs = |v: &serde_json::Value| -> Vec<String> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect()
        };
        let t = LakeTable {
            fields: v["fields"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    (
                        f[0].as_str().unwrap().to_string(),
                        f[1].as_str().unwrap().to_string(),
                    )
                })
                .collect(),
            comments: v["comments"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().map(str::to_string))
                .collect(),
            schema_id: v["schema_id"].as_i64().unwrap(),
            primary_keys: strs(&v["primary_keys"]),
            partition_keys: strs(&v["partition_keys"]),
            options: v["options"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect(),
            snapshot: v.get("snapshot").map(|s| {
                (
                    s["id"].as_i64().unwrap(),
                    s["commit_user"].as_str().unwrap().to_string(),
                    s["commit_identifier"].as_i64().unwrap(),
                )
            }),
            rows: v["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let r = r.as_array().unwrap();
                    LakeRow {
                        split_bucket: r[0].as_i64().unwrap() as i32,
                        partition: r[1].as_str().unwrap().to_string(),
                        paimon_bucket: r[2].as_i64().map(|b| b as i32),
                        values: r[3..]
                            .iter()
                            .map(|c| c.as_str().map(str::to_string))
                            .collect(),
                    }
                })
                .collect(),
        };
        let name = v["table"]
            .as_str()
            .unwrap()
            .trim_start_matches(&format!("{DB}."));
        tables.insert(name.to_string(), t);
    }
    tables
}

/// The lake snapshot GetLakeSnapshot answers: (snapshot id, (partition name or "", bucket) ->
/// offset).
fn lake_snapshot(conn: &Connection, name: &str) -> (i64, BTreeMap<(String, i32), i64>) {
    let s = block_on(conn.inner().admin().lake_snapshot(&path(name), None))
        .unwrap()
        .unwrap();
    let names: BTreeMap<i64, String> = if s.buckets.iter().any(|b| b.partition_id.is_some()) {
        conn.admin()
            .list_partitions(&path(name))
            .unwrap()
            .into_iter()
            .map(|p| (p.partition_id, p.name))
            .collect()
    } else {
        BTreeMap::new()
    };
    let offsets = s
        .buckets
        .iter()
        .map(|b| {
            let p = b
                .partition_id
                .map(|p| names[&p].clone())
                .unwrap_or_default();
            ((p, b.bucket), b.log_offset.unwrap())
        })
        .collect();
    (s.snapshot_id, offsets)
}

/// Each bucket's log end offset: (partition name or "", bucket) -> offset.
fn end_offsets(conn: &Connection, name: &str, partitions: &[&str]) -> BTreeMap<(String, i32), i64> {
    let admin = conn.admin();
    let mut out = BTreeMap::new();
    if partitions.is_empty() {
        for (b, o) in admin
            .list_offsets(&path(name), None, &[], OffsetSpec::Latest)
            .unwrap()
        {
            out.insert((String::new(), b), o);
        }
    }
    for p in partitions {
        for (b, o) in admin
            .list_offsets(&path(name), Some(p), &[], OffsetSpec::Latest)
            .unwrap()
        {
            out.insert((p.to_string(), b), o);
        }
    }
    out
}

fn names(t: &LakeTable) -> Vec<&str> {
    t.fields.iter().map(|(n, _)| n.as_str()).collect()
}

/// Each (partition, bucket)'s `__offset`s are 0.. its end offset with no gap or repeat (a log
/// table: every row of the log once), and every row sits in the Paimon bucket its
/// `__bucket` names (and Paimon's bucket function gives, when the reader tells).
fn assert_log_layout(t: &LakeTable, ends: &BTreeMap<(String, i32), i64>, fixed: bool) {
    let mut seen: BTreeMap<(String, i32), Vec<i64>> = BTreeMap::new();
    for r in &t.rows {
        let bucket: i32 = t.value(r, "__bucket").parse().unwrap();
        if fixed {
            assert_eq!(r.split_bucket, bucket, "{r:?}");
        } else {
            // bucket-unaware: every Fluss bucket in Paimon bucket 0
            assert_eq!(r.split_bucket, 0, "{r:?}");
        }
        if let Some(pb) = r.paimon_bucket {
            assert_eq!(pb, bucket, "Paimon's bucket function disagrees: {r:?}");
        }
        assert!(r.values[t.col("__timestamp")].is_some(), "{r:?}");
        seen.entry((r.partition.clone(), bucket))
            .or_default()
            .push(t.value(r, "__offset").parse().unwrap());
    }
    for ((p, b), end) in ends {
        let mut got = seen.remove(&(p.clone(), *b)).unwrap_or_default();
        got.sort();
        assert_eq!(
            got,
            (0..*end).collect::<Vec<_>>(),
            "partition '{p}' bucket {b}"
        );
    }
    assert!(seen.is_empty(), "rows of unknown buckets: {seen:?}");
}

#[allow(clippy::too_many_arguments)]
fn check_tables(
    label: &str,
    tables: &BTreeMap<String, LakeTable>,
    conn: &Connection,
    written_events: &[Event],
    written_clicks: &[i32],
    users: &BTreeMap<i32, (String, i64)>,
    // the reader gives each row the bucket Paimon's bucket function computes (Paimon's own
    // readers: Java's FixedBucketRowKeyExtractor, pypaimon's port of it)
    bucket_function: bool,
) {
    eprintln!("checking the tables as {label} reads them");
    // events: a partitioned log table with a bucket key
    let t = &tables["events"];
    assert_eq!(
        names(t),
        ["id", "dt", "amount", "__bucket", "__offset", "__timestamp"]
    );
    let types: Vec<&str> = t.fields.iter().map(|(_, ty)| ty.as_str()).collect();
    assert_eq!(
        types,
        [
            "INT NOT NULL",
            "STRING NOT NULL",
            "BIGINT",
            "INT",
            "BIGINT",
            "TIMESTAMP(3) WITH LOCAL TIME ZONE"
        ],
        "{label}"
    );
    assert!(t.primary_keys.is_empty());
    assert_eq!(t.partition_keys, ["dt"]);
    assert_eq!(t.options.get("bucket").map(String::as_str), Some("3"));
    assert_eq!(t.options.get("bucket-key").map(String::as_str), Some("id"));
    assert_eq!(
        t.options.get("partition.legacy-name").map(String::as_str),
        Some("false")
    );
    assert_eq!(
        t.options
            .get("fluss.table.datalake.enabled")
            .map(String::as_str),
        Some("true")
    );
    assert!(!t.options.contains_key("changelog-producer"));
    let mut got: Vec<Event> = t
        .rows
        .iter()
        .map(|r| {
            assert_eq!(r.partition, t.value(r, "dt"), "{r:?}");
            (
                t.value(r, "id").parse().unwrap(),
                t.value(r, "dt"),
                t.value(r, "amount").parse().unwrap(),
            )
        })
        .collect();
    got.sort();
    let mut want = written_events.to_vec();
    want.sort();
    assert_eq!(got, want, "{label}: events");
    assert_log_layout(t, &end_offsets(conn, "events", &DAYS), true);
    if bucket_function {
        assert!(t.rows.iter().all(|r| r.paimon_bucket.is_some()));
    }

    // clicks: a log table without a bucket key (bucket-unaware in Paimon)
    let t = &tables["clicks"];
    assert_eq!(
        names(t),
        ["id", "page", "__bucket", "__offset", "__timestamp"]
    );
    assert_eq!(t.options.get("bucket").map(String::as_str), Some("-1"));
    assert!(!t.options.contains_key("bucket-key"));
    let mut got: Vec<(i32, String)> = t
        .rows
        .iter()
        .map(|r| (t.value(r, "id").parse().unwrap(), t.value(r, "page")))
        .collect();
    got.sort();
    let want: Vec<(i32, String)> = written_clicks
        .iter()
        .map(|i| (*i, format!("/p{i}")))
        .collect();
    assert_eq!(got, want, "{label}: clicks");
    assert_log_layout(t, &end_offsets(conn, "clicks", &[]), false);

    // users: a primary-key table, read merged by key
    let t = &tables["users"];
    assert_eq!(
        names(t),
        ["id", "name", "score", "__bucket", "__offset", "__timestamp"]
    );
    assert_eq!(t.fields[0].1, "INT NOT NULL", "{label}");
    assert_eq!(t.primary_keys, ["id"]);
    assert!(t.partition_keys.is_empty());
    assert_eq!(t.options.get("bucket").map(String::as_str), Some("3"));
    assert_eq!(t.options.get("bucket-key").map(String::as_str), Some("id"));
    assert_eq!(
        t.options.get("changelog-producer").map(String::as_str),
        Some("input")
    );
    // Fluss sets no merge engine: Paimon's deduplicate
    assert!(!t.options.contains_key("merge-engine"));
    let mut got = BTreeMap::new();
    let ends = end_offsets(conn, "users", &[]);
    for r in &t.rows {
        let bucket: i32 = t.value(r, "__bucket").parse().unwrap();
        assert_eq!(r.split_bucket, bucket, "{r:?}");
        if let Some(pb) = r.paimon_bucket {
            assert_eq!(pb, bucket, "Paimon's bucket function disagrees: {r:?}");
        }
        let offset: i64 = t.value(r, "__offset").parse().unwrap();
        assert!(offset < ends[&(String::new(), bucket)], "{r:?}");
        let id: i32 = t.value(r, "id").parse().unwrap();
        let prev = got.insert(
            id,
            (
                t.value(r, "name"),
                t.value(r, "score").parse::<i64>().unwrap(),
            ),
        );
        assert!(prev.is_none(), "{label}: key {id} twice");
    }
    assert_eq!(&got, users, "{label}: users' latest state");
}

/// Every table's latest snapshot is the tiering's (commit user `__fluss_lake_tiering`), and
/// GetLakeSnapshot answers its id with each bucket's log end offset.
fn check_snapshots(tables: &BTreeMap<String, LakeTable>, conn: &Connection) {
    for (name, parts) in [
        ("events", &DAYS[..]),
        ("clicks", &[][..]),
        ("users", &[][..]),
    ] {
        let (id, offsets) = lake_snapshot(conn, name);
        let (snap, user, _) = tables[name].snapshot.clone().unwrap();
        assert_eq!(id, snap, "{name}");
        assert_eq!(user, "__fluss_lake_tiering", "{name}");
        assert_eq!(offsets, end_offsets(conn, name, parts), "{name}");
    }
}

fn read_all(warehouse: &Path) -> BTreeMap<String, LakeTable> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    ["events", "clicks", "users"]
        .iter()
        .map(|n| (n.to_string(), rt.block_on(read_with_crate(warehouse, n))))
        .collect()
}

#[test]
fn log_and_primary_key_tables_are_tiered_in_flusss_paimon_layout() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = std::fs::canonicalize(dir.path()).unwrap().join("paimon");
    let server = start(lake_config(dir.path()));
    let conn = Connection::connect_to(&server.bootstrap_servers()).unwrap();
    create_tables(&conn);

    // GetTableInfo carries the catalog's options as table.datalake.paimon.*
    let info = conn.admin().table_info(&path("users")).unwrap();
    assert_eq!(info.descriptor.datalake_format().as_deref(), Some("paimon"));
    assert_eq!(
        info.descriptor
            .property("table.datalake.paimon.warehouse")
            .map(Path::new),
        Some(warehouse.as_path())
    );
    assert_eq!(
        info.descriptor.property("table.datalake.paimon.metastore"),
        Some("filesystem")
    );

    let mut written_events = events(0, 20);
    write_events(&conn, &written_events);
    let mut written_clicks: Vec<i32> = (0..9).collect();
    write_clicks(&conn, &written_clicks);
    let mut users = BTreeMap::new();
    let round1: Vec<Change> = (1..=10)
        .map(|i| Change::Upsert(i, ["ann", "bob", "cy"][i as usize % 3], i as i64 * 10))
        .collect();
    write_users(&conn, &round1, &mut users);
    server.commit_lake().unwrap();
    let tables = read_all(&warehouse);
    check_tables(
        "the paimon crate",
        &tables,
        &conn,
        &written_events,
        &written_clicks,
        &users,
        false,
    );
    check_snapshots(&tables, &conn);
    let first: BTreeMap<&str, i64> = ["events", "clicks", "users"]
        .into_iter()
        .map(|n| (n, lake_snapshot(&conn, n).0))
        .collect();

    // nothing new: no new snapshot
    server.commit_lake().unwrap();
    for (n, id) in &first {
        assert_eq!(lake_snapshot(&conn, n).0, *id, "{n}");
    }

    // updates and deletes, more log rows
    let more = events(20, 10);
    write_events(&conn, &more);
    written_events.extend(more);
    write_clicks(&conn, &[9, 10]);
    written_clicks.extend([9, 10]);
    write_users(
        &conn,
        &[
            Change::Upsert(2, "bea", 2000),
            Change::Delete(3),
            Change::Upsert(4, "dan", 4000),
            Change::Delete(7),
            Change::Upsert(11, "eve", 110),
            Change::Upsert(4, "dora", 4001),
            Change::Delete(11),
            Change::Upsert(12, "fay", 120),
        ],
        &mut users,
    );
    // the state the test wrote, spelled out
    let want: BTreeMap<i32, (String, i64)> = [
        (1, ("bob", 10)),
        (2, ("bea", 2000)),
        (4, ("dora", 4001)),
        (5, ("cy", 50)),
        (6, ("ann", 60)),
        (8, ("cy", 80)),
        (9, ("ann", 90)),
        (10, ("bob", 100)),
        (12, ("fay", 120)),
    ]
    .into_iter()
    .map(|(k, (n, s))| (k, (n.to_string(), s)))
    .collect();
    assert_eq!(users, want);
    server.commit_lake().unwrap();
    let tables = read_all(&warehouse);
    check_tables(
        "the paimon crate",
        &tables,
        &conn,
        &written_events,
        &written_clicks,
        &users,
        false,
    );
    check_snapshots(&tables, &conn);
    for (n, id) in &first {
        assert_ne!(lake_snapshot(&conn, n).0, *id, "{n}");
    }
    // the second round committed with the next commit identifier
    assert_eq!(tables["users"].snapshot.as_ref().unwrap().2, 2);

    // a restart keeps the lake snapshots (found through the commit identifiers)
    let before: BTreeMap<&str, _> = ["events", "clicks", "users"]
        .into_iter()
        .map(|n| (n, lake_snapshot(&conn, n)))
        .collect();
    conn.close().unwrap();
    server.shutdown().unwrap();
    let server = start(lake_config(dir.path()));
    let conn = Connection::connect_to(&server.bootstrap_servers()).unwrap();
    for (n, s) in &before {
        assert_eq!(&lake_snapshot(&conn, n), s, "{n}");
    }
    // and the next commit continues from the recorded offsets (no row twice)
    let more = events(30, 4);
    write_events(&conn, &more);
    written_events.extend(more);
    write_clicks(&conn, &[11]);
    written_clicks.push(11);
    write_users(
        &conn,
        &[Change::Delete(1), Change::Upsert(5, "cyd", 55)],
        &mut users,
    );
    server.commit_lake().unwrap();
    let tables = read_all(&warehouse);
    check_tables(
        "the paimon crate",
        &tables,
        &conn,
        &written_events,
        &written_clicks,
        &users,
        false,
    );
    check_snapshots(&tables, &conn);

    for (reader, tables) in read_with_paimon(&warehouse, &["events", "clicks", "users"]) {
        check_tables(
            reader,
            &tables,
            &conn,
            &written_events,
            &written_clicks,
            &users,
            true,
        );
        check_snapshots(&tables, &conn);
    }
    conn.close().unwrap();
    server.shutdown().unwrap();
}

#[test]
fn paimon_options_are_taken_by_fluss_names_and_checked() {
    let mut c = ServerConfig::new("/nonexistent");
    c.set("datalake.format", "paimon").unwrap();
    c.set("datalake.paimon.metastore", "filesystem").unwrap();
    c.set("datalake.paimon.warehouse", "s3://lake/paimon")
        .unwrap();
    c.set("datalake.paimon.s3.endpoint", "http://127.0.0.1:9000")
        .unwrap();
    c.set("datalake.paimon.s3.secret-key", "s3cr3t").unwrap();
    assert_eq!(
        c.datalake_paimon.get("warehouse").map(String::as_str),
        Some("s3://lake/paimon")
    );
    assert_eq!(
        c.datalake_paimon.get("s3.endpoint").map(String::as_str),
        Some("http://127.0.0.1:9000")
    );
    assert!(!format!("{c:?}").contains("s3cr3t"));
    let e = c.set("datalake.paimon.metastore", "hive").unwrap_err();
    assert!(e.message().contains("datalake.paimon.metastore"), "{e}");
    assert!(e.message().contains("hive"), "{e}");
    let e = c.set("datalake.paimon.bogus", "x").unwrap_err();
    assert!(e.message().contains("datalake.paimon.bogus"), "{e}");
    let e = c.set("datalake.format", "lance").unwrap_err();
    assert!(e.message().contains("lance"), "{e}");

    // a lake without a warehouse is refused at start, naming the option
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path())
        .with_options([("datalake.format", "paimon")])
        .unwrap();
    let Err(e) = riverlet_server::LocalServer::start(cfg) else {
        panic!("a Paimon lake without a warehouse started");
    };
    assert!(e.message().contains("datalake.paimon.warehouse"), "{e}");
}

#[test]
fn paimon_options_fluss_sets_itself_are_refused_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(lake_config(dir.path()));
    let conn = Connection::connect_to(&server.bootstrap_servers()).unwrap();
    conn.admin().create_database(DB, true).unwrap();
    let d = TableDescriptor::builder(log_schema())
        .distributed_by(Some(2), Vec::<String>::new())
        .property("table.datalake.enabled", "true")
        .custom_property("paimon.bucket", "4")
        .build()
        .unwrap();
    let e = conn
        .admin()
        .create_table(&path("t"), &d, false)
        .unwrap_err();
    assert!(e.message().contains("paimon.bucket"), "{e}");
    assert!(!conn.admin().table_exists(&path("t")).unwrap());
    let catalog_dir = dir.path().join("paimon").join(format!("{DB}.db")).join("t");
    assert!(!catalog_dir.exists(), "{}", catalog_dir.display());
    // a column named like a system column is refused by name
    let s = Schema::builder()
        .column("id", DataType::int())
        .column("__offset", DataType::bigint())
        .build()
        .unwrap();
    let d = lake_props(TableDescriptor::builder(s).distributed_by(Some(1), Vec::<String>::new()));
    let e = conn
        .admin()
        .create_table(&path("u"), &d, false)
        .unwrap_err();
    assert!(e.message().contains("__offset"), "{e}");
    // nested types are not tiered (yet): refused naming the type
    let s = Schema::builder()
        .column("id", DataType::int())
        .column("tags", DataType::array(DataType::string()))
        .build()
        .unwrap();
    let d = lake_props(TableDescriptor::builder(s).distributed_by(Some(1), Vec::<String>::new()));
    let e = conn
        .admin()
        .create_table(&path("v"), &d, false)
        .unwrap_err();
    assert!(e.message().contains("ARRAY<STRING>"), "{e}");
    assert!(e.message().contains("paimon"), "{e}");
    // a deletion-vector table (Fluss takes `paimon.*` keys as custom properties) is refused
    // naming the property (its level-0 files would not be readable); false is taken, and
    // creates the Paimon table with the option
    for (name, value) in [("w", " TRUE"), ("x", "false")] {
        let d = lake_props(
            TableDescriptor::builder(log_schema())
                .distributed_by(Some(1), Vec::<String>::new())
                .custom_property("paimon.deletion-vectors.enabled", value),
        );
        let created = conn.admin().create_table(&path(name), &d, false);
        let table_dir = dir
            .path()
            .join("paimon")
            .join(format!("{DB}.db"))
            .join(name);
        if value == "false" {
            created.unwrap();
            let schema =
                std::fs::read_to_string(table_dir.join("schema").join("schema-0")).unwrap();
            let schema: serde_json::Value = serde_json::from_str(&schema).unwrap();
            assert_eq!(
                schema["options"]["deletion-vectors.enabled"], "false",
                "{schema}"
            );
        } else {
            let e = created.unwrap_err();
            assert!(
                e.message().contains("paimon.deletion-vectors.enabled"),
                "{e}"
            );
            assert!(!conn.admin().table_exists(&path(name)).unwrap());
            assert!(!table_dir.exists(), "{}", table_dir.display());
        }
    }
    conn.close().unwrap();
}

/// Every scalar Fluss type, as (column, Fluss type, Paimon type as SQL, a value as text): the
/// Paimon type is Fluss's mapping (`FlussDataTypeToPaimonDataType`), the text what a reader
/// shows (dates and times ISO, binary hex, a local zoned timestamp as epoch ms:
/// 2026-01-02T03:04:05.678Z is day 20455, 20455 * 86400 + 11045 s).
fn typed_columns() -> Vec<(&'static str, DataType, &'static str, &'static str)> {
    vec![
        ("b", DataType::boolean(), "BOOLEAN", "true"),
        ("ti", DataType::tinyint(), "TINYINT", "-12"),
        ("si", DataType::smallint(), "SMALLINT", "1234"),
        ("i", DataType::int(), "INT", "-123456"),
        ("bi", DataType::bigint(), "BIGINT", "9876543210"),
        ("f", DataType::float(), "FLOAT", "1.5"),
        ("d", DataType::double(), "DOUBLE", "-2.25"),
        (
            "dec",
            DataType::decimal(10, 2),
            "DECIMAL(10, 2)",
            "12345678.91",
        ),
        ("c", DataType::char(3), "CHAR(3)", "abc"),
        ("s", DataType::string(), "STRING", "héllo"),
        ("bin", DataType::binary(4), "BINARY(4)", "01020304"),
        ("by", DataType::bytes(), "BYTES", "cafe"),
        ("dt", DataType::date(), "DATE", "2026-01-02"),
        ("t", DataType::time(3), "TIME(3)", "12:34:56.789"),
        (
            "ts",
            DataType::timestamp(6),
            "TIMESTAMP(6)",
            "2026-01-02T03:04:05.123456",
        ),
        (
            "ltz",
            DataType::timestamp_ltz(3),
            "TIMESTAMP(3) WITH LOCAL TIME ZONE",
            "1767323045678",
        ),
    ]
}

/// One column of `n` rows of `text` (then nulls) in the table's arrow type.
fn typed_column(field: &arrow_schema::Field, text: &str) -> arrow_array::ArrayRef {
    use arrow_schema::DataType as A;
    let hex = |s: &str| -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    match field.data_type() {
        A::FixedSizeBinary(n) => Arc::new(
            arrow_array::FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                [Some(hex(text)), None].into_iter(),
                *n,
            )
            .unwrap(),
        ),
        A::Binary => Arc::new(arrow_array::BinaryArray::from(vec![
            Some(hex(text).as_slice()),
            None,
        ])),
        // epoch ms (the local zoned timestamp's text)
        A::Timestamp(unit, tz) if text.parse::<i64>().is_ok() => {
            let ms = arrow_array::TimestampMillisecondArray::from(vec![
                Some(text.parse::<i64>().unwrap()),
                None,
            ])
            .with_timezone_opt(tz.clone());
            arrow_cast::cast(&ms, &A::Timestamp(*unit, tz.clone())).unwrap()
        }
        other => {
            let s = StringArray::from(vec![Some(text), None]);
            // not "safe": a text that does not parse is an error, not a null
            let strict = arrow_cast::CastOptions {
                safe: false,
                ..Default::default()
            };
            arrow_cast::cast_with_options(&s, other, &strict).unwrap()
        }
    }
}

#[test]
fn every_scalar_fluss_type_lands_as_fluss_maps_it() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = std::fs::canonicalize(dir.path()).unwrap().join("paimon");
    let server = start(lake_config(dir.path()));
    let conn = Connection::connect_to(&server.bootstrap_servers()).unwrap();
    conn.admin().create_database(DB, true).unwrap();
    let cols = typed_columns();
    let mut schema = Schema::builder();
    for (name, ty, _, _) in &cols {
        schema = schema.column(*name, ty.clone());
    }
    let d = lake_props(
        TableDescriptor::builder(schema.build().unwrap())
            .distributed_by(Some(1), Vec::<String>::new()),
    );
    admin_create(&conn, "typed", &d);
    let t = conn.table(&path("typed")).unwrap();
    let arrow = t.arrow_schema();
    let columns = arrow
        .fields()
        .iter()
        .zip(&cols)
        .map(|(f, (_, _, _, text))| typed_column(f, text))
        .collect();
    let w = t.new_append_writer().unwrap();
    w.append(&RecordBatch::try_new(arrow.clone(), columns).unwrap())
        .unwrap()
        .wait()
        .unwrap();
    w.close().unwrap();
    server.commit_lake().unwrap();

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut readers = vec![(
        "the paimon crate",
        rt.block_on(read_with_crate(&warehouse, "typed")),
    )];
    for (reader, mut tables) in read_with_paimon(&warehouse, &["typed"]) {
        readers.push((reader, tables.remove("typed").unwrap()));
    }
    for (reader, lake) in readers {
        let want_types: Vec<(String, String)> = cols
            .iter()
            .map(|(n, _, ty, _)| (n.to_string(), ty.to_string()))
            .chain([
                ("__bucket".to_string(), "INT".to_string()),
                ("__offset".to_string(), "BIGINT".to_string()),
                (
                    "__timestamp".to_string(),
                    "TIMESTAMP(3) WITH LOCAL TIME ZONE".to_string(),
                ),
            ])
            .collect();
        assert_eq!(lake.fields, want_types, "{reader}");
        assert_eq!(lake.rows.len(), 2, "{reader}");
        let mut rows = lake.rows.clone();
        rows.sort_by_key(|r| lake.value(r, "__offset").parse::<i64>().unwrap());
        let want: Vec<Option<String>> = cols.iter().map(|c| Some(c.3.to_string())).collect();
        assert_eq!(rows[0].values[..cols.len()], want[..], "{reader}: the row");
        assert!(
            rows[1].values[..cols.len()].iter().all(Option::is_none),
            "{reader}: the row of nulls {:?}",
            rows[1]
        );
    }
    conn.close().unwrap();
    server.shutdown().unwrap();
}

fn admin_create(conn: &Connection, name: &str, d: &TableDescriptor) {
    conn.admin().create_table(&path(name), d, false).unwrap();
}

#[test]
fn a_partitioned_primary_key_table_keeps_its_partitions_and_latest_state() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = std::fs::canonicalize(dir.path()).unwrap().join("paimon");
    let server = start(lake_config(dir.path()));
    let conn = Connection::connect_to(&server.bootstrap_servers()).unwrap();
    let admin = conn.admin();
    admin.create_database(DB, true).unwrap();
    let s = Schema::builder()
        .column("sku", DataType::int().not_null())
        .column("dt", DataType::string().not_null())
        .column("qty", DataType::bigint())
        .primary_key(["sku", "dt"])
        .build()
        .unwrap();
    // no bucket key given: Fluss's default, the primary key minus the partition keys
    let d = lake_props(
        TableDescriptor::builder(s)
            .partitioned_by(["dt"])
            .distributed_by(Some(2), Vec::<String>::new()),
    );
    admin.create_table(&path("stock"), &d, false).unwrap();
    for day in DAYS {
        let spec = riverlet::metadata::PartitionSpec::new([("dt", day)]);
        admin.create_partition(&path("stock"), &spec, true).unwrap();
    }
    let t = conn.table(&path("stock")).unwrap();
    let row = |sku: i32, day: &str, qty: i64| {
        vec![
            Datum::Int(sku),
            Datum::String(day.to_string()),
            Datum::BigInt(qty),
        ]
    };
    let w = t.new_upsert_writer(None).unwrap();
    for sku in 1..=6 {
        w.upsert_rows(&[row(sku, DAYS[0], sku as i64 * 10)])
            .unwrap();
        w.upsert_rows(&[row(sku, DAYS[1], sku as i64)]).unwrap();
    }
    w.flush().unwrap();
    server.commit_lake().unwrap();
    w.upsert_rows(&[row(1, DAYS[0], 11)]).unwrap();
    w.delete_rows(&[row(2, DAYS[0], 0)]).unwrap();
    w.delete_rows(&[row(5, DAYS[1], 0)]).unwrap();
    w.upsert_rows(&[row(7, DAYS[1], 7)]).unwrap();
    w.upsert_rows(&[row(6, DAYS[1], 66)]).unwrap();
    w.close().unwrap();
    server.commit_lake().unwrap();
    // the state written, spelled out: (sku, day) -> qty
    let want: BTreeMap<(i32, String), i64> = [
        ((1, DAYS[0]), 11),
        ((3, DAYS[0]), 30),
        ((4, DAYS[0]), 40),
        ((5, DAYS[0]), 50),
        ((6, DAYS[0]), 60),
        ((1, DAYS[1]), 1),
        ((2, DAYS[1]), 2),
        ((3, DAYS[1]), 3),
        ((4, DAYS[1]), 4),
        ((6, DAYS[1]), 66),
        ((7, DAYS[1]), 7),
    ]
    .into_iter()
    .map(|((k, d), q)| ((k, d.to_string()), q))
    .collect();

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut readers = vec![(
        "the paimon crate",
        rt.block_on(read_with_crate(&warehouse, "stock")),
    )];
    for (reader, mut tables) in read_with_paimon(&warehouse, &["stock"]) {
        readers.push((reader, tables.remove("stock").unwrap()));
    }
    let (snapshot_id, offsets) = lake_snapshot(&conn, "stock");
    assert_eq!(offsets, end_offsets(&conn, "stock", &DAYS));
    for (reader, lake) in readers {
        assert_eq!(lake.primary_keys, ["sku", "dt"], "{reader}");
        assert_eq!(lake.partition_keys, ["dt"], "{reader}");
        assert_eq!(lake.options.get("bucket").map(String::as_str), Some("2"));
        assert_eq!(
            lake.options.get("bucket-key").map(String::as_str),
            Some("sku")
        );
        assert_eq!(
            lake.options.get("changelog-producer").map(String::as_str),
            Some("input")
        );
        assert_eq!(lake.snapshot.as_ref().unwrap().0, snapshot_id, "{reader}");
        let mut got = BTreeMap::new();
        for r in &lake.rows {
            let bucket: i32 = lake.value(r, "__bucket").parse().unwrap();
            assert_eq!(r.split_bucket, bucket, "{reader}: {r:?}");
            if let Some(pb) = r.paimon_bucket {
                assert_eq!(
                    pb, bucket,
                    "{reader}: Paimon's bucket function disagrees: {r:?}"
                );
            }
            assert_eq!(r.partition, lake.value(r, "dt"), "{reader}: {r:?}");
            let key = (lake.value(r, "sku").parse().unwrap(), lake.value(r, "dt"));
            let qty: i64 = lake.value(r, "qty").parse().unwrap();
            assert!(got.insert(key, qty).is_none(), "{reader}: a key twice");
        }
        assert_eq!(got, want, "{reader}: the latest state");
    }
    conn.close().unwrap();
    server.shutdown().unwrap();
}

// ALTER TABLE ... ADD COLUMN of lake-enabled tables ("lake first", as Fluss 0.9.1).

/// (id, page, referrer) of a visit; the referrer column is the one added.
type Visit = (i32, String, Option<String>);

fn visit(id: i32, referrer: Option<&str>) -> Visit {
    (id, format!("/v{id}"), referrer.map(str::to_string))
}

/// Appends visits through a writer of the table's current schema (without the referrer column
/// before the ALTER: those visits must have none).
fn write_visits(conn: &Connection, visits: &[Visit]) {
    let t = conn.table(&path("visits")).unwrap();
    let schema = t.arrow_schema();
    let mut cols: Vec<arrow_array::ArrayRef> = vec![
        Arc::new(Int32Array::from_iter_values(visits.iter().map(|v| v.0))),
        Arc::new(StringArray::from_iter_values(visits.iter().map(|v| &v.1))),
    ];
    if schema.fields().len() == 3 {
        cols.push(Arc::new(StringArray::from_iter(
            visits.iter().map(|v| v.2.as_deref()),
        )));
    } else {
        assert!(visits.iter().all(|v| v.2.is_none()), "{visits:?}");
    }
    let w = t.new_append_writer().unwrap();
    w.append(&RecordBatch::try_new(schema, cols).unwrap())
        .unwrap()
        .wait()
        .unwrap();
    w.close().unwrap();
}

/// id -> (name, level) of the scores table; the level column is the one added.
type Scores = BTreeMap<i32, (String, Option<i64>)>;

/// Upserts (id, name, level) rows, or deletes ids, through a writer of the table's current
/// schema, and applies them to `state`.
fn write_scores(
    conn: &Connection,
    upserts: &[(i32, &str, Option<i64>)],
    deletes: &[i32],
    state: &mut Scores,
) {
    let t = conn.table(&path("scores")).unwrap();
    let with_level = t.arrow_schema().fields().len() == 3;
    let w = t.new_upsert_writer(None).unwrap();
    for (id, name, level) in upserts {
        let mut row = vec![Datum::Int(*id), Datum::String(name.to_string())];
        if with_level {
            row.push(level.map_or(Datum::Null, Datum::BigInt));
        } else {
            assert!(level.is_none());
        }
        w.upsert_rows(&[row]).unwrap();
        state.insert(*id, (name.to_string(), *level));
    }
    for id in deletes {
        let mut row = vec![Datum::Int(*id), Datum::Null];
        if with_level {
            row.push(Datum::Null);
        }
        w.delete_rows(&[row]).unwrap();
        state.remove(id);
    }
    w.flush().unwrap();
    w.close().unwrap();
}

/// The Fluss table's schema id and column names, as GetTableInfo answers.
fn fluss_columns(conn: &Connection, name: &str) -> (i32, Vec<String>) {
    let info = conn.admin().table_info(&path(name)).unwrap();
    let cols = info
        .descriptor
        .schema
        .columns
        .iter()
        .map(|c| c.name.clone())
        .collect();
    (info.schema_id, cols)
}

fn read_tables(warehouse: &Path, names: &[&str]) -> BTreeMap<String, LakeTable> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    names
        .iter()
        .map(|n| (n.to_string(), rt.block_on(read_with_crate(warehouse, n))))
        .collect()
}

/// The evolved tables as `label` reads them: the added columns sit before the system columns
/// (with their comment), rows tiered before the ALTER or written under the old schema have
/// NULL there, later ones their value; every visit once, the scores' merged state.
fn check_evolved(
    label: &str,
    tables: &BTreeMap<String, LakeTable>,
    conn: &Connection,
    visits: &[Visit],
    scores: &Scores,
) {
    eprintln!("checking the evolved tables as {label} reads them");
    let t = &tables["visits"];
    assert_eq!(
        names(t),
        [
            "id",
            "page",
            "referrer",
            "__bucket",
            "__offset",
            "__timestamp"
        ],
        "{label}"
    );
    assert_eq!(t.fields[2].1, "STRING", "{label}");
    assert_eq!(
        t.comments,
        [None, None, Some("where from".to_string()), None, None, None],
        "{label}"
    );
    // created as schema 0, one ALTER
    assert_eq!(t.schema_id, 1, "{label}");
    let mut got: Vec<Visit> = t
        .rows
        .iter()
        .map(|r| {
            (
                t.value(r, "id").parse().unwrap(),
                t.value(r, "page"),
                r.values[t.col("referrer")].clone(),
            )
        })
        .collect();
    got.sort();
    let mut want = visits.to_vec();
    want.sort();
    assert_eq!(got, want, "{label}: visits");
    assert_log_layout(t, &end_offsets(conn, "visits", &[]), false);

    let t = &tables["scores"];
    assert_eq!(
        names(t),
        ["id", "name", "level", "__bucket", "__offset", "__timestamp"],
        "{label}"
    );
    assert_eq!(t.fields[2].1, "BIGINT", "{label}");
    assert_eq!(t.primary_keys, ["id"], "{label}");
    let mut got = Scores::new();
    for r in &t.rows {
        let id: i32 = t.value(r, "id").parse().unwrap();
        let level = r.values[t.col("level")]
            .as_ref()
            .map(|l| l.parse().unwrap());
        assert!(
            got.insert(id, (t.value(r, "name"), level)).is_none(),
            "{label}: key {id} twice"
        );
    }
    assert_eq!(&got, scores, "{label}: scores' latest state");
    for name in ["visits", "scores"] {
        let (id, offsets) = lake_snapshot(conn, name);
        assert_eq!(
            Some(id),
            tables[name].snapshot.as_ref().map(|s| s.0),
            "{name}"
        );
        assert_eq!(offsets, end_offsets(conn, name, &[]), "{name}");
    }
}

#[test]
fn a_column_added_between_tiering_rounds_reaches_the_paimon_tables() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = std::fs::canonicalize(dir.path()).unwrap().join("paimon");
    let server = start(lake_config(dir.path()));
    let conn = Connection::connect_to(&server.bootstrap_servers()).unwrap();
    let admin = conn.admin();
    admin.create_database(DB, true).unwrap();
    let visits_schema = Schema::builder()
        .column("id", DataType::int())
        .column("page", DataType::string())
        .build()
        .unwrap();
    let d = lake_props(
        TableDescriptor::builder(visits_schema).distributed_by(Some(2), Vec::<String>::new()),
    );
    admin.create_table(&path("visits"), &d, false).unwrap();
    let scores_schema = Schema::builder()
        .column("id", DataType::int().not_null())
        .column("name", DataType::string())
        .primary_key(["id"])
        .build()
        .unwrap();
    let d = lake_props(TableDescriptor::builder(scores_schema).distributed_by(Some(2), ["id"]));
    admin.create_table(&path("scores"), &d, false).unwrap();

    let mut visits: Vec<Visit> = (0..6).map(|i| visit(i, None)).collect();
    write_visits(&conn, &visits);
    let mut scores = Scores::new();
    write_scores(
        &conn,
        &[(1, "ann", None), (2, "bob", None), (3, "cy", None)],
        &[],
        &mut scores,
    );
    server.commit_lake().unwrap();
    // written under the first schema after that commit: tiered after the ALTER, with NULL in
    // the new column
    let more: Vec<Visit> = (6..9).map(|i| visit(i, None)).collect();
    write_visits(&conn, &more);
    visits.extend(more);
    write_scores(&conn, &[(3, "cyd", None)], &[], &mut scores);

    admin
        .add_columns(
            &path("visits"),
            &[AddColumn {
                name: "referrer".into(),
                data_type: DataType::string(),
                comment: Some("where from".into()),
            }],
        )
        .unwrap();
    admin
        .add_columns(
            &path("scores"),
            &[AddColumn::new("level", DataType::bigint())],
        )
        .unwrap();
    assert_eq!(
        fluss_columns(&conn, "visits"),
        (2, vec!["id".into(), "page".into(), "referrer".into()])
    );
    assert_eq!(
        fluss_columns(&conn, "scores"),
        (2, vec!["id".into(), "name".into(), "level".into()])
    );
    // lake first: the Paimon tables have the columns before any new commit, before __bucket
    let now = read_tables(&warehouse, &["visits", "scores"]);
    assert_eq!(
        names(&now["visits"]),
        [
            "id",
            "page",
            "referrer",
            "__bucket",
            "__offset",
            "__timestamp"
        ]
    );
    assert_eq!(
        names(&now["scores"]),
        ["id", "name", "level", "__bucket", "__offset", "__timestamp"]
    );

    let newer = [
        visit(9, Some("/home")),
        visit(10, None),
        visit(11, Some("/ad")),
    ];
    write_visits(&conn, &newer);
    visits.extend(newer);
    write_scores(
        &conn,
        &[(1, "ann", Some(100)), (4, "dan", Some(40))],
        &[2],
        &mut scores,
    );
    server.commit_lake().unwrap();
    let want: Scores = [
        (1, ("ann", Some(100))),
        (3, ("cyd", None)),
        (4, ("dan", Some(40))),
    ]
    .into_iter()
    .map(|(k, (n, l))| (k, (n.to_string(), l)))
    .collect();
    assert_eq!(scores, want);
    check_evolved(
        "the paimon crate",
        &read_tables(&warehouse, &["visits", "scores"]),
        &conn,
        &visits,
        &scores,
    );

    // a restart keeps working: the next round continues in the new schema
    conn.close().unwrap();
    server.shutdown().unwrap();
    let server = start(lake_config(dir.path()));
    let conn = Connection::connect_to(&server.bootstrap_servers()).unwrap();
    let last = [visit(12, Some("/mail"))];
    write_visits(&conn, &last);
    visits.extend(last);
    write_scores(&conn, &[(3, "cyd", Some(33))], &[4], &mut scores);
    server.commit_lake().unwrap();
    check_evolved(
        "the paimon crate",
        &read_tables(&warehouse, &["visits", "scores"]),
        &conn,
        &visits,
        &scores,
    );
    for (reader, tables) in read_with_paimon(&warehouse, &["visits", "scores"]) {
        check_evolved(reader, &tables, &conn, &visits, &scores);
    }
    conn.close().unwrap();
    server.shutdown().unwrap();
}

fn visits_table(conn: &Connection, name: &str, lake: bool) {
    let schema = Schema::builder()
        .column("id", DataType::int())
        .column("page", DataType::string())
        .build()
        .unwrap();
    let b = TableDescriptor::builder(schema).distributed_by(Some(2), Vec::<String>::new());
    let d = if lake {
        lake_props(b)
    } else {
        b.build().unwrap()
    };
    conn.admin().create_table(&path(name), &d, false).unwrap();
}

#[test]
fn an_alter_the_paimon_table_refuses_leaves_the_fluss_schema_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = std::fs::canonicalize(dir.path()).unwrap().join("paimon");
    let server = start(lake_config(dir.path()));
    let conn = Connection::connect_to(&server.bootstrap_servers()).unwrap();
    let admin = conn.admin();
    admin.create_database(DB, true).unwrap();
    visits_table(&conn, "visits", true);
    visits_table(&conn, "plain", false);
    write_visits(&conn, &[visit(1, None), visit(2, None)]);
    server.commit_lake().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let catalog = rt.block_on(async {
        let mut options = paimon::Options::new();
        options.set("warehouse", warehouse.display().to_string());
        paimon::CatalogFactory::create(options).await.unwrap()
    });
    let ident = paimon::catalog::Identifier::new(DB, "visits");

    // The Paimon table got a column behind the server's back: it matches neither the Fluss
    // table nor the table the ALTER would make, so the ALTER is refused, naming both schemas.
    rt.block_on(catalog.alter_table(
        &ident,
        vec![paimon::spec::SchemaChange::AddColumn {
            field_names: vec!["x".into()],
            data_type: paimon::spec::DataType::Int(paimon::spec::IntType::new()),
            comment: None,
            column_move: Some(paimon::spec::ColumnMove::move_before(
                "x".into(),
                "__bucket".into(),
            )),
        }],
        false,
    ))
    .unwrap();
    let e = admin
        .add_columns(&path("visits"), &[AddColumn::new("y", DataType::string())])
        .unwrap_err();
    assert_eq!(
        e.fluss_code(),
        Some(riverlet::error::codes::INVALID_ALTER_TABLE_EXCEPTION),
        "{e}"
    );
    let m = e.message();
    assert!(m.contains("Paimon schema is not compatible"), "{e}");
    assert!(m.contains("x INT, __bucket"), "the Paimon schema: {e}");
    assert!(m.contains("page STRING, __bucket"), "the Fluss schema: {e}");
    assert!(m.contains("test_db.visits"), "{e}");
    assert_eq!(
        fluss_columns(&conn, "visits"),
        (1, vec!["id".into(), "page".into()])
    );

    // The Paimon table has the column already (as when a server died after altering the lake
    // and before storing its own schema): the lake part is skipped, the Fluss table gets it.
    admin
        .add_columns(&path("visits"), &[AddColumn::new("x", DataType::int())])
        .unwrap();
    assert_eq!(
        fluss_columns(&conn, "visits"),
        (2, vec!["id".into(), "page".into(), "x".into()])
    );
    let t = conn.table(&path("visits")).unwrap();
    let b = RecordBatch::try_new(
        t.arrow_schema(),
        vec![
            Arc::new(Int32Array::from(vec![3])),
            Arc::new(StringArray::from(vec!["/v3"])),
            Arc::new(Int32Array::from(vec![33])),
        ],
    )
    .unwrap();
    let w = t.new_append_writer().unwrap();
    w.append(&b).unwrap().wait().unwrap();
    w.close().unwrap();
    server.commit_lake().unwrap();
    let lake = rt.block_on(read_with_crate(&warehouse, "visits"));
    // one ALTER of the Paimon table (the one behind the server's back)
    assert_eq!(lake.schema_id, 1);
    let mut got: Vec<(String, Option<String>)> = lake
        .rows
        .iter()
        .map(|r| (lake.value(r, "id"), r.values[lake.col("x")].clone()))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("1".to_string(), None),
            ("2".to_string(), None),
            ("3".to_string(), Some("33".to_string()))
        ]
    );

    // An added column of a type the tiering does not map: refused, naming table and type.
    let e = admin
        .add_columns(
            &path("visits"),
            &[AddColumn::new("tags", DataType::array(DataType::string()))],
        )
        .unwrap_err();
    assert!(e.message().contains("test_db.visits"), "{e}");
    assert!(e.message().contains("ARRAY"), "{e}");
    assert_eq!(fluss_columns(&conn, "visits").0, 2);

    // The lake table is gone: the ALTER fails with Fluss's words, nothing changes.
    std::fs::remove_dir_all(warehouse.join(format!("{DB}.db")).join("visits")).unwrap();
    let e = admin
        .add_columns(&path("visits"), &[AddColumn::new("z", DataType::int())])
        .unwrap_err();
    assert!(
        e.message()
            .contains("Lake table doesn't exist for lake-enabled table test_db.visits"),
        "{e}"
    );
    assert_eq!(fluss_columns(&conn, "visits").0, 2);

    // A table that is not lake-enabled is altered as before, and no lake table appears.
    admin
        .add_columns(&path("plain"), &[AddColumn::new("z", DataType::int())])
        .unwrap();
    assert_eq!(fluss_columns(&conn, "plain").0, 2);
    assert!(!warehouse.join(format!("{DB}.db")).join("plain").exists());
    conn.close().unwrap();
    server.shutdown().unwrap();
}

#[test]
fn a_lake_enabled_iceberg_table_takes_no_new_column_as_with_fluss() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(&dir.path().join("data"))
        .with_options([
            ("datalake.format", "iceberg"),
            (
                "datalake.iceberg.warehouse",
                dir.path().join("iceberg").to_str().unwrap(),
            ),
        ])
        .unwrap();
    let server = start(cfg);
    let conn = Connection::connect_to(&server.bootstrap_servers()).unwrap();
    conn.admin().create_database(DB, true).unwrap();
    visits_table(&conn, "visits", true);
    let e = conn
        .admin()
        .add_columns(
            &path("visits"),
            &[AddColumn::new("referrer", DataType::string())],
        )
        .unwrap_err();
    assert_eq!(
        e.fluss_code(),
        Some(riverlet::error::codes::INVALID_ALTER_TABLE_EXCEPTION),
        "{e}"
    );
    assert!(e.message().contains("test_db.visits"), "{e}");
    assert!(e.message().contains("Iceberg"), "{e}");
    assert!(e.message().contains("referrer"), "{e}");
    assert_eq!(
        fluss_columns(&conn, "visits"),
        (1, vec!["id".into(), "page".into()])
    );
    // and the tiering goes on in the table's schema
    write_visits(&conn, &[visit(1, None)]);
    server.commit_lake().unwrap();
    assert_eq!(
        lake_snapshot(&conn, "visits").1,
        end_offsets(&conn, "visits", &[])
    );
    conn.close().unwrap();
    server.shutdown().unwrap();
}
