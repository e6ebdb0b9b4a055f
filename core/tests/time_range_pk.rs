//! Time-range reads of primary-key tables against the test server: the window's changelog
//! folded per key (last value; deletes exclude; insert-then-delete excluded; delete-then-reinsert
//! included; keys changed only before the window absent), on 1 and 3 buckets, partitioned or
//! not; read-optimized mode rejected.

use crate::common;

use std::collections::BTreeMap;

use common::*;
use riverlet::scan::{Expr, TimePoint};
use riverlet::ErrorKind;

async fn window(
    table: &riverlet::client::Table,
    start: i64,
    end: Option<i64>,
) -> BTreeMap<i32, String> {
    let got = table
        .scan()
        .between(start, end.map(TimePoint::EpochMillis))
        .collect()
        .await
        .unwrap();
    by_id(&got)
}

fn m(pairs: &[(i32, &str)]) -> BTreeMap<i32, String> {
    pairs.iter().map(|(k, v)| (*k, v.to_string())).collect()
}

async fn fold_cases(buckets: i32, partitioned: bool) {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let p = env.path(&format!("pk_{buckets}_{partitioned}"));
    let table = create_table(&conn, &p, descriptor(true, partitioned, buckets)).await;
    if partitioned {
        create_regions(&conn, &p).await;
    }
    let r = |id: i32| {
        if partitioned && id % 2 == 1 {
            "us"
        } else {
            "eu"
        }
    };

    // Before the window: keys 1..=6 exist; 7 exists and is never touched again.
    upsert(
        &table,
        &(1..=7).map(|i| (i, "v0", r(i))).collect::<Vec<_>>(),
    )
    .await;
    let t0 = boundary().await;
    // In the window:
    upsert(&table, &[(1, "v1", r(1)), (2, "v1", r(2))]).await; // 1 updated twice (below), 2 once
    upsert(&table, &[(1, "v2", r(1))]).await;
    delete(&table, &[(3, "v0", r(3))]).await; // 3 deleted then re-inserted
    upsert(&table, &[(3, "back", r(3))]).await;
    delete(&table, &[(4, "v0", r(4))]).await; // 4 deleted
    upsert(&table, &[(10, "new", r(10))]).await; // 10 inserted then deleted
    delete(&table, &[(10, "new", r(10))]).await;
    upsert(&table, &[(11, "fresh", r(11))]).await; // 11 inserted
    let t1 = boundary().await;
    // A window whose only change is a delete.
    delete(&table, &[(5, "v0", r(5))]).await;
    let t2 = boundary().await;
    // After: 6 updated (not in the windows above).
    upsert(&table, &[(6, "later", r(6))]).await;
    let t3 = boundary().await;

    assert_eq!(
        window(&table, t0, Some(t1)).await,
        m(&[(1, "v2"), (2, "v1"), (3, "back"), (11, "fresh")]),
        "main window ({buckets} buckets, partitioned {partitioned})"
    );
    assert!(
        window(&table, t1, Some(t2)).await.is_empty(),
        "delete-only window"
    );
    assert_eq!(window(&table, t2, Some(t3)).await, m(&[(6, "later")]));
    assert_eq!(window(&table, t2, None).await, m(&[(6, "later")]));
    // Keys 7 (and 2, 6 outside their windows) are in the current state but absent here.
    let whole = window(&table, t0, Some(t3)).await;
    assert_eq!(
        whole,
        m(&[
            (1, "v2"),
            (2, "v1"),
            (3, "back"),
            (6, "later"),
            (11, "fresh")
        ])
    );
    assert!(!whole.contains_key(&7));
    // Projection and filter apply to the folded values: key 1's last value is v2.
    let got = table
        .scan()
        .between(t0, Some(TimePoint::EpochMillis(t1)))
        .project(&["name"])
        .filter(Expr::eq("id", 1))
        .collect()
        .await
        .unwrap();
    let names: Vec<String> = got
        .iter()
        .flat_map(|b| {
            let c = arrow_array::cast::AsArray::as_string::<i32>(b.column(0)).clone();
            (0..b.num_rows()).map(move |i| c.value(i).to_string())
        })
        .collect();
    assert_eq!(names, vec!["v2".to_string()]);
    // A filter on the old value does not resurrect it.
    let got = table
        .scan()
        .between(t0, Some(TimePoint::EpochMillis(t1)))
        .filter_text("name = 'v1'")
        .collect()
        .await
        .unwrap();
    assert_eq!(by_id(&got), m(&[(2, "v1")]));
    if partitioned {
        let got = table
            .scan()
            .between(t0, Some(TimePoint::EpochMillis(t1)))
            .filter_text("region = 'us'")
            .collect()
            .await
            .unwrap();
        assert_eq!(by_id(&got), m(&[(1, "v2"), (3, "back"), (11, "fresh")]));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fold_one_bucket() {
    fold_cases(1, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fold_three_buckets() {
    fold_cases(3, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fold_partitioned_one_bucket() {
    fold_cases(1, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fold_partitioned_three_buckets() {
    fold_cases(3, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_optimized_time_range_on_pk_is_rejected() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let table = create_table(&conn, &env.path("ro"), descriptor(true, false, 1)).await;
    upsert(&table, &[(1, "a", "eu")]).await;
    let e = table
        .scan()
        .between(0, None)
        .read_optimized(true)
        .execute()
        .await
        .map(|_| ())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("read-optimized"), "{e}");
    assert!(e.message().contains(&env.path("ro").to_string()), "{e}");
}
