//! Golden vectors of the lake formats' key bytes and buckets. Every expected number or byte
//! below comes from outside Riverlet: Fluss's own Java tests (BucketingFunctionTest,
//! IcebergKeyEncoderTest, IcebergBucketingFunctionTest), the Iceberg spec's hash table
//! (Appendix B, which Fluss's Iceberg tests check against through Iceberg's bucket transform),
//! or bytes written by Paimon's own `BinaryRowWriter` and Fluss's `PaimonKeyEncoder` (the pair
//! PaimonKeyEncoderTest compares), printed by tests/fluss-cluster/peer-lake/LakeKeyGolden.java.

use super::*;
use crate::metadata::{DataType, Schema, TableDescriptor};
use crate::row::bucketing::{iceberg_bucket, murmur3_32, paimon_bucket};
use crate::row::{Datum, TimestampLtz, TimestampNtz};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

const UUID: &[u8] = b"2bb87d68-baf9-4e64-90f9-f80910419fa6";
const FOX: &[u8] = b"The quick brown fox jumps over the lazy dog";

/// BucketingFunctionTest.testPaimonBucketing / testIcebergBucketing / testLanceBucketing.
#[test]
fn golden_lake_bucketing_functions() {
    let cases: [(&[u8], i32, i32, i32, i32); 4] = [
        // (key, buckets, paimon, iceberg, fluss/lance)
        (&[0, 10], 7, 1, 3, 1),
        (&[0, 10, 10, 10], 12, 11, 4, 0),
        (UUID, 16, 12, 12, 6),
        (FOX, 8, 0, 3, 6),
    ];
    for (key, n, paimon, iceberg, fluss) in cases {
        assert_eq!(paimon_bucket(key, n), paimon, "paimon {key:?} of {n}");
        assert_eq!(KeyFormat::Paimon.bucket(key, n).unwrap(), paimon);
        assert_eq!(iceberg_bucket(key, n), iceberg, "iceberg {key:?} of {n}");
        assert_eq!(KeyFormat::Iceberg.bucket(key, n).unwrap(), iceberg);
        let lance = KeyFormat::parse(Some("LANCE")).unwrap();
        assert_eq!(lance.bucket(key, n).unwrap(), fluss);
        for (format, expected) in [("paimon", paimon), ("iceberg", iceberg), ("lance", fluss)] {
            let f = crate::row::bucketing::bucketing_for_lake_format(Some(format)).unwrap();
            assert_eq!(f.bucketing(key, n).unwrap(), expected, "{format}");
        }
    }
    for f in [KeyFormat::Fluss, KeyFormat::Paimon, KeyFormat::Iceberg] {
        assert!(f.bucket(&[1], 0).is_err());
        assert!(f.bucket(&[], 4).is_err());
    }
    let e = KeyFormat::parse(Some("hudi")).unwrap_err();
    assert!(e.message().contains("'hudi'"), "{e}");
    assert_eq!(KeyFormat::parse(None).unwrap(), KeyFormat::Fluss);
}

fn one(t: DataType, v: Datum) -> Vec<u8> {
    KeyFormat::Iceberg
        .encode(&[t], &[v], &["k".to_string()])
        .unwrap()
}

/// The Iceberg spec's 32-bit hash requirements (Appendix B), through the key bytes Fluss's
/// IcebergKeyEncoder writes for each type.
#[test]
fn golden_iceberg_spec_hashes() {
    let ts = |millis| {
        Datum::Timestamp(TimestampNtz {
            millis,
            nanos_of_milli: 0,
        })
    };
    let cases = [
        (one(DataType::int(), Datum::Int(34)), 2017239379),
        (one(DataType::bigint(), Datum::BigInt(34)), 2017239379),
        (
            one(
                DataType::decimal(9, 2),
                Datum::Decimal {
                    unscaled: 1420,
                    precision: 9,
                    scale: 2,
                },
            ),
            -500754589,
        ),
        // 2017-11-16
        (one(DataType::date(), Datum::Date(17486)), -653330422),
        // 22:31:08
        (one(DataType::time(0), Datum::Time(81_068_000)), -662762989),
        // 2017-11-16T22:31:08
        (
            one(DataType::timestamp(6), ts(1_510_871_468_000)),
            -2047944441,
        ),
        (one(DataType::string(), Datum::from("iceberg")), 1210000089),
        (
            one(DataType::bytes(), Datum::Binary(vec![0, 1, 2, 3])),
            -188683207,
        ),
    ];
    for (key, hash) in cases {
        assert_eq!(murmur3_32(&key, 0), hash, "{key:02x?}");
    }
}

