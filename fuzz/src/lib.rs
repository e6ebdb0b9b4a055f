//! Fuzz target bodies: each takes arbitrary bytes and drives one decoder, parser or the server's
//! request handling. A target "finds" something when it panics (or, for the server, when a
//! request is not answered within [`HANG_SECS`]); every error return is an accepted outcome.
//!
//! The bodies are plain functions so that two drivers share them: the libFuzzer binaries in
//! `fuzz_targets/` (nightly, `fuzz/run.sh`) and the stable smoke test
//! `core/tests/fuzz_corpus.rs`, which includes this file as a module and runs the committed
//! corpus (`fuzz/corpus/<target>/`) plus mutated inputs through every body.
//!
//! Several targets read a leading selector byte (which schema or row type the rest is decoded
//! against): the decoders take the schema from the table, not from the bytes.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array,
    RecordBatch, StringArray, TimestampMillisecondArray,
};
use arrow_schema::{DataType as ArrowType, Field, Schema as ArrowSchema, SchemaRef, TimeUnit};
use bytes::Bytes;
use prost::Message;
use riverlet::metadata::{DataField, DataType, KvFormat, LogFormat, Schema, TableDescriptor};
use riverlet::proto::{
    CreateDatabaseRequest, CreateTableRequest, FetchLogRequest, GetTableInfoRequest,
    GetTableInfoResponse, PbTablePath, ProduceLogRequest, PutKvRequest,
};
use riverlet::record::kv_batch::set_kv_writer_state;
use riverlet::record::log_batch::set_crc;
use riverlet::record::{
    decode_arrow_batch, decode_arrow_batch_projected, KvRecordBatch, LogBatchIter, LogRecordBatch,
    RowLogRecordIter, ValueRecordBatch,
};
use riverlet::row::{
    decode_compacted_row, decode_indexed_row, decode_value, encode_compacted_row,
    encode_indexed_row, record_batch_to_rows,
};
use riverlet::rpc::frame::{decode_request_header, read_frame, ResponseFrame};
use riverlet::rpc::ApiKey;
use riverlet::scan::expr::{parse_assignments, parse_filter};
use riverlet::scan::time::{parse_date_time_text, parse_timestamp, TimeZoneSpec};
use riverlet_server::service::Server;
use riverlet_server::{FsyncPolicy, ServerConfig};

/// A target body.
pub type Body = fn(&[u8]);

/// Every target: its name (the directory under `fuzz/corpus/`) and its body.
pub const TARGETS: &[(&str, Body)] = &[
    ("rpc_frame", rpc_frame),
    ("log_batch", log_batch),
    ("arrow_payload", arrow_payload),
    ("kv_batch", kv_batch),
    ("compacted_row", compacted_row),
    ("indexed_row", indexed_row),
    ("filter_parse", filter_parse),
    ("timestamp_text", timestamp_text),
    ("server_request", server_request),
];

/// The libFuzzer entry: runs `body` and aborts (a finding) only on a panic that escapes it.
/// Panics caught inside Riverlet (the Arrow IPC decode runs arrow-ipc under `catch_unwind` and
/// turns its panics into Corrupt errors) are not findings, so libfuzzer-sys's abort-on-any-
/// panic hook is replaced by a silent one.
pub fn fuzz_entry(body: Body, data: &[u8]) {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| std::panic::set_hook(Box::new(|_| {})));
    if let Err(p) = std::panic::catch_unwind(|| body(data)) {
        let msg = p
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        eprintln!("fuzz target panicked: {msg}");
        std::process::abort();
    }
}

/// A request the server has not answered after this long counts as a hang (a panic here).
pub const HANG_SECS: u64 = 20;

/// The server harness starts over on a fresh data directory after this many inputs, so state
/// (tables the fuzzer created, appended batches) stays small.
const SERVER_RESET_EVERY: u32 = 5000;

/// Caps on the work one input may ask for (records per batch, batches per buffer).
const MAX_ITEMS: usize = 4096;

