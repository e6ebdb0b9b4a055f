//! Read-optimized reads and the latest view of a primary-key table on Apache Fluss 0.9 (no
//! ScanKv) once retention has removed the head of the changelog: both come from the buckets'
//! KV snapshots, RocksDB checkpoints that Fluss uploads to `remote.data.dir` and that Riverlet
//! reads (feature `kv-snapshot`) as Fluss's own client does: GetLatestKvSnapshots,
//! GetKvSnapshotMetadata, a local copy of the files, RocksDB opened read-only.
//!
//! The server must be Apache Fluss taking KV snapshots every few seconds, rolling small log
//! segments and tiering them often to a `remote.data.dir` this machine reads; the table's
//! `table.log.ttl` of a few seconds (set here) then expires the tiered segments, so the log no
//! longer starts at 0. For example:
//!
//! ```sh
//! tests/fluss-cluster/start.sh --conf 'kv.snapshot.interval: 1s' \
//!   --conf 'log.segment.file-size: 4kb' --conf 'remote.log.task-interval-duration: 1s' /tmp/fc
//! . /tmp/fc/bootstrap.env
//! RIVERLET_TEST_BOOTSTRAP=$FLUSS_BOOTSTRAP RIVERLET_TEST_FLUSS_KV_SNAPSHOTS=1 \
//!   ROCKSDB_LIB_DIR=/usr/lib/x86_64-linux-gnu \
//!   cargo test -p riverlet --features kv-snapshot --test kv_snapshot_cluster
//! tests/fluss-cluster/stop.sh --clean /tmp/fc
//! ```
//!
//! Without `RIVERLET_TEST_FLUSS_KV_SNAPSHOTS=1` (and against the embedded server, whose
//! snapshots are not RocksDB files; read_optimized.rs and pk_view_log_start.rs cover those) the
//! test reports itself as not applicable.

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch};

use common::*;
use riverlet::client::{OffsetSpec, Table};
use riverlet::metadata::{AddColumn, DataType, Schema, TableDescriptor};
use riverlet::proto::GetKvSnapshotMetadataRequest;
use riverlet::row::Datum;
use riverlet::ErrorKind;

const VAR: &str = "RIVERLET_TEST_FLUSS_KV_SNAPSHOTS";
const BUCKETS: i32 = 2;
/// How long the test waits for snapshots and for retention (the server's intervals are seconds).
const WAIT: Duration = Duration::from_secs(300);

/// A row's value columns: `v` and `n` (null for some keys).
type Value = (String, Option<i64>);

fn env() -> Option<TestEnv> {
    if !is_external() || std::env::var(VAR).ok().as_deref() != Some("1") {
        not_applicable(&format!(
            "{VAR}=1 is not set: the server is not known to be Apache Fluss taking KV snapshots \
             every few seconds and tiering small segments to a remote.data.dir this machine reads"
        ));
        return None;
    }
    Some(TestEnv::new())
}

fn rows_of(batches: &[RecordBatch]) -> BTreeMap<i32, Value> {
    let mut out = BTreeMap::new();
    for b in batches {
        let k = b.column_by_name("k").unwrap().as_primitive::<Int32Type>();
        let v = b.column_by_name("v").unwrap().as_string::<i32>();
        let n = b.column_by_name("n").unwrap().as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            let value = (v.value(i).to_string(), (!n.is_null(i)).then(|| n.value(i)));
            assert!(
                out.insert(k.value(i), value).is_none(),
                "key {} twice",
                k.value(i)
            );
        }
    }
    out
}

/// The partitions of the partitioned table (a key's partition follows from the key).
const PARTITIONS: [&str; 2] = ["a", "b"];

fn partition_of(k: i32) -> &'static str {
    PARTITIONS[(k % 2) as usize]
}

/// A row of the table: `k, v, n` and, when `partitioned`, `p`.
fn row(partitioned: bool, k: i32, v: Option<&str>, n: Option<i64>) -> Vec<Datum> {
    let mut r = vec![
        Datum::Int(k),
        v.map_or(Datum::Null, |v| Datum::String(v.to_string())),
        n.map_or(Datum::Null, Datum::BigInt),
    ];
    if partitioned {
        r.push(Datum::String(partition_of(k).to_string()));
    }
    r
}

