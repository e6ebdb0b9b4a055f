//! Filter pushdown on batch statistics (issue 19 item 1): tables with
//! `table.statistics.columns` get Fluss 1.0's batches with statistics, reads send their filter
//! as FetchLog's `filter_predicate`, the server leaves out batches whose statistics exclude it,
//! and the rows a read returns never change.

use crate::common;

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type};
use arrow_array::{Array, Float64Array, Int32Array, RecordBatch, StringArray};
use common::*;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use riverlet::client::Table;
use riverlet::metadata::{DataType, Schema, TableDescriptor};
use riverlet::proto::{
    FetchLogRequest, PbFetchLogReqForBucket, PbFetchLogReqForTable, PbFetchLogRespForBucket,
};
use riverlet::record::{BatchFormat, LogBatchIter};
use riverlet::scan::parse_filter;
use riverlet::stats::{BatchStatistics, StatValue, StatsFilter};

fn schema() -> Schema {
    Schema::builder()
        .column("id", DataType::int().not_null())
        .column("name", DataType::string())
        .column("score", DataType::double())
        .column("payload", DataType::bytes())
        .build()
        .unwrap()
}

fn descriptor(stats: Option<&str>) -> TableDescriptor {
    let mut b = TableDescriptor::builder(schema()).distributed_by(Some(1), Vec::<String>::new());
    if let Some(s) = stats {
        b = b.property("table.statistics.columns", s);
    }
    b.build().unwrap()
}

/// One row: id, name (None = null), score (None = null).
type Row = (i32, Option<String>, Option<f64>);

/// Which rows a filter keeps, written out in Rust.
type Keep = Box<dyn Fn(&Row) -> bool>;

fn batch_of(rows: &[Row]) -> RecordBatch {
    RecordBatch::try_new(
        schema().to_arrow(),
        vec![
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(StringArray::from_iter(rows.iter().map(|r| r.1.clone()))),
            Arc::new(Float64Array::from_iter(rows.iter().map(|r| r.2))),
            Arc::new(arrow_array::BinaryArray::from_iter(
                rows.iter().map(|_| Some(&b"p"[..])),
            )),
        ],
    )
    .unwrap()
}

/// Writes each group as its own log batch (flushed before the next).
async fn write_batches(table: &Table, groups: &[Vec<Row>]) {
    let w = table.new_append_writer().unwrap();
    for g in groups {
        w.append_batch(&batch_of(g)).await.unwrap();
        w.flush().await.unwrap();
    }
}

fn rows_of(batches: &[RecordBatch]) -> Vec<String> {
    let mut out = Vec::new();
    for b in batches {
        let id = b.column_by_name("id").unwrap().as_primitive::<Int32Type>();
        let name = b.column_by_name("name").unwrap().as_string::<i32>();
        let score = b
            .column_by_name("score")
            .unwrap()
            .as_primitive::<Float64Type>();
        for i in 0..b.num_rows() {
            out.push(format!(
                "{} {:?} {:?}",
                id.value(i),
                (!name.is_null(i)).then(|| name.value(i)),
                (!score.is_null(i)).then(|| score.value(i)),
            ));
        }
    }
    out.sort();
    out
}

/// The skipped-batch counters (client, server) recorded for `table` so far.
fn skipped(table: &Table) -> (f64, f64) {
    let path = table.info().table_path.to_string();
    let mut client = 0.0;
    let mut server = 0.0;
    for s in riverlet::metrics::snapshot() {
        if !s.labels.iter().any(|(k, v)| k == "table" && *v == path) {
            continue;
        }
        if s.name == riverlet::metrics::CLIENT_SCAN_SKIPPED_BATCHES {
            client += s.value;
        } else if s.name == riverlet::metrics::SERVER_FETCH_SKIPPED_BATCHES {
            server += s.value;
        }
    }
    (client, server)
}

/// Ten batches of ten rows: batch k holds ids 10k..10k+9, names `n` + 3 digits, scores id / 2
/// except every seventh id (null).
fn ten_batches() -> Vec<Vec<Row>> {
    (0..10)
        .map(|k| {
            (10 * k..10 * k + 10)
                .map(|id| {
                    (
                        id,
                        Some(format!("n{id:03}")),
                        (id % 7 != 0).then_some(f64::from(id) / 2.0),
                    )
                })
                .collect()
        })
        .collect()
}

