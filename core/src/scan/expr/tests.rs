use super::*;
use std::sync::Arc;

use arrow_array::{
    Array, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array,
    Int8Array, RecordBatch, StringArray, Time32MillisecondArray, TimestampMicrosecondArray,
    TimestampMillisecondArray,
};
use arrow_schema::{DataType as ArrowType, Schema, TimeUnit};
use chrono::NaiveDate;

use super::eval::{like_shape, LikeShape};
use super::types::days_since_epoch;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_schema::Field;

fn batch() -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("i", ArrowType::Int32, true),
        Field::new("t", ArrowType::Int8, true),
        Field::new("s", ArrowType::Utf8, true),
        Field::new("d", ArrowType::Decimal128(10, 2), true),
        Field::new("f", ArrowType::Float64, true),
        Field::new("b", ArrowType::Boolean, true),
        Field::new("dt", ArrowType::Date32, true),
        Field::new(
            "ts",
            ArrowType::Timestamp(TimeUnit::Millisecond, None),
            true,
        ),
        Field::new(
            "ltz",
            ArrowType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new("bin", ArrowType::Binary, true),
        Field::new("tm", ArrowType::Time32(TimeUnit::Millisecond), true),
        Field::new("fb", ArrowType::FixedSizeBinary(2), true),
    ]));
    let day = |s: &str| days_since_epoch(NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap());
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int32Array::from(vec![
                Some(1),
                Some(2),
                None,
                Some(4),
                Some(-5),
            ])),
            Arc::new(Int8Array::from(vec![
                Some(1),
                Some(127),
                Some(-128),
                None,
                Some(0),
            ])),
            Arc::new(StringArray::from(vec![
                Some("apple"),
                Some("banana"),
                Some("cherry"),
                None,
                Some("a_b%c"),
            ])),
            Arc::new(
                Decimal128Array::from(vec![Some(125), Some(-100), Some(0), Some(99999), None])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
            Arc::new(Float64Array::from(vec![
                Some(1.5),
                Some(2.0),
                None,
                Some(-0.5),
                Some(1e9),
            ])),
            Arc::new(BooleanArray::from(vec![
                Some(true),
                Some(false),
                None,
                Some(true),
                Some(false),
            ])),
            Arc::new(Date32Array::from(vec![
                Some(day("2024-01-01")),
                Some(day("2024-01-02")),
                Some(day("2023-12-31")),
                None,
                Some(day("2024-02-29")),
            ])),
            Arc::new(TimestampMillisecondArray::from(vec![
                Some(0),
                Some(1_000),
                Some(1_500),
                None,
                Some(86_400_000),
            ])),
            Arc::new(
                TimestampMicrosecondArray::from(vec![
                    Some(0),
                    Some(1),
                    Some(1_000),
                    None,
                    Some(-1),
                ])
                .with_timezone("UTC"),
            ),
            Arc::new(BinaryArray::from(vec![
                Some(&b"\x01\x02"[..]),
                Some(&b""[..]),
                None,
                Some(&b"\xff"[..]),
                Some(&b"\x01"[..]),
            ])),
            Arc::new(Time32MillisecondArray::from(vec![
                Some(0),
                Some(3_600_000),
                Some(43_200_500),
                None,
                Some(86_399_999),
            ])),
            Arc::new(
                arrow_array::FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                    vec![Some(b"ab"), Some(b"cd"), None, Some(b"ab"), Some(b"zz")].into_iter(),
                    2,
                )
                .unwrap(),
            ),
        ],
    )
    .unwrap()
}

/// Evaluates and returns Some(bool) / None per row.
fn eval(e: &Expr) -> Vec<Option<bool>> {
    let r = e.evaluate(&batch()).unwrap();
    (0..r.len())
        .map(|i| r.is_valid(i).then(|| r.value(i)))
        .collect()
}

fn keep(e: &str) -> Vec<usize> {
    let expr = parse_filter(e).unwrap();
    let r = expr.evaluate(&batch()).unwrap();
    (0..r.len())
        .filter(|i| r.is_valid(*i) && r.value(*i))
        .collect()
}

const T: Option<bool> = Some(true);
const F: Option<bool> = Some(false);
const N: Option<bool> = None;

