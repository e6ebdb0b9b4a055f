//! DELETE and UPDATE by condition on primary-key tables (`Table::delete_where`,
//! `Table::update_where`) against the test server: the key path, the scan path, partitioned
//! tables, delete behaviors, merge engines and typed errors. The statements and tables are those
//! of Fluss's Flink guide (fluss-flink-writes). Everything here is client-side, so the tests
//! also run against Apache Fluss 0.9.1 (`RIVERLET_TEST_BOOTSTRAP`).

use crate::common;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use common::*;
use riverlet::blocking;
use riverlet::client::Table;
use riverlet::metadata::{DataType, Schema, TableDescriptor};
use riverlet::row::Datum;
use riverlet::scan::{parse_filter, Expr};
use riverlet::write::Assignments;
use riverlet::ErrorKind;

/// (shop_id, user_id, num_orders, total_amount); num_orders and total_amount may be null.
type Row = (i64, i64, Option<i32>, Option<i32>);

/// Fluss's `pk_table` of the Flink guide.
fn pk_table_descriptor(properties: &[(&str, &str)]) -> TableDescriptor {
    let schema = Schema::builder()
        .column("shop_id", DataType::bigint().not_null())
        .column("user_id", DataType::bigint().not_null())
        .column("num_orders", DataType::int())
        .column("total_amount", DataType::int())
        .primary_key(["shop_id", "user_id"])
        .build()
        .unwrap();
    let mut d = TableDescriptor::builder(schema).distributed_by(Some(3), Vec::<String>::new());
    for (k, v) in properties {
        d = d.property(*k, *v);
    }
    d.build().unwrap()
}

const ROWS: [Row; 5] = [
    (10000, 123456, Some(3), Some(150)),
    (10000, 2, Some(0), Some(0)),
    (20000, 3, Some(5), Some(100)),
    (20000, 4, Some(1), Some(101)),
    (30000, 5, Some(0), Some(250)),
];

fn datums(r: &Row) -> Vec<Datum> {
    vec![
        Datum::BigInt(r.0),
        Datum::BigInt(r.1),
        r.2.map_or(Datum::Null, Datum::Int),
        r.3.map_or(Datum::Null, Datum::Int),
    ]
}

async fn pk_table(env: &TestEnv, name: &str, properties: &[(&str, &str)]) -> Table {
    let conn = env.connect().await;
    let table = create_table(&conn, &env.path(name), pk_table_descriptor(properties)).await;
    let w = table.new_upsert_writer(None).unwrap();
    w.upsert_rows(&ROWS.iter().map(datums).collect::<Vec<_>>())
        .await
        .unwrap();
    w.close().await.unwrap();
    table
}

/// The table's latest view, sorted by key.
fn rows_of(batches: &[RecordBatch]) -> Vec<Row> {
    let mut out = Vec::new();
    for b in batches {
        let shop = b
            .column_by_name("shop_id")
            .unwrap()
            .as_primitive::<Int64Type>();
        let user = b
            .column_by_name("user_id")
            .unwrap()
            .as_primitive::<Int64Type>();
        let orders = b
            .column_by_name("num_orders")
            .unwrap()
            .as_primitive::<Int32Type>();
        let amount = b
            .column_by_name("total_amount")
            .unwrap()
            .as_primitive::<Int32Type>();
        for i in 0..b.num_rows() {
            let opt = |a: &arrow_array::Int32Array| (!a.is_null(i)).then(|| a.value(i));
            out.push((shop.value(i), user.value(i), opt(orders), opt(amount)));
        }
    }
    out.sort();
    out
}

async fn current(table: &Table) -> Vec<Row> {
    rows_of(&table.scan().collect().await.unwrap())
}

fn sorted(rows: &[Row]) -> Vec<Row> {
    let mut v = rows.to_vec();
    v.sort();
    v
}

fn f(text: &str) -> Expr {
    parse_filter(text).unwrap()
}

