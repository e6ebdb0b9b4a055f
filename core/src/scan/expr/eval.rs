//! Evaluating an [`Expr`] over Arrow record batches with the compute kernels, under SQL
//! three-valued logic, with exact placement of literals into the column's type.

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
use chrono::{NaiveTime, Timelike};

use crate::scan::time::{parse_date_time_text, DateTimeText};
use crate::{Error, Result};

use super::types::decimal_text;
use super::{CompareOp, Expr, Literal};

const NANOS_PER_DAY: i128 = 86_400_000_000_000;

impl Expr {
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
pub(super) fn parse_temporal_text(s: &str, col_type: &ArrowType) -> Option<Literal> {
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
        _ => Some(match parse_date_time_text(s)? {
            DateTimeText::Date(d) => Literal::date(d),
            DateTimeText::Wall(t) => Literal::timestamp(t),
            DateTimeText::Instant(t) => Literal::timestamp_ltz(t),
        }),
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

/// The literal as a one-element array of `col_type`, converted exactly (the rules of filter
/// literals: strings are read for DATE, TIME and TIMESTAMP columns, numbers may change type when
/// the value is kept). A value the type cannot hold exactly (`2.5` for an INT column, `1000` for
/// a TINYINT, `1.255` for a DECIMAL(10, 2)) or of a wrong type is an error naming the column.
/// NULL gives a null element.
pub fn literal_array(column: &str, col_type: &ArrowType, value: &Literal) -> Result<ArrayRef> {
    if matches!(value, Literal::Null) {
        return Ok(arrow_array::new_null_array(col_type, 1));
    }
    let inexact = || {
        Error::invalid(format!(
            "column '{column}' has type {} which cannot hold the value {value} exactly",
            arrow_type_name(col_type)
        ))
    };
    if let Some(placed) = place_literal(column, col_type, value)? {
        return match placed {
            Placed::Exact(v) => int_scalar(col_type, v),
            _ => Err(inexact()),
        };
    }
    match convert(column, &arrow_array::new_empty_array(col_type), value)? {
        Rhs::Scalar(_, scalar) if scalar.data_type() == col_type => Ok(scalar),
        Rhs::Scalar(_, scalar) => {
            // A cast that cannot keep the value (a BINARY(n) of another length) gives null.
            match arrow_cast::cast(&scalar, col_type) {
                Ok(cast) if cast.null_count() == 0 => Ok(cast),
                _ => Err(inexact()),
            }
        }
        _ => Err(inexact()),
    }
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
    // An empty list: false for a value, null (unknown) for a null row, as for any list without
    // a match; so neither `IN ()` nor `NOT IN ()` keeps a null row (Fluss's `In`/`NotIn` test).
    if values.is_empty() {
        return Ok((0..col.len())
            .map(|i| (!col.is_null(i)).then_some(false))
            .collect());
    }
    let mut acc = all_bool(col.len(), false);
    for v in values {
        let eq = compare(column, col, CompareOp::Eq, v)?;
        acc = arrow_arith::boolean::or_kleene(&acc, &eq)?;
    }
    Ok(acc)
}

/// The shape of a LIKE pattern, for the fast kernels.
#[derive(Debug, PartialEq)]
pub(super) enum LikeShape {
    Exact(String),
    Prefix(String),
    Suffix(String),
    Contains(String),
    General,
}

pub(super) fn like_shape(pattern: &str) -> LikeShape {
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
