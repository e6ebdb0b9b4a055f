//! Conversion between Arrow record batches and rows of [`Datum`], for every Fluss type.
//!
//! Arrow values follow Fluss's Java Arrow writers/readers: TIME is milliseconds of the day
//! scaled to the Arrow unit; TIMESTAMP / TIMESTAMP_LTZ are `millis * unit + nanos / ...`
//! (seconds truncate like Java); reading splits micro/nano timestamps with floor division so
//! pre-1970 values keep `0 <= nanos_of_milli < 1_000_000`. BINARY(n) values shorter than `n`
//! are zero padded into the FixedSizeBinary column.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, Time32MillisecondType, Time32SecondType, Time64MicrosecondType, Time64NanosecondType,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, FixedSizeBinaryArray,
    Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, Int8Array, LargeBinaryArray,
    LargeStringArray, ListArray, MapArray, RecordBatch, RecordBatchOptions, StringArray,
    StructArray, Time32MillisecondArray, Time32SecondArray, Time64MicrosecondArray,
    Time64NanosecondArray, TimestampMicrosecondArray, TimestampMillisecondArray,
    TimestampNanosecondArray, TimestampSecondArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType as ArrowType, Field, SchemaRef, TimeUnit};

use crate::error::{Error, Result};
use crate::metadata::{DataType, TypeKind};

use super::{Datum, TimestampLtz, TimestampNtz};

fn mismatch(t: &DataType, v: &Datum) -> Error {
    Error::invalid(format!("value {} does not match type {t}", v.kind_name()))
}

fn arrow_mismatch(t: &DataType, a: &ArrowType) -> Error {
    Error::invalid(format!("Arrow type {a} cannot hold Fluss type {t}"))
}

/// A placeholder value written under a null parent into a NOT NULL child column.
fn placeholder(t: &DataType) -> Datum {
    match &t.kind {
        TypeKind::Boolean => Datum::Boolean(false),
        TypeKind::TinyInt => Datum::TinyInt(0),
        TypeKind::SmallInt => Datum::SmallInt(0),
        TypeKind::Int => Datum::Int(0),
        TypeKind::BigInt => Datum::BigInt(0),
        TypeKind::Float => Datum::Float(0.0),
        TypeKind::Double => Datum::Double(0.0),
        TypeKind::Decimal { precision, scale } => Datum::Decimal {
            unscaled: 0,
            precision: *precision,
            scale: *scale,
        },
        TypeKind::Char { .. } | TypeKind::String => Datum::String(String::new()),
        TypeKind::Binary { length } => Datum::Binary(vec![0; *length as usize]),
        TypeKind::Bytes => Datum::Binary(Vec::new()),
        TypeKind::Date => Datum::Date(0),
        TypeKind::Time { .. } => Datum::Time(0),
        TypeKind::Timestamp { .. } => Datum::Timestamp(TimestampNtz::default()),
        TypeKind::TimestampLtz { .. } => Datum::TimestampLtz(TimestampLtz::default()),
        TypeKind::Array(_) => Datum::Array(Vec::new()),
        TypeKind::Map(..) => Datum::Map(Vec::new()),
        TypeKind::Row(fields) => {
            Datum::Row(fields.iter().map(|f| placeholder(&f.data_type)).collect())
        }
    }
}

fn ts_parts(t: &DataType, v: &Datum) -> Result<(i64, i32)> {
    match v {
        Datum::Timestamp(ts) => Ok((ts.millis, ts.nanos_of_milli)),
        Datum::TimestampLtz(ts) => Ok((ts.epoch_millis, ts.nanos_of_milli)),
        _ => Err(mismatch(t, v)),
    }
}

fn overflow(t: &DataType) -> Error {
    Error::invalid(format!("timestamp out of range for the Arrow unit of {t}"))
}

fn validity(values: &[&Datum]) -> Option<NullBuffer> {
    if values.iter().any(|v| v.is_null()) {
        Some(NullBuffer::from(
            values.iter().map(|v| !v.is_null()).collect::<Vec<bool>>(),
        ))
    } else {
        None
    }
}