#[test]
fn comparisons_with_null_semantics() {
    assert_eq!(eval(&Expr::eq("i", 2)), vec![F, T, N, F, F]);
    assert_eq!(eval(&Expr::not_eq("i", 2)), vec![T, F, N, T, T]);
    assert_eq!(eval(&Expr::lt("i", 2)), vec![T, F, N, F, T]);
    assert_eq!(eval(&Expr::lt_eq("i", 2)), vec![T, T, N, F, T]);
    assert_eq!(eval(&Expr::gt("i", 2)), vec![F, F, N, T, F]);
    assert_eq!(eval(&Expr::gt_eq("i", 2)), vec![F, T, N, T, F]);
    assert_eq!(eval(&Expr::eq("i", Literal::Null)), vec![N, N, N, N, N]);
    assert_eq!(eval(&Expr::eq("b", true)), vec![T, F, N, T, F]);
    assert_eq!(eval(&Expr::eq("s", "banana")), vec![F, T, F, N, F]);
    assert_eq!(eval(&Expr::gt("s", "b")), vec![F, T, T, N, F]);
}

#[test]
fn out_of_range_and_fractional_literals_are_exact() {
    // TINYINT vs 1000 / -1000.
    assert_eq!(eval(&Expr::lt("t", 1000)), vec![T, T, T, N, T]);
    assert_eq!(eval(&Expr::eq("t", 1000)), vec![F, F, F, N, F]);
    assert_eq!(eval(&Expr::gt("t", -1000)), vec![T, T, T, N, T]);
    assert_eq!(eval(&Expr::not_eq("t", -1000)), vec![T, T, T, N, T]);
    // INT vs 1.5: x < 1.5 <=> x <= 1; x = 1.5 never.
    assert_eq!(
        eval(&Expr::lt("i", Literal::decimal(15, 1))),
        vec![T, F, N, F, T]
    );
    assert_eq!(
        eval(&Expr::gt_eq("i", Literal::decimal(15, 1))),
        vec![F, T, N, T, F]
    );
    assert_eq!(
        eval(&Expr::eq("i", Literal::decimal(15, 1))),
        vec![F, F, N, F, F]
    );
    assert_eq!(
        eval(&Expr::eq("i", Literal::decimal(20, 1))),
        vec![F, T, N, F, F]
    );
    assert_eq!(eval(&Expr::gt("i", -4.5)), vec![T, T, N, T, F]);
    assert_eq!(eval(&Expr::lt_eq("i", -5.0)), vec![F, F, N, F, T]);
}

#[test]
fn decimals() {
    // d = 1.25, -1.00, 0.00, 999.99, null
    assert_eq!(
        eval(&Expr::eq("d", Literal::decimal(125, 2))),
        vec![T, F, F, F, N]
    );
    assert_eq!(
        eval(&Expr::eq("d", Literal::decimal(1250, 3))),
        vec![T, F, F, F, N]
    );
    assert_eq!(
        eval(&Expr::eq("d", Literal::decimal(1251, 3))),
        vec![F, F, F, F, N]
    );
    assert_eq!(
        eval(&Expr::lt("d", Literal::decimal(1251, 3))),
        vec![T, T, T, F, N]
    );
    assert_eq!(
        eval(&Expr::gt("d", Literal::decimal(1249, 3))),
        vec![T, F, F, T, N]
    );
    assert_eq!(eval(&Expr::eq("d", -1)), vec![F, T, F, F, N]);
    assert_eq!(eval(&Expr::lt("d", 10_000_000_000i64)), vec![T, T, T, T, N]);
    assert_eq!(eval(&Expr::gt("d", 0.5)), vec![T, F, F, T, N]);
    assert_eq!(keep("d >= 999.99"), vec![3]);
    assert_eq!(keep("d BETWEEN -1 AND 1.25"), vec![0, 1, 2]);
}

#[test]
fn floats() {
    assert_eq!(eval(&Expr::gt("f", 1)), vec![T, T, N, F, T]);
    assert_eq!(
        eval(&Expr::eq("f", Literal::decimal(15, 1))),
        vec![T, F, N, F, F]
    );
    assert_eq!(keep("f < 1.6 AND f > -1"), vec![0, 3]);
    assert_eq!(keep("f = 1e9"), vec![4]);
}

