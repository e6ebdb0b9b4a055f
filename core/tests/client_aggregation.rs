//! The aggregation merge engine (`table.merge-engine = aggregation`, functions from Flink's
//! `'fields.<col>.agg'` options) against the test server: every function with nulls, the
//! changelog it produces, partial updates, delete behaviors and creation errors. The expected
//! values follow Fluss's definitions (website `merge-engines/aggregation.md`, the `Field*Agg`
//! classes of Fluss 0.9.1); these tests also run against Apache Fluss 0.9.1.

use crate::common;

use std::time::Duration;

use common::*;
use riverlet::client::Table;
use riverlet::metadata::{DataType, Schema, TableDescriptor};
use riverlet::record::ChangeType;
use riverlet::row::{Datum, TimestampNtz};
use riverlet::scan::StartupMode;
use riverlet::ErrorKind;

async fn agg_table(
    env: &TestEnv,
    name: &str,
    schema: Schema,
    options: &[(&str, &str)],
) -> riverlet::Result<Table> {
    let conn = env.connect().await;
    let mut d = TableDescriptor::builder(schema)
        .distributed_by(Some(1), Vec::<String>::new())
        .property("table.merge-engine", "aggregation");
    for (k, v) in options {
        d = d.property(*k, *v);
    }
    let path = env.path(name);
    conn.admin()
        .create_database(&path.database, true)
        .await
        .unwrap();
    let d = d.build()?;
    conn.admin().create_table(&path, &d, false).await?;
    common::await_leaders(&conn, &path, &d).await;
    Ok(conn.table(&path).await.unwrap())
}

fn s(v: &str) -> Datum {
    Datum::String(v.into())
}

async fn lookup(table: &Table, key: Vec<Datum>) -> Option<Vec<Datum>> {
    table
        .new_lookuper()
        .unwrap()
        .lookup_rows(&[key])
        .await
        .unwrap()
        .pop()
        .unwrap()
}

/// The example of Fluss's aggregation page: product_stats with max, sum and the default.
#[tokio::test]
async fn product_stats_example() {
    let env = TestEnv::new();
    let schema = Schema::builder()
        .column("product_id", DataType::bigint())
        .column("price", DataType::double())
        .column("sales", DataType::bigint())
        .column("last_update_time", DataType::timestamp(3))
        .primary_key(["product_id"])
        .build()
        .unwrap();
    let table = agg_table(
        &env,
        "product_stats",
        schema,
        &[("fields.price.agg", "max"), ("fields.sales.agg", "sum")],
    )
    .await
    .unwrap();
    let t1 = Datum::Timestamp(TimestampNtz::from_millis(1_704_103_200_000)); // 2024-01-01 10:00
    let t2 = Datum::Timestamp(TimestampNtz::from_millis(1_704_106_800_000)); // 2024-01-01 11:00
    let w = table.new_upsert_writer(None).unwrap();
    w.upsert_rows(&[
        vec![Datum::BigInt(1), Datum::Double(23.0), Datum::BigInt(15), t1],
        vec![
            Datum::BigInt(1),
            Datum::Double(30.2),
            Datum::BigInt(20),
            t2.clone(),
        ],
    ])
    .await
    .unwrap();
    w.close().await.unwrap();
    assert_eq!(
        lookup(&table, vec![Datum::BigInt(1)]).await,
        Some(vec![
            Datum::BigInt(1),
            Datum::Double(30.2),
            Datum::BigInt(35),
            t2
        ])
    );
}

/// Every function of the brief, with nulls on either side, and the changelog of the key.
#[tokio::test]
async fn every_function_with_nulls_and_the_changelog() {
    let env = TestEnv::new();
    let schema = Schema::builder()
        .column("id", DataType::int())
        .column("total", DataType::bigint())
        .column("hi", DataType::int())
        .column("lo", DataType::string())
        .column("last", DataType::int())
        .column("last_nn", DataType::int())
        .column("first", DataType::int())
        .column("first_nn", DataType::int())
        .column("tags", DataType::string())
        .column("names", DataType::string())
        .column("all_ok", DataType::boolean())
        .column("any_ok", DataType::boolean())
        .primary_key(["id"])
        .build()
        .unwrap();
    let table = agg_table(
        &env,
        "every_function",
        schema,
        &[
            ("fields.total.agg", "sum"),
            ("fields.hi.agg", "max"),
            ("fields.lo.agg", "min"),
            ("fields.last.agg", "last_value"),
            ("fields.last_nn.agg", "last_value_ignore_nulls"),
            ("fields.first.agg", "first_value"),
            ("fields.first_nn.agg", "first_value_ignore_nulls"),
            ("fields.tags.agg", "listagg"),
            ("fields.tags.listagg.delimiter", ";"),
            ("fields.names.agg", "listagg"),
            ("fields.all_ok.agg", "bool_and"),
            ("fields.any_ok.agg", "bool_or"),
        ],
    )
    .await
    .unwrap();
    let n = || Datum::Null;
    let i = Datum::Int;
    let b = Datum::Boolean;
    let rows = [
        vec![
            i(1),
            Datum::BigInt(10),
            i(5),
            s("m"),
            i(1),
            i(1),
            n(),
            n(),
            s("a"),
            s("x"),
            b(true),
            b(false),
        ],
        vec![
            i(1),
            n(),
            i(7),
            s("c"),
            n(),
            n(),
            i(2),
            i(2),
            n(),
            s("y"),
            b(false),
            n(),
        ],
        vec![
            i(1),
            Datum::BigInt(5),
            i(3),
            s("z"),
            i(3),
            n(),
            i(9),
            i(9),
            s("b"),
            s("z"),
            b(true),
            b(true),
        ],
    ];
    let w = table.new_upsert_writer(None).unwrap();
    for r in &rows {
        // One write per batch so each is folded into the stored row in order.
        w.upsert_rows(std::slice::from_ref(r)).await.unwrap();
    }
    w.close().await.unwrap();
    let after_two = vec![
        i(1),
        Datum::BigInt(10),
        i(7),
        s("c"),
        n(),
        i(1),
        i(2),
        i(2),
        s("a"),
        s("x,y"),
        b(false),
        b(false),
    ];
    let expected = vec![
        i(1),
        Datum::BigInt(15),
        i(7),
        s("c"),
        i(3),
        i(1),
        i(2),
        i(2),
        s("a;b"),
        s("x,y,z"),
        b(false),
        b(true),
    ];
    assert_eq!(lookup(&table, vec![i(1)]).await, Some(expected.clone()));

    // The changelog: +I of the first row as written, then -U/+U per fold.
    let mut sub = table.subscribe(StartupMode::Earliest).await.unwrap();
    let mut changes: Vec<(ChangeType, Vec<Datum>)> = Vec::new();
    for _ in 0..100 {
        for batch in sub.poll(Duration::from_millis(100)).await.unwrap() {
            let rows = riverlet::row::record_batch_to_rows(
                &batch.batch,
                &table.info().schema().data_types(),
            )
            .unwrap();
            changes.extend(batch.change_types.iter().copied().zip(rows));
        }
        if changes.len() >= 5 {
            break;
        }
    }
    assert_eq!(
        changes,
        vec![
            (ChangeType::Insert, rows[0].clone()),
            (ChangeType::UpdateBefore, rows[0].clone()),
            (ChangeType::UpdateAfter, after_two.clone()),
            (ChangeType::UpdateBefore, after_two),
            (ChangeType::UpdateAfter, expected),
        ]
    );
}

