//! The seed corpus of every fuzz target, built from the golden vectors in `core/tests/golden`
//! (bytes written by Apache Fluss's Java classes and the official Python client) and from
//! Riverlet's own encoders. Written to `fuzz/corpus/<target>/` by the ignored
//! `write_seed_corpus` test of `core/tests/fuzz_corpus.rs`.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{Float64Array, Int32Array, RecordBatch, StringArray};
use prost::Message;
use riverlet::metadata::DataType;
use riverlet::proto::*;
use riverlet::record::arrow_payload::ArrowCompression;
use riverlet::record::log_batch::{encode_log_batch, BatchFormat, LogBatchHeader};
use riverlet::record::{
    build_arrow_log_batch, build_row_log_batch, encode_row_log_records, ChangeType, KvBatchBuilder,
    LogRecordBatch,
};
use riverlet::row::{encode_compacted_row, encode_indexed_row, encode_key, Datum};
use riverlet::rpc::frame::{
    encode_error_response, encode_request_frame, encode_server_failure, encode_success_response,
};
use riverlet::rpc::ApiKey;

use crate::bodies::{harness_table_ids, log_schema, HARNESS_DB};

type Files = Vec<(String, Vec<u8>)>;

fn golden(rel: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Golden file names (relative to `tests/golden`) starting with `prefix` (which may name a
/// subdirectory, `java/...`).
fn golden_names(prefix: &str, suffix: &str) -> Vec<String> {
    let (sub, prefix) = prefix.rsplit_once('/').unwrap_or(("", prefix));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(sub);
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("golden dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix) && n.ends_with(suffix))
        .map(|n| {
            if sub.is_empty() {
                n
            } else {
                format!("{sub}/{n}")
            }
        })
        .collect();
    names.sort();
    names
}

/// The hex rows of a golden `.tsv` (second column of every non-comment line).
fn tsv_rows(rel: &str) -> Vec<Vec<u8>> {
    String::from_utf8(golden(rel))
        .expect("utf8 tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split('\t').nth(1).map(hex))
        .collect()
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}

fn sel(selector: u8, bytes: &[u8]) -> Vec<u8> {
    let mut v = vec![selector];
    v.extend_from_slice(bytes);
    v
}

fn log_rows() -> RecordBatch {
    RecordBatch::try_new(
        log_schema().to_arrow(),
        vec![
            Arc::new(Int32Array::from(vec![Some(1), Some(2), None])),
            Arc::new(StringArray::from(vec![Some("a"), None, Some("ccc")])),
            Arc::new(Float64Array::from(vec![Some(1.5), Some(-0.0), None])),
        ],
    )
    .expect("log rows")
}

fn pk_row(id: i32, name: Option<&str>) -> Vec<Datum> {
    vec![
        Datum::Int(id),
        name.map_or(Datum::Null, |n| Datum::String(n.into())),
        Datum::Double(f64::from(id) / 2.0),
    ]
}

fn pk_types() -> Vec<DataType> {
    crate::bodies::pk_schema().data_types()
}

/// Every target's seeds.
pub fn all() -> Vec<(&'static str, Files)> {
    let log_batches = log_batch_seeds();
    let arrow = log_batches
        .iter()
        .filter_map(|(n, v)| {
            let b = LogRecordBatch::new(&v[1..]).ok()?;
            let p = b.arrow_payload().ok().filter(|p| !p.is_empty())?;
            Some((n.replace("log_", "ipc_"), sel(v[0], p)))
        })
        .collect();
    vec![
        ("rpc_frame", rpc_frame_seeds()),
        ("log_batch", log_batches),
        ("arrow_payload", arrow),
        ("kv_batch", kv_batch_seeds()),
        ("compacted_row", row_seeds("compacted")),
        ("indexed_row", row_seeds("indexed")),
        ("filter_parse", text_seeds(FILTERS)),
        ("timestamp_text", text_seeds(TIMESTAMPS)),
        ("server_request", server_seeds()),
    ]
}

fn rpc_frame_seeds() -> Files {
    let mut out: Files = golden_names("pyfluss_", "_request.bin")
        .into_iter()
        .map(|n| (n.replace(".bin", ""), golden(&n)))
        .collect();
    let ok =
        encode_success_response(7, &ApiVersionsResponse::default().encode_to_vec()).expect("frame");
    out.push(("response_success".into(), ok));
    out.push((
        "response_error".into(),
        encode_error_response(9, 17, "unknown table 'x'"),
    ));
    out.push((
        "response_server_failure".into(),
        encode_server_failure(1, "closing"),
    ));
    out
}

fn log_batch_seeds() -> Files {
    let mut out = Files::new();
    for n in golden_names("java/log_arrow_", ".bin") {
        let s = if n.contains("nested") { 1 } else { 0 };
        out.push((
            n.replace("java/", "").replace(".bin", ""),
            sel(s, &golden(&n)),
        ));
    }
    let ipc = build_arrow_log_batch(1, &log_rows(), ArrowCompression::None, None, 7, 0)
        .expect("arrow batch");
    out.push(("log_riverlet_v0_none".into(), sel(2, &ipc)));
    out.push(("log_riverlet_v0_projected".into(), sel(0x82, &ipc)));
    let cts = [
        ChangeType::Insert,
        ChangeType::UpdateBefore,
        ChangeType::Delete,
    ];
    let changelog =
        build_arrow_log_batch(1, &log_rows(), ArrowCompression::Lz4Frame, Some(&cts), 7, 1)
            .expect("changelog batch");
    out.push(("log_riverlet_v0_changelog_lz4".into(), sel(2, &changelog)));
    // The same Arrow payload in the newer layouts (V1 with statistics, V2).
    let payload = LogRecordBatch::new(&ipc)
        .and_then(|b| b.arrow_payload().map(<[u8]>::to_vec))
        .expect("payload");
    for (name, format, stats) in [
        (
            "log_riverlet_v1_statistics",
            BatchFormat::V1Statistics,
            vec![1u8, 0, 0, 0],
        ),
        ("log_riverlet_v2", BatchFormat::V2, vec![]),
    ] {
        let b = encode_log_batch(format, &LogBatchHeader::new(1, 3, true), &stats, &payload)
            .expect("batch");
        out.push((name.into(), sel(2, &b)));
    }
    // INDEXED / COMPACTED log batches of the golden rows.
    for (kind, s) in [("scalar", 0u8), ("nested", 1)] {
        for fmt in ["compacted", "indexed"] {
            let rows = tsv_rows(&format!("java/{fmt}_rows_{kind}.tsv"));
            let recs: Vec<(ChangeType, &[u8])> = rows
                .iter()
                .map(|r| (ChangeType::AppendOnly, r.as_slice()))
                .collect();
            let b = build_row_log_batch(1, &recs, true, 7, 0).expect("row batch");
            out.push((format!("log_rows_{fmt}_{kind}"), sel(s, &b)));
        }
    }
    // Two batches back to back, as a fetch returns them.
    let mut two = ipc.clone();
    two.extend_from_slice(&changelog);
    out.push(("log_two_batches".into(), sel(2, &two)));
    out
}

fn kv_batch_seeds() -> Files {
    let mut out: Files = ["java/kv_batch_compacted.bin", "java/kv_batch_indexed.bin"]
        .iter()
        .map(|n| (n.replace("java/", "").replace(".bin", ""), golden(n)))
        .collect();
    out.push(("value_batch".into(), golden("java/value_batch.bin")));
    out.push(("kv_riverlet".into(), kv_batch(false)));
    out
}

fn kv_batch(indexed: bool) -> Vec<u8> {
    let types = pk_types();
    let mut b = KvBatchBuilder::new(1);
    for (id, name) in [(1, Some("alice")), (2, None)] {
        let row = pk_row(id, name);
        let key = encode_key(&types[..1], &row[..1]).expect("key");
        let value = if indexed {
            encode_indexed_row(&types, &row)
        } else {
            encode_compacted_row(&types, &row)
        }
        .expect("row");
        let value = riverlet::row::encode_value(1, &value);
        b.append(&key, Some(&value)).expect("append");
    }
    let key = encode_key(&types[..1], &[Datum::Int(1)]).expect("key");
    b.append(&key, None).expect("delete");
    b.build(7, 0)
}

fn row_seeds(fmt: &str) -> Files {
    let mut out = Files::new();
    for (kind, s) in [("scalar", 0u8), ("nested", 1)] {
        for (i, r) in tsv_rows(&format!("java/{fmt}_rows_{kind}.tsv"))
            .iter()
            .enumerate()
        {
            out.push((format!("{kind}_{i}"), sel(s, r)));
        }
    }
    out
}

fn text_seeds(texts: &[&str]) -> Files {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("text_{i:02}"), t.as_bytes().to_vec()))
        .collect()
}

const FILTERS: &[&str] = &[
    "a = 1 AND (b IN ('x', 'y') OR c IS NULL)",
    "a <> 1",
    "a == 1",
    "a between 1 and 2 or not b like 'x%'",
    "c >= 1.50",
    "\"my col\" = 'v'",
    "d = '2024-01-01'",
    "ts >= '2024-01-01 00:00:00' AND ts < '2024-01-02T00:00:00.123+08:00'",
    "f = TRUE OR f IS NOT NULL",
    "big NOT IN (1, -9223372036854775808, 9223372036854775807)",
    "dec > 123.45 AND dec < -0.01",
    "b LIKE 'a\\_%' ESCAPE '\\'",
    "NOT (a > 1 AND NOT (b = 'it''s'))",
    "a = 1e3 OR c = -1.5E-3",
    "a BETWEEN -1 AND 2147483648",
    "a = 1, b = 'x', c = NULL",
];

const TIMESTAMPS: &[&str] = &[
    "2024-01-01",
    "2024-01-01 12:34:56",
    "2024-01-01T12:34:56.789",
    "2024-01-01 12:34:56.123456789",
    "2024-03-31T02:30:00+02:00",
    "2024-01-01 00:00:00Z",
    "2024-01-01 00:00 UTC",
    "1704067200000",
    "-62135596800000",
    "+08:00",
    "-0530",
    "UTC+08:00",
    "Europe/Berlin",
    "Asia/Shanghai",
    "local",
    "2024-03-31 02:30:00|Europe/Berlin",
    "2024-11-03 01:30|America/New_York",
    "9999-12-31 23:59:59.999999999|+14:00",
];

fn frame(key: ApiKey, request_id: i32, body: &[u8]) -> Vec<u8> {
    encode_request_frame(key as i16, 0, request_id, body).expect("frame")
}

fn server_seeds() -> Files {
    let ids: std::collections::HashMap<String, i64> = harness_table_ids().into_iter().collect();
    let (log_t, pk_t, rows_t, pk_idx) = (ids["log_t"], ids["pk_t"], ids["rows_t"], ids["pk_idx"]);
    let tp = |t: &str| PbTablePath {
        database_name: HARNESS_DB.into(),
        table_name: t.into(),
    };
    let produce = |table_id: i64, bucket: i32, records: Vec<u8>| ProduceLogRequest {
        acks: -1,
        table_id,
        timeout_ms: 1000,
        buckets_req: vec![PbProduceLogReqForBucket {
            partition_id: None,
            bucket_id: bucket,
            records: records.into(),
        }],
    };
    let put = |table_id: i64, records: Vec<u8>| PutKvRequest {
        acks: -1,
        table_id,
        timeout_ms: 1000,
        buckets_req: vec![PbPutKvReqForBucket {
            partition_id: None,
            bucket_id: 0,
            records: records.into(),
        }],
        ..Default::default()
    };
    let fetch = |table_id: i64, projection: bool| FetchLogRequest {
        follower_server_id: -1,
        max_bytes: 1 << 20,
        tables_req: vec![PbFetchLogReqForTable {
            table_id,
            projection_pushdown_enabled: projection,
            projected_fields: if projection { vec![2, 0] } else { vec![] },
            buckets_req: vec![PbFetchLogReqForBucket {
                partition_id: None,
                bucket_id: 0,
                fetch_offset: 0,
                max_fetch_bytes: 1 << 20,
            }],
            ..Default::default()
        }],
        max_wait_ms: Some(5),
        min_bytes: Some(1),
        ..Default::default()
    };
    let arrow = build_arrow_log_batch(1, &log_rows(), ArrowCompression::None, None, -1, -1)
        .expect("arrow batch");
    let types = log_schema().data_types();
    let row = encode_compacted_row(&types, &pk_row(5, Some("e"))).expect("row");
    let rows_batch =
        build_row_log_batch(1, &[(ChangeType::AppendOnly, &row)], true, -1, -1).expect("row batch");
    let key = encode_key(&pk_types()[..1], &[Datum::Int(1)]).expect("key");
    let _ = encode_row_log_records(&[]);

    let mut out: Files = golden_names("pyfluss_", "_request.bin")
        .into_iter()
        .map(|n| (n.replace(".bin", ""), golden(&n)))
        .collect();
    let mut add = |name: &str, frames: Vec<Vec<u8>>| {
        out.push((name.into(), frames.concat()));
    };
    add(
        "produce_arrow",
        vec![frame(
            ApiKey::ProduceLog,
            2,
            &produce(log_t, 0, arrow.clone()).encode_to_vec(),
        )],
    );
    add(
        "produce_arrow_then_fetch",
        vec![
            frame(
                ApiKey::ProduceLog,
                2,
                &produce(log_t, 1, arrow.clone()).encode_to_vec(),
            ),
            frame(ApiKey::FetchLog, 4, &fetch(log_t, false).encode_to_vec()),
            frame(ApiKey::FetchLog, 6, &fetch(log_t, true).encode_to_vec()),
        ],
    );
    add(
        "produce_rows_then_fetch",
        vec![
            frame(
                ApiKey::ProduceLog,
                2,
                &produce(rows_t, 0, rows_batch).encode_to_vec(),
            ),
            frame(ApiKey::FetchLog, 4, &fetch(rows_t, false).encode_to_vec()),
        ],
    );
    add(
        "put_kv_then_lookup",
        vec![
            frame(
                ApiKey::PutKv,
                2,
                &put(pk_t, kv_batch(false)).encode_to_vec(),
            ),
            frame(
                ApiKey::Lookup,
                4,
                &LookupRequest {
                    table_id: pk_t,
                    buckets_req: vec![PbLookupReqForBucket {
                        bucket_id: 0,
                        keys: vec![key.clone()],
                        ..Default::default()
                    }],
                    ..Default::default()
                }
                .encode_to_vec(),
            ),
            frame(
                ApiKey::LimitScan,
                6,
                &LimitScanRequest {
                    table_id: pk_t,
                    partition_id: None,
                    bucket_id: 0,
                    limit: 10,
                }
                .encode_to_vec(),
            ),
        ],
    );
    add(
        "put_kv_indexed_then_scan",
        vec![
            frame(
                ApiKey::PutKv,
                2,
                &put(pk_idx, kv_batch(true)).encode_to_vec(),
            ),
            frame(
                ApiKey::ScanKv,
                4,
                &ScanKvRequest {
                    bucket_scan_req: Some(PbScanReqForBucket {
                        table_id: pk_idx,
                        bucket_id: 0,
                        ..Default::default()
                    }),
                    call_seq_id: Some(0),
                    batch_size_bytes: Some(1024),
                    ..Default::default()
                }
                .encode_to_vec(),
            ),
            frame(
                ApiKey::PrefixLookup,
                6,
                &PrefixLookupRequest {
                    table_id: pk_t,
                    buckets_req: vec![PbPrefixLookupReqForBucket {
                        bucket_id: 0,
                        keys: vec![key],
                        ..Default::default()
                    }],
                }
                .encode_to_vec(),
            ),
        ],
    );
    add(
        "list_offsets",
        vec![frame(
            ApiKey::ListOffsets,
            1,
            &ListOffsetsRequest {
                follower_server_id: -1,
                offset_type: 1,
                table_id: log_t,
                bucket_id: vec![0, 1],
                ..Default::default()
            }
            .encode_to_vec(),
        )],
    );
    add(
        "catalog_reads",
        vec![
            frame(
                ApiKey::GetMetadata,
                1,
                &MetadataRequest {
                    table_path: vec![tp("log_t"), tp("pk_t")],
                    ..Default::default()
                }
                .encode_to_vec(),
            ),
            frame(
                ApiKey::GetTableSchema,
                3,
                &GetTableSchemaRequest {
                    table_path: tp("pk_t"),
                    schema_id: Some(1),
                }
                .encode_to_vec(),
            ),
            frame(
                ApiKey::ListTables,
                5,
                &ListTablesRequest {
                    database_name: HARNESS_DB.into(),
                }
                .encode_to_vec(),
            ),
            frame(
                ApiKey::InitWriter,
                7,
                &InitWriterRequest {
                    table_path: vec![tp("log_t")],
                }
                .encode_to_vec(),
            ),
        ],
    );
    add(
        "drop_table",
        vec![frame(
            ApiKey::DropTable,
            1,
            &DropTableRequest {
                table_path: tp("rows_t"),
                ignore_if_not_exists: false,
            }
            .encode_to_vec(),
        )],
    );
    out
}
