//! Log tables through the client against the test server (see common/mod.rs): admin, append writers, routing,
//! batching, idempotence, flush, typed errors.

use crate::common;

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema as ArrowSchema};
use common::*;
use riverlet::client::{Connection, OffsetSpec};
use riverlet::metadata::{DataType, Schema, TableDescriptor, TablePath};
use riverlet::row::Datum;
use riverlet::write::NoKeyAssigner;
use riverlet::ErrorKind;

fn batch(ids: std::ops::Range<i32>) -> RecordBatch {
    let schema = Arc::new(ArrowSchema::new(vec![
        Field::new("id", ArrowType::Int32, false),
        Field::new("name", ArrowType::Utf8, true),
    ]));
    let names: Vec<String> = ids.clone().map(|i| format!("n{i}")).collect();
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int32Array::from(ids.collect::<Vec<_>>())),
            Arc::new(StringArray::from(names)),
        ],
    )
    .unwrap()
}

/// Every bucket's latest offset (the row count of a log table's bucket).
async fn latest_offsets(
    conn: &Connection,
    path: &TablePath,
) -> std::collections::BTreeMap<i32, i64> {
    conn.admin()
        .list_offsets(path, None, &[], OffsetSpec::Latest)
        .await
        .unwrap()
}

fn ids_of(batches: &[RecordBatch]) -> Vec<i32> {
    let mut v: Vec<i32> = batches
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int32Type>().values().to_vec())
        .collect();
    v.sort();
    v
}

#[tokio::test]
async fn admin_databases_and_tables() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let admin = conn.admin();
    let db = env.extra_db("adm");
    let db = db.as_str();
    admin.create_database(db, false).await.unwrap();
    admin.create_database(db, true).await.unwrap();
    let e = admin.create_database(db, false).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e}");
    assert!(admin
        .list_databases()
        .await
        .unwrap()
        .contains(&db.to_string()));
    assert!(admin.database_exists(db).await.unwrap());

    let path = TablePath::new(db, "logs");
    let d = TableDescriptor::builder(log_schema())
        .distributed_by(Some(3), Vec::<String>::new())
        .build()
        .unwrap();
    admin.create_table(&path, &d, false).await.unwrap();
    common::await_leaders(&conn, &path, &d).await;
    assert!(admin.table_exists(&path).await.unwrap());
    assert_eq!(
        admin.list_tables(db).await.unwrap(),
        vec!["logs".to_string()]
    );
    let info = admin.table_info(&path).await.unwrap();
    assert_eq!(info.descriptor.bucket_count, Some(3));
    assert_eq!(info.descriptor.schema.columns.len(), 2);

    let e = admin.create_table(&path, &d, false).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists);

    let offsets = admin
        .list_offsets(&path, None, &[], OffsetSpec::Latest)
        .await
        .unwrap();
    assert_eq!(offsets.len(), 3);
    assert!(offsets.values().all(|o| *o == 0));

    admin.drop_table(&path, false).await.unwrap();
    assert!(!admin.table_exists(&path).await.unwrap());
    let e = conn.table(&path).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert!(e.message().contains(&format!("{db}.logs")), "{e}");

    admin.drop_database(db, false, true).await.unwrap();
    assert!(!admin.database_exists(db).await.unwrap());
    conn.close().await;
    let e = conn.admin().list_databases().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Closed);
}

#[tokio::test]
async fn append_batches_and_rows_are_acked_and_readable() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let path = env.path("events");
    let d = TableDescriptor::builder(log_schema())
        .distributed_by(Some(2), Vec::<String>::new())
        .build()
        .unwrap();
    let table = create_table(&conn, &path, d).await;
    let w = table.new_append_writer().unwrap();

    let f1 = w.append_batch(&batch(0..100));
    let f2 = w.append_batch(&batch(100..150));
    let f3 = w.append_rows(&[
        vec![Datum::Int(150), Datum::String("x".into())],
        vec![Datum::Int(151), Datum::Null],
    ]);
    f1.await.unwrap();
    f2.await.unwrap();
    f3.await.unwrap();
    w.flush().await.unwrap();

    let rows = fetch_all(&conn, &table, None).await;
    assert_eq!(ids_of(&rows), (0..152).collect::<Vec<_>>());

    let latest = latest_offsets(&conn, &path).await;
    assert_eq!(latest.values().sum::<i64>(), 152);
    let earliest = conn
        .admin()
        .list_offsets(&path, None, &[0, 1], OffsetSpec::Earliest)
        .await
        .unwrap();
    assert!(earliest.values().all(|o| *o == 0));
    w.close().await.unwrap();
}

