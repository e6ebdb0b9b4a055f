//! Batch filters pushed to the server: the part of a filter [`Expr`] that batch statistics can
//! decide, its FetchLog encoding (`PbPredicate`, by column id), and the test of a batch's
//! statistics against it (Fluss's `Predicate.test(rowCount, min, max, nullCounts)`).
//!
//! A [`StatsFilter`] is always implied by the exact filter it came from: a batch it rejects
//! holds no row the exact filter keeps. Parts that statistics cannot decide are dropped from
//! conjunctions (the filter gets weaker, still implied) and make a disjunction unpushable.

use std::cmp::Ordering;

use super::batch::{BatchStatistics, StatValue};
use crate::metadata::{DataType, Schema, TypeKind};
use crate::proto::{PbCompoundPredicate, PbLeafPredicate, PbLiteralValue, PbPredicate};
use crate::scan::expr::{CompareOp, Expr, Literal};
use crate::{Error, Result};

/// Fluss's leaf functions (`PbLeafFunction` codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeafFn {
    /// `=` (0).
    Eq,
    /// `<>` (1).
    NotEq,
    /// `<` (2).
    Lt,
    /// `<=` (3).
    LtEq,
    /// `>` (4).
    Gt,
    /// `>=` (5).
    GtEq,
    /// IS NULL (6).
    IsNull,
    /// IS NOT NULL (7).
    IsNotNull,
    /// LIKE 'prefix%' (8).
    StartsWith,
    /// LIKE '%infix%' (9).
    Contains,
    /// LIKE '%suffix' (10).
    EndsWith,
    /// IN (11).
    In,
    /// NOT IN (12).
    NotIn,
}

const LEAF_CODES: [LeafFn; 13] = [
    LeafFn::Eq,
    LeafFn::NotEq,
    LeafFn::Lt,
    LeafFn::LtEq,
    LeafFn::Gt,
    LeafFn::GtEq,
    LeafFn::IsNull,
    LeafFn::IsNotNull,
    LeafFn::StartsWith,
    LeafFn::Contains,
    LeafFn::EndsWith,
    LeafFn::In,
    LeafFn::NotIn,
];

impl LeafFn {
    fn code(self) -> i32 {
        LEAF_CODES.iter().position(|f| *f == self).unwrap_or(0) as i32
    }

    fn from_code(code: i32) -> Option<LeafFn> {
        usize::try_from(code)
            .ok()
            .and_then(|c| LEAF_CODES.get(c))
            .copied()
    }

    fn from_compare(op: CompareOp) -> LeafFn {
        match op {
            CompareOp::Eq => LeafFn::Eq,
            CompareOp::NotEq => LeafFn::NotEq,
            CompareOp::Lt => LeafFn::Lt,
            CompareOp::LtEq => LeafFn::LtEq,
            CompareOp::Gt => LeafFn::Gt,
            CompareOp::GtEq => LeafFn::GtEq,
        }
    }

    fn negate_compare(op: CompareOp) -> CompareOp {
        match op {
            CompareOp::Eq => CompareOp::NotEq,
            CompareOp::NotEq => CompareOp::Eq,
            CompareOp::Lt => CompareOp::GtEq,
            CompareOp::LtEq => CompareOp::Gt,
            CompareOp::Gt => CompareOp::LtEq,
            CompareOp::GtEq => CompareOp::Lt,
        }
    }
}

/// A filter over batch statistics.
#[derive(Debug, Clone, PartialEq)]
pub enum StatsFilter {
    /// `column func literals` (column = index in the schema the filter was resolved against;
    /// a `None` literal is SQL NULL).
    Leaf {
        /// The function.
        func: LeafFn,
        /// Column index.
        column: usize,
        /// Literals in the column's statistics representation.
        literals: Vec<Option<StatValue>>,
    },
    /// All parts may match.
    And(Vec<StatsFilter>),
    /// Any part may match.
    Or(Vec<StatsFilter>),
    /// A leaf on a column the batch's schema does not have: always "may match".
    Unknown,
}

