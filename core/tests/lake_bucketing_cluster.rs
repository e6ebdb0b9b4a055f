//! Keys of lake-formatted tables on Apache Fluss 0.9.1, checked against Fluss's own Java client:
//! a table whose `table.datalake.format` is paimon or iceberg has its keys bucketed (and, for a
//! primary key bucketed by itself, encoded) as that lake does, so rows written by either client
//! are only found by the other when both choose the same key bytes and the same bucket.
//!
//! For primary-key tables of each format (bucketed by the whole key, or by a prefix of it), Fluss's
//! Java client (`fluss-client` from Maven Central, `tests/fluss-cluster/peer-lake/
//! FlussLakeKeysPeer.java`) upserts rows that Riverlet's lookups (point or prefix) must find, and
//! Riverlet upserts rows that the Java client's lookups must find; on log tables with a bucket
//! key, every row Riverlet appends must sit in the bucket Fluss's own KeyEncoder and
//! BucketingFunction give it. Each table has 8 buckets and the test checks that Fluss's default
//! bucketing would put most keys elsewhere, so a wrong hash cannot pass.
//!
//! Needs the cluster in `RIVERLET_TEST_BOOTSTRAP`, `java`, and the peer's classpath in
//! `RIVERLET_LAKE_PEER_CLASSPATH` (else resolved with `mvn dependency:build-classpath`). With
//! `RIVERLET_TEST_FLUSS_LAKE=paimon` (a cluster whose `datalake.format` is paimon, as
//! `tests/fluss-cluster/run-lake-bucketing-tests.sh` starts it) the tables without a format of
//! their own get the cluster's, and a `table.datalake.enabled` table is tested too; without it
//! (a cluster with no lake) the tests report themselves not applicable. Against the
//! embedded server the tests report themselves not applicable (lake_bucketing.rs covers it).

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;

use common::*;
use riverlet::client::{Connection, Table};
use riverlet::metadata::{DataType, Schema, TableDescriptor};
use riverlet::row::{Datum, KeyFormat, TableKeys};

const LAKE_VAR: &str = "RIVERLET_TEST_FLUSS_LAKE";
const CLASSPATH_VAR: &str = "RIVERLET_LAKE_PEER_CLASSPATH";
const BUCKETS: i32 = 8;
/// Keys the Java client writes: [0, 40); keys Riverlet writes: [40, 80).
const JAVA: (i32, i32) = (0, 40);
const RUST: (i32, i32) = (40, 80);

fn peer_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fluss-cluster/peer-lake")
}

/// Fluss's Java client: one `FlussLakeKeysPeer serve` process per test process (compiled and
/// started on first use, shared by the tests; it ends when its stdin closes with this process),
/// so the commands pay for one JVM start and one connection instead of one each.
struct Peer {
    process: &'static Mutex<PeerProcess>,
}

struct PeerProcess {
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// Kept so the child is not reaped early; it exits at the end of its input.
    _child: Child,
}

