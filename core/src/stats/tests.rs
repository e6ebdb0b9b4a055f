//! Unit tests of the statistics block and batch filters.

use std::sync::Arc;

use arrow_array::{
    BooleanArray, Decimal128Array, Int32Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};

use super::batch::{statistics_columns, BatchStatistics, StatValue};
use super::predicate::{LeafFn, StatsFilter};
use crate::metadata::{DataType, Schema};
use crate::scan::expr::{parse_filter, Expr, Literal};

fn hex(s: &str) -> Vec<u8> {
    let s: String = s
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .flat_map(|l| l.split_whitespace())
        .collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn schema() -> Schema {
    Schema::builder()
        .column("id", DataType::int())
        .column("name", DataType::string())
        .column("payload", DataType::bytes())
        .column("price", DataType::decimal(10, 2))
        .column("big", DataType::decimal(20, 2))
        .column("ts", DataType::timestamp(6))
        .column("flag", DataType::boolean())
        .build()
        .unwrap()
}

/// The statistics block for columns [id, name, price, big, ts, flag] of `schema()`, derived by
/// hand from Fluss's `LogRecordBatchStatisticsWriter` and `AlignedRowWriter` (apache/fluss
/// 545c55390): version, count, indexes, null counts, then the min and max AlignedRows (8 bytes
/// of null bits with `flag` = field 5 at bit 13, six 8-byte slots, the variable part).
const GOLDEN: &str = include_str!("../../tests/golden/stats/statistics_block.hex");

fn golden_stats() -> BatchStatistics {
    BatchStatistics {
        columns: vec![0, 1, 3, 4, 5, 6],
        null_counts: vec![0, 1, 0, 0, 0, 3],
        min: vec![
            Some(StatValue::Long(1)),
            Some(StatValue::Str("apple".into())),
            Some(StatValue::Decimal(-225)),
            Some(StatValue::Decimal(-100)),
            Some(StatValue::Timestamp {
                millis: -1,
                nanos: 999_000,
            }),
            None,
        ],
        max: vec![
            Some(StatValue::Long(3)),
            Some(StatValue::Str("banana-split".into())),
            Some(StatValue::Decimal(150)),
            Some(StatValue::Decimal(10_000)),
            Some(StatValue::Timestamp {
                millis: 1_700_000_000_000,
                nanos: 123_000,
            }),
            None,
        ],
    }
}

#[test]
fn golden_statistics_block_encodes_and_decodes() {
    let types = schema().data_types();
    let bytes = hex(GOLDEN);
    assert_eq!(golden_stats().encode(&types).unwrap(), bytes);
    assert_eq!(
        BatchStatistics::decode(&bytes, &types).unwrap(),
        golden_stats()
    );
}

#[test]
fn statistics_are_computed_from_the_rows() {
    let s = schema();
    let arrow = s.to_arrow();
    let batch = RecordBatch::try_new(
        arrow,
        vec![
            Arc::new(Int32Array::from(vec![3, 1, 2])),
            Arc::new(StringArray::from(vec![
                Some("banana-split"),
                Some("apple"),
                None,
            ])),
            Arc::new(arrow_array::BinaryArray::from(vec![
                Some(&b"x"[..]),
                None,
                None,
            ])),
            Arc::new(
                Decimal128Array::from(vec![150, -225, 0])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
            Arc::new(
                Decimal128Array::from(vec![10_000, -100, 5])
                    .with_precision_and_scale(20, 2)
                    .unwrap(),
            ),
            Arc::new(TimestampMicrosecondArray::from(vec![
                1_700_000_000_000_123,
                -1,
                0,
            ])),
            Arc::new(BooleanArray::from(vec![None, None, None])),
        ],
    )
    .unwrap();
    let got = BatchStatistics::compute(&batch, &s.data_types(), &[0, 1, 3, 4, 5, 6])
        .unwrap()
        .unwrap();
    assert_eq!(got, golden_stats());
}

#[test]
fn corrupt_blocks_are_typed_errors() {
    let types = schema().data_types();
    let good = hex(GOLDEN);
    for cut in [0, 1, 3, 10, 40, 60, good.len() - 1] {
        let e = BatchStatistics::decode(&good[..cut], &types).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Corrupt, "cut at {cut}: {e}");
    }
    let mut bad = good.clone();
    bad[0] = 2;
    assert!(BatchStatistics::decode(&bad, &types)
        .unwrap_err()
        .to_string()
        .contains("unknown version 2"));
    let mut bad = good;
    bad[3] = 9; // column index 9 of a 7-column schema
    assert!(BatchStatistics::decode(&bad, &types).is_err());
}

#[test]
fn statistics_columns_follow_fluss_rules() {
    let s = schema();
    let names = s.column_names();
    let types = s.data_types();
    assert_eq!(
        statistics_columns(None, &names, &types, false).unwrap(),
        None
    );
    assert_eq!(
        statistics_columns(Some("*"), &names, &types, false).unwrap(),
        Some(vec![0, 1, 3, 4, 5, 6])
    );
    assert_eq!(
        statistics_columns(Some(" flag , id"), &names, &types, false).unwrap(),
        Some(vec![0, 6])
    );
    let e = statistics_columns(Some("id"), &names, &types, true).unwrap_err();
    assert!(e
        .to_string()
        .contains("not supported for primary key tables"));
    let e = statistics_columns(Some("nope"), &names, &types, false).unwrap_err();
    assert!(e.to_string().contains("Column 'nope' specified"));
    let e = statistics_columns(Some("payload"), &names, &types, false).unwrap_err();
    assert!(e.to_string().contains("is not supported for statistics"));
    let e = statistics_columns(Some(" , "), &names, &types, false).unwrap_err();
    assert!(e.to_string().contains("cannot be empty"));
}

fn pushed(text: &str) -> Option<StatsFilter> {
    let s = schema();
    StatsFilter::from_expr(&parse_filter(text).unwrap(), &s, &[0, 1, 3, 4, 5, 6])
}

#[test]
fn only_what_statistics_decide_is_pushed() {
    // a column without statistics drops out of AND, and makes OR unpushable
    assert_eq!(pushed("payload IS NULL"), None);
    assert!(matches!(
        pushed("id = 1 AND payload IS NULL"),
        Some(StatsFilter::Leaf {
            func: LeafFn::Eq,
            column: 0,
            ..
        })
    ));
    assert_eq!(pushed("id = 1 OR payload IS NULL"), None);
    // inexact literals are not pushed (the exact filter floors them)
    assert_eq!(pushed("id < 2.5"), None);
    assert_eq!(pushed("name LIKE 'a_c%'"), None);
    assert!(matches!(
        pushed("name LIKE 'ab%'"),
        Some(StatsFilter::Leaf {
            func: LeafFn::StartsWith,
            ..
        })
    ));
    assert!(matches!(
        pushed("name LIKE '%ab'"),
        Some(StatsFilter::Leaf {
            func: LeafFn::EndsWith,
            ..
        })
    ));
    assert!(matches!(
        pushed("name LIKE '%ab%'"),
        Some(StatsFilter::Leaf {
            func: LeafFn::Contains,
            ..
        })
    ));
    assert_eq!(pushed("NOT (name LIKE 'ab%')"), None);
    // NOT is pushed through comparisons, IN and BETWEEN
    assert!(matches!(
        pushed("NOT (id >= 3)"),
        Some(StatsFilter::Leaf {
            func: LeafFn::Lt,
            ..
        })
    ));
    assert!(matches!(
        pushed("NOT (id BETWEEN 1 AND 2)"),
        Some(StatsFilter::Or(_))
    ));
    assert!(matches!(
        pushed("NOT (id IN (1, 2))"),
        Some(StatsFilter::Leaf {
            func: LeafFn::NotIn,
            ..
        })
    ));
}

#[test]
fn batches_are_judged_by_their_statistics() {
    let st = golden_stats();
    let may = |text: &str| pushed(text).unwrap().may_match(&st, 3);
    // id in [1, 3]
    assert!(may("id = 2"));
    assert!(!may("id = 4"));
    assert!(!may("id > 3"));
    assert!(may("id >= 3"));
    assert!(!may("id < 1"));
    assert!(may("id <= 1"));
    assert!(may("id <> 2"));
    assert!(may("id IN (0, 2)"));
    assert!(!may("id IN (0, 4, NULL)"));
    assert!(may("id NOT IN (2)"));
    assert!(!may("id = 1 AND id = 3 AND id > 3"));
    assert!(may("id = 9 OR name = 'apple'"));
    assert!(!may("id BETWEEN 4 AND 9"));
    assert!(may("NOT (id BETWEEN 2 AND 2)"));
    assert!(!may("NOT (id BETWEEN 0 AND 9)"));
    // name in ['apple', 'banana-split'], one null
    assert!(may("name IS NULL"));
    assert!(may("name LIKE 'b%'"));
    assert!(!may("name LIKE 'c%'"));
    assert!(!may("name LIKE 'aa%'"));
    assert!(may("name LIKE '%zzz%'"));
    // flag: all null
    assert!(!may("flag = true"));
    assert!(may("flag IS NULL"));
    assert!(!may("flag IS NOT NULL"));
    assert!(!may("id IS NULL"));
    // decimals and timestamps
    assert!(may("price = -2.25"));
    assert!(!may("price > 1.5"));
    assert!(!may("big < -1"));
    assert!(may("big = 100"));
    assert!(!may("ts > TIMESTAMP '2023-11-14 22:13:20.000123'"));
    assert!(may("ts >= TIMESTAMP '2023-11-14 22:13:20.000123'"));
    // NULL literals never match
    assert!(!may("id = NULL"));
    // a batch with a single value: <> that value cannot match
    let one = BatchStatistics {
        columns: vec![0],
        null_counts: vec![0],
        min: vec![Some(StatValue::Long(5))],
        max: vec![Some(StatValue::Long(5))],
    };
    let f = |text: &str| pushed(text).unwrap().may_match(&one, 10);
    assert!(!f("id <> 5"));
    assert!(!f("id NOT IN (5)"));
    assert!(f("id NOT IN (6)"));
    // columns without statistics in the batch always may match
    let none = BatchStatistics {
        columns: vec![6],
        null_counts: vec![0],
        min: vec![None],
        max: vec![None],
    };
    assert!(pushed("id = 99").unwrap().may_match(&none, 1));
}

#[test]
fn an_empty_in_list_matches_no_batch() {
    let s = schema();
    let push = |e: Expr| StatsFilter::from_expr(&e, &s, &[0, 1, 3, 4, 5, 6]).unwrap();
    let empty_in = push(Expr::is_in("id", Vec::<i64>::new()));
    let empty_not_in = push(Expr::not_in("id", Vec::<i64>::new()));
    // The wire form has no literal, and the server decodes it (as Fluss's decoder does).
    let pb = empty_in.to_proto(&s).unwrap();
    assert_eq!(pb.leaf.as_ref().unwrap().literals.len(), 0);
    assert_eq!(StatsFilter::from_proto(&pb, &s).unwrap(), empty_in);
    let pb = empty_not_in.to_proto(&s).unwrap();
    assert_eq!(StatsFilter::from_proto(&pb, &s).unwrap(), empty_not_in);
    let st = golden_stats();
    assert!(!empty_in.may_match(&st, 3));
    assert!(empty_not_in.may_match(&st, 3));
    // whatever the statistics: none for the column, or none at all
    let none = BatchStatistics {
        columns: vec![6],
        null_counts: vec![0],
        min: vec![None],
        max: vec![None],
    };
    assert!(!empty_in.may_match(&none, 1));
    assert!(!push(Expr::is_in("id", [Literal::Null])).may_match(&st, 3));
    // all-null column: NOT IN () keeps no row either
    assert!(!push(Expr::not_in("flag", Vec::<bool>::new())).may_match(&st, 3));
    assert!(push(Expr::is_in("id", Vec::<i64>::new()).or(Expr::eq("id", 2))).may_match(&st, 3));
}

#[test]
fn pushed_filters_round_trip_through_the_wire_form() {
    let s = schema();
    for text in [
        "id = 2",
        "name IN ('a', NULL, 'bbbbbbbbbbbb')",
        "price BETWEEN -1.5 AND 2 OR big <> 100",
        "ts < TIMESTAMP '2024-01-01 00:00:00.000001' AND name LIKE 'x%'",
        "flag IS NOT NULL AND NOT (id IN (1, 2))",
    ] {
        let f = pushed(text).unwrap();
        let pb = f.to_proto(&s).unwrap();
        assert_eq!(StatsFilter::from_proto(&pb, &s).unwrap(), f, "{text}");
    }
    // field ids name the columns; an id the batch's schema lacks may always match
    let pb = pushed("id = 2").unwrap().to_proto(&s).unwrap();
    assert_eq!(pb.leaf.as_ref().unwrap().field_id, s.columns[0].id);
    let mut other = pb.clone();
    other.leaf.as_mut().unwrap().field_id = 999;
    assert_eq!(
        StatsFilter::from_proto(&other, &s).unwrap(),
        StatsFilter::Unknown
    );
    // malformed predicates are errors, not panics
    let mut bad = pb.clone();
    bad.leaf.as_mut().unwrap().function = 77;
    assert!(StatsFilter::from_proto(&bad, &s).is_err());
    let mut bad = pb;
    bad.leaf.as_mut().unwrap().literals.clear();
    assert!(StatsFilter::from_proto(&bad, &s).is_err());
    let mut deep = crate::proto::PbPredicate {
        r#type: 0,
        leaf: None,
        compound: None,
    };
    assert!(StatsFilter::from_proto(&deep, &s).is_err());
    for _ in 0..100 {
        deep = crate::proto::PbPredicate {
            r#type: 1,
            leaf: None,
            compound: Some(crate::proto::PbCompoundPredicate {
                function: 0,
                children: vec![deep],
            }),
        };
    }
    assert!(StatsFilter::from_proto(&deep, &s).is_err());
}

#[test]
fn expr_constructors_push_like_their_text() {
    let s = schema();
    let a = StatsFilter::from_expr(&Expr::starts_with("name", "ab"), &s, &[1]);
    assert_eq!(a, pushed("name LIKE 'ab%'"));
}
