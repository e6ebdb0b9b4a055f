//! The plain requests every binding fills, through the blocking entry points:
//! `Table::read` / `count` with bucket subsets, batch sizes and option maps, `Table::subscribe`
//! with buckets, explicit start offsets and a position to resume from, and the warnings a
//! read carries.

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use arrow_array::RecordBatch;
use common::*;
use riverlet::blocking::{self, BucketOffset, ReadRequest, StartupMode, SubscribeRequest};
use riverlet::metadata::{PartitionSpec, TableDescriptor};
use riverlet::{ErrorKind, WarningKind};

fn connect(env: &TestEnv) -> blocking::Connection {
    blocking::Connection::connect(env.config()).unwrap()
}

fn create(
    conn: &blocking::Connection,
    env: &TestEnv,
    name: &str,
    d: TableDescriptor,
) -> blocking::Table {
    let p = env.path(name);
    let admin = conn.admin();
    admin.create_database(&p.database, true).unwrap();
    admin.create_table(&p, &d, false).unwrap();
    conn.table(&p).unwrap()
}

fn read_all(t: &blocking::Table, r: &ReadRequest) -> Vec<RecordBatch> {
    t.read(r).unwrap().read_all().unwrap()
}

/// Polls until `n` rows arrived (or 100 polls), returning their ids.
fn poll_ids(sub: &mut blocking::scan::Subscription, n: usize) -> Vec<i32> {
    let mut batches = Vec::new();
    for _ in 0..100 {
        for c in sub.poll(Duration::from_millis(50)).unwrap() {
            batches.push(c.batch);
        }
        if total_rows(&batches) >= n {
            break;
        }
    }
    ids(&batches)
}

#[test]
fn bucket_subsets_cover_a_partitioned_log_table_once() {
    let env = TestEnv::new();
    let conn = connect(&env);
    let t = create(&conn, &env, "buckets_log", descriptor(false, true, 3));
    for r in ["eu", "us"] {
        conn.admin()
            .create_partition(t.path(), &PartitionSpec::new([("region", r)]), true)
            .unwrap();
    }
    let w = t.new_append_writer().unwrap();
    // Several small batches, so rows land in more than one bucket.
    for chunk in 0..10 {
        let rows: Vec<(i32, String, &str)> = (chunk * 10..chunk * 10 + 10)
            .map(|i| (i, format!("n{i}"), if i % 2 == 0 { "eu" } else { "us" }))
            .collect();
        let refs: Vec<(i32, &str, &str)> =
            rows.iter().map(|(a, b, c)| (*a, b.as_str(), *c)).collect();
        w.append(&rows_batch(&refs)).unwrap();
        w.flush().unwrap();
    }

    let mut seen = Vec::new();
    let mut non_empty = 0;
    for part in ["eu", "us"] {
        for bucket in 0..3 {
            let r = ReadRequest {
                partitions: Some(vec![part.into()]),
                buckets: Some(vec![bucket]),
                ..ReadRequest::default()
            };
            let got = ids(&read_all(&t, &r));
            assert_eq!(t.count(&r).unwrap(), got.len() as u64, "{part}/{bucket}");
            for id in &got {
                assert_eq!(
                    id % 2 == 0,
                    part == "eu",
                    "id {id} read from partition {part}"
                );
            }
            non_empty += usize::from(!got.is_empty());
            seen.extend(got);
        }
    }
    seen.sort();
    assert_eq!(seen, (0..100).collect::<Vec<_>>(), "every row exactly once");
    assert!(non_empty >= 2);
    assert_eq!(t.count(&ReadRequest::default()).unwrap(), 100);
    // Two buckets at once are the union of the two.
    let two = ReadRequest {
        buckets: Some(vec![2, 0]),
        ..ReadRequest::default()
    };
    let mut expected = Vec::new();
    for b in [0, 2] {
        expected.extend(ids(&read_all(
            &t,
            &ReadRequest {
                buckets: Some(vec![b]),
                ..ReadRequest::default()
            },
        )));
    }
    expected.sort();
    assert_eq!(ids(&read_all(&t, &two)), expected);

    // A bucket the table does not have is named in the error, before anything is read.
    let e = t
        .read(&ReadRequest {
            buckets: Some(vec![3]),
            ..ReadRequest::default()
        })
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("bucket 3"), "{e}");
    assert!(t
        .count(&ReadRequest {
            buckets: Some(vec![-1]),
            ..ReadRequest::default()
        })
        .is_err());
    // Counting with a filter reads the rows; with a limit it stops there.
    let filtered = ReadRequest {
        filter: Some("id < 25".into()),
        ..ReadRequest::default()
    };
    assert_eq!(t.count(&filtered).unwrap(), 25);
    let limited = ReadRequest {
        limit: Some(7),
        ..ReadRequest::default()
    };
    assert_eq!(t.count(&limited).unwrap(), 7);
    conn.close().unwrap();
}

