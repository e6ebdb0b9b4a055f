//! Filter expressions evaluated exactly on Arrow record batches.
//!
//! An [`Expr`] is a boolean predicate over the columns of a table: comparisons with literals,
//! `IN` / `NOT IN`, `IS [NOT] NULL`, `BETWEEN`, `LIKE` and the connectives `AND`, `OR`, `NOT`.
//! [`Expr::evaluate`] computes it over a [`RecordBatch`] with the Arrow compute kernels under SQL
//! three-valued logic (a comparison with a null is null, and a row is kept only when the
//! predicate is true); [`filter_batch`] keeps the matching rows.
//!
//! Literals are converted to the column's Arrow type once per evaluation. The conversion is
//! exact: a literal that the column's type cannot represent (`tinyint_col < 1000`,
//! `int_col = 2.5`, `decimal(10,2)_col >= 1.255`, a nanosecond timestamp against a millisecond
//! column) is compared through its floor, so `x < 2.5` means `x <= 2` and `x = 2.5` is never
//! true, instead of being rounded. Strings are accepted as literals for DATE, TIME and TIMESTAMP
//! columns (`dt = '2024-01-01'`); a literal of any other wrong type is an error that names the
//! column, its type and the literal.
//!
//! [`parse_filter`] reads the small SQL-like text form used by the CLI and the bindings, e.g.
//! `a = 1 AND (b IN ('x', 'y') OR c IS NULL)`; `Expr`'s `Display` writes the same form.
//! [`prune_partitions`] decides which partitions can hold matching rows, from the partition
//! values alone.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float32Array,
    Float64Array, Int16Array, Int32Array, Int64Array, Int8Array, LargeBinaryArray,
    LargeStringArray, RecordBatch, Scalar, StringArray, StringViewArray, Time32MillisecondArray,
    Time32SecondArray, Time64MicrosecondArray, Time64NanosecondArray, TimestampMicrosecondArray,
    TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray, UInt16Array,
    UInt32Array, UInt64Array, UInt8Array,
};
use arrow_buffer::{BooleanBuffer, NullBuffer};
use arrow_schema::{DataType as ArrowType, Schema, TimeUnit};
use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Timelike, Utc};

use crate::{Error, Result};

const NANOS_PER_DAY: i128 = 86_400_000_000_000;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompareOp {
    /// `=`
    Eq,
    /// `!=` (also written `<>`)
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
}

impl CompareOp {
    /// The SQL spelling of the operator.
    pub fn as_str(self) -> &'static str {
        match self {
            CompareOp::Eq => "=",
            CompareOp::NotEq => "!=",
            CompareOp::Lt => "<",
            CompareOp::LtEq => "<=",
            CompareOp::Gt => ">",
            CompareOp::GtEq => ">=",
        }
    }

    /// The operator spelled `symbol`: `=` / `==`, `!=` / `<>`, `<`, `<=`, `>`, `>=`.
    pub fn parse(symbol: &str) -> Option<CompareOp> {
        Some(match symbol {
            "=" | "==" => CompareOp::Eq,
            "!=" | "<>" => CompareOp::NotEq,
            "<" => CompareOp::Lt,
            "<=" => CompareOp::LtEq,
            ">" => CompareOp::Gt,
            ">=" => CompareOp::GtEq,
            _ => return None,
        })
    }

    /// The operator with its operands swapped (`a < b` is `b > a`).
    pub fn flip(self) -> CompareOp {
        match self {
            CompareOp::Lt => CompareOp::Gt,
            CompareOp::LtEq => CompareOp::GtEq,
            CompareOp::Gt => CompareOp::Lt,
            CompareOp::GtEq => CompareOp::LtEq,
            other => other,
        }
    }
}

/// The operator of a `(column, op, value)` filter term, the tuple form bindings accept
/// (pyarrow / pandas `filters=`); [`TermOp::parse`] is the one reading of its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TermOp {
    /// A comparison with one value.
    Compare(CompareOp),
    /// `in`: one of a list of values.
    In,
    /// `not in`
    NotIn,
    /// `is null` (no value)
    IsNull,
    /// `is not null` (no value)
    IsNotNull,
    /// `like` a pattern
    Like,
    /// `not like` a pattern
    NotLike,
}

impl TermOp {
    /// The words, as listed in errors.
    pub const WORDS: &'static str =
        "=, ==, !=, <>, <, <=, >, >=, in, not in, is null, is not null, like, not like";

    /// Parses an operator word (case and spacing do not matter); an invalid-argument error
    /// naming the word and the accepted ones otherwise.
    pub fn parse(word: &str) -> Result<TermOp> {
        let norm = word
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_ascii_lowercase();
        if let Some(op) = CompareOp::parse(&norm) {
            return Ok(TermOp::Compare(op));
        }
        Ok(match norm.as_str() {
            "in" => TermOp::In,
            "not in" => TermOp::NotIn,
            "is null" => TermOp::IsNull,
            "is not null" => TermOp::IsNotNull,
            "like" => TermOp::Like,
            "not like" => TermOp::NotLike,
            _ => crate::bail_invalid!("unknown filter operator {word:?}; use {}", Self::WORDS),
        })
    }

    /// Whether the operator takes a value (`is null` / `is not null` do not).
    pub fn takes_value(self) -> bool {
        !matches!(self, TermOp::IsNull | TermOp::IsNotNull)
    }

    /// Whether the value is a list (`in`, `not in`).
    pub fn takes_list(self) -> bool {
        matches!(self, TermOp::In | TermOp::NotIn)
    }

    /// The term `column op values`: one value for a comparison, a list for `in` / `not in`,
    /// none for `is [not] null`, one string for `[not] like`.
    pub fn term(self, column: &str, mut values: Vec<Literal>) -> Result<Expr> {
        let one = |values: &mut Vec<Literal>| match values.len() {
            1 => Ok(values.remove(0)),
            n => Err(Error::invalid(format!(
                "filter term on '{column}' needs exactly one value, got {n}"
            ))),
        };
        Ok(match self {
            TermOp::Compare(op) => Expr::compare(column, op, one(&mut values)?),
            TermOp::In => Expr::is_in(column, values),
            TermOp::NotIn => Expr::not_in(column, values),
            TermOp::IsNull => Expr::is_null(column),
            TermOp::IsNotNull => Expr::is_not_null(column),
            TermOp::Like | TermOp::NotLike => {
                let Literal::String(pattern) = one(&mut values)? else {
                    crate::bail_invalid!("filter term '{column} like ...' needs a str pattern");
                };
                let e = Expr::like(column, pattern);
                if self == TermOp::NotLike {
                    e.not()
                } else {
                    e
                }
            }
        })
    }
}

/// A literal value in a filter. Covers every Fluss type a column can be compared with.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// SQL NULL: every comparison with it is null, so it never matches.
    Null,
    /// BOOLEAN.
    Boolean(bool),
    /// Any integer (TINYINT .. BIGINT).
    Int(i64),
    /// FLOAT / DOUBLE.
    Float(f64),
    /// An exact decimal `unscaled * 10^-scale` (what `1.25` parses to).
    Decimal {
        /// The digits as an integer.
        unscaled: i128,
        /// How many of them are after the point.
        scale: i8,
    },
    /// CHAR / STRING (also parsed for DATE, TIME and TIMESTAMP columns).
    String(String),
    /// BINARY / BYTES.
    Binary(Vec<u8>),
    /// DATE as days since 1970-01-01.
    Date(i32),
    /// TIME as nanoseconds since midnight.
    Time(i64),
    /// TIMESTAMP (without time zone): wall clock as epoch milliseconds plus nanoseconds.
    Timestamp {
        /// Milliseconds since the epoch (as if the wall clock were UTC).
        millis: i64,
        /// Extra nanoseconds, 0..999_999.
        nanos_of_milli: u32,
    },
    /// TIMESTAMP_LTZ: an instant as epoch milliseconds plus nanoseconds.
    TimestampLtz {
        /// Milliseconds since the epoch.
        millis: i64,
        /// Extra nanoseconds, 0..999_999.
        nanos_of_milli: u32,
    },
}