/// IcebergKeyEncoderTest / IcebergBucketingFunctionTest: the bytes of each type.
#[test]
fn golden_iceberg_key_bytes() {
    assert_eq!(one(DataType::int(), Datum::Int(42)), 42i64.to_le_bytes());
    assert_eq!(
        one(DataType::bigint(), Datum::BigInt(1234567890123456789)),
        1234567890123456789i64.to_le_bytes()
    );
    let s = "Hello Iceberg, Fluss this side!";
    assert_eq!(one(DataType::string(), Datum::from(s)), s.as_bytes());
    // new BigDecimal("123.45").unscaledValue().toByteArray()
    let d = Datum::Decimal {
        unscaled: 12345,
        precision: 10,
        scale: 2,
    };
    assert_eq!(one(DataType::decimal(10, 2), d), [0x30, 0x39]);
    let ts = Datum::Timestamp(TimestampNtz {
        millis: 1698235273182,
        nanos_of_milli: 123456,
    });
    assert_eq!(
        one(DataType::timestamp(6), ts),
        (1698235273182i64 * 1000 + 123).to_le_bytes()
    );
    assert_eq!(
        one(DataType::date(), Datum::Date(19655)),
        19655i64.to_le_bytes()
    );
    assert_eq!(
        one(DataType::time(0), Datum::Time(34200000)),
        34200000000i64.to_le_bytes()
    );
    let b = b"Hello i only understand binary data".to_vec();
    assert_eq!(one(DataType::bytes(), Datum::Binary(b.clone())), b);

    // testSingleKeyFieldRequirement, and types Iceberg's writer refuses.
    let schema = Schema::builder()
        .column("id", DataType::int().not_null())
        .column("name", DataType::string())
        .column("flag", DataType::boolean())
        .build()
        .unwrap();
    let two = ["id".to_string(), "name".to_string()];
    let e = KeyEncoder::new(KeyFormat::Iceberg, &schema, &two).unwrap_err();
    assert!(
        e.message().contains("exactly one field for iceberg format"),
        "{e}"
    );
    let e = KeyEncoder::new(KeyFormat::Iceberg, &schema, &["flag".to_string()]).unwrap_err();
    assert!(e.message().contains("'flag'"), "{e}");
    let e = KeyFormat::Iceberg
        .encode(&[DataType::int()], &[Datum::Null], &["id".to_string()])
        .unwrap_err();
    assert!(e.message().contains("'id'"), "{e}");
}

/// LakeKeyGolden.java's output: Paimon's BinaryRowWriter and Fluss's PaimonKeyEncoder wrote
/// these bytes (it checks they agree), and Paimon's DefaultBucketFunction and Fluss's
/// PaimonBucketingFunction these buckets (also checked to agree).
const PAIMON_GOLDEN: &str = "\
all_types\t0000000000000000010000000000000002000000000000000a000000000000006400000000000000d20a1feb8ca954ab3333534100000000ec51b81e856b2e40c74c000000000000c0d90902000000000a000000a00000003230000000000082310000000000008168656c6c6f000085090000000000000001000000b0000000decfb5668b01000000000000c0000000decfb5668b01000040e20100c8000000313233343536373839300000000000000a000000000000000000000000000000decfb5668b010000decfb5668b010000\t3:0 7:5 16:3 128:67
int_0\t00000000000000000000000000000000\t3:0 7:1 16:11 128:91
int_1\t00000000000000000100000000000000\t3:1 7:5 16:14 128:30
int_42\t00000000000000002a00000000000000\t3:0 7:1 16:5 128:53
int_-7\t0000000000000000f9ffffff00000000\t3:0 7:5 16:11 128:75
int_1000\t0000000000000000e803000000000000\t3:2 7:2 16:5 128:5
bigint_1234567890123\t0000000000000000cb04fb711f010000\t3:0 7:1 16:12 128:44
int_string_hi\t000000000000000007000000000000006869000000000082\t3:0 7:5 16:3 128:115
int_string_this_is_a_long_string\t000000000000000007000000000000001500000018000000746869735f69735f615f6c6f6e675f737472696e67000000\t3:2 7:5 16:11 128:11
null_int\t000100000000000000000000000000000700000000000000\t3:2 7:4 16:15 128:79
decimal20_neg\t00000000000000000900000010000000ff54ab567314e0f52e00000000000000\t3:0 7:4 16:9 128:41
timestamp6\t000000000000000040e2010010000000decfb5668b010000\t3:2 7:5 16:13 128:45
";