/// A row type and its Arrow schema, one of the schemas the decoders are driven against.
pub struct FuzzSchema {
    /// Fluss types of the columns.
    pub types: Vec<DataType>,
    /// The Arrow schema of the same columns.
    pub arrow: SchemaRef,
}

/// The schemas selected by a target's first byte: the golden vectors' scalar and nested row
/// types (core/tests/golden/java), the pyfluss log table and a PK table.
pub fn schemas() -> &'static [FuzzSchema] {
    static SCHEMAS: OnceLock<Vec<FuzzSchema>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        [scalar_schema(), nested_schema(), log_schema(), pk_schema()]
            .into_iter()
            .map(|s| FuzzSchema {
                types: s.data_types(),
                arrow: s.to_arrow(),
            })
            .collect()
    })
}

fn build(cols: Vec<(&str, DataType)>, pk: &[&str]) -> Schema {
    let mut b = Schema::builder();
    for (n, t) in cols {
        b = b.column(n, t);
    }
    if !pk.is_empty() {
        b = b.primary_key(pk.iter().copied());
    }
    b.build().expect("fuzz schema")
}

/// `ROW<BOOLEAN, TINYINT, ... TIMESTAMP_LTZ(9)>` of the golden scalar rows.
pub fn scalar_schema() -> Schema {
    build(
        vec![
            ("c_bool", DataType::boolean()),
            ("c_tinyint", DataType::tinyint()),
            ("c_smallint", DataType::smallint()),
            ("c_int", DataType::int()),
            ("c_bigint", DataType::bigint()),
            ("c_float", DataType::float()),
            ("c_double", DataType::double()),
            ("c_dec10_2", DataType::decimal(10, 2)),
            ("c_dec38_10", DataType::decimal(38, 10)),
            ("c_char5", DataType::char(5)),
            ("c_string", DataType::string()),
            ("c_binary4", DataType::binary(4)),
            ("c_bytes", DataType::bytes()),
            ("c_date", DataType::date()),
            ("c_time", DataType::time(3)),
            ("c_ts3", DataType::timestamp(3)),
            ("c_ts9", DataType::timestamp(9)),
            ("c_ltz3", DataType::timestamp_ltz(3)),
            ("c_ltz9", DataType::timestamp_ltz(9)),
        ],
        &[],
    )
}

/// `ROW<ARRAY<INT>, MAP<STRING NOT NULL, INT>, ROW<a INT, b STRING>, ARRAY<STRING>, INT>` of
/// the golden nested rows.
pub fn nested_schema() -> Schema {
    build(
        vec![
            ("c_arr_int", DataType::array(DataType::int())),
            (
                "c_map",
                DataType::map(DataType::string().not_null(), DataType::int()),
            ),
            (
                "c_row",
                DataType::row(vec![
                    DataField::new("a", DataType::int()),
                    DataField::new("b", DataType::string()),
                ]),
            ),
            ("c_arr_str", DataType::array(DataType::string())),
            ("c_int", DataType::int()),
        ],
        &[],
    )
}

/// `(id INT, name STRING, score DOUBLE)`: the pyfluss golden log table.
pub fn log_schema() -> Schema {
    build(
        vec![
            ("id", DataType::int()),
            ("name", DataType::string()),
            ("score", DataType::double()),
        ],
        &[],
    )
}

/// `(id INT NOT NULL, name STRING, score DOUBLE, PRIMARY KEY (id))`: the golden KV batches.
pub fn pk_schema() -> Schema {
    build(
        vec![
            ("id", DataType::int().not_null()),
            ("name", DataType::string()),
            ("score", DataType::double()),
        ],
        &["id"],
    )
}

fn select(data: &[u8]) -> Option<(&'static FuzzSchema, u8, &[u8])> {
    let (&sel, rest) = data.split_first()?;
    let all = schemas();
    Some((&all[usize::from(sel) % all.len()], sel, rest))
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("tokio runtime")
    })
    .block_on(f)
}

