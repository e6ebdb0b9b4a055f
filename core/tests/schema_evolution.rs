//! `ALTER TABLE ... ADD COLUMN` (nullable, at the end): every read path presents data written
//! under the older schema id in the current schema (the added column null), writers opened after
//! the change write the new schema, and a writer opened before it still works (its rows get a
//! null for the new column).

use std::time::Duration;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use riverlet::client::{ClientConfig, Connection, Table};
use riverlet::metadata::{AddColumn, DataType, Schema, TableDescriptor, TablePath};
use riverlet::row::Datum;
use riverlet::scan::StartupMode;
use riverlet::ErrorKind;
use riverlet_server::{LocalServer, ServerConfig};

type Row = (i32, String, Option<i64>);

/// (k, v, n) of every row, sorted.
fn rows_of(batches: &[RecordBatch]) -> Vec<Row> {
    let mut out = Vec::new();
    for b in batches {
        let k = b.column_by_name("k").unwrap().as_primitive::<Int32Type>();
        let v = b.column_by_name("v").unwrap().as_string::<i32>();
        let n = b.column_by_name("n").unwrap().as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            out.push((
                k.value(i),
                v.value(i).to_string(),
                n.is_valid(i).then(|| n.value(i)),
            ));
        }
    }
    out.sort();
    out
}

fn row(k: i32, v: &str, n: Option<i64>) -> Row {
    (k, v.to_string(), n)
}

async fn setup(fluss_0_9_apis: bool) -> (LocalServer, Connection, tempfile::TempDir) {
    let data = tempfile::tempdir().unwrap();
    let mut cfg = ServerConfig::new(data.path()).with_port(0);
    cfg.fluss_0_9_apis = fluss_0_9_apis;
    let server = LocalServer::start(cfg).unwrap();
    let conn = Connection::connect(ClientConfig::new(server.bootstrap_servers()))
        .await
        .unwrap();
    conn.admin().create_database("d", true).await.unwrap();
    (server, conn, data)
}

async fn create(conn: &Connection, name: &str, pk: bool) -> (TablePath, Table) {
    let path = TablePath::new("d", name);
    let mut b = Schema::builder()
        .column("k", DataType::int().not_null())
        .column("v", DataType::string());
    if pk {
        b = b.primary_key(["k"]);
    }
    let d = TableDescriptor::builder(b.build().unwrap())
        .distributed_by(Some(2), Vec::<String>::new())
        .build()
        .unwrap();
    conn.admin().create_table(&path, &d, false).await.unwrap();
    let t = conn.table(&path).await.unwrap();
    (path, t)
}

async fn subscribed_rows(table: &Table, mode: StartupMode, want: usize) -> Vec<Row> {
    let mut sub = table.subscribe(mode).await.unwrap();
    let mut batches = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while batches.iter().map(RecordBatch::num_rows).sum::<usize>() < want {
        assert!(std::time::Instant::now() < deadline, "subscription stalled");
        for cb in sub.poll(Duration::from_millis(500)).await.unwrap() {
            batches.push(cb.batch);
        }
    }
    rows_of(&batches)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_table_reads_old_batches_in_the_new_schema() {
    let (_server, conn, _data) = setup(false).await;
    let (path, before) = create(&conn, "log", false).await;
    let w = before.new_append_writer().unwrap();
    w.append_rows(&[
        vec![Datum::Int(1), Datum::String("x".into())],
        vec![Datum::Int(2), Datum::String("y".into())],
    ])
    .await
    .unwrap();
    w.flush().await.unwrap();

    conn.admin()
        .add_columns(&path, &[AddColumn::new("n", DataType::bigint())])
        .await
        .unwrap();
    let t = conn.table(&path).await.unwrap();
    assert_eq!(t.info.schema_id, 2);
    assert_eq!(t.info.schema().column_names(), ["k", "v", "n"]);
    let w2 = t.new_append_writer().unwrap();
    w2.append_rows(&[vec![
        Datum::Int(3),
        Datum::String("z".into()),
        Datum::BigInt(30),
    ]])
    .await
    .unwrap();
    w2.flush().await.unwrap();
    // A writer opened before the change still writes (its schema id is the older one).
    w.append_rows(&[vec![Datum::Int(4), Datum::String("w".into())]])
        .await
        .unwrap();
    w.flush().await.unwrap();

    let all = vec![
        row(1, "x", None),
        row(2, "y", None),
        row(3, "z", Some(30)),
        row(4, "w", None),
    ];
    // log scan
    assert_eq!(rows_of(&t.scan().collect().await.unwrap()), all);
    // projection and a filter on the added column
    let b = t
        .scan()
        .project(&["k", "n"])
        .filter_text("n IS NULL")
        .collect()
        .await
        .unwrap();
    let mut ks: Vec<i32> = b
        .iter()
        .flat_map(|b| {
            assert_eq!(b.num_columns(), 2);
            b.column(0).as_primitive::<Int32Type>().values().to_vec()
        })
        .collect();
    ks.sort();
    assert_eq!(ks, [1, 2, 4]);
    // changelog form
    let cl = t.scan().changelog(true).collect().await.unwrap();
    assert_eq!(rows_of(&cl), all);
    // time-range read
    assert_eq!(
        rows_of(&t.scan().between(0i64, None).collect().await.unwrap()),
        all
    );
    // subscription
    assert_eq!(subscribed_rows(&t, StartupMode::Earliest, 4).await, all);

    // A handle from before the change cannot present the new batches: it says so.
    let e = before.scan().collect().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    assert!(e.message().contains("re-open"), "{e}");

    // Only new, nullable columns.
    let e = conn
        .admin()
        .add_columns(&path, &[AddColumn::new("v", DataType::bigint())])
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let e = conn
        .admin()
        .add_columns(&path, &[AddColumn::new("m", DataType::int().not_null())])
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.message().contains("nullable"), "{e}");
    conn.close().await;
}