#[tokio::test]
async fn round_robin_spreads_and_sticky_sticks() {
    let env = TestEnv::new();
    let mut config = env.config();
    config.writer.no_key_assigner = NoKeyAssigner::RoundRobin;
    let conn = Connection::connect(config).await.unwrap();
    let path = env.path("rr");
    let d = TableDescriptor::builder(log_schema())
        .distributed_by(Some(3), Vec::<String>::new())
        .build()
        .unwrap();
    let table = create_table(&conn, &path, d).await;
    let w = table.new_append_writer().unwrap();
    for i in 0..6 {
        w.append_batch(&batch(i * 10..i * 10 + 10)).await.unwrap();
    }
    let offsets = latest_offsets(&conn, &path).await;
    assert_eq!(
        offsets.values().copied().collect::<Vec<_>>(),
        vec![20, 20, 20]
    );

    // Sticky (default): small writes inside one linger window stay in one bucket.
    let conn2 = env.connect().await;
    let path2 = env.path("sticky");
    let d = TableDescriptor::builder(log_schema())
        .distributed_by(Some(3), Vec::<String>::new())
        .build()
        .unwrap();
    let table2 = create_table(&conn2, &path2, d).await;
    let w2 = table2.new_append_writer().unwrap();
    let futs: Vec<_> = (0..5)
        .map(|i| w2.append_batch(&batch(i * 2..i * 2 + 2)))
        .collect();
    for f in futs {
        f.await.unwrap();
    }
    let offsets = latest_offsets(&conn2, &path2).await;
    let non_empty = offsets.values().filter(|o| **o > 0).count();
    assert_eq!(non_empty, 1, "{offsets:?}");
    assert_eq!(offsets.values().sum::<i64>(), 10);
}

/// A large write into a keyless table is cut into pieces that rarely fill a batch to exactly
/// `batch_size`; as Fluss's sticky assigner, a piece that does not fit in its bucket's open
/// batch moves the writer to another bucket instead of opening a second batch in the same one.
#[tokio::test]
async fn sticky_moves_to_another_bucket_when_the_open_batch_is_out_of_room() {
    let env = TestEnv::new();
    let big = batch(0..1000);
    // The writer cuts a batch into pieces of per_row * (batch_size / per_row) bytes, per_row
    // being the bytes of the batch's rows (not of the allocations behind them) per row: with
    // this batch size every piece holds 50 rows, is smaller than a batch, and two never fit
    // in one.
    let row_bytes: usize = big
        .columns()
        .iter()
        .map(|c| c.to_data().get_slice_memory_size().unwrap())
        .sum();
    let per_row = row_bytes / big.num_rows();
    assert!(per_row >= 2, "{per_row}");
    let mut config = env.config();
    config.writer.batch_size = per_row * 50 + per_row / 2;
    let conn = Connection::connect(config).await.unwrap();
    let path = env.path("sticky_room");
    let d = TableDescriptor::builder(log_schema())
        .distributed_by(Some(3), Vec::<String>::new())
        .build()
        .unwrap();
    let table = create_table(&conn, &path, d).await;
    let w = table.new_append_writer().unwrap();
    w.append_batch(&big).await.unwrap();
    w.flush().await.unwrap();

    let offsets = latest_offsets(&conn, &path).await;
    // Consecutive pieces go to different buckets, so more than one bucket holds rows, and
    // every bucket holds whole pieces.
    let non_empty = offsets.values().filter(|o| **o > 0).count();
    assert!(non_empty >= 2, "{offsets:?}");
    assert!(offsets.values().all(|o| o % 50 == 0), "{offsets:?}");
    assert_eq!(offsets.values().sum::<i64>(), 1000);
    let rows = fetch_all(&conn, &table, None).await;
    assert_eq!(ids_of(&rows), (0..1000).collect::<Vec<_>>());
}