const MILLIS: i64 = 1698235273182;

/// The key types and values of one LakeKeyGolden.java case.
fn paimon_case(name: &str) -> (Vec<DataType>, Vec<Datum>) {
    let ntz = |nanos| {
        Datum::Timestamp(TimestampNtz {
            millis: MILLIS,
            nanos_of_milli: nanos,
        })
    };
    let ltz = |nanos| {
        Datum::TimestampLtz(TimestampLtz {
            epoch_millis: MILLIS,
            nanos_of_milli: nanos,
        })
    };
    let dec = |unscaled, precision, scale| Datum::Decimal {
        unscaled,
        precision,
        scale,
    };
    if let Some(id) = name.strip_prefix("int_string_") {
        return (
            vec![DataType::int().not_null(), DataType::string().not_null()],
            vec![Datum::Int(7), Datum::from(id)],
        );
    }
    if let Some(id) = name.strip_prefix("int_") {
        return (
            vec![DataType::int().not_null()],
            vec![Datum::Int(id.parse().unwrap())],
        );
    }
    match name {
        "all_types" => (
            vec![
                DataType::boolean(),
                DataType::tinyint(),
                DataType::smallint(),
                DataType::int(),
                DataType::bigint(),
                DataType::float(),
                DataType::double(),
                DataType::date(),
                DataType::time(0),
                DataType::binary(20),
                DataType::bytes(),
                DataType::char(2),
                DataType::string(),
                DataType::decimal(5, 2),
                DataType::decimal(20, 0),
                DataType::timestamp(1),
                DataType::timestamp(5),
                DataType::timestamp_ltz(1),
                DataType::timestamp_ltz(5),
            ],
            vec![
                Datum::Boolean(true),
                Datum::TinyInt(2),
                Datum::SmallInt(10),
                Datum::Int(100),
                // new BigInteger("12345678901234567890").longValue()
                Datum::BigInt(12345678901234567890u64 as i64),
                Datum::Float(13.2),
                Datum::Double(15.21),
                Datum::Date(19655),
                Datum::Time(34200000),
                Datum::Binary(b"1234567890".to_vec()),
                Datum::Binary(b"20".to_vec()),
                Datum::from("1"),
                Datum::from("hello"),
                dec(9, 5, 2),
                dec(10, 20, 0),
                ntz(0),
                ntz(0),
                ltz(45678),
                ltz(123456),
            ],
        ),
        "bigint_1234567890123" => (
            vec![DataType::bigint().not_null()],
            vec![Datum::BigInt(1234567890123)],
        ),
        "null_int" => (
            vec![DataType::int(), DataType::int().not_null()],
            vec![Datum::Null, Datum::Int(7)],
        ),
        "decimal20_neg" => (
            vec![DataType::decimal(20, 0).not_null()],
            vec![dec(-12345678901234567890, 20, 0)],
        ),
        "timestamp6" => (vec![DataType::timestamp(6).not_null()], vec![ntz(123456)]),
        other => panic!("unknown case {other}"),
    }
}