impl StatsFilter {
    /// The pushable part of `expr` over `schema`, restricted to the columns `stats_columns`
    /// (schema indexes that carry statistics); `None` when nothing can be pushed.
    pub fn from_expr(expr: &Expr, schema: &Schema, stats_columns: &[usize]) -> Option<StatsFilter> {
        to_filter(expr, false, schema, stats_columns)
    }

    /// Whether a batch of `record_count` rows with these statistics may hold a matching row.
    pub fn may_match(&self, stats: &BatchStatistics, record_count: i64) -> bool {
        match self {
            StatsFilter::And(parts) => parts.iter().all(|p| p.may_match(stats, record_count)),
            StatsFilter::Or(parts) => parts.iter().any(|p| p.may_match(stats, record_count)),
            StatsFilter::Unknown => true,
            StatsFilter::Leaf {
                func,
                column,
                literals,
            } => {
                // An IN without a non-null literal (`IN ()`, `IN (NULL)`) holds for no row,
                // whatever the batch's statistics say: every batch is skipped.
                if *func == LeafFn::In && literals.iter().all(Option::is_none) {
                    return false;
                }
                let Some(pos) = stats.position_of(*column) else {
                    return true;
                };
                let nulls = i64::from(stats.null_counts.get(pos).copied().unwrap_or(-1));
                leaf_may_match(
                    *func,
                    literals,
                    record_count,
                    nulls,
                    stats.min.get(pos).and_then(Option::as_ref),
                    stats.max.get(pos).and_then(Option::as_ref),
                )
            }
        }
    }

    /// The FetchLog encoding; leaves name columns by their id in `schema`.
    pub fn to_proto(&self, schema: &Schema) -> Result<PbPredicate> {
        Ok(match self {
            StatsFilter::And(parts) | StatsFilter::Or(parts) => PbPredicate {
                r#type: 1,
                leaf: None,
                compound: Some(PbCompoundPredicate {
                    function: i32::from(matches!(self, StatsFilter::Or(_))),
                    children: parts
                        .iter()
                        .map(|p| p.to_proto(schema))
                        .collect::<Result<_>>()?,
                }),
            },
            StatsFilter::Unknown => {
                return Err(Error::internal("an unresolved batch filter leaf"));
            }
            StatsFilter::Leaf {
                func,
                column,
                literals,
            } => {
                let col = schema.columns.get(*column).ok_or_else(|| {
                    Error::internal(format!("batch filter column {column} outside the schema"))
                })?;
                PbPredicate {
                    r#type: 0,
                    leaf: Some(PbLeafPredicate {
                        function: func.code(),
                        field_id: col.id,
                        literals: literals
                            .iter()
                            .map(|l| literal_to_proto(l.as_ref(), &col.data_type))
                            .collect::<Result<_>>()?,
                    }),
                    compound: None,
                }
            }
        })
    }

    /// Decodes a pushed predicate against `schema` (the schema of the batches it is tested on):
    /// leaves resolve their field id to a column; an id the schema lacks gives
    /// [`StatsFilter::Unknown`]. Malformed predicates are [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument).
    pub fn from_proto(pb: &PbPredicate, schema: &Schema) -> Result<StatsFilter> {
        from_proto_depth(pb, schema, 0)
    }
}

const MAX_PROTO_DEPTH: usize = 64;