async fn raw_fetch(
    conn: &riverlet::client::Connection,
    table: &Table,
    offset: i64,
    filter: Option<&str>,
) -> PbFetchLogRespForBucket {
    let info = table.info();
    let predicate = filter.map(|f| {
        StatsFilter::from_expr(
            &parse_filter(f).unwrap(),
            &info.descriptor.schema,
            &[0, 1, 2],
        )
        .unwrap()
        .to_proto(&info.descriptor.schema)
        .unwrap()
    });
    let req = FetchLogRequest {
        follower_server_id: -1,
        max_bytes: 16 << 20,
        tables_req: vec![PbFetchLogReqForTable {
            table_id: info.table_id,
            projection_pushdown_enabled: false,
            projected_fields: vec![],
            buckets_req: vec![PbFetchLogReqForBucket {
                partition_id: None,
                bucket_id: 0,
                fetch_offset: offset,
                max_fetch_bytes: 16 << 20,
            }],
            filter_schema_id: predicate.as_ref().map(|_| info.schema_id),
            filter_predicate: predicate,
        }],
        max_wait_ms: Some(0),
        min_bytes: Some(0),
        read_preference: None,
    };
    let mut resp = conn
        .request_leader(info.table_id, None, 0, &req)
        .await
        .unwrap();
    resp.tables_resp.remove(0).buckets_resp.remove(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_skips_batches_by_statistics_and_rows_stay_exact() {
    riverlet::metrics::install();
    let Some(env) = TestEnv::embedded_only(
        "'table.statistics.columns' is a Fluss 1.0 property (Fluss 0.9.1 rejects it)",
        |_| {},
    ) else {
        return;
    };
    let conn = env.connect().await;
    let table = create_table(&conn, &env.path("stats"), descriptor(Some("id,name,score"))).await;
    let data = ten_batches();
    write_batches(&table, &data).await;

    // Every stored batch is Fluss 1.0's magic 1 with statistics of id, name and score, whose
    // values are the batch's own.
    let all = raw_fetch(&conn, &table, 0, None).await;
    let records = all.records.unwrap();
    let types = schema().data_types();
    let mut n = 0;
    for (k, b) in LogBatchIter::new(&records).enumerate() {
        let b = b.unwrap();
        assert_eq!(b.format(), BatchFormat::V1Statistics);
        assert!(b.is_valid());
        let st = BatchStatistics::decode(b.statistics(), &types).unwrap();
        let k = k as i32;
        assert_eq!(st.columns, vec![0, 1, 2]);
        assert_eq!(st.min[0], Some(StatValue::Long(i64::from(10 * k))));
        assert_eq!(st.max[0], Some(StatValue::Long(i64::from(10 * k + 9))));
        assert_eq!(st.min[1], Some(StatValue::Str(format!("n{:03}", 10 * k))));
        let nulls = (10 * k..10 * k + 10).filter(|i| i % 7 == 0).count() as i32;
        assert_eq!(st.null_counts, vec![0, 0, nulls]);
        n += 1;
    }
    assert_eq!(n, 10);

    // A raw filtered fetch: only the batches that may match, the range read, the count.
    let f = raw_fetch(&conn, &table, 0, Some("id BETWEEN 35 AND 42")).await;
    let kept: Vec<i64> = LogBatchIter::new(f.records.as_ref().unwrap())
        .map(|b| b.unwrap().base_offset())
        .collect();
    assert_eq!(kept, vec![30, 40]);
    assert_eq!(f.filtered_end_offset, Some(100));
    assert_eq!(f.skipped_batches, Some(8));
    let none = raw_fetch(&conn, &table, 0, Some("id > 1000")).await;
    assert!(none.records.unwrap_or_default().is_empty());
    assert_eq!(none.filtered_end_offset, Some(100));

    // Scans: exact rows, and the batches the server left out (every batch without a matching
    // row, since ids and names increase with the offset).
    let cases: Vec<(&str, Keep)> = vec![
        (
            "id BETWEEN 35 AND 42",
            Box::new(|r| (35..=42).contains(&r.0)),
        ),
        ("id = 77", Box::new(|r| r.0 == 77)),
        ("id <> 5", Box::new(|r| r.0 != 5)),
        ("id < 12", Box::new(|r| r.0 < 12)),
        ("id <= 9", Box::new(|r| r.0 <= 9)),
        ("id > 90", Box::new(|r| r.0 > 90)),
        ("id >= 90", Box::new(|r| r.0 >= 90)),
        ("id IN (3, 97)", Box::new(|r| r.0 == 3 || r.0 == 97)),
        ("name LIKE 'n05%'", Box::new(|r| r.0 / 10 == 5)),
        (
            "name LIKE '%7' AND id < 30",
            Box::new(|r| r.0 % 10 == 7 && r.0 < 30),
        ),
        (
            "name LIKE 'n06%' OR id = 99",
            Box::new(|r| r.0 / 10 == 6 || r.0 == 99),
        ),
        (
            "score IS NULL AND id >= 50",
            Box::new(|r| r.2.is_none() && r.0 >= 50),
        ),
        (
            "score IS NOT NULL AND id < 3",
            Box::new(|r| r.2.is_some() && r.0 < 3),
        ),
        ("score > 44.5", Box::new(|r| r.2.is_some_and(|s| s > 44.5))),
        ("NOT (id >= 20)", Box::new(|r| r.0 < 20)),
        ("id = 5 AND payload IS NOT NULL", Box::new(|r| r.0 == 5)),
    ];
    for (text, keep) in cases {
        let before = skipped(&table);
        let got = table.scan().filter_text(text).collect().await.unwrap();
        let want: Vec<Row> = data.iter().flatten().filter(|r| keep(r)).cloned().collect();
        assert_eq!(rows_of(&got), rows_of(&[batch_of(&want)]), "{text}");
        let expected_skips = data.iter().filter(|g| !g.iter().any(&keep)).count() as f64;
        let after = skipped(&table);
        assert_eq!(after.0 - before.0, expected_skips, "client count, {text}");
        assert_eq!(after.1 - before.1, expected_skips, "server count, {text}");
    }

    // Statistics cannot decide infix and suffix matches (Fluss's Contains / EndsWith always
    // may match): nothing is skipped, the rows are still exact.
    let before = skipped(&table);
    let got = table
        .scan()
        .filter_text("name LIKE '%06%'")
        .collect()
        .await
        .unwrap();
    let want: Vec<Row> = data
        .iter()
        .flatten()
        .filter(|r| r.1.as_deref().is_some_and(|n| n.contains("06")))
        .cloned()
        .collect();
    assert_eq!(rows_of(&got), rows_of(&[batch_of(&want)]));
    assert_eq!(skipped(&table), before);

    // Filters that cannot be pushed change nothing on the server.
    let before = skipped(&table);
    for text in ["payload IS NULL", "id = 5 OR payload IS NULL", "id < 2.5"] {
        let got = table.scan().filter_text(text).collect().await.unwrap();
        let _ = got;
    }
    assert_eq!(skipped(&table), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statistics_columns_are_checked_at_creation() {
    let Some(env) = TestEnv::embedded_only(
        "'table.statistics.columns' is a Fluss 1.0 property (Fluss 0.9.1 rejects it)",
        |_| {},
    ) else {
        return;
    };
    let conn = env.connect().await;
    let admin = conn.admin();
    admin.create_database(&env.db, true).await.unwrap();
    let bad = |s: &str| descriptor(Some(s));
    for (d, msg) in [
        (
            bad("nope"),
            "Column 'nope' specified in statistics collection",
        ),
        (bad("payload"), "is not supported for statistics collection"),
        (
            TableDescriptor::builder(
                Schema::builder()
                    .column("id", DataType::int().not_null())
                    .primary_key(["id"])
                    .build()
                    .unwrap(),
            )
            .property("table.statistics.columns", "id")
            .build()
            .unwrap(),
            "not supported for primary key tables",
        ),
    ] {
        let e = admin
            .create_table(&env.path("bad_stats"), &d, false)
            .await
            .unwrap_err();
        assert!(e.to_string().contains(msg), "{e}");
    }
    // `*` picks every column of a supported type (not the BYTES one).
    let t = create_table(&conn, &env.path("all_stats"), descriptor(Some("*"))).await;
    write_batches(&t, &ten_batches()[..1]).await;
    let f = raw_fetch(&conn, &t, 0, None).await;
    let records = f.records.unwrap();
    let b = LogBatchIter::new(&records).next().unwrap().unwrap();
    let st = BatchStatistics::decode(b.statistics(), &schema().data_types()).unwrap();
    assert_eq!(st.columns, vec![0, 1, 2]);
}

/// Random rows in random batches and random filters: the rows a read returns are the same
/// whether the server may skip batches (a table with statistics) or not (the same rows in a
/// table without them), and the exact filter alone decides them.
#[test]
fn pushdown_never_changes_the_rows() {
    riverlet::metrics::install();
    let Some(env) = TestEnv::embedded_only(
        "'table.statistics.columns' is a Fluss 1.0 property (Fluss 0.9.1 rejects it)",
        |_| {},
    ) else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases: 1,
            ..Config::default()
        },
        proptest::test_runner::TestRng::deterministic_rng(
            proptest::test_runner::RngAlgorithm::ChaCha,
        ),
    );
    let row = (
        0..120i32,
        prop::option::weighted(0.85, 0..1000u32),
        prop::option::weighted(0.8, -50.0..50.0f64),
    )
        .prop_map(|(id, n, s)| (id, n.map(|n| format!("n{n:03}")), s));
    let groups = prop::collection::vec(
        prop::collection::vec(row, 1..25).prop_map(|mut g| {
            // sorted groups make statistics selective, as ingestion in key order does
            g.sort_by_key(|r| r.0);
            g
        }),
        8..16,
    );
    let data = groups.new_tree(&mut runner).unwrap().current();
    let (with, without) = rt.block_on(async {
        let conn = env.connect().await;
        let with = create_table(&conn, &env.path("prop_with"), descriptor(Some("*"))).await;
        let without = create_table(&conn, &env.path("prop_without"), descriptor(None)).await;
        write_batches(&with, &data).await;
        write_batches(&without, &data).await;
        (with, without)
    });

    let cases = std::sync::atomic::AtomicUsize::new(0);
    runner = TestRunner::new(Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&filter_text(), |text| {
            let (a, b) = rt.block_on(async {
                let a = with.scan().filter_text(&text).collect().await.unwrap();
                let b = without.scan().filter_text(&text).collect().await.unwrap();
                (a, b)
            });
            prop_assert_eq!(rows_of(&a), rows_of(&b), "{}", text);
            cases.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok(())
        })
        .unwrap();
    assert!(cases.into_inner() >= 64);
    // the server did leave batches out on the way
    assert!(skipped(&with).1 > 0.0);
    assert_eq!(skipped(&without), (0.0, 0.0));
}

/// Random filters over id / name / score with every pushed operator, AND, OR and NOT.
fn filter_text() -> impl Strategy<Value = String> {
    let cmp = prop::sample::select(vec!["=", "<>", "<", "<=", ">", ">="]);
    let leaf = prop_oneof![
        (cmp.clone(), -5..125i32).prop_map(|(op, v)| format!("id {op} {v}")),
        (cmp.clone(), -60..60i32).prop_map(|(op, v)| format!("score {op} {}.5", v)),
        (cmp, 0..1000u32).prop_map(|(op, v)| format!("name {op} 'n{v:03}'")),
        (-5..125i32, 0..40i32).prop_map(|(a, w)| format!("id BETWEEN {a} AND {}", a + w)),
        prop::collection::vec(-5..125i32, 1..4).prop_map(|v| format!(
            "id IN ({})",
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        prop::collection::vec(-5..125i32, 1..3).prop_map(|v| format!(
            "id NOT IN ({})",
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Just("score IS NULL".to_string()),
        Just("name IS NOT NULL".to_string()),
        (0..100u32).prop_map(|v| format!("name LIKE 'n{v:02}%'")),
        (0..10u32).prop_map(|v| format!("name LIKE '%{v}'")),
        (0..100u32).prop_map(|v| format!("name LIKE '%{v:02}%'")),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) AND ({b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) OR ({b})")),
            inner.prop_map(|a| format!("NOT ({a})")),
        ]
    })
}