#[test]
fn dates_times_timestamps() {
    assert_eq!(keep("dt = DATE '2024-01-01'"), vec![0]);
    assert_eq!(keep("dt >= '2024-01-02'"), vec![1, 4]);
    assert_eq!(keep("dt < TIMESTAMP '2024-01-01 00:00:01'"), vec![0, 2]);
    assert_eq!(keep("dt > TIMESTAMP '2024-01-01 00:00:01'"), vec![1, 4]);
    assert_eq!(keep("ts = TIMESTAMP '1970-01-01 00:00:01'"), vec![1]);
    assert_eq!(keep("ts >= '1970-01-01 00:00:01.5'"), vec![2, 4]);
    assert_eq!(keep("ts > '1970-01-01 00:00:01.0001'"), vec![2, 4]);
    assert_eq!(keep("ts = '1970-01-01 00:00:01.0001'"), Vec::<usize>::new());
    assert_eq!(keep("ts >= DATE '1970-01-02'"), vec![4]);
    assert_eq!(
        keep("ltz = TIMESTAMP_LTZ '1970-01-01T00:00:00.001Z'"),
        vec![2]
    );
    assert_eq!(keep("ltz < '1970-01-01T08:00:00.000001+08:00'"), vec![0, 4]);
    assert_eq!(
        eval(&Expr::gt_eq("ltz", Literal::timestamp_ltz_millis(0))),
        vec![T, T, T, N, F]
    );
    assert_eq!(keep("tm = TIME '01:00:00'"), vec![1]);
    assert_eq!(keep("tm > '12:00:00.5'"), vec![4]);
    assert_eq!(keep("tm >= '12:00:00.5'"), vec![2, 4]);
}

#[test]
fn binary() {
    assert_eq!(keep("bin = X'0102'"), vec![0]);
    assert_eq!(keep("bin < X'02'"), vec![0, 1, 4]);
    assert_eq!(keep("fb = X'6162'"), vec![0, 3]);
    assert_eq!(keep("fb IN (X'7A7A', X'00')"), vec![4]);
}

#[test]
fn in_not_in_between_null() {
    assert_eq!(eval(&Expr::is_in("i", [1, 4])), vec![T, F, N, T, F]);
    assert_eq!(eval(&Expr::not_in("i", [1, 4])), vec![F, T, N, F, T]);
    // A NULL in the list: IN is null where not matched; NOT IN is never true.
    let with_null = vec![Literal::Int(1), Literal::Null];
    let e = Expr::In {
        column: "i".into(),
        values: with_null.clone(),
    };
    assert_eq!(eval(&e), vec![T, N, N, N, N]);
    let e = Expr::NotIn {
        column: "i".into(),
        values: with_null,
    };
    assert_eq!(eval(&e), vec![F, N, N, N, N]);
    // An empty list: no value is in it; a null row stays unknown either way.
    assert_eq!(
        eval(&Expr::is_in("i", Vec::<i64>::new())),
        vec![F, F, N, F, F]
    );
    assert_eq!(
        eval(&Expr::not_in("i", Vec::<i64>::new())),
        vec![T, T, N, T, T]
    );
    assert_eq!(eval(&Expr::is_null("i")), vec![F, F, T, F, F]);
    assert_eq!(eval(&Expr::is_not_null("s")), vec![T, T, T, F, T]);
    assert_eq!(eval(&Expr::between("i", 1, 2)), vec![T, T, N, F, F]);
    assert_eq!(eval(&Expr::between("i", 1, 2).not()), vec![F, F, N, T, T]);
    assert_eq!(keep("i NOT BETWEEN 1 AND 2"), vec![3, 4]);
    assert_eq!(keep("s IN ('apple', 'cherry')"), vec![0, 2]);
    assert_eq!(keep("s NOT IN ('apple', 'cherry')"), vec![1, 4]);
    assert_eq!(keep("t IN (1, 1000)"), vec![0]);
}