#[test]
fn batch_size_options_map_and_schema() {
    let env = TestEnv::new();
    let conn = connect(&env);
    let t = create(&conn, &env, "batch_size", descriptor(false, false, 1));
    let rows: Vec<(i32, String, &str)> = (0..50).map(|i| (i, format!("n{i}"), "eu")).collect();
    let refs: Vec<(i32, &str, &str)> = rows.iter().map(|(a, b, c)| (*a, b.as_str(), *c)).collect();
    let w = t.new_append_writer().unwrap();
    w.append(&rows_batch(&refs)).unwrap();
    w.flush().unwrap();

    let r = ReadRequest {
        batch_size: Some(8),
        ..ReadRequest::default()
    };
    let batches = read_all(&t, &r);
    assert!(
        batches.iter().all(|b| b.num_rows() <= 8),
        "batch over 8 rows"
    );
    assert_eq!(batches.len(), 7);
    assert_eq!(ids(&batches), (0..50).collect::<Vec<_>>());

    // The Fluss-style option map a JVM connector passes.
    let r = ReadRequest::from_options([
        ("columns", "name,id"),
        ("filter", "id >= 40"),
        ("buckets", "0"),
        ("batch-size", "4"),
    ])
    .unwrap();
    let schema = t.read_schema(&r).unwrap();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["name", "id"]);
    let batches = read_all(&t, &r);
    assert_eq!(batches[0].schema(), schema);
    assert_eq!(ids(&batches), (40..50).collect::<Vec<_>>());
    assert!(batches.iter().all(|b| b.num_rows() <= 4));
    // A changelog read of the same.
    let r = ReadRequest {
        changelog: true,
        filter: Some("id = 3".into()),
        ..ReadRequest::default()
    };
    let batches = read_all(&t, &r);
    assert_eq!(batches[0].schema().field(0).name(), "_change_type");
    assert_eq!(ids(&batches), vec![3]);
    conn.close().unwrap();
}

#[test]
fn primary_key_reads_and_counts_per_bucket() {
    let env = TestEnv::new();
    let conn = connect(&env);
    let t = create(&conn, &env, "buckets_pk", descriptor(true, false, 3));
    let w = t.new_upsert_writer(None).unwrap();
    let rows: Vec<(i32, String, &str)> = (0..30).map(|i| (i, format!("n{i}"), "eu")).collect();
    let refs: Vec<(i32, &str, &str)> = rows.iter().map(|(a, b, c)| (*a, b.as_str(), *c)).collect();
    w.upsert(&rows_batch(&refs)).unwrap();
    w.flush().unwrap();
    let mut seen = Vec::new();
    for bucket in 0..3 {
        let r = ReadRequest {
            buckets: Some(vec![bucket]),
            ..ReadRequest::default()
        };
        let got = ids(&read_all(&t, &r));
        assert_eq!(t.count(&r).unwrap(), got.len() as u64);
        assert!(got.len() < 30, "bucket {bucket} holds every key");
        seen.extend(got);
    }
    seen.sort();
    assert_eq!(seen, (0..30).collect::<Vec<_>>());
    conn.close().unwrap();
}

