//! The statistics block of Fluss 1.0 log batches (`LogRecordBatchStatisticsWriter` /
//! `LogRecordBatchStatisticsParser`): per-column min, max and null count of the batch's rows.
//!
//! Layout (little-endian):
//!
//! ```text
//! version u8 (= 1) | column count i16 (N) | column indexes i16 × N | null counts i32 × N
//! | min row size i32 | min row (AlignedRow of the N columns)
//! | max row size i32 | max row (AlignedRow of the N columns)
//! ```
//!
//! The column indexes point into the schema the batch was written with. An AlignedRow of
//! arity N is a null bit set of `((N + 63 + 8) / 64) × 8` bytes (bit `i + 8` = field i is
//! null; the first 8 bits are the row-kind header, 0), then one 8-byte slot per field, then a
//! variable part. Fixed-size values sit in the slot's low bytes (rest zero); strings of at most
//! 7 bytes are inlined (bytes in the slot, slot byte 7 = `0x80 | len`), longer ones go to the
//! variable part padded to 8 bytes with `offset << 32 | len` in the slot (offset from the row
//! start); a DECIMAL of precision ≤ 18 stores its unscaled i64, a larger one 16 variable bytes
//! holding the big-endian two's-complement unscaled value (`offset << 32 | byte length`); a
//! TIMESTAMP / TIMESTAMP_LTZ of precision ≤ 3 stores epoch millis, a finer one 8 variable bytes
//! of millis with `offset << 32 | nano-of-milli` in the slot. A column whose values are all
//! null has null min and max, and so does a CHAR column (Fluss's collector keeps only its null
//! count).

use std::cmp::Ordering;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, Time32MillisecondType, Time32SecondType, Time64MicrosecondType, Time64NanosecondType,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{Array, ArrowPrimitiveType, RecordBatch};

use crate::metadata::{DataType, TypeKind};
use crate::{Error, Result};

/// The statistics format version Fluss 1.0 writes and reads.
pub const STATISTICS_VERSION: u8 = 1;

/// A min or max value, in the representation Fluss compares it in.
#[derive(Debug, Clone, PartialEq)]
pub enum StatValue {
    /// BOOLEAN (false < true).
    Bool(bool),
    /// TINYINT, SMALLINT, INT, BIGINT, DATE (days) and TIME (millis of the day).
    Long(i64),
    /// FLOAT and DOUBLE, in Java's `Float.compare` / `Double.compare` order.
    Float(f64),
    /// CHAR and STRING, compared byte-wise (UTF-8).
    Str(String),
    /// DECIMAL as its unscaled value at the column's scale.
    Decimal(i128),
    /// TIMESTAMP and TIMESTAMP_LTZ: epoch millis and nano-of-milli.
    Timestamp {
        /// Milliseconds since the epoch.
        millis: i64,
        /// Nanoseconds within the millisecond, 0..999_999.
        nanos: i32,
    },
}

impl StatValue {
    /// Orders two values of the same column; `None` for values of different kinds.
    pub fn compare(&self, other: &StatValue) -> Option<Ordering> {
        use StatValue::*;
        Some(match (self, other) {
            (Bool(a), Bool(b)) => a.cmp(b),
            (Long(a), Long(b)) => a.cmp(b),
            (Float(a), Float(b)) => java_float_cmp(*a, *b),
            (Str(a), Str(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Decimal(a), Decimal(b)) => a.cmp(b),
            (
                Timestamp {
                    millis: am,
                    nanos: an,
                },
                Timestamp {
                    millis: bm,
                    nanos: bn,
                },
            ) => (am, an).cmp(&(bm, bn)),
            _ => return None,
        })
    }
}

// Java's Double.compare: every NaN is one value greater than +inf, and -0.0 < 0.0.
fn java_float_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.total_cmp(&b),
    }
}

