//! Golden tests against vectors written by the real Apache Fluss 0.9.1 Java implementation.
//!
//! Every file under `core/tests/golden/java/` was produced by `tests/golden-java/generate.sh`,
//! which compiles our own `tests/golden-java/GoldenGen.java` against the `fluss-server`
//! 0.9.1-incubating fat jar from Maven Central and runs it (see the README there). The rows and
//! keys fed to Java are written out again below as [`Datum`]s; these tests check that Riverlet
//! encodes them to the same bytes and decodes Java's bytes back to the same values.

use std::collections::BTreeMap;

use riverlet::metadata::{DataField, DataType, Schema, TableDescriptor, TypeKind};
use riverlet::record::{
    build_arrow_log_batch, encode_value_batch, ArrowCompression, ChangeType, KvBatchBuilder,
    KvRecordBatch, LogBatchIter, LogRecordBatch, ValueRecordBatch,
};
use riverlet::row::{
    decode_compacted_row, decode_indexed_row, decode_value, encode_compacted_row,
    encode_indexed_row, encode_key, encode_value, fluss_bucket, record_batch_to_rows,
    rows_to_record_batch, Datum, TimestampLtz, TimestampNtz,
};

// ---------------------------------------------------------------------------------- helpers

fn golden_path(name: &str) -> String {
    format!("{}/tests/golden/java/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn golden(name: &str) -> Vec<u8> {
    let path = golden_path(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("read {path}: {e}"))
}

fn golden_text(name: &str) -> String {
    String::from_utf8(golden(name)).expect("golden text is UTF-8")
}

/// The non-comment, non-empty lines of a `.tsv` vector file, split on tabs.
fn tsv(name: &str) -> Vec<Vec<String>> {
    golden_text(name)
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    assert!(text.len().is_multiple_of(2), "odd hex length: {text}");
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digit"))
        .collect()
}

fn ts(millis: i64, nanos_of_milli: i32) -> Datum {
    Datum::Timestamp(TimestampNtz {
        millis,
        nanos_of_milli,
    })
}

fn ltz(epoch_millis: i64, nanos_of_milli: i32) -> Datum {
    Datum::TimestampLtz(TimestampLtz {
        epoch_millis,
        nanos_of_milli,
    })
}

fn dec(unscaled: i128, precision: u32, scale: u32) -> Datum {
    Datum::Decimal {
        unscaled,
        precision,
        scale,
    }
}

fn s(text: &str) -> Datum {
    Datum::String(text.to_string())
}

fn b(bytes: &[u8]) -> Datum {
    Datum::Binary(bytes.to_vec())
}

fn schema_of(names: &[&str], types: &[DataType]) -> Schema {
    names
        .iter()
        .zip(types)
        .fold(Schema::builder(), |sb, (n, t)| sb.column(*n, t.clone()))
        .build()
        .expect("schema")
}

// ------------------------------------------------------- the data GoldenGen.java fed to Java

const SCALAR_NAMES: [&str; 19] = [
    "c_bool",
    "c_tinyint",
    "c_smallint",
    "c_int",
    "c_bigint",
    "c_float",
    "c_double",
    "c_dec10_2",
    "c_dec38_10",
    "c_char5",
    "c_string",
    "c_binary4",
    "c_bytes",
    "c_date",
    "c_time3",
    "c_ts3",
    "c_ts9",
    "c_ltz3",
    "c_ltz9",
];

/// `GoldenGen.scalarType()`: every scalar Fluss type, all nullable.
fn scalar_types() -> Vec<DataType> {
    vec![
        DataType::boolean(),
        DataType::tinyint(),
        DataType::smallint(),
        DataType::int(),
        DataType::bigint(),
        DataType::float(),
        DataType::double(),
        DataType::decimal(10, 2),
        DataType::decimal(38, 10),
        DataType::char(5),
        DataType::string(),
        DataType::binary(4),
        DataType::bytes(),
        DataType::date(),
        DataType::time(3),
        DataType::timestamp(3),
        DataType::timestamp(9),
        DataType::timestamp_ltz(3),
        DataType::timestamp_ltz(9),
    ]
}

/// `GoldenGen.scalarRows()`.
fn scalar_rows() -> Vec<Vec<Datum>> {
    let mut r3 = vec![Datum::Null; 19];
    r3[1] = Datum::TinyInt(i8::MAX);
    r3[3] = Datum::Int(i32::MAX);
    r3[5] = Datum::Float(f32::from_bits(1)); // Java Float.MIN_VALUE
    r3[7] = dec(1, 10, 2);
    r3[9] = s("x");
    r3[11] = b(&[0xff, 0xfe, 0xfd, 0xfc]);
    r3[13] = Datum::Date(2_932_896); // 9999-12-31
    r3[15] = ts(253_402_300_799_999, 0);
    r3[17] = ltz(-62_135_596_800_000, 0);
    vec![
        vec![
            Datum::Boolean(true),
            Datum::TinyInt(1),
            Datum::SmallInt(2),
            Datum::Int(3),
            Datum::BigInt(4),
            Datum::Float(1.5),
            Datum::Double(2.25),
            dec(12345, 10, 2),
            dec(123_456_789_012_345_678_901_234_567_890, 38, 10),
            s("hello"),
            s("héllo wörld ✓"),
            b(&[1, 2, 3, 4]),
            b(&[0xde, 0xad, 0xbe, 0xef, 0]),
            Datum::Date(19000),
            Datum::Time(3_723_123),
            ts(1_700_000_000_123, 0),
            ts(1_700_000_000_123, 456_789),
            ltz(1_700_000_000_999, 0),
            ltz(1_700_000_000_999, 1),
        ],
        vec![Datum::Null; 19],
        vec![
            Datum::Boolean(false),
            Datum::TinyInt(i8::MIN),
            Datum::SmallInt(i16::MIN),
            Datum::Int(i32::MIN),
            Datum::BigInt(i64::MIN),
            Datum::Float(-3.402_823_5e38),
            Datum::Double(-1.0e300),
            dec(-9_999_999_999, 10, 2),
            dec(-1, 38, 10),
            s("ab"),
            s(""),
            b(&[0, 0, 0, 0]),
            b(&[]),
            Datum::Date(-1),
            Datum::Time(0),
            ts(-1, 0),
            ts(-1, 999_999),
            ltz(0, 0),
            ltz(0, 999_999),
        ],
        r3,
    ]
}

const NESTED_NAMES: [&str; 5] = ["c_arr_int", "c_map", "c_row", "c_arr_str", "c_int"];

/// `GoldenGen.nestedType()`.
fn nested_types() -> Vec<DataType> {
    vec![
        DataType::array(DataType::int()),
        DataType::map(DataType::string().not_null(), DataType::int()),
        DataType::row(vec![
            DataField::new("a", DataType::int()),
            DataField::new("b", DataType::string()),
        ]),
        DataType::array(DataType::string()),
        DataType::int(),
    ]
}

/// `GoldenGen.nestedRows()`.
fn nested_rows() -> Vec<Vec<Datum>> {
    vec![
        vec![
            Datum::Array(vec![Datum::Int(1), Datum::Null, Datum::Int(3)]),
            Datum::Map(vec![(s("a"), Datum::Int(1)), (s("b"), Datum::Null)]),
            Datum::Row(vec![Datum::Int(7), s("x")]),
            Datum::Array(vec![s("p"), s("qq")]),
            Datum::Int(42),
        ],
        vec![Datum::Null; 5],
        vec![
            Datum::Array(vec![]),
            Datum::Map(vec![]),
            Datum::Row(vec![Datum::Null, Datum::Null]),
            Datum::Array(vec![Datum::Null]),
            Datum::Int(-1),
        ],
    ]
}

// ------------------------------------------------------------------ 1. keys and bucketing

fn key_case(kind: &str, value: &str) -> (Vec<DataType>, Vec<Datum>) {
    let utf8 = |h: &str| String::from_utf8(unhex(h)).expect("UTF-8 key");
    match kind {
        "INT" => (
            vec![DataType::int().not_null()],
            vec![Datum::Int(value.parse().unwrap())],
        ),
        "BIGINT" => (
            vec![DataType::bigint().not_null()],
            vec![Datum::BigInt(value.parse().unwrap())],
        ),
        "STRING" => (vec![DataType::string().not_null()], vec![s(&utf8(value))]),
        "STRING_INT" => {
            let (h, i) = value.split_once(',').expect("strhex,int");
            (
                vec![DataType::string().not_null(), DataType::int().not_null()],
                vec![s(&utf8(h)), Datum::Int(i.parse().unwrap())],
            )
        }
        other => panic!("unknown key kind {other}"),
    }
}

#[test]
fn compacted_keys_and_buckets_match_java() {
    let cases = tsv("bucketing.tsv");
    assert!(cases.len() >= 25, "bucketing.tsv has {} cases", cases.len());
    let mut checked_buckets = 0;
    for case in &cases {
        let [kind, value, key_hex, buckets] = case.as_slice() else {
            panic!("bad bucketing line {case:?}");
        };
        let (types, values) = key_case(kind, value);
        let key = encode_key(&types, &values).unwrap();
        assert_eq!(hex(&key), *key_hex, "{kind} key bytes of {value}");
        for pair in buckets.split(' ') {
            let (n, expected) = pair.split_once(':').unwrap();
            let n: i32 = n.parse().unwrap();
            let expected: i32 = expected.parse().unwrap();
            assert_eq!(
                fluss_bucket(&unhex(key_hex), n),
                expected,
                "{kind} {value}: bucket of {n}"
            );
            checked_buckets += 1;
        }
    }
    assert_eq!(checked_buckets, cases.len() * 5);
}

// ------------------------------------------------------------------------------- 2. rows

type Encode = fn(&[DataType], &[Datum]) -> riverlet::Result<Vec<u8>>;
type Decode = fn(&[DataType], &[u8]) -> riverlet::Result<Vec<Datum>>;

/// Our encoder must write Java's bytes for `rows`; our decoder must read Java's bytes back as
/// `read_back` (what Java's own reader returns for them).
fn check_rows(
    file: &str,
    types: &[DataType],
    rows: &[Vec<Datum>],
    read_back: &[Vec<Datum>],
    enc: Encode,
    dec: Decode,
) {
    let lines = tsv(file);
    assert_eq!(lines.len(), rows.len(), "{file}: one line per row");
    for ((line, row), expected) in lines.iter().zip(rows).zip(read_back) {
        let [index, java_hex] = line.as_slice() else {
            panic!("{file}: bad line {line:?}");
        };
        assert!(
            !java_hex.starts_with("UNSUPPORTED"),
            "{file} row {index}: Java could not encode it: {java_hex}"
        );
        let ours = enc(types, row).unwrap_or_else(|e| panic!("{file} row {index}: encode: {e}"));
        assert_eq!(
            hex(&ours),
            *java_hex,
            "{file} row {index}: our bytes vs Java's"
        );
        let decoded =
            dec(types, &unhex(java_hex)).unwrap_or_else(|e| panic!("{file} row {index}: {e}"));
        assert_eq!(
            &decoded, expected,
            "{file} row {index}: Java's bytes decoded"
        );
    }
}

/// Java's read-back of the CHAR(5) (column 9) and BINARY(4) (column 11) values of the scalar
/// rows, per row format, from `rows_scalar_fixed_length_read_back.tsv`.
fn fixed_length_read_back(format: &str) -> Vec<(Datum, Datum)> {
    tsv("rows_scalar_fixed_length_read_back.tsv")
        .into_iter()
        .filter(|l| l[0] == format)
        .map(|l| {
            let char_value = match l[2].as_str() {
                "-" => Datum::Null,
                h => s(&String::from_utf8(unhex(h)).unwrap()),
            };
            let binary_value = match l.get(3).map(String::as_str).unwrap_or("") {
                "-" => Datum::Null,
                h => b(&unhex(h)),
            };
            (char_value, binary_value)
        })
        .collect()
}

/// The scalar rows as Java's reader of `format` hands them back.
fn scalar_rows_read_back(format: &str) -> Vec<Vec<Datum>> {
    let fixed = fixed_length_read_back(format);
    assert_eq!(fixed.len(), scalar_rows().len());
    scalar_rows()
        .into_iter()
        .zip(fixed)
        .map(|(mut row, (c, bin))| {
            row[9] = c;
            row[11] = bin;
            row
        })
        .collect()
}

#[test]
fn compacted_rows_of_scalar_types_match_java() {
    // CompactedRow keeps CHAR / BINARY values exactly as written.
    assert_eq!(scalar_rows_read_back("compacted"), scalar_rows());
    check_rows(
        "compacted_rows_scalar.tsv",
        &scalar_types(),
        &scalar_rows(),
        &scalar_rows(),
        encode_compacted_row,
        decode_compacted_row,
    );
}

#[test]
fn indexed_rows_of_scalar_types_match_java() {
    // IndexedRow pads CHAR(n) / BINARY(n) with zero bytes and Java's reader strips trailing
    // zero bytes again, so BINARY(4) x'00000000' reads back as x'' (Java and Riverlet alike).
    let read_back = scalar_rows_read_back("indexed");
    assert_eq!(read_back[2][11], b(&[]));
    check_rows(
        "indexed_rows_scalar.tsv",
        &scalar_types(),
        &scalar_rows(),
        &read_back,
        encode_indexed_row,
        decode_indexed_row,
    );
}

#[test]
fn compacted_rows_of_nested_types_match_java() {
    check_rows(
        "compacted_rows_nested.tsv",
        &nested_types(),
        &nested_rows(),
        &nested_rows(),
        encode_compacted_row,
        decode_compacted_row,
    );
}

#[test]
fn indexed_rows_of_nested_types_match_java() {
    check_rows(
        "indexed_rows_nested.tsv",
        &nested_types(),
        &nested_rows(),
        &nested_rows(),
        encode_indexed_row,
        decode_indexed_row,
    );
}

// ------------------------------------------------------------------ 3. Arrow log batches

const CHANGELOG: [ChangeType; 4] = [
    ChangeType::Insert,
    ChangeType::UpdateBefore,
    ChangeType::UpdateAfter,
    ChangeType::Delete,
];

struct ArrowVector {
    file: &'static str,
    magic: u8,
    base_offset: i64,
    change_types: Option<&'static [ChangeType]>,
}

/// Parses one Java-written Arrow log batch and checks header, CRC and rows.
fn check_arrow_batch(v: &ArrowVector, names: &[&str], types: &[DataType], rows: &[Vec<Datum>]) {
    let bytes = golden(v.file);
    let batches: Vec<_> = LogBatchIter::new(&bytes)
        .collect::<riverlet::Result<_>>()
        .unwrap_or_else(|e| panic!("{}: {e}", v.file));
    assert_eq!(batches.len(), 1, "{}: one batch", v.file);
    let batch = LogRecordBatch::new(&bytes).unwrap();
    assert_eq!(batch.size_in_bytes(), bytes.len(), "{}: size", v.file);
    assert_eq!(batch.magic(), v.magic, "{}: magic", v.file);
    assert_eq!(
        batch.base_offset(),
        v.base_offset,
        "{}: base offset",
        v.file
    );
    assert_eq!(batch.commit_timestamp(), 0, "{}: commit timestamp", v.file);
    if v.magic >= 1 {
        assert_eq!(batch.leader_epoch(), -1, "{}: leader epoch", v.file);
    }
    assert!(batch.is_valid(), "{}: CRC-32C", v.file);
    batch.ensure_valid().unwrap();
    assert_eq!(batch.schema_id(), 1, "{}: schema id", v.file);
    assert_eq!(batch.writer_id(), 7, "{}: writer id", v.file);
    assert_eq!(batch.batch_sequence(), 3, "{}: batch sequence", v.file);
    assert_eq!(batch.record_count(), rows.len() as i32, "{}", v.file);
    assert_eq!(batch.last_offset_delta(), rows.len() as i32 - 1);
    assert_eq!(
        batch.next_offset(),
        v.base_offset + rows.len() as i64,
        "{}",
        v.file
    );
    assert_eq!(
        batch.is_append_only(),
        v.change_types.is_none(),
        "{}",
        v.file
    );

    let schema = schema_of(names, types);
    let (change_types, records) = batch
        .arrow_records(&schema.to_arrow())
        .unwrap_or_else(|e| panic!("{}: decode Arrow payload: {e}", v.file));
    assert_eq!(change_types.as_deref(), v.change_types, "{}", v.file);
    let decoded = record_batch_to_rows(&records, types).unwrap();
    assert_eq!(decoded, rows, "{}: rows", v.file);
}

fn scalar_arrow(v: ArrowVector) {
    check_arrow_batch(&v, &SCALAR_NAMES, &scalar_types(), &scalar_rows());
}

#[test]
fn java_arrow_log_batch_v0_uncompressed_decodes() {
    scalar_arrow(ArrowVector {
        file: "log_arrow_v0_scalar_none.bin",
        magic: 0,
        base_offset: 0,
        change_types: None,
    });
}

#[test]
fn java_arrow_log_batch_v0_zstd_decodes() {
    scalar_arrow(ArrowVector {
        file: "log_arrow_v0_scalar_zstd.bin",
        magic: 0,
        base_offset: 0,
        change_types: None,
    });
}

#[test]
fn java_arrow_log_batch_v0_lz4_decodes() {
    scalar_arrow(ArrowVector {
        file: "log_arrow_v0_scalar_lz4.bin",
        magic: 0,
        base_offset: 0,
        change_types: None,
    });
}

#[test]
fn java_arrow_changelog_batch_v0_zstd_decodes() {
    scalar_arrow(ArrowVector {
        file: "log_arrow_v0_changelog_zstd.bin",
        magic: 0,
        base_offset: 100,
        change_types: Some(&CHANGELOG),
    });
}

#[test]
fn java_arrow_changelog_batch_v1_leader_epoch_layout_decodes() {
    scalar_arrow(ArrowVector {
        file: "log_arrow_v1_changelog_none.bin",
        magic: 1,
        base_offset: 200,
        change_types: Some(&CHANGELOG),
    });
}

#[test]
fn java_arrow_log_batch_of_nested_types_decodes() {
    check_arrow_batch(
        &ArrowVector {
            file: "log_arrow_v0_nested_none.bin",
            magic: 0,
            base_offset: 0,
            change_types: None,
        },
        &NESTED_NAMES,
        &nested_types(),
        &nested_rows(),
    );
}

/// Our builder for the same rows: the batch header (everything before the CRC, and the fields
/// after it) must equal Java's; the Arrow IPC bytes may differ in layout but must decode to the
/// same rows.
#[test]
fn our_arrow_log_batch_header_matches_java() {
    let types = scalar_types();
    let schema = schema_of(&SCALAR_NAMES, &types).to_arrow();
    let record_batch = rows_to_record_batch(&schema, &types, &scalar_rows()).unwrap();
    for (file, compression, change_types) in [
        ("log_arrow_v0_scalar_none.bin", ArrowCompression::None, None),
        (
            "log_arrow_v0_scalar_zstd.bin",
            ArrowCompression::Zstd { level: 3 },
            None,
        ),
        (
            "log_arrow_v0_changelog_zstd.bin",
            ArrowCompression::Zstd { level: 3 },
            Some(&CHANGELOG[..]),
        ),
    ] {
        let java = golden(file);
        let ours =
            build_arrow_log_batch(1, &record_batch, compression, change_types, 7, 3).unwrap();
        let ours_batch = LogRecordBatch::new(&ours).unwrap();
        let java_batch = LogRecordBatch::new(&java).unwrap();
        assert!(ours_batch.is_valid());
        // Magic, commit timestamp (offsets 12..21) and schema id .. record count (25..48);
        // base offset differs only for the changelog vector (Java's test builder set 100).
        assert_eq!(
            ours[12..21],
            java[12..21],
            "{file}: magic + commit timestamp"
        );
        assert_eq!(
            ours[25..48],
            java[25..48],
            "{file}: schema id .. record count"
        );
        if change_types.is_some() {
            // The change-type vector right after the header.
            assert_eq!(ours[48..52], java[48..52], "{file}: change-type vector");
        }
        let (ct, rb) = ours_batch.arrow_records(&schema).unwrap();
        assert_eq!(ct.as_deref(), change_types);
        assert_eq!(
            record_batch_to_rows(&rb, &types).unwrap(),
            record_batch_to_rows(&java_batch.arrow_records(&schema).unwrap().1, &types).unwrap()
        );
    }
}

// ------------------------------------------------------------------------- 4. KV batch

/// The rows GoldenGen's KV section wrote: (id, name, score), PK id.
fn kv_value_types() -> [DataType; 3] {
    [
        DataType::int().not_null(),
        DataType::string(),
        DataType::double(),
    ]
}

/// Upsert id=1 ('alice', 1.5), upsert id=2 ('bob', NULL), delete id=1.
fn kv_inputs() -> [(i32, Option<Vec<Datum>>); 3] {
    [
        (1, Some(vec![Datum::Int(1), s("alice"), Datum::Double(1.5)])),
        (2, Some(vec![Datum::Int(2), s("bob"), Datum::Null])),
        (1, None),
    ]
}

fn check_kv_batch(
    prefix: &str,
    schema_id: i16,
    writer_id: i64,
    batch_sequence: i32,
    enc: Encode,
    dec: Decode,
) {
    let java = golden(&format!("{prefix}.bin"));
    let entries = tsv(&format!("{prefix}.tsv"));
    assert_eq!(entries.len(), 3);
    let key_types = [DataType::int().not_null()];
    let value_types = kv_value_types();

    // The key and value bytes Java wrote are what our encoders produce.
    let mut builder = KvBatchBuilder::new(schema_id);
    for (entry, (id, value)) in entries.iter().zip(&kv_inputs()) {
        let [op, key_hex, value_hex] = entry.as_slice() else {
            panic!("{prefix}: bad line {entry:?}");
        };
        let key = encode_key(&key_types, &[Datum::Int(*id)]).unwrap();
        assert_eq!(hex(&key), *key_hex, "{prefix}: {op} key");
        let value = value.as_ref().map(|v| enc(&value_types, v).unwrap());
        match &value {
            Some(v) => assert_eq!(hex(v), *value_hex, "{prefix}: {op} value"),
            None => assert_eq!(value_hex, "-"),
        }
        builder.append(&key, value.as_deref()).unwrap();
    }
    let ours = builder.build(writer_id, batch_sequence);
    assert_eq!(hex(&ours), hex(&java), "{prefix}: our KV batch vs Java's");

    // Our reader on Java's batch.
    let view = KvRecordBatch::new(&java).unwrap();
    view.validate().unwrap();
    assert!(view.is_valid());
    assert_eq!(view.size_in_bytes(), java.len());
    assert_eq!(view.schema_id(), schema_id);
    assert_eq!(view.attributes(), 0);
    assert_eq!(view.writer_id(), writer_id);
    assert_eq!(view.batch_sequence(), batch_sequence);
    assert_eq!(view.record_count(), 3);
    let records: Vec<_> = view
        .records()
        .collect::<riverlet::Result<Vec<_>>>()
        .unwrap();
    assert_eq!(records.len(), 3);
    for ((rec, entry), (_, value)) in records.iter().zip(&entries).zip(&kv_inputs()) {
        assert_eq!(hex(rec.key), entry[1]);
        assert_eq!(rec.value.map(hex).unwrap_or_else(|| "-".into()), entry[2]);
        assert_eq!(rec.is_delete(), value.is_none());
        if let (Some(bytes), Some(row)) = (rec.value, value) {
            assert_eq!(&dec(&value_types, bytes).unwrap(), row);
        }
    }
}

#[test]
fn kv_batch_compacted_bytes_match_java() {
    check_kv_batch(
        "kv_batch_compacted",
        1,
        7,
        3,
        encode_compacted_row,
        decode_compacted_row,
    );
}

#[test]
fn kv_batch_indexed_bytes_match_java() {
    check_kv_batch(
        "kv_batch_indexed",
        2,
        8,
        0,
        encode_indexed_row,
        decode_indexed_row,
    );
}

#[test]
fn kv_values_and_value_record_batch_match_java() {
    let lines = tsv("value_batch.tsv");
    let rows = [
        vec![Datum::Int(1), s("alice"), Datum::Double(1.5)],
        vec![Datum::Int(2), s("bob"), Datum::Null],
        vec![Datum::Int(3), Datum::Null, Datum::Double(-0.5)],
    ];
    assert_eq!(lines.len(), rows.len());
    let types = kv_value_types();
    let mut encoded = Vec::new();
    for (line, row) in lines.iter().zip(&rows) {
        let schema_id: i16 = line[0].parse().unwrap();
        let row_bytes = encode_compacted_row(&types, row).unwrap();
        assert_eq!(hex(&row_bytes), line[1], "compacted row");
        assert_eq!(hex(&encode_value(schema_id, &row_bytes)), line[2], "value");
        let java_value = unhex(&line[2]);
        let (sid, rest) = decode_value(&java_value).unwrap();
        assert_eq!((sid, rest), (schema_id, row_bytes.as_slice()));
        encoded.push((schema_id, row_bytes));
    }
    let java = golden("value_batch.bin");
    let refs: Vec<(i16, &[u8])> = encoded.iter().map(|(i, r)| (*i, r.as_slice())).collect();
    assert_eq!(hex(&encode_value_batch(&refs)), hex(&java), "value batch");

    let view = ValueRecordBatch::new(&java).unwrap();
    assert_eq!(view.size_in_bytes(), java.len());
    assert_eq!(view.record_count(), 3);
    let records = view.to_vec().unwrap();
    for (rec, (sid, row)) in records.iter().zip(&encoded) {
        assert_eq!(rec.schema_id, *sid);
        assert_eq!(rec.row, row.as_slice());
    }
}

// ------------------------------------------------------------------ 5. table descriptors

fn json_value(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes).expect("JSON")
}

fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn pk_partitioned_table_descriptor_json_from_java_parses_and_round_trips() {
    let java = golden("table_descriptor_pk_partitioned.json");
    let d = TableDescriptor::from_json(&java).unwrap();

    // The same table built with our API (ids assigned by our builder) is equal.
    let expected_schema = Schema::builder()
        .column("id", DataType::bigint().not_null())
        .with_comment("the id")
        .column("dt", DataType::string().not_null())
        .column("name", DataType::string())
        .column(
            "point",
            DataType::row(vec![
                DataField::new("x", DataType::double()),
                DataField::new("y", DataType::double()),
            ]),
        )
        .column("tags", DataType::array(DataType::string()))
        .column("amount", DataType::decimal(10, 2))
        .column("ts", DataType::timestamp_ltz(3))
        .column(
            "attrs",
            DataType::map(DataType::string().not_null(), DataType::int()),
        )
        .primary_key(["id", "dt"])
        .build()
        .unwrap();
    assert_eq!(d.schema, expected_schema);
    assert_eq!(d.schema.highest_field_id, 9);
    let point = d.schema.column("point").unwrap();
    assert_eq!(point.id, 3);
    match &point.data_type.kind {
        TypeKind::Row(fields) => {
            assert_eq!(
                fields.iter().map(|f| f.field_id).collect::<Vec<_>>(),
                [4, 5]
            )
        }
        other => panic!("point is {other:?}"),
    }
    assert_eq!(d.schema.column("tags").unwrap().id, 6);
    assert_eq!(d.comment.as_deref(), Some("golden pk table"));
    assert_eq!(d.partition_keys, ["dt"]);
    assert_eq!(d.bucket_keys, ["id"]);
    assert_eq!(d.effective_bucket_keys(), ["id"]);
    assert_eq!(d.bucket_count, Some(4));
    assert!(d.has_primary_key());
    assert_eq!(
        d.properties,
        props(&[
            ("table.log.format", "ARROW"),
            ("table.kv.format", "COMPACTED"),
            ("table.log.ttl", "7d"),
            ("table.auto-partition.time-unit", "DAY"),
            ("table.auto-partition.enabled", "true"),
        ])
    );
    assert_eq!(d.log_ttl_ms().unwrap(), 7 * 24 * 3600 * 1000);
    assert_eq!(
        d.custom_properties,
        props(&[("owner", "riverlet"), ("note", "ünïcödé \"quoted\"")])
    );

    // Round trip: our JSON is the same JSON value as Java's (key order aside), and parses back.
    let ours = d.to_json();
    assert_eq!(json_value(&ours), json_value(&java));
    assert_eq!(TableDescriptor::from_json(&ours).unwrap(), d);
}

