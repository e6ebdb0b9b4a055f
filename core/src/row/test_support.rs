//! Test helpers: the all-types golden row and proptest strategies for typed rows.

use proptest::prelude::*;

use super::{Datum, TimestampLtz, TimestampNtz};
use crate::metadata::{DataField, DataType, TypeKind};

/// The `encoded_key.hex` bytes of Fluss's all-types key (IndexedRowTest.genRecordForAllTypes
/// without its MAP and ROW fields), as quoted in fluss-rust
/// crates/fluss/src/row/encode/compacted_key_encoder.rs `test_all_data_types_java_compatible`.
#[rustfmt::skip]
pub(crate) const ENCODED_KEY_GOLDEN: &[u8] = &[
    0x01,                                                       // BOOLEAN true
    0x02,                                                       // TINYINT 2
    0x0A, 0x00,                                                 // SMALLINT 10 (2 bytes LE)
    0x64,                                                       // INT 100
    0xD2, 0x95, 0xFC, 0xD8, 0xCE, 0xB1, 0xAA, 0xAA, 0xAB, 0x01, // BIGINT
    0x33, 0x33, 0x53, 0x41,                                     // FLOAT 13.2
    0xEC, 0x51, 0xB8, 0x1E, 0x85, 0x6B, 0x2E, 0x40,             // DOUBLE 15.21
    0xC7, 0x99, 0x01,                                           // DATE 19655
    0xC0, 0xB3, 0xA7, 0x10,                                     // TIME 34200000
    0x0A, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x30, // BINARY(20)
    0x02, 0x32, 0x30,                                           // BYTES "20"
    0x01, 0x31,                                                 // CHAR(2) "1"
    0x05, 0x68, 0x65, 0x6C, 0x6C, 0x6F,                         // STRING "hello"
    0x09,                                                       // DECIMAL(5,2) 0.09
    0x01, 0x0A,                                                 // DECIMAL(20,0) 10
    0xDE, 0x9F, 0xD7, 0xB5, 0xB6, 0x31,                         // TIMESTAMP(1)
    0xDE, 0x9F, 0xD7, 0xB5, 0xB6, 0x31, 0x00,                   // TIMESTAMP(5)
    0xDE, 0x9F, 0xD7, 0xB5, 0xB6, 0x31,                         // TIMESTAMP_LTZ(1)
    0xDE, 0x9F, 0xD7, 0xB5, 0xB6, 0x31, 0x00,                   // TIMESTAMP_LTZ(5)
    // ARRAY<INT> [1, 2, 3, 4, 5, -11, null, 444, 102234]
    0x30, 0x09, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
    0x00, 0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00,
    0x00, 0x05, 0x00, 0x00, 0x00, 0xF5, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00,
    0x00, 0xBC, 0x01, 0x00, 0x00, 0x5A, 0x8F, 0x01, 0x00, 0x00, 0x00, 0x00,
    0x00,
    // ARRAY<FLOAT NOT NULL> [0.1, 1.1, -0.5, 6.6, MAX, MIN]
    0x20, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xCD, 0xCC, 0xCC,
    0x3D, 0xCD, 0xCC, 0x8C, 0x3F, 0x00, 0x00, 0x00, 0xBF, 0x33, 0x33, 0xD3,
    0x40, 0xFF, 0xFF, 0x7F, 0x7F, 0x01, 0x00, 0x00, 0x00,
    // ARRAY<ARRAY<STRING>> [["a", null, "c"], null, ["hello", "world"]]
    0x58, 0x03, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00,
    0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x18, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00,
    0x00, 0x02, 0x00, 0x00, 0x00, 0x61, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x81, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x63, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x81, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x68, 0x65, 0x6C, 0x6C, 0x6F, 0x00, 0x00, 0x85, 0x77, 0x6F, 0x72,
    0x6C, 0x64, 0x00, 0x00, 0x85,
];