/// RPC frames: the bytes as a stream of length-prefixed frames (read with the client's
/// `read_frame`), each decoded both as a response and as a request header.
pub fn rpc_frame(data: &[u8]) {
    let _ = ResponseFrame::decode(Bytes::copy_from_slice(data));
    let _ = decode_request_header(data);
    let mut rd = data;
    for _ in 0..16 {
        match block_on(read_frame(&mut rd, 1 << 20)) {
            Ok(Some(frame)) => {
                if let Ok(f) = ResponseFrame::decode(frame.clone()) {
                    let _ = f.request_id();
                }
                let _ = decode_request_header(&frame);
            }
            _ => break,
        }
    }
}

/// Log record batches (every magic) in a buffer of concatenated batches: header accessors,
/// CRC, change types, the Arrow payload against the selected schema, and the rows of the
/// INDEXED / COMPACTED formats.
pub fn log_batch(data: &[u8]) {
    let Some((schema, sel, bytes)) = select(data) else {
        return;
    };
    for batch in LogBatchIter::new(bytes).take(64) {
        let Ok(b) = batch else { break };
        touch_log_batch(&b);
        if sel & 0x80 != 0 {
            let _ = b.arrow_records_projected(&schema.arrow, &[schema.types.len() - 1, 0]);
        } else if let Ok((_, rb)) = b.arrow_records(&schema.arrow) {
            let _ = record_batch_to_rows(&rb, &schema.types);
        }
        let rows = RowLogRecordIter::new(b.records(), b.record_count());
        for rec in rows.take(MAX_ITEMS) {
            let Ok(rec) = rec else { break };
            let _ = decode_compacted_row(&schema.types, rec.row);
            let _ = decode_indexed_row(&schema.types, rec.row);
        }
    }
    // The same bytes as one batch (a ProduceLog bucket holds exactly one).
    if let Ok(b) = LogRecordBatch::new(bytes) {
        touch_log_batch(&b);
    }
}

fn touch_log_batch(b: &LogRecordBatch<'_>) {
    let _ = (b.format(), b.base_offset(), b.length(), b.size_in_bytes());
    let _ = (b.magic(), b.commit_timestamp(), b.leader_epoch(), b.crc());
    let _ = (
        b.is_valid(),
        b.ensure_valid(),
        b.schema_id(),
        b.attributes(),
    );
    let _ = (b.is_append_only(), b.last_offset_delta(), b.last_offset());
    let _ = (b.next_offset(), b.writer_id(), b.batch_sequence());
    let _ = (
        b.statistics(),
        b.records(),
        b.change_types(),
        b.arrow_payload(),
    );
}

/// One Arrow IPC payload (as a log batch carries it) decoded against the selected schema,
/// whole and projected; a decoded batch is then read value by value.
pub fn arrow_payload(data: &[u8]) {
    let Some((schema, sel, bytes)) = select(data) else {
        return;
    };
    let decoded = if sel & 0x80 != 0 {
        decode_arrow_batch_projected(bytes, &schema.arrow, &[schema.types.len() - 1]).map(|_| None)
    } else {
        decode_arrow_batch(bytes, &schema.arrow).map(Some)
    };
    if let Ok(Some(rb)) = decoded {
        let _ = record_batch_to_rows(&rb, &schema.types);
    }
}

/// KV record batches (PutKv) and value record batches (LimitScan / ScanKv results): header,
/// CRC, every record, and each value's row decoded in both KV formats against the PK schema.
pub fn kv_batch(data: &[u8]) {
    let types = &schemas()[3].types;
    if let Ok(b) = KvRecordBatch::new(data) {
        let _ = (b.size_in_bytes(), b.magic(), b.crc(), b.is_valid());
        let _ = (
            b.ensure_valid(),
            b.schema_id(),
            b.attributes(),
            b.writer_id(),
        );
        let _ = (b.batch_sequence(), b.record_count(), b.validate());
        for rec in b.records().take(MAX_ITEMS) {
            let Ok(rec) = rec else { break };
            let _ = rec.is_delete();
            if let Some(v) = rec.value {
                let _ = decode_compacted_row(types, v);
                let _ = decode_indexed_row(types, v);
            }
        }
    }
    if let Ok(b) = ValueRecordBatch::new(data) {
        for rec in b.records().take(MAX_ITEMS) {
            let Ok(rec) = rec else { break };
            let _ = decode_compacted_row(types, rec.row);
        }
    }
    if let Ok((_, row)) = decode_value(data) {
        let _ = decode_compacted_row(types, row);
    }
}

