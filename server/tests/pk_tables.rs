//! Primary-key tables through real TCP: changelog generation, lookups, limit/full scans,
//! partial updates, merge engines, delete behaviors, restarts, idempotent PutKv.

use crate::common;

use common::*;
use riverlet::error::codes;
use riverlet::metadata::{DataType, Schema};
use riverlet::proto::*;
use riverlet::record::kv_batch::KvBatchBuilder;
use riverlet::record::value_batch::ValueRecordBatch;
use riverlet::record::ChangeType::{self, *};
use riverlet::row::{decode_compacted_row, encode_compacted_row, encode_key, Datum};
use riverlet::rpc::ServerConnection;

fn key(k: i32) -> Vec<u8> {
    encode_key(&[DataType::int().not_null()], &[Datum::Int(k)]).unwrap()
}

fn types(schema: &Schema) -> Vec<DataType> {
    schema.columns.iter().map(|c| c.data_type.clone()).collect()
}

fn row(schema: &Schema, values: Vec<Datum>) -> Vec<u8> {
    encode_compacted_row(&types(schema), &values).unwrap()
}

fn s(v: &str) -> Datum {
    Datum::String(v.to_string())
}

/// (key, row) pairs; row None = delete.
fn kv_batch(records: &[(i32, Option<Vec<u8>>)], writer: i64, seq: i32) -> Vec<u8> {
    let mut b = KvBatchBuilder::new(1);
    for (k, r) in records {
        b.append(&key(*k), r.as_deref()).unwrap();
    }
    b.build(writer, seq)
}

async fn lookup(conn: &ServerConnection, tid: i64, schema: &Schema, k: i32) -> Option<Vec<Datum>> {
    let r = conn
        .request(&LookupRequest {
            table_id: tid,
            buckets_req: vec![PbLookupReqForBucket {
                partition_id: None,
                bucket_id: 0,
                keys: vec![key(k)],
                original_partition_name: None,
            }],
            ..Default::default()
        })
        .await
        .unwrap();
    let b = &r.buckets_resp[0];
    assert_eq!(b.error_code.unwrap_or(0), 0, "{:?}", b.error_message);
    b.values[0].values.as_ref().map(|v| {
        let (sid, row) = riverlet::row::decode_value(v).unwrap();
        assert_eq!(sid, 1);
        decode_compacted_row(&types(schema), row).unwrap()
    })
}

/// The changelog as (change type, id, name) rows, per batch.
async fn changelog(
    conn: &ServerConnection,
    tid: i64,
    schema: &Schema,
) -> Vec<Vec<(ChangeType, i32, Option<String>)>> {
    let arrow = schema.to_arrow();
    fetch_all(conn, tid, 0, 0, &arrow)
        .await
        .into_iter()
        .map(|f| {
            let rows = riverlet::row::record_batch_to_rows(&f.batch, &types(schema)).unwrap();
            let cts = f
                .change_types
                .expect("changelog batches carry change types");
            cts.into_iter()
                .zip(rows)
                .map(|(ct, r)| {
                    let Datum::Int(id) = r[0] else { panic!() };
                    let name = match &r[1] {
                        Datum::String(s) => Some(s.clone()),
                        _ => None,
                    };
                    (ct, id, name)
                })
                .collect()
        })
        .collect()
}