#[test]
fn like_patterns() {
    assert_eq!(like_shape("abc%"), LikeShape::Prefix("abc".into()));
    assert_eq!(like_shape("%abc"), LikeShape::Suffix("abc".into()));
    assert_eq!(like_shape("%abc%"), LikeShape::Contains("abc".into()));
    assert_eq!(like_shape("abc"), LikeShape::Exact("abc".into()));
    assert_eq!(like_shape("a\\%c%"), LikeShape::Prefix("a%c".into()));
    assert_eq!(like_shape("a_c"), LikeShape::General);
    assert_eq!(like_shape("a%c"), LikeShape::General);
    assert_eq!(like_shape("%"), LikeShape::Prefix(String::new()));
    assert_eq!(keep("s LIKE 'a%'"), vec![0, 4]);
    assert_eq!(keep("s LIKE '%a'"), vec![1]);
    assert_eq!(keep("s LIKE '%an%'"), vec![1]);
    assert_eq!(keep("s LIKE 'b_n%a'"), vec![1]);
    assert_eq!(keep("s LIKE '_pple'"), vec![0]);
    assert_eq!(keep("s LIKE 'apple'"), vec![0]);
    assert_eq!(keep("s LIKE '%'"), vec![0, 1, 2, 4]);
    assert_eq!(keep("s LIKE 'a\\_b\\%c'"), vec![4]);
    assert_eq!(keep("s LIKE '%\\%%'"), vec![4]);
    assert_eq!(keep("s NOT LIKE 'a%'"), vec![1, 2]);
    assert_eq!(eval(&Expr::starts_with("s", "a_")), vec![F, F, F, N, T]);
    assert_eq!(eval(&Expr::ends_with("s", "rry")), vec![F, F, T, N, F]);
    assert_eq!(eval(&Expr::contains("s", "%")), vec![F, F, F, N, T]);
}

#[test]
fn connectives_three_valued() {
    // i IS NULL row 2: (i = 1 OR s = 'cherry') is true there despite the null.
    assert_eq!(keep("i = 1 OR s = 'cherry'"), vec![0, 2]);
    assert_eq!(keep("i > 0 AND s LIKE '%a%'"), vec![0, 1]);
    assert_eq!(keep("NOT (i > 0)"), vec![4]);
    assert_eq!(keep("NOT i > 0 OR i IS NULL"), vec![2, 4]);
    assert_eq!(
        keep("i = 1 AND (s IN ('x', 'apple') OR dt IS NULL)"),
        vec![0]
    );
    assert_eq!(eval(&Expr::And(vec![])), vec![T, T, T, T, T]);
    assert_eq!(eval(&Expr::Or(vec![])), vec![F, F, F, F, F]);
}

#[test]
fn errors_name_column_and_literal() {
    let e = Expr::eq("nope", 1).evaluate(&batch()).unwrap_err();
    assert!(e.message().contains("unknown column 'nope'"), "{e}");
    assert!(e.message().contains("i, t, s"), "{e}");
    let e = Expr::eq("i", "abc").evaluate(&batch()).unwrap_err();
    assert!(e.message().contains("column 'i' has type INT"), "{e}");
    assert!(
        e.message().contains("'abc'") && e.message().contains("STRING"),
        "{e}"
    );
    let e = Expr::eq("s", 1).evaluate(&batch()).unwrap_err();
    assert!(e.message().contains("column 's' has type STRING"), "{e}");
    let e = Expr::eq("dt", "not a date").evaluate(&batch()).unwrap_err();
    assert!(
        e.message().contains("'not a date'") && e.message().contains("DATE"),
        "{e}"
    );
    let e = Expr::like("i", "a%").evaluate(&batch()).unwrap_err();
    assert!(e.message().contains("LIKE needs a STRING"), "{e}");
    let e = Expr::eq("b", 1).evaluate(&batch()).unwrap_err();
    assert!(e.message().contains("BOOLEAN"), "{e}");
    assert!(parse_filter("a_b = 1 OR TRUE = TRUE").is_err());
    assert!(Expr::eq("nope", 1).validate(&batch().schema()).is_err());
    assert!(Expr::eq("i", 1).validate(&batch().schema()).is_ok());
}