impl Literal {
    /// The Fluss type family name of the literal, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Literal::Null => "NULL",
            Literal::Boolean(_) => "BOOLEAN",
            Literal::Int(_) => "integer",
            Literal::Float(_) => "DOUBLE",
            Literal::Decimal { .. } => "DECIMAL",
            Literal::String(_) => "STRING",
            Literal::Binary(_) => "BYTES",
            Literal::Date(_) => "DATE",
            Literal::Time(_) => "TIME",
            Literal::Timestamp { .. } => "TIMESTAMP",
            Literal::TimestampLtz { .. } => "TIMESTAMP_LTZ",
        }
    }

    /// A decimal literal from its unscaled digits and scale.
    pub fn decimal(unscaled: i128, scale: i8) -> Literal {
        Literal::Decimal { unscaled, scale }
    }

    /// A DATE literal from a calendar date.
    pub fn date(date: NaiveDate) -> Literal {
        Literal::Date(days_since_epoch(date))
    }

    /// A TIMESTAMP (no zone) literal from a wall-clock date-time.
    pub fn timestamp(ts: NaiveDateTime) -> Literal {
        let utc = ts.and_utc();
        Literal::Timestamp {
            millis: utc.timestamp_millis(),
            nanos_of_milli: utc.timestamp_subsec_nanos() % 1_000_000,
        }
    }

    /// A TIMESTAMP_LTZ literal from an instant.
    pub fn timestamp_ltz<Tz: chrono::TimeZone>(ts: DateTime<Tz>) -> Literal {
        Literal::TimestampLtz {
            millis: ts.timestamp_millis(),
            nanos_of_milli: ts.timestamp_subsec_nanos() % 1_000_000,
        }
    }

    /// A TIMESTAMP_LTZ literal from epoch milliseconds.
    pub fn timestamp_ltz_millis(millis: i64) -> Literal {
        Literal::TimestampLtz {
            millis,
            nanos_of_milli: 0,
        }
    }

    /// The literal rendered as a partition value would be (None when it has no plain text form).
    fn partition_text(&self) -> Option<String> {
        match self {
            Literal::Boolean(b) => Some(b.to_string()),
            Literal::Int(i) => Some(i.to_string()),
            Literal::String(s) => Some(s.clone()),
            Literal::Date(d) => date_from_days(*d).map(|d| d.format("%Y-%m-%d").to_string()),
            _ => None,
        }
    }
}

macro_rules! literal_from {
    ($t:ty, $v:ident => $e:expr) => {
        impl From<$t> for Literal {
            fn from($v: $t) -> Literal {
                $e
            }
        }
    };
}
literal_from!(bool, v => Literal::Boolean(v));
literal_from!(i8, v => Literal::Int(v as i64));
literal_from!(i16, v => Literal::Int(v as i64));
literal_from!(i32, v => Literal::Int(v as i64));
literal_from!(i64, v => Literal::Int(v));
literal_from!(u8, v => Literal::Int(v as i64));
literal_from!(u16, v => Literal::Int(v as i64));
literal_from!(u32, v => Literal::Int(v as i64));
literal_from!(f32, v => Literal::Float(v as f64));
literal_from!(f64, v => Literal::Float(v));
literal_from!(&str, v => Literal::String(v.to_string()));
literal_from!(String, v => Literal::String(v));
literal_from!(&[u8], v => Literal::Binary(v.to_vec()));
literal_from!(Vec<u8>, v => Literal::Binary(v));
literal_from!(NaiveDate, v => Literal::date(v));
literal_from!(NaiveDateTime, v => Literal::timestamp(v));
literal_from!(DateTime<Utc>, v => Literal::timestamp_ltz(v));
literal_from!(DateTime<chrono::FixedOffset>, v => Literal::timestamp_ltz(v));

impl<T: Into<Literal>> From<Option<T>> for Literal {
    fn from(v: Option<T>) -> Literal {
        v.map_or(Literal::Null, Into::into)
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Null => f.write_str("NULL"),
            Literal::Boolean(b) => f.write_str(if *b { "TRUE" } else { "FALSE" }),
            Literal::Int(i) => write!(f, "{i}"),
            Literal::Float(x) => {
                if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e15 {
                    write!(f, "{x:.1}E0")
                } else {
                    write!(f, "{x:E}")
                }
            }
            Literal::Decimal { unscaled, scale } => f.write_str(&decimal_text(*unscaled, *scale)),
            Literal::String(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Literal::Binary(b) => {
                f.write_str("X'")?;
                for byte in b {
                    write!(f, "{byte:02X}")?;
                }
                f.write_str("'")
            }
            Literal::Date(d) => match date_from_days(*d) {
                Some(date) => write!(f, "DATE '{}'", date.format("%Y-%m-%d")),
                None => write!(f, "DATE(days={d})"),
            },
            Literal::Time(n) => {
                let secs = n.div_euclid(1_000_000_000);
                let nanos = n.rem_euclid(1_000_000_000);
                match NaiveTime::from_num_seconds_from_midnight_opt(secs as u32, nanos as u32) {
                    Some(t) if (0..86_400).contains(&secs) => {
                        write!(f, "TIME '{}'", t.format("%H:%M:%S%.f"))
                    }
                    _ => write!(f, "TIME(nanos={n})"),
                }
            }
            Literal::Timestamp {
                millis,
                nanos_of_milli,
            } => match instant(*millis, *nanos_of_milli) {
                Some(t) => write!(f, "TIMESTAMP '{}'", t.format("%Y-%m-%d %H:%M:%S%.f")),
                None => write!(f, "TIMESTAMP(millis={millis})"),
            },
            Literal::TimestampLtz {
                millis,
                nanos_of_milli,
            } => match instant(*millis, *nanos_of_milli) {
                Some(t) => write!(f, "TIMESTAMP_LTZ '{}'", t.format("%Y-%m-%dT%H:%M:%S%.fZ")),
                None => write!(f, "TIMESTAMP_LTZ(millis={millis})"),
            },
        }
    }
}

/// A filter predicate over named columns.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// `column op value`.
    Compare {
        /// Column name.
        column: String,
        /// Operator.
        op: CompareOp,
        /// Right-hand literal.
        value: Literal,
    },
    /// `column IN (values...)`.
    In {
        /// Column name.
        column: String,
        /// The list (a NULL in it makes non-matching rows null, as in SQL).
        values: Vec<Literal>,
    },
    /// `column NOT IN (values...)`.
    NotIn {
        /// Column name.
        column: String,
        /// The list (a NULL in it makes the predicate never true, as in SQL).
        values: Vec<Literal>,
    },
    /// `column IS NULL`.
    IsNull(String),
    /// `column IS NOT NULL`.
    IsNotNull(String),
    /// `column BETWEEN low AND high` (both ends included).
    Between {
        /// Column name.
        column: String,
        /// Lower bound, included.
        low: Literal,
        /// Upper bound, included.
        high: Literal,
    },
    /// `column LIKE pattern`: `%` any run, `_` one character, `\` escapes either.
    Like {
        /// Column name (a string column).
        column: String,
        /// The pattern.
        pattern: String,
    },
    /// Conjunction (true when every part is).
    And(Vec<Expr>),
    /// Disjunction (true when any part is).
    Or(Vec<Expr>),
    /// Negation (NOT NULL is NULL).
    Not(Box<Expr>),
}