/// Maps every non-null value with `f`, keeping nulls.
fn collect<'a, T>(
    values: &[&'a Datum],
    mut f: impl FnMut(&'a Datum) -> Result<T>,
) -> Result<Vec<Option<T>>> {
    values
        .iter()
        .map(|v| {
            if v.is_null() {
                Ok(None)
            } else {
                f(v).map(Some)
            }
        })
        .collect()
}

fn build_array(field: &Field, t: &DataType, values: &[&Datum]) -> Result<ArrayRef> {
    let at = field.data_type();
    macro_rules! prim {
        ($arr:ty, $pat:pat => $e:expr) => {{
            let v = collect(values, |d| match d {
                $pat => Ok($e),
                other => Err(mismatch(t, other)),
            })?;
            Arc::new(<$arr>::from(v)) as ArrayRef
        }};
    }
    let time_ms = |d: &Datum| match d {
        Datum::Time(ms) => Ok(*ms),
        other => Err(mismatch(t, other)),
    };
    Ok(match (&t.kind, at) {
        (TypeKind::Boolean, ArrowType::Boolean) => prim!(BooleanArray, Datum::Boolean(b) => *b),
        (TypeKind::TinyInt, ArrowType::Int8) => prim!(Int8Array, Datum::TinyInt(x) => *x),
        (TypeKind::SmallInt, ArrowType::Int16) => prim!(Int16Array, Datum::SmallInt(x) => *x),
        (TypeKind::Int, ArrowType::Int32) => prim!(Int32Array, Datum::Int(x) => *x),
        (TypeKind::BigInt, ArrowType::Int64) => prim!(Int64Array, Datum::BigInt(x) => *x),
        (TypeKind::Float, ArrowType::Float32) => prim!(Float32Array, Datum::Float(x) => *x),
        (TypeKind::Double, ArrowType::Float64) => prim!(Float64Array, Datum::Double(x) => *x),
        (TypeKind::Date, ArrowType::Date32) => prim!(Date32Array, Datum::Date(x) => *x),
        (TypeKind::Time { .. }, ArrowType::Time32(TimeUnit::Second)) => {
            Arc::new(Time32SecondArray::from(collect(values, |d| {
                Ok(time_ms(d)? / 1000)
            })?))
        }
        (TypeKind::Time { .. }, ArrowType::Time32(TimeUnit::Millisecond)) => {
            Arc::new(Time32MillisecondArray::from(collect(values, time_ms)?))
        }
        (TypeKind::Time { .. }, ArrowType::Time64(TimeUnit::Microsecond)) => {
            Arc::new(Time64MicrosecondArray::from(collect(values, |d| {
                Ok(time_ms(d)? as i64 * 1000)
            })?))
        }
        (TypeKind::Time { .. }, ArrowType::Time64(TimeUnit::Nanosecond)) => {
            Arc::new(Time64NanosecondArray::from(collect(values, |d| {
                Ok(time_ms(d)? as i64 * 1_000_000)
            })?))
        }
        (
            TypeKind::Timestamp { .. } | TypeKind::TimestampLtz { .. },
            ArrowType::Timestamp(unit, tz),
        ) => {
            let tz = tz.clone();
            match unit {
                TimeUnit::Second => Arc::new(
                    TimestampSecondArray::from(collect(values, |d| Ok(ts_parts(t, d)?.0 / 1000))?)
                        .with_timezone_opt(tz),
                ),
                TimeUnit::Millisecond => Arc::new(
                    TimestampMillisecondArray::from(collect(values, |d| Ok(ts_parts(t, d)?.0))?)
                        .with_timezone_opt(tz),
                ),
                TimeUnit::Microsecond => Arc::new(
                    TimestampMicrosecondArray::from(collect(values, |d| {
                        let (m, n) = ts_parts(t, d)?;
                        m.checked_mul(1000)
                            .and_then(|x| x.checked_add(n as i64 / 1000))
                            .ok_or_else(|| overflow(t))
                    })?)
                    .with_timezone_opt(tz),
                ),
                TimeUnit::Nanosecond => Arc::new(
                    TimestampNanosecondArray::from(collect(values, |d| {
                        let (m, n) = ts_parts(t, d)?;
                        m.checked_mul(1_000_000)
                            .and_then(|x| x.checked_add(n as i64))
                            .ok_or_else(|| overflow(t))
                    })?)
                    .with_timezone_opt(tz),
                ),
            }
        }
        (TypeKind::Decimal { .. }, ArrowType::Decimal128(p, s)) => {
            let v = collect(values, |d| match d {
                Datum::Decimal { unscaled, .. } => Ok(*unscaled),
                other => Err(mismatch(t, other)),
            })?;
            Arc::new(Decimal128Array::from(v).with_precision_and_scale(*p, *s)?)
        }
        (TypeKind::Char { .. } | TypeKind::String, ArrowType::Utf8) => {
            let v = collect(values, |d| match d {
                Datum::String(s) => Ok(s.as_str()),
                other => Err(mismatch(t, other)),
            })?;
            Arc::new(StringArray::from(v))
        }
        (TypeKind::Char { .. } | TypeKind::String, ArrowType::LargeUtf8) => {
            let v = collect(values, |d| match d {
                Datum::String(s) => Ok(s.as_str()),
                other => Err(mismatch(t, other)),
            })?;
            Arc::new(LargeStringArray::from(v))
        }
        (TypeKind::Binary { .. } | TypeKind::Bytes, ArrowType::Binary) => {
            let v = collect(values, |d| match d {
                Datum::Binary(b) => Ok(b.as_slice()),
                other => Err(mismatch(t, other)),
            })?;
            Arc::new(BinaryArray::from(v))
        }
        (TypeKind::Binary { .. } | TypeKind::Bytes, ArrowType::LargeBinary) => {
            let v = collect(values, |d| match d {
                Datum::Binary(b) => Ok(b.as_slice()),
                other => Err(mismatch(t, other)),
            })?;
            Arc::new(LargeBinaryArray::from(v))
        }
        (TypeKind::Binary { .. } | TypeKind::Bytes, ArrowType::FixedSizeBinary(n)) => {
            let n = *n;
            let v = collect(values, |d| match d {
                Datum::Binary(b) if b.len() <= n as usize => {
                    let mut b = b.clone();
                    b.resize(n as usize, 0);
                    Ok(b)
                }
                Datum::Binary(b) => {
                    Err(Error::invalid(format!("{} bytes do not fit {t}", b.len())))
                }
                other => Err(mismatch(t, other)),
            })?;
            if v.is_empty() {
                Arc::new(FixedSizeBinaryArray::new_null(n, 0))
            } else if v.iter().all(Option::is_none) {
                Arc::new(FixedSizeBinaryArray::new_null(n, v.len()))
            } else {
                Arc::new(FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                    v.into_iter(),
                    n,
                )?)
            }
        }
        (TypeKind::Array(e), ArrowType::List(child)) => {
            let mut offsets = Vec::with_capacity(values.len() + 1);
            offsets.push(0i32);
            let mut flat: Vec<&Datum> = Vec::new();
            for v in values {
                match v {
                    Datum::Null => {}
                    Datum::Array(items) => flat.extend(items.iter()),
                    other => return Err(mismatch(t, other)),
                }
                offsets
                    .push(i32::try_from(flat.len()).map_err(|_| Error::invalid("list too long"))?);
            }
            let child_array = build_array(child, e, &flat)?;
            Arc::new(ListArray::try_new(
                child.clone(),
                OffsetBuffer::new(ScalarBuffer::from(offsets)),
                child_array,
                validity(values),
            )?)
        }
        (TypeKind::Map(k, val), ArrowType::Map(entries, sorted)) => {
            let (kf, vf) = match entries.data_type() {
                ArrowType::Struct(f) if f.len() == 2 => (f[0].clone(), f[1].clone()),
                other => return Err(arrow_mismatch(t, other)),
            };
            let mut offsets = Vec::with_capacity(values.len() + 1);
            offsets.push(0i32);
            let mut keys: Vec<&Datum> = Vec::new();
            let mut vals: Vec<&Datum> = Vec::new();
            for v in values {
                match v {
                    Datum::Null => {}
                    Datum::Map(es) => {
                        for (a, b) in es {
                            keys.push(a);
                            vals.push(b);
                        }
                    }
                    other => return Err(mismatch(t, other)),
                }
                offsets
                    .push(i32::try_from(keys.len()).map_err(|_| Error::invalid("map too long"))?);
            }
            let ka = build_array(&kf, k, &keys)?;
            let va = build_array(&vf, val, &vals)?;
            let fields = match entries.data_type() {
                ArrowType::Struct(f) => f.clone(),
                other => return Err(arrow_mismatch(t, other)),
            };
            let st = StructArray::try_new(fields, vec![ka, va], None)?;
            Arc::new(MapArray::try_new(
                entries.clone(),
                OffsetBuffer::new(ScalarBuffer::from(offsets)),
                st,
                validity(values),
                *sorted,
            )?)
        }
        (TypeKind::Row(fields), ArrowType::Struct(afields)) => {
            if fields.len() != afields.len() {
                return Err(arrow_mismatch(t, at));
            }
            let placeholders: Vec<Datum> =
                fields.iter().map(|f| placeholder(&f.data_type)).collect();
            let mut children = Vec::with_capacity(fields.len());
            for (i, (f, af)) in fields.iter().zip(afields.iter()).enumerate() {
                let col: Vec<&Datum> = values
                    .iter()
                    .map(|v| match v {
                        Datum::Row(vals) if vals.len() == fields.len() => Ok(&vals[i]),
                        Datum::Null if !af.is_nullable() => Ok(&placeholders[i]),
                        Datum::Null => Ok(&Datum::Null),
                        other => Err(mismatch(t, other)),
                    })
                    .collect::<Result<_>>()?;
                children.push(build_array(af, &f.data_type, &col)?);
            }
            if fields.is_empty() {
                Arc::new(StructArray::new_empty_fields(
                    values.len(),
                    validity(values),
                ))
            } else {
                Arc::new(StructArray::try_new(
                    afields.clone(),
                    children,
                    validity(values),
                )?)
            }
        }
        _ => return Err(arrow_mismatch(t, at)),
    })
}