fn n(v: &str) -> Option<String> {
    Some(v.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changelog_lookup_and_scans() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(config(dir.path()));
    let conn = connect(&srv.bootstrap_servers()).await;
    let sc = pk_schema();
    let tid = create_table(&conn, "pk", sc.clone(), 1, &[]).await;
    let r = |id, name: &str| Some(row(&sc, vec![Datum::Int(id), s(name)]));
    assert_eq!(
        put_kv(
            &conn,
            tid,
            kv_batch(&[(1, r(1, "a")), (2, r(2, "b"))], -1, -1),
            vec![]
        )
        .await
        .unwrap(),
        2
    );
    assert_eq!(
        put_kv(&conn, tid, kv_batch(&[(1, r(1, "a2"))], -1, -1), vec![])
            .await
            .unwrap(),
        4
    );
    assert_eq!(
        put_kv(&conn, tid, kv_batch(&[(2, None)], -1, -1), vec![])
            .await
            .unwrap(),
        5
    );
    // deleting a missing key changes nothing but still takes one (empty) batch offset, as Fluss
    assert_eq!(
        put_kv(&conn, tid, kv_batch(&[(3, None)], -1, -1), vec![])
            .await
            .unwrap(),
        6
    );
    // a key deleted then re-inserted in one batch
    assert_eq!(
        put_kv(
            &conn,
            tid,
            kv_batch(&[(4, r(4, "x")), (4, None), (4, r(4, "y"))], -1, -1),
            vec![]
        )
        .await
        .unwrap(),
        9
    );
    let log = changelog(&conn, tid, &sc).await;
    assert_eq!(
        log,
        vec![
            vec![(Insert, 1, n("a")), (Insert, 2, n("b"))],
            vec![(UpdateBefore, 1, n("a")), (UpdateAfter, 1, n("a2"))],
            vec![(Delete, 2, n("b"))],
            vec![],
            vec![
                (Insert, 4, n("x")),
                (Delete, 4, n("x")),
                (Insert, 4, n("y"))
            ],
        ]
    );
    assert_eq!(
        lookup(&conn, tid, &sc, 1).await,
        Some(vec![Datum::Int(1), s("a2")])
    );
    assert_eq!(lookup(&conn, tid, &sc, 2).await, None);
    // prefix lookup with the full key as prefix
    let pr = conn
        .request(&PrefixLookupRequest {
            table_id: tid,
            buckets_req: vec![PbPrefixLookupReqForBucket {
                partition_id: None,
                bucket_id: 0,
                keys: vec![key(4), key(2)],
            }],
        })
        .await
        .unwrap();
    assert_eq!(pr.buckets_resp[0].value_lists[0].values.len(), 1);
    assert!(pr.buckets_resp[0].value_lists[1].values.is_empty());
    // limit scan returns values of a PK table
    let ls = conn
        .request(&LimitScanRequest {
            table_id: tid,
            partition_id: None,
            bucket_id: 0,
            limit: 10,
        })
        .await
        .unwrap();
    assert_eq!(ls.is_log_table, Some(false));
    let vb = ValueRecordBatch::new(ls.records.as_ref().unwrap()).unwrap();
    assert_eq!(vb.record_count(), 2);
    // ScanKv: the full state with the log offset it is consistent with, in pages
    let first = conn
        .request(&ScanKvRequest {
            bucket_scan_req: Some(PbScanReqForBucket {
                table_id: tid,
                partition_id: None,
                bucket_id: 0,
                limit: None,
            }),
            call_seq_id: Some(0),
            batch_size_bytes: Some(1),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(first.error_code, None, "{:?}", first.error_message);
    assert_eq!(first.log_offset, Some(9));
    assert_eq!(first.has_more_results, Some(true));
    let second = conn
        .request(&ScanKvRequest {
            scanner_id: first.scanner_id.clone(),
            call_seq_id: Some(1),
            batch_size_bytes: Some(1 << 20),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(second.has_more_results, Some(false));
    let a = ValueRecordBatch::new(first.records.as_ref().unwrap())
        .unwrap()
        .record_count();
    let b = ValueRecordBatch::new(second.records.as_ref().unwrap())
        .unwrap()
        .record_count();
    assert_eq!(a + b, 2);
    // table stats: row count
    let st = conn
        .request(&GetTableStatsRequest {
            table_id: tid,
            buckets_req: vec![PbTableStatsReqForBucket {
                partition_id: None,
                bucket_id: 0,
            }],
            target_columns: vec![],
        })
        .await
        .unwrap();
    assert_eq!(st.buckets_resp[0].row_count, Some(2));
    srv.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partial_update_keeps_other_columns() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(config(dir.path()));
    let conn = connect(&srv.bootstrap_servers()).await;
    let sc = Schema::builder()
        .column("id", DataType::int().not_null())
        .column("a", DataType::string())
        .column("b", DataType::string())
        .primary_key(["id"])
        .build()
        .unwrap();
    let tid = create_table(&conn, "partial", sc.clone(), 1, &[]).await;
    let full = row(&sc, vec![Datum::Int(1), s("a1"), s("b1")]);
    put_kv(&conn, tid, kv_batch(&[(1, Some(full))], -1, -1), vec![])
        .await
        .unwrap();
    let only_b = row(&sc, vec![Datum::Int(1), Datum::Null, s("b2")]);
    put_kv(
        &conn,
        tid,
        kv_batch(&[(1, Some(only_b.clone()))], -1, -1),
        vec![0, 2],
    )
    .await
    .unwrap();
    assert_eq!(
        lookup(&conn, tid, &sc, 1).await,
        Some(vec![Datum::Int(1), s("a1"), s("b2")])
    );
    // the key must be among the target columns
    let e = put_kv(&conn, tid, kv_batch(&[(1, Some(only_b))], -1, -1), vec![2])
        .await
        .unwrap_err();
    assert_eq!(e.0, codes::INVALID_TARGET_COLUMN, "{}", e.1);
    srv.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merge_engines_and_delete_behaviors() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(config(dir.path()));
    let conn = connect(&srv.bootstrap_servers()).await;
    let sc = pk_schema();
    let r = |id, name: &str| Some(row(&sc, vec![Datum::Int(id), s(name)]));
    // first_row keeps the first value; deletes are ignored by default
    let fr = create_table(
        &conn,
        "fr",
        sc.clone(),
        1,
        &[("table.merge-engine", "first_row")],
    )
    .await;
    put_kv(
        &conn,
        fr,
        kv_batch(
            &[(1, r(1, "first")), (1, r(1, "second")), (1, None)],
            -1,
            -1,
        ),
        vec![],
    )
    .await
    .unwrap();
    assert_eq!(
        lookup(&conn, fr, &sc, 1).await,
        Some(vec![Datum::Int(1), s("first")])
    );
    assert_eq!(
        changelog(&conn, fr, &sc).await,
        vec![vec![(Insert, 1, n("first"))]]
    );
    // versioned keeps the largest version
    let vs = Schema::builder()
        .column("id", DataType::int().not_null())
        .column("ver", DataType::bigint())
        .primary_key(["id"])
        .build()
        .unwrap();
    let vt = create_table(
        &conn,
        "ver",
        vs.clone(),
        1,
        &[
            ("table.merge-engine", "versioned"),
            ("table.merge-engine.versioned.ver-column", "ver"),
        ],
    )
    .await;
    let v = |ver| Some(row(&vs, vec![Datum::Int(1), Datum::BigInt(ver)]));
    put_kv(
        &conn,
        vt,
        kv_batch(&[(1, v(5)), (1, v(3)), (1, v(7))], -1, -1),
        vec![],
    )
    .await
    .unwrap();
    assert_eq!(
        lookup(&conn, vt, &vs, 1).await,
        Some(vec![Datum::Int(1), Datum::BigInt(7)])
    );
    // delete behavior disable
    let dt = create_table(
        &conn,
        "nodel",
        sc.clone(),
        1,
        &[("table.delete.behavior", "disable")],
    )
    .await;
    put_kv(&conn, dt, kv_batch(&[(1, r(1, "x"))], -1, -1), vec![])
        .await
        .unwrap();
    let e = put_kv(&conn, dt, kv_batch(&[(1, None)], -1, -1), vec![])
        .await
        .unwrap_err();
    assert_eq!(e.0, codes::DELETION_DISABLED_EXCEPTION);
    // an aggregate function the column type cannot take (sum of a STRING), WAL changelog
    // images for aggregation, and allow+first_row are rejected at creation
    for props in [
        vec![
            ("table.merge-engine", "aggregation"),
            ("fields.name.agg", "sum"),
        ],
        vec![
            ("table.merge-engine", "aggregation"),
            ("table.changelog.image", "wal"),
        ],
        vec![
            ("table.merge-engine", "first_row"),
            ("table.delete.behavior", "allow"),
        ],
    ] {
        let d = {
            let mut b = riverlet::metadata::TableDescriptor::builder(sc.clone());
            for (k, v) in &props {
                b = b.property(*k, *v);
            }
            b.build().unwrap()
        };
        let e = conn
            .request(&CreateTableRequest {
                table_path: PbTablePath {
                    database_name: DB.into(),
                    table_name: "bad".into(),
                },
                table_json: d.to_json(),
                ignore_if_exists: false,
            })
            .await
            .unwrap_err();
        assert_eq!(e.fluss_code(), Some(codes::INVALID_CONFIG_EXCEPTION), "{e}");
    }
    // log tables refuse PutKv
    let lt = create_table(&conn, "logt", log_schema(), 1, &[]).await;
    let e = put_kv(&conn, lt, kv_batch(&[(1, r(1, "x"))], -1, -1), vec![])
        .await
        .unwrap_err();
    assert_eq!(e.0, codes::NON_PRIMARY_KEY_TABLE_EXCEPTION);
    srv.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotent_put_kv() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(config(dir.path()));
    let conn = connect(&srv.bootstrap_servers()).await;
    let sc = pk_schema();
    let tid = create_table(&conn, "ikv", sc.clone(), 1, &[]).await;
    let w = conn
        .request(&InitWriterRequest { table_path: vec![] })
        .await
        .unwrap()
        .writer_id;
    let b0 = kv_batch(&[(1, Some(row(&sc, vec![Datum::Int(1), s("a")])))], w, 0);
    assert_eq!(put_kv(&conn, tid, b0.clone(), vec![]).await.unwrap(), 1);
    let b1 = kv_batch(&[(1, Some(row(&sc, vec![Datum::Int(1), s("b")])))], w, 1);
    assert_eq!(put_kv(&conn, tid, b1.clone(), vec![]).await.unwrap(), 3);
    // retries change nothing
    assert_eq!(put_kv(&conn, tid, b0, vec![]).await.unwrap(), 1);
    assert_eq!(put_kv(&conn, tid, b1, vec![]).await.unwrap(), 3);
    assert_eq!(changelog(&conn, tid, &sc).await.len(), 2);
    let e = put_kv(&conn, tid, kv_batch(&[(2, None)], w, 9), vec![])
        .await
        .unwrap_err();
    assert_eq!(e.0, codes::OUT_OF_ORDER_SEQUENCE_EXCEPTION);
    srv.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pk_state_survives_clean_restart_and_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let sc = pk_schema();
    let r = |id, name: &str| Some(row(&sc, vec![Datum::Int(id), s(name)]));
    let tid;
    {
        let srv = start(config(dir.path()));
        let conn = connect(&srv.bootstrap_servers()).await;
        tid = create_table(&conn, "dur", sc.clone(), 1, &[]).await;
        put_kv(
            &conn,
            tid,
            kv_batch(&[(1, r(1, "a")), (2, r(2, "b"))], -1, -1),
            vec![],
        )
        .await
        .unwrap();
        srv.shutdown().unwrap();
    }
    // now through the binary, killed with SIGKILL after more writes
    let (mut child, boot) = spawn_server_binary(dir.path());
    let conn = connect(&boot).await;
    assert_eq!(
        lookup(&conn, tid, &sc, 2).await,
        Some(vec![Datum::Int(2), s("b")])
    );
    put_kv(
        &conn,
        tid,
        kv_batch(&[(1, r(1, "a2")), (2, None), (3, r(3, "c"))], -1, -1),
        vec![],
    )
    .await
    .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    drop(conn);
    let srv = start(config(dir.path()));
    let conn = connect(&srv.bootstrap_servers()).await;
    assert_eq!(
        lookup(&conn, tid, &sc, 1).await,
        Some(vec![Datum::Int(1), s("a2")])
    );
    assert_eq!(lookup(&conn, tid, &sc, 2).await, None);
    assert_eq!(
        lookup(&conn, tid, &sc, 3).await,
        Some(vec![Datum::Int(3), s("c")])
    );
    assert_eq!(changelog(&conn, tid, &sc).await.len(), 2);
    // new writes continue the changelog
    assert_eq!(
        put_kv(&conn, tid, kv_batch(&[(3, None)], -1, -1), vec![])
            .await
            .unwrap(),
        7
    );
    srv.shutdown().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partitions_create_list_drop() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(config(dir.path()));
    let conn = connect(&srv.bootstrap_servers()).await;
    conn.request(&CreateDatabaseRequest {
        database_name: DB.into(),
        ignore_if_exists: true,
        database_json: None,
    })
    .await
    .unwrap();
    let d = riverlet::metadata::TableDescriptor::builder(log_schema())
        .partitioned_by(["name"])
        .distributed_by(Some(2), Vec::<String>::new())
        .build()
        .unwrap();
    let path = PbTablePath {
        database_name: DB.into(),
        table_name: "parts".into(),
    };
    conn.request(&CreateTableRequest {
        table_path: path.clone(),
        table_json: d.to_json(),
        ignore_if_exists: false,
    })
    .await
    .unwrap();
    let spec = |v: &str| PbPartitionSpec {
        partition_key_values: vec![PbKeyValue {
            key: "name".into(),
            value: v.into(),
        }],
    };
    for v in ["x", "y"] {
        conn.request(&CreatePartitionRequest {
            table_path: path.clone(),
            partition_spec: spec(v),
            ignore_if_not_exists: false,
        })
        .await
        .unwrap();
    }
    let e = conn
        .request(&CreatePartitionRequest {
            table_path: path.clone(),
            partition_spec: spec("x"),
            ignore_if_not_exists: false,
        })
        .await
        .unwrap_err();
    assert_eq!(e.fluss_code(), Some(codes::PARTITION_ALREADY_EXISTS));
    let parts = conn
        .request(&ListPartitionInfosRequest {
            table_path: path.clone(),
            partial_partition_spec: None,
        })
        .await
        .unwrap()
        .partitions_info;
    assert_eq!(parts.len(), 2);
    let pid = parts[0].partition_id;
    let tid = table_id(&conn, "parts").await;
    let r = conn
        .request(&ProduceLogRequest {
            acks: -1,
            table_id: tid,
            timeout_ms: 1000,
            buckets_req: vec![PbProduceLogReqForBucket {
                partition_id: Some(pid),
                bucket_id: 1,
                records: log_batch(&[1], -1, -1).into(),
            }],
        })
        .await
        .unwrap();
    assert_eq!(r.buckets_resp[0].base_offset, Some(0));
    let md = conn
        .request(&MetadataRequest {
            partitions_id: vec![pid],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(md.partition_metadata[0].bucket_metadata.len(), 2);
    conn.request(&DropPartitionRequest {
        table_path: path.clone(),
        partition_spec: spec("x"),
        ignore_if_not_exists: false,
    })
    .await
    .unwrap();
    let parts = conn
        .request(&ListPartitionInfosRequest {
            table_path: path,
            partial_partition_spec: None,
        })
        .await
        .unwrap()
        .partitions_info;
    assert_eq!(parts.len(), 1);
    srv.shutdown().unwrap();
}

/// The crash window between the two writes of a PutKv: its changelog batch is on disk but the
/// server died before the KV WAL record of the same write. On restart the changelog tail the KV
/// state never reached is dropped, and with it the writer state of that batch, so the client's
/// retry of it (same writer id, same sequence) is appended once, neither taken for a duplicate
/// of the dropped batch nor rejected as out of order. `tests/reliability/kill9.py` can only hit
/// this window by chance; this pins it down.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_a_crash_between_changelog_and_kv_state_is_applied_once() {
    let dir = tempfile::tempdir().unwrap();
    let sc = pk_schema();
    let r = |name: &str| Some(row(&sc, vec![Datum::Int(1), s(name)]));
    let (mut child, boot) = spawn_server_binary(dir.path());
    let conn = connect(&boot).await;
    let tid = create_table(&conn, "crash", sc.clone(), 1, &[]).await;
    let w = conn
        .request(&InitWriterRequest { table_path: vec![] })
        .await
        .unwrap()
        .writer_id;
    let b0 = kv_batch(&[(1, r("a"))], w, 0);
    let b1 = kv_batch(&[(1, r("b"))], w, 1);
    assert_eq!(put_kv(&conn, tid, b0, vec![]).await.unwrap(), 1);
    assert_eq!(put_kv(&conn, tid, b1.clone(), vec![]).await.unwrap(), 3);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    drop(conn);
    // Cut the last KV WAL record (`u32 len | u32 crc | payload`): the state of the write of b1
    // never reached the disk, its changelog batch did.
    let wal = dir
        .path()
        .join("tablets")
        .join(tid.to_string())
        .join("0/kv/kv.wal");
    let bytes = std::fs::read(&wal).unwrap();
    let mut starts = Vec::new();
    let mut pos = 0usize;
    while pos + 8 <= bytes.len() {
        starts.push(pos);
        pos += 8 + u32::from_le_bytes(bytes[pos..pos + 4].try_into().unwrap()) as usize;
    }
    assert_eq!(
        (starts.len(), pos),
        (2, bytes.len()),
        "two whole WAL records"
    );
    std::fs::write(&wal, &bytes[..starts[1]]).unwrap();

    let srv = start(config(dir.path()));
    let conn = connect(&srv.bootstrap_servers()).await;
    assert_eq!(
        lookup(&conn, tid, &sc, 1).await,
        Some(vec![Datum::Int(1), s("a")])
    );
    assert_eq!(
        changelog(&conn, tid, &sc).await,
        vec![vec![(Insert, 1, n("a"))]]
    );
    // the client's retry of b1 lands once, at the offsets the lost attempt had
    assert_eq!(put_kv(&conn, tid, b1.clone(), vec![]).await.unwrap(), 3);
    assert_eq!(put_kv(&conn, tid, b1, vec![]).await.unwrap(), 3);
    assert_eq!(
        lookup(&conn, tid, &sc, 1).await,
        Some(vec![Datum::Int(1), s("b")])
    );
    assert_eq!(
        changelog(&conn, tid, &sc).await,
        vec![
            vec![(Insert, 1, n("a"))],
            vec![(UpdateBefore, 1, n("a")), (UpdateAfter, 1, n("b"))]
        ]
    );
    srv.shutdown().unwrap();
}
