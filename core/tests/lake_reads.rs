//! Lake reads through the client against the embedded server tiering to Iceberg: the
//! quickstart's `trades` table read as `trades$lake` (the lake only), `trades$lake$snapshots`
//! (one row per tiering commit) and plainly (the union of the lake snapshot and the Fluss log
//! after it), each checked against totals computed from the rows written. A time-range read
//! never opens the lake.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::{
    Array, Decimal128Array, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMillisecondArray,
};
use common::*;
use riverlet::client::{Connection, Table};
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet::scan::ReadRequest;
use riverlet::ErrorKind;

/// One trade: (trade_id, account_id, notional in cents, side, symbol).
type Trade = (i64, i32, i128, &'static str, &'static str);

const SYMBOLS: [&str; 6] = ["AAPL", "MSFT", "NVDA", "AMZN", "GOOG", "TSLA"];

fn trades(ids: std::ops::Range<i64>) -> Vec<Trade> {
    ids.map(|i| {
        let side = if i % 3 == 0 { "SELL" } else { "BUY" };
        let cents = (i as i128 * 7919) % 1_000_000 + 100;
        (i, (i % 7) as i32, cents, side, SYMBOLS[(i % 6) as usize])
    })
    .collect()
}

fn trades_schema() -> Schema {
    Schema::builder()
        .column("trade_id", DataType::bigint().not_null())
        .column("account_id", DataType::int())
        .column("notional", DataType::decimal(18, 2))
        .column("side", DataType::string())
        .column("symbol", DataType::string())
        .build()
        .unwrap()
}

async fn write(table: &Table, rows: &[Trade]) {
    let batch = RecordBatch::try_new(
        table.info().schema().to_arrow(),
        vec![
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.1))),
            Arc::new(
                Decimal128Array::from_iter_values(rows.iter().map(|r| r.2))
                    .with_precision_and_scale(18, 2)
                    .unwrap(),
            ),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.3))),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.4))),
        ],
    )
    .unwrap();
    let w = table.new_append_writer().unwrap();
    w.append_batch(&batch).await.unwrap();
    w.flush().await.unwrap();
}

async fn read(conn: &Connection, name: &str, request: &ReadRequest) -> Vec<RecordBatch> {
    let t = conn.table(&TablePath::parse(name).unwrap()).await.unwrap();
    request.to_scan(&t).collect().await.unwrap()
}