/// Builds a record batch of `schema` (Arrow types as [`crate::metadata::Schema::to_arrow`]
/// makes them) from rows whose values follow `types`.
pub fn rows_to_record_batch(
    schema: &SchemaRef,
    types: &[DataType],
    rows: &[Vec<Datum>],
) -> Result<RecordBatch> {
    if types.len() != schema.fields().len() {
        return Err(Error::invalid(format!(
            "{} types for an Arrow schema of {} fields",
            types.len(),
            schema.fields().len()
        )));
    }
    if let Some((i, r)) = rows
        .iter()
        .enumerate()
        .find(|(_, r)| r.len() != types.len())
    {
        return Err(Error::invalid(format!(
            "row {i} has {} values, expected {}",
            r.len(),
            types.len()
        )));
    }
    let mut columns = Vec::with_capacity(types.len());
    for (j, (field, t)) in schema.fields().iter().zip(types).enumerate() {
        let col: Vec<&Datum> = rows.iter().map(|r| &r[j]).collect();
        if !field.is_nullable() {
            if let Some(r) = col.iter().position(|d| d.is_null()) {
                return Err(Error::invalid(format!(
                    "column '{}' is NOT NULL but row {r} has a null",
                    field.name()
                )));
            }
        }
        columns.push(
            build_array(field, t, &col)
                .map_err(|e| e.context(format!("column '{}'", field.name())))?,
        );
    }
    let options = RecordBatchOptions::new().with_row_count(Some(rows.len()));
    Ok(RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &options,
    )?)
}