#[tokio::test]
async fn bucket_key_routes_by_hash() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let path = env.path("keyed");
    let d = TableDescriptor::builder(log_schema())
        .distributed_by(Some(4), ["id"])
        .build()
        .unwrap();
    let table = create_table(&conn, &path, d).await;
    let w = table.new_append_writer().unwrap();
    w.append_batch(&batch(0..200)).await.unwrap();
    // Each bucket holds exactly the ids whose key hash lands there.
    let types = vec![DataType::int().not_null()];
    for b in 0..4 {
        let rows = fetch_bucket(&conn, &table, None, b).await;
        for id in ids_of(&rows) {
            let key = riverlet::row::encode_key(&types, &[Datum::Int(id)]).unwrap();
            assert_eq!(riverlet::row::fluss_bucket(&key, 4), b);
        }
    }
    assert_eq!(total_rows(&fetch_all(&conn, &table, None).await), 200);
}

#[tokio::test]
async fn batching_splits_large_writes_and_respects_memory() {
    let env = TestEnv::new();
    let mut config = env.config();
    config.writer.batch_size = 4 * 1024;
    config.writer.buffer_memory = 64 * 1024;
    config.writer.request_max_size = 16 * 1024;
    let conn = Connection::connect(config).await.unwrap();
    let path = env.path("big");
    let d = TableDescriptor::builder(log_schema())
        .distributed_by(Some(2), Vec::<String>::new())
        .build()
        .unwrap();
    let table = create_table(&conn, &path, d).await;
    let w = table.new_append_writer().unwrap();
    let mut futs = Vec::new();
    for i in 0..20 {
        w.ready().await;
        futs.push(w.append_batch(&batch(i * 1000..(i + 1) * 1000)));
    }
    for f in futs {
        f.await.unwrap();
    }
    w.flush().await.unwrap();
    assert_eq!(w.buffered_bytes(), 0);
    let rows = fetch_all(&conn, &table, None).await;
    assert_eq!(ids_of(&rows), (0..20_000).collect::<Vec<_>>());
}

/// Several produce requests per bucket are in flight at once (Fluss's default of 5 with
/// idempotence) and the server runs on several threads: every batch must still be applied in
/// the order it was numbered, so nothing fails with OUT_OF_ORDER_SEQUENCE and each bucket holds
/// its rows in append order, each once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_batches_in_flight_per_bucket_stay_in_order() {
    let env = TestEnv::new();
    let mut config = env.config();
    config.writer.batch_size = 4 * 1024;
    config.writer.request_max_size = 8 * 1024;
    let conn = Connection::connect(config).await.unwrap();
    let path = env.path("in_flight");
    let d = TableDescriptor::builder(log_schema())
        .distributed_by(Some(4), Vec::<String>::new())
        .build()
        .unwrap();
    let table = create_table(&conn, &path, d).await;
    let w = table.new_append_writer().unwrap();
    let mut futs = Vec::new();
    for i in 0..200 {
        w.ready().await;
        futs.push(w.append_batch(&batch(i * 500..(i + 1) * 500)));
    }
    for f in futs {
        f.await.unwrap();
    }
    w.flush().await.unwrap();
    let mut all = Vec::new();
    for b in 0..4 {
        // In the bucket's offset order (ids_of would sort them).
        let ids: Vec<i32> = fetch_bucket(&conn, &table, None, b)
            .await
            .iter()
            .flat_map(|rb| rb.column(0).as_primitive::<Int32Type>().values().to_vec())
            .collect();
        assert!(
            ids.windows(2).all(|p| p[0] < p[1]),
            "bucket {b} holds its rows out of append order"
        );
        all.extend(ids);
    }
    all.sort_unstable();
    assert_eq!(all, (0..100_000).collect::<Vec<_>>());
}