/// A CompactedRow of the selected row type; a row that decodes re-encodes to bytes that decode
/// to the same values.
pub fn compacted_row(data: &[u8]) {
    let Some((schema, _, bytes)) = select(data) else {
        return;
    };
    if let Ok(values) = decode_compacted_row(&schema.types, bytes) {
        let again = encode_compacted_row(&schema.types, &values)
            .and_then(|b| decode_compacted_row(&schema.types, &b))
            .expect("a decoded CompactedRow re-encodes and decodes");
        assert_eq!(format!("{values:?}"), format!("{again:?}"));
    }
}

/// An IndexedRow of the selected row type; a row that decodes re-encodes to bytes that decode
/// to the same values.
pub fn indexed_row(data: &[u8]) {
    let Some((schema, _, bytes)) = select(data) else {
        return;
    };
    if let Ok(values) = decode_indexed_row(&schema.types, bytes) {
        let again = encode_indexed_row(&schema.types, &values)
            .and_then(|b| decode_indexed_row(&schema.types, &b))
            .expect("a decoded IndexedRow re-encodes and decodes");
        assert_eq!(format!("{values:?}"), format!("{again:?}"));
    }
}

fn filter_batch_columns() -> &'static RecordBatch {
    static BATCH: OnceLock<RecordBatch> = OnceLock::new();
    BATCH.get_or_init(|| {
        let schema = Arc::new(ArrowSchema::new(vec![
            Field::new("a", ArrowType::Int32, true),
            Field::new("b", ArrowType::Utf8, true),
            Field::new("c", ArrowType::Float64, true),
            Field::new("d", ArrowType::Date32, true),
            Field::new(
                "ts",
                ArrowType::Timestamp(TimeUnit::Millisecond, None),
                true,
            ),
            Field::new("f", ArrowType::Boolean, true),
            Field::new("big", ArrowType::Int64, true),
            Field::new("dec", ArrowType::Decimal128(10, 2), true),
        ]));
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(vec![Some(1), None, Some(i32::MIN)])),
            Arc::new(StringArray::from(vec![Some("x"), Some("%_\\"), None])),
            Arc::new(Float64Array::from(vec![Some(1.5), Some(f64::NAN), None])),
            Arc::new(Date32Array::from(vec![Some(19_723), None, Some(-1)])),
            Arc::new(TimestampMillisecondArray::from(vec![
                Some(1_704_067_200_000),
                None,
                Some(-1),
            ])),
            Arc::new(BooleanArray::from(vec![Some(true), Some(false), None])),
            Arc::new(Int64Array::from(vec![Some(i64::MAX), None, Some(0)])),
            Arc::new(
                Decimal128Array::from(vec![Some(12_345), None, Some(-1)])
                    .with_precision_and_scale(10, 2)
                    .expect("decimal(10,2)"),
            ),
        ];
        RecordBatch::try_new(schema, cols).expect("filter batch")
    })
}

/// The filter text grammar: a filter that parses prints a text that parses again, and is
/// evaluated against a batch with columns `a b c d ts f big dec`; also the `SET` assignments.
pub fn filter_parse(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(expr) = parse_filter(&text) {
        let printed = expr.to_string();
        let again = parse_filter(&printed)
            .unwrap_or_else(|e| panic!("filter {text:?} printed as {printed:?}: {e}"));
        assert_eq!(printed, again.to_string(), "printing is stable");
        let _ = expr.evaluate(filter_batch_columns());
    }
    let _ = parse_assignments(&text);
}

