//! Issue 32 item 5a: a filter whose IN list is empty (`IN ()`, as Fluss's own clients push it)
//! matches no row, so the server leaves out every batch; `NOT IN ()` keeps every non-null row.
//! Both the server's batch pruning and the exact filter are `riverlet`'s (one owner each).
//! The embedded server only: Fluss 0.9.1 has neither `table.statistics.columns` nor filters in
//! FetchLog.

use crate::common;

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Int32Array, RecordBatch};
use common::*;
use riverlet::metadata::{DataType, Schema, TableDescriptor};
use riverlet::proto::{FetchLogRequest, PbFetchLogReqForBucket, PbFetchLogReqForTable};
use riverlet::record::LogBatchIter;
use riverlet::scan::Expr;
use riverlet::stats::StatsFilter;

fn schema() -> Schema {
    Schema::builder()
        .column("id", DataType::int().not_null())
        .column("v", DataType::int())
        .build()
        .unwrap()
}

/// Four batches of five rows: ids 5k..5k+4; `v` is the id, null for odd ids, and all null in
/// the last batch.
fn batches() -> Vec<RecordBatch> {
    (0..4)
        .map(|k| {
            let ids: Vec<i32> = (5 * k..5 * k + 5).collect();
            let v: Vec<Option<i32>> = ids
                .iter()
                .map(|&i| (k < 3 && i % 2 == 0).then_some(i))
                .collect();
            RecordBatch::try_new(
                schema().to_arrow(),
                vec![
                    Arc::new(Int32Array::from(ids)),
                    Arc::new(Int32Array::from(v)),
                ],
            )
            .unwrap()
        })
        .collect()
}

fn ids_of(batches: &[RecordBatch]) -> Vec<i32> {
    let mut out: Vec<i32> = batches
        .iter()
        .flat_map(|b| {
            let id = b.column_by_name("id").unwrap().as_primitive::<Int32Type>();
            (0..b.num_rows()).map(|i| id.value(i)).collect::<Vec<_>>()
        })
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_in_list_prunes_every_batch() {
    let Some(env) = TestEnv::embedded_only(
        "'table.statistics.columns' and pushed filters are Fluss 1.0 (Fluss 0.9.1 has neither)",
        |_| {},
    ) else {
        return;
    };
    let conn = env.connect().await;
    let d = TableDescriptor::builder(schema())
        .distributed_by(Some(1), Vec::<String>::new())
        .property("table.statistics.columns", "id,v")
        .build()
        .unwrap();
    let table = create_table(&conn, &env.path("empty_in"), d).await;
    let w = table.new_append_writer().unwrap();
    for b in batches() {
        w.append_batch(&b).await.unwrap();
        w.flush().await.unwrap();
    }
    let info = table.info();
    let schema = &info.descriptor.schema;

    // A raw FetchLog carrying `id IN ()` (a leaf with no literal): no batch comes back, all four
    // are counted as skipped and the read ends after them.
    let fetch = |expr: Expr| {
        let predicate = StatsFilter::from_expr(&expr, schema, &[0, 1])
            .unwrap()
            .to_proto(schema)
            .unwrap();
        assert_eq!(predicate.leaf.as_ref().map(|l| l.literals.len()), Some(0));
        FetchLogRequest {
            follower_server_id: -1,
            max_bytes: 16 << 20,
            tables_req: vec![PbFetchLogReqForTable {
                table_id: info.table_id,
                projection_pushdown_enabled: false,
                projected_fields: vec![],
                buckets_req: vec![PbFetchLogReqForBucket {
                    partition_id: None,
                    bucket_id: 0,
                    fetch_offset: 0,
                    max_fetch_bytes: 16 << 20,
                }],
                filter_schema_id: Some(info.schema_id),
                filter_predicate: Some(predicate),
            }],
            max_wait_ms: Some(0),
            min_bytes: Some(0),
            read_preference: None,
        }
    };
    let mut resp = conn
        .request_leader(
            info.table_id,
            None,
            0,
            &fetch(Expr::is_in("id", Vec::<i64>::new())),
        )
        .await
        .unwrap();
    let b = resp.tables_resp.remove(0).buckets_resp.remove(0);
    assert_eq!(b.error_code, None, "{:?}", b.error_message);
    assert!(b.records.unwrap_or_default().is_empty());
    assert_eq!(b.skipped_batches, Some(4));
    assert_eq!(b.filtered_end_offset, Some(20));

    // `v NOT IN ()`: only the batch whose `v` is all null is left out.
    let mut resp = conn
        .request_leader(
            info.table_id,
            None,
            0,
            &fetch(Expr::not_in("v", Vec::<i64>::new())),
        )
        .await
        .unwrap();
    let b = resp.tables_resp.remove(0).buckets_resp.remove(0);
    let kept: Vec<i64> = LogBatchIter::new(b.records.as_deref().unwrap_or_default())
        .map(|b| b.unwrap().base_offset())
        .collect();
    assert_eq!(kept, vec![0, 5, 10]);
    assert_eq!(b.skipped_batches, Some(1));

    // Scans through the client: no row for IN (), the non-null `v` rows for NOT IN ().
    let got = table
        .scan()
        .filter(Expr::is_in("id", Vec::<i64>::new()))
        .collect()
        .await
        .unwrap();
    assert_eq!(ids_of(&got), Vec::<i32>::new());
    let got = table
        .scan()
        .filter(Expr::not_in("v", Vec::<i64>::new()))
        .collect()
        .await
        .unwrap();
    assert_eq!(ids_of(&got), vec![0, 2, 4, 6, 8, 10, 12, 14]);
    // Combined: an empty IN inside an OR leaves the other side.
    let got = table
        .scan()
        .filter(Expr::is_in("id", Vec::<i64>::new()).or(Expr::eq("id", 7)))
        .collect()
        .await
        .unwrap();
    assert_eq!(ids_of(&got), vec![7]);
}

/// The same answers from any server, without statistics (nothing pushed: the exact filter
/// decides): against Fluss 0.9.1 too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_in_list_reads_no_row_on_any_server() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let d = TableDescriptor::builder(schema())
        .distributed_by(Some(1), Vec::<String>::new())
        .build()
        .unwrap();
    let table = create_table(&conn, &env.path("empty_in_plain"), d).await;
    let w = table.new_append_writer().unwrap();
    for b in batches() {
        w.append_batch(&b).await.unwrap();
    }
    w.flush().await.unwrap();
    let scan = |e: Expr| table.scan().filter(e).collect();
    let got = scan(Expr::is_in("id", Vec::<i64>::new())).await.unwrap();
    assert_eq!(ids_of(&got), Vec::<i32>::new());
    let got = scan(Expr::not_in("v", Vec::<i64>::new())).await.unwrap();
    assert_eq!(ids_of(&got), vec![0, 2, 4, 6, 8, 10, 12, 14]);
    let got = scan(Expr::is_in("id", Vec::<i64>::new()).not())
        .await
        .unwrap();
    assert_eq!(ids_of(&got), (0..20).collect::<Vec<_>>());
}
