//! Auto-increment columns (the dictionary-encoding pattern of Fluss: `name STRING` primary key,
//! `id BIGINT` auto-increment) against the test server: values assigned on insert and kept on
//! update, full-row writers rejected with Fluss's message, lookups, and lookup with
//! insert-if-not-exists. Apache Fluss 0.9.1 serves all of it, so these tests also run against it
//! (`RIVERLET_TEST_BOOTSTRAP`); with one bucket both servers hand out 1, 2, 3, ...

use crate::common;

use common::*;
use riverlet::client::Table;
use riverlet::metadata::{DataType, Schema, TableDescriptor};
use riverlet::row::Datum;
use riverlet::ErrorKind;

async fn dictionary(env: &TestEnv, name: &str, buckets: i32) -> Table {
    let conn = env.connect().await;
    let schema = Schema::builder()
        .column("name", DataType::string())
        .column("id", DataType::bigint())
        .column("note", DataType::string())
        .primary_key(["name"])
        .auto_increment("id")
        .build()
        .unwrap();
    let d = TableDescriptor::builder(schema)
        .distributed_by(Some(buckets), Vec::<String>::new())
        .build()
        .unwrap();
    create_table(&conn, &env.path(name), d).await
}

fn key(name: &str) -> Vec<Datum> {
    vec![Datum::String(name.into())]
}

fn row(name: &str, note: Option<&str>) -> Vec<Datum> {
    vec![
        Datum::String(name.into()),
        Datum::Null,
        note.map_or(Datum::Null, |n| Datum::String(n.into())),
    ]
}

fn id_of(found: &Option<Vec<Datum>>) -> i64 {
    match found.as_ref().map(|r| &r[1]) {
        Some(Datum::BigInt(v)) => *v,
        other => panic!("expected an assigned id, got {other:?}"),
    }
}