/// Writes one round: new keys, updates of older ones, deletes of some; `model` follows.
async fn write_round(table: &Table, round: i32, model: &mut BTreeMap<i32, Value>) {
    let partitioned = table.info.descriptor.is_partitioned();
    let w = table.new_upsert_writer(None).unwrap();
    let mut upserts = Vec::new();
    for i in 0..40 {
        let k = round * 40 + i;
        let n = (k % 3 != 0).then_some(i64::from(k) * 1_000_003);
        upserts.push((
            k,
            (format!("r{round}-{}", "x".repeat((k % 17) as usize)), n),
        ));
    }
    if round > 0 {
        // update keys of the previous round
        for k in ((round - 1) * 40..round * 40).step_by(5) {
            upserts.push((k, (format!("upd{round}"), Some(-i64::from(k)))));
        }
    }
    let rows: Vec<Vec<Datum>> = upserts
        .iter()
        .map(|(k, (v, n))| row(partitioned, *k, Some(v), *n))
        .collect();
    w.upsert_rows(&rows).await.unwrap();
    for (k, v) in upserts {
        model.insert(k, v);
    }
    if round > 1 {
        // delete keys two rounds old
        let keys: Vec<i32> = ((round - 2) * 40..(round - 1) * 40).step_by(7).collect();
        let rows: Vec<Vec<Datum>> = keys
            .iter()
            .map(|k| row(partitioned, *k, None, None))
            .collect();
        w.delete_rows(&rows).await.unwrap();
        for k in keys {
            model.remove(&k);
        }
    }
    w.flush().await.unwrap();
}

/// The partitions to look at: (name, id), or one `None` for a table without partitions.
async fn partitions(table: &Table) -> Vec<Option<(String, i64)>> {
    if !table.info.descriptor.is_partitioned() {
        return vec![None];
    }
    let parts = table
        .conn
        .admin()
        .list_partitions(&table.info.table_path)
        .await
        .unwrap();
    assert_eq!(parts.len(), PARTITIONS.len(), "{parts:?}");
    parts
        .into_iter()
        .map(|p| Some((p.name, p.partition_id)))
        .collect()
}

/// Per (partition, bucket): (log start, high watermark, latest snapshot's log offset).
async fn bucket_state(table: &Table) -> BTreeMap<(String, i32), (i64, i64, Option<i64>)> {
    let path = &table.info.table_path;
    let admin = table.conn.admin();
    let mut out = BTreeMap::new();
    for part in partitions(table).await {
        let name = part.as_ref().map(|(n, _)| n.as_str());
        let earliest = admin
            .list_offsets(path, name, &[], OffsetSpec::Earliest)
            .await
            .unwrap();
        let hw = admin
            .list_offsets(path, name, &[], OffsetSpec::Latest)
            .await
            .unwrap();
        let snaps = admin.latest_kv_snapshots(path, name).await.unwrap();
        for b in 0..BUCKETS {
            let snap = snaps
                .iter()
                .find(|s| s.bucket == b)
                .and_then(|s| s.log_offset);
            out.insert(
                (name.unwrap_or("").to_string(), b),
                (earliest[&b], hw[&b], snap),
            );
        }
    }
    out
}