fn col<'a, T: 'static>(b: &'a RecordBatch, name: &str) -> &'a T {
    b.column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .as_any()
        .downcast_ref::<T>()
        .unwrap()
}

/// The trades of whole-table batches, sorted (a multiset).
fn trades_of(batches: &[RecordBatch]) -> Vec<(i64, i32, i128, String, String)> {
    let mut out = Vec::new();
    for b in batches {
        let (id, acct, n, side, sym) = (
            col::<Int64Array>(b, "trade_id"),
            col::<Int32Array>(b, "account_id"),
            col::<Decimal128Array>(b, "notional"),
            col::<StringArray>(b, "side"),
            col::<StringArray>(b, "symbol"),
        );
        for i in 0..b.num_rows() {
            out.push((
                id.value(i),
                acct.value(i),
                n.value(i),
                side.value(i).to_string(),
                sym.value(i).to_string(),
            ));
        }
    }
    out.sort();
    out
}

fn expected(rows: &[Trade]) -> Vec<(i64, i32, i128, String, String)> {
    let mut out: Vec<_> = rows
        .iter()
        .map(|r| (r.0, r.1, r.2, r.3.to_string(), r.4.to_string()))
        .collect();
    out.sort();
    out
}

/// `SELECT <key>, COUNT(*), SUM(notional) ... GROUP BY <key>` over batches.
fn totals(batches: &[RecordBatch], key: &str) -> BTreeMap<String, (u64, i128)> {
    let mut out: BTreeMap<String, (u64, i128)> = BTreeMap::new();
    for b in batches {
        let (k, n) = (
            col::<StringArray>(b, key),
            col::<Decimal128Array>(b, "notional"),
        );
        for i in 0..b.num_rows() {
            let e = out.entry(k.value(i).to_string()).or_default();
            e.0 += 1;
            e.1 += n.value(i);
        }
    }
    out
}

fn expected_totals(
    rows: &[Trade],
    key: fn(&Trade) -> &'static str,
) -> BTreeMap<String, (u64, i128)> {
    let mut out: BTreeMap<String, (u64, i128)> = BTreeMap::new();
    for r in rows {
        let e = out.entry(key(r).to_string()).or_default();
        e.0 += 1;
        e.1 += r.2;
    }
    out
}

/// A lake-enabled `trades` log table of `buckets` buckets (no bucket key), committed to the
/// lake only on demand (freshness 1 h).
fn lake_trades(buckets: i32) -> TableDescriptor {
    TableDescriptor::builder(trades_schema())
        .distributed_by(Some(buckets), Vec::<String>::new())
        .property("table.datalake.enabled", "true")
        .property("table.datalake.freshness", "1h")
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trades_lake_snapshots_and_union_read() {
    let warehouse = tempfile::tempdir().unwrap();
    let wh = warehouse.path().join("wh");
    let Some(env) = TestEnv::embedded_lake(&wh) else {
        return;
    };
    let conn = env.connect().await;
    let path = env.path("trades");
    let d = lake_trades(3);
    let table = create_table(&conn, &path, d).await;
    let name = path.to_string();
    let lake = format!("{name}$lake");
    let snaps = format!("{name}$lake$snapshots");
    let all = ReadRequest::default();

    // No lake snapshot yet: both views are empty, the plain read is the log's.
    let first = trades(0..40);
    write(&table, &first).await;
    assert_eq!(total_rows(&read(&conn, &lake, &all).await), 0);
    assert_eq!(total_rows(&read(&conn, &snaps, &all).await), 0);
    assert_eq!(trades_of(&read(&conn, &name, &all).await), expected(&first));

    // Two tiering commits, then rows only in the log.
    let server = env.server.as_ref().unwrap();
    server.commit_lake().unwrap();
    let s1 = conn.admin().lake_snapshot(&path, None).await.unwrap();
    let second = trades(40..65);
    write(&table, &second).await;
    server.commit_lake().unwrap();
    let s2 = conn.admin().lake_snapshot(&path, None).await.unwrap();
    let in_lake: Vec<Trade> = first.iter().chain(&second).copied().collect();
    let window_start = boundary().await;
    let third = trades(65..90);
    write(&table, &third).await;
    let everything: Vec<Trade> = in_lake.iter().chain(&third).copied().collect();

    // trades$lake: the quickstart's GROUP BY side over the lake = the rows before the commit.
    let lake_rows = read(&conn, &lake, &all).await;
    assert_eq!(
        totals(&lake_rows, "side"),
        expected_totals(&in_lake, |r| r.3)
    );
    assert_eq!(trades_of(&lake_rows), expected(&in_lake));
    // Fluss's layout: the system columns after the table's, each row's bucket and offset once.
    let schema = lake_rows[0].schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(
        names,
        [
            "trade_id",
            "account_id",
            "notional",
            "side",
            "symbol",
            "__bucket",
            "__offset",
            "__timestamp"
        ]
    );
    // The view's schema in Fluss types: the table's columns, then INT, BIGINT and
    // TIMESTAMP_LTZ(3); every batch is its Arrow form, the one a table's TIMESTAMP_LTZ takes.
    let lake_table = conn.table(&TablePath::parse(&lake).unwrap()).await.unwrap();
    let view_schema = lake_table.schema().unwrap();
    let types: Vec<DataType> = view_schema
        .columns
        .iter()
        .map(|c| c.data_type.clone())
        .collect();
    let own: Vec<DataType> = trades_schema()
        .columns
        .iter()
        .map(|c| c.data_type.clone())
        .collect();
    assert_eq!(types[..5], own[..]);
    assert_eq!(
        types[5..],
        [
            DataType::int().not_null(),
            DataType::bigint().not_null(),
            DataType::timestamp_ltz(3).not_null()
        ]
    );
    let ltz_table = Schema::builder()
        .column("at", DataType::timestamp_ltz(3))
        .build()
        .unwrap()
        .to_arrow();
    assert_eq!(
        schema.field_with_name("__timestamp").unwrap().data_type(),
        ltz_table.field(0).data_type()
    );
    for b in &lake_rows {
        assert_eq!(b.schema(), view_schema.to_arrow());
        let at = col::<TimestampMillisecondArray>(b, "__timestamp");
        assert!(
            (0..b.num_rows()).all(|i| at.value(i) > 1_500_000_000_000),
            "epoch millis"
        );
    }
    let mut positions: Vec<(i32, i64)> = lake_rows
        .iter()
        .flat_map(|b| {
            let (bk, off) = (
                col::<Int32Array>(b, "__bucket"),
                col::<Int64Array>(b, "__offset"),
            );
            (0..b.num_rows()).map(move |i| (bk.value(i), off.value(i)))
        })
        .collect();
    positions.sort();
    positions.dedup();
    assert_eq!(positions.len(), in_lake.len());
    for (bucket, offset) in &positions {
        assert!(
            *offset < s2.start_offset(None, *bucket),
            "{bucket}@{offset}"
        );
    }
    // columns and a filter on a lake view
    let sells = read(
        &conn,
        &lake,
        &ReadRequest {
            columns: Some(vec!["side".into(), "notional".into()]),
            filter: Some("side = 'SELL'".into()),
            ..ReadRequest::default()
        },
    )
    .await;
    let want: Vec<Trade> = in_lake.iter().filter(|r| r.3 == "SELL").copied().collect();
    assert_eq!(totals(&sells, "side"), expected_totals(&want, |r| r.3));
    assert_eq!(sells[0].num_columns(), 2);

    // trades$lake$snapshots: one row per commit, oldest first, with the ids GetLakeSnapshot has.
    let snap_rows = read(&conn, &snaps, &all).await;
    assert_eq!(total_rows(&snap_rows), 2);
    let b = &snap_rows[0];
    assert_eq!(
        col::<Int64Array>(b, "snapshot_id").values().to_vec(),
        vec![s1.snapshot_id, s2.snapshot_id]
    );
    let ops = col::<StringArray>(b, "operation");
    assert_eq!((ops.value(0), ops.value(1)), ("append", "append"));
    let snaps_schema = conn
        .table(&TablePath::parse(&snaps).unwrap())
        .await
        .unwrap()
        .schema()
        .unwrap();
    let types: Vec<DataType> = snaps_schema
        .columns
        .iter()
        .map(|c| c.data_type.clone())
        .collect();
    assert_eq!(
        types,
        [
            DataType::timestamp_ltz(3).not_null(),
            DataType::bigint().not_null(),
            DataType::bigint(),
            DataType::string().not_null()
        ]
    );
    assert_eq!(b.schema(), snaps_schema.to_arrow());
    let at = col::<TimestampMillisecondArray>(b, "committed_at");
    assert!(at.value(0) <= at.value(1) && at.value(0) > 0);
    assert!(col::<Int64Array>(b, "parent_id").is_null(0));
    assert_eq!(col::<Int64Array>(b, "parent_id").value(1), s1.snapshot_id);

    // The union read: exactly every row written, none lost or twice; the per-symbol totals.
    let union = read(&conn, &name, &all).await;
    assert_eq!(trades_of(&union), expected(&everything));
    assert_eq!(
        totals(&union, "symbol"),
        expected_totals(&everything, |r| r.4)
    );
    assert_eq!(table.count().await.unwrap(), everything.len() as u64);
    // one bucket at a time (a Spark or Flink split each): disjoint, together the whole union
    let mut per_bucket = Vec::new();
    for bucket in 0..3 {
        let one = ReadRequest {
            buckets: Some(vec![bucket]),
            ..ReadRequest::default()
        };
        per_bucket.extend(trades_of(&read(&conn, &name, &one).await));
    }
    per_bucket.sort();
    assert_eq!(per_bucket, expected(&everything));
    // projection and filter across both halves
    let buys = read(
        &conn,
        &name,
        &ReadRequest {
            columns: Some(vec!["symbol".into(), "notional".into()]),
            filter: Some("side = 'BUY'".into()),
            ..ReadRequest::default()
        },
    )
    .await;
    let want: Vec<Trade> = everything
        .iter()
        .filter(|r| r.3 == "BUY")
        .copied()
        .collect();
    assert_eq!(totals(&buys, "symbol"), expected_totals(&want, |r| r.4));

    // A time-range read never opens the lake: with the warehouse (and its catalog) moved
    // away it still answers from the log, while the union read cannot open the lake.
    let moved = warehouse.path().join("moved");
    std::fs::rename(&wh, &moved).unwrap();
    let window = ReadRequest {
        start: Some(window_start.into()),
        ..ReadRequest::default()
    };
    let t = conn.table(&path).await.unwrap();
    let recent = window.to_scan(&t).collect().await.unwrap();
    assert_eq!(trades_of(&recent), expected(&third));
    let since_start = ReadRequest {
        start: Some(0i64.into()),
        ..ReadRequest::default()
    };
    let all_window = since_start.to_scan(&t).collect().await.unwrap();
    assert_eq!(trades_of(&all_window), expected(&everything));
    assert!(all.to_scan(&t).collect().await.is_err());
    std::fs::rename(&moved, &wh).unwrap();
    assert_eq!(
        trades_of(&read(&conn, &name, &all).await),
        expected(&everything)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lake_views_refuse_what_they_cannot_do() {
    let warehouse = tempfile::tempdir().unwrap();
    let Some(env) = TestEnv::embedded_lake(warehouse.path()) else {
        return;
    };
    let conn = env.connect().await;
    // a table that is not lake-enabled has no lake views
    let plain = env.path("plain");
    create_table(&conn, &plain, descriptor(false, false, 1)).await;
    for suffix in ["$lake", "$lake$snapshots"] {
        let name = format!("{plain}{suffix}");
        let t = conn.table(&TablePath::parse(&name).unwrap()).await.unwrap();
        let e = t.scan().collect().await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
        assert!(e.message().contains(&plain.to_string()), "{e}");
        assert!(e.message().contains("not lake-enabled"), "{e}");
        // nor a schema
        let e = t.schema().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
        assert!(e.message().contains(&name), "{e}");
    }

    let path = env.path("trades");
    let d = lake_trades(2);
    create_table(&conn, &path, d).await;
    let lake = conn
        .table(&TablePath::parse(&format!("{path}$lake")).unwrap())
        .await
        .unwrap();
    // read-only
    let e = lake.new_append_writer().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    // a window never reads the lake, so a lake view with one is a mistake
    let e = ReadRequest {
        start: Some(0i64.into()),
        ..ReadRequest::default()
    }
    .to_scan(&lake)
    .collect()
    .await
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    // the schema is known without reading
    let s = ReadRequest::default()
        .to_scan(&lake)
        .output_schema()
        .unwrap();
    assert_eq!(s.fields().len(), 8);
    assert_eq!(s, lake.schema().unwrap().to_arrow());
    let snaps = conn
        .table(&TablePath::parse(&format!("{path}$lake$snapshots")).unwrap())
        .await
        .unwrap();
    let s = ReadRequest::default()
        .to_scan(&snaps)
        .output_schema()
        .unwrap();
    assert_eq!(s, snaps.schema().unwrap().to_arrow());
    // the table itself keeps its own schema
    let base = conn.table(&path).await.unwrap();
    assert_eq!(base.schema().unwrap(), *base.info().schema());
    // a name that is not a lake view is still refused
    assert!(TablePath::parse(&format!("{path}$other")).is_err());
}

type Row = (i64, i32, i128, String, String);

/// Polls `sub` until `want` rows arrived (returns them with each batch's bucket and change
/// type), then once more to see that nothing else comes.
async fn poll_rows(
    sub: &mut riverlet::scan::Subscription,
    want: usize,
) -> Vec<(i32, riverlet::record::ChangeType, Row)> {
    let mut out = Vec::new();
    for _ in 0..600 {
        if out.len() >= want {
            break;
        }
        for cb in sub.poll(Duration::from_millis(100)).await.unwrap() {
            for r in trades_of(std::slice::from_ref(&cb.batch)) {
                out.push((cb.bucket, cb.change_types[0], r));
            }
            assert!(cb.change_types.iter().all(|c| *c == cb.change_types[0]));
        }
    }
    for cb in sub.poll(Duration::from_millis(200)).await.unwrap() {
        for r in trades_of(std::slice::from_ref(&cb.batch)) {
            out.push((cb.bucket, cb.change_types[0], r));
        }
    }
    out
}

fn sorted(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort();
    rows
}

/// The quickstart's streaming union (`scan.startup.mode = 'full'`): a full subscription of a
/// lake-enabled log table returns the lake snapshot's rows first, then each bucket's log from
/// the offset the snapshot recorded; its position after the first poll resumes exactly after
/// them. One bucket's subscription returns that bucket's rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_subscription_reads_the_lake_then_the_log() {
    use riverlet::record::ChangeType;
    use riverlet::scan::{StartupMode, SubscribeRequest};
    let warehouse = tempfile::tempdir().unwrap();
    let wh = warehouse.path().join("wh");
    let Some(env) = TestEnv::embedded_lake(&wh) else {
        return;
    };
    let conn = env.connect().await;
    let path = env.path("trades_stream");
    let d = lake_trades(3);
    let table = create_table(&conn, &path, d).await;

    // Without a lake snapshot: the log from earliest, as before.
    let first = trades(0..40);
    write(&table, &first).await;
    let mut sub = table
        .subscribe_request(&SubscribeRequest::new(StartupMode::Full))
        .await
        .unwrap();
    let got = poll_rows(&mut sub, first.len()).await;
    assert!(got.iter().all(|r| r.1 == ChangeType::AppendOnly));
    assert_eq!(
        sorted(got.into_iter().map(|r| r.2).collect()),
        expected(&first)
    );

    // The lake holds `first`; `second` is only in the log.
    env.server.as_ref().unwrap().commit_lake().unwrap();
    let second = trades(40..75);
    write(&table, &second).await;
    let everything: Vec<Trade> = first.iter().chain(&second).copied().collect();

    let full = SubscribeRequest::new(StartupMode::Full);
    let mut sub = table.subscribe_request(&full).await.unwrap();
    // The first poll returns the lake rows (as inserts); the position is already after them.
    let lake: Vec<_> = sub
        .poll(Duration::from_millis(100))
        .await
        .unwrap()
        .into_iter()
        .flat_map(|cb| {
            assert!(cb.change_types.iter().all(|c| *c == ChangeType::Insert));
            assert_eq!(cb.first_offset, -1);
            trades_of(&[cb.batch])
        })
        .collect();
    assert_eq!(sorted(lake.clone()), expected(&first));
    let checkpoint = sub.position();
    let rest: Vec<Row> = poll_rows(&mut sub, second.len())
        .await
        .into_iter()
        .map(|r| r.2)
        .collect();
    assert_eq!(sorted(rest.clone()), expected(&second));
    let mut all_rows = lake;
    all_rows.extend(rest);
    assert_eq!(sorted(all_rows), expected(&everything));

    // Resumed from the checkpoint taken after the first poll: exactly the rest, no lake rows.
    let resumed = SubscribeRequest {
        start_offsets: checkpoint,
        ..SubscribeRequest::new(StartupMode::Full)
    };
    let mut sub = table.subscribe_request(&resumed).await.unwrap();
    let got = poll_rows(&mut sub, second.len()).await;
    assert!(got.iter().all(|r| r.1 == ChangeType::AppendOnly));
    assert_eq!(
        sorted(got.into_iter().map(|r| r.2).collect()),
        expected(&second)
    );

    // One bucket at a time: each returns only its bucket's rows (lake and log), the buckets'
    // rows are disjoint and together everything; a checkpoint after the first poll resumes
    // exactly after that bucket's lake rows.
    let mut per_bucket: Vec<Row> = Vec::new();
    for b in 0..3 {
        let one = SubscribeRequest {
            buckets: Some(vec![b]),
            ..SubscribeRequest::new(StartupMode::Full)
        };
        let mut sub = table.subscribe_request(&one).await.unwrap();
        let mut rows: Vec<Row> = Vec::new();
        for cb in sub.poll(Duration::from_millis(100)).await.unwrap() {
            assert_eq!(cb.bucket, b);
            rows.extend(trades_of(&[cb.batch]));
        }
        let checkpoint = sub.position();
        assert_eq!(checkpoint.len(), 1);
        let log = conn
            .admin()
            .list_offsets_by_id(
                table.info().table_id,
                None,
                &[b],
                riverlet::client::OffsetSpec::Latest,
            )
            .await
            .unwrap()[&b];
        let pending = (log - checkpoint[0].offset) as usize;
        let tail = poll_rows(&mut sub, pending).await;
        assert!(tail.iter().all(|r| r.0 == b));
        assert_eq!(tail.len(), pending);
        let resumed = SubscribeRequest {
            buckets: Some(vec![b]),
            start_offsets: checkpoint,
            ..SubscribeRequest::new(StartupMode::Full)
        };
        let mut again = table.subscribe_request(&resumed).await.unwrap();
        let tail2 = poll_rows(&mut again, pending).await;
        assert_eq!(
            sorted(tail2.into_iter().map(|r| r.2).collect()),
            sorted(tail.iter().map(|r| r.2.clone()).collect())
        );
        rows.extend(tail.into_iter().map(|r| r.2));
        per_bucket.extend(rows);
    }
    assert_eq!(sorted(per_bucket), expected(&everything));

    // The subscription's columns only, lake rows included.
    let cols = SubscribeRequest {
        columns: Some(vec!["symbol".into(), "trade_id".into()]),
        ..SubscribeRequest::new(StartupMode::Full)
    };
    let mut sub = table.subscribe_request(&cols).await.unwrap();
    let mut pairs = Vec::new();
    for _ in 0..600 {
        if pairs.len() >= everything.len() {
            break;
        }
        for cb in sub.poll(Duration::from_millis(100)).await.unwrap() {
            let names: Vec<String> = cb
                .batch
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect();
            assert_eq!(names, ["symbol", "trade_id"]);
            let (s, id) = (
                col::<StringArray>(&cb.batch, "symbol"),
                col::<Int64Array>(&cb.batch, "trade_id"),
            );
            for i in 0..cb.batch.num_rows() {
                pairs.push((id.value(i), s.value(i).to_string()));
            }
        }
    }
    pairs.sort();
    let want: Vec<(i64, String)> = everything.iter().map(|r| (r.0, r.4.to_string())).collect();
    assert_eq!(pairs, want);
}

/// A full subscription of a lake-enabled log table whose rows are spread over its buckets
/// (written in several batches, which the writer puts in different buckets): the lake rows come
/// per bucket, and each bucket gets exactly the rows its log holds (read from each bucket's log
/// before the lake commit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_subscription_gives_each_bucket_its_own_lake_rows() {
    use riverlet::scan::{StartupMode, SubscribeRequest};
    let warehouse = tempfile::tempdir().unwrap();
    let wh = warehouse.path().join("wh");
    let Some(env) = TestEnv::embedded_lake(&wh) else {
        return;
    };
    let conn = env.connect().await;
    let path = env.path("trades_by_id");
    let table = create_table(&conn, &path, lake_trades(3)).await;
    let rows = trades(0..60);
    for chunk in rows.chunks(10) {
        write(&table, chunk).await;
    }

    // Where the log put each row: each bucket's log from its earliest offset.
    let mut in_log: BTreeMap<i32, Vec<Row>> = BTreeMap::new();
    for b in 0..3 {
        let latest = conn
            .admin()
            .list_offsets_by_id(
                table.info().table_id,
                None,
                &[b],
                riverlet::client::OffsetSpec::Latest,
            )
            .await
            .unwrap()[&b];
        let one = SubscribeRequest {
            buckets: Some(vec![b]),
            ..SubscribeRequest::new(StartupMode::Earliest)
        };
        let mut sub = table.subscribe_request(&one).await.unwrap();
        let got = poll_rows(&mut sub, latest as usize).await;
        assert!(got.iter().all(|r| r.0 == b));
        if !got.is_empty() {
            in_log.insert(b, sorted(got.into_iter().map(|r| r.2).collect()));
        }
    }
    assert!(in_log.len() > 1, "the batches spread the rows: {in_log:?}");
    assert_eq!(
        sorted(in_log.values().flatten().cloned().collect()),
        expected(&rows)
    );

    env.server.as_ref().unwrap().commit_lake().unwrap();
    let mut sub = table
        .subscribe_request(&SubscribeRequest::new(StartupMode::Full))
        .await
        .unwrap();
    let mut from_lake: BTreeMap<i32, Vec<Row>> = BTreeMap::new();
    for cb in sub.poll(Duration::from_millis(100)).await.unwrap() {
        assert_eq!(
            cb.first_offset, -1,
            "lake rows only: the log has nothing after them"
        );
        from_lake
            .entry(cb.bucket)
            .or_default()
            .extend(trades_of(&[cb.batch]));
    }
    for v in from_lake.values_mut() {
        v.sort();
    }
    assert_eq!(from_lake, in_log);
}

/// The partitions of the partitioned lake tables below (by `symbol`, a STRING key as Fluss's
/// Iceberg lake requires).
const PARTS: [&str; 3] = ["AAPL", "MSFT", "NVDA"];

/// The trades of `ids` whose symbol is one of [`PARTS`].
fn partitioned_trades(ids: std::ops::Range<i64>) -> Vec<Trade> {
    trades(ids)
        .into_iter()
        .filter(|t| PARTS.contains(&t.4))
        .collect()
}

/// The trades of `rows` in partition `symbol`.
fn of_symbol(rows: &[Trade], symbols: &[&str]) -> Vec<Trade> {
    rows.iter()
        .filter(|t| symbols.contains(&t.4))
        .copied()
        .collect()
}

/// Union reads and full subscriptions of a partitioned lake-enabled log table (3 partitions,
/// 2 buckets), on the lake `env` tiers to: rows written, a tiering commit, more rows. A union
/// read of selected partitions returns exactly their rows (lake and log, none twice), a full
/// subscription every row once (the lake rows first, each with its partition), one of a
/// selected partition that partition's rows once. `remove_lake_data` removes the lake's data
/// files: the union read of one partition and the full subscription fail after it, so they
/// read the lake (the log still holds every row).
async fn partitioned_union_reads(
    env: &TestEnv,
    remove_lake_data: impl FnOnce(&TablePath) -> usize,
) {
    use riverlet::metadata::PartitionSpec;
    use riverlet::record::ChangeType;
    use riverlet::scan::{StartupMode, SubscribeRequest};
    let conn = env.connect().await;
    let path = env.path("trades_by_symbol");
    let d = TableDescriptor::builder(trades_schema())
        .partitioned_by(["symbol"])
        .distributed_by(Some(2), Vec::<String>::new())
        .property("table.datalake.enabled", "true")
        .property("table.datalake.freshness", "1h")
        .build()
        .unwrap();
    let table = create_table(&conn, &path, d).await;
    for p in PARTS {
        conn.admin()
            .create_partition(&path, &PartitionSpec::new([("symbol", p)]), false)
            .await
            .unwrap();
    }
    let table = conn.table(&table.info().table_path).await.unwrap();
    let first = partitioned_trades(0..60);
    for chunk in first.chunks(8) {
        write(&table, chunk).await;
    }
    env.server.as_ref().unwrap().commit_lake().unwrap();
    let second = partitioned_trades(60..100);
    write(&table, &second).await;
    let everything: Vec<Trade> = first.iter().chain(&second).copied().collect();
    let name = path.to_string();
    assert!(
        total_rows(&read(&conn, &format!("{name}$lake"), &ReadRequest::default()).await) > 0,
        "the commit tiered the rows"
    );

    // Union reads: all partitions, one, two.
    assert_eq!(
        trades_of(&read(&conn, &name, &ReadRequest::default()).await),
        expected(&everything)
    );
    for sel in [&["MSFT"][..], &["AAPL", "NVDA"][..]] {
        let r = ReadRequest {
            partitions: Some(sel.iter().map(|p| (*p).into()).collect()),
            ..ReadRequest::default()
        };
        assert_eq!(
            trades_of(&read(&conn, &name, &r).await),
            expected(&of_symbol(&everything, sel)),
            "partitions {sel:?}"
        );
    }

    // A full subscription: the lake's rows first (inserts, with their partition), then each
    // partition's log from the offsets the lake recorded; every row once.
    let ids: BTreeMap<String, i64> = conn
        .partitions(&path)
        .await
        .unwrap()
        .into_iter()
        .map(|p| (p.name, p.partition_id))
        .collect();
    let mut sub = table
        .subscribe_request(&SubscribeRequest::new(StartupMode::Full))
        .await
        .unwrap();
    let mut lake_rows = Vec::new();
    for cb in sub.poll(Duration::from_millis(100)).await.unwrap() {
        assert_eq!(cb.first_offset, -1, "the lake's rows come first");
        assert!(cb.change_types.iter().all(|c| *c == ChangeType::Insert));
        let pname = cb.partition_name.clone().expect("a partition");
        assert_eq!(cb.partition_id, ids.get(&pname).copied());
        let rows = trades_of(&[cb.batch]);
        assert!(rows.iter().all(|r| r.4 == pname), "{pname}: {rows:?}");
        lake_rows.extend(rows);
    }
    assert_eq!(sorted(lake_rows.clone()), expected(&first));
    let rest: Vec<Row> = poll_rows(&mut sub, second.len())
        .await
        .into_iter()
        .map(|r| r.2)
        .collect();
    lake_rows.extend(rest);
    assert_eq!(sorted(lake_rows), expected(&everything));

    // One partition's full subscription: its rows once.
    let msft = SubscribeRequest {
        partitions: Some(vec!["MSFT".into()]),
        ..SubscribeRequest::new(StartupMode::Full)
    };
    let want = of_symbol(&everything, &["MSFT"]);
    let mut sub = table.subscribe_request(&msft).await.unwrap();
    let got: Vec<Row> = poll_rows(&mut sub, want.len())
        .await
        .into_iter()
        .map(|r| r.2)
        .collect();
    assert_eq!(sorted(got), expected(&want));

    // Without the lake's data files both fail: they read the lake.
    assert!(remove_lake_data(&path) > 0, "the lake has data files");
    let one = ReadRequest {
        partitions: Some(vec!["MSFT".into()]),
        ..ReadRequest::default()
    };
    let t = conn.table(&path).await.unwrap();
    let err = one
        .to_scan(&t)
        .collect()
        .await
        .expect_err("the union read of a partition reads the lake's (removed) files");
    assert!(err.to_string().contains("lake"), "{err}");
    assert!(
        t.subscribe_request(&msft).await.is_err(),
        "the full subscription reads the lake's (removed) files"
    );
}

/// [`partitioned_union_reads`] on Iceberg (identity partitions of the partition key and
/// `__bucket`, as Fluss's Iceberg lake); the data files are under the table's `data/`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partitioned_union_reads_on_iceberg() {
    let warehouse = tempfile::tempdir().unwrap();
    let wh = warehouse.path().join("wh");
    let Some(env) = TestEnv::embedded_lake(&wh) else {
        return;
    };
    partitioned_union_reads(&env, |path| {
        // the table's location is <warehouse>/<database>/<table> in the SQL catalog; its
        // partition spec is Fluss's (identity of the partition key, then of the bucket), and
        // its files are in those partitions
        let location = wh.join(&path.database).join(&path.table);
        let metadata = std::fs::read_dir(location.join("metadata"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with(".metadata.json"))
            .expect("a metadata file");
        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&metadata).unwrap()).unwrap();
        let spec: Vec<(String, String)> = meta["partition-specs"][0]["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let text = |k: &str| f[k].as_str().unwrap().to_string();
                (text("name"), text("transform"))
            })
            .collect();
        assert_eq!(
            spec,
            [
                ("symbol".to_string(), "identity".to_string()),
                ("__bucket".to_string(), "identity".to_string())
            ]
        );
        let data = location.join("data");
        for p in PARTS {
            let dir = data.join(format!("symbol={p}"));
            assert!(dir.is_dir(), "{}", dir.display());
            let buckets: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
                .collect();
            assert!(
                !buckets.is_empty() && buckets.iter().all(|b| b.starts_with("__bucket=")),
                "{buckets:?}"
            );
        }
        let mut files = 0;
        let mut stack = vec![data.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    files += 1;
                }
            }
        }
        std::fs::remove_dir_all(&data).unwrap();
        files
    })
    .await;
    // Fluss's Iceberg lake partitions by STRING keys only: another key type is refused.
    let conn = env.connect().await;
    let by_account = TableDescriptor::builder(trades_schema())
        .partitioned_by(["account_id"])
        .distributed_by(Some(2), Vec::<String>::new())
        .property("table.datalake.enabled", "true")
        .build()
        .unwrap();
    let err = conn
        .admin()
        .create_table(&env.path("trades_by_account"), &by_account, false)
        .await
        .expect_err("an INT partition key on an Iceberg lake");
    assert!(
        err.to_string().contains("account_id") && err.to_string().contains("STRING"),
        "{err}"
    );
}