/// Types and values of [`ENCODED_KEY_GOLDEN`].
pub(crate) fn all_types_key_golden() -> (Vec<DataType>, Vec<Datum>) {
    let ts = 1_698_235_273_182i64;
    let types = vec![
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
        DataType::timestamp(1).not_null(),
        DataType::timestamp(5).not_null(),
        DataType::timestamp_ltz(1).not_null(),
        DataType::timestamp_ltz(5).not_null(),
        DataType::array(DataType::int()),
        DataType::array(DataType::float().not_null()),
        DataType::array(DataType::array(DataType::string())),
    ];
    let s = |x: &str| Datum::String(x.to_string());
    let values = vec![
        Datum::Boolean(true),
        Datum::TinyInt(2),
        Datum::SmallInt(10),
        Datum::Int(100),
        Datum::BigInt(-6_101_065_172_474_983_726),
        Datum::Float(13.2),
        Datum::Double(15.21),
        Datum::Date(19655),
        Datum::Time(34_200_000),
        Datum::Binary(b"1234567890".to_vec()),
        Datum::Binary(b"20".to_vec()),
        s("1"),
        s("hello"),
        Datum::Decimal {
            unscaled: 9,
            precision: 5,
            scale: 2,
        },
        Datum::Decimal {
            unscaled: 10,
            precision: 20,
            scale: 0,
        },
        Datum::Timestamp(TimestampNtz::from_millis(ts)),
        Datum::Timestamp(TimestampNtz::from_millis(ts)),
        Datum::TimestampLtz(TimestampLtz::from_millis(ts)),
        Datum::TimestampLtz(TimestampLtz::from_millis(ts)),
        Datum::Array(
            [1, 2, 3, 4, 5, -11]
                .into_iter()
                .map(Datum::Int)
                .chain([Datum::Null, Datum::Int(444), Datum::Int(102_234)])
                .collect(),
        ),
        Datum::Array(
            [0.1f32, 1.1, -0.5, 6.6, f32::MAX, f32::from_bits(1)]
                .into_iter()
                .map(Datum::Float)
                .collect(),
        ),
        Datum::Array(vec![
            Datum::Array(vec![s("a"), Datum::Null, s("c")]),
            Datum::Null,
            Datum::Array(vec![s("hello"), s("world")]),
        ]),
    ];
    (types, values)
}

fn leaf_type() -> impl Strategy<Value = DataType> {
    let precisions = || prop_oneof![Just(0u32), Just(3), Just(6), Just(9)];
    prop_oneof![
        Just(DataType::boolean()),
        Just(DataType::tinyint()),
        Just(DataType::smallint()),
        Just(DataType::int()),
        Just(DataType::bigint()),
        Just(DataType::float()),
        Just(DataType::double()),
        (1u32..=38)
            .prop_flat_map(|p| (Just(p), 0..=p))
            .prop_map(|(p, s)| DataType::decimal(p, s)),
        (1u32..6).prop_map(DataType::char),
        Just(DataType::string()),
        (1u32..6).prop_map(DataType::binary),
        Just(DataType::bytes()),
        Just(DataType::date()),
        precisions().prop_map(DataType::time),
        precisions().prop_map(DataType::timestamp),
        precisions().prop_map(DataType::timestamp_ltz),
    ]
    .prop_flat_map(|t| any::<bool>().prop_map(move |n| t.clone().with_nullable(n)))
}

/// Any Fluss type, nested up to two levels.
pub(crate) fn any_type() -> impl Strategy<Value = DataType> {
    leaf_type().prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(DataType::array),
            (leaf_type(), inner.clone()).prop_map(|(k, v)| DataType::map(k, v)),
            proptest::collection::vec(inner, 1..3).prop_map(|ts| {
                DataType::row(
                    ts.into_iter()
                        .enumerate()
                        .map(|(i, t)| DataField::new(format!("f{i}"), t))
                        .collect(),
                )
            }),
        ]
        .prop_flat_map(|t| any::<bool>().prop_map(move |n| t.clone().with_nullable(n)))
    })
}