fn from_proto_depth(pb: &PbPredicate, schema: &Schema, depth: usize) -> Result<StatsFilter> {
    if depth > MAX_PROTO_DEPTH {
        return Err(Error::invalid(format!(
            "filter predicate nested deeper than {MAX_PROTO_DEPTH} levels"
        )));
    }
    match (pb.r#type, &pb.leaf, &pb.compound) {
        (0, Some(leaf), _) => {
            let func = LeafFn::from_code(leaf.function).ok_or_else(|| {
                Error::invalid(format!("unknown filter leaf function {}", leaf.function))
            })?;
            let Some(column) = schema.columns.iter().position(|c| c.id == leaf.field_id) else {
                return Ok(StatsFilter::Unknown);
            };
            let t = &schema.columns[column].data_type;
            if !super::batch::is_supported_statistics_type(t) {
                return Ok(StatsFilter::Unknown);
            }
            let literals = leaf
                .literals
                .iter()
                .map(|l| literal_from_proto(l, t))
                .collect::<Result<Vec<_>>>()?;
            // IN and NOT IN take any number of literals, none included (as Fluss's decoder):
            // `IN ()` matches nothing, `NOT IN ()` every non-null value.
            let arity_ok = match func {
                LeafFn::IsNull | LeafFn::IsNotNull => literals.is_empty(),
                LeafFn::In | LeafFn::NotIn => true,
                _ => literals.len() == 1,
            };
            if !arity_ok {
                return Err(Error::invalid(format!(
                    "filter leaf {func:?} on field id {} has {} literals",
                    leaf.field_id,
                    literals.len()
                )));
            }
            Ok(StatsFilter::Leaf {
                func,
                column,
                literals,
            })
        }
        (1, _, Some(c)) => {
            let parts = c
                .children
                .iter()
                .map(|p| from_proto_depth(p, schema, depth + 1))
                .collect::<Result<Vec<_>>>()?;
            match c.function {
                0 => Ok(StatsFilter::And(parts)),
                1 => Ok(StatsFilter::Or(parts)),
                f => Err(Error::invalid(format!(
                    "unknown filter compound function {f}"
                ))),
            }
        }
        (t, _, _) => Err(Error::invalid(format!(
            "filter predicate of type {t} without its {} part",
            if t == 0 { "leaf" } else { "compound" }
        ))),
    }
}

fn cmp(a: &StatValue, b: &StatValue) -> Option<Ordering> {
    a.compare(b)
}

fn leaf_may_match(
    func: LeafFn,
    literals: &[Option<StatValue>],
    rows: i64,
    nulls: i64,
    min: Option<&StatValue>,
    max: Option<&StatValue>,
) -> bool {
    match func {
        LeafFn::IsNull => nulls != 0,
        LeafFn::IsNotNull => nulls < 0 || nulls < rows,
        _ => {
            if nulls >= 0 && nulls == rows {
                return false;
            }
            let (Some(min), Some(max)) = (min, max) else {
                return true;
            };
            let ge_min = |l: &StatValue| cmp(l, min).is_none_or(|o| o != Ordering::Less);
            let le_max = |l: &StatValue| cmp(l, max).is_none_or(|o| o != Ordering::Greater);
            match func {
                LeafFn::In => literals.iter().flatten().any(|l| ge_min(l) && le_max(l)),
                LeafFn::NotIn => literals.iter().all(|l| match l {
                    None => false,
                    Some(l) => {
                        cmp(l, min) != Some(Ordering::Equal) || cmp(l, max) != Some(Ordering::Equal)
                    }
                }),
                _ => {
                    let Some(Some(l)) = literals.first() else {
                        return false;
                    };
                    match func {
                        LeafFn::Eq => ge_min(l) && le_max(l),
                        LeafFn::NotEq => {
                            cmp(l, min) != Some(Ordering::Equal)
                                || cmp(l, max) != Some(Ordering::Equal)
                        }
                        LeafFn::Lt => cmp(l, min).is_none_or(|o| o == Ordering::Greater),
                        LeafFn::LtEq => ge_min(l),
                        LeafFn::Gt => cmp(l, max).is_none_or(|o| o == Ordering::Less),
                        LeafFn::GtEq => le_max(l),
                        LeafFn::StartsWith => match (l, min, max) {
                            (StatValue::Str(p), StatValue::Str(lo), StatValue::Str(hi)) => {
                                let p = p.as_bytes();
                                let (lo, hi) = (lo.as_bytes(), hi.as_bytes());
                                (lo.starts_with(p) || lo <= p) && (hi.starts_with(p) || hi >= p)
                            }
                            _ => true,
                        },
                        _ => true,
                    }
                }
            }
        }
    }
}