impl Expr {
    /// `column op value`.
    pub fn compare(column: impl Into<String>, op: CompareOp, value: impl Into<Literal>) -> Expr {
        Expr::Compare {
            column: column.into(),
            op,
            value: value.into(),
        }
    }
    /// `column = value`.
    pub fn eq(column: impl Into<String>, value: impl Into<Literal>) -> Expr {
        Expr::compare(column, CompareOp::Eq, value)
    }
    /// `column != value`.
    pub fn not_eq(column: impl Into<String>, value: impl Into<Literal>) -> Expr {
        Expr::compare(column, CompareOp::NotEq, value)
    }
    /// `column < value`.
    pub fn lt(column: impl Into<String>, value: impl Into<Literal>) -> Expr {
        Expr::compare(column, CompareOp::Lt, value)
    }
    /// `column <= value`.
    pub fn lt_eq(column: impl Into<String>, value: impl Into<Literal>) -> Expr {
        Expr::compare(column, CompareOp::LtEq, value)
    }
    /// `column > value`.
    pub fn gt(column: impl Into<String>, value: impl Into<Literal>) -> Expr {
        Expr::compare(column, CompareOp::Gt, value)
    }
    /// `column >= value`.
    pub fn gt_eq(column: impl Into<String>, value: impl Into<Literal>) -> Expr {
        Expr::compare(column, CompareOp::GtEq, value)
    }
    /// `column IN (values)`.
    pub fn is_in<L: Into<Literal>>(
        column: impl Into<String>,
        values: impl IntoIterator<Item = L>,
    ) -> Expr {
        Expr::In {
            column: column.into(),
            values: values.into_iter().map(Into::into).collect(),
        }
    }
    /// `column NOT IN (values)`.
    pub fn not_in<L: Into<Literal>>(
        column: impl Into<String>,
        values: impl IntoIterator<Item = L>,
    ) -> Expr {
        Expr::NotIn {
            column: column.into(),
            values: values.into_iter().map(Into::into).collect(),
        }
    }
    /// `column IS NULL`.
    pub fn is_null(column: impl Into<String>) -> Expr {
        Expr::IsNull(column.into())
    }
    /// `column IS NOT NULL`.
    pub fn is_not_null(column: impl Into<String>) -> Expr {
        Expr::IsNotNull(column.into())
    }
    /// `column BETWEEN low AND high`.
    pub fn between(
        column: impl Into<String>,
        low: impl Into<Literal>,
        high: impl Into<Literal>,
    ) -> Expr {
        Expr::Between {
            column: column.into(),
            low: low.into(),
            high: high.into(),
        }
    }
    /// `column LIKE pattern`.
    pub fn like(column: impl Into<String>, pattern: impl Into<String>) -> Expr {
        Expr::Like {
            column: column.into(),
            pattern: pattern.into(),
        }
    }
    /// Strings starting with `prefix` (taken literally, wildcards escaped).
    pub fn starts_with(column: impl Into<String>, prefix: &str) -> Expr {
        Expr::like(column, format!("{}%", escape_like(prefix)))
    }
    /// Strings ending with `suffix` (taken literally).
    pub fn ends_with(column: impl Into<String>, suffix: &str) -> Expr {
        Expr::like(column, format!("%{}", escape_like(suffix)))
    }
    /// Strings containing `needle` (taken literally).
    pub fn contains(column: impl Into<String>, needle: &str) -> Expr {
        Expr::like(column, format!("%{}%", escape_like(needle)))
    }
    /// `self AND other` (flattening nested ANDs).
    pub fn and(self, other: Expr) -> Expr {
        let mut parts = match self {
            Expr::And(p) => p,
            e => vec![e],
        };
        match other {
            Expr::And(p) => parts.extend(p),
            e => parts.push(e),
        }
        Expr::And(parts)
    }
    /// `self OR other` (flattening nested ORs).
    pub fn or(self, other: Expr) -> Expr {
        let mut parts = match self {
            Expr::Or(p) => p,
            e => vec![e],
        };
        match other {
            Expr::Or(p) => parts.extend(p),
            e => parts.push(e),
        }
        Expr::Or(parts)
    }
    /// `NOT self`.
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Expr {
        Expr::Not(Box::new(self))
    }

    /// The columns the expression reads, sorted and without duplicates.
    pub fn columns(&self) -> Vec<String> {
        let mut set = BTreeSet::new();
        self.collect_columns(&mut set);
        set.into_iter().collect()
    }

    fn collect_columns(&self, out: &mut BTreeSet<String>) {
        match self {
            Expr::Compare { column, .. }
            | Expr::In { column, .. }
            | Expr::NotIn { column, .. }
            | Expr::IsNull(column)
            | Expr::IsNotNull(column)
            | Expr::Between { column, .. }
            | Expr::Like { column, .. } => {
                out.insert(column.clone());
            }
            Expr::And(parts) | Expr::Or(parts) => {
                for p in parts {
                    p.collect_columns(out);
                }
            }
            Expr::Not(e) => e.collect_columns(out),
        }
    }

    /// Checks, without data, that every column exists in `schema` and every literal fits its
    /// column's type (the same errors [`Expr::evaluate`] would give).
    pub fn validate(&self, schema: &Schema) -> Result<()> {
        let empty = RecordBatch::new_empty(Arc::new(schema.clone()));
        self.evaluate(&empty).map(|_| ())
    }

    /// Evaluates the predicate over `batch` (null where SQL's answer is unknown).
    pub fn evaluate(&self, batch: &RecordBatch) -> Result<BooleanArray> {
        self.eval(batch)
            .map_err(|e| e.context(format!("filter `{self}`")))
    }

    fn eval(&self, batch: &RecordBatch) -> Result<BooleanArray> {
        match self {
            Expr::Compare { column, op, value } => {
                let col = column_of(batch, column)?;
                compare(column, &col, *op, value)
            }
            Expr::In { column, values } => {
                let col = column_of(batch, column)?;
                in_list(column, &col, values)
            }
            Expr::NotIn { column, values } => {
                let col = column_of(batch, column)?;
                Ok(arrow_arith::boolean::not(&in_list(column, &col, values)?)?)
            }
            Expr::IsNull(column) => {
                let col = column_of(batch, column)?;
                Ok(arrow_arith::boolean::is_null(&col)?)
            }
            Expr::IsNotNull(column) => {
                let col = column_of(batch, column)?;
                Ok(arrow_arith::boolean::is_not_null(&col)?)
            }
            Expr::Between { column, low, high } => {
                let col = column_of(batch, column)?;
                let lo = compare(column, &col, CompareOp::GtEq, low)?;
                let hi = compare(column, &col, CompareOp::LtEq, high)?;
                Ok(arrow_arith::boolean::and_kleene(&lo, &hi)?)
            }
            Expr::Like { column, pattern } => {
                let col = column_of(batch, column)?;
                like(column, &col, pattern)
            }
            Expr::And(parts) => {
                let mut acc = all_bool(batch.num_rows(), true);
                for p in parts {
                    acc = arrow_arith::boolean::and_kleene(&acc, &p.eval(batch)?)?;
                }
                Ok(acc)
            }
            Expr::Or(parts) => {
                let mut acc = all_bool(batch.num_rows(), false);
                for p in parts {
                    acc = arrow_arith::boolean::or_kleene(&acc, &p.eval(batch)?)?;
                }
                Ok(acc)
            }
            Expr::Not(e) => Ok(arrow_arith::boolean::not(&e.eval(batch)?)?),
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(f: &mut fmt::Formatter<'_>, values: &[Literal]) -> fmt::Result {
            f.write_str("(")?;
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{v}")?;
            }
            f.write_str(")")
        }
        fn joined(
            f: &mut fmt::Formatter<'_>,
            parts: &[Expr],
            sep: &str,
            empty: &str,
        ) -> fmt::Result {
            if parts.is_empty() {
                return f.write_str(empty);
            }
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    f.write_str(sep)?;
                }
                match p {
                    Expr::And(_) | Expr::Or(_) => write!(f, "({p})")?,
                    _ => write!(f, "{p}")?,
                }
            }
            Ok(())
        }
        match self {
            Expr::Compare { column, op, value } => {
                write!(f, "{} {} {value}", ident(column), op.as_str())
            }
            Expr::In { column, values } => {
                write!(f, "{} IN ", ident(column))?;
                list(f, values)
            }
            Expr::NotIn { column, values } => {
                write!(f, "{} NOT IN ", ident(column))?;
                list(f, values)
            }
            Expr::IsNull(c) => write!(f, "{} IS NULL", ident(c)),
            Expr::IsNotNull(c) => write!(f, "{} IS NOT NULL", ident(c)),
            Expr::Between { column, low, high } => {
                write!(f, "{} BETWEEN {low} AND {high}", ident(column))
            }
            Expr::Like { column, pattern } => write!(
                f,
                "{} LIKE '{}'",
                ident(column),
                pattern.replace('\'', "''")
            ),
            Expr::And(parts) => joined(f, parts, " AND ", "TRUE"),
            Expr::Or(parts) => joined(f, parts, " OR ", "FALSE"),
            Expr::Not(e) => write!(f, "NOT ({e})"),
        }
    }
}

