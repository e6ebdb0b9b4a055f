//! Lake reads over Paimon (a module of `lake_reads`): the embedded server tiers lake-enabled
//! tables to a Paimon filesystem catalog (`datalake.format = paimon`), and the client reads
//! `t$lake`, `t$lake$snapshots` and the union read of a log table and of a primary-key table
//! (the lake's merged state with the changelog after it folded over, the log winning by key).
//! Expected rows are the ones the test wrote; removing the lake's data files must make the
//! union reads fail, which proves they read the lake and not only the log (which still holds
//! every change). After `ALTER TABLE ... ADD COLUMN` the same reads give the rows tiered or
//! written before it NULL in the new column and the later ones their values.

use super::kv_rows::{delete, expected as kv_expected, pk_table_with, rows_of, upsert};
use super::*;
use riverlet::metadata::AddColumn;
use riverlet::row::Datum;

const LAKE_PROPS: [(&str, &str); 2] = [
    ("table.datalake.enabled", "true"),
    ("table.datalake.freshness", "1h"),
];

/// Removes every data file (not the metadata) of Paimon table `db.table` under `warehouse`:
/// the bucket directories (`bucket-N`) hold them.
fn remove_lake_data(warehouse: &std::path::Path, db: &str, table: &str) -> usize {
    remove_lake_data_but(warehouse, db, table, None)
}

/// [`remove_lake_data`], but not the files under the partition directory `keep` (relative to
/// the table, e.g. `symbol=MSFT/account_id=3`) when given.
fn remove_lake_data_but(
    warehouse: &std::path::Path,
    db: &str,
    table: &str,
    keep: Option<&std::path::Path>,
) -> usize {
    let dir = warehouse.join(format!("{db}.db")).join(table);
    let kept = keep.map(|k| dir.join(k));
    let mut removed = 0;
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                let data_dir = name.starts_with("bucket-") || name.contains('=');
                if data_dir && !kept.as_ref().is_some_and(|k| p.starts_with(k)) {
                    stack.push(p);
                }
            } else if d != dir {
                std::fs::remove_file(&p).unwrap();
                removed += 1;
            }
        }
    }
    removed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paimon_log_table_lake_views_and_union_read() {
    let warehouse = tempfile::tempdir().unwrap();
    let wh = warehouse.path().join("paimon");
    let Some(env) = TestEnv::embedded_paimon_lake(&wh) else {
        return;
    };
    let conn = env.connect().await;
    let path = env.path("trades");
    let table = create_table(&conn, &path, lake_trades(3)).await;
    let info = table.info();
    assert_eq!(
        info.descriptor.property("table.datalake.format"),
        Some("paimon")
    );
    assert_eq!(
        info.descriptor.property("table.datalake.paimon.warehouse"),
        wh.to_str()
    );
    let name = path.to_string();
    let (lake, snaps) = (format!("{name}$lake"), format!("{name}$lake$snapshots"));
    let all = ReadRequest::default();

    let first = trades(0..40);
    write(&table, &first).await;
    assert_eq!(total_rows(&read(&conn, &lake, &all).await), 0);
    assert_eq!(total_rows(&read(&conn, &snaps, &all).await), 0);
    let server = env.server.as_ref().unwrap();
    server.commit_lake().unwrap();
    let second = trades(40..65);
    write(&table, &second).await;
    server.commit_lake().unwrap();
    let third = trades(65..90);
    write(&table, &third).await;
    let in_lake: Vec<Trade> = first.iter().chain(&second).copied().collect();
    let everything: Vec<Trade> = in_lake.iter().chain(&third).copied().collect();

    // $lake: the rows of the two commits, each once, with Fluss's system columns.
    let lake_rows = read(&conn, &lake, &all).await;
    assert_eq!(trades_of(&lake_rows), expected(&in_lake));
    let mut positions: Vec<(i32, i64)> = lake_rows
        .iter()
        .flat_map(|b| {
            let (bk, off) = (
                col::<Int32Array>(b, "__bucket"),
                col::<Int64Array>(b, "__offset"),
            );
            (0..b.num_rows())
                .map(|i| (bk.value(i), off.value(i)))
                .collect::<Vec<_>>()
        })
        .collect();
    positions.sort();
    positions.dedup();
    assert_eq!(positions.len(), in_lake.len(), "each (bucket, offset) once");

    // $lake$snapshots: Paimon's snapshots table, one APPEND per commit by Fluss's user.
    let s = read(&conn, &snaps, &all).await;
    assert_eq!(total_rows(&s), 2);
    let b = &s[0];
    let ids = col::<Int64Array>(b, "snapshot_id");
    assert_eq!((ids.value(0), ids.value(1)), (1, 2));
    let users = col::<StringArray>(b, "commit_user");
    let kinds = col::<StringArray>(b, "commit_kind");
    for i in 0..2 {
        assert_eq!(users.value(i), "__fluss_lake_tiering");
        assert_eq!(kinds.value(i), "APPEND");
    }
    let counts = col::<Int64Array>(b, "total_record_count");
    assert_eq!(counts.value(1), in_lake.len() as i64);
    // GetLakeSnapshot reports the newest Paimon snapshot.
    let latest = conn.admin().lake_snapshot(&path, None).await.unwrap();
    assert_eq!(latest.snapshot_id, 2);

    // The union read: every row once; a time-range read never opens the lake.
    assert_eq!(
        trades_of(&read(&conn, &name, &all).await),
        expected(&everything)
    );
    let removed = remove_lake_data(&wh, &path.database, &path.table);
    assert!(removed > 0, "the lake has data files");
    let t = conn.table(&path).await.unwrap();
    let err = all
        .to_scan(&t)
        .collect()
        .await
        .expect_err("the union read reads the lake's (removed) files");
    assert!(
        err.to_string().contains("Paimon") || err.to_string().contains("lake"),
        "{err}"
    );
    let window = ReadRequest {
        start: Some(0i64.into()),
        ..Default::default()
    };
    assert_eq!(
        trades_of(&read(&conn, &name, &window).await),
        expected(&everything)
    );
}