/// The pushable form of `expr` (negated when `neg`): see the module doc for what is dropped.
fn to_filter(expr: &Expr, neg: bool, schema: &Schema, stats: &[usize]) -> Option<StatsFilter> {
    let column_of = |name: &str| -> Option<(usize, &DataType)> {
        let i = schema.column_index(name)?;
        stats
            .contains(&i)
            .then(|| (i, &schema.columns[i].data_type))
    };
    let leaf = |func: LeafFn, column: usize, literals: Vec<Option<StatValue>>| {
        Some(StatsFilter::Leaf {
            func,
            column,
            literals,
        })
    };
    match expr {
        Expr::Compare { column, op, value } => {
            let (i, t) = column_of(column)?;
            let op = if neg {
                LeafFn::negate_compare(*op)
            } else {
                *op
            };
            leaf(LeafFn::from_compare(op), i, vec![stat_literal(value, t)?])
        }
        Expr::In { column, values } | Expr::NotIn { column, values } => {
            let (i, t) = column_of(column)?;
            let lits = values
                .iter()
                .map(|v| stat_literal(v, t))
                .collect::<Option<Vec<_>>>()?;
            let is_in = matches!(expr, Expr::In { .. }) != neg;
            leaf(if is_in { LeafFn::In } else { LeafFn::NotIn }, i, lits)
        }
        Expr::IsNull(column) | Expr::IsNotNull(column) => {
            let (i, _) = column_of(column)?;
            let is_null = matches!(expr, Expr::IsNull(_)) != neg;
            leaf(
                if is_null {
                    LeafFn::IsNull
                } else {
                    LeafFn::IsNotNull
                },
                i,
                vec![],
            )
        }
        Expr::Between { column, low, high } => {
            let (i, t) = column_of(column)?;
            let (lo, hi) = (stat_literal(low, t)?, stat_literal(high, t)?);
            if neg {
                Some(StatsFilter::Or(vec![
                    StatsFilter::Leaf {
                        func: LeafFn::Lt,
                        column: i,
                        literals: vec![lo],
                    },
                    StatsFilter::Leaf {
                        func: LeafFn::Gt,
                        column: i,
                        literals: vec![hi],
                    },
                ]))
            } else {
                Some(StatsFilter::And(vec![
                    StatsFilter::Leaf {
                        func: LeafFn::GtEq,
                        column: i,
                        literals: vec![lo],
                    },
                    StatsFilter::Leaf {
                        func: LeafFn::LtEq,
                        column: i,
                        literals: vec![hi],
                    },
                ]))
            }
        }
        Expr::Like { column, pattern } => {
            if neg {
                return None;
            }
            let (i, t) = column_of(column)?;
            if !matches!(t.kind, TypeKind::String | TypeKind::Char { .. }) {
                return None;
            }
            let (func, text) = like_shape(pattern)?;
            leaf(func, i, vec![Some(StatValue::Str(text))])
        }
        Expr::Not(e) => to_filter(e, !neg, schema, stats),
        Expr::And(parts) | Expr::Or(parts) => {
            // AND (or a negated OR) may drop what it cannot push; OR needs every part.
            let conjunction = matches!(expr, Expr::And(_)) != neg;
            let pushed: Vec<StatsFilter> = if conjunction {
                parts
                    .iter()
                    .filter_map(|p| to_filter(p, neg, schema, stats))
                    .collect()
            } else {
                parts
                    .iter()
                    .map(|p| to_filter(p, neg, schema, stats))
                    .collect::<Option<Vec<_>>>()?
            };
            match (conjunction, pushed.len()) {
                (_, 0) => None,
                (_, 1) => pushed.into_iter().next(),
                (true, _) => Some(StatsFilter::And(pushed)),
                (false, _) => Some(StatsFilter::Or(pushed)),
            }
        }
    }
}