/// A column name as the parser would read it back (quoted when not a plain identifier).
fn ident(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !is_keyword(name);
    if plain {
        name.to_string()
    } else {
        format!("`{}`", name.replace('`', "``"))
    }
}

fn is_keyword(word: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "AND",
        "OR",
        "NOT",
        "IN",
        "IS",
        "NULL",
        "BETWEEN",
        "LIKE",
        "TRUE",
        "FALSE",
        "DATE",
        "TIME",
        "TIMESTAMP",
        "TIMESTAMP_LTZ",
    ];
    KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(word))
}

/// Escapes `%`, `_` and `\` so that `text` matches itself in a LIKE pattern.
pub fn escape_like(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Keeps the rows of `batch` for which `expr` is true (null counts as false).
pub fn filter_batch(batch: &RecordBatch, expr: &Expr) -> Result<RecordBatch> {
    let mask = expr.evaluate(batch)?;
    if mask.null_count() == 0 && mask.true_count() == batch.num_rows() {
        return Ok(batch.clone());
    }
    Ok(arrow_select::filter::filter_record_batch(batch, &mask)?)
}

fn all_bool(len: usize, value: bool) -> BooleanArray {
    let buf = if value {
        BooleanBuffer::new_set(len)
    } else {
        BooleanBuffer::new_unset(len)
    };
    BooleanArray::new(buf, None)
}

/// `value` everywhere except where `col` is null.
fn constant_with_nulls(col: &dyn Array, value: bool) -> BooleanArray {
    let buf = if value {
        BooleanBuffer::new_set(col.len())
    } else {
        BooleanBuffer::new_unset(col.len())
    };
    BooleanArray::new(buf, col.logical_nulls())
}

fn all_null(len: usize) -> BooleanArray {
    BooleanArray::new(
        BooleanBuffer::new_unset(len),
        Some(NullBuffer::new_null(len)),
    )
}

fn column_of(batch: &RecordBatch, name: &str) -> Result<ArrayRef> {
    let schema = batch.schema();
    match schema.index_of(name) {
        Ok(i) => Ok(batch.column(i).clone()),
        Err(_) => {
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            Err(Error::invalid(format!(
                "unknown column '{name}'; the columns are: {}",
                names.join(", ")
            )))
        }
    }
}

fn type_error(column: &str, col_type: &ArrowType, value: &Literal) -> Error {
    Error::invalid(format!(
        "column '{column}' has type {} but the literal {value} is a {} value",
        arrow_type_name(col_type),
        value.type_name()
    ))
}

/// A Fluss-flavoured name of an Arrow type, for messages.
fn arrow_type_name(t: &ArrowType) -> String {
    match t {
        ArrowType::Boolean => "BOOLEAN".into(),
        ArrowType::Int8 => "TINYINT".into(),
        ArrowType::Int16 => "SMALLINT".into(),
        ArrowType::Int32 => "INT".into(),
        ArrowType::Int64 => "BIGINT".into(),
        ArrowType::Float32 => "FLOAT".into(),
        ArrowType::Float64 => "DOUBLE".into(),
        ArrowType::Decimal128(p, s) => format!("DECIMAL({p}, {s})"),
        ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View => "STRING".into(),
        ArrowType::Binary | ArrowType::LargeBinary | ArrowType::BinaryView => "BYTES".into(),
        ArrowType::FixedSizeBinary(n) => format!("BINARY({n})"),
        ArrowType::Date32 => "DATE".into(),
        ArrowType::Time32(_) | ArrowType::Time64(_) => "TIME".into(),
        ArrowType::Timestamp(_, None) => "TIMESTAMP".into(),
        ArrowType::Timestamp(_, Some(_)) => "TIMESTAMP_LTZ".into(),
        other => format!("{other}"),
    }
}

/// How a literal lands in an integer-valued column domain.
enum Placed {
    /// Exactly this value.
    Exact(i128),
    /// Strictly between this value and the next one.
    Between(i128),
    /// Greater than every value of the domain.
    Above,
    /// Less than every value of the domain.
    Below,
}

fn place(floor: i128, exact: bool, min: i128, max: i128) -> Placed {
    if floor > max || (floor == max && !exact) {
        Placed::Above
    } else if floor < min {
        Placed::Below
    } else if exact {
        Placed::Exact(floor)
    } else {
        Placed::Between(floor)
    }
}

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

/// `unscaled * 10^-lit_scale` expressed with `target_scale`: (floor, exact), or None on overflow
/// with the sign of the value.
fn rescale(
    unscaled: i128,
    lit_scale: i8,
    target_scale: i8,
) -> std::result::Result<(i128, bool), bool> {
    let diff = target_scale as i32 - lit_scale as i32;
    if diff >= 0 {
        let m = pow10(diff as u32).ok_or(unscaled > 0)?;
        if unscaled == 0 {
            return Ok((0, true));
        }
        unscaled
            .checked_mul(m)
            .map(|v| (v, true))
            .ok_or(unscaled > 0)
    } else {
        match pow10((-diff) as u32) {
            Some(d) => Ok((unscaled.div_euclid(d), unscaled.rem_euclid(d) == 0)),
            // Dividing by more than 10^38 leaves 0 or -1.
            None => Ok(if unscaled >= 0 {
                (0, unscaled == 0)
            } else {
                (-1, false)
            }),
        }
    }
}

/// The literal as a number of `unit_nanos`-sized steps since the epoch (for DATE, TIME and
/// TIMESTAMP columns): (floor, exact).
fn temporal_steps(
    column: &str,
    col_type: &ArrowType,
    value: &Literal,
    unit_nanos: i128,
) -> Result<(i128, bool)> {
    let total: i128 = match (value, col_type) {
        (Literal::Date(d), ArrowType::Date32 | ArrowType::Timestamp(..)) => {
            *d as i128 * NANOS_PER_DAY
        }
        (
            Literal::Timestamp {
                millis,
                nanos_of_milli,
            }
            | Literal::TimestampLtz {
                millis,
                nanos_of_milli,
            },
            ArrowType::Date32 | ArrowType::Timestamp(..),
        ) => *millis as i128 * 1_000_000 + *nanos_of_milli as i128,
        (Literal::Time(n), ArrowType::Time32(_) | ArrowType::Time64(_)) => *n as i128,
        (Literal::String(s), _) => {
            let parsed = parse_temporal_text(s, col_type)
                .ok_or_else(|| Error::invalid(format!(
                    "column '{column}' has type {} but the string literal '{s}' is not a valid {} (use {})",
                    arrow_type_name(col_type),
                    arrow_type_name(col_type),
                    match col_type {
                        ArrowType::Date32 => "'yyyy-MM-dd'",
                        ArrowType::Time32(_) | ArrowType::Time64(_) => "'HH:mm:ss[.fff]'",
                        _ => "'yyyy-MM-dd HH:mm:ss[.fff]' or an ISO-8601 instant",
                    }
                )))?;
            return temporal_steps(column, col_type, &parsed, unit_nanos);
        }
        _ => return Err(type_error(column, col_type, value)),
    };
    Ok((
        total.div_euclid(unit_nanos),
        total.rem_euclid(unit_nanos) == 0,
    ))
}

/// Reads a string literal as a DATE, TIME or TIMESTAMP value for a column of `col_type`.
fn parse_temporal_text(s: &str, col_type: &ArrowType) -> Option<Literal> {
    let s = s.trim();
    match col_type {
        ArrowType::Time32(_) | ArrowType::Time64(_) => {
            let t = NaiveTime::parse_from_str(s, "%H:%M:%S%.f")
                .or_else(|_| NaiveTime::parse_from_str(s, "%H:%M"))
                .ok()?;
            Some(Literal::Time(
                t.num_seconds_from_midnight() as i64 * 1_000_000_000 + t.nanosecond() as i64,
            ))
        }
        _ => {
            if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
                return Some(Literal::date(d));
            }
            if let Ok(t) = DateTime::parse_from_rfc3339(s) {
                return Some(Literal::timestamp_ltz(t));
            }
            for fmt in [
                "%Y-%m-%d %H:%M:%S%.f",
                "%Y-%m-%dT%H:%M:%S%.f",
                "%Y-%m-%d %H:%M",
            ] {
                if let Ok(t) = NaiveDateTime::parse_from_str(s, fmt) {
                    return Some(Literal::timestamp(t));
                }
            }
            None
        }
    }
}