async fn pk_case(fluss_0_9_apis: bool) {
    let (server, conn, _data) = setup(fluss_0_9_apis).await;
    let (path, before) = create(&conn, "pk", true).await;
    let w = before.new_upsert_writer(None).unwrap();
    w.upsert_rows(&[
        vec![Datum::Int(1), Datum::String("a".into())],
        vec![Datum::Int(2), Datum::String("b".into())],
        vec![Datum::Int(3), Datum::String("c".into())],
    ])
    .await
    .unwrap();
    w.flush().await.unwrap();

    conn.admin()
        .add_columns(&path, &[AddColumn::new("n", DataType::bigint())])
        .await
        .unwrap();
    let t = conn.table(&path).await.unwrap();
    let w2 = t.new_upsert_writer(None).unwrap();
    w2.upsert_rows(&[
        vec![Datum::Int(2), Datum::String("B".into()), Datum::BigInt(20)],
        vec![Datum::Int(4), Datum::String("d".into()), Datum::BigInt(40)],
    ])
    .await
    .unwrap();
    w2.flush().await.unwrap();
    // A partial update of the new column merges with a row stored under the old schema.
    let partial = t.new_upsert_writer(Some(&["k", "n"])).unwrap();
    partial
        .upsert_rows(&[vec![Datum::Int(3), Datum::Null, Datum::BigInt(33)]])
        .await
        .unwrap();
    partial.flush().await.unwrap();
    // A writer opened before the change.
    w.upsert_rows(&[vec![Datum::Int(5), Datum::String("e".into())]])
        .await
        .unwrap();
    w.flush().await.unwrap();

    let all = vec![
        row(1, "a", None),
        row(2, "B", Some(20)),
        row(3, "c", Some(33)),
        row(4, "d", Some(40)),
        row(5, "e", None),
    ];
    // latest view (ScanKv, or without it the changelog replay)
    assert_eq!(rows_of(&t.scan().collect().await.unwrap()), all);
    // lookups
    let found = t
        .new_lookuper()
        .unwrap()
        .lookup_rows(&[
            vec![Datum::Int(1)],
            vec![Datum::Int(3)],
            vec![Datum::Int(9)],
        ])
        .await
        .unwrap();
    assert_eq!(
        found,
        vec![
            Some(vec![Datum::Int(1), Datum::String("a".into()), Datum::Null]),
            Some(vec![
                Datum::Int(3),
                Datum::String("c".into()),
                Datum::BigInt(33)
            ]),
            None
        ]
    );
    // time-range read (the changelog folded per key)
    assert_eq!(
        rows_of(&t.scan().between(0i64, None).collect().await.unwrap()),
        all
    );
    // read-optimized (a KV snapshot holding rows of both schema ids)
    server.take_kv_snapshots();
    assert_eq!(
        rows_of(&t.scan().read_optimized(true).collect().await.unwrap()),
        all
    );
    // subscription from the full state
    assert_eq!(subscribed_rows(&t, StartupMode::Full, 5).await, all);
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pk_table_reads_old_rows_in_the_new_schema() {
    pk_case(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pk_table_reads_old_rows_in_the_new_schema_without_scan_kv() {
    pk_case(true).await;
}