#[tokio::test]
async fn delete_by_key_and_by_any_condition() {
    let env = TestEnv::new();
    let table = pk_table(&env, "pk_table", &[]).await;

    // Equality on the whole key: one lookup, one delete.
    let n = table
        .delete_where(&f("shop_id = 10000 AND user_id = 123456"))
        .await
        .unwrap();
    assert_eq!(n, 1);
    assert_eq!(current(&table).await, sorted(&ROWS[1..]));
    // The same key again: nothing left to delete.
    let n = table
        .delete_where(&f("user_id = 123456 AND shop_id = 10000"))
        .await
        .unwrap();
    assert_eq!(n, 0);
    // A key value the BIGINT column cannot hold matches nothing.
    let n = table
        .delete_where(&f("shop_id = 10000 AND user_id = 2.5"))
        .await
        .unwrap();
    assert_eq!(n, 0);

    // Not a key: scan and delete the matching rows.
    let n = table.delete_where(&f("total_amount > 100")).await.unwrap();
    assert_eq!(n, 2);
    assert_eq!(
        current(&table).await,
        vec![(10000, 2, Some(0), Some(0)), (20000, 3, Some(5), Some(100))]
    );
    // Part of the key only is a scan too.
    let n = table.delete_where(&f("shop_id = 20000")).await.unwrap();
    assert_eq!(n, 1);
    assert_eq!(current(&table).await, vec![(10000, 2, Some(0), Some(0))]);
    // Nothing matches.
    let n = table.delete_where(&f("num_orders IS NULL")).await.unwrap();
    assert_eq!(n, 0);
    assert_eq!(current(&table).await, vec![(10000, 2, Some(0), Some(0))]);
}