/// Integer-domain placement of an exact numeric literal into an integer or decimal column of
/// scale `scale` with value range [min, max].
fn numeric_steps(
    column: &str,
    col_type: &ArrowType,
    value: &Literal,
    scale: i8,
    min: i128,
    max: i128,
) -> Result<Placed> {
    let (floor, exact) = match value {
        Literal::Int(i) => match rescale(*i as i128, 0, scale) {
            Ok(v) => v,
            Err(positive) => {
                return Ok(if positive {
                    Placed::Above
                } else {
                    Placed::Below
                })
            }
        },
        Literal::Decimal { unscaled, scale: s } => match rescale(*unscaled, *s, scale) {
            Ok(v) => v,
            Err(positive) => {
                return Ok(if positive {
                    Placed::Above
                } else {
                    Placed::Below
                })
            }
        },
        Literal::Float(x) => {
            if x.is_nan() {
                return Err(Error::invalid(format!(
                    "column '{column}' of type {} cannot be compared with NaN",
                    arrow_type_name(col_type)
                )));
            }
            let scaled = x * 10f64.powi(scale as i32);
            if scaled >= 1e38 {
                return Ok(Placed::Above);
            }
            if scaled <= -1e38 {
                return Ok(Placed::Below);
            }
            let fl = scaled.floor();
            (fl as i128, fl == scaled)
        }
        _ => return Err(type_error(column, col_type, value)),
    };
    Ok(place(floor, exact, min, max))
}

/// Builds a one-element array of `col_type` holding `v` (an integer-domain value).
fn int_scalar(col_type: &ArrowType, v: i128) -> Result<ArrayRef> {
    let out: ArrayRef = match col_type {
        ArrowType::Int8 => Arc::new(Int8Array::from(vec![v as i8])),
        ArrowType::Int16 => Arc::new(Int16Array::from(vec![v as i16])),
        ArrowType::Int32 => Arc::new(Int32Array::from(vec![v as i32])),
        ArrowType::Int64 => Arc::new(Int64Array::from(vec![v as i64])),
        ArrowType::UInt8 => Arc::new(UInt8Array::from(vec![v as u8])),
        ArrowType::UInt16 => Arc::new(UInt16Array::from(vec![v as u16])),
        ArrowType::UInt32 => Arc::new(UInt32Array::from(vec![v as u32])),
        ArrowType::UInt64 => Arc::new(UInt64Array::from(vec![v as u64])),
        ArrowType::Decimal128(p, s) => {
            Arc::new(Decimal128Array::from(vec![v]).with_precision_and_scale(*p, *s)?)
        }
        ArrowType::Date32 => Arc::new(Date32Array::from(vec![v as i32])),
        ArrowType::Time32(TimeUnit::Second) => Arc::new(Time32SecondArray::from(vec![v as i32])),
        ArrowType::Time32(_) => Arc::new(Time32MillisecondArray::from(vec![v as i32])),
        ArrowType::Time64(TimeUnit::Microsecond) => {
            Arc::new(Time64MicrosecondArray::from(vec![v as i64]))
        }
        ArrowType::Time64(_) => Arc::new(Time64NanosecondArray::from(vec![v as i64])),
        ArrowType::Timestamp(unit, tz) => match unit {
            TimeUnit::Second => {
                Arc::new(TimestampSecondArray::from(vec![v as i64]).with_timezone_opt(tz.clone()))
            }
            TimeUnit::Millisecond => Arc::new(
                TimestampMillisecondArray::from(vec![v as i64]).with_timezone_opt(tz.clone()),
            ),
            TimeUnit::Microsecond => Arc::new(
                TimestampMicrosecondArray::from(vec![v as i64]).with_timezone_opt(tz.clone()),
            ),
            TimeUnit::Nanosecond => Arc::new(
                TimestampNanosecondArray::from(vec![v as i64]).with_timezone_opt(tz.clone()),
            ),
        },
        other => {
            return Err(Error::internal(format!(
                "no integer scalar for Arrow type {other}"
            )))
        }
    };
    Ok(out)
}