fn floor_split(v: i64, per_milli: i64) -> (i64, i32) {
    (v.div_euclid(per_milli), v.rem_euclid(per_milli) as i32)
}

fn make_ts(t: &DataType, millis: i64, nanos: i32) -> Datum {
    match t.kind {
        TypeKind::TimestampLtz { .. } => Datum::TimestampLtz(TimestampLtz {
            epoch_millis: millis,
            nanos_of_milli: nanos,
        }),
        _ => Datum::Timestamp(TimestampNtz {
            millis,
            nanos_of_milli: nanos,
        }),
    }
}

/// The value at `row` of `array`, as a [`Datum`] of Fluss type `t`.
pub fn datum_from_array(array: &dyn Array, row: usize, t: &DataType) -> Result<Datum> {
    if row >= array.len() {
        return Err(Error::invalid(format!(
            "row {row} out of range for an array of {} values",
            array.len()
        )));
    }
    if array.is_null(row) {
        return Ok(Datum::Null);
    }
    let at = array.data_type();
    Ok(match (&t.kind, at) {
        (TypeKind::Boolean, ArrowType::Boolean) => Datum::Boolean(array.as_boolean().value(row)),
        (TypeKind::TinyInt, ArrowType::Int8) => {
            Datum::TinyInt(array.as_primitive::<Int8Type>().value(row))
        }
        (TypeKind::SmallInt, ArrowType::Int16) => {
            Datum::SmallInt(array.as_primitive::<Int16Type>().value(row))
        }
        (TypeKind::Int, ArrowType::Int32) => {
            Datum::Int(array.as_primitive::<Int32Type>().value(row))
        }
        (TypeKind::BigInt, ArrowType::Int64) => {
            Datum::BigInt(array.as_primitive::<Int64Type>().value(row))
        }
        (TypeKind::Float, ArrowType::Float32) => {
            Datum::Float(array.as_primitive::<Float32Type>().value(row))
        }
        (TypeKind::Double, ArrowType::Float64) => {
            Datum::Double(array.as_primitive::<Float64Type>().value(row))
        }
        (TypeKind::Date, ArrowType::Date32) => {
            Datum::Date(array.as_primitive::<Date32Type>().value(row))
        }
        (TypeKind::Time { .. }, ArrowType::Time32(TimeUnit::Second)) => Datum::Time(
            array
                .as_primitive::<Time32SecondType>()
                .value(row)
                .wrapping_mul(1000),
        ),
        (TypeKind::Time { .. }, ArrowType::Time32(TimeUnit::Millisecond)) => {
            Datum::Time(array.as_primitive::<Time32MillisecondType>().value(row))
        }
        (TypeKind::Time { .. }, ArrowType::Time64(TimeUnit::Microsecond)) => Datum::Time(
            array
                .as_primitive::<Time64MicrosecondType>()
                .value(row)
                .div_euclid(1000) as i32,
        ),
        (TypeKind::Time { .. }, ArrowType::Time64(TimeUnit::Nanosecond)) => Datum::Time(
            array
                .as_primitive::<Time64NanosecondType>()
                .value(row)
                .div_euclid(1_000_000) as i32,
        ),
        (
            TypeKind::Timestamp { .. } | TypeKind::TimestampLtz { .. },
            ArrowType::Timestamp(unit, _),
        ) => match unit {
            TimeUnit::Second => {
                let s = array.as_primitive::<TimestampSecondType>().value(row);
                make_ts(t, s.checked_mul(1000).ok_or_else(|| overflow(t))?, 0)
            }
            TimeUnit::Millisecond => make_ts(
                t,
                array.as_primitive::<TimestampMillisecondType>().value(row),
                0,
            ),
            TimeUnit::Microsecond => {
                let (m, r) = floor_split(
                    array.as_primitive::<TimestampMicrosecondType>().value(row),
                    1000,
                );
                make_ts(t, m, r * 1000)
            }
            TimeUnit::Nanosecond => {
                let (m, r) = floor_split(
                    array.as_primitive::<TimestampNanosecondType>().value(row),
                    1_000_000,
                );
                make_ts(t, m, r)
            }
        },
        (TypeKind::Decimal { precision, scale }, ArrowType::Decimal128(_, s)) => {
            if *s as i64 != *scale as i64 {
                return Err(arrow_mismatch(t, at));
            }
            Datum::Decimal {
                unscaled: array.as_primitive::<Decimal128Type>().value(row),
                precision: *precision,
                scale: *scale,
            }
        }
        (TypeKind::Char { .. } | TypeKind::String, ArrowType::Utf8) => {
            Datum::String(array.as_string::<i32>().value(row).to_string())
        }
        (TypeKind::Char { .. } | TypeKind::String, ArrowType::LargeUtf8) => {
            Datum::String(array.as_string::<i64>().value(row).to_string())
        }
        (TypeKind::Char { .. } | TypeKind::String, ArrowType::Utf8View) => {
            Datum::String(array.as_string_view().value(row).to_string())
        }
        (TypeKind::Binary { .. } | TypeKind::Bytes, ArrowType::Binary) => {
            Datum::Binary(array.as_binary::<i32>().value(row).to_vec())
        }
        (TypeKind::Binary { .. } | TypeKind::Bytes, ArrowType::LargeBinary) => {
            Datum::Binary(array.as_binary::<i64>().value(row).to_vec())
        }
        (TypeKind::Binary { .. } | TypeKind::Bytes, ArrowType::FixedSizeBinary(_)) => {
            Datum::Binary(array.as_fixed_size_binary().value(row).to_vec())
        }
        (TypeKind::Array(e), ArrowType::List(_)) => {
            let items = array.as_list::<i32>().value(row);
            Datum::Array(
                (0..items.len())
                    .map(|i| datum_from_array(items.as_ref(), i, e))
                    .collect::<Result<_>>()?,
            )
        }
        (TypeKind::Array(e), ArrowType::LargeList(_)) => {
            let items = array.as_list::<i64>().value(row);
            Datum::Array(
                (0..items.len())
                    .map(|i| datum_from_array(items.as_ref(), i, e))
                    .collect::<Result<_>>()?,
            )
        }
        (TypeKind::Map(k, v), ArrowType::Map(..)) => {
            let entries = array.as_map().value(row);
            if entries.num_columns() != 2 {
                return Err(arrow_mismatch(t, at));
            }
            let (ka, va) = (entries.column(0), entries.column(1));
            Datum::Map(
                (0..entries.len())
                    .map(|i| {
                        Ok((
                            datum_from_array(ka.as_ref(), i, k)?,
                            datum_from_array(va.as_ref(), i, v)?,
                        ))
                    })
                    .collect::<Result<_>>()?,
            )
        }
        (TypeKind::Row(fields), ArrowType::Struct(afields)) => {
            if fields.len() != afields.len() {
                return Err(arrow_mismatch(t, at));
            }
            let s = array.as_struct();
            Datum::Row(
                fields
                    .iter()
                    .enumerate()
                    .map(|(i, f)| datum_from_array(s.column(i).as_ref(), row, &f.data_type))
                    .collect::<Result<_>>()?,
            )
        }
        _ => return Err(arrow_mismatch(t, at)),
    })
}

