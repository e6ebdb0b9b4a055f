//! Bounded reads, counts, lookups, subscriptions and changelog reads against the test
//! server.

use crate::common;

use std::time::Duration;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use common::*;
use riverlet::metadata::{DataType, Schema, TableDescriptor};
use riverlet::record::ChangeType;
use riverlet::row::Datum;
use riverlet::scan::{Expr, StartupMode};
use riverlet::ErrorKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_table_read_projection_filter_partitions_limit_count() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let p = env.path("log_reads");
    let table = create_table(&conn, &p, descriptor(false, true, 3)).await;
    create_regions(&conn, &p).await;
    let rows: Vec<(i32, String, &str)> = (0..100)
        .map(|i| (i, format!("n{i}"), if i % 4 == 0 { "us" } else { "eu" }))
        .collect();
    let refs: Vec<(i32, &str, &str)> = rows.iter().map(|(a, b, c)| (*a, b.as_str(), *c)).collect();
    append(&table, &refs).await;

    let all = table.scan().collect().await.unwrap();
    assert_eq!(ids(&all), (0..100).collect::<Vec<_>>());
    assert_eq!(all[0].schema(), table.info().schema().to_arrow());
    assert_eq!(table.count().await.unwrap(), 100);
    assert_eq!(table.scan().count().await.unwrap(), 100);

    let s = table
        .scan()
        .project(&["region", "id"])
        .filter_text("id BETWEEN 10 AND 19 OR name LIKE '%99'")
        .execute()
        .await
        .unwrap();
    let names: Vec<String> = s
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, vec!["region", "id"]);
    assert_eq!(
        ids(&s.collect().await.unwrap()),
        (10..20).chain([99]).collect::<Vec<_>>()
    );
    let us = table
        .scan()
        .filter(Expr::eq("region", "us"))
        .collect()
        .await
        .unwrap();
    assert_eq!(ids(&us), (0..100).step_by(4).collect::<Vec<_>>());
    let us2 = table.scan().partitions(["us"]).collect().await.unwrap();
    assert_eq!(ids(&us2), ids(&us));
    assert_eq!(table.scan().limit(5).count().await.unwrap(), 5);
    assert_eq!(table.scan().limit(0).count().await.unwrap(), 0);

    // Errors name the table or column.
    let e = table
        .scan()
        .project(&["nope"])
        .execute()
        .await
        .map(|_| ())
        .unwrap_err();
    assert!(
        e.message().contains("'nope'") && e.message().contains(&env.path("log_reads").to_string()),
        "{e}"
    );
    let e = table
        .scan()
        .filter(Expr::eq("id", "x"))
        .execute()
        .await
        .map(|_| ())
        .unwrap_err();
    assert!(e.message().contains("column 'id'"), "{e}");
    let e = table
        .scan()
        .partitions(["ap"])
        .execute()
        .await
        .map(|_| ())
        .unwrap_err();
    assert!(e.message().contains("'ap'"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_is_bounded_at_planning_while_writes_continue() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let table = create_table(&conn, &env.path("bounded"), descriptor(false, false, 2)).await;
    append(&table, &(0..50).map(|i| (i, "x", "eu")).collect::<Vec<_>>()).await;
    let stream = table.scan().execute().await.unwrap();
    let writer = {
        let t = table.clone();
        tokio::spawn(async move {
            for k in 0..5 {
                append(&t, &[(1000 + k, "late", "eu")]).await;
            }
        })
    };
    let got = ids(&stream.collect().await.unwrap());
    writer.await.unwrap();
    assert_eq!(got, (0..50).collect::<Vec<_>>());
    assert_eq!(table.count().await.unwrap(), 55);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pk_latest_view_count_and_lookups() {
    pk_latest_view_case(TestEnv::new()).await;
}

/// The same through the Apache Fluss 0.9.x path (no ScanKv: changelog replayed and folded).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pk_latest_view_without_scan_kv() {
    let Some(env) = TestEnv::embedded_only(
        "makes the embedded server hide ScanKv; against the real server the test above covers \
         whichever path it offers",
        |c| c.fluss_0_9_apis = true,
    ) else {
        return;
    };
    pk_latest_view_case(env).await;
}

async fn pk_latest_view_case(env: TestEnv) {
    let conn = env.connect().await;
    let p = env.path("pk_view");
    let table = create_table(&conn, &p, descriptor(true, true, 3)).await;
    create_regions(&conn, &p).await;
    let r = |i: i32| if i % 2 == 1 { "us" } else { "eu" };
    upsert(
        &table,
        &(0..20).map(|i| (i, "v0", r(i))).collect::<Vec<_>>(),
    )
    .await;
    upsert(&table, &[(1, "v1", r(1)), (2, "v1", r(2))]).await;
    delete(&table, &[(3, "", r(3))]).await;

    let view = by_id(&table.scan().collect().await.unwrap());
    assert_eq!(view.len(), 19);
    assert_eq!(view[&1], "v1");
    assert!(!view.contains_key(&3));
    assert_eq!(table.count().await.unwrap(), 19);
    let f = table
        .scan()
        .project(&["id"])
        .filter_text("name = 'v1' AND region = 'eu'")
        .collect()
        .await
        .unwrap();
    assert_eq!(ids(&f), vec![2]);
    assert_eq!(table.scan().limit(4).count().await.unwrap(), 4);

    // Point lookups, batched per bucket: found, deleted, missing, missing partition.
    let l = table.new_lookuper().unwrap();
    assert_eq!(l.key_columns(), vec!["id", "region"]);
    let keys = vec![
        vec![Datum::Int(1), Datum::String("us".into())],
        vec![Datum::Int(3), Datum::String("us".into())],
        vec![Datum::Int(4), Datum::String("eu".into())],
        vec![Datum::Int(99), Datum::String("eu".into())],
        vec![Datum::Int(4), Datum::String("ap".into())],
    ];
    let got = l.lookup_rows(&keys).await.unwrap();
    assert_eq!(got[0], Some(row(1, "v1", "us")));
    assert_eq!(got[1], None);
    assert_eq!(got[2], Some(row(4, "v0", "eu")));
    assert_eq!(got[3], None);
    assert_eq!(got[4], None);
    let batch = l
        .lookup(&rows_batch(&[(5, "", "us"), (6, "", "eu"), (7, "", "eu")]))
        .await
        .unwrap();
    assert_eq!(ids(&[batch]), vec![5, 6]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefix_lookup_by_bucket_key() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let schema = Schema::builder()
        .column("user", DataType::int().not_null())
        .column("item", DataType::int().not_null())
        .column("qty", DataType::bigint())
        .primary_key(["user", "item"])
        .build()
        .unwrap();
    let d = TableDescriptor::builder(schema)
        .distributed_by(Some(3), ["user"])
        .build()
        .unwrap();
    let table = create_table(&conn, &env.path("prefix"), d).await;
    let w = table.new_upsert_writer(None).unwrap();
    let mut rows = Vec::new();
    for u in 0..4 {
        for i in 0..3 {
            rows.push(vec![
                Datum::Int(u),
                Datum::Int(i),
                Datum::BigInt((u * 10 + i) as i64),
            ]);
        }
    }
    w.upsert_rows(&rows).await.unwrap();
    w.flush().await.unwrap();
    let l = table.new_lookuper().unwrap();
    assert_eq!(l.prefix_columns(), vec!["user"]);
    let got = l
        .prefix_lookup_rows(&[vec![Datum::Int(2)], vec![Datum::Int(9)]])
        .await
        .unwrap();
    let mut qty: Vec<Datum> = got[0].iter().map(|r| r[2].clone()).collect();
    qty.sort_by_key(|d| format!("{d:?}"));
    assert_eq!(
        qty,
        vec![Datum::BigInt(20), Datum::BigInt(21), Datum::BigInt(22)]
    );
    assert!(got[1].is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changelog_read_has_meta_columns_first() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let table = create_table(&conn, &env.path("changelog"), descriptor(true, false, 1)).await;
    upsert(&table, &[(1, "a", "eu")]).await;
    upsert(&table, &[(1, "b", "eu")]).await;
    delete(&table, &[(1, "b", "eu")]).await;
    let s = table
        .scan()
        .changelog(true)
        .project(&["id", "name"])
        .execute()
        .await
        .unwrap();
    let names: Vec<String> = s
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(
        names,
        vec![
            "_change_type",
            "_log_offset",
            "_commit_timestamp",
            "id",
            "name"
        ]
    );
    let batches = s.collect().await.unwrap();
    let mut kinds = Vec::new();
    let mut offsets = Vec::new();
    for b in &batches {
        let k = b.column(0).as_string::<i32>();
        let o = b.column(1).as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            kinds.push(k.value(i).to_string());
            offsets.push(o.value(i));
        }
    }
    assert_eq!(
        kinds,
        vec!["insert", "update_before", "update_after", "delete"]
    );
    assert_eq!(offsets, vec![0, 1, 2, 3]);
    // A filter on the change type.
    let del = table
        .scan()
        .changelog(true)
        .filter_text("_change_type = 'delete'")
        .count()
        .await
        .unwrap();
    assert_eq!(del, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_from_each_startup_mode() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let table = create_table(&conn, &env.path("subs"), descriptor(false, false, 2)).await;
    append(&table, &[(1, "a", "eu"), (2, "b", "eu")]).await;
    let t_mid = boundary().await;
    append(&table, &[(3, "c", "eu")]).await;

    async fn drain(
        sub: &mut riverlet::scan::Subscription,
        want: usize,
    ) -> Vec<riverlet::scan::ChangeBatch> {
        let mut out = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while out
            .iter()
            .map(|b: &riverlet::scan::ChangeBatch| b.batch.num_rows())
            .sum::<usize>()
            < want
            && std::time::Instant::now() < deadline
        {
            out.extend(sub.poll(Duration::from_millis(200)).await.unwrap());
        }
        out
    }
    let ids_of = |bs: &[riverlet::scan::ChangeBatch]| {
        ids(&bs.iter().map(|b| b.batch.clone()).collect::<Vec<_>>())
    };

    let mut earliest = table.subscribe(StartupMode::Earliest).await.unwrap();
    let got = drain(&mut earliest, 3).await;
    assert_eq!(ids_of(&got), vec![1, 2, 3]);
    assert!(got
        .iter()
        .all(|b| b.commit_timestamp > 0 && b.first_offset >= 0));
    assert!(got
        .iter()
        .all(|b| b.change_types.iter().all(|c| *c == ChangeType::AppendOnly)));
    let mut full = table.subscribe(StartupMode::Full).await.unwrap();
    assert_eq!(ids_of(&drain(&mut full, 3).await), vec![1, 2, 3]);
    let mut from_ts = table
        .subscribe(StartupMode::Timestamp(t_mid))
        .await
        .unwrap();
    assert_eq!(ids_of(&drain(&mut from_ts, 1).await), vec![3]);
    let mut latest = table.subscribe(StartupMode::Latest).await.unwrap();
    assert!(latest
        .poll(Duration::from_millis(50))
        .await
        .unwrap()
        .is_empty());
    append(&table, &[(4, "d", "eu")]).await;
    assert_eq!(ids_of(&drain(&mut latest, 1).await), vec![4]);
    // Earliest keeps going with new data.
    assert_eq!(ids_of(&drain(&mut earliest, 1).await), vec![4]);
    let cl = got[0].to_changelog_batch().unwrap();
    assert_eq!(cl.schema().field(0).name(), "_change_type");

    assert!(StartupMode::parse("bogus")
        .unwrap_err()
        .message()
        .contains("'full'"));
    assert_eq!(
        StartupMode::parse("timestamp:5").unwrap(),
        StartupMode::Timestamp(5)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pk_full_subscription_snapshots_then_follows_the_log() {
    pk_full_subscription_case(TestEnv::new()).await;
}

/// The same through the Apache Fluss 0.9.x path (no ScanKv: changelog replayed and folded).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pk_full_subscription_without_scan_kv() {
    let Some(env) = TestEnv::embedded_only(
        "makes the embedded server hide ScanKv; against the real server the test above covers \
         whichever path it offers",
        |c| c.fluss_0_9_apis = true,
    ) else {
        return;
    };
    pk_full_subscription_case(env).await;
}

async fn pk_full_subscription_case(env: TestEnv) {
    let conn = env.connect().await;
    let table = create_table(&conn, &env.path("pk_subs"), descriptor(true, false, 2)).await;
    upsert(&table, &[(1, "a", "eu"), (2, "b", "eu")]).await;
    upsert(&table, &[(1, "a2", "eu")]).await;
    let mut sub = table.subscribe(StartupMode::Full).await.unwrap();
    let first = sub.poll(Duration::from_millis(100)).await.unwrap();
    let snap: Vec<_> = first.iter().filter(|b| b.first_offset < 0).collect();
    let snap_rows = by_id(&snap.iter().map(|b| b.batch.clone()).collect::<Vec<_>>());
    assert_eq!(snap_rows.get(&1).map(String::as_str), Some("a2"));
    assert_eq!(snap_rows.len(), 2);
    upsert(&table, &[(3, "c", "eu")]).await;
    let mut more = Vec::new();
    for _ in 0..50 {
        more.extend(sub.poll(Duration::from_millis(100)).await.unwrap());
        if !more.is_empty() {
            break;
        }
    }
    assert_eq!(
        ids(&more.iter().map(|b| b.batch.clone()).collect::<Vec<_>>()),
        vec![3]
    );
    assert_eq!(more[0].change_types, vec![ChangeType::Insert]);
    let e = table.new_lookuper().map(|_| ());
    assert!(e.is_ok());
    let log = create_table(&conn, &env.path("pk_subs_log"), descriptor(false, false, 1)).await;
    assert_eq!(
        log.new_lookuper().unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn poll_with_a_timeout_past_the_clock_returns_the_data() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let table = create_table(&conn, &env.path("huge_poll"), descriptor(false, false, 1)).await;
    append(&table, &[(1, "a", "eu"), (2, "b", "eu")]).await;
    let mut sub = table.subscribe(StartupMode::Earliest).await.unwrap();
    // `Instant::now() + Duration::MAX` overflows; the poll must still wait and return rows.
    let mut got = Vec::new();
    while got.len() < 2 {
        let batches = sub.poll(Duration::MAX).await.unwrap();
        assert!(
            !batches.is_empty(),
            "a poll without deadline returns only with data"
        );
        got.extend(ids(&batches
            .into_iter()
            .map(|b| b.batch)
            .collect::<Vec<_>>()));
    }
    assert_eq!(got, vec![1, 2]);
}