fn unit_nanos(unit: &TimeUnit) -> i128 {
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

/// The literal placed in the domain of an integer-valued column type, or None when the column is
/// not integer-valued.
fn place_literal(column: &str, col_type: &ArrowType, value: &Literal) -> Result<Option<Placed>> {
    let int_range = |bits: u32, signed: bool| -> (i128, i128) {
        if signed {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        }
    };
    let placed = match col_type {
        ArrowType::Int8 | ArrowType::Int16 | ArrowType::Int32 | ArrowType::Int64 => {
            let bits = col_type.primitive_width().unwrap_or(8) as u32 * 8;
            let (min, max) = int_range(bits, true);
            numeric_steps(column, col_type, value, 0, min, max)?
        }
        ArrowType::UInt8 | ArrowType::UInt16 | ArrowType::UInt32 | ArrowType::UInt64 => {
            let bits = col_type.primitive_width().unwrap_or(8) as u32 * 8;
            let (min, max) = int_range(bits, false);
            numeric_steps(column, col_type, value, 0, min, max)?
        }
        ArrowType::Decimal128(p, s) => {
            let max = pow10(*p as u32).unwrap_or(i128::MAX) - 1;
            numeric_steps(column, col_type, value, *s, -max, max)?
        }
        ArrowType::Date32 => {
            let (floor, exact) = temporal_steps(column, col_type, value, NANOS_PER_DAY)?;
            place(floor, exact, i32::MIN as i128, i32::MAX as i128)
        }
        ArrowType::Time32(unit) => {
            let (floor, exact) = temporal_steps(column, col_type, value, unit_nanos(unit))?;
            place(floor, exact, i32::MIN as i128, i32::MAX as i128)
        }
        ArrowType::Time64(unit) | ArrowType::Timestamp(unit, _) => {
            let (floor, exact) = temporal_steps(column, col_type, value, unit_nanos(unit))?;
            place(floor, exact, i64::MIN as i128, i64::MAX as i128)
        }
        _ => return Ok(None),
    };
    Ok(Some(placed))
}

/// What a column is compared against after converting the literal.
enum Rhs {
    /// A scalar of the column's type (the column may have been cast to `col`).
    Scalar(ArrayRef, ArrayRef),
    /// The literal lies strictly between the scalar and the next value.
    Between(ArrayRef, ArrayRef),
    /// Above every value.
    Above,
    /// Below every value.
    Below,
    /// NULL.
    Null,
}

fn convert(column: &str, col: &ArrayRef, value: &Literal) -> Result<Rhs> {
    if matches!(value, Literal::Null) {
        return Ok(Rhs::Null);
    }
    let col_type = col.data_type();
    if let Some(placed) = place_literal(column, col_type, value)? {
        return Ok(match placed {
            Placed::Exact(v) => Rhs::Scalar(col.clone(), int_scalar(col_type, v)?),
            Placed::Between(v) => Rhs::Between(col.clone(), int_scalar(col_type, v)?),
            Placed::Above => Rhs::Above,
            Placed::Below => Rhs::Below,
        });
    }
    let scalar: ArrayRef = match (col_type, value) {
        (ArrowType::Boolean, Literal::Boolean(b)) => Arc::new(BooleanArray::from(vec![*b])),
        (ArrowType::Float32 | ArrowType::Float64, _) => {
            let x = match value {
                Literal::Int(i) => *i as f64,
                Literal::Float(x) => *x,
                Literal::Decimal { unscaled, scale } => decimal_text(*unscaled, *scale)
                    .parse::<f64>()
                    .map_err(|_| type_error(column, col_type, value))?,
                _ => return Err(type_error(column, col_type, value)),
            };
            if *col_type == ArrowType::Float32 {
                Arc::new(Float32Array::from(vec![x as f32]))
            } else {
                Arc::new(Float64Array::from(vec![x]))
            }
        }
        (ArrowType::Utf8, Literal::String(s)) => Arc::new(StringArray::from(vec![s.as_str()])),
        (ArrowType::LargeUtf8, Literal::String(s)) => {
            Arc::new(LargeStringArray::from(vec![s.as_str()]))
        }
        (ArrowType::Utf8View, Literal::String(s)) => {
            Arc::new(StringViewArray::from(vec![s.as_str()]))
        }
        (ArrowType::Binary, Literal::Binary(b)) => Arc::new(BinaryArray::from(vec![b.as_slice()])),
        (ArrowType::LargeBinary, Literal::Binary(b)) => {
            Arc::new(LargeBinaryArray::from(vec![b.as_slice()]))
        }
        (ArrowType::FixedSizeBinary(_) | ArrowType::BinaryView, Literal::Binary(b)) => {
            let cast = arrow_cast::cast(col, &ArrowType::Binary)?;
            return Ok(Rhs::Scalar(
                cast,
                Arc::new(BinaryArray::from(vec![b.as_slice()])),
            ));
        }
        (
            ArrowType::Boolean
            | ArrowType::Utf8
            | ArrowType::LargeUtf8
            | ArrowType::Utf8View
            | ArrowType::Binary
            | ArrowType::LargeBinary
            | ArrowType::FixedSizeBinary(_)
            | ArrowType::BinaryView,
            _,
        ) => return Err(type_error(column, col_type, value)),
        (other, _) => {
            return Err(Error::invalid(format!(
                "column '{column}' has type {} which filters cannot compare",
                arrow_type_name(other)
            )))
        }
    };
    Ok(Rhs::Scalar(col.clone(), scalar))
}

fn cmp_kernel(op: CompareOp, l: &dyn Array, r: &ArrayRef) -> Result<BooleanArray> {
    use arrow_ord::cmp;
    let r = Scalar::new(r.clone());
    let out = match op {
        CompareOp::Eq => cmp::eq(&l, &r),
        CompareOp::NotEq => cmp::neq(&l, &r),
        CompareOp::Lt => cmp::lt(&l, &r),
        CompareOp::LtEq => cmp::lt_eq(&l, &r),
        CompareOp::Gt => cmp::gt(&l, &r),
        CompareOp::GtEq => cmp::gt_eq(&l, &r),
    }?;
    Ok(out)
}

fn compare(column: &str, col: &ArrayRef, op: CompareOp, value: &Literal) -> Result<BooleanArray> {
    match convert(column, col, value)? {
        Rhs::Null => Ok(all_null(col.len())),
        Rhs::Scalar(c, s) => cmp_kernel(op, &c, &s),
        Rhs::Between(c, floor) => match op {
            CompareOp::Eq => Ok(constant_with_nulls(&c, false)),
            CompareOp::NotEq => Ok(constant_with_nulls(&c, true)),
            CompareOp::Lt | CompareOp::LtEq => cmp_kernel(CompareOp::LtEq, &c, &floor),
            CompareOp::Gt | CompareOp::GtEq => cmp_kernel(CompareOp::Gt, &c, &floor),
        },
        Rhs::Above => Ok(constant_with_nulls(
            col,
            matches!(op, CompareOp::NotEq | CompareOp::Lt | CompareOp::LtEq),
        )),
        Rhs::Below => Ok(constant_with_nulls(
            col,
            matches!(op, CompareOp::NotEq | CompareOp::Gt | CompareOp::GtEq),
        )),
    }
}

fn in_list(column: &str, col: &ArrayRef, values: &[Literal]) -> Result<BooleanArray> {
    let mut acc = all_bool(col.len(), false);
    // Rows that are null stay null even for an empty list? SQL: `NULL IN ()` is not valid SQL;
    // with an empty list we answer false everywhere.
    for v in values {
        let eq = compare(column, col, CompareOp::Eq, v)?;
        acc = arrow_arith::boolean::or_kleene(&acc, &eq)?;
    }
    Ok(acc)
}

/// The shape of a LIKE pattern, for the fast kernels.
#[derive(Debug, PartialEq)]
enum LikeShape {
    Exact(String),
    Prefix(String),
    Suffix(String),
    Contains(String),
    General,
}

fn like_shape(pattern: &str) -> LikeShape {
    // Unescape, remembering where unescaped wildcards are.
    let mut text = String::new();
    let mut wild: Vec<(usize, char)> = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n) => text.push(n),
                None => text.push('\\'),
            },
            '%' | '_' => wild.push((text.len(), c)),
            c => text.push(c),
        }
    }
    if wild.iter().any(|(_, c)| *c == '_') {
        return LikeShape::General;
    }
    let at_start = |w: &(usize, char)| w.0 == 0;
    let at_end = |w: &(usize, char)| w.0 == text.len();
    match wild.as_slice() {
        [] => LikeShape::Exact(text),
        _ if text.is_empty() => LikeShape::Prefix(String::new()),
        [w] if at_end(w) && !text.is_empty() => LikeShape::Prefix(text),
        [w] if at_start(w) => LikeShape::Suffix(text),
        [a, b] if at_start(a) && at_end(b) => LikeShape::Contains(text),
        _ => LikeShape::General,
    }
}

fn like(column: &str, col: &ArrayRef, pattern: &str) -> Result<BooleanArray> {
    use arrow_string::like as k;
    let make = |s: &str| -> Option<ArrayRef> {
        Some(match col.data_type() {
            ArrowType::Utf8 => Arc::new(StringArray::from(vec![s])),
            ArrowType::LargeUtf8 => Arc::new(LargeStringArray::from(vec![s])),
            ArrowType::Utf8View => Arc::new(StringViewArray::from(vec![s])),
            _ => return None,
        })
    };
    let Some(full) = make(pattern) else {
        return Err(Error::invalid(format!(
            "column '{column}' has type {}; LIKE needs a STRING column",
            arrow_type_name(col.data_type())
        )));
    };
    let out = match like_shape(pattern) {
        LikeShape::Exact(t) => arrow_ord::cmp::eq(col, &Scalar::new(make(&t).unwrap_or(full))),
        LikeShape::Prefix(t) if t.is_empty() => return Ok(constant_with_nulls(col, true)),
        LikeShape::Prefix(t) => k::starts_with(col, &Scalar::new(make(&t).unwrap_or(full))),
        LikeShape::Suffix(t) => k::ends_with(col, &Scalar::new(make(&t).unwrap_or(full))),
        LikeShape::Contains(t) => k::contains(col, &Scalar::new(make(&t).unwrap_or(full))),
        LikeShape::General => k::like(col, &Scalar::new(full)),
    }?;
    Ok(out)
}

fn decimal_text(unscaled: i128, scale: i8) -> String {
    if scale <= 0 {
        let mut s = unscaled.to_string();
        if unscaled != 0 {
            for _ in 0..(-(scale as i32)) {
                s.push('0');
            }
        }
        return s;
    }
    let neg = unscaled < 0;
    let digits = unscaled.unsigned_abs().to_string();
    let scale = scale as usize;
    let padded = if digits.len() <= scale {
        format!("{}{}", "0".repeat(scale + 1 - digits.len()), digits)
    } else {
        digits
    };
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{}{int}.{frac}", if neg { "-" } else { "" })
}

fn days_since_epoch(d: NaiveDate) -> i32 {
    (d - NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default()).num_days() as i32
}

fn date_from_days(days: i32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(1970, 1, 1)?.checked_add_signed(chrono::Duration::days(days as i64))
}

fn instant(millis: i64, nanos_of_milli: u32) -> Option<NaiveDateTime> {
    let t = DateTime::<Utc>::from_timestamp_millis(millis)?;
    t.naive_utc()
        .checked_add_signed(chrono::Duration::nanoseconds(nanos_of_milli as i64))
}

// ---------------------------------------------------------------------------------------------
// Partition pruning

/// Three-valued answer of a predicate over what is known about a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tri {
    True,
    False,
    Unknown,
}

impl Tri {
    fn not(self) -> Tri {
        match self {
            Tri::True => Tri::False,
            Tri::False => Tri::True,
            Tri::Unknown => Tri::Unknown,
        }
    }
}

/// Whether a partition with these partition-column values can hold rows matching `expr`.
///
/// `partition_keys[i]` has the value `values[i]` (Fluss's partition value text). Only `=`, `!=`
/// and `IN` / `NOT IN` on partition columns (combined with AND / OR / NOT) decide; anything else
/// counts as "maybe", so a partition is dropped only when it certainly cannot match.
pub fn partition_may_match(expr: &Expr, partition_keys: &[String], values: &[String]) -> bool {
    partition_tri(expr, partition_keys, values) != Tri::False
}