/// [`partitioned_union_reads`](super::partitioned_union_reads) on Paimon (the partition key
/// is the Paimon table's, `symbol=<value>/bucket-N/` directories).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partitioned_union_reads_on_paimon() {
    let warehouse = tempfile::tempdir().unwrap();
    let wh = warehouse.path().join("paimon");
    let Some(env) = TestEnv::embedded_paimon_lake(&wh) else {
        return;
    };
    super::partitioned_union_reads(&env, |path| {
        remove_lake_data(&wh, &path.database, &path.table)
    })
    .await;
}

/// A read of some partitions plans only their Paimon splits: with every other partition's
/// data files removed, the union read of a log table partitioned by a STRING and an INT key
/// (Fluss names `MSFT$3`) and of a primary-key table partitioned the same way still returns
/// exactly the kept partition's rows; a read of a removed partition fails, so the files
/// removed were the lake's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paimon_reads_of_some_partitions_read_only_their_files() {
    use riverlet::metadata::PartitionSpec;
    let warehouse = tempfile::tempdir().unwrap();
    let wh = warehouse.path().join("paimon");
    let Some(env) = TestEnv::embedded_paimon_lake(&wh) else {
        return;
    };
    let conn = env.connect().await;
    let server = env.server.as_ref().unwrap();
    let symbols = ["AAPL", "MSFT"];
    let accounts = 0..7;
    let part = |s: &str, a: i32| format!("{s}${a}");

    // A log table partitioned by (symbol, account_id).
    let path = env.path("trades_by_symbol_account");
    let d = TableDescriptor::builder(trades_schema())
        .partitioned_by(["symbol", "account_id"])
        .distributed_by(Some(2), Vec::<String>::new())
        .property(LAKE_PROPS[0].0, LAKE_PROPS[0].1)
        .property(LAKE_PROPS[1].0, LAKE_PROPS[1].1)
        .build()
        .unwrap();
    let table = create_table(&conn, &path, d).await;
    for s in symbols {
        for a in accounts.clone() {
            let spec =
                PartitionSpec::new([("symbol", s.to_string()), ("account_id", a.to_string())]);
            conn.admin()
                .create_partition(&path, &spec, false)
                .await
                .unwrap();
        }
    }
    let table = conn.table(&table.info().table_path).await.unwrap();
    let rows: Vec<Trade> = trades(0..120)
        .into_iter()
        .filter(|t| symbols.contains(&t.4))
        .collect();
    write(&table, &rows).await;

    // A primary-key table partitioned by region, its key (region, k).
    let kv_path = env.path("kv_by_region");
    let schema = Schema::builder()
        .column("region", DataType::string().not_null())
        .column("k", DataType::int().not_null())
        .column("v", DataType::string())
        .primary_key(["region", "k"])
        .build()
        .unwrap();
    let d = TableDescriptor::builder(schema)
        .partitioned_by(["region"])
        .distributed_by(Some(2), Vec::<String>::new())
        .property(LAKE_PROPS[0].0, LAKE_PROPS[0].1)
        .property(LAKE_PROPS[1].0, LAKE_PROPS[1].1)
        .build()
        .unwrap();
    let kv = create_table(&conn, &kv_path, d).await;
    for r in ["east", "west"] {
        conn.admin()
            .create_partition(&kv_path, &PartitionSpec::new([("region", r)]), false)
            .await
            .unwrap();
    }
    let kv = conn.table(&kv.info().table_path).await.unwrap();
    let kv_rows = |region: &str, ks: std::ops::Range<i32>, tag: &str| -> Vec<Vec<Datum>> {
        ks.map(|k| {
            vec![
                Datum::String(region.into()),
                Datum::Int(k),
                Datum::String(format!("{tag}{k}")),
            ]
        })
        .collect()
    };
    let w = kv.new_upsert_writer(None).unwrap();
    for r in ["east", "west"] {
        w.upsert_rows(&kv_rows(r, 0..10, "a")).await.unwrap();
    }
    w.flush().await.unwrap();
    server.commit_lake().unwrap();
    // After the commit: keys 0..3 of each region change in the log only.
    for r in ["east", "west"] {
        w.upsert_rows(&kv_rows(r, 0..3, "b")).await.unwrap();
    }
    w.flush().await.unwrap();

    let name = path.to_string();
    let only = |names: Vec<String>| ReadRequest {
        partitions: Some(names.into_iter().map(Into::into).collect()),
        ..ReadRequest::default()
    };
    let msft3: Vec<Trade> = rows
        .iter()
        .filter(|t| t.4 == "MSFT" && t.1 == 3)
        .copied()
        .collect();
    assert!(!msft3.is_empty());
    assert_eq!(
        trades_of(&read(&conn, &name, &only(vec![part("MSFT", 3)])).await),
        expected(&msft3)
    );
    let east: BTreeMap<i32, String> = (0..10)
        .map(|k| (k, format!("{}{k}", if k < 3 { "b" } else { "a" })))
        .collect();
    let east_of = |batches: &[RecordBatch]| -> BTreeMap<i32, String> {
        let mut out = BTreeMap::new();
        for b in batches {
            let (region, k, v) = (
                col::<StringArray>(b, "region"),
                col::<Int32Array>(b, "k"),
                col::<StringArray>(b, "v"),
            );
            for i in 0..b.num_rows() {
                assert_eq!(region.value(i), "east");
                assert!(out.insert(k.value(i), v.value(i).to_string()).is_none());
            }
        }
        out
    };
    let kv_name = kv_path.to_string();
    assert_eq!(
        east_of(&read(&conn, &kv_name, &only(vec!["east".into()])).await),
        east
    );

    // Without the other partitions' data files, the same reads give the same rows.
    let keep = std::path::Path::new("symbol=MSFT/account_id=3");
    assert!(remove_lake_data_but(&wh, &path.database, &path.table, Some(keep)) > 0);
    assert!(
        remove_lake_data_but(
            &wh,
            &kv_path.database,
            &kv_path.table,
            Some(std::path::Path::new("region=east"))
        ) > 0
    );
    assert_eq!(
        trades_of(&read(&conn, &name, &only(vec![part("MSFT", 3)])).await),
        expected(&msft3)
    );
    assert_eq!(
        east_of(&read(&conn, &kv_name, &only(vec!["east".into()])).await),
        east
    );
    // The removed files were the lake's: a read of their partitions fails.
    for (table_path, partition) in [(&path, part("MSFT", 4)), (&kv_path, "west".to_string())] {
        let t = conn.table(table_path).await.unwrap();
        only(vec![partition.clone()])
            .to_scan(&t)
            .collect()
            .await
            .expect_err("the union read of a partition whose lake files are removed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paimon_primary_key_union_read_lets_the_log_win_by_key() {
    let warehouse = tempfile::tempdir().unwrap();
    let wh = warehouse.path().join("paimon");
    let Some(env) = TestEnv::embedded_paimon_lake(&wh) else {
        return;
    };
    let conn = env.connect().await;
    let table = pk_table_with(&conn, "kv_lake", 2, &LAKE_PROPS).await;
    let path = TablePath::new("d", "kv_lake");
    let name = path.to_string();
    let all = ReadRequest::default();
    let server = env.server.as_ref().unwrap();

    upsert(&table, &[(1, "a1"), (2, "a2"), (3, "a3"), (4, "a4")]).await;
    upsert(&table, &[(2, "b2")]).await;
    delete(&table, &[3]).await;
    server.commit_lake().unwrap();
    let at_commit = kv_expected(&[(1, "a1"), (2, "b2"), (4, "a4")]);
    // $lake: the lake's merged state at the commit, one row per key.
    assert_eq!(
        rows_of(&read(&conn, &format!("{name}$lake"), &all).await),
        at_commit
    );

    // Changes after the commit: only in the log. They win by key; a delete removes the key.
    upsert(&table, &[(1, "c1"), (5, "c5"), (3, "c3")]).await;
    delete(&table, &[4]).await;
    let latest = kv_expected(&[(1, "c1"), (2, "b2"), (3, "c3"), (5, "c5")]);
    assert_eq!(rows_of(&read(&conn, &name, &all).await), latest);
    // A second commit merges them into the lake.
    server.commit_lake().unwrap();
    assert_eq!(
        rows_of(&read(&conn, &format!("{name}$lake"), &all).await),
        latest
    );
    upsert(&table, &[(2, "d2")]).await;
    let newest = kv_expected(&[(1, "c1"), (2, "d2"), (3, "c3"), (5, "c5")]);
    assert_eq!(rows_of(&read(&conn, &name, &all).await), newest);

    // The read folds the log over the lake: without the lake's files it cannot.
    assert!(remove_lake_data(&wh, &path.database, &path.table) > 0);
    let t = conn.table(&path).await.unwrap();
    all.to_scan(&t)
        .collect()
        .await
        .expect_err("the primary-key union read reads the lake's (removed) files");
}

/// A full subscription of a primary-key table with a Paimon lake starts, as Fluss's streaming
/// union read does, from each bucket's merged state in the lake with the changelog after it
/// folded over (the latest view, as inserts), then follows the log: later changes arrive as
/// changes. Without the lake's data files the subscription fails: it reads the lake, where the
/// embedded server's ScanKv alone would give the same first rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paimon_primary_key_full_subscription_starts_from_the_lake() {
    use riverlet::record::ChangeType;
    use riverlet::scan::{StartupMode, SubscribeRequest};
    let warehouse = tempfile::tempdir().unwrap();
    let wh = warehouse.path().join("paimon");
    let Some(env) = TestEnv::embedded_paimon_lake(&wh) else {
        return;
    };
    let conn = env.connect().await;
    let table = pk_table_with(&conn, "kv_sub", 2, &LAKE_PROPS).await;
    let path = TablePath::new("d", "kv_sub");
    upsert(&table, &[(1, "a1"), (2, "a2"), (3, "a3"), (4, "a4")]).await;
    delete(&table, &[3]).await;
    env.server.as_ref().unwrap().commit_lake().unwrap();
    // after the commit, in the log only: an update, a new key, a delete
    upsert(&table, &[(1, "b1"), (5, "b5")]).await;
    delete(&table, &[4]).await;

    let mut sub = table
        .subscribe_request(&SubscribeRequest::new(StartupMode::Full))
        .await
        .unwrap();
    let mut first = Vec::new();
    for cb in sub.poll(Duration::from_millis(100)).await.unwrap() {
        assert_eq!(cb.first_offset, -1, "the latest view comes first");
        assert!(cb.change_types.iter().all(|c| *c == ChangeType::Insert));
        first.push(cb.batch);
    }
    assert_eq!(
        rows_of(&first),
        kv_expected(&[(1, "b1"), (2, "a2"), (5, "b5")])
    );
    // Then the log from where that view ends: only changes made after subscribing.
    upsert(&table, &[(2, "c2")]).await;
    let mut later = Vec::new();
    for _ in 0..600 {
        for cb in sub.poll(Duration::from_millis(100)).await.unwrap() {
            for (i, c) in cb.change_types.iter().enumerate() {
                later.push((*c, rows_of(&[cb.batch.slice(i, 1)])));
            }
        }
        if later.iter().any(|(c, _)| *c == ChangeType::UpdateAfter) {
            break;
        }
    }
    assert_eq!(
        later,
        vec![
            (ChangeType::UpdateBefore, kv_expected(&[(2, "a2")])),
            (ChangeType::UpdateAfter, kv_expected(&[(2, "c2")])),
        ]
    );

    assert!(remove_lake_data(&wh, &path.database, &path.table) > 0);
    let t = conn.table(&path).await.unwrap();
    let err = t
        .subscribe_request(&SubscribeRequest::new(StartupMode::Full))
        .await
        .expect_err("a full subscription reads the lake's (removed) files");
    assert!(err.to_string().contains("kv_sub"), "{err}");
}