#[test]
fn subscriptions_resume_from_a_position_and_read_bucket_subsets() {
    let env = TestEnv::new();
    let conn = connect(&env);
    let t = create(&conn, &env, "resume", descriptor(false, false, 2));
    let w = t.new_append_writer().unwrap();
    for i in 0..4 {
        let rows: Vec<(i32, String, &str)> = (i * 5..i * 5 + 5)
            .map(|i| (i, format!("n{i}"), "eu"))
            .collect();
        let refs: Vec<(i32, &str, &str)> =
            rows.iter().map(|(a, b, c)| (*a, b.as_str(), *c)).collect();
        w.append(&rows_batch(&refs)).unwrap();
        w.flush().unwrap();
    }

    let mut sub = t
        .subscribe(&SubscribeRequest::new(StartupMode::Earliest))
        .unwrap();
    assert_eq!(poll_ids(&mut sub, 20), (0..20).collect::<Vec<_>>());
    let checkpoint = sub.position();
    assert_eq!(checkpoint.len(), 2);
    assert_eq!(
        checkpoint.iter().map(|p| p.offset).sum::<i64>(),
        20,
        "{checkpoint:?}"
    );
    assert!(checkpoint.iter().all(|p| p.partition_name.is_none()));
    drop(sub);

    let rows: Vec<(i32, String, &str)> = (20..25).map(|i| (i, format!("n{i}"), "eu")).collect();
    let refs: Vec<(i32, &str, &str)> = rows.iter().map(|(a, b, c)| (*a, b.as_str(), *c)).collect();
    w.append(&rows_batch(&refs)).unwrap();
    w.flush().unwrap();

    // Restored from the checkpoint: only what came after it, whatever the startup mode.
    let mut resumed = t
        .subscribe(&SubscribeRequest {
            start_offsets: checkpoint.clone(),
            ..SubscribeRequest::new(StartupMode::Earliest)
        })
        .unwrap();
    assert_eq!(poll_ids(&mut resumed, 5), (20..25).collect::<Vec<_>>());
    assert!(resumed.poll(Duration::from_millis(100)).unwrap().is_empty());

    // One bucket only: its rows, and its position alone.
    let mut union = BTreeSet::new();
    for bucket in 0..2 {
        let mut one = t
            .subscribe(&SubscribeRequest {
                buckets: Some(vec![bucket]),
                columns: Some(vec!["id".into()]),
                ..SubscribeRequest::new(StartupMode::Earliest)
            })
            .unwrap();
        let expect = t
            .count(&ReadRequest {
                buckets: Some(vec![bucket]),
                ..ReadRequest::default()
            })
            .unwrap() as usize;
        let got = if expect > 0 {
            poll_ids(&mut one, expect)
        } else {
            Vec::new()
        };
        assert_eq!(got.len(), expect);
        assert_eq!(one.position().len(), 1);
        assert_eq!(one.position()[0].bucket, bucket);
        assert_eq!(one.schema().fields().len(), 1);
        union.extend(got);
    }
    assert_eq!(
        union.into_iter().collect::<Vec<_>>(),
        (0..25).collect::<Vec<_>>()
    );

    // A start offset for a bucket the subscription does not read is refused, named.
    let e = t
        .subscribe(&SubscribeRequest {
            buckets: Some(vec![0]),
            start_offsets: vec![BucketOffset::new(1, 0)],
            ..SubscribeRequest::default()
        })
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("bucket 1"), "{e}");
    let e = t
        .subscribe(&SubscribeRequest {
            start_offsets: vec![BucketOffset::in_partition("nope", 0, 0)],
            ..SubscribeRequest::default()
        })
        .unwrap_err();
    assert!(e.message().contains("nope"), "{e}");
    // Fluss's option words, parsed by the core.
    let latest = SubscribeRequest::from_options([("scan.startup.mode", "latest")]).unwrap();
    let mut sub = t.subscribe(&latest).unwrap();
    assert!(sub.poll(Duration::from_millis(100)).unwrap().is_empty());
    assert_eq!(
        sub.position().iter().map(|p| p.offset).sum::<i64>(),
        25,
        "latest starts at the high watermarks"
    );
    conn.close().unwrap();
}

#[test]
fn partitioned_subscription_positions_name_partitions() {
    let env = TestEnv::new();
    let conn = connect(&env);
    let t = create(&conn, &env, "resume_parts", descriptor(false, true, 1));
    for r in ["eu", "us"] {
        conn.admin()
            .create_partition(t.path(), &PartitionSpec::new([("region", r)]), true)
            .unwrap();
    }
    let w = t.new_append_writer().unwrap();
    w.append(&rows_batch(&[
        (1, "a", "eu"),
        (2, "b", "us"),
        (3, "c", "us"),
    ]))
    .unwrap();
    w.flush().unwrap();
    let mut sub = t.subscribe(&SubscribeRequest::default()).unwrap();
    assert_eq!(poll_ids(&mut sub, 3), vec![1, 2, 3]);
    let pos = sub.position();
    let mut by_name: Vec<(Option<String>, i64)> = pos
        .iter()
        .map(|p| (p.partition_name.clone(), p.offset))
        .collect();
    by_name.sort();
    assert_eq!(
        by_name,
        vec![(Some("eu".to_string()), 1), (Some("us".to_string()), 2)]
    );
    assert!(pos.iter().all(|p| p.partition_id.is_some()));
    // Resume "us" at its start again and "eu" at its end: only us's rows come back.
    let start = vec![
        BucketOffset::in_partition("us", 0, 0),
        BucketOffset::in_partition("eu", 0, 1),
    ];
    let mut again = t
        .subscribe(&SubscribeRequest {
            start_offsets: start,
            ..SubscribeRequest::new(StartupMode::Latest)
        })
        .unwrap();
    assert_eq!(poll_ids(&mut again, 2), vec![2, 3]);
    conn.close().unwrap();
}