/// Found by the filter_parse fuzz target: `922e3372036854775807` parsed as an infinite float
/// literal, printed as `inf`, which does not parse.
#[test]
fn float_literal_overflowing_to_infinity_is_an_error() {
    for text in ["a = 1e999", "a IN (1, -922e3372036854775807)"] {
        let e = parse_filter(text).unwrap_err();
        assert!(
            e.message().contains("e3") || e.message().contains("e9"),
            "{e}"
        );
        assert!(e.message().contains("is not a number"), "{e}");
    }
    // The largest finite floats still parse and print back to the same filter.
    let printed = parse_filter("a = -1.7e308").unwrap().to_string();
    assert_eq!(parse_filter(&printed).unwrap().to_string(), printed);
}

#[test]
fn parser_and_display_round_trip() {
    let e = parse_filter("a = 1 AND (b IN ('x','y') OR c IS NULL)").unwrap();
    assert_eq!(
        e,
        Expr::eq("a", 1).and(Expr::is_in("b", ["x", "y"]).or(Expr::is_null("c")))
    );
    for text in [
        "a = 1 AND (b IN ('x', 'y') OR c IS NULL)",
        "a != -3",
        "a >= 1.50",
        "a < 1.5E0",
        "s LIKE 'it''s%'",
        "NOT (a BETWEEN 1 AND 2)",
        "x IS NOT NULL",
        "d = DATE '2024-01-01'",
        "t < TIMESTAMP '2024-01-01 12:00:00.250'",
        "t < TIMESTAMP_LTZ '2024-01-01T04:00:00Z'",
        "tm = TIME '12:00:00'",
        "b = X'CAFE'",
        "`weird col` = TRUE",
        "n NOT IN (1, 2, NULL)",
    ] {
        let e = parse_filter(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let again = parse_filter(&e.to_string()).unwrap();
        assert_eq!(e, again, "{text} -> {e}");
    }
    assert_eq!(parse_filter("a <> 1").unwrap(), Expr::not_eq("a", 1));
    assert_eq!(parse_filter("a == 1").unwrap(), Expr::eq("a", 1));
    assert_eq!(
        parse_filter("a between 1 and 2 or not b like 'x'").unwrap(),
        Expr::between("a", 1, 2).or(Expr::like("b", "x").not())
    );
    assert_eq!(
        parse_filter("a >= 1.50").unwrap(),
        Expr::gt_eq("a", Literal::decimal(150, 2))
    );
    assert_eq!(
        parse_filter("\"my col\" = 'v'").unwrap(),
        Expr::eq("my col", "v")
    );
}

#[test]
fn parse_errors() {
    for (text, needle) in [
        ("", "empty"),
        ("a =", "expected a literal"),
        ("a = 1 AND", "expected a column name"),
        ("(a = 1", "expected ')'"),
        ("a IN (1, 2", "IN list"),
        ("a ~ 1", "unexpected '~'"),
        ("a = 'unterminated", "unterminated"),
        ("a = 1 b = 2", "unexpected text"),
        ("a LIKE 5", "quoted pattern"),
        ("a = DATE 'x'", "not a valid DATE"),
        ("a foo", "expected a comparison"),
    ] {
        let e = parse_filter(text).unwrap_err();
        assert!(e.message().contains(needle), "{text}: {e}");
        assert!(e.message().contains(&format!("'{text}'")), "{text}: {e}");
    }
}

#[test]
fn referenced_columns() {
    let e = parse_filter("b = 1 AND (a IN (1) OR NOT c IS NULL) AND b > 0").unwrap();
    assert_eq!(e.columns(), vec!["a", "b", "c"]);
}

#[test]
fn filter_batch_keeps_true_rows() {
    let out = filter_batch(&batch(), &parse_filter("i >= 2").unwrap()).unwrap();
    assert_eq!(out.num_rows(), 2);
    let ids = out.column(0).as_primitive::<Int32Type>();
    assert_eq!(ids.values(), &[2, 4]);
    let all = filter_batch(&batch(), &Expr::And(vec![])).unwrap();
    assert_eq!(all.num_rows(), 5);
}

#[test]
fn partition_pruning() {
    let keys = vec!["dt".to_string(), "region".to_string()];
    let parts = [
        vec!["2024-01-01".to_string(), "eu".to_string()],
        vec!["2024-01-01".to_string(), "us".to_string()],
        vec!["2024-01-02".to_string(), "eu".to_string()],
        vec!["2024-01-03".to_string(), "ap".to_string()],
    ];
    let run = |f: &str| -> Vec<usize> {
        let e = parse_filter(f).unwrap();
        prune_partitions(&keys, 0..parts.len(), &e, |i| parts[*i].clone())
    };
    assert_eq!(run("dt = '2024-01-01'"), vec![0, 1]);
    assert_eq!(run("dt = DATE '2024-01-02'"), vec![2]);
    assert_eq!(run("region IN ('eu', 'ap')"), vec![0, 2, 3]);
    assert_eq!(run("dt = '2024-01-01' AND region = 'us'"), vec![1]);
    assert_eq!(run("dt = '2024-01-03' OR region = 'us'"), vec![1, 3]);
    // A non-partition column keeps everything it touches.
    assert_eq!(run("x = 1"), vec![0, 1, 2, 3]);
    assert_eq!(run("x = 1 AND region = 'eu'"), vec![0, 2]);
    assert_eq!(run("x = 1 OR region = 'eu'"), vec![0, 1, 2, 3]);
    assert_eq!(run("NOT region = 'eu'"), vec![1, 3]);
    assert_eq!(run("region != 'eu'"), vec![1, 3]);
    assert_eq!(run("region NOT IN ('eu', 'us')"), vec![3]);
    // Comparisons other than = / IN do not prune.
    assert_eq!(run("dt > '2024-01-02'"), vec![0, 1, 2, 3]);
    assert_eq!(run("region = 'none'"), Vec::<usize>::new());
    let keys = vec!["year".to_string()];
    let parts = [vec!["2024".to_string()], vec!["2025".to_string()]];
    let e = parse_filter("year IN (2025, 2026)").unwrap();
    assert_eq!(
        prune_partitions(&keys, 0..2, &e, |i| parts[*i].clone()),
        vec![1]
    );
}

#[test]
fn deeply_nested_filter_text_is_an_error_not_a_stack_overflow() {
    use crate::ErrorKind;
    // Far past any stack: each level would be several recursive calls.
    let deep = 200_000;
    let parens = format!("{}a = 1{}", "(".repeat(deep), ")".repeat(deep));
    let nots = format!("{}a = 1", "NOT ".repeat(deep));
    let mixed = format!("{}a = 1{}", "NOT (".repeat(deep), ")".repeat(deep));
    for text in [&parens, &nots, &mixed] {
        let e = parse_filter(text).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().contains("levels deep"), "{}", e.message());
    }
    // Up to the limit the text parses and means what it says.
    let at_limit = format!(
        "{}a = 1{}",
        "(".repeat(MAX_FILTER_DEPTH),
        ")".repeat(MAX_FILTER_DEPTH)
    );
    assert_eq!(parse_filter(&at_limit).unwrap(), Expr::eq("a", 1));
    let nots = format!("{}a = 1", "NOT ".repeat(MAX_FILTER_DEPTH));
    let mut expected = Expr::eq("a", 1);
    for _ in 0..MAX_FILTER_DEPTH {
        expected = expected.not();
    }
    assert_eq!(parse_filter(&nots).unwrap(), expected);
    // One level more is refused.
    let over = format!(
        "{}a = 1{}",
        "(".repeat(MAX_FILTER_DEPTH + 1),
        ")".repeat(MAX_FILTER_DEPTH + 1)
    );
    assert!(parse_filter(&over).is_err());
}