/// (id, page, referrer) of a visit; `referrer` is the column added by ALTER.
type Visit = (i32, String, Option<String>);

fn visit(id: i32, referrer: Option<&str>) -> Visit {
    (id, format!("/v{id}"), referrer.map(str::to_string))
}

/// Appends visits through a writer of the table's current schema (`with_referrer`: the one
/// after the ALTER).
async fn write_visits(table: &Table, visits: &[Visit], with_referrer: bool) {
    let w = table.new_append_writer().unwrap();
    let rows: Vec<Vec<Datum>> = visits
        .iter()
        .map(|(id, page, referrer)| {
            let mut row = vec![Datum::Int(*id), Datum::String(page.clone())];
            if with_referrer {
                row.push(referrer.clone().map_or(Datum::Null, Datum::String));
            } else {
                assert!(referrer.is_none());
            }
            row
        })
        .collect();
    w.append_rows(&rows).await.unwrap();
    w.flush().await.unwrap();
}

/// The visits of `batches`, sorted (every column by name).
fn visits_of(batches: &[RecordBatch]) -> Vec<Visit> {
    let mut out = Vec::new();
    for b in batches {
        let (id, page, referrer) = (
            col::<Int32Array>(b, "id"),
            col::<StringArray>(b, "page"),
            col::<StringArray>(b, "referrer"),
        );
        for i in 0..b.num_rows() {
            out.push((
                id.value(i),
                page.value(i).to_string(),
                referrer.is_valid(i).then(|| referrer.value(i).to_string()),
            ));
        }
    }
    out.sort();
    out
}