#[tokio::test]
async fn partitioned_log_table_routes_by_value() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let path = env.path("by_day");
    let schema = Schema::builder()
        .column("id", DataType::int().not_null())
        .column("day", DataType::string().not_null())
        .build()
        .unwrap();
    let d = TableDescriptor::builder(schema)
        .partitioned_by(["day"])
        .distributed_by(Some(1), Vec::<String>::new())
        .build()
        .unwrap();
    let table = create_table(&conn, &path, d).await;
    let admin = conn.admin();
    admin
        .create_partition(
            &path,
            &riverlet::metadata::PartitionSpec::new([("day", "2024-01-01")]),
            false,
        )
        .await
        .unwrap();
    // A writer told not to create partitions (Fluss's default creates them).
    let mut strict = env.config();
    strict.writer.create_missing_partitions = false;
    let strict = Connection::connect(strict).await.unwrap();
    let w = strict
        .table(&path)
        .await
        .unwrap()
        .new_append_writer()
        .unwrap();
    let ok = w.append_rows(&[
        vec![Datum::Int(1), Datum::String("2024-01-01".into())],
        vec![Datum::Int(2), Datum::String("2024-01-01".into())],
    ]);
    ok.await.unwrap();
    // A missing partition fails naming it, unless the writer may create partitions.
    let e = w
        .append_rows(&[vec![Datum::Int(3), Datum::String("2024-01-02".into())]])
        .await
        .unwrap_err();
    assert!(
        e.message().contains("2024-01-02") && e.message().contains(&env.path("by_day").to_string()),
        "{e}"
    );

    // The default: a write to a new partition creates it.
    let conn2 = Connection::connect(env.config()).await.unwrap();
    let t2 = conn2.table(&path).await.unwrap();
    let w2 = t2.new_append_writer().unwrap();
    w2.append_rows(&[vec![Datum::Int(3), Datum::String("2024-01-02".into())]])
        .await
        .unwrap();
    let parts = admin.list_partitions(&path).await.unwrap();
    let mut names: Vec<String> = parts.iter().map(|p| p.name.clone()).collect();
    names.sort();
    assert_eq!(names, vec!["2024-01-01", "2024-01-02"]);
    let p1 = parts.iter().find(|p| p.name == "2024-01-01").unwrap();
    assert_eq!(
        total_rows(&fetch_all(&conn, &table, Some(p1.partition_id)).await),
        2
    );
    let offsets = admin
        .list_offsets(&path, Some("2024-01-02"), &[0], OffsetSpec::Latest)
        .await
        .unwrap();
    assert_eq!(offsets[&0], 1);
}

#[tokio::test]
async fn typed_errors_name_table_and_column() {
    let env = TestEnv::new();
    let conn = env.connect().await;
    let path = env.path("typed");
    let d = TableDescriptor::builder(log_schema()).build().unwrap();
    let table = create_table(&conn, &path, d).await;

    // Unknown table.
    let e = conn.table(&env.path("nope")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert!(e.message().contains(&env.path("nope").to_string()), "{e}");

    // Upsert on a log table.
    let e = table.new_upsert_writer(None).unwrap_err();
    assert!(
        e.message().contains(&env.path("typed").to_string())
            && e.message().contains("no primary key"),
        "{e}"
    );

    let w = table.new_append_writer().unwrap();
    // Wrong type.
    let bad = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![
            Field::new("id", ArrowType::Utf8, false),
            Field::new("name", ArrowType::Utf8, true),
        ])),
        vec![
            Arc::new(StringArray::from(vec!["1"])),
            Arc::new(StringArray::from(vec!["a"])),
        ],
    )
    .unwrap();
    let e = w.append_batch(&bad).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(
        e.message().contains("'id'") && e.message().contains(&env.path("typed").to_string()),
        "{e}"
    );
    // Unknown column.
    let bad = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![Field::new(
            "zzz",
            ArrowType::Int32,
            false,
        )])),
        vec![Arc::new(Int32Array::from(vec![1]))],
    )
    .unwrap();
    let e = w.append_batch(&bad).await.unwrap_err();
    assert!(e.message().contains("'zzz'"), "{e}");
    // Null in a NOT NULL column (rows API).
    let e = w
        .append_rows(&[vec![Datum::Null, Datum::Null]])
        .await
        .unwrap_err();
    assert!(e.message().contains("'id'"), "{e}");
    // The writer still works after rejected writes.
    w.append_batch(&batch(0..3)).await.unwrap();
}

#[tokio::test]
async fn non_idempotent_writer_works_too() {
    let env = TestEnv::new();
    let mut config = env.config();
    config.writer.idempotence = false;
    config.writer.acks = 1;
    let conn = Connection::connect(config).await.unwrap();
    let path = env.path("plain");
    let table = create_table(
        &conn,
        &path,
        TableDescriptor::builder(log_schema()).build().unwrap(),
    )
    .await;
    let w = table.new_append_writer().unwrap();
    w.append_batch(&batch(0..10)).await.unwrap();
    // acks=1: the leader answers once it has the rows; with followers (a cluster with a
    // replication factor above 1) they are readable when the high watermark passes them, after
    // the followers fetched them, so the read is repeated until then (bounded).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut rows = total_rows(&fetch_all(&conn, &table, None).await);
    while rows < 10 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        rows = total_rows(&fetch_all(&conn, &table, None).await);
    }
    assert_eq!(rows, 10);
}