fn partition_tri(expr: &Expr, keys: &[String], values: &[String]) -> Tri {
    let value_of = |column: &str| -> Option<&str> {
        keys.iter()
            .position(|k| k == column)
            .and_then(|i| values.get(i))
            .map(String::as_str)
    };
    let eq = |column: &str, lit: &Literal| -> Tri {
        match (value_of(column), lit) {
            (None, _) => Tri::Unknown,
            // NULL = x is never true; as a whole the row is dropped, so "false" is safe.
            (Some(_), Literal::Null) => Tri::False,
            (Some(v), lit) => match lit.partition_text() {
                Some(text) if text == v => Tri::True,
                Some(text) => {
                    // Integers may be written with a sign or leading zeros; only answer when the
                    // partition value reads back to the same canonical text.
                    if let (Literal::Int(_), Ok(parsed)) = (lit, v.parse::<i64>()) {
                        if parsed.to_string() == text {
                            return Tri::True;
                        }
                        return Tri::False;
                    }
                    if matches!(lit, Literal::Boolean(_)) && v.eq_ignore_ascii_case(&text) {
                        return Tri::True;
                    }
                    if matches!(lit, Literal::Int(_)) {
                        return Tri::Unknown;
                    }
                    Tri::False
                }
                None => Tri::Unknown,
            },
        }
    };
    let in_list = |column: &str, list: &[Literal]| -> Tri {
        let mut any_unknown = false;
        for lit in list {
            match eq(column, lit) {
                Tri::True => return Tri::True,
                Tri::Unknown => any_unknown = true,
                Tri::False => {}
            }
        }
        if any_unknown {
            Tri::Unknown
        } else {
            Tri::False
        }
    };
    match expr {
        Expr::Compare {
            column,
            op: CompareOp::Eq,
            value,
        } => eq(column, value),
        Expr::Compare {
            column,
            op: CompareOp::NotEq,
            value,
        } => match value {
            Literal::Null if value_of(column).is_some() => Tri::False,
            _ => eq(column, value).not(),
        },
        Expr::In { column, values } => in_list(column, values),
        Expr::NotIn { column, values } => {
            if value_of(column).is_some() && values.iter().any(|v| matches!(v, Literal::Null)) {
                return Tri::False;
            }
            in_list(column, values).not()
        }
        Expr::And(parts) => {
            let mut out = Tri::True;
            for p in parts {
                match partition_tri(p, keys, values) {
                    Tri::False => return Tri::False,
                    Tri::Unknown => out = Tri::Unknown,
                    Tri::True => {}
                }
            }
            out
        }
        Expr::Or(parts) => {
            let mut out = Tri::False;
            for p in parts {
                match partition_tri(p, keys, values) {
                    Tri::True => return Tri::True,
                    Tri::Unknown => out = Tri::Unknown,
                    Tri::False => {}
                }
            }
            out
        }
        Expr::Not(e) => partition_tri(e, keys, values).not(),
        _ => Tri::Unknown,
    }
}

/// Keeps the partitions that may hold rows matching `expr`; `values_of` gives a partition's
/// values in the order of `partition_keys`.
pub fn prune_partitions<P, F>(
    partition_keys: &[String],
    partitions: impl IntoIterator<Item = P>,
    expr: &Expr,
    values_of: F,
) -> Vec<P>
where
    F: Fn(&P) -> Vec<String>,
{
    partitions
        .into_iter()
        .filter(|p| partition_may_match(expr, partition_keys, &values_of(p)))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Text parser

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Word(String),
    Str(String),
    Num(String),
    Op(&'static str),
    LParen,
    RParen,
    Comma,
}

fn tokenize(text: &str) -> Result<Vec<(usize, Tok)>> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let err = |pos: usize, msg: &str| {
        Error::invalid(format!(
            "cannot parse filter '{text}': {msg} at character {}",
            pos + 1
        ))
    };
    while i < chars.len() {
        let (pos, c) = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        match c {
            '(' => {
                out.push((pos, Tok::LParen));
                i += 1;
            }
            ')' => {
                out.push((pos, Tok::RParen));
                i += 1;
            }
            ',' => {
                out.push((pos, Tok::Comma));
                i += 1;
            }
            '=' => {
                i += if chars.get(i + 1).map(|c| c.1) == Some('=') {
                    2
                } else {
                    1
                };
                out.push((pos, Tok::Op("=")));
            }
            '!' => {
                if chars.get(i + 1).map(|c| c.1) == Some('=') {
                    out.push((pos, Tok::Op("!=")));
                    i += 2;
                } else {
                    return Err(err(pos, "expected '!='"));
                }
            }
            '<' | '>' => {
                let next = chars.get(i + 1).map(|c| c.1);
                let op = match (c, next) {
                    ('<', Some('=')) => "<=",
                    ('<', Some('>')) => "!=",
                    ('>', Some('=')) => ">=",
                    ('<', _) => "<",
                    _ => ">",
                };
                // Every two-character spelling ("<=", "<>", ">=") is two characters long.
                i += op.len();
                out.push((pos, Tok::Op(op)));
            }
            '\'' | '`' | '"' => {
                let quote = c;
                let mut s = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(err(pos, "unterminated quoted text")),
                        Some(&(_, ch)) if ch == quote => {
                            if chars.get(i + 1).map(|c| c.1) == Some(quote) {
                                s.push(quote);
                                i += 2;
                            } else {
                                i += 1;
                                break;
                            }
                        }
                        Some(&(_, ch)) => {
                            s.push(ch);
                            i += 1;
                        }
                    }
                }
                out.push((
                    pos,
                    if quote == '\'' {
                        Tok::Str(s)
                    } else {
                        Tok::Ident(s)
                    },
                ));
            }
            c if c.is_ascii_digit() || c == '.' || (c == '-' && starts_number(&chars, i)) => {
                let mut s = String::new();
                s.push(c);
                i += 1;
                while let Some(&(_, ch)) = chars.get(i) {
                    let prev = s.chars().last();
                    if ch.is_ascii_digit()
                        || ch == '.'
                        || ch == 'e'
                        || ch == 'E'
                        || ((ch == '-' || ch == '+') && matches!(prev, Some('e' | 'E')))
                    {
                        s.push(ch);
                        i += 1;
                    } else {
                        break;
                    }
                }
                out.push((pos, Tok::Num(s)));
            }
            c if c.is_alphabetic() || c == '_' => {
                let mut s = String::new();
                while let Some(&(_, ch)) = chars.get(i) {
                    if ch.is_alphanumeric() || ch == '_' || ch == '.' {
                        s.push(ch);
                        i += 1;
                    } else {
                        break;
                    }
                }
                out.push((pos, Tok::Word(s)));
            }
            _ => return Err(err(pos, &format!("unexpected '{c}'"))),
        }
    }
    Ok(out)
}

fn starts_number(chars: &[(usize, char)], i: usize) -> bool {
    chars
        .get(i + 1)
        .is_some_and(|c| c.1.is_ascii_digit() || c.1 == '.')
}

struct Parser<'a> {
    text: &'a str,
    toks: Vec<(usize, Tok)>,
    pos: usize,
}