#[test]
fn a_window_before_retention_carries_a_warning() {
    let env = TestEnv::new();
    let conn = connect(&env);
    let d = TableDescriptor::builder(schema(false, false))
        .distributed_by(Some(1), Vec::<String>::new())
        .property("table.log.ttl", "1h")
        .build()
        .unwrap();
    let t = create(&conn, &env, "retention", d);
    let w = t.new_append_writer().unwrap();
    w.append(&rows_batch(&[(1, "a", "eu")])).unwrap();
    w.flush().unwrap();
    let now = riverlet::scan::time::now_millis();

    let old = ReadRequest {
        start: Some((now - 2 * 3_600_000).into()),
        ..ReadRequest::default()
    };
    let mut reader = t.read(&old).unwrap();
    let warnings = reader.warnings().to_vec();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].kind, WarningKind::BeforeRetention);
    assert!(
        warnings[0].message.contains("table.log.ttl"),
        "{warnings:?}"
    );
    assert!(warnings[0].message.contains(&t.path().to_string()));
    // Still a read: the row is there.
    assert_eq!(ids(&reader.read_all().unwrap()), vec![1]);

    let recent = ReadRequest {
        start: Some((now - 60_000).into()),
        ..ReadRequest::default()
    };
    assert!(t.read(&recent).unwrap().warnings().is_empty());
    assert!(t
        .read(&ReadRequest::default())
        .unwrap()
        .warnings()
        .is_empty());
    conn.close().unwrap();
}

/// A top-level ROW column read through `Table::read` (what the JVM and C bindings export as an
/// Arrow C stream): the reader's schema, every batch's schema and the arrays agree, with the
/// struct's children present, for every column, a projection and a bucket subset.
#[test]
fn top_level_row_column_reads_with_its_children() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int32Type;
    use arrow_array::{ArrayRef, Int32Array, StringArray, StructArray};
    use arrow_schema::{DataType as ArrowType, Field, Fields};
    use riverlet::metadata::{DataField, DataType, Schema};
    use std::sync::Arc;

    let env = TestEnv::new();
    let conn = connect(&env);
    let schema = Schema::builder()
        .column("id", DataType::int())
        .column(
            "s",
            DataType::row(vec![
                DataField::new("col1", DataType::int()),
                DataField::new("col2", DataType::string()),
            ]),
        )
        .column("ltz", DataType::timestamp_ltz(6))
        .build()
        .unwrap();
    let t = create(
        &conn,
        &env,
        "row_col",
        TableDescriptor::builder(schema.clone())
            .distributed_by(Some(2), Vec::<String>::new())
            .build()
            .unwrap(),
    );
    let children = Fields::from(vec![
        Field::new("col1", ArrowType::Int32, true),
        Field::new("col2", ArrowType::Utf8, true),
    ]);
    let s = StructArray::new(
        children.clone(),
        vec![
            Arc::new(Int32Array::from(vec![100, 200])) as ArrayRef,
            Arc::new(StringArray::from(vec!["nested_value", "nested_value2"])) as ArrayRef,
        ],
        None,
    );
    // Written as a user (or Spark) would: TIMESTAMP_LTZ as an instant, the described schema.
    let described = schema.to_arrow_described();
    let ts = arrow_array::TimestampMicrosecondArray::from(vec![1_000_000, 2_000_000])
        .with_timezone("UTC");
    let batch = RecordBatch::try_new(
        described.clone(),
        vec![
            Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef,
            Arc::new(s) as ArrayRef,
            Arc::new(ts) as ArrayRef,
        ],
    )
    .unwrap();
    let w = t.new_append_writer().unwrap();
    w.append(&batch).unwrap();
    w.flush().unwrap();

    let requests = [
        ReadRequest::default(),
        ReadRequest {
            columns: Some(vec!["s".into(), "id".into()]),
            ..ReadRequest::default()
        },
        ReadRequest {
            columns: Some(vec!["id".into(), "s".into(), "ltz".into()]),
            buckets: Some(vec![0]),
            ..ReadRequest::default()
        },
        ReadRequest {
            columns: Some(vec!["id".into(), "s".into(), "ltz".into()]),
            buckets: Some(vec![1]),
            ..ReadRequest::default()
        },
    ];
    let mut per_bucket = Vec::new();
    for (i, r) in requests.iter().enumerate() {
        let mut reader = t.read(r).unwrap();
        let reader_schema = arrow_array::RecordBatchReader::schema(&reader);
        let s_field = reader_schema.field_with_name("s").unwrap();
        assert_eq!(
            s_field.data_type(),
            &ArrowType::Struct(children.clone()),
            "request {i}"
        );
        let batches = reader.read_all().unwrap();
        for b in &batches {
            assert_eq!(b.schema(), reader_schema, "request {i}");
            let col = b.column_by_name("s").unwrap().as_struct();
            assert_eq!(col.num_columns(), 2, "request {i}");
        }
        let mut got: Vec<(i32, i32, String)> = batches
            .iter()
            .flat_map(|b| {
                let id = b.column_by_name("id").unwrap().as_primitive::<Int32Type>();
                let s = b.column_by_name("s").unwrap().as_struct();
                let c1 = s.column(0).as_primitive::<Int32Type>();
                let c2 = s.column(1).as_string::<i32>();
                (0..b.num_rows())
                    .map(|r| (id.value(r), c1.value(r), c2.value(r).to_string()))
                    .collect::<Vec<_>>()
            })
            .collect();
        got.sort();
        if i < 2 {
            assert_eq!(
                got,
                vec![
                    (1, 100, "nested_value".to_string()),
                    (2, 200, "nested_value2".to_string())
                ],
                "request {i}"
            );
        } else {
            per_bucket.extend(got);
        }
    }
    // The two buckets together hold each row once.
    per_bucket.sort();
    assert_eq!(
        per_bucket.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![1, 2]
    );
    conn.close().unwrap();
}