#[tokio::test]
async fn partial_updates_fold_only_their_columns() {
    let env = TestEnv::new();
    let schema = Schema::builder()
        .column("id", DataType::int())
        .column("clicks", DataType::bigint())
        .column("views", DataType::bigint())
        .primary_key(["id"])
        .build()
        .unwrap();
    let table = agg_table(
        &env,
        "counters",
        schema,
        &[("fields.clicks.agg", "sum"), ("fields.views.agg", "sum")],
    )
    .await
    .unwrap();
    let full = table.new_upsert_writer(None).unwrap();
    full.upsert_rows(&[vec![Datum::Int(1), Datum::BigInt(1), Datum::BigInt(10)]])
        .await
        .unwrap();
    let clicks = table.new_upsert_writer(Some(&["id", "clicks"])).unwrap();
    clicks
        .upsert_rows(&[
            vec![Datum::Int(1), Datum::BigInt(2), Datum::BigInt(999)],
            vec![Datum::Int(2), Datum::BigInt(5), Datum::BigInt(999)],
        ])
        .await
        .unwrap();
    assert_eq!(
        lookup(&table, vec![Datum::Int(1)]).await,
        Some(vec![Datum::Int(1), Datum::BigInt(3), Datum::BigInt(10)])
    );
    // A new key from a partial write: the other columns are null.
    assert_eq!(
        lookup(&table, vec![Datum::Int(2)]).await,
        Some(vec![Datum::Int(2), Datum::BigInt(5), Datum::Null])
    );
}

#[tokio::test]
async fn deletes_are_ignored_by_default_and_remove_the_row_when_allowed() {
    let env = TestEnv::new();
    let schema = || {
        Schema::builder()
            .column("id", DataType::int())
            .column("total", DataType::bigint())
            .primary_key(["id"])
            .build()
            .unwrap()
    };
    let ignoring = agg_table(&env, "ignoring", schema(), &[("fields.total.agg", "sum")])
        .await
        .unwrap();
    let allowing = agg_table(
        &env,
        "allowing",
        schema(),
        &[
            ("fields.total.agg", "sum"),
            ("table.delete.behavior", "allow"),
        ],
    )
    .await
    .unwrap();
    for t in [&ignoring, &allowing] {
        let w = t.new_upsert_writer(None).unwrap();
        w.upsert_rows(&[vec![Datum::Int(1), Datum::BigInt(4)]])
            .await
            .unwrap();
        w.delete_rows(&[vec![Datum::Int(1)]]).await.unwrap();
        w.close().await.unwrap();
    }
    assert_eq!(
        lookup(&ignoring, vec![Datum::Int(1)]).await,
        Some(vec![Datum::Int(1), Datum::BigInt(4)])
    );
    assert_eq!(lookup(&allowing, vec![Datum::Int(1)]).await, None);
}

#[tokio::test]
async fn bad_functions_are_rejected_naming_the_column() {
    let env = TestEnv::new();
    let schema = || {
        Schema::builder()
            .column("id", DataType::int())
            .column("name", DataType::string())
            .primary_key(["id"])
            .build()
            .unwrap()
    };
    // Checked by the server: sum of a STRING.
    let e = agg_table(&env, "sum_of_text", schema(), &[("fields.name.agg", "sum")])
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.message().contains("column 'name'"), "{e}");
    assert!(e.message().contains("sum"), "{e}");
    // Checked by the client before any request: an unknown function.
    let e = agg_table(&env, "median", schema(), &[("fields.name.agg", "median")])
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.message().contains("column 'name'"), "{e}");
    assert!(e.message().contains("median"), "{e}");
}
