//! Time-range reads across many small log segments (and their time indexes), plus a benchmark
//! (ignored by default; `cargo test -p riverlet --test integration time_range_segments:: -- --ignored --nocapture`) that
//! prints the time of a 1% window and of a full scan of a larger table.

use crate::common;

use std::time::Instant;

use common::*;
use riverlet::scan::TimePoint;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn windows_are_exact_across_segments() {
    let Some(env) = TestEnv::embedded_only(
        "needs 2 KiB log segments and a 256-byte time-index interval, a server setting of the \
         embedded server",
        |c| {
            c.segment_bytes = 2048;
            c.index_interval_bytes = 256;
        },
    ) else {
        return;
    };
    let conn = env.connect().await;
    let table = create_table(&conn, &env.path("segments"), descriptor(false, false, 2)).await;
    let mut bounds = vec![boundary().await];
    for g in 0..12 {
        let rows: Vec<(i32, String, &str)> = (0..40)
            .map(|i| (g * 1000 + i, format!("payload-{g}-{i:04}"), "eu"))
            .collect();
        let refs: Vec<(i32, &str, &str)> =
            rows.iter().map(|(a, b, c)| (*a, b.as_str(), *c)).collect();
        append(&table, &refs).await;
        bounds.push(boundary().await);
    }
    let mut total = 0;
    for g in 0..12usize {
        let got = ids(&table
            .scan()
            .between(bounds[g], Some(TimePoint::EpochMillis(bounds[g + 1])))
            .collect()
            .await
            .unwrap());
        let want: Vec<i32> = (0..40).map(|i| g as i32 * 1000 + i).collect();
        assert_eq!(got, want, "window {g}");
        total += got.len();
    }
    assert_eq!(total, 480);
    let mid = ids(&table
        .scan()
        .between(bounds[5], Some(TimePoint::EpochMillis(bounds[8])))
        .collect()
        .await
        .unwrap());
    assert_eq!(mid.len(), 120);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn bench_one_percent_window_vs_full_scan() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let table = create_table(&conn, &env.path("bench"), descriptor(false, false, 3)).await;
    let groups = 100;
    let per = 2000;
    let mut bounds = vec![boundary().await];
    for g in 0..groups {
        let rows: Vec<(i32, String, &str)> = (0..per)
            .map(|i| (g * per + i, format!("row {i} of group {g}"), "eu"))
            .collect();
        let refs: Vec<(i32, &str, &str)> =
            rows.iter().map(|(a, b, c)| (*a, b.as_str(), *c)).collect();
        append(&table, &refs).await;
        bounds.push(riverlet::scan::time::now_millis());
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    let t = Instant::now();
    let full = table.scan().count().await.unwrap();
    let full_time = t.elapsed();
    let t = Instant::now();
    let w = groups as usize / 2;
    let window = table
        .scan()
        .between(bounds[w], Some(TimePoint::EpochMillis(bounds[w + 1])))
        .count()
        .await
        .unwrap();
    let window_time = t.elapsed();
    println!(
        "full scan: {full} rows in {full_time:?}; 1% window: {window} rows in {window_time:?}; \
         ratio full/window = {:.1}",
        full_time.as_secs_f64() / window_time.as_secs_f64().max(1e-9)
    );
    assert_eq!(full, (groups * per) as u64);
}