/// The rows of `batches` as (id, name, region), sorted by id.
fn sorted_rows(batches: &[RecordBatch]) -> Vec<(i32, Option<String>, String)> {
    use arrow_array::{cast::AsArray, Array};
    let mut rows = Vec::new();
    for b in batches {
        let id = b.column_by_name("id").unwrap();
        let id = id.as_primitive::<arrow_array::types::Int32Type>();
        let name = b.column_by_name("name").unwrap().as_string::<i32>();
        let region = b.column_by_name("region").unwrap().as_string::<i32>();
        for i in 0..b.num_rows() {
            rows.push((
                id.value(i),
                (!name.is_null(i)).then(|| name.value(i).to_string()),
                region.value(i).to_string(),
            ));
        }
    }
    rows.sort();
    rows
}

/// A read whose caller keeps every batch (`read()` into one table) places decoded batches in
/// shared blocks: it returns exactly the rows a streaming read does, and its batches stay
/// intact after the read, its reader and its connection are gone.
#[test]
fn a_read_that_keeps_its_batches_returns_what_a_stream_does() {
    let env = TestEnv::new();
    let conn = connect(&env);
    let t = create(&conn, &env, "keep_batches", descriptor(false, false, 2));
    let w = t.new_append_writer().unwrap();
    let mut expected = Vec::new();
    for chunk in 0..30 {
        let rows: Vec<(i32, String, &str)> = (chunk * 700..chunk * 700 + 700)
            .map(|i| (i, format!("name-{}", i * 7919 % 1000), "eu"))
            .collect();
        let refs: Vec<(i32, &str, &str)> =
            rows.iter().map(|(a, b, c)| (*a, b.as_str(), *c)).collect();
        expected.extend(
            rows.iter()
                .map(|(a, b, c)| (*a, Some(b.clone()), c.to_string())),
        );
        w.append(&rows_batch(&refs)).unwrap();
        w.flush().unwrap();
    }
    expected.sort();

    let streamed = read_all(&t, &ReadRequest::default());
    let keep = ReadRequest {
        keep_batches: true,
        ..ReadRequest::default()
    };
    let kept = read_all(&t, &keep);
    let projected = read_all(
        &t,
        &ReadRequest {
            columns: Some(vec!["region".into(), "id".into(), "name".into()]),
            ..keep.clone()
        },
    );
    drop(t);
    conn.close().unwrap();
    assert!(kept.len() >= 2, "{} batches", kept.len());
    assert_eq!(sorted_rows(&streamed), expected);
    assert_eq!(sorted_rows(&kept), expected);
    assert_eq!(sorted_rows(&projected), expected);
}