/// Whether Fluss collects statistics for columns of this type
/// (`DataTypeChecks.isSupportedStatisticsType`).
pub fn is_supported_statistics_type(t: &DataType) -> bool {
    matches!(
        t.kind,
        TypeKind::Boolean
            | TypeKind::TinyInt
            | TypeKind::SmallInt
            | TypeKind::Int
            | TypeKind::BigInt
            | TypeKind::Float
            | TypeKind::Double
            | TypeKind::String
            | TypeKind::Char { .. }
            | TypeKind::Decimal { .. }
            | TypeKind::Date
            | TypeKind::Time { .. }
            | TypeKind::Timestamp { .. }
            | TypeKind::TimestampLtz { .. }
    )
}

/// The statistics of one log batch.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchStatistics {
    /// Indexes (in the batch's schema) of the columns with statistics, in stored order.
    pub columns: Vec<usize>,
    /// Null count of each statistics column.
    pub null_counts: Vec<i32>,
    /// Minimum of each statistics column (None when every value is null).
    pub min: Vec<Option<StatValue>>,
    /// Maximum of each statistics column (None when every value is null).
    pub max: Vec<Option<StatValue>>,
}

impl BatchStatistics {
    /// The position among the statistics columns of schema column `index`.
    pub fn position_of(&self, index: usize) -> Option<usize> {
        self.columns.iter().position(|c| *c == index)
    }

    /// Computes the statistics of `columns` (indexes into `types` and the batch's columns) of an
    /// Arrow batch in the table's layout; `None` for an empty batch or no columns.
    pub fn compute(
        batch: &RecordBatch,
        types: &[DataType],
        columns: &[usize],
    ) -> Result<Option<BatchStatistics>> {
        if columns.is_empty() || batch.num_rows() == 0 {
            return Ok(None);
        }
        let mut s = BatchStatistics {
            columns: columns.to_vec(),
            null_counts: Vec::with_capacity(columns.len()),
            min: Vec::with_capacity(columns.len()),
            max: Vec::with_capacity(columns.len()),
        };
        for &c in columns {
            let (array, t) = match (batch.columns().get(c), types.get(c)) {
                (Some(a), Some(t)) => (a.as_ref(), t),
                _ => {
                    return Err(Error::invalid(format!(
                        "statistics column {c} is not in a batch of {} columns",
                        batch.num_columns()
                    )))
                }
            };
            let values = column_values(array, t)?;
            let mut lo: Option<StatValue> = None;
            let mut hi: Option<StatValue> = None;
            for v in values.into_iter().flatten() {
                if lo
                    .as_ref()
                    .is_none_or(|m| v.compare(m) == Some(Ordering::Less))
                {
                    lo = Some(v.clone());
                }
                if hi
                    .as_ref()
                    .is_none_or(|m| v.compare(m) == Some(Ordering::Greater))
                {
                    hi = Some(v);
                }
            }
            s.null_counts
                .push(i32::try_from(array.null_count()).unwrap_or(i32::MAX));
            s.min.push(lo);
            s.max.push(hi);
        }
        Ok(Some(s))
    }

