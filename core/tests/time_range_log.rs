//! Time-range reads of log tables against the test server: windows of commit time are exact
//! (consecutive windows partition the log, unions, empty windows, open ends), compose with
//! projection, filters, partition pruning and limit, and accept every timestamp form.

use crate::common;

use chrono::{DateTime, NaiveDateTime, TimeZone};
use common::*;
use riverlet::scan::{Expr, TimePoint, TimeZoneSpec};
use riverlet::ErrorKind;

/// Writes four groups of rows with boundaries t0 < g1 < t1 < g2 < t2 < g3 < t3 < g4 < t4.
async fn write_groups(table: &riverlet::client::Table, partitioned: bool) -> Vec<i64> {
    let region = |i: i32| {
        if partitioned && i % 2 == 1 {
            "us"
        } else {
            "eu"
        }
    };
    let mut ts = vec![boundary().await];
    for g in 0..4 {
        let rows: Vec<(i32, String, &str)> = (0..10)
            .map(|i| {
                let id = g * 100 + i;
                (id, format!("g{g}"), region(id))
            })
            .collect();
        let refs: Vec<(i32, &str, &str)> =
            rows.iter().map(|(a, b, c)| (*a, b.as_str(), *c)).collect();
        append(table, &refs).await;
        ts.push(boundary().await);
    }
    ts
}

fn group_ids(groups: std::ops::Range<i32>) -> Vec<i32> {
    groups
        .flat_map(|g| (0..10).map(move |i| g * 100 + i))
        .collect()
}

async fn window(table: &riverlet::client::Table, start: i64, end: Option<i64>) -> Vec<i32> {
    let s = table
        .scan()
        .between(start, end.map(TimePoint::EpochMillis))
        .execute()
        .await
        .unwrap();
    ids(&s.collect().await.unwrap())
}