/// Waits until every bucket's latest snapshot covers its whole log and, when `log_cleaned`,
/// the log no longer starts at 0. Returns the last state seen.
async fn wait_for(
    table: &Table,
    log_cleaned: bool,
) -> BTreeMap<(String, i32), (i64, i64, Option<i64>)> {
    let deadline = Instant::now() + WAIT;
    loop {
        let state = bucket_state(table).await;
        let ready = state.values().all(|(start, hw, snap)| {
            *snap == Some(*hw) && (!log_cleaned || (*start > 0 && *start <= *hw))
        });
        if ready {
            return state;
        }
        assert!(
            Instant::now() < deadline,
            "after {WAIT:?} the buckets (log start, high watermark, snapshot offset) are \
             {state:?}: the server does not snapshot and expire the log as {VAR} says"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The buckets' latest snapshots are RocksDB checkpoints (what the reads below must open):
/// GetKvSnapshotMetadata names CURRENT, a MANIFEST and SST files.
async fn assert_rocksdb_snapshots(table: &Table) {
    let coordinator = table.conn.coordinator().await.unwrap();
    for part in partitions(table).await {
        let snaps = table
            .conn
            .admin()
            .latest_kv_snapshots(&table.info.table_path, part.as_ref().map(|p| p.0.as_str()))
            .await
            .unwrap();
        assert_eq!(snaps.len(), BUCKETS as usize, "{part:?}: {snaps:?}");
        for s in snaps {
            let req = GetKvSnapshotMetadataRequest {
                table_id: table.info.table_id,
                partition_id: part.as_ref().map(|p| p.1),
                bucket_id: s.bucket,
                snapshot_id: s.snapshot_id.unwrap(),
            };
            let meta = coordinator.request(&req).await.unwrap();
            let names: Vec<&str> = meta
                .snapshot_files
                .iter()
                .map(|f| f.local_file_name.as_str())
                .collect();
            assert!(
                names.contains(&"CURRENT")
                    && names.iter().any(|n| n.starts_with("MANIFEST-"))
                    && names.iter().any(|n| n.ends_with(".sst")),
                "{part:?} bucket {}: {names:?}",
                s.bucket
            );
        }
    }
}

/// A table of `schema` in BUCKETS buckets whose changelog head goes soon: segments are deleted
/// 3 s after they were tiered, one kept locally (with the cluster's small segments and tiering
/// every second, the log no longer starts at 0 within seconds).
fn short_lived_log(schema: Schema) -> riverlet::metadata::TableDescriptorBuilder {
    TableDescriptor::builder(schema)
        .distributed_by(Some(BUCKETS), Vec::<String>::new())
        .property("table.log.ttl", "3s")
        .property("table.log.tiered.local-segments", "1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_optimized_and_latest_view_come_from_rocksdb_snapshots_once_the_log_is_cleaned() {
    let Some(env) = env() else { return };
    check_table(&env, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_for_a_partitioned_table() {
    let Some(env) = env() else { return };
    check_table(&env, true).await;
}

async fn check_table(env: &TestEnv, partitioned: bool) {
    let conn = env.connect().await;
    let path = env.path(if partitioned {
        "pk_snap_part"
    } else {
        "pk_snap"
    });
    let mut schema = Schema::builder()
        .column("k", DataType::int().not_null())
        .column("v", DataType::string())
        .column("n", DataType::bigint());
    schema = if partitioned {
        schema
            .column("p", DataType::string().not_null())
            .primary_key(["k", "p"])
    } else {
        schema.primary_key(["k"])
    };
    let mut d = short_lived_log(schema.build().unwrap());
    if partitioned {
        d = d.partitioned_by(["p"]);
    }
    let table = create_table(&conn, &path, d.build().unwrap()).await;
    if partitioned {
        for p in PARTITIONS {
            conn.admin()
                .create_partition(
                    &path,
                    &riverlet::metadata::PartitionSpec::new([("p", p)]),
                    false,
                )
                .await
                .unwrap();
        }
    }

    let mut model = BTreeMap::new();
    for round in 0..30 {
        write_round(&table, round, &mut model).await;
    }
    let state = wait_for(&table, true).await;
    eprintln!("after the writes: {state:?}");
    assert_rocksdb_snapshots(&table).await;

    // The log head is gone: both reads need the snapshots.
    assert_eq!(
        rows_of(&table.scan().read_optimized(true).collect().await.unwrap()),
        model,
        "read-optimized"
    );
    assert_eq!(
        rows_of(&table.scan().collect().await.unwrap()),
        model,
        "latest view"
    );
    // Projection and a filter apply to snapshot rows as to any others.
    let some: Vec<i32> = table
        .scan()
        .read_optimized(true)
        .project(&["k"])
        .filter_text("k < 100")
        .collect()
        .await
        .unwrap()
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int32Type>().values().to_vec())
        .collect();
    let mut some = some;
    some.sort_unstable();
    assert_eq!(
        some,
        model
            .keys()
            .copied()
            .filter(|k| *k < 100)
            .collect::<Vec<_>>()
    );

    // Changes after the latest snapshot: the latest view merges the log from the snapshot's
    // offset (whether or not a newer snapshot has been taken meanwhile).
    let before = model.clone();
    write_round(&table, 30, &mut model).await;
    assert_ne!(before, model);
    assert_eq!(
        rows_of(&table.scan().collect().await.unwrap()),
        model,
        "latest view after more writes"
    );
    let state = wait_for(&table, true).await;
    eprintln!("after more writes: {state:?}");
    assert_eq!(
        rows_of(&table.scan().read_optimized(true).collect().await.unwrap()),
        model,
        "read-optimized once a snapshot covers the new writes"
    );
    conn.close().await;
}

/// A snapshot whose files cannot be read is an error naming the table, the bucket and the
/// file, for both reads (never rows silently missing, never a panic). Fluss takes no new
/// snapshot while nothing is written, so the damaged one stays the latest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_file_gone_is_an_error_naming_table_bucket_and_file() {
    let Some(env) = env() else { return };
    let conn = env.connect().await;
    let path = env.path("pk_snap_gone");
    let schema = Schema::builder()
        .column("k", DataType::int().not_null())
        .column("v", DataType::string())
        .column("n", DataType::bigint())
        .primary_key(["k"])
        .build()
        .unwrap();
    let d = short_lived_log(schema).build().unwrap();
    let table = create_table(&conn, &path, d).await;
    let mut model = BTreeMap::new();
    for round in 0..30 {
        write_round(&table, round, &mut model).await;
    }
    wait_for(&table, true).await;
    assert_eq!(
        rows_of(&table.scan().read_optimized(true).collect().await.unwrap()),
        model
    );

    let snaps = table
        .conn
        .admin()
        .latest_kv_snapshots(&path, None)
        .await
        .unwrap();
    let s = snaps.iter().find(|s| s.bucket == 1).unwrap();
    let meta = table
        .conn
        .coordinator()
        .await
        .unwrap()
        .request(&GetKvSnapshotMetadataRequest {
            table_id: table.info.table_id,
            partition_id: None,
            bucket_id: 1,
            snapshot_id: s.snapshot_id.unwrap(),
        })
        .await
        .unwrap();
    let current = meta
        .snapshot_files
        .iter()
        .find(|f| f.local_file_name == "CURRENT")
        .unwrap();
    let Some(local) = ["file://", "file:", ""]
        .iter()
        .find_map(|p| current.remote_path.strip_prefix(p))
        .filter(|p| p.starts_with('/') && std::path::Path::new(p).exists())
    else {
        not_applicable(&format!(
            "the snapshot file '{}' is not on this machine's file system",
            current.remote_path
        ));
        return;
    };
    // CURRENT is private to this snapshot (snap-N/): later snapshots do not use it.
    std::fs::remove_file(local).unwrap();

    for (what, read) in [
        ("read-optimized", table.scan().read_optimized(true)),
        ("latest view", table.scan()),
    ] {
        let e = read.collect().await.unwrap_err();
        let m = e.to_string();
        eprintln!("{what}: {:?}: {m}", e.kind());
        assert_eq!(e.kind(), ErrorKind::NotFound, "{what}: {e}");
        assert!(
            m.contains(&format!("{}", path))
                && m.contains("bucket 1")
                && m.contains(&current.remote_path),
            "{what}: {e:?}"
        );
    }
    conn.close().await;
}

/// Values written before an ADD COLUMN keep their schema id in the snapshot: they are decoded
/// with that schema and read with the added column null, as Fluss's `SnapshotFilesReader` maps
/// them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_of_an_older_schema_in_a_snapshot_get_the_added_column_null() {
    let Some(env) = env() else { return };
    let conn = env.connect().await;
    let path = env.path("pk_snap_evolved");
    let schema = Schema::builder()
        .column("k", DataType::int().not_null())
        .column("v", DataType::string())
        .primary_key(["k"])
        .build()
        .unwrap();
    let d = short_lived_log(schema).build().unwrap();
    let old = create_table(&conn, &path, d).await;
    let mut model = BTreeMap::new();
    let w = old.new_upsert_writer(None).unwrap();
    for k in 0..600 {
        let v = format!("old{k}-{}", "y".repeat((k % 13) as usize));
        w.upsert_row(&[Datum::Int(k), Datum::String(v.clone())])
            .await
            .unwrap();
        model.insert(k, (v, None));
    }
    w.flush().await.unwrap();
    conn.admin()
        .add_columns(&path, &[AddColumn::new("n", DataType::bigint())])
        .await
        .unwrap();
    let table = conn.table(&path).await.unwrap();
    // Rounds 15.. write keys 600.. (and update or delete some of the rows just before them).
    for round in 15..30 {
        write_round(&table, round, &mut model).await;
    }
    wait_for(&table, true).await;
    assert_rocksdb_snapshots(&table).await;
    assert!(model.values().any(|(_, n)| n.is_none()) && model.values().any(|(_, n)| n.is_some()));
    assert_eq!(
        rows_of(&table.scan().read_optimized(true).collect().await.unwrap()),
        model,
        "read-optimized"
    );
    assert_eq!(
        rows_of(&table.scan().collect().await.unwrap()),
        model,
        "latest view"
    );
    conn.close().await;
}