/// Timestamp and time-zone texts: the bytes as a date-time text, as a zone, and (split at the
/// first `|`) as a timestamp in a zone.
pub fn timestamp_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = parse_date_time_text(&text);
    let _ = parse_timestamp(&text, &TimeZoneSpec::Utc);
    if let Ok(tz) = TimeZoneSpec::parse(&text) {
        for ms in [0, -1, i64::MIN, i64::MAX, 1_711_846_800_000] {
            let _ = tz.format_millis(ms);
        }
    }
    if let Some((ts, zone)) = text.split_once('|') {
        if let Ok(tz) = TimeZoneSpec::parse(zone) {
            let _ = parse_timestamp(ts, &tz);
        }
    }
}

/// The server under fuzzing: one per process, on a temporary data directory.
struct ServerHarness {
    rt: tokio::runtime::Runtime,
    server: Arc<Server>,
    runs: u32,
    _dir: tempfile::TempDir,
}

/// Database and tables every fresh harness server has (`fuzz_db.log_t` with 2 buckets,
/// `fuzz_db.pk_t`, `fuzz_db.rows_t` in the COMPACTED log format, `fuzz_db.pk_idx` with
/// INDEXED KV rows). Their ids are [`harness_table_ids`].
pub const HARNESS_DB: &str = "fuzz_db";

fn harness_tables() -> Vec<(&'static str, TableDescriptor)> {
    let log = TableDescriptor::builder(log_schema())
        .distributed_by(Some(2), Vec::<String>::new())
        .property("table.log.arrow.compression.type", "NONE");
    let pk = TableDescriptor::builder(pk_schema()).distributed_by(Some(1), ["id"]);
    let rows = TableDescriptor::builder(log_schema())
        .distributed_by(Some(1), Vec::<String>::new())
        .log_format(LogFormat::Compacted);
    let pk_idx = TableDescriptor::builder(pk_schema())
        .distributed_by(Some(1), ["id"])
        .kv_format(KvFormat::Indexed);
    [
        ("log_t", log),
        ("pk_t", pk),
        ("rows_t", rows),
        ("pk_idx", pk_idx),
    ]
    .into_iter()
    .map(|(n, b)| (n, b.build().expect("fuzz table")))
    .collect()
}

impl ServerHarness {
    fn start() -> ServerHarness {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut config = ServerConfig::new(dir.path());
        config.fsync = FsyncPolicy::Never;
        config.segment_bytes = 256 * 1024;
        let server = Server::open(config).expect("open server");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        let h = ServerHarness {
            rt,
            server,
            runs: 0,
            _dir: dir,
        };
        h.call(
            ApiKey::CreateDatabase,
            &CreateDatabaseRequest {
                database_name: HARNESS_DB.into(),
                ignore_if_exists: true,
                database_json: None,
            }
            .encode_to_vec(),
        )
        .expect("create fuzz database");
        for (name, d) in harness_tables() {
            h.call(
                ApiKey::CreateTable,
                &CreateTableRequest {
                    table_path: path(name),
                    table_json: d.to_json(),
                    ignore_if_exists: false,
                }
                .encode_to_vec(),
            )
            .expect("create fuzz table");
        }
        h
    }

    fn call(&self, key: ApiKey, body: &[u8]) -> riverlet::Result<Vec<u8>> {
        let handled = self.server.handle(key, 0, Bytes::copy_from_slice(body));
        self.rt
            .block_on(async { tokio::time::timeout(Duration::from_secs(HANG_SECS), handled).await })
            .unwrap_or_else(|_| panic!("{key:?} not answered within {HANG_SECS} s"))
    }
}

fn path(table: &str) -> PbTablePath {
    PbTablePath {
        database_name: HARNESS_DB.into(),
        table_name: table.into(),
    }
}

fn with_harness<R>(f: impl FnOnce(&mut ServerHarness) -> R) -> R {
    static HARNESS: Mutex<Option<ServerHarness>> = Mutex::new(None);
    let mut guard = HARNESS.lock().unwrap_or_else(|p| p.into_inner());
    if guard.as_ref().is_none_or(|h| h.runs >= SERVER_RESET_EVERY) {
        *guard = None;
        *guard = Some(ServerHarness::start());
    }
    let h = guard.as_mut().expect("harness");
    h.runs += 1;
    f(h)
}