fn non_null_value(t: &DataType) -> BoxedStrategy<Datum> {
    match &t.kind {
        TypeKind::Boolean => any::<bool>().prop_map(Datum::Boolean).boxed(),
        TypeKind::TinyInt => any::<i8>().prop_map(Datum::TinyInt).boxed(),
        TypeKind::SmallInt => any::<i16>().prop_map(Datum::SmallInt).boxed(),
        TypeKind::Int => any::<i32>().prop_map(Datum::Int).boxed(),
        TypeKind::BigInt => any::<i64>().prop_map(Datum::BigInt).boxed(),
        TypeKind::Float => (proptest::num::f32::NORMAL
            | proptest::num::f32::SUBNORMAL
            | proptest::num::f32::ZERO
            | proptest::num::f32::INFINITE)
            .prop_map(Datum::Float)
            .boxed(),
        TypeKind::Double => {
            (proptest::num::f64::NORMAL | proptest::num::f64::ZERO | proptest::num::f64::INFINITE)
                .prop_map(Datum::Double)
                .boxed()
        }
        TypeKind::Decimal { precision, scale } => {
            let (p, s) = (*precision, *scale);
            let max = 10i128.pow(p) - 1;
            (-max..=max)
                .prop_map(move |u| Datum::Decimal {
                    unscaled: u,
                    precision: p,
                    scale: s,
                })
                .boxed()
        }
        TypeKind::Char { length } => {
            proptest::string::string_regex(&format!("[a-z]{{0,{length}}}"))
                .unwrap()
                .prop_map(Datum::String)
                .boxed()
        }
        TypeKind::String => "\\PC{0,12}".prop_map(Datum::String).boxed(),
        TypeKind::Binary { length } => {
            let n = *length as usize;
            (proptest::collection::vec(any::<u8>(), n - 1), 1u8..=255)
                .prop_map(|(mut v, last)| {
                    v.push(last);
                    Datum::Binary(v)
                })
                .boxed()
        }
        TypeKind::Bytes => proptest::collection::vec(any::<u8>(), 0..20)
            .prop_map(Datum::Binary)
            .boxed(),
        TypeKind::Date => any::<i32>().prop_map(Datum::Date).boxed(),
        TypeKind::Time { precision } => {
            let step = if *precision == 0 { 1000 } else { 1 };
            (0..86_400_000 / step)
                .prop_map(move |v| Datum::Time(v * step))
                .boxed()
        }
        TypeKind::Timestamp { precision } | TypeKind::TimestampLtz { precision } => {
            let p = *precision;
            let ltz = matches!(t.kind, TypeKind::TimestampLtz { .. });
            let millis_step = if p == 0 { 1000 } else { 1 };
            let nanos_step = match p {
                0..=3 => 0,
                4..=6 => 1000,
                _ => 1,
            };
            (
                -9_000_000_000_000i64 / millis_step..9_000_000_000_000 / millis_step,
                0..1000i32,
                0..1000i32,
            )
                .prop_map(move |(m, a, b)| {
                    let millis = m * millis_step;
                    let nanos = match nanos_step {
                        0 => 0,
                        1000 => a * 1000,
                        _ => a * 1000 + b,
                    };
                    if ltz {
                        Datum::TimestampLtz(TimestampLtz {
                            epoch_millis: millis,
                            nanos_of_milli: nanos,
                        })
                    } else {
                        Datum::Timestamp(TimestampNtz {
                            millis,
                            nanos_of_milli: nanos,
                        })
                    }
                })
                .boxed()
        }
        TypeKind::Array(e) => proptest::collection::vec(value(e), 0..4)
            .prop_map(Datum::Array)
            .boxed(),
        TypeKind::Map(k, v) => proptest::collection::vec((value(k), value(v)), 0..3)
            .prop_map(Datum::Map)
            .boxed(),
        TypeKind::Row(fields) => {
            let strategies: Vec<BoxedStrategy<Datum>> =
                fields.iter().map(|f| value(&f.data_type)).collect();
            strategies.prop_map(Datum::Row).boxed()
        }
    }
}

/// A value of type `t` (null sometimes when `t` is nullable).
pub(crate) fn value(t: &DataType) -> BoxedStrategy<Datum> {
    if t.nullable {
        prop_oneof![1 => Just(Datum::Null), 4 => non_null_value(t)].boxed()
    } else {
        non_null_value(t)
    }
}

/// A row of `types`.
pub(crate) fn row(types: &[DataType]) -> BoxedStrategy<Vec<Datum>> {
    types.iter().map(value).collect::<Vec<_>>().boxed()
}

/// A random row type (1..8 fields) and 1..=max_rows rows of it.
pub(crate) fn typed_rows(
    max_rows: usize,
) -> impl Strategy<Value = (Vec<DataType>, Vec<Vec<Datum>>)> {
    proptest::collection::vec(any_type(), 1..8).prop_flat_map(move |types| {
        let rows = proptest::collection::vec(row(&types), 1..=max_rows);
        (Just(types), rows)
    })
}