    /// Encodes the statistics block; `types` are the batch schema's column types.
    pub fn encode(&self, types: &[DataType]) -> Result<Vec<u8>> {
        let n = self.columns.len();
        let count = i16::try_from(n)
            .map_err(|_| Error::invalid(format!("{n} statistics columns are too many")))?;
        let col_types = self
            .columns
            .iter()
            .map(|c| {
                types.get(*c).ok_or_else(|| {
                    Error::invalid(format!("statistics column {c} is not in the schema"))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let mut out = vec![STATISTICS_VERSION];
        out.extend_from_slice(&count.to_le_bytes());
        for c in &self.columns {
            let c = i16::try_from(*c)
                .map_err(|_| Error::invalid(format!("statistics column {c} is out of range")))?;
            out.extend_from_slice(&c.to_le_bytes());
        }
        for nc in &self.null_counts {
            out.extend_from_slice(&nc.to_le_bytes());
        }
        for row in [&self.min, &self.max] {
            let bytes = encode_aligned_row(row, &col_types)?;
            out.extend_from_slice(&(bytes.len() as i32).to_le_bytes());
            out.extend_from_slice(&bytes);
        }
        Ok(out)
    }

    /// Decodes a statistics block of a batch whose schema has the column `types`. An unknown
    /// version or malformed bytes are [`ErrorKind::Corrupt`](crate::ErrorKind::Corrupt).
    pub fn decode(bytes: &[u8], types: &[DataType]) -> Result<BatchStatistics> {
        let bad = |what: &str| Error::corrupt(format!("batch statistics: {what}"));
        let mut r = Reader { b: bytes, pos: 0 };
        let version = r.u8().ok_or_else(|| bad("empty"))?;
        if version != STATISTICS_VERSION {
            return Err(bad(&format!("unknown version {version}")));
        }
        let n = r.i16().ok_or_else(|| bad("truncated column count"))?;
        let n = usize::try_from(n)
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| bad(&format!("column count {n}")))?;
        let mut columns = Vec::with_capacity(n.min(bytes.len()));
        for _ in 0..n {
            let c = r.i16().ok_or_else(|| bad("truncated column indexes"))?;
            let c = usize::try_from(c)
                .ok()
                .filter(|c| *c < types.len())
                .ok_or_else(|| {
                    bad(&format!(
                        "column index {c} outside the {} columns of the schema",
                        types.len()
                    ))
                })?;
            columns.push(c);
        }
        let mut null_counts = Vec::with_capacity(n);
        for _ in 0..n {
            null_counts.push(r.i32().ok_or_else(|| bad("truncated null counts"))?);
        }
        let col_types: Vec<&DataType> = columns.iter().map(|c| &types[*c]).collect();
        let mut rows = Vec::with_capacity(2);
        for which in ["min", "max"] {
            let size = r
                .i32()
                .and_then(|s| usize::try_from(s).ok())
                .ok_or_else(|| bad(&format!("{which} row size")))?;
            let row = r
                .take(size)
                .ok_or_else(|| bad(&format!("{which} row of {size} bytes is truncated")))?;
            rows.push(decode_aligned_row(row, &col_types).map_err(|e| e.context(which))?);
        }
        let max = rows.pop().unwrap_or_default();
        let min = rows.pop().unwrap_or_default();
        Ok(BatchStatistics {
            columns,
            null_counts,
            min,
            max,
        })
    }
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|s| s[0])
    }
    fn i16(&mut self) -> Option<i16> {
        self.take(2).map(|s| i16::from_le_bytes([s[0], s[1]]))
    }
    fn i32(&mut self) -> Option<i32> {
        self.take(4)
            .map(|s| i32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
}

fn unit_values<T: ArrowPrimitiveType>(
    array: &dyn Array,
    f: impl Fn(T::Native) -> StatValue,
) -> Result<Vec<Option<StatValue>>> {
    let a = array
        .as_primitive_opt::<T>()
        .ok_or_else(|| Error::invalid(format!("unexpected Arrow type {}", array.data_type())))?;
    Ok(a.iter().map(|v| v.map(&f)).collect())
}

fn ts_parts(v: i64, per_milli: i64) -> StatValue {
    StatValue::Timestamp {
        millis: v.div_euclid(per_milli),
        nanos: (v.rem_euclid(per_milli) * (1_000_000 / per_milli)) as i32,
    }
}

/// The column's values in statistics form (None for nulls).
fn column_values(array: &dyn Array, t: &DataType) -> Result<Vec<Option<StatValue>>> {
    use arrow_schema::{DataType as A, TimeUnit as U};
    let long = |v: i64| StatValue::Long(v);
    match (&t.kind, array.data_type()) {
        (TypeKind::Boolean, A::Boolean) => Ok(array
            .as_boolean()
            .iter()
            .map(|v| v.map(StatValue::Bool))
            .collect()),
        (TypeKind::TinyInt, _) => unit_values::<Int8Type>(array, |v| long(v.into())),
        (TypeKind::SmallInt, _) => unit_values::<Int16Type>(array, |v| long(v.into())),
        (TypeKind::Int, _) => unit_values::<Int32Type>(array, |v| long(v.into())),
        (TypeKind::BigInt, _) => unit_values::<Int64Type>(array, long),
        (TypeKind::Date, _) => unit_values::<Date32Type>(array, |v| long(v.into())),
        (TypeKind::Float, _) => unit_values::<Float32Type>(array, |v| StatValue::Float(v.into())),
        (TypeKind::Double, _) => unit_values::<Float64Type>(array, StatValue::Float),
        (TypeKind::Time { .. }, A::Time32(U::Second)) => {
            unit_values::<Time32SecondType>(array, |v| long(i64::from(v) * 1000))
        }
        (TypeKind::Time { .. }, A::Time32(_)) => {
            unit_values::<Time32MillisecondType>(array, |v| long(v.into()))
        }
        (TypeKind::Time { .. }, A::Time64(U::Microsecond)) => {
            unit_values::<Time64MicrosecondType>(array, |v| long(v.div_euclid(1000)))
        }
        (TypeKind::Time { .. }, A::Time64(_)) => {
            unit_values::<Time64NanosecondType>(array, |v| long(v.div_euclid(1_000_000)))
        }
        // Fluss's collector keeps no min/max for CHAR (only its null count).
        (TypeKind::Char { .. }, _) => Ok(vec![None; array.len()]),
        (TypeKind::String, A::Utf8) => Ok(array
            .as_string::<i32>()
            .iter()
            .map(|v| v.map(|s| StatValue::Str(s.to_string())))
            .collect()),
        (TypeKind::Decimal { .. }, _) => unit_values::<Decimal128Type>(array, StatValue::Decimal),
        (TypeKind::Timestamp { .. } | TypeKind::TimestampLtz { .. }, A::Timestamp(u, _)) => match u
        {
            U::Second => unit_values::<TimestampSecondType>(array, |v| StatValue::Timestamp {
                millis: v * 1000,
                nanos: 0,
            }),
            U::Millisecond => {
                unit_values::<TimestampMillisecondType>(array, |v| StatValue::Timestamp {
                    millis: v,
                    nanos: 0,
                })
            }
            U::Microsecond => unit_values::<TimestampMicrosecondType>(array, |v| ts_parts(v, 1000)),
            U::Nanosecond => {
                unit_values::<TimestampNanosecondType>(array, |v| ts_parts(v, 1_000_000))
            }
        },
        _ => Err(Error::invalid(format!(
            "statistics are not collected for a {} column (Arrow {})",
            t,
            array.data_type()
        ))),
    }
}

fn null_bits_width(arity: usize) -> usize {
    (arity + 63 + 8) / 64 * 8
}

fn is_compact_decimal(t: &DataType) -> bool {
    matches!(t.kind, TypeKind::Decimal { precision, .. } if precision <= 18)
}

fn is_compact_timestamp(t: &DataType) -> bool {
    matches!(
        t.kind,
        TypeKind::Timestamp { precision } | TypeKind::TimestampLtz { precision } if precision <= 3
    )
}

/// The big-endian two's-complement bytes of `v` with no redundant sign bytes
/// (Java's `BigInteger.toByteArray`).
fn minimal_be_bytes(v: i128) -> Vec<u8> {
    let b = v.to_be_bytes();
    let mut start = 0;
    while start < 15 {
        let (cur, next) = (b[start], b[start + 1]);
        if (cur == 0 && next & 0x80 == 0) || (cur == 0xFF && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    b[start..].to_vec()
}

fn encode_aligned_row(values: &[Option<StatValue>], types: &[&DataType]) -> Result<Vec<u8>> {
    let n = values.len();
    let bits = null_bits_width(n);
    let mut out = vec![0u8; bits + 8 * n];
    for (i, (v, t)) in values.iter().zip(types).enumerate() {
        let slot = bits + 8 * i;
        let Some(v) = v else {
            let bit = i + 8;
            out[bit / 8] |= 1 << (bit % 8);
            continue;
        };
        let put = |out: &mut Vec<u8>, bytes: &[u8]| {
            out[slot..slot + bytes.len()].copy_from_slice(bytes);
        };
        let append = |out: &mut Vec<u8>, bytes: &[u8], padded: usize| -> i64 {
            let at = out.len();
            out.extend_from_slice(bytes);
            out.resize(at + padded, 0);
            (at as i64) << 32
        };
        match (v, &t.kind) {
            (StatValue::Bool(b), _) => put(&mut out, &[u8::from(*b)]),
            (StatValue::Long(x), TypeKind::TinyInt) => put(&mut out, &(*x as i8).to_le_bytes()),
            (StatValue::Long(x), TypeKind::SmallInt) => put(&mut out, &(*x as i16).to_le_bytes()),
            (StatValue::Long(x), TypeKind::BigInt) => put(&mut out, &x.to_le_bytes()),
            (StatValue::Long(x), _) => put(&mut out, &(*x as i32).to_le_bytes()),
            (StatValue::Float(x), TypeKind::Float) => put(&mut out, &(*x as f32).to_le_bytes()),
            (StatValue::Float(x), _) => put(&mut out, &x.to_le_bytes()),
            (StatValue::Str(s), _) => {
                let b = s.as_bytes();
                if b.len() <= 7 {
                    let mut word = [0u8; 8];
                    word[..b.len()].copy_from_slice(b);
                    word[7] = 0x80 | b.len() as u8;
                    put(&mut out, &word);
                } else {
                    let packed = append(&mut out, b, b.len().div_ceil(8) * 8) | b.len() as i64;
                    put(&mut out, &packed.to_le_bytes());
                }
            }
            (StatValue::Decimal(u), _) if is_compact_decimal(t) => {
                put(&mut out, &(*u as i64).to_le_bytes())
            }
            (StatValue::Decimal(u), _) => {
                let b = minimal_be_bytes(*u);
                let packed = append(&mut out, &b, 16) | b.len() as i64;
                put(&mut out, &packed.to_le_bytes());
            }
            (StatValue::Timestamp { millis, .. }, _) if is_compact_timestamp(t) => {
                put(&mut out, &millis.to_le_bytes())
            }
            (StatValue::Timestamp { millis, nanos }, _) => {
                let packed = append(&mut out, &millis.to_le_bytes(), 8) | i64::from(*nanos);
                put(&mut out, &packed.to_le_bytes());
            }
        }
    }
    Ok(out)
}

fn decode_aligned_row(row: &[u8], types: &[&DataType]) -> Result<Vec<Option<StatValue>>> {
    let n = types.len();
    let bits = null_bits_width(n);
    if row.len() < bits + 8 * n {
        return Err(Error::corrupt(format!(
            "batch statistics row of {} bytes is shorter than its {n} fields",
            row.len()
        )));
    }
    let var = |word: i64, len: usize| -> Result<&[u8]> {
        let off = (word >> 32) as usize;
        row.get(off..off.saturating_add(len)).ok_or_else(|| {
            Error::corrupt(format!(
                "batch statistics value at {off}+{len} outside its {}-byte row",
                row.len()
            ))
        })
    };
    let mut out = Vec::with_capacity(n);
    for (i, t) in types.iter().enumerate() {
        let bit = i + 8;
        if row[bit / 8] & (1 << (bit % 8)) != 0 {
            out.push(None);
            continue;
        }
        let s = &row[bits + 8 * i..bits + 8 * i + 8];
        let word = i64::from_le_bytes(s.try_into().unwrap_or_default());
        let v = match &t.kind {
            TypeKind::Boolean => StatValue::Bool(s[0] != 0),
            TypeKind::TinyInt => StatValue::Long(i64::from(s[0] as i8)),
            TypeKind::SmallInt => StatValue::Long(i64::from(i16::from_le_bytes([s[0], s[1]]))),
            TypeKind::Int | TypeKind::Date | TypeKind::Time { .. } => {
                StatValue::Long(i64::from(i32::from_le_bytes([s[0], s[1], s[2], s[3]])))
            }
            TypeKind::BigInt => StatValue::Long(word),
            TypeKind::Float => {
                StatValue::Float(f64::from(f32::from_le_bytes([s[0], s[1], s[2], s[3]])))
            }
            TypeKind::Double => StatValue::Float(f64::from_bits(word as u64)),
            TypeKind::Char { .. } | TypeKind::String => {
                let bytes = if s[7] & 0x80 != 0 {
                    let len = usize::from(s[7] & 0x7F).min(7);
                    &s[..len]
                } else {
                    var(word, (word & 0xFFFF_FFFF) as usize)?
                };
                StatValue::Str(String::from_utf8(bytes.to_vec()).map_err(|_| {
                    Error::corrupt("batch statistics string is not UTF-8".to_string())
                })?)
            }
            TypeKind::Decimal { .. } if is_compact_decimal(t) => StatValue::Decimal(word.into()),
            TypeKind::Decimal { .. } => {
                let len = (word & 0xFFFF_FFFF) as usize;
                if len == 0 || len > 16 {
                    return Err(Error::corrupt(format!(
                        "batch statistics decimal of {len} bytes"
                    )));
                }
                let b = var(word, len)?;
                let mut full = if b[0] & 0x80 != 0 {
                    [0xFFu8; 16]
                } else {
                    [0u8; 16]
                };
                full[16 - len..].copy_from_slice(b);
                StatValue::Decimal(i128::from_be_bytes(full))
            }
            TypeKind::Timestamp { .. } | TypeKind::TimestampLtz { .. }
                if is_compact_timestamp(t) =>
            {
                StatValue::Timestamp {
                    millis: word,
                    nanos: 0,
                }
            }
            TypeKind::Timestamp { .. } | TypeKind::TimestampLtz { .. } => {
                let m = var(word, 8)?;
                StatValue::Timestamp {
                    millis: i64::from_le_bytes(m.try_into().unwrap_or_default()),
                    nanos: (word & 0xFFFF_FFFF) as i32,
                }
            }
            _ => {
                return Err(Error::corrupt(format!(
                    "batch statistics for a {t} column, a type without statistics"
                )))
            }
        };
        out.push(Some(v));
    }
    Ok(out)
}

/// The columns `table.statistics.columns` selects in a schema with these column `names` and
/// `types`: `None` when the option is absent; `*` = every column of a supported type (`None`
/// when there is none); otherwise the comma-separated names in the table's column order.
/// Errors (Fluss's messages) for primary-key tables, an empty list, unknown columns and
/// columns of unsupported types.
pub fn statistics_columns(
    option: Option<&str>,
    names: &[&str],
    types: &[DataType],
    has_primary_key: bool,
) -> Result<Option<Vec<usize>>> {
    let Some(option) = option else {
        return Ok(None);
    };
    if has_primary_key {
        return Err(Error::from_fluss(
            crate::error::codes::INVALID_CONFIG_EXCEPTION,
            format!(
                "Statistics columns are not supported for primary key tables. Please remove \
                 the '{STATISTICS_COLUMNS_OPTION}' property."
            ),
        ));
    }
    if option.trim() == "*" {
        let all: Vec<usize> = (0..types.len())
            .filter(|i| is_supported_statistics_type(&types[*i]))
            .collect();
        return Ok((!all.is_empty()).then_some(all));
    }
    let wanted: Vec<&str> = option
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if wanted.is_empty() {
        return Err(Error::from_fluss(
            crate::error::codes::INVALID_CONFIG_EXCEPTION,
            "Statistics columns configuration cannot be empty. Use '*' to collect statistics \
             for all supported columns, or remove the property to disable statistics collection.",
        ));
    }
    for w in &wanted {
        let Some(i) = names.iter().position(|n| n == w) else {
            return Err(Error::from_fluss(
                crate::error::codes::INVALID_CONFIG_EXCEPTION,
                format!("Column '{w}' specified in statistics collection does not exist in table schema"),
            ));
        };
        if !is_supported_statistics_type(&types[i]) {
            return Err(Error::from_fluss(
                crate::error::codes::INVALID_CONFIG_EXCEPTION,
                format!(
                    "Column '{w}' of type '{}' is not supported for statistics collection. \
                     Supported types are: BOOLEAN, TINYINT, SMALLINT, INTEGER, BIGINT, FLOAT, \
                     DOUBLE, STRING, CHAR, DECIMAL, DATE, TIME, TIMESTAMP, and TIMESTAMP_LTZ.",
                    types[i]
                ),
            ));
        }
    }
    Ok(Some(
        (0..names.len())
            .filter(|i| wanted.contains(&names[*i]))
            .collect(),
    ))
}

/// The table option that selects statistics columns.
pub const STATISTICS_COLUMNS_OPTION: &str = "table.statistics.columns";