async fn windows_are_exact(buckets: i32, partitioned: bool) {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let p = env.path(&format!("log_w_{buckets}_{partitioned}"));
    let table = create_table(&conn, &p, descriptor(false, partitioned, buckets)).await;
    if partitioned {
        create_regions(&conn, &p).await;
    }
    let t = write_groups(&table, partitioned).await;

    // Consecutive windows partition the log exactly.
    let mut all = Vec::new();
    for g in 0..4usize {
        let got = window(&table, t[g], Some(t[g + 1])).await;
        assert_eq!(got, group_ids(g as i32..g as i32 + 1), "window {g}");
        all.extend(got);
    }
    all.sort();
    assert_eq!(all, group_ids(0..4));
    // A window over several writes is their union.
    assert_eq!(window(&table, t[1], Some(t[3])).await, group_ids(1..3));
    // One covering everything equals a plain read.
    let plain = ids(&table.scan().collect().await.unwrap());
    assert_eq!(window(&table, t[0], Some(t[4])).await, plain);
    assert_eq!(plain, group_ids(0..4));
    // Windows before, between and after the data are empty.
    assert!(window(&table, t[0] - 10_000, Some(t[0])).await.is_empty());
    let mid = t[1];
    assert!(window(&table, mid - 1, Some(mid + 1)).await.is_empty());
    assert!(window(&table, t[4], None).await.is_empty());
    // Open-ended windows.
    assert_eq!(window(&table, t[2], None).await, group_ids(2..4));
    assert_eq!(window(&table, t[0], None).await, group_ids(0..4));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn windows_one_bucket() {
    windows_are_exact(1, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn windows_three_buckets() {
    windows_are_exact(3, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn windows_partitioned_three_buckets() {
    windows_are_exact(3, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_end_is_pinned_at_planning() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let table = create_table(&conn, &env.path("pinned"), descriptor(false, false, 2)).await;
    let t0 = boundary().await;
    append(&table, &[(1, "a", "eu"), (2, "b", "eu")]).await;
    boundary().await;
    let stream = table.scan().between(t0, None).execute().await.unwrap();
    // Committed after planning: outside the window.
    append(&table, &[(3, "late", "eu")]).await;
    assert_eq!(ids(&stream.collect().await.unwrap()), vec![1, 2]);
    // A new read planned a few ms later sees it (an ack can come back within the commit's
    // millisecond, and the window `[t0, now)` excludes a commit at `now`).
    boundary().await;
    assert_eq!(
        ids(&table.scan().between(t0, None).collect().await.unwrap()),
        vec![1, 2, 3]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn window_composes_with_projection_filter_partitions_limit() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let p = env.path("compose");
    let table = create_table(&conn, &p, descriptor(false, true, 3)).await;
    create_regions(&conn, &p).await;
    let t = write_groups(&table, true).await;
    let win = || {
        table
            .scan()
            .between(t[1], Some(TimePoint::EpochMillis(t[3])))
    };

    // Projection: only `name`, in the order asked; the filter's column is fetched and dropped.
    let s = win()
        .project(&["name", "id"])
        .filter(Expr::lt("id", 205))
        .execute()
        .await
        .unwrap();
    let schema = s.schema();
    assert_eq!(
        schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect::<Vec<_>>(),
        vec!["name", "id"]
    );
    let got = s.collect().await.unwrap();
    assert_eq!(ids(&got), (100..110).chain(200..205).collect::<Vec<_>>());
    for b in &got {
        assert_eq!(b.schema(), schema);
    }
    let s = win()
        .project(&["name"])
        .filter(Expr::eq("id", 101))
        .collect()
        .await
        .unwrap();
    assert_eq!(s.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
    assert_eq!(s[0].num_columns(), 1);

    // Partition pruning by filter and by selection.
    let us = win().filter_text("region = 'us'").collect().await.unwrap();
    assert!(triples(&us).iter().all(|r| r.2 == "us"));
    assert_eq!(
        ids(&us),
        group_ids(1..3)
            .into_iter()
            .filter(|i| i % 2 == 1)
            .collect::<Vec<_>>()
    );
    let eu = win().partitions(["eu"]).collect().await.unwrap();
    assert_eq!(
        ids(&eu),
        group_ids(1..3)
            .into_iter()
            .filter(|i| i % 2 == 0)
            .collect::<Vec<_>>()
    );
    let none = win()
        .filter_text("region IN ('ap')")
        .collect()
        .await
        .unwrap();
    assert!(ids(&none).is_empty());

    // Limit.
    let limited = win().limit(7).collect().await.unwrap();
    assert_eq!(ids(&limited).len(), 7);
    assert!(ids(&limited).iter().all(|i| (100..300).contains(i)));
    // LIKE and NOT on a window.
    let liked = win()
        .filter_text("name LIKE 'g2%' AND NOT id IN (200, 201)")
        .collect()
        .await
        .unwrap();
    assert_eq!(ids(&liked), (202..210).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_timestamp_form_gives_the_same_window() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let table = create_table(&conn, &env.path("forms"), descriptor(false, false, 1)).await;
    // Whole seconds as window bounds, so every form can express them.
    let now = riverlet::scan::time::now_millis();
    let start = (now / 1000 + 1) * 1000;
    tokio::time::sleep(std::time::Duration::from_millis((start - now + 20) as u64)).await;
    append(&table, &[(1, "in", "eu")]).await;
    let end = (riverlet::scan::time::now_millis() / 1000 + 1) * 1000;
    tokio::time::sleep(std::time::Duration::from_millis(
        (end - riverlet::scan::time::now_millis() + 20).max(0) as u64,
    ))
    .await;
    append(&table, &[(2, "after", "eu")]).await;

    for zone in ["Asia/Shanghai", "America/New_York"] {
        let tz = TimeZoneSpec::parse(zone).unwrap();
        let chrono_tz: chrono_tz::Tz = zone.parse().unwrap();
        let wall = |ms: i64| {
            DateTime::from_timestamp_millis(ms)
                .unwrap()
                .with_timezone(&chrono_tz)
                .naive_local()
        };
        let text = |ms: i64| wall(ms).format("%Y-%m-%d %H:%M:%S").to_string();
        let forms: Vec<(TimePoint, TimePoint)> = vec![
            (start.into(), end.into()),
            (start.to_string().into(), end.to_string().into()),
            (text(start).into(), text(end).into()),
            (
                wall(start)
                    .format("%Y-%m-%dT%H:%M:%S%.3f")
                    .to_string()
                    .into(),
                wall(end).format("%Y-%m-%dT%H:%M:%S%.3f").to_string().into(),
            ),
            (TimePoint::Naive(wall(start)), TimePoint::Naive(wall(end))),
            (
                chrono_tz.timestamp_millis_opt(start).unwrap().into(),
                chrono_tz.timestamp_millis_opt(end).unwrap().into(),
            ),
            (
                DateTime::from_timestamp_millis(start).unwrap().into(),
                DateTime::from_timestamp_millis(end).unwrap().into(),
            ),
        ];
        for (s, e) in forms {
            let got = table
                .scan()
                .time_zone(zone)
                .between(s.clone(), Some(e.clone()))
                .collect()
                .await
                .unwrap_or_else(|err| panic!("{zone} {s} {e}: {err}"));
            assert_eq!(ids(&got), vec![1], "{zone}: {s} .. {e}");
            // The same through a parsed zone.
            let got = table
                .scan()
                .time_zone_spec(tz)
                .between(s, Some(e))
                .collect()
                .await
                .unwrap();
            assert_eq!(ids(&got), vec![1]);
        }
        // A date (start of day in the zone) as start: today's data is in, `end` bounds it.
        let day = wall(start).date();
        let from_day = table
            .scan()
            .time_zone(zone)
            .between(day, Some(TimePoint::EpochMillis(end)))
            .collect()
            .await
            .unwrap();
        assert!(ids(&from_day).contains(&1));
        let _: NaiveDateTime = wall(start);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_windows_fail_before_reading() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let table = create_table(&conn, &env.path("invalid"), descriptor(false, false, 1)).await;
    append(&table, &[(1, "a", "eu")]).await;

    let err = |r: riverlet::Result<riverlet::scan::BatchStream>| r.map(|_| ()).unwrap_err();
    let e = err(table.scan().between("  ", None).execute().await);
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("must not be blank"), "{e}");
    assert!(
        e.message().contains(&env.path("invalid").to_string()),
        "{e}"
    );

    let e = err(table.scan().between("next tuesday", None).execute().await);
    assert!(e.message().contains("'next tuesday'"), "{e}");
    assert!(e.message().contains("yyyy-MM-dd HH:mm:ss"), "{e}");

    let e = err(table
        .scan()
        .between_options(None, Some("1000".into()))
        .execute()
        .await);
    assert!(
        e.message().contains("'end' is set but 'start' is missing"),
        "{e}"
    );

    let e = err(table
        .scan()
        .between(2000, Some(TimePoint::EpochMillis(2000)))
        .execute()
        .await);
    assert!(
        e.message().contains("strictly before") && e.message().contains("[start, end)"),
        "{e}"
    );
    assert!(e.message().contains("'2000'"), "{e}");

    let future = riverlet::scan::time::now_millis() + 3_600_000;
    let e = err(table.scan().between(future, None).execute().await);
    assert!(e.message().contains("in the future"), "{e}");

    let e = err(table
        .scan()
        .between(0, None)
        .time_zone("Nowhere/Special")
        .execute()
        .await);
    assert!(e.message().contains("Nowhere/Special"), "{e}");
}
