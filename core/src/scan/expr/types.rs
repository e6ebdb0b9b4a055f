//! The filter types: comparison operators, literals and the expression tree, with their
//! constructors and the text form `Display` writes (read back by [`super::parse_filter`]).

use std::collections::BTreeSet;
use std::fmt;

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};

use super::parse::ident;
use crate::{Error, Result};

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

pub(super) fn decimal_text(unscaled: i128, scale: i8) -> String {
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

pub(super) fn days_since_epoch(d: NaiveDate) -> i32 {
    (d - NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default()).num_days() as i32
}

pub(super) fn date_from_days(days: i32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(1970, 1, 1)?.checked_add_signed(chrono::Duration::days(days as i64))
}

pub(super) fn instant(millis: i64, nanos_of_milli: u32) -> Option<NaiveDateTime> {
    let t = DateTime::<Utc>::from_timestamp_millis(millis)?;
    t.naive_utc()
        .checked_add_signed(chrono::Duration::nanoseconds(nanos_of_milli as i64))
}