impl Parser<'_> {
    fn err(&self, msg: impl fmt::Display) -> Error {
        let at = match self.toks.get(self.pos) {
            Some((p, _)) => format!("at character {}", p + 1),
            None => "at the end".to_string(),
        };
        Error::invalid(format!("cannot parse filter '{}': {msg} {at}", self.text))
    }
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.1)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).map(|t| t.1.clone());
        self.pos += 1;
        t
    }
    fn keyword(&mut self, word: &str) -> bool {
        if let Some(Tok::Word(w)) = self.peek() {
            if w.eq_ignore_ascii_case(word) {
                self.pos += 1;
                return true;
            }
        }
        false
    }
    fn expect_keyword(&mut self, word: &str) -> Result<()> {
        if self.keyword(word) {
            Ok(())
        } else {
            Err(self.err(format!("expected {word}")))
        }
    }
    fn or(&mut self) -> Result<Expr> {
        let mut parts = vec![self.and()?];
        while self.keyword("OR") {
            parts.push(self.and()?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().unwrap_or(Expr::Or(vec![]))
        } else {
            Expr::Or(parts)
        })
    }
    fn and(&mut self) -> Result<Expr> {
        let mut parts = vec![self.not()?];
        while self.keyword("AND") {
            parts.push(self.not()?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().unwrap_or(Expr::And(vec![]))
        } else {
            Expr::And(parts)
        })
    }
    fn not(&mut self) -> Result<Expr> {
        if self.keyword("NOT") {
            return Ok(Expr::Not(Box::new(self.not()?)));
        }
        self.primary()
    }
    fn primary(&mut self) -> Result<Expr> {
        if self.peek() == Some(&Tok::LParen) {
            self.pos += 1;
            let e = self.or()?;
            if self.next() != Some(Tok::RParen) {
                self.pos -= 1;
                return Err(self.err("expected ')'"));
            }
            return Ok(e);
        }
        let column = match self.next() {
            Some(Tok::Ident(s)) => s,
            Some(Tok::Word(w)) if !is_keyword(&w) => w,
            _ => {
                self.pos -= 1;
                return Err(self.err("expected a column name"));
            }
        };
        if let Some(Tok::Op(op)) = self.peek().cloned() {
            self.pos += 1;
            let op = CompareOp::parse(op).unwrap_or(CompareOp::GtEq);
            let value = self.literal()?;
            return Ok(Expr::Compare { column, op, value });
        }
        if self.keyword("IS") {
            let negated = self.keyword("NOT");
            self.expect_keyword("NULL")?;
            return Ok(if negated {
                Expr::IsNotNull(column)
            } else {
                Expr::IsNull(column)
            });
        }
        let negated = self.keyword("NOT");
        let e = if self.keyword("IN") {
            if self.next() != Some(Tok::LParen) {
                self.pos -= 1;
                return Err(self.err("expected '(' after IN"));
            }
            let mut values = vec![self.literal()?];
            loop {
                match self.next() {
                    Some(Tok::Comma) => values.push(self.literal()?),
                    Some(Tok::RParen) => break,
                    _ => {
                        self.pos -= 1;
                        return Err(self.err("expected ',' or ')' in the IN list"));
                    }
                }
            }
            if negated {
                return Ok(Expr::NotIn { column, values });
            }
            Expr::In { column, values }
        } else if self.keyword("BETWEEN") {
            let low = self.literal()?;
            self.expect_keyword("AND")?;
            let high = self.literal()?;
            Expr::Between { column, low, high }
        } else if self.keyword("LIKE") {
            match self.next() {
                Some(Tok::Str(pattern)) => Expr::Like { column, pattern },
                _ => {
                    self.pos -= 1;
                    return Err(self.err("expected a quoted pattern after LIKE"));
                }
            }
        } else {
            return Err(self.err(
                "expected a comparison (=, !=, <, <=, >, >=), IN, IS [NOT] NULL, BETWEEN or LIKE",
            ));
        };
        Ok(if negated { Expr::Not(Box::new(e)) } else { e })
    }
    fn literal(&mut self) -> Result<Literal> {
        match self.next() {
            Some(Tok::Str(s)) => Ok(Literal::String(s)),
            Some(Tok::Num(n)) => parse_number(&n).ok_or_else(|| {
                self.pos -= 1;
                self.err(format!("'{n}' is not a number"))
            }),
            Some(Tok::Word(w)) => {
                let upper = w.to_ascii_uppercase();
                match upper.as_str() {
                    "NULL" => Ok(Literal::Null),
                    "TRUE" => Ok(Literal::Boolean(true)),
                    "FALSE" => Ok(Literal::Boolean(false)),
                    "X" => match self.next() {
                        Some(Tok::Str(hex)) => parse_hex(&hex).ok_or_else(|| {
                            self.pos -= 1;
                            self.err(format!("'{hex}' is not hexadecimal"))
                        }),
                        _ => {
                            self.pos -= 1;
                            Err(self.err("expected X'hex'"))
                        }
                    },
                    "DATE" | "TIME" | "TIMESTAMP" | "TIMESTAMP_LTZ" => {
                        let text = match self.next() {
                            Some(Tok::Str(s)) => s,
                            _ => {
                                self.pos -= 1;
                                return Err(self.err(format!("expected {upper} 'text'")));
                            }
                        };
                        let bad = |p: &Self| p.err(format!("'{text}' is not a valid {upper}"));
                        let parsed = match upper.as_str() {
                            "DATE" => NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d")
                                .ok()
                                .map(Literal::date),
                            "TIME" => {
                                parse_temporal_text(&text, &ArrowType::Time64(TimeUnit::Nanosecond))
                            }
                            "TIMESTAMP" => match parse_temporal_text(
                                &text,
                                &ArrowType::Timestamp(TimeUnit::Nanosecond, None),
                            ) {
                                Some(Literal::Date(d)) => Some(Literal::Timestamp {
                                    millis: d as i64 * 86_400_000,
                                    nanos_of_milli: 0,
                                }),
                                other => other,
                            },
                            _ => DateTime::parse_from_rfc3339(text.trim())
                                .ok()
                                .map(Literal::timestamp_ltz),
                        };
                        parsed.ok_or_else(|| bad(self))
                    }
                    _ => {
                        self.pos -= 1;
                        Err(self.err(format!("expected a literal, found '{w}'")))
                    }
                }
            }
            _ => {
                self.pos = self.pos.saturating_sub(1);
                if self.pos >= self.toks.len() {
                    self.pos = self.toks.len();
                }
                Err(self.err("expected a literal"))
            }
        }
    }
}

fn parse_hex(hex: &str) -> Option<Literal> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    Some(Literal::Binary(bytes))
}

fn parse_number(n: &str) -> Option<Literal> {
    if n.contains(['e', 'E']) {
        return n.parse::<f64>().ok().map(Literal::Float);
    }
    if let Some((int, frac)) = n.split_once('.') {
        if frac.contains('.') || (int.trim_start_matches('-').is_empty() && frac.is_empty()) {
            return None;
        }
        let digits = format!("{int}{frac}");
        let unscaled = if digits == "-" {
            0
        } else {
            digits.parse::<i128>().ok()?
        };
        let scale = i8::try_from(frac.len()).ok()?;
        return Some(Literal::Decimal { unscaled, scale });
    }
    n.parse::<i64>().ok().map(Literal::Int).or_else(|| {
        n.parse::<i128>()
            .ok()
            .map(|unscaled| Literal::Decimal { unscaled, scale: 0 })
    })
}

/// Parses the text form of a filter, e.g. `a = 1 AND (b IN ('x','y') OR c IS NULL)`.
///
/// Grammar: `OR` / `AND` / `NOT` with the usual precedence and parentheses; predicates
/// `col op literal` (`=`, `==`, `!=`, `<>`, `<`, `<=`, `>`, `>=`), `col [NOT] IN (lit, ...)`,
/// `col IS [NOT] NULL`, `col [NOT] BETWEEN lit AND lit`, `col [NOT] LIKE 'pattern'`. Literals:
/// integers, decimals (`1.25`, exact), floats (`1e3`), `'strings'` (`''` escapes a quote),
/// `TRUE`/`FALSE`/`NULL`, `X'CAFE'`, `DATE '2024-01-01'`, `TIME '12:00:00'`,
/// `TIMESTAMP '2024-01-01 12:00:00.5'`, `TIMESTAMP_LTZ '2024-01-01T12:00:00+08:00'`. Column
/// names that are not plain identifiers go in backquotes or double quotes. Keywords are
/// case-insensitive.
pub fn parse_filter(text: &str) -> Result<Expr> {
    let toks = tokenize(text)?;
    if toks.is_empty() {
        return Err(Error::invalid("cannot parse filter '': it is empty"));
    }
    let mut p = Parser { text, toks, pos: 0 };
    let e = p.or()?;
    if p.pos < p.toks.len() {
        return Err(p.err("unexpected text after the filter"));
    }
    Ok(e)
}

impl std::str::FromStr for Expr {
    type Err = Error;
    fn from_str(s: &str) -> Result<Expr> {
        parse_filter(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