#[test]
fn log_table_descriptor_json_from_java_parses_and_round_trips() {
    let java = golden("table_descriptor_log.json");
    let d = TableDescriptor::from_json(&java).unwrap();
    let expected_schema = Schema::builder()
        .column("event_id", DataType::bigint())
        .column("payload", DataType::bytes())
        .column("at", DataType::timestamp(6))
        .build()
        .unwrap();
    assert_eq!(d.schema, expected_schema);
    assert!(!d.has_primary_key());
    assert!(d.partition_keys.is_empty());
    assert!(d.bucket_keys.is_empty());
    assert_eq!(d.bucket_count, Some(3));
    assert_eq!(d.comment, None);
    assert_eq!(
        d.properties,
        props(&[
            ("table.log.arrow.compression.type", "ZSTD"),
            ("table.log.arrow.compression.zstd.level", "5"),
        ])
    );
    assert_eq!(d.arrow_compression_zstd_level().unwrap(), 5);
    let ours = d.to_json();
    assert_eq!(json_value(&ours), json_value(&java));
    assert_eq!(TableDescriptor::from_json(&ours).unwrap(), d);
}

// ------------------------------------------------------------- reverse check (Java reads ours)

/// Writes Riverlet-built Arrow log batches of the golden rows and our table JSON into
/// `$RIVERLET_GOLDEN_JAVA_OUT`, for `tests/golden-java/verify.sh` to read with Fluss's Java
/// readers. Does nothing when the variable is unset (the normal `cargo test` run).
#[test]
fn write_riverlet_vectors_for_java() {
    let Some(dir) = std::env::var_os("RIVERLET_GOLDEN_JAVA_OUT") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).unwrap();

    let types = scalar_types();
    let schema = schema_of(&SCALAR_NAMES, &types).to_arrow();
    let batch = rows_to_record_batch(&schema, &types, &scalar_rows()).unwrap();
    for (name, compression, change_types) in [
        (
            "riverlet_log_arrow_v0_scalar_none.bin",
            ArrowCompression::None,
            None,
        ),
        (
            "riverlet_log_arrow_v0_scalar_zstd.bin",
            ArrowCompression::Zstd { level: 3 },
            None,
        ),
        (
            "riverlet_log_arrow_v0_scalar_lz4.bin",
            ArrowCompression::Lz4Frame,
            None,
        ),
        (
            "riverlet_log_arrow_v0_changelog_zstd.bin",
            ArrowCompression::Zstd { level: 3 },
            Some(&CHANGELOG[..]),
        ),
    ] {
        let bytes = build_arrow_log_batch(1, &batch, compression, change_types, 7, 3).unwrap();
        write(name, &bytes);
        // Java's own batch of the same rows, as the control.
        let java_name = name.replace("riverlet_", "java_");
        write(&java_name, &golden(&java_name["java_".len()..]));
    }
    let nested = nested_types();
    let nested_schema = schema_of(&NESTED_NAMES, &nested).to_arrow();
    let nested_batch = rows_to_record_batch(&nested_schema, &nested, &nested_rows()).unwrap();
    let bytes =
        build_arrow_log_batch(1, &nested_batch, ArrowCompression::None, None, 7, 3).unwrap();
    write("riverlet_log_arrow_v0_nested_none.bin", &bytes);
    write(
        "java_log_arrow_v0_nested_none.bin",
        &golden("log_arrow_v0_nested_none.bin"),
    );

    for name in ["table_descriptor_pk_partitioned", "table_descriptor_log"] {
        let java = golden(&format!("{name}.json"));
        let ours = TableDescriptor::from_json(&java).unwrap().to_json();
        write(&format!("java_{name}.json"), &java);
        write(&format!("riverlet_{name}.json"), &ours);
    }
}