/// The Iceberg REST catalog the REST test runs against: `RIVERLET_ICEBERG_REST`, the URI of a
/// running one (`tests/iceberg-rest/start.sh` starts Apache Iceberg's REST catalog test server
/// and prints it). Its tables must live on the local file system (the server's warehouse).
const ICEBERG_REST_VAR: &str = "RIVERLET_ICEBERG_REST";

/// `GET uri/v1/namespaces/<db>/tables/<table>` of the REST catalog, asked over plain HTTP/1.0
/// (not through the iceberg crate the code under test uses): the LoadTableResult JSON.
fn rest_load_table(uri: &str, db: &str, table: &str) -> serde_json::Value {
    use std::io::{Read, Write};
    let addr = uri.trim_start_matches("http://").trim_end_matches('/');
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET /v1/namespaces/{db}/tables/{table} HTTP/1.0\r\nHost: {addr}\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(
        head.starts_with("HTTP/1.1 200") || head.starts_with("HTTP/1.0 200"),
        "{head}"
    );
    serde_json::from_str(body).unwrap()
}

/// Tiering into an Iceberg REST catalog and reading the lake back through it: the embedded
/// server with `datalake.iceberg.type = rest` creates the namespace and table in the REST
/// catalog and commits appends there; the client opens the same catalog from the table's
/// `table.datalake.iceberg.*` properties for `$lake`, `$lake$snapshots` and the union read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trades_lake_through_an_iceberg_rest_catalog() {
    let Ok(uri) = std::env::var(ICEBERG_REST_VAR) else {
        eprintln!(
            "SKIPPED {}: {ICEBERG_REST_VAR} is not set (the URI of an Iceberg REST catalog; \
             tests/iceberg-rest/start.sh starts one and prints it)",
            test_name()
        );
        return;
    };
    let Some(env) = TestEnv::embedded_only("needs an embedded server with a lake", |c| {
        c.set("datalake.format", "iceberg").unwrap();
        c.set("datalake.iceberg.type", "rest").unwrap();
        c.set("datalake.iceberg.uri", &uri).unwrap();
    }) else {
        return;
    };
    let conn = env.connect().await;
    let path = env.path("trades");
    let table = create_table(&conn, &path, lake_trades(3)).await;
    // the table's info carries the REST catalog's properties, as Fluss's does
    let props = &table.info().descriptor.properties;
    assert_eq!(
        props.get("table.datalake.iceberg.type").map(String::as_str),
        Some("rest")
    );
    assert_eq!(
        props.get("table.datalake.iceberg.uri").map(String::as_str),
        Some(uri.as_str())
    );
    // the REST catalog has the table (created with the Fluss table), with no snapshot yet
    let loaded = rest_load_table(&uri, &env.db, "trades");
    assert!(loaded["metadata"]["current-snapshot-id"]
        .as_i64()
        .is_none_or(|id| id == -1));
    let name = path.to_string();
    let lake = format!("{name}$lake");
    let snaps = format!("{name}$lake$snapshots");
    let all = ReadRequest::default();

    let first = trades(0..50);
    write(&table, &first).await;
    assert_eq!(total_rows(&read(&conn, &lake, &all).await), 0);
    let server = env.server.as_ref().unwrap();
    server.commit_lake().unwrap();
    let s1 = conn.admin().lake_snapshot(&path, None).await.unwrap();
    let second = trades(50..80);
    write(&table, &second).await;
    server.commit_lake().unwrap();
    let s2 = conn.admin().lake_snapshot(&path, None).await.unwrap();
    let third = trades(80..100);
    write(&table, &third).await;
    let in_lake: Vec<Trade> = first.iter().chain(&second).copied().collect();
    let everything: Vec<Trade> = in_lake.iter().chain(&third).copied().collect();

    // the REST catalog's current snapshot is the one GetLakeSnapshot names
    let loaded = rest_load_table(&uri, &env.db, "trades");
    assert_eq!(
        loaded["metadata"]["current-snapshot-id"].as_i64(),
        Some(s2.snapshot_id)
    );

    let lake_rows = read(&conn, &lake, &all).await;
    assert_eq!(trades_of(&lake_rows), expected(&in_lake));
    assert_eq!(
        totals(&lake_rows, "side"),
        expected_totals(&in_lake, |r| r.3)
    );

    let snap_rows = read(&conn, &snaps, &all).await;
    assert_eq!(total_rows(&snap_rows), 2);
    assert_eq!(
        col::<Int64Array>(&snap_rows[0], "snapshot_id")
            .values()
            .to_vec(),
        vec![s1.snapshot_id, s2.snapshot_id]
    );

    let union = read(&conn, &name, &all).await;
    assert_eq!(trades_of(&union), expected(&everything));
    assert_eq!(
        totals(&union, "symbol"),
        expected_totals(&everything, |r| r.4)
    );
    // the union read's lake half comes from the files the REST catalog points at: with the
    // table's data directory moved away it fails, and reads again once it is back
    let location = loaded["metadata"]["location"].as_str().unwrap().to_string();
    let data = std::path::PathBuf::from(location.trim_start_matches("file://")).join("data");
    assert!(data.is_dir(), "{}", data.display());
    let moved = data.with_file_name("data-moved");
    std::fs::rename(&data, &moved).unwrap();
    let t = conn.table(&path).await.unwrap();
    let failed = all.to_scan(&t).collect().await;
    std::fs::rename(&moved, &data).unwrap();
    assert!(failed.is_err());
    assert_eq!(
        trades_of(&read(&conn, &name, &all).await),
        expected(&everything)
    );
}

/// A catalog type Riverlet cannot open is an Unsupported error naming it.
#[tokio::test]
async fn unknown_catalog_type_is_unsupported() {
    let props = BTreeMap::from([
        ("type".to_string(), "hive".to_string()),
        ("uri".to_string(), "thrift://localhost:9083".to_string()),
    ]);
    let e = riverlet::lake::open_catalog(&props, "db.t$lake")
        .await
        .err()
        .unwrap();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    assert!(e.message().contains("'hive'"), "{e}");
    assert!(e.message().contains("db.t$lake"), "{e}");
    // a REST catalog without its URI
    let props = BTreeMap::from([("type".to_string(), "rest".to_string())]);
    let e = riverlet::lake::open_catalog(&props, "db.t$lake")
        .await
        .err()
        .unwrap();
    assert!(e.message().contains("uri"), "{e}");
}

#[path = "common/kv_rows.rs"]
mod kv_rows;
#[path = "lake_paimon.rs"]
mod lake_paimon;