/// The ids of the harness tables, in the order of [`harness_tables`] (for seed generation).
pub fn harness_table_ids() -> Vec<(String, i64)> {
    with_harness(|h| {
        harness_tables()
            .into_iter()
            .map(|(name, _)| {
                let body = GetTableInfoRequest {
                    table_path: path(name),
                }
                .encode_to_vec();
                let resp = h.call(ApiKey::GetTableInfo, &body).expect("table info");
                let info = GetTableInfoResponse::decode(resp.as_slice()).expect("decode");
                (name.to_string(), info.table_id)
            })
            .collect()
    })
}

/// The server's request handling: the bytes are request frames as a client sends them
/// (length-prefixed, up to 4), each handed to `Server::handle` as `net.rs` does. Every request
/// must be answered (a response or an error) within [`HANG_SECS`] and never panic. So that
/// mutated batches get past the CRC check, requests with an even request id have the CRCs of
/// their ProduceLog / PutKv batches recomputed; long-poll waits are capped at 10 ms (the
/// server honours the client's wait by design).
pub fn server_request(data: &[u8]) {
    with_harness(|h| {
        let mut rest = data;
        for _ in 0..4 {
            let Some((len, tail)) = rest.split_first_chunk::<4>() else {
                return;
            };
            let Ok(len) = usize::try_from(i32::from_be_bytes(*len)) else {
                return;
            };
            let Some((frame, tail)) = tail.split_at_checked(len) else {
                return;
            };
            rest = tail;
            let Ok((header, body)) = decode_request_header(frame) else {
                return;
            };
            let Some(key) = ApiKey::from_i16(header.api_key) else {
                continue;
            };
            if key == ApiKey::Authenticate {
                continue;
            }
            let body = prepare(key, header.request_id, body);
            let handled = h.server.handle(key, header.api_version, Bytes::from(body));
            let answered = h.rt.block_on(async {
                tokio::time::timeout(Duration::from_secs(HANG_SECS), handled).await
            });
            assert!(
                answered.is_ok(),
                "{key:?} v{} not answered within {HANG_SECS} s",
                header.api_version
            );
        }
    })
}

fn prepare(key: ApiKey, request_id: i32, body: &[u8]) -> Vec<u8> {
    let fix_crc = request_id % 2 == 0;
    match key {
        ApiKey::FetchLog => match FetchLogRequest::decode(body) {
            Ok(mut r) => {
                r.max_wait_ms = r.max_wait_ms.map(|w| w.min(10));
                r.encode_to_vec()
            }
            Err(_) => body.to_vec(),
        },
        ApiKey::ProduceLog if fix_crc => match ProduceLogRequest::decode(body) {
            Ok(mut r) => {
                for b in &mut r.buckets_req {
                    let mut records = b.records.to_vec();
                    fix_log_crcs(&mut records);
                    b.records = records.into();
                }
                r.encode_to_vec()
            }
            Err(_) => body.to_vec(),
        },
        ApiKey::PutKv if fix_crc => match PutKvRequest::decode(body) {
            Ok(mut r) => {
                for b in &mut r.buckets_req {
                    let mut records = b.records.to_vec();
                    if let Ok(kv) = KvRecordBatch::new(&records) {
                        let (w, s, n) = (kv.writer_id(), kv.batch_sequence(), kv.size_in_bytes());
                        let _ = set_kv_writer_state(&mut records[..n], w, s);
                    }
                    b.records = records.into();
                }
                r.encode_to_vec()
            }
            Err(_) => body.to_vec(),
        },
        _ => body.to_vec(),
    }
}

fn fix_log_crcs(records: &mut [u8]) {
    let mut pos = 0;
    for _ in 0..64 {
        let Some(rest) = records.get_mut(pos..) else {
            return;
        };
        let Ok(b) = LogRecordBatch::new(rest) else {
            return;
        };
        let (crc, n) = (b.compute_crc(), b.size_in_bytes());
        let _ = set_crc(&mut rest[..n], crc);
        pos += n;
    }
}
