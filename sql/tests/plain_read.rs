//! `provider::plain_read`: which statements the Flight SQL service answers by streaming the
//! core's Arrow IPC messages (a read of one table with nothing left for DataFusion above it),
//! and that such a read returns what DataFusion's plan returns.

use crate::common;

use common::Env;
use datafusion::arrow::util::pretty::pretty_format_batches;
use riverlet::row::Datum;
use riverlet_sql::provider::plain_read;

async fn plain(env: &Env, sql: &str) -> Option<riverlet::scan::ReadRequest> {
    let plan = env
        .ctx
        .sql(sql)
        .await
        .unwrap()
        .into_optimized_plan()
        .unwrap();
    plain_read(&plan).map(|(_, r)| r)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_reads_are_found_and_everything_else_is_left_to_datafusion() {
    let env = Env::new().await;
    let orders = env
        .create(
            "orders",
            "order_id BIGINT, item STRING, amount INT",
            &[],
            &[],
            3,
        )
        .await;
    env.create("stock", "sku STRING, qty INT", &["sku"], &[], 2)
        .await;
    let w = orders.new_append_writer().unwrap();
    for i in 0..30i64 {
        w.append_rows(&[vec![
            Datum::BigInt(i),
            Datum::String(format!("item{i}")),
            Datum::Int(i as i32 * 10),
        ]])
        .await
        .unwrap();
    }
    w.flush().await.unwrap();

    // Forwarded: the whole table, a projection in table order, a commit-time window, a
    // primary-key table's latest view (the core encodes it), a qualified name.
    for sql in [
        "SELECT * FROM orders",
        "SELECT order_id, amount FROM orders",
        "SELECT * FROM fluss.orders",
        "SELECT * FROM stock",
        "SELECT order_id FROM fluss_incremental_between_timestamp('orders', 0)",
    ] {
        let r = plain(&env, sql)
            .await
            .unwrap_or_else(|| panic!("{sql}: not a plain read"));
        assert!(r.filter.is_none() && r.limit.is_none(), "{sql}: {r:?}");
    }
    let r = plain(&env, "SELECT order_id, amount FROM orders")
        .await
        .unwrap();
    assert_eq!(
        r.columns,
        Some(vec!["order_id".to_string(), "amount".to_string()])
    );

    // Left to DataFusion: filters, limits, sorting, aggregates, expressions, joins, the
    // changelog.
    for sql in [
        "SELECT * FROM orders WHERE amount > 10",
        "SELECT * FROM orders LIMIT 5",
        "SELECT * FROM orders ORDER BY order_id",
        "SELECT count(*) FROM orders",
        "SELECT order_id + 1 FROM orders",
        "SELECT o.order_id FROM orders o JOIN stock s ON o.item = s.sku",
        "SELECT * FROM \"orders$changelog\"",
    ] {
        assert!(
            plain(&env, sql).await.is_none(),
            "{sql}: taken as a plain read"
        );
    }

    // A plain read through the core's IPC path gives DataFusion's rows.
    for sql in [
        "SELECT * FROM orders",
        "SELECT order_id, amount FROM orders",
    ] {
        let df = env.ctx.sql(sql).await.unwrap();
        let plan = df.clone().into_optimized_plan().unwrap();
        let (table, request) = plain_read(&plan).unwrap();
        let mut stream = request
            .to_scan(&table)
            .execute_ipc(riverlet::scan::IpcBodies::AsStored)
            .await
            .unwrap();
        let mut framed = Vec::new();
        let mut frame = |m: &riverlet::scan::IpcMessage| {
            let pad = (8 - m.header.len() % 8) % 8;
            framed.extend_from_slice(&0xFFFF_FFFFu32.to_le_bytes());
            framed.extend_from_slice(&((m.header.len() + pad) as i32).to_le_bytes());
            framed.extend_from_slice(&m.header);
            framed.extend(std::iter::repeat_n(0u8, pad));
            framed.extend_from_slice(&m.body);
        };
        frame(&stream.schema_message());
        while let Some(m) = stream.next().await {
            frame(&m.unwrap());
        }
        framed.extend_from_slice(&0xFFFF_FFFFu32.to_le_bytes());
        framed.extend_from_slice(&0i32.to_le_bytes());
        assert!(
            stream.forwarded() >= 3,
            "{sql}: {} forwarded",
            stream.forwarded()
        );
        let reader = datafusion::arrow::ipc::reader::StreamReader::try_new(
            std::io::Cursor::new(framed),
            None,
        )
        .unwrap();
        let mut via_ipc: Vec<String> =
            pretty_format_batches(&reader.map(|b| b.unwrap()).collect::<Vec<_>>())
                .unwrap()
                .to_string()
                .lines()
                .map(str::to_string)
                .collect();
        let mut via_plan: Vec<String> = pretty_format_batches(&df.collect().await.unwrap())
            .unwrap()
            .to_string()
            .lines()
            .map(str::to_string)
            .collect();
        via_ipc.sort();
        via_plan.sort();
        assert_eq!(via_ipc, via_plan, "{sql}");
        assert_eq!(
            via_plan.len(),
            30 + 4,
            "{sql}: 30 rows and the table's frame"
        );
    }
}