/// k -> (v, level) of `batches`; `level` is the column added by ALTER. A key twice fails.
fn levels_of(batches: &[RecordBatch]) -> BTreeMap<i32, (String, Option<i64>)> {
    let mut out = BTreeMap::new();
    for b in batches {
        let (k, v, level) = (
            col::<Int32Array>(b, "k"),
            col::<StringArray>(b, "v"),
            col::<Int64Array>(b, "level"),
        );
        for i in 0..b.num_rows() {
            let prev = out.insert(
                k.value(i),
                (
                    v.value(i).to_string(),
                    level.is_valid(i).then(|| level.value(i)),
                ),
            );
            assert!(prev.is_none(), "key {} twice", k.value(i));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paimon_reads_after_add_column_give_older_rows_null() {
    let warehouse = tempfile::tempdir().unwrap();
    let wh = warehouse.path().join("paimon");
    let Some(env) = TestEnv::embedded_paimon_lake(&wh) else {
        return;
    };
    let conn = env.connect().await;
    let server = env.server.as_ref().unwrap();
    let all = ReadRequest::default();

    // a log table: rows tiered before the ALTER, rows of the old schema tiered after it, rows
    // of the new schema tiered, and rows of the new schema only in the log
    let path = env.path("visits");
    let schema = Schema::builder()
        .column("id", DataType::int())
        .column("page", DataType::string())
        .build()
        .unwrap();
    let mut d = TableDescriptor::builder(schema).distributed_by(Some(2), Vec::<String>::new());
    for (k, v) in LAKE_PROPS {
        d = d.property(k, v);
    }
    let before = create_table(&conn, &path, d.build().unwrap()).await;
    let first: Vec<Visit> = (0..5).map(|i| visit(i, None)).collect();
    write_visits(&before, &first, false).await;
    server.commit_lake().unwrap();
    let old_schema: Vec<Visit> = (5..8).map(|i| visit(i, None)).collect();
    write_visits(&before, &old_schema, false).await;
    conn.admin()
        .add_columns(&path, &[AddColumn::new("referrer", DataType::string())])
        .await
        .unwrap();
    let after = conn.table(&path).await.unwrap();
    assert_eq!(after.info.schema_id, 2);
    let tiered_new = [
        visit(8, Some("/home")),
        visit(9, None),
        visit(10, Some("/ad")),
    ];
    write_visits(&after, &tiered_new, true).await;
    server.commit_lake().unwrap();
    let log_only = [visit(11, Some("/mail")), visit(12, None)];
    write_visits(&after, &log_only, true).await;

    let name = path.to_string();
    let lake = read(&conn, &format!("{name}$lake"), &all).await;
    let names: Vec<String> = lake[0]
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(
        names,
        [
            "id",
            "page",
            "referrer",
            "__bucket",
            "__offset",
            "__timestamp"
        ]
    );
    let in_lake: Vec<Visit> = first
        .iter()
        .chain(&old_schema)
        .chain(&tiered_new)
        .cloned()
        .collect();
    let mut want = in_lake.clone();
    want.sort();
    assert_eq!(visits_of(&lake), want, "$lake");
    let mut everything: Vec<Visit> = in_lake.iter().chain(&log_only).cloned().collect();
    everything.sort();
    assert_eq!(
        visits_of(&read(&conn, &name, &all).await),
        everything,
        "union read"
    );

    // a primary-key table: the lake's merged state (keys of both schemas) with the changelog
    // after it folded over, the log winning by key
    let table = pk_table_with(&conn, "kv_evolve", 2, &LAKE_PROPS).await;
    let kv = TablePath::new("d", "kv_evolve");
    upsert(&table, &[(1, "a1"), (2, "a2"), (3, "a3")]).await;
    server.commit_lake().unwrap();
    upsert(&table, &[(2, "b2")]).await;
    conn.admin()
        .add_columns(&kv, &[AddColumn::new("level", DataType::bigint())])
        .await
        .unwrap();
    let table = conn.table(&kv).await.unwrap();
    let w = table.new_upsert_writer(None).unwrap();
    w.upsert_rows(&[
        vec![Datum::Int(1), Datum::String("c1".into()), Datum::BigInt(10)],
        vec![Datum::Int(4), Datum::String("c4".into()), Datum::Null],
    ])
    .await
    .unwrap();
    w.delete_rows(&[vec![Datum::Int(3), Datum::Null, Datum::Null]])
        .await
        .unwrap();
    w.flush().await.unwrap();
    server.commit_lake().unwrap();
    w.upsert_rows(&[vec![
        Datum::Int(4),
        Datum::String("d4".into()),
        Datum::BigInt(44),
    ]])
    .await
    .unwrap();
    w.flush().await.unwrap();
    let state = |rows: &[(i32, &str, Option<i64>)]| -> BTreeMap<i32, (String, Option<i64>)> {
        rows.iter()
            .map(|(k, v, l)| (*k, (v.to_string(), *l)))
            .collect()
    };
    let kv_name = kv.to_string();
    assert_eq!(
        levels_of(&read(&conn, &format!("{kv_name}$lake"), &all).await),
        state(&[(1, "c1", Some(10)), (2, "b2", None), (4, "c4", None)]),
        "$lake"
    );
    assert_eq!(
        levels_of(&read(&conn, &kv_name, &all).await),
        state(&[(1, "c1", Some(10)), (2, "b2", None), (4, "d4", Some(44))]),
        "primary-key union read"
    );
}
