//! The blocking facade: connection, admin, writers from plain threads; no nested runtimes.

use std::sync::Arc;

use arrow_array::{Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema as ArrowSchema};
use riverlet::blocking::Connection;
use riverlet::client::OffsetSpec;
use riverlet::metadata::{DataType, Schema, TableDescriptor};
use riverlet::row::Datum;
use riverlet::ErrorKind;

mod common;
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