#[test]
fn golden_paimon_keys_and_buckets() {
    let mut checked = 0;
    for line in PAIMON_GOLDEN.lines() {
        let [name, key_hex, buckets] = line.split('\t').collect::<Vec<_>>()[..] else {
            panic!("bad line {line}");
        };
        let (types, values) = paimon_case(name);
        let names: Vec<String> = (0..types.len()).map(|i| format!("k{i}")).collect();
        let key = KeyFormat::Paimon.encode(&types, &values, &names).unwrap();
        assert_eq!(key, unhex(key_hex), "{name}: key bytes");
        for pair in buckets.split(' ') {
            let (n, b) = pair.split_once(':').unwrap();
            let (n, b): (i32, i32) = (n.parse().unwrap(), b.parse().unwrap());
            assert_eq!(
                KeyFormat::Paimon.bucket(&key, n).unwrap(),
                b,
                "{name}: of {n}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 12 * 4);
    // A null in a NOT NULL key column is an error naming it.
    let e = KeyFormat::Paimon
        .encode(
            &[DataType::int().not_null()],
            &[Datum::Null],
            &["id".into()],
        )
        .unwrap_err();
    assert!(e.message().contains("'id'"), "{e}");
}

fn table(format: Option<&str>, version: Option<&str>, bucket_key: Option<&str>) -> TableDescriptor {
    let schema = Schema::builder()
        .column("id", DataType::int().not_null())
        .column("sub", DataType::string().not_null())
        .column("v", DataType::string())
        .primary_key(["id", "sub"])
        .build()
        .unwrap();
    let mut b = TableDescriptor::builder(schema).distributed_by(
        Some(4),
        bucket_key.map(|k| vec![k.to_string()]).unwrap_or_default(),
    );
    if let Some(f) = format {
        b = b.property("table.datalake.format", f);
    }
    if let Some(v) = version {
        b = b.property("table.kv.format-version", v);
    }
    b.build().unwrap()
}

/// KeyEncoder.ofPrimaryKeyEncoder's rule: the lake's encoder for the primary key in kv format
/// version 1, or in version 2 when the bucket key is the primary key; compacted otherwise. The
/// bucket key is always the lake's.
#[test]
fn table_keys_follow_format_and_kv_version() {
    let row = vec![Datum::Int(42), Datum::from("a"), Datum::from("x")];
    let compacted_pk = crate::row::encode_key(
        &[DataType::int().not_null(), DataType::string().not_null()],
        &[Datum::Int(42), Datum::from("a")],
    )
    .unwrap();
    let paimon_id = unhex("00000000000000002a00000000000000");

    // Version 2, bucket key `id` (a prefix of the key): compacted primary key, Paimon bucket key.
    let k = TableKeys::of(&table(Some("paimon"), Some("2"), Some("id"))).unwrap();
    assert_eq!(k.format(), KeyFormat::Paimon);
    assert!(!k.bucket_is_primary());
    assert_eq!(k.primary().unwrap().encode_row(&row).unwrap(), compacted_pk);
    assert_eq!(k.bucket_key().unwrap().encode_row(&row).unwrap(), paimon_id);
    assert_eq!(k.bucket_of(&paimon_id, 16).unwrap(), 5);
    assert_eq!(k.prefix().unwrap().format(), KeyFormat::Fluss);

    // Version 1 (unset): Paimon primary key and prefix key.
    let k = TableKeys::of(&table(Some("paimon"), None, Some("id"))).unwrap();
    assert_eq!(k.primary().unwrap().format(), KeyFormat::Paimon);
    assert_eq!(k.prefix().unwrap().format(), KeyFormat::Paimon);

    // Version 2, default bucket key (the whole primary key): Paimon bytes for both.
    let k = TableKeys::of(&table(Some("paimon"), Some("2"), None)).unwrap();
    assert!(k.bucket_is_primary());
    assert_eq!(k.primary().unwrap().format(), KeyFormat::Paimon);
    assert!(k.prefix().is_none());

    // No lake format: compacted everywhere, Fluss's bucketing.
    let k = TableKeys::of(&table(None, Some("2"), Some("id"))).unwrap();
    assert_eq!(k.format(), KeyFormat::Fluss);
    assert_eq!(k.primary().unwrap().encode_row(&row).unwrap(), compacted_pk);

    // Iceberg with a two-column primary key as its bucket key: refused, as Fluss's encoder is.
    let e = TableKeys::of(&table(Some("iceberg"), Some("2"), None)).unwrap_err();
    assert!(e.message().contains("exactly one field"), "{e}");
    // Iceberg with bucket key `id`: compacted primary key, Iceberg bucket key.
    let k = TableKeys::of(&table(Some("iceberg"), Some("2"), Some("id"))).unwrap();
    assert_eq!(
        k.bucket_key().unwrap().encode_row(&row).unwrap(),
        42i64.to_le_bytes()
    );

    let e = TableKeys::of(&table(Some("paimon"), Some("3"), None)).unwrap_err();
    assert!(e.message().contains("kv format version: 3"), "{e}");
    let e = TableKeys::of(&table(Some("hudi"), Some("2"), None)).unwrap_err();
    assert!(e.message().contains("'hudi'"), "{e}");
}
