//! The blocking scan wrappers against the test server (embedded, on its own runtime, or external).

use crate::common;

use std::time::Duration;

use arrow_array::RecordBatchReader;
use common::{descriptor, ids, rows_batch, TestEnv};
use riverlet::blocking;
use riverlet::scan::{ReadRequest, StartupMode, SubscribeRequest};

#[test]
fn blocking_scan_count_lookup_subscribe() {
    let env = TestEnv::new();
    let conn = blocking::Connection::connect(env.config()).unwrap();
    let p = env.path("blocking");
    let admin = conn.admin();
    admin.create_database(&p.database, true).unwrap();
    let d = descriptor(true, false, 2);
    admin.create_table(&p, &d, false).unwrap();
    common::await_leaders_blocking(&env, &p, &d);
    let table = conn.table(&p).unwrap();
    let w = table.new_upsert_writer(None).unwrap();
    let t0 = riverlet::scan::time::now_millis();
    std::thread::sleep(Duration::from_millis(3));
    w.upsert(&rows_batch(&[(1, "a", "eu"), (2, "b", "eu")]))
        .unwrap();
    w.flush().unwrap();

    let reader = table
        .read(&ReadRequest {
            columns: Some(vec!["id".into(), "name".into()]),
            ..ReadRequest::default()
        })
        .unwrap();
    assert_eq!(reader.schema().fields().len(), 2);
    let batches: Vec<_> = reader.map(|b| b.unwrap()).collect();
    assert_eq!(ids(&batches), vec![1, 2]);
    assert_eq!(table.count(&ReadRequest::default()).unwrap(), 2);
    let win = table
        .read(&ReadRequest {
            start: Some(t0.into()),
            ..ReadRequest::default()
        })
        .unwrap()
        .read_all()
        .unwrap();
    assert_eq!(ids(&win), vec![1, 2]);
    let l = table.new_lookuper().unwrap();
    let found = l.lookup(&rows_batch(&[(2, "", "eu")])).unwrap();
    assert_eq!(ids(&[found]), vec![2]);
    // Keys 7 (absent), 2 and 1: rows for keys #1 and #2 only, each tagged with its key's row.
    let tagged = l
        .lookup_with_key_index(&rows_batch(&[(7, "", "eu"), (2, "", "eu"), (1, "", "eu")]))
        .unwrap();
    assert_eq!(
        tagged.schema().field(0).name(),
        riverlet::scan::KEY_INDEX_COLUMN
    );
    let key_index = tagged
        .column(0)
        .as_any()
        .downcast_ref::<arrow_array::Int32Array>()
        .unwrap();
    assert_eq!(key_index.values().to_vec(), vec![1, 2]);
    let rows = tagged
        .project(&(1..tagged.num_columns()).collect::<Vec<_>>())
        .unwrap();
    assert_eq!(ids(&[rows]), vec![1, 2]);
    // Key order: the first row answers key #1 (id 2).
    let id_col = tagged.column_by_name("id").unwrap();
    assert_eq!(
        arrow_cast::display::array_value_to_string(id_col, 0).unwrap(),
        "2"
    );
    let mut sub = table
        .subscribe(&SubscribeRequest::new(StartupMode::Earliest))
        .unwrap();
    let mut n = 0;
    for _ in 0..50 {
        n += sub
            .poll(Duration::from_millis(50))
            .unwrap()
            .iter()
            .map(|b| b.batch.num_rows())
            .sum::<usize>();
        if n >= 2 {
            break;
        }
    }
    assert_eq!(n, 2);
    conn.close().unwrap();
    drop(env);
}