#[tokio::test]
async fn values_are_assigned_on_insert_and_kept_on_update() {
    let env = TestEnv::new();
    let table = dictionary(&env, "dict", 1).await;

    // A full-row writer would write the column: rejected with Fluss's message.
    let full = table.new_upsert_writer(None).unwrap();
    let e = full.upsert_rows(&[row("x", None)]).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(
        e.message().contains(
            "The table contains an auto-increment column [id], but update target columns are \
             not explicitly specified"
        ),
        "{e}"
    );
    // Naming the column as a target is rejected too.
    let with_id = table.new_upsert_writer(Some(&["name", "id"])).unwrap();
    let e = with_id.upsert_rows(&[row("x", None)]).await.unwrap_err();
    assert!(
        e.message().contains(
            "Auto-increment column [id] at index 1 must not be included in target columns"
        ),
        "{e}"
    );

    // A partial writer that leaves the column out works; the server assigns 1, 2, 3.
    let w = table.new_upsert_writer(Some(&["name", "note"])).unwrap();
    w.upsert_rows(&[row("a", Some("first")), row("b", None), row("c", None)])
        .await
        .unwrap();
    let l = table.new_lookuper().unwrap();
    let found = l
        .lookup_rows(&[key("a"), key("b"), key("c")])
        .await
        .unwrap();
    let ids: Vec<i64> = found.iter().map(id_of).collect();
    assert_eq!(ids, vec![1, 2, 3]);
    assert_eq!(
        found[0],
        Some(vec![
            Datum::String("a".into()),
            Datum::BigInt(1),
            Datum::String("first".into())
        ])
    );

    // An update keeps the value. A delete through a writer with target columns is a partial
    // delete in Fluss: it nulls the target columns and keeps the row while another column (here
    // the assigned id) is set, so the key and its value stay.
    w.upsert_rows(&[row("a", Some("again")), row("b", Some("note"))])
        .await
        .unwrap();
    w.delete_rows(&[key("b")]).await.unwrap();
    w.upsert_rows(&[row("b", None)]).await.unwrap();
    let found = l.lookup_rows(&[key("a"), key("b")]).await.unwrap();
    assert_eq!(
        found[0],
        Some(vec![
            Datum::String("a".into()),
            Datum::BigInt(1),
            Datum::String("again".into())
        ])
    );
    assert_eq!(
        found[1],
        Some(vec![
            Datum::String("b".into()),
            Datum::BigInt(2),
            Datum::Null
        ])
    );
    // The latest view shows the assigned values too.
    let batches = table.scan().collect().await.unwrap();
    let mut rows = Vec::new();
    for b in &batches {
        rows.extend(
            riverlet::row::record_batch_to_rows(b, &table.info().schema().data_types()).unwrap(),
        );
    }
    rows.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    let ids: Vec<&Datum> = rows.iter().map(|r| &r[1]).collect();
    assert_eq!(
        ids,
        vec![&Datum::BigInt(1), &Datum::BigInt(2), &Datum::BigInt(3)]
    );

    // UPDATE and DELETE by condition write around the column (the server rejects writes that
    // name it) and keep its values.
    let filter = |t: &str| riverlet::scan::parse_filter(t).unwrap();
    let set = riverlet::write::Assignments::new().set("note", "changed");
    assert_eq!(
        table.update_where(&filter("id >= 3"), &set).await.unwrap(),
        1
    );
    let e = table
        .update_where(
            &filter("name = 'a'"),
            &riverlet::write::Assignments::new().set("id", 7),
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    assert!(e.message().contains("auto-increment"), "{e}");
    // DELETE could only be a partial delete that keeps the row: refused.
    let e = table.delete_where(&filter("id = 1")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    assert!(e.message().contains("auto-increment column [id]"), "{e}");
    let found = l
        .lookup_rows(&[key("a"), key("b"), key("c")])
        .await
        .unwrap();
    assert_eq!(
        found,
        vec![
            Some(vec![
                Datum::String("a".into()),
                Datum::BigInt(1),
                Datum::String("again".into())
            ]),
            Some(vec![
                Datum::String("b".into()),
                Datum::BigInt(2),
                Datum::Null
            ]),
            Some(vec![
                Datum::String("c".into()),
                Datum::BigInt(3),
                Datum::String("changed".into())
            ]),
        ]
    );
}

#[tokio::test]
async fn lookup_with_insert_if_not_exists_creates_missing_keys() {
    let env = TestEnv::new();
    let table = dictionary(&env, "dict", 1).await;
    let w = table.new_upsert_writer(Some(&["name", "note"])).unwrap();
    w.upsert_rows(&[row("apple", Some("fruit"))]).await.unwrap();

    let plain = table.new_lookuper().unwrap();
    assert_eq!(plain.lookup_rows(&[key("pear")]).await.unwrap(), vec![None]);

    let inserting = table
        .new_lookuper()
        .unwrap()
        .insert_if_not_exists(true)
        .unwrap();
    let found = inserting
        .lookup_rows(&[key("pear"), key("apple"), key("plum")])
        .await
        .unwrap();
    assert_eq!(
        found,
        vec![
            Some(vec![
                Datum::String("pear".into()),
                Datum::BigInt(2),
                Datum::Null
            ]),
            Some(vec![
                Datum::String("apple".into()),
                Datum::BigInt(1),
                Datum::String("fruit".into())
            ]),
            Some(vec![
                Datum::String("plum".into()),
                Datum::BigInt(3),
                Datum::Null
            ]),
        ]
    );
    // Asking again returns the same values: nothing is inserted twice.
    let again = inserting
        .lookup_rows(&[key("plum"), key("pear")])
        .await
        .unwrap();
    assert_eq!((id_of(&again[0]), id_of(&again[1])), (3, 2));
    assert_eq!(
        plain.lookup_rows(&[key("pear")]).await.unwrap(),
        vec![found[0].clone()]
    );
    assert_eq!(table.count().await.unwrap(), 3);
}

#[tokio::test]
async fn many_buckets_get_distinct_values() {
    let env = TestEnv::new();
    let table = dictionary(&env, "dict", 3).await;
    let w = table.new_upsert_writer(Some(&["name"])).unwrap();
    let names: Vec<String> = (0..40).map(|i| format!("k{i}")).collect();
    w.upsert_rows(&names.iter().map(|n| row(n, None)).collect::<Vec<_>>())
        .await
        .unwrap();
    let keys: Vec<Vec<Datum>> = names.iter().map(|n| key(n)).collect();
    let found = table
        .new_lookuper()
        .unwrap()
        .lookup_rows(&keys)
        .await
        .unwrap();
    let mut ids: Vec<i64> = found.iter().map(id_of).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 40, "ids are distinct: {ids:?}");
    assert!(ids[0] >= 1);
}

#[tokio::test]
async fn invalid_declarations_and_lookups_are_rejected() {
    // Fluss's schema rules, checked by the client before any request.
    let bad = Schema::builder()
        .column("name", DataType::string())
        .column("id", DataType::string())
        .primary_key(["name"])
        .auto_increment("id")
        .build()
        .unwrap_err();
    assert!(bad.message().contains("must be INT or BIGINT"), "{bad}");
    let bad = Schema::builder()
        .column("id", DataType::bigint())
        .primary_key(["id"])
        .auto_increment("id")
        .build()
        .unwrap_err();
    assert!(
        bad.message().contains("can not be used as the primary key"),
        "{bad}"
    );

    // Insert-if-not-exists cannot fill a NOT NULL column.
    let env = TestEnv::new();
    let conn = env.connect().await;
    let schema = Schema::builder()
        .column("name", DataType::string())
        .column("id", DataType::bigint())
        .column("required", DataType::string().not_null())
        .primary_key(["name"])
        .auto_increment("id")
        .build()
        .unwrap();
    let d = TableDescriptor::builder(schema)
        .distributed_by(Some(1), Vec::<String>::new())
        .build()
        .unwrap();
    let table = create_table(&conn, &env.path("strict"), d).await;
    let e = table
        .new_lookuper()
        .unwrap()
        .insert_if_not_exists(true)
        .unwrap_err();
    assert!(e.message().contains("[required]"), "{e}");
}