#[test]
fn assignments_use_the_literal_grammar() {
    let a =
        parse_assignments("total_amount = 0, `note` = 'it''s', day = DATE '2024-01-02'").unwrap();
    assert_eq!(
        a,
        vec![
            ("total_amount".to_string(), Literal::Int(0)),
            ("note".to_string(), Literal::String("it's".into())),
            (
                "day".to_string(),
                Literal::date(NaiveDate::from_ymd_opt(2024, 1, 2).unwrap())
            ),
        ]
    );
    assert_eq!(parse_assignments("x = NULL").unwrap()[0].1, Literal::Null);
    for bad in ["", "x", "x 1", "x = 1 y = 2", "x = 1,", "= 1", "x = nope"] {
        let e = parse_assignments(bad).unwrap_err();
        assert!(e.message().contains("cannot parse"), "{bad}: {e}");
    }
}

#[test]
fn literal_arrays_are_exact_values_of_the_column_type() {
    let value = |t: ArrowType, l: Literal| literal_array("c", &t, &l);
    let a = value(ArrowType::Int8, Literal::Int(-5)).unwrap();
    assert_eq!(
        a.as_primitive::<arrow_array::types::Int8Type>().value(0),
        -5
    );
    let a = value(ArrowType::Decimal128(10, 2), Literal::decimal(95, 1)).unwrap();
    assert_eq!(
        a.as_primitive::<arrow_array::types::Decimal128Type>()
            .value(0),
        950
    );
    let a = value(ArrowType::Date32, Literal::String("2024-01-02".into())).unwrap();
    assert_eq!(
        a.as_primitive::<arrow_array::types::Date32Type>().value(0),
        days_since_epoch(NaiveDate::from_ymd_opt(2024, 1, 2).unwrap())
    );
    let a = value(ArrowType::Float32, Literal::Int(3)).unwrap();
    assert_eq!(
        a.as_primitive::<arrow_array::types::Float32Type>().value(0),
        3.0
    );
    let a = value(ArrowType::Utf8, Literal::Null).unwrap();
    assert!(a.is_null(0));
    let a = value(ArrowType::FixedSizeBinary(2), Literal::Binary(vec![1, 2])).unwrap();
    assert_eq!(a.data_type(), &ArrowType::FixedSizeBinary(2));
    for (t, l, needle) in [
        (ArrowType::Int32, Literal::Float(2.5), "exactly"),
        (ArrowType::Int8, Literal::Int(1000), "exactly"),
        (
            ArrowType::Decimal128(10, 2),
            Literal::decimal(1255, 3),
            "exactly",
        ),
        (ArrowType::Int32, Literal::String("x".into()), "'x'"),
        (
            ArrowType::FixedSizeBinary(2),
            Literal::Binary(vec![1]),
            "exactly",
        ),
        (ArrowType::Boolean, Literal::Int(1), "BOOLEAN"),
    ] {
        let e = value(t.clone(), l).unwrap_err();
        assert!(e.message().contains("'c'"), "{t}: {e}");
        assert!(e.message().contains(needle), "{t}: {e}");
    }
}