/// The directory FlussLakeKeysPeer.java is compiled to, and the classpath it was compiled with.
fn compiled(classpath: String) -> String {
    let dir = std::env::temp_dir().join(format!("lake-peer-classes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let status = Command::new("javac")
        .arg("-cp")
        .arg(&classpath)
        .arg("-d")
        .arg(&dir)
        .arg(peer_dir().join("FlussLakeKeysPeer.java"))
        .status()
        .expect("run javac");
    assert!(status.success(), "javac FlussLakeKeysPeer.java failed");
    format!("{}:{classpath}", dir.display())
}

fn peer_classpath() -> String {
    match std::env::var(CLASSPATH_VAR).ok().filter(|s| !s.is_empty()) {
        Some(cp) => cp,
        None => {
            let out = std::env::temp_dir().join(format!("lake-peer-{}.cp", std::process::id()));
            let status = Command::new("mvn")
                .args(["-B", "-q", "-f"])
                .arg(peer_dir().join("pom.xml"))
                .arg("dependency:build-classpath")
                .arg(format!("-Dmdep.outputFile={}", out.display()))
                .status()
                .expect("run mvn to resolve fluss-client");
            assert!(
                status.success(),
                "mvn could not resolve the peer's classpath"
            );
            std::fs::read_to_string(&out).unwrap().trim().to_string()
        }
    }
}

impl Peer {
    fn new(env: &TestEnv) -> Peer {
        static PROCESS: OnceLock<Mutex<PeerProcess>> = OnceLock::new();
        let process = PROCESS.get_or_init(|| {
            let mut child = Command::new("java")
                .arg("--add-opens=java.base/java.nio=ALL-UNNAMED")
                .arg("-cp")
                .arg(compiled(peer_classpath()))
                .arg("FlussLakeKeysPeer")
                .args(["serve", &env.bootstrap])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("run java");
            Mutex::new(PeerProcess {
                stdin: child.stdin.take().unwrap(),
                stdout: BufReader::new(child.stdout.take().unwrap()),
                _child: child,
            })
        });
        Peer { process }
    }

    /// Runs a command of FlussLakeKeysPeer.java and returns the lines it answered.
    fn run(&self, cmd: &str, table: &str, range: (i32, i32), tag: &str) -> Vec<String> {
        // A test that failed while holding the lock left the process between two commands.
        let mut p = self.process.lock().unwrap_or_else(|e| e.into_inner());
        let request = format!("{cmd} {table} {} {} {tag}", range.0, range.1);
        writeln!(p.stdin, "{}", request.trim_end()).expect("write to the Java peer");
        p.stdin.flush().expect("write to the Java peer");
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            let n = p
                .stdout
                .read_line(&mut line)
                .expect("read from the Java peer");
            assert!(
                n > 0,
                "the Java peer exited during `{request}` (its stderr is above)"
            );
            let line = line.trim_end().to_string();
            if line == "end" {
                break;
            }
            assert!(
                !line.starts_with("error "),
                "Fluss's Java client failed on `{request}`: {line}"
            );
            lines.push(line);
        }
        lines
    }
}

fn env() -> Option<(TestEnv, Peer, Option<String>)> {
    if !is_external() {
        not_applicable(
            "needs Apache Fluss in RIVERLET_TEST_BOOTSTRAP (FLUSS_BOOTSTRAP of \
             tests/fluss-cluster/start.sh) and Fluss's Java client: run \
             tests/fluss-cluster/run-lake-bucketing-tests.sh",
        );
        return None;
    }
    // Only the cluster with a lake of its own runs these (its script sets the variable): the
    // real-Fluss interop run's cluster has none, and running them there too doubled ~80 s.
    let Some(lake) = std::env::var(LAKE_VAR).ok().filter(|s| !s.is_empty()) else {
        not_applicable(&format!(
            "{LAKE_VAR} is not set: these run on the cluster with a Paimon lake that \
             tests/fluss-cluster/run-lake-bucketing-tests.sh starts"
        ));
        return None;
    };
    let lake = Some(lake);
    let env = TestEnv::new();
    let peer = Peer::new(&env);
    Some((env, peer, lake))
}

/// A table of the peer's shape: `id` (INT, or BIGINT), with `sub` a primary key (id, sub)
/// bucketed by `id`, then `name`.
fn descriptor(
    pk: bool,
    bigint: bool,
    sub: bool,
    format: Option<&str>,
    lake_enabled: bool,
) -> TableDescriptor {
    let id = if bigint {
        DataType::bigint()
    } else {
        DataType::int()
    };
    let mut s = Schema::builder().column("id", id.not_null());
    if sub {
        s = s.column("sub", DataType::int().not_null());
    }
    s = s.column("name", DataType::string());
    if pk {
        s = if sub {
            s.primary_key(["id", "sub"])
        } else {
            s.primary_key(["id"])
        };
    }
    let bucket_key: Vec<String> = if sub || !pk {
        vec!["id".into()]
    } else {
        vec![]
    };
    let mut d =
        TableDescriptor::builder(s.build().unwrap()).distributed_by(Some(BUCKETS), bucket_key);
    if let Some(f) = format {
        d = d.property("table.datalake.format", f);
    }
    if lake_enabled {
        d = d.property("table.datalake.enabled", "true");
    }
    d.build().unwrap()
}

fn id_datum(bigint: bool, id: i32) -> Datum {
    if bigint {
        Datum::BigInt(id.into())
    } else {
        Datum::Int(id)
    }
}

fn subs(sub: bool) -> Vec<Option<i32>> {
    if sub {
        vec![Some(0), Some(1)]
    } else {
        vec![None]
    }
}

fn name_of(tag: &str, id: i32, sub: Option<i32>) -> String {
    match sub {
        Some(s) => format!("{tag}-{id}-{s}"),
        None => format!("{tag}-{id}"),
    }
}

/// How many of the test's keys Fluss's default bucketing puts in another bucket than the
/// table's lake bucketing: the test only means something when most do.
fn keys_moved_by_lake(table: &Table, bigint: bool) -> usize {
    let d = &table.info().descriptor;
    let keys = TableKeys::of(d).unwrap();
    assert_ne!(keys.format(), KeyFormat::Fluss, "{d:?}");
    let encoder = keys.bucket_key().unwrap();
    let fluss_type = if bigint {
        DataType::bigint()
    } else {
        DataType::int()
    };
    (JAVA.0..RUST.1)
        .filter(|id| {
            let lake = encoder.encode_values(&[id_datum(bigint, *id)]).unwrap();
            let lake = keys.bucket_of(&lake, BUCKETS).unwrap();
            let fluss = riverlet::row::encode_key(
                std::slice::from_ref(&fluss_type),
                &[id_datum(bigint, *id)],
            )
            .unwrap();
            riverlet::row::fluss_bucket(&fluss, BUCKETS) != lake
        })
        .count()
}

/// Checks the table's format (and the cluster default's) as Fluss's Java client sees it.
fn check_info(peer: &Peer, name: &str, format: &str) {
    let info = peer.run("info", name, (0, 0), "");
    assert!(
        info.contains(&format!("format {}", format.to_uppercase()))
            || info.contains(&format!("format {format}")),
        "{name}: {info:?}"
    );
}

/// Java upserts [0, 40), Riverlet finds them; Riverlet upserts [40, 80), Java finds them.
async fn pk_round_trip(
    conn: &Connection,
    env: &TestEnv,
    peer: &Peer,
    table_name: &str,
    d: TableDescriptor,
    format: &str,
) {
    let path = env.path(table_name);
    let full = format!("{}.{}", env.db, table_name);
    let bigint = matches!(
        d.schema.columns[0].data_type.kind,
        riverlet::metadata::TypeKind::BigInt
    );
    let sub = d.schema.column_index("sub").is_some();
    let table = create_table(conn, &path, d).await;
    check_info(peer, &full, format);
    let moved = keys_moved_by_lake(&table, bigint);
    assert!(
        moved >= 40,
        "{table_name}: only {moved} of 80 keys have another bucket under Fluss's default \
         bucketing; a wrong hash would not be noticed"
    );

    // Java writes, Riverlet reads.
    assert_eq!(peer.run("upsert", &full, JAVA, "java"), vec!["done"]);
    let lookuper = table.new_lookuper().unwrap();
    for id in JAVA.0..JAVA.1 {
        if sub {
            let found = lookuper
                .prefix_lookup_rows(&[vec![id_datum(bigint, id)]])
                .await
                .unwrap();
            let names: BTreeSet<String> = found[0]
                .iter()
                .map(|r| match &r[2] {
                    Datum::String(s) => s.clone(),
                    other => panic!("{other:?}"),
                })
                .collect();
            let expected: BTreeSet<String> = subs(true)
                .into_iter()
                .map(|s| name_of("java", id, s))
                .collect();
            assert_eq!(names, expected, "{table_name}: prefix lookup of {id}");
            for s in [0, 1] {
                let row = lookuper
                    .lookup_rows(&[vec![id_datum(bigint, id), Datum::Int(s)]])
                    .await
                    .unwrap()
                    .remove(0)
                    .unwrap_or_else(|| panic!("{table_name}: Riverlet misses Java's ({id}, {s})"));
                assert_eq!(row[2], Datum::String(name_of("java", id, Some(s))));
            }
        } else {
            let row = lookuper
                .lookup_rows(&[vec![id_datum(bigint, id)]])
                .await
                .unwrap()
                .remove(0)
                .unwrap_or_else(|| panic!("{table_name}: Riverlet misses Java's row {id}"));
            assert_eq!(row[1], Datum::String(name_of("java", id, None)));
        }
    }

    // Riverlet writes, Java reads (and Java's own rows are still where both look).
    let writer = table.new_upsert_writer(None).unwrap();
    let mut rows = Vec::new();
    for id in RUST.0..RUST.1 {
        for s in subs(sub) {
            let mut row = vec![id_datum(bigint, id)];
            if let Some(s) = s {
                row.push(Datum::Int(s));
            }
            row.push(Datum::String(name_of("rust", id, s)));
            rows.push(row);
        }
    }
    writer.upsert_rows(&rows).await.unwrap();
    writer.flush().await.unwrap();
    let lines = peer.run("lookup", &full, (JAVA.0, RUST.1), "");
    let mut expected = Vec::new();
    for id in JAVA.0..RUST.1 {
        let tag = if id < RUST.0 { "java" } else { "rust" };
        for s in subs(sub) {
            let sub_text = s.map(|s| format!(" {s}")).unwrap_or_default();
            expected.push(format!("row {id}{sub_text} {}", name_of(tag, id, s)));
        }
    }
    let got: BTreeSet<&String> = lines.iter().collect();
    let want: BTreeSet<&String> = expected.iter().collect();
    let missing: Vec<&&String> = want.difference(&got).collect();
    assert!(
        missing.is_empty() && got.len() == want.len(),
        "{table_name}: Java's lookups miss {} of Riverlet's rows: {missing:?} (got {lines:?})",
        missing.len()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pk_tables_java_and_riverlet_find_each_others_rows() {
    let Some((env, peer, lake)) = env() else {
        return;
    };
    let conn = env.connect().await;
    // The cluster's own format (no table.datalake.format of the table's) when it has a lake.
    let default = if lake.is_some() { None } else { Some("paimon") };
    let cases: Vec<(&str, TableDescriptor, &str)> = vec![
        (
            "paimon_pk",
            descriptor(true, false, false, default, false),
            "paimon",
        ),
        (
            "paimon_prefix",
            descriptor(true, false, true, Some("paimon"), false),
            "paimon",
        ),
        (
            "iceberg_pk",
            descriptor(true, true, false, Some("iceberg"), false),
            "iceberg",
        ),
        (
            "iceberg_prefix",
            descriptor(true, false, true, Some("iceberg"), false),
            "iceberg",
        ),
    ];
    for (name, d, format) in cases {
        pk_round_trip(&conn, &env, &peer, name, d, format).await;
    }
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn lake_enabled_paimon_table_java_and_riverlet_find_each_others_rows() {
    let Some((env, peer, lake)) = env() else {
        return;
    };
    if lake.as_deref() != Some("paimon") {
        not_applicable(&format!(
            "{LAKE_VAR}=paimon is not set: the cluster is not known to have a Paimon lake for a \
             table.datalake.enabled table"
        ));
        return;
    }
    let conn = env.connect().await;
    for (name, sub) in [("lake_pk", false), ("lake_prefix", true)] {
        let d = descriptor(true, false, sub, None, true);
        pk_round_trip(&conn, &env, &peer, name, d, "paimon").await;
    }
    conn.close().await;
}

/// Riverlet appends [0, 40) and Java [40, 80) to a log table bucketed by `id`: every row must sit
/// in the bucket Fluss's own encoder and bucketing function give its id.
#[tokio::test(flavor = "multi_thread")]
async fn keyed_appends_land_in_the_lake_bucket() {
    let Some((env, peer, lake)) = env() else {
        return;
    };
    let conn = env.connect().await;
    let default = if lake.is_some() { None } else { Some("paimon") };
    for (name, format, shown) in [
        ("paimon_log", default, "paimon"),
        ("iceberg_log", Some("iceberg"), "iceberg"),
    ] {
        let path = env.path(name);
        let full = format!("{}.{name}", env.db);
        let table =
            create_table(&conn, &path, descriptor(false, false, false, format, false)).await;
        check_info(&peer, &full, shown);
        assert!(keys_moved_by_lake(&table, false) >= 40, "{name}");
        let writer = table.new_append_writer().unwrap();
        let rows: Vec<Vec<Datum>> = (JAVA.0..JAVA.1)
            .map(|id| vec![Datum::Int(id), Datum::String(name_of("rust", id, None))])
            .collect();
        writer.append_rows(&rows).await.unwrap();
        writer.flush().await.unwrap();
        assert_eq!(peer.run("append", &full, RUST, "java"), vec!["done"]);

        let mut expected: BTreeMap<i32, i32> = BTreeMap::new();
        for line in peer.run("buckets", &full, (JAVA.0, RUST.1), "") {
            let parts: Vec<&str> = line.split(' ').collect();
            assert_eq!(parts[0], "bucket", "{line}");
            expected.insert(parts[1].parse().unwrap(), parts[2].parse().unwrap());
        }
        let mut found: BTreeMap<i32, i32> = BTreeMap::new();
        for b in 0..BUCKETS {
            for batch in fetch_bucket(&conn, &table, None, b).await {
                let ids = batch.column_by_name("id").unwrap();
                let ids = ids.as_primitive::<Int32Type>();
                for i in 0..ids.len() {
                    assert!(
                        found.insert(ids.value(i), b).is_none(),
                        "{name}: id {} twice",
                        ids.value(i)
                    );
                }
            }
        }
        assert_eq!(
            found, expected,
            "{name}: bucket of each id (found vs Fluss's Java)"
        );
    }
    conn.close().await;
}