/// Every row of `batch` as values of `types` (one type per column).
pub fn record_batch_to_rows(batch: &RecordBatch, types: &[DataType]) -> Result<Vec<Vec<Datum>>> {
    if types.len() != batch.num_columns() {
        return Err(Error::invalid(format!(
            "{} types for a batch of {} columns",
            types.len(),
            batch.num_columns()
        )));
    }
    (0..batch.num_rows())
        .map(|r| {
            batch
                .columns()
                .iter()
                .zip(types)
                .map(|(c, t)| datum_from_array(c.as_ref(), r, t))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{DataField, Schema};
    use crate::row::test_support::*;
    use proptest::prelude::*;

    fn schema_of(types: &[DataType]) -> Schema {
        types
            .iter()
            .enumerate()
            .fold(Schema::builder(), |b, (i, t)| {
                b.column(format!("c{i}"), t.clone())
            })
            .build()
            .unwrap()
    }

    #[test]
    fn golden_row_round_trips_through_arrow() {
        let (mut types, mut values) = all_types_key_golden();
        // BINARY(20) comes back zero padded to its fixed size.
        values[9] = Datum::Binary(b"1234567890\0\0\0\0\0\0\0\0\0\0".to_vec());
        types.push(DataType::map(DataType::int(), DataType::string()));
        values.push(Datum::Map(vec![
            (Datum::Int(0), Datum::Null),
            (Datum::Int(1), Datum::from("1")),
            (Datum::Int(2), Datum::from("2")),
        ]));
        types.push(DataType::row(vec![
            DataField::new("a", DataType::int()),
            DataField::new(
                "b",
                DataType::row(vec![DataField::new("x", DataType::int())]),
            ),
            DataField::new("c", DataType::string()),
        ]));
        values.push(Datum::Row(vec![
            Datum::Int(123),
            Datum::Row(vec![Datum::Int(22)]),
            Datum::from("Test"),
        ]));
        let mut nulls: Vec<Datum> = types
            .iter()
            .map(|t| {
                if t.nullable {
                    Datum::Null
                } else {
                    placeholder(t)
                }
            })
            .collect();
        nulls[0] = Datum::Boolean(false);
        let schema = schema_of(&types).to_arrow();
        let rows = vec![values, nulls];
        let batch = rows_to_record_batch(&schema, &types, &rows).unwrap();
        assert_eq!(batch.num_rows(), 2);
        assert_eq!(record_batch_to_rows(&batch, &types).unwrap(), rows);
    }

    #[test]
    fn timestamps_use_java_units() {
        let types = [
            DataType::timestamp(6),
            DataType::timestamp_ltz(9),
            DataType::time(0),
        ];
        let schema = schema_of(&types).to_arrow();
        let rows = vec![vec![
            Datum::Timestamp(TimestampNtz {
                millis: -1,
                nanos_of_milli: 5000,
            }),
            Datum::TimestampLtz(TimestampLtz {
                epoch_millis: 1,
                nanos_of_milli: 7,
            }),
            Datum::Time(3_000),
        ]];
        let batch = rows_to_record_batch(&schema, &types, &rows).unwrap();
        assert_eq!(
            batch
                .column(0)
                .as_primitive::<TimestampMicrosecondType>()
                .value(0),
            -995
        );
        assert_eq!(
            batch
                .column(1)
                .as_primitive::<TimestampNanosecondType>()
                .value(0),
            1_000_007
        );
        assert_eq!(
            batch.column(2).as_primitive::<Time32SecondType>().value(0),
            3
        );
        assert_eq!(record_batch_to_rows(&batch, &types).unwrap(), rows);
    }

    #[test]
    fn errors_not_panics() {
        let types = [DataType::int().not_null()];
        let schema = schema_of(&types).to_arrow();
        assert!(rows_to_record_batch(&schema, &types, &[vec![Datum::Null]]).is_err());
        assert!(rows_to_record_batch(&schema, &types, &[vec![Datum::from("x")]]).is_err());
        assert!(rows_to_record_batch(&schema, &types, &[vec![]]).is_err());
        let batch = rows_to_record_batch(&schema, &types, &[vec![Datum::Int(1)]]).unwrap();
        assert!(datum_from_array(batch.column(0).as_ref(), 5, &types[0]).is_err());
        assert!(datum_from_array(batch.column(0).as_ref(), 0, &DataType::string()).is_err());
        let empty = rows_to_record_batch(&schema, &types, &[]).unwrap();
        assert_eq!(empty.num_rows(), 0);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(150))]

        #[test]
        fn batch_round_trip_every_type((types, rows) in typed_rows(6)) {
            let schema = schema_of(&types).to_arrow();
            let batch = rows_to_record_batch(&schema, &types, &rows).unwrap();
            prop_assert_eq!(batch.num_rows(), rows.len());
            prop_assert_eq!(record_batch_to_rows(&batch, &types).unwrap(), rows);
        }
    }
}
