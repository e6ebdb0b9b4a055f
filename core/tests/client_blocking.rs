//! The blocking facade: connection, admin, writers from plain threads; no nested runtimes.

use std::sync::Arc;

use arrow_array::{Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema as ArrowSchema};
use riverlet::blocking::Connection;
use riverlet::client::OffsetSpec;
use riverlet::metadata::{DataType, Schema, TableDescriptor};
use riverlet::row::Datum;
use riverlet::ErrorKind;

use crate::common;
use common::TestEnv;

#[test]
fn blocking_admin_and_writes_from_many_threads() {
    let env = TestEnv::new();
    let conn = Connection::connect(env.config()).unwrap();
    let admin = conn.admin();
    let schema = Schema::builder()
        .column("id", DataType::int().not_null())
        .column("name", DataType::string())
        .build()
        .unwrap();
    let path = env.path("t");
    let d = TableDescriptor::builder(schema)
        .distributed_by(Some(2), Vec::<String>::new())
        .build()
        .unwrap();
    admin.create_table(&path, &d, false).unwrap();
    common::await_leaders_blocking(&env, &path, &d);
    let table = conn.table_by_name(&path.to_string()).unwrap();
    let writer = Arc::new(table.new_append_writer().unwrap());

    let threads: Vec<_> = (0..4)
        .map(|t| {
            let w = writer.clone();
            std::thread::spawn(move || {
                for i in 0..5 {
                    let base = t * 100 + i * 10;
                    let b = RecordBatch::try_new(
                        w.inner().schema().clone(),
                        vec![
                            Arc::new(Int32Array::from((base..base + 10).collect::<Vec<_>>())),
                            Arc::new(StringArray::from(vec![Some("x"); 10])),
                        ],
                    )
                    .unwrap();
                    w.append(&b).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    writer
        .append_rows(&[vec![Datum::Int(-1), Datum::Null]])
        .unwrap()
        .wait()
        .unwrap();
    writer.flush().unwrap();
    let offsets = admin
        .list_offsets(&path, None, &[], OffsetSpec::Latest)
        .unwrap();
    assert_eq!(offsets.values().sum::<i64>(), 201);

    // Schema errors come back from append itself.
    let bad = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![Field::new(
            "id",
            ArrowType::Utf8,
            false,
        )])),
        vec![Arc::new(StringArray::from(vec!["1"]))],
    )
    .unwrap();
    let e = writer.append(&bad).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);

    // A blocking call from inside a runtime is refused, not nested.
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let e = rt.block_on(async { admin.list_databases() }).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);

    writer.close().unwrap();
    conn.close().unwrap();
    assert_eq!(
        admin.list_databases().unwrap_err().kind(),
        ErrorKind::Closed
    );
}

/// A table's upserts, partial updates and deletes through [`TableWriters`] (the Python and Java
/// bindings' table-level writes) reach the server in call order although a partial update has
/// a writer of its own: each key gets a whole-row upsert and then, queued right behind it with
/// no flush between, a partial update of one column (and every tenth key a delete after that).
/// Before the writers were ordered, a partial update could land before its upsert and be
/// overwritten by it (found by tests/reliability/failover.py --client java).
#[test]
fn table_writers_apply_upserts_partial_updates_and_deletes_in_call_order() {
    use riverlet::blocking::TableWriters;

    let env = TestEnv::new();
    let conn = Connection::connect(env.config()).unwrap();
    let schema = Schema::builder()
        .column("id", DataType::int().not_null())
        .column("name", DataType::string())
        .column("region", DataType::string())
        .primary_key(["id"])
        .build()
        .unwrap();
    let path = env.path("ordered");
    let d = TableDescriptor::builder(schema)
        .distributed_by(Some(3), Vec::<String>::new())
        .build()
        .unwrap();
    conn.admin().create_table(&path, &d, false).unwrap();
    common::await_leaders_blocking(&env, &path, &d);
    let table = conn.table_by_name(&path.to_string()).unwrap();
    let writers = TableWriters::new(table.clone());
    let s = |v: &str| Datum::String(v.to_string());
    // Every switch between the writers flushes (that is how the order is kept), and on a
    // replicated cluster a flush waits for the followers: 20 keys keep it under a minute there.
    const KEYS: i32 = 20;
    for round in 0..3 {
        for k in 0..KEYS {
            let id = Datum::Int(k);
            let full = vec![id.clone(), s(&format!("full-{round}")), s("eu")];
            writers
                .upsert_writer(None)
                .unwrap()
                .upsert_rows(&[full])
                .unwrap();
            let partial = vec![id.clone(), s(&format!("partial-{round}")), Datum::Null];
            let cols = Some(vec!["id".to_string(), "name".to_string()]);
            writers
                .upsert_writer(cols)
                .unwrap()
                .upsert_rows(&[partial])
                .unwrap();
            if k % 10 == 0 && round == 2 {
                writers
                    .upsert_writer(None)
                    .unwrap()
                    .delete_rows(&[vec![id]])
                    .unwrap();
            }
        }
    }
    writers.flush().unwrap();
    let keys: Vec<Vec<Datum>> = (0..KEYS).map(|k| vec![Datum::Int(k)]).collect();
    let found = table.new_lookuper().unwrap().lookup_rows(&keys).unwrap();
    for (k, row) in (0..KEYS).zip(found) {
        // What the calls say, in their order: the last round's partial update over its upsert,
        // and the delete after both for every tenth key.
        let expected = (k % 10 != 0).then(|| vec![Datum::Int(k), s("partial-2"), s("eu")]);
        assert_eq!(row, expected, "key {k}");
    }
    writers.close().unwrap();
    conn.close().unwrap();
}