#[tokio::test]
async fn bootstrap_failures_are_clear() {
    // Nothing listens on this port.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut config = riverlet::client::ClientConfig::new(format!("127.0.0.1:{port}"));
    config.retries = 1;
    config.retry_backoff = std::time::Duration::from_millis(10);
    let e = Connection::connect(config).await.unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Network | ErrorKind::Timeout),
        "{e}"
    );
    assert!(e.message().contains(&format!("127.0.0.1:{port}")), "{e}");

    let e = Connection::connect(riverlet::client::ClientConfig::new("no-port"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);

    // A dead entry before a live one: the list is tried in order.
    let env = TestEnv::new();
    let mut config = env.config();
    config.bootstrap_servers = format!("127.0.0.1:{port},{}", env.bootstrap);
    let conn = Connection::connect(config).await.unwrap();
    conn.admin().list_databases().await.unwrap();
}

#[tokio::test]
async fn all_data_types_round_trip_append_to_read() {
    use riverlet::metadata::DataField;
    use riverlet::row::{TimestampLtz, TimestampNtz};
    let env = TestEnv::new();
    let conn = env.connect().await;
    let schema = Schema::builder()
        .column("b", DataType::boolean())
        .column("ti", DataType::tinyint())
        .column("si", DataType::smallint())
        .column("i", DataType::int().not_null())
        .column("bi", DataType::bigint())
        .column("f", DataType::float())
        .column("d", DataType::double())
        .column("dec_small", DataType::decimal(10, 2))
        .column("dec_big", DataType::decimal(30, 5))
        .column("c", DataType::char(3))
        .column("s", DataType::string())
        .column("bin", DataType::binary(4))
        .column("bytes", DataType::bytes())
        .column("date", DataType::date())
        .column("time", DataType::time(3))
        .column("ts3", DataType::timestamp(3))
        .column("ts6", DataType::timestamp(6))
        .column("ltz", DataType::timestamp_ltz(3))
        .column("arr", DataType::array(DataType::int()))
        .column(
            "map",
            DataType::map(DataType::string().not_null(), DataType::int()),
        )
        .column(
            "row",
            DataType::row(vec![
                DataField::new("x", DataType::int()),
                DataField::new("y", DataType::string()),
            ]),
        )
        .build()
        .unwrap();
    let n = schema.columns.len();
    let path = env.path("types");
    let table = create_table(
        &conn,
        &path,
        TableDescriptor::builder(schema).build().unwrap(),
    )
    .await;
    let full = vec![
        Datum::Boolean(true),
        Datum::TinyInt(-8),
        Datum::SmallInt(1234),
        Datum::Int(42),
        Datum::BigInt(-9_000_000_000),
        Datum::Float(1.5),
        Datum::Double(-2.25),
        Datum::Decimal {
            unscaled: 12345,
            precision: 10,
            scale: 2,
        },
        Datum::Decimal {
            unscaled: -123_456_789_012_345_678_901_234i128,
            precision: 30,
            scale: 5,
        },
        Datum::String("abc".into()),
        Datum::String("héllo".into()),
        Datum::Binary(vec![1, 2, 3, 4]),
        Datum::Binary(vec![9; 10]),
        Datum::Date(19_723),
        Datum::Time(3_600_123),
        Datum::Timestamp(TimestampNtz::from_millis(1_700_000_000_123)),
        Datum::Timestamp(TimestampNtz {
            millis: 1_700_000_000_123,
            nanos_of_milli: 456_000,
        }),
        Datum::TimestampLtz(TimestampLtz::from_millis(1_700_000_000_999)),
        Datum::Array(vec![Datum::Int(1), Datum::Null, Datum::Int(3)]),
        Datum::Map(vec![(Datum::String("k".into()), Datum::Int(7))]),
        Datum::Row(vec![Datum::Int(5), Datum::String("r".into())]),
    ];
    let mut nulls = vec![Datum::Null; n];
    nulls[3] = Datum::Int(43);
    let rows = vec![full, nulls];
    let w = table.new_append_writer().unwrap();
    w.append_rows(&rows).await.unwrap();
    let types: Vec<DataType> = table
        .info()
        .descriptor
        .schema
        .columns
        .iter()
        .map(|c| c.data_type.clone())
        .collect();
    let fetched = fetch_all(&conn, &table, None).await;
    let mut got = Vec::new();
    for b in &fetched {
        assert_eq!(b.schema(), table.info().descriptor.schema.to_arrow());
        got.extend(riverlet::row::record_batch_to_rows(b, &types).unwrap());
    }
    assert_eq!(got, rows);
}