/// Filter literals and time-range bounds read the same date-time texts, to the same instant.
#[test]
fn filters_and_time_ranges_accept_the_same_timestamp_texts() {
    use crate::scan::time::{parse_timestamp, TimeZoneSpec};
    let ts_type = ArrowType::Timestamp(TimeUnit::Millisecond, None);
    for text in [
        "2023-12-09",
        "2023-12-09 23:09",
        "2023-12-09T23:09",
        "2023-12-09 23:09:12",
        "2023-12-09T23:09:12",
        "2023-12-09 23:09:12.345",
        "2023-12-09T23:09:12.345",
        "2023-12-09T23:09:12Z",
        "2023-12-09 23:09:12Z",
        "2023-12-09 23:09:12 UTC",
        "2023-12-09T23:09:12+08:00",
        "2023-12-09 23:09:12+08:00",
        "2023-12-09T23:09:12.5+0800",
    ] {
        let range_ms = parse_timestamp(text, &TimeZoneSpec::Utc)
            .unwrap_or_else(|e| panic!("time range rejects '{text}': {e}"));
        let literal = super::eval::parse_temporal_text(text, &ts_type)
            .unwrap_or_else(|| panic!("filter rejects '{text}'"));
        let filter_ms = match literal {
            Literal::Date(d) => d as i64 * 86_400_000,
            Literal::Timestamp { millis, .. } | Literal::TimestampLtz { millis, .. } => millis,
            other => panic!("'{text}' read as {other:?}"),
        };
        assert_eq!(range_ms, filter_ms, "'{text}'");
        parse_filter(&format!("ts >= TIMESTAMP '{text}'"))
            .unwrap_or_else(|e| panic!("TIMESTAMP literal rejects '{text}': {e}"));
    }
    for bad in [
        "2023-12-09 23",
        "2023/12/09",
        "09.12.2023 23:09",
        "yesterday",
    ] {
        assert!(parse_timestamp(bad, &TimeZoneSpec::Utc).is_err(), "'{bad}'");
        assert!(
            super::eval::parse_temporal_text(bad, &ts_type).is_none(),
            "'{bad}'"
        );
    }
}