#[tokio::test]
async fn update_by_key_and_by_any_condition() {
    let env = TestEnv::new();
    let table = pk_table(&env, "pk_table", &[]).await;

    // UPDATE pk_table SET total_amount = 2 WHERE shop_id = 10000 AND user_id = 123456
    let set = Assignments::new().set("total_amount", 2);
    let n = table
        .update_where(&f("shop_id = 10000 AND user_id = 123456"), &set)
        .await
        .unwrap();
    assert_eq!(n, 1);
    // A missing key updates nothing (and creates nothing).
    let n = table
        .update_where(&f("shop_id = 10000 AND user_id = 7"), &set)
        .await
        .unwrap();
    assert_eq!(n, 0);
    assert_eq!(
        current(&table).await,
        vec![
            (10000, 2, Some(0), Some(0)),
            (10000, 123456, Some(3), Some(2)),
            (20000, 3, Some(5), Some(100)),
            (20000, 4, Some(1), Some(101)),
            (30000, 5, Some(0), Some(250)),
        ]
    );

    // UPDATE pk_table SET total_amount = 0 WHERE num_orders = 0 (text form of the assignments)
    let n = table
        .update_where(&f("num_orders = 0"), &"total_amount = 0".parse().unwrap())
        .await
        .unwrap();
    assert_eq!(n, 2);
    // Two columns at once, one of them to NULL, by a condition on another column.
    let n = table
        .update_where(
            &f("total_amount BETWEEN 100 AND 101"),
            &Assignments::parse("num_orders = NULL, total_amount = -1").unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(n, 2);
    assert_eq!(
        current(&table).await,
        vec![
            (10000, 2, Some(0), Some(0)),
            (10000, 123456, Some(3), Some(2)),
            (20000, 3, None, Some(-1)),
            (20000, 4, None, Some(-1)),
            (30000, 5, Some(0), Some(0)),
        ]
    );
}

#[tokio::test]
async fn partitioned_table_deletes_and_updates_only_matching_partitions() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let schema = Schema::builder()
        .column("region", DataType::string().not_null())
        .column("id", DataType::int().not_null())
        .column("name", DataType::string())
        .primary_key(["region", "id"])
        .build()
        .unwrap();
    let d = TableDescriptor::builder(schema)
        .distributed_by(Some(2), Vec::<String>::new())
        .partitioned_by(["region"])
        .build()
        .unwrap();
    let path = env.path("regions");
    let table = create_table(&conn, &path, d).await;
    for r in ["eu", "us"] {
        conn.admin()
            .create_partition(
                &path,
                &riverlet::metadata::PartitionSpec::new([("region", r)]),
                true,
            )
            .await
            .unwrap();
    }
    let w = table.new_upsert_writer(None).unwrap();
    let row = |region: &str, id: i32, name: &str| {
        vec![
            Datum::String(region.into()),
            Datum::Int(id),
            Datum::String(name.into()),
        ]
    };
    w.upsert_rows(&[
        row("eu", 1, "anna"),
        row("eu", 2, "bob"),
        row("eu", 3, "alice"),
        row("us", 1, "adam"),
        row("us", 2, "bea"),
    ])
    .await
    .unwrap();
    w.close().await.unwrap();
    let contents = |batches: Vec<RecordBatch>| {
        let mut v: Vec<(String, i32, Option<String>)> = Vec::new();
        for b in &batches {
            let region = b.column_by_name("region").unwrap().as_string::<i32>();
            let id = b.column_by_name("id").unwrap().as_primitive::<Int32Type>();
            let name = b.column_by_name("name").unwrap().as_string::<i32>();
            for i in 0..b.num_rows() {
                v.push((
                    region.value(i).to_string(),
                    id.value(i),
                    (!name.is_null(i)).then(|| name.value(i).to_string()),
                ));
            }
        }
        v.sort();
        v
    };
    let s = |v: &str| Some(v.to_string());

    // The partition column's predicate prunes `us`; the name predicate picks rows in `eu`.
    let n = table
        .delete_where(&f("region = 'eu' AND name LIKE 'a%'"))
        .await
        .unwrap();
    assert_eq!(n, 2);
    // The whole key (partition column included): the direct path.
    let n = table
        .update_where(
            &f("region = 'us' AND id = 2"),
            &Assignments::new().set("name", "beatrice"),
        )
        .await
        .unwrap();
    assert_eq!(n, 1);
    // A key in a partition that does not exist matches nothing.
    let n = table
        .delete_where(&f("region = 'apac' AND id = 1"))
        .await
        .unwrap();
    assert_eq!(n, 0);
    let n = table
        .update_where(&f("id = 1"), &Assignments::new().set("name", "first"))
        .await
        .unwrap();
    assert_eq!(n, 1);
    assert_eq!(
        contents(table.scan().collect().await.unwrap()),
        vec![
            ("eu".to_string(), 2, s("bob")),
            ("us".to_string(), 1, s("first")),
            ("us".to_string(), 2, s("beatrice")),
        ]
    );

    // Partition columns are part of the key and cannot be set.
    let e = table
        .update_where(&f("id = 2"), &Assignments::new().set("region", "us"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(e.message().contains("column 'region'"), "{e}");
    assert!(e.message().contains("partition column"), "{e}");
}

#[tokio::test]
async fn delete_behaviors_disable_and_ignore() {
    let env = TestEnv::new();
    let disabled = pk_table(&env, "disabled", &[("table.delete.behavior", "disable")]).await;
    let e = disabled
        .delete_where(&f("total_amount > 100"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(
        e.message().contains("delete behavior set to 'disable'"),
        "{e}"
    );
    let e = disabled
        .delete_where(&f("shop_id = 10000 AND user_id = 2"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    // UPDATE is not a delete: allowed.
    let n = disabled
        .update_where(
            &f("shop_id = 30000"),
            &Assignments::new().set("num_orders", 9),
        )
        .await
        .unwrap();
    assert_eq!(n, 1);
    let mut expected = ROWS.to_vec();
    expected[4].2 = Some(9);
    assert_eq!(current(&disabled).await, sorted(&expected));

    let ignored = pk_table(&env, "ignored", &[("table.delete.behavior", "ignore")]).await;
    let n = ignored
        .delete_where(&f("total_amount > 100"))
        .await
        .unwrap();
    assert_eq!(n, 0);
    let n = ignored
        .delete_where(&f("shop_id = 10000 AND user_id = 2"))
        .await
        .unwrap();
    assert_eq!(n, 0);
    assert_eq!(current(&ignored).await, sorted(&ROWS));
    // A bad filter is still an error under `ignore`.
    let e = ignored.delete_where(&f("nope > 1")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("nope"), "{e}");
}

#[tokio::test]
async fn merge_engines_and_log_tables_reject_both_statements() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let set = Assignments::new().set("num_orders", 1);
    let engines: [&[(&str, &str)]; 3] = [
        &[("table.merge-engine", "first_row")],
        &[
            ("table.merge-engine", "versioned"),
            ("table.merge-engine.versioned.ver-column", "total_amount"),
        ],
        &[
            ("table.merge-engine", "aggregation"),
            ("fields.total_amount.agg", "sum"),
        ],
    ];
    for (i, props) in engines.iter().enumerate() {
        let path = env.path(&format!("engine_{i}"));
        let table = create_table(&conn, &path, pk_table_descriptor(props)).await;
        let engine = props[0].1.to_ascii_uppercase();
        for e in [
            table.delete_where(&f("num_orders = 0")).await.unwrap_err(),
            table
                .delete_where(&f("shop_id = 1 AND user_id = 2"))
                .await
                .unwrap_err(),
            table
                .update_where(&f("num_orders = 0"), &set)
                .await
                .unwrap_err(),
        ] {
            assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
            assert!(
                e.message()
                    .contains(&format!("uses the '{engine}' merge engine")),
                "{e}"
            );
        }
    }

    let log = create_table(&conn, &env.path("log"), descriptor(false, false, 1)).await;
    for e in [
        log.delete_where(&f("id = 1")).await.unwrap_err(),
        log.update_where(&f("id = 1"), &Assignments::new().set("name", "x"))
            .await
            .unwrap_err(),
    ] {
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
        assert!(e.message().contains("is a Log Table"), "{e}");
    }
}

#[tokio::test]
async fn bad_assignments_name_the_column() {
    let env = TestEnv::new();
    let table = pk_table(&env, "pk_table", &[]).await;
    let err = |set: Assignments| {
        let table = table.clone();
        async move {
            table
                .update_where(&f("num_orders = 0"), &set)
                .await
                .unwrap_err()
        }
    };

    let e = err(Assignments::new().set("user_id", 1)).await;
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(e.message().contains("column 'user_id'"), "{e}");
    assert!(e.message().contains("primary key column"), "{e}");

    let e = err(Assignments::new().set("nope", 1)).await;
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("unknown column 'nope'"), "{e}");

    let e = err(Assignments::new().set("total_amount", "many")).await;
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("total_amount"), "{e}");
    assert!(e.message().contains("'many'"), "{e}");

    let e = err(Assignments::new().set("total_amount", 2.5)).await;
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("total_amount"), "{e}");
    assert!(e.message().contains("2.5"), "{e}");

    let e = err(Assignments::new()
        .set("total_amount", 1)
        .set("total_amount", 2))
    .await;
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("set twice"), "{e}");

    let e = err(Assignments::new()).await;
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);

    let e = Assignments::parse("total_amount 3").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("expected '='"), "{e}");

    // Nothing was written by the failed statements.
    assert_eq!(current(&table).await, sorted(&ROWS));
}