/// `LIKE` patterns statistics can use: `abc%` (starts with), `%abc` (ends with), `%abc%`
/// (contains) and `abc` (equals); anything with `_` or more `%` is not pushed.
fn like_shape(pattern: &str) -> Option<(LeafFn, String)> {
    let mut parts: Vec<(bool, String)> = Vec::new(); // (is_percent, text)
    let mut chars = pattern.chars();
    let mut text = String::new();
    while let Some(c) = chars.next() {
        match c {
            '\\' => text.push(chars.next()?),
            '_' => return None,
            '%' => {
                if !text.is_empty() {
                    parts.push((false, std::mem::take(&mut text)));
                }
                parts.push((true, String::new()));
            }
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        parts.push((false, text));
    }
    match parts.as_slice() {
        [(false, t)] => Some((LeafFn::Eq, t.clone())),
        [(false, t), (true, _)] => Some((LeafFn::StartsWith, t.clone())),
        [(true, _), (false, t)] => Some((LeafFn::EndsWith, t.clone())),
        [(true, _), (false, t), (true, _)] => Some((LeafFn::Contains, t.clone())),
        _ => None,
    }
}

/// `unscaled × 10^-scale` as a float when the float (f32 when `single`) holds it exactly: a
/// dyadic fraction (unscaled divisible by 5^scale) whose numerator fits the mantissa.
fn exact_float(unscaled: i128, scale: i8, single: bool) -> Option<f64> {
    let bits = if single { 24 } else { 53 };
    if scale < 0 {
        let v = unscaled.checked_mul(pow10(u32::from(scale.unsigned_abs()))?)?;
        return (v.unsigned_abs() < 1u128 << bits).then_some(v as f64);
    }
    let five = 5i128.checked_pow(u32::from(scale.unsigned_abs()))?;
    if unscaled % five != 0 {
        return None;
    }
    let n = unscaled / five;
    if n.unsigned_abs() >= 1u128 << bits {
        return None;
    }
    Some(n as f64 / f64::powi(2.0, i32::from(scale)))
}

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

/// The literal in column type `t`'s statistics representation, when it converts exactly
/// (`Some(None)` for NULL); `None` when it does not (the leaf is then not pushed).
fn stat_literal(l: &Literal, t: &DataType) -> Option<Option<StatValue>> {
    let int_range = |v: i64, lo: i64, hi: i64| (lo..=hi).contains(&v).then_some(v);
    let v = match (l, &t.kind) {
        (Literal::Null, _) => return Some(None),
        (Literal::Boolean(b), TypeKind::Boolean) => StatValue::Bool(*b),
        (Literal::Int(v), TypeKind::TinyInt) => {
            StatValue::Long(int_range(*v, i8::MIN.into(), i8::MAX.into())?)
        }
        (Literal::Int(v), TypeKind::SmallInt) => {
            StatValue::Long(int_range(*v, i16::MIN.into(), i16::MAX.into())?)
        }
        (Literal::Int(v), TypeKind::Int) => {
            StatValue::Long(int_range(*v, i32::MIN.into(), i32::MAX.into())?)
        }
        (Literal::Int(v), TypeKind::BigInt) => StatValue::Long(*v),
        (Literal::Float(f), TypeKind::Double) => StatValue::Float(*f),
        (Literal::Float(f), TypeKind::Float) => {
            let g = *f as f32;
            (f64::from(g) == *f || f.is_nan()).then_some(StatValue::Float(g.into()))?
        }
        (Literal::Int(v), TypeKind::Float | TypeKind::Double) => {
            let f = *v as f64;
            let exact =
                f as i64 == *v && (matches!(t.kind, TypeKind::Double) || f64::from(f as f32) == f);
            exact.then_some(StatValue::Float(f))?
        }
        (Literal::Decimal { unscaled, scale }, TypeKind::Float | TypeKind::Double) => {
            StatValue::Float(exact_float(
                *unscaled,
                *scale,
                matches!(t.kind, TypeKind::Float),
            )?)
        }
        (Literal::String(s), TypeKind::String | TypeKind::Char { .. }) => StatValue::Str(s.clone()),
        (Literal::Int(_) | Literal::Decimal { .. }, TypeKind::Decimal { precision, scale }) => {
            let (unscaled, lscale) = match l {
                Literal::Int(v) => (i128::from(*v), 0i8),
                Literal::Decimal { unscaled, scale } => (*unscaled, *scale),
                _ => return None,
            };
            let up = i64::from(*scale) - i64::from(lscale);
            let u = u32::try_from(up).ok()?;
            let v = unscaled.checked_mul(pow10(u)?)?;
            // Beyond the column's precision no value can equal it; the exact filter decides.
            (v.unsigned_abs() < pow10(*precision)?.unsigned_abs())
                .then_some(StatValue::Decimal(v))?
        }
        (Literal::Date(d), TypeKind::Date) => StatValue::Long((*d).into()),
        (Literal::Time(nanos), TypeKind::Time { precision }) if *precision <= 3 => {
            (nanos % 1_000_000 == 0).then_some(StatValue::Long(nanos / 1_000_000))?
        }
        (
            Literal::Timestamp {
                millis,
                nanos_of_milli,
            },
            TypeKind::Timestamp { precision },
        )
        | (
            Literal::TimestampLtz {
                millis,
                nanos_of_milli,
            },
            TypeKind::TimestampLtz { precision },
        ) => {
            let step = match precision {
                0 => {
                    if millis % 1000 != 0 || *nanos_of_milli != 0 {
                        return None;
                    }
                    1
                }
                1..=3 => 1_000_000,
                4..=6 => 1_000,
                _ => 1,
            };
            if nanos_of_milli % step != 0 {
                return None;
            }
            StatValue::Timestamp {
                millis: *millis,
                nanos: *nanos_of_milli as i32,
            }
        }
        _ => return None,
    };
    Some(Some(v))
}

/// Fluss's `PbDataTypeRoot` code of a column type.
fn type_code(t: &DataType) -> Option<i32> {
    Some(match t.kind {
        TypeKind::Boolean => 0,
        TypeKind::TinyInt => 1,
        TypeKind::SmallInt => 2,
        TypeKind::Int => 3,
        TypeKind::BigInt => 4,
        TypeKind::Float => 5,
        TypeKind::Double => 6,
        TypeKind::Char { .. } => 7,
        TypeKind::String => 8,
        TypeKind::Decimal { .. } => 9,
        TypeKind::Date => 10,
        TypeKind::Time { .. } => 11,
        TypeKind::Timestamp { .. } => 12,
        TypeKind::TimestampLtz { .. } => 13,
        TypeKind::Binary { .. } => 14,
        TypeKind::Bytes => 15,
        _ => return None,
    })
}

fn literal_to_proto(l: Option<&StatValue>, t: &DataType) -> Result<PbLiteralValue> {
    let code =
        type_code(t).ok_or_else(|| Error::invalid(format!("a filter literal for a {t} column")))?;
    let mut pb = PbLiteralValue {
        literal_type: code,
        is_null: l.is_none(),
        ..Default::default()
    };
    let Some(l) = l else {
        return Ok(pb);
    };
    match (l, &t.kind) {
        (StatValue::Bool(b), _) => pb.boolean_value = Some(*b),
        (StatValue::Long(v), TypeKind::BigInt | TypeKind::Date) => pb.bigint_value = Some(*v),
        (StatValue::Long(v), _) => pb.int_value = Some(*v as i32),
        (StatValue::Float(f), TypeKind::Float) => pb.float_value = Some(*f as f32),
        (StatValue::Float(f), _) => pb.double_value = Some(*f),
        (StatValue::Str(s), _) => pb.string_value = Some(s.clone()),
        (StatValue::Decimal(v), TypeKind::Decimal { precision, .. }) if *precision <= 18 => {
            pb.decimal_value = Some(*v as i64)
        }
        (StatValue::Decimal(v), _) => {
            let b = v.to_be_bytes();
            let skip = b
                .windows(2)
                .take_while(|w| {
                    (w[0] == 0 && w[1] & 0x80 == 0) || (w[0] == 0xFF && w[1] & 0x80 != 0)
                })
                .count();
            pb.decimal_bytes = Some(b[skip..].to_vec());
        }
        (StatValue::Timestamp { millis, nanos }, _) => {
            pb.timestamp_millis_value = Some(*millis);
            pb.timestamp_nano_of_millis_value = Some(*nanos);
        }
    }
    Ok(pb)
}

fn literal_from_proto(pb: &PbLiteralValue, t: &DataType) -> Result<Option<StatValue>> {
    if pb.is_null {
        return Ok(None);
    }
    let missing = || {
        Error::invalid(format!(
            "filter literal of type code {} has no value for a {t} column",
            pb.literal_type
        ))
    };
    let expected = type_code(t);
    // CHAR and STRING literals are interchangeable, as are the integer widths of one family.
    let compatible = match (expected, pb.literal_type) {
        (Some(7 | 8), 7 | 8) => true,
        (Some(e), l) => e == l,
        (None, _) => false,
    };
    if !compatible {
        return Err(Error::invalid(format!(
            "filter literal of type code {} does not match the {t} column",
            pb.literal_type
        )));
    }
    Ok(Some(match &t.kind {
        TypeKind::Boolean => StatValue::Bool(pb.boolean_value.ok_or_else(missing)?),
        TypeKind::TinyInt | TypeKind::SmallInt | TypeKind::Int | TypeKind::Time { .. } => {
            StatValue::Long(pb.int_value.ok_or_else(missing)?.into())
        }
        TypeKind::BigInt | TypeKind::Date => StatValue::Long(pb.bigint_value.ok_or_else(missing)?),
        TypeKind::Float => StatValue::Float(pb.float_value.ok_or_else(missing)?.into()),
        TypeKind::Double => StatValue::Float(pb.double_value.ok_or_else(missing)?),
        TypeKind::Char { .. } | TypeKind::String => {
            StatValue::Str(pb.string_value.clone().ok_or_else(missing)?)
        }
        TypeKind::Decimal { .. } => match (&pb.decimal_bytes, pb.decimal_value) {
            (Some(b), _) if !b.is_empty() && b.len() <= 16 => {
                let mut full = if b[0] & 0x80 != 0 {
                    [0xFF; 16]
                } else {
                    [0; 16]
                };
                full[16 - b.len()..].copy_from_slice(b);
                StatValue::Decimal(i128::from_be_bytes(full))
            }
            (Some(b), _) => {
                return Err(Error::invalid(format!(
                    "filter decimal literal of {} bytes",
                    b.len()
                )))
            }
            (None, Some(v)) => StatValue::Decimal(v.into()),
            (None, None) => return Err(missing()),
        },
        TypeKind::Timestamp { .. } | TypeKind::TimestampLtz { .. } => StatValue::Timestamp {
            millis: pb.timestamp_millis_value.ok_or_else(missing)?,
            nanos: pb.timestamp_nano_of_millis_value.unwrap_or(0),
        },
        // BINARY / BYTES columns never have statistics: the leaf can only say "may match".
        _ => return Ok(None),
    }))
}