#[tokio::test]
async fn not_null_columns_cannot_be_set_to_null() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let schema = Schema::builder()
        .column("id", DataType::int().not_null())
        .column("name", DataType::string().not_null())
        .primary_key(["id"])
        .build()
        .unwrap();
    let d = TableDescriptor::builder(schema)
        .distributed_by(Some(1), Vec::<String>::new())
        .build()
        .unwrap();
    let table = create_table(&conn, &env.path("strict"), d).await;
    let e = table
        .update_where(
            &f("id = 1"),
            &Assignments::new().set("name", riverlet::scan::Literal::Null),
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("'name'"), "{e}");
    assert!(e.message().contains("NOT NULL"), "{e}");
}

/// The blocking facade every binding calls.
#[test]
fn blocking_delete_and_update_where() {
    let env = TestEnv::new();
    let conn = blocking::Connection::connect(env.config()).unwrap();
    let path = env.path("pk_table");
    let admin = conn.admin();
    admin.create_database(&path.database, true).unwrap();
    let d = pk_table_descriptor(&[]);
    admin.create_table(&path, &d, false).unwrap();
    common::await_leaders_blocking(&env, &path, &d);
    let table = conn.table(&path).unwrap();
    let w = table.new_upsert_writer(None).unwrap();
    w.upsert_rows(&ROWS.iter().map(datums).collect::<Vec<_>>())
        .unwrap();
    w.close().unwrap();

    let n = table
        .update_where(
            &f("num_orders >= 3"),
            &Assignments::parse("total_amount = 7").unwrap(),
        )
        .unwrap();
    assert_eq!(n, 2);
    let n = table.delete_where(&f("num_orders = 0")).unwrap();
    assert_eq!(n, 2);
    assert_eq!(
        rows_of(
            &table
                .read(&riverlet::scan::ReadRequest::default())
                .unwrap()
                .read_all()
                .unwrap()
        ),
        vec![
            (10000, 123456, Some(3), Some(7)),
            (20000, 3, Some(5), Some(7)),
            (20000, 4, Some(1), Some(101)),
        ]
    );
    conn.close().unwrap();
    drop(env);
}
