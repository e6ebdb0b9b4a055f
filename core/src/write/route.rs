//! Shared write-side helpers: conforming a batch to the table's Arrow schema, partition names
//! per row, bucket ids, and splitting a batch into bucket-sized pieces.

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Int16Type, Int32Type, Int64Type, Int8Type};
use arrow_array::{Array, ArrayRef, RecordBatch, UInt32Array};
use arrow_schema::{DataType as ArrowType, SchemaRef};

use super::core::{Piece, PiecePayload};
use crate::client::Table;
use crate::metadata::{PartitionSpec, TablePath};
use crate::row::partition_value::{datum_partition_value, day_string, hex};
use crate::row::Datum;
use crate::{Error, Result};

fn string_like(t: &ArrowType) -> bool {
    matches!(
        t,
        ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View
    )
}

fn binary_like(t: &ArrowType) -> bool {
    matches!(
        t,
        ArrowType::Binary | ArrowType::LargeBinary | ArrowType::BinaryView
    )
}

/// Whether a column of type `from` can be written to a column of type `to` without losing
/// anything: the same type up to field names, another string or binary encoding, a dictionary
/// of a compatible type, a timestamp that differs only in its time-zone label, or another
/// integer width (checked value by value when cast: Python, pandas and polars give 64-bit
/// integers by default, and a value that does not fit is an error, never a wrap).
pub(crate) fn compatible(from: &ArrowType, to: &ArrowType) -> bool {
    if from == to || from.equals_datatype(to) {
        return true;
    }
    match (from, to) {
        (a, b) if a.is_integer() && b.is_integer() => true,
        (a, b) if string_like(a) && string_like(b) => true,
        (a, b) if binary_like(a) && binary_like(b) => true,
        (ArrowType::Dictionary(_, v), b) => compatible(v, b),
        (ArrowType::Timestamp(u1, _), ArrowType::Timestamp(u2, _)) => u1 == u2,
        _ => false,
    }
}

/// Conversions that keep every value or fail naming it (the cast kernels would truncate or
/// reject them without saying which value):
/// - a timestamp (or TIME) of another unit: `TIMESTAMP(3)` written from microseconds (Spark's,
///   pandas' nanoseconds), checked that no value has digits below the column's unit or overflows;
/// - variable-length binary into `BINARY(n)`, checked that every value has exactly `n` bytes;
/// - a 32-bit integer into `TIME`: milliseconds of the day, the representation Fluss's Spark and
///   Flink connectors give TIME, checked to lie within the day.
///
/// `Ok(None)`: not one of these pairs.
fn convert_checked(
    path: &TablePath,
    name: &str,
    array: &ArrayRef,
    to: &ArrowType,
) -> Result<Option<ArrayRef>> {
    use arrow_schema::TimeUnit;
    fn per_second(u: &TimeUnit) -> i64 {
        match u {
            TimeUnit::Second => 1,
            TimeUnit::Millisecond => 1_000,
            TimeUnit::Microsecond => 1_000_000,
            TimeUnit::Nanosecond => 1_000_000_000,
        }
    }
    fn unit_name(u: &TimeUnit) -> &'static str {
        match u {
            TimeUnit::Second => "seconds",
            TimeUnit::Millisecond => "milliseconds",
            TimeUnit::Microsecond => "microseconds",
            TimeUnit::Nanosecond => "nanoseconds",
        }
    }
    // The raw integers of `array` in unit `from`, re-expressed in unit `to`; a value that would
    // lose digits or overflow is an error naming it.
    let rescale = |values: &arrow_array::Int64Array, from: &TimeUnit, to_unit: &TimeUnit| {
        let (f, t) = (per_second(from), per_second(to_unit));
        let mut out = arrow_array::builder::Int64Builder::with_capacity(values.len());
        for (row, v) in values.iter().enumerate() {
            let Some(v) = v else {
                out.append_null();
                continue;
            };
            let r = if t >= f {
                v.checked_mul(t / f)
            } else if v % (f / t) == 0 {
                Some(v / (f / t))
            } else {
                crate::bail_invalid!(
                    "column '{name}' of table '{path}' holds {} but row {row} has {v} {}, which has \
                     digits below that unit",
                    unit_name(to_unit),
                    unit_name(from)
                );
            };
            match r {
                Some(r) => out.append_value(r),
                None => crate::bail_invalid!(
                    "column '{name}' of table '{path}': row {row} has {v} {}, which overflows \
                     64-bit {}",
                    unit_name(from),
                    unit_name(to_unit)
                ),
            }
        }
        Ok::<_, Error>(out.finish())
    };
    let as_i64 = |a: &ArrayRef| -> Result<arrow_array::Int64Array> {
        // Time32 casts to Int32 only; everything else here casts to Int64 directly.
        let a = match a.data_type() {
            ArrowType::Time32(_) => arrow_cast::cast(a, &ArrowType::Int32)?,
            _ => a.clone(),
        };
        Ok(arrow_cast::cast(&a, &ArrowType::Int64)?
            .as_primitive::<Int64Type>()
            .clone())
    };
    let time_unit = |t: &ArrowType| match t {
        ArrowType::Time32(u) | ArrowType::Time64(u) => Some(*u),
        _ => None,
    };
    let from = array.data_type();
    let out: ArrayRef = match (from, to, time_unit(from), time_unit(to)) {
        (ArrowType::Timestamp(u1, _), ArrowType::Timestamp(u2, _), _, _) if u1 != u2 => {
            let scaled = rescale(&as_i64(array)?, u1, u2)?;
            arrow_cast::cast(&scaled, to)?
        }
        (_, _, Some(u1), Some(u2)) if u1 != u2 => {
            let scaled = rescale(&as_i64(array)?, &u1, &u2)?;
            cast_int_to_time(&scaled, to)?
        }
        (ArrowType::Int32, _, _, Some(unit)) => {
            const DAY_MS: i32 = 86_400_000;
            let ints = array.as_primitive::<Int32Type>();
            for (row, v) in ints.iter().enumerate() {
                if let Some(v) = v.filter(|v| !(0..DAY_MS).contains(v)) {
                    crate::bail_invalid!(
                        "column '{name}' of table '{path}' is a TIME, written as milliseconds of \
                         the day (0 to 86399999), but row {row} has {v}"
                    );
                }
            }
            let scaled = rescale(&as_i64(array)?, &TimeUnit::Millisecond, &unit)?;
            cast_int_to_time(&scaled, to)?
        }
        (f, ArrowType::FixedSizeBinary(n), _, _) if binary_like(f) => {
            let n = *n;
            let as_binary = arrow_cast::cast(array, &ArrowType::LargeBinary)?;
            for (row, v) in as_binary.as_binary::<i64>().iter().enumerate() {
                if let Some(v) = v.filter(|v| v.len() as i64 != i64::from(n)) {
                    crate::bail_invalid!(
                        "column '{name}' of table '{path}' is BINARY({n}) but row {row} has {} \
                         byte(s)",
                        v.len()
                    );
                }
            }
            let options = arrow_cast::CastOptions {
                safe: false,
                ..Default::default()
            };
            arrow_cast::cast_with_options(&as_binary, to, &options)?
        }
        _ => return Ok(None),
    };
    Ok(Some(out))
}

/// `values` (already in the unit of `to`) as a TIME array of type `to`.
fn cast_int_to_time(values: &arrow_array::Int64Array, to: &ArrowType) -> Result<ArrayRef> {
    Ok(match to {
        // Within a day, every unit of Time32 fits in 32 bits.
        ArrowType::Time32(_) => {
            arrow_cast::cast(&arrow_cast::cast(values, &ArrowType::Int32)?, to)?
        }
        _ => arrow_cast::cast(values, to)?,
    })
}

/// Casts `array` (column `name` of table `path`) to the table's column type, or fails naming the
/// column and both types.
pub(crate) fn conform_column(
    path: &TablePath,
    name: &str,
    array: &ArrayRef,
    to: &ArrowType,
    nullable: bool,
) -> Result<ArrayRef> {
    let from = array.data_type();
    let out = if from == to {
        array.clone()
    } else if let Some(out) = convert_checked(path, name, array, to)? {
        out
    } else if compatible(from, to) {
        // `safe: false` turns a value that does not fit into an error instead of a null.
        let options = arrow_cast::CastOptions {
            safe: false,
            ..Default::default()
        };
        arrow_cast::cast_with_options(array, to, &options).map_err(|e| {
            Error::invalid(format!(
                "column '{name}' of table '{path}' has type {to} but the batch has {from}: {e}"
            ))
        })?
    } else {
        crate::bail_invalid!(
            "column '{name}' of table '{path}' has type {to} but the batch has {from}"
        );
    };
    if !nullable && out.null_count() > 0 {
        crate::bail_invalid!(
            "column '{name}' of table '{path}' is NOT NULL but the batch has {} null value(s) in it",
            out.null_count()
        );
    }
    Ok(out)
}

/// The batch with exactly the table's schema: columns matched by name (any order), types cast
/// where lossless, nullability checked. Errors name the table and the column.
pub(crate) fn conform_batch(
    path: &TablePath,
    target: &SchemaRef,
    batch: &RecordBatch,
) -> Result<RecordBatch> {
    if batch.schema().fields() == target.fields() {
        return Ok(RecordBatch::try_new(
            target.clone(),
            batch.columns().to_vec(),
        )?);
    }
    let src = batch.schema();
    let names = |s: &arrow_schema::Schema| {
        s.fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    for f in src.fields() {
        if target.index_of(f.name()).is_err() {
            crate::bail_invalid!(
                "column '{}' of the batch is not in table '{path}' (columns: {})",
                f.name(),
                names(target)
            );
        }
    }
    let mut cols = Vec::with_capacity(target.fields().len());
    for f in target.fields() {
        let Ok(i) = src.index_of(f.name()) else {
            crate::bail_invalid!(
                "the batch has no column '{}' of table '{path}' (batch columns: {}; table columns: {})",
                f.name(),
                names(&src),
                names(target)
            );
        };
        cols.push(conform_column(
            path,
            f.name(),
            batch.column(i),
            f.data_type(),
            f.is_nullable(),
        )?);
    }
    Ok(RecordBatch::try_new(target.clone(), cols)?)
}

/// The partition value text of one cell (Fluss's PartitionUtils rules for the common types).
fn arrow_partition_value(
    path: &TablePath,
    name: &str,
    array: &ArrayRef,
    row: usize,
) -> Result<String> {
    if array.is_null(row) {
        crate::bail_invalid!(
            "partition column '{name}' of table '{path}' is null in row {row}; partition values must not be null"
        );
    }
    let v = match array.data_type() {
        ArrowType::Utf8 => array.as_string::<i32>().value(row).to_string(),
        ArrowType::LargeUtf8 => array.as_string::<i64>().value(row).to_string(),
        ArrowType::Utf8View => array.as_string_view().value(row).to_string(),
        ArrowType::Boolean => array.as_boolean().value(row).to_string(),
        ArrowType::Int8 => array.as_primitive::<Int8Type>().value(row).to_string(),
        ArrowType::Int16 => array.as_primitive::<Int16Type>().value(row).to_string(),
        ArrowType::Int32 => array.as_primitive::<Int32Type>().value(row).to_string(),
        ArrowType::Int64 => array.as_primitive::<Int64Type>().value(row).to_string(),
        ArrowType::Date32 => day_string(array.as_primitive::<Date32Type>().value(row)),
        ArrowType::Binary => hex(array.as_binary::<i32>().value(row)),
        ArrowType::FixedSizeBinary(_) => hex(array.as_fixed_size_binary().value(row)),
        other => {
            return Err(Error::unsupported(format!(
                "partition column '{name}' of table '{path}' has type {other}, which Riverlet cannot turn into a partition value yet"
            )))
        }
    };
    Ok(v)
}

/// Partition routing of one table: its partition columns (by index) and names.
#[derive(Debug, Clone)]
pub(crate) struct Partitioning {
    pub keys: Vec<String>,
    pub indexes: Vec<usize>,
}

impl Partitioning {
    pub(crate) fn of(table: &Table) -> Result<Option<Self>> {
        let d = &table.info.descriptor;
        if d.partition_keys.is_empty() {
            return Ok(None);
        }
        let mut indexes = Vec::new();
        for k in &d.partition_keys {
            let i = d.schema.column_index(k).ok_or_else(|| {
                Error::invalid(format!(
                    "partition key '{k}' of table '{}' is not a column",
                    table.path()
                ))
            })?;
            indexes.push(i);
        }
        Ok(Some(Partitioning {
            keys: d.partition_keys.clone(),
            indexes,
        }))
    }

    /// The partition name and spec of one row given as values.
    pub(crate) fn of_datums(
        &self,
        path: &TablePath,
        row: &[Datum],
    ) -> Result<(String, PartitionSpec)> {
        let mut pairs = Vec::with_capacity(self.keys.len());
        for (k, i) in self.keys.iter().zip(&self.indexes) {
            let d = row.get(*i).unwrap_or(&Datum::Null);
            pairs.push((k.clone(), datum_partition_value(path, k, d)?));
        }
        Ok(to_named(pairs))
    }

    /// The partition name and spec of each row of a batch with the table's schema.
    pub(crate) fn of_batch(
        &self,
        path: &TablePath,
        batch: &RecordBatch,
    ) -> Result<Vec<(String, PartitionSpec)>> {
        let mut out = Vec::with_capacity(batch.num_rows());
        // Rows usually come in runs of the same partition: reuse the previous spec when equal.
        let mut prev: Option<(Vec<String>, (String, PartitionSpec))> = None;
        for r in 0..batch.num_rows() {
            let mut values = Vec::with_capacity(self.keys.len());
            for (k, i) in self.keys.iter().zip(&self.indexes) {
                values.push(arrow_partition_value(path, k, batch.column(*i), r)?);
            }
            if let Some((pv, named)) = &prev {
                if *pv == values {
                    out.push(named.clone());
                    continue;
                }
            }
            let named = to_named(
                self.keys
                    .iter()
                    .cloned()
                    .zip(values.iter().cloned())
                    .collect(),
            );
            out.push(named.clone());
            prev = Some((values, named));
        }
        Ok(out)
    }
}

fn to_named(pairs: Vec<(String, String)>) -> (String, PartitionSpec) {
    let spec = PartitionSpec::new(pairs);
    (spec.partition_name(), spec)
}

/// Splits `batch` by row groups (partition, bucket), keeping row order inside each group, then
/// cuts every group into pieces of about `batch_size` bytes.
pub(crate) fn pieces_from_batch(
    batch: &RecordBatch,
    partitions: Option<Vec<(String, PartitionSpec)>>,
    buckets: Option<Vec<i32>>,
    batch_size: usize,
) -> Result<Vec<Piece>> {
    let rows = batch.num_rows();
    if rows == 0 {
        return Ok(Vec::new());
    }
    let total = crate::record::batch_memory::row_bytes(batch).max(1);
    let mut out = Vec::new();
    if partitions.is_none() && buckets.is_none() {
        cut(batch.clone(), None, None, total, batch_size, &mut out);
        return Ok(out);
    }
    // Group row indexes by (partition name, bucket) in first-seen order.
    let mut order: Vec<(Option<String>, Option<i32>)> = Vec::new();
    type Group = (Vec<u32>, Option<PartitionSpec>);
    let mut groups: HashMap<(Option<String>, Option<i32>), Group> = HashMap::new();
    for r in 0..rows {
        let (pname, pspec) = match &partitions {
            Some(p) => (Some(p[r].0.clone()), Some(&p[r].1)),
            None => (None, None),
        };
        let b = buckets.as_ref().map(|b| b[r]);
        let key = (pname, b);
        let entry = groups.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            (Vec::new(), pspec.cloned())
        });
        entry.0.push(r as u32);
    }
    for key in order {
        let (idx, spec) = groups.remove(&key).ok_or_else(|| {
            Error::internal("partition/bucket group lost while splitting a batch")
        })?;
        let part = if idx.len() == rows {
            batch.clone()
        } else {
            let indices = UInt32Array::from(idx);
            arrow_select::take::take_record_batch(batch, &indices)?
        };
        let size = total.saturating_mul(part.num_rows()) / rows;
        let partition = key.0.zip(spec);
        cut(part, partition, key.1, size.max(1), batch_size, &mut out);
    }
    Ok(out)
}

fn cut(
    batch: RecordBatch,
    partition: Option<(String, PartitionSpec)>,
    bucket: Option<i32>,
    size: usize,
    batch_size: usize,
    out: &mut Vec<Piece>,
) {
    let rows = batch.num_rows();
    if size <= batch_size || rows <= 1 {
        out.push(Piece {
            partition,
            bucket,
            payload: PiecePayload::Arrow(batch),
            size,
        });
        return;
    }
    let per_row = (size / rows).max(1);
    let chunk_rows = (batch_size / per_row).max(1);
    let mut start = 0;
    while start < rows {
        let len = chunk_rows.min(rows - start);
        out.push(Piece {
            partition: partition.clone(),
            bucket,
            payload: PiecePayload::Arrow(batch.slice(start, len)),
            size: per_row * len,
        });
        start += len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, StringArray};
    use arrow_schema::{Field, Schema};
    use std::sync::Arc;

    fn path() -> TablePath {
        TablePath {
            database: "db".into(),
            table: "t".into(),
        }
    }

    #[test]
    fn integer_widths_are_cast_checked_value_by_value() {
        let target: SchemaRef = Arc::new(Schema::new(vec![Field::new(
            "amount",
            ArrowType::Int32,
            true,
        )]));
        let batch_of = |values: Vec<i64>| {
            RecordBatch::try_new(
                Arc::new(Schema::new(vec![Field::new(
                    "amount",
                    ArrowType::Int64,
                    true,
                )])),
                vec![Arc::new(arrow_array::Int64Array::from(values))],
            )
            .unwrap()
        };
        let out = conform_batch(&path(), &target, &batch_of(vec![10, -20])).unwrap();
        assert_eq!(
            out.column(0).as_primitive::<Int32Type>().values(),
            &[10, -20]
        );
        let e = conform_batch(&path(), &target, &batch_of(vec![1, 3_000_000_000])).unwrap_err();
        assert!(e.message().contains("column 'amount'"), "{e}");
        assert!(e.message().contains("3000000000"), "{e}");
    }

    #[test]
    fn conform_reorders_casts_and_names_columns() {
        let target: SchemaRef = Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Int32, false),
            Field::new("name", ArrowType::Utf8, true),
        ]));
        let src = Arc::new(Schema::new(vec![
            Field::new("name", ArrowType::LargeUtf8, true),
            Field::new("id", ArrowType::Int32, true),
        ]));
        let b = RecordBatch::try_new(
            src.clone(),
            vec![
                Arc::new(arrow_array::LargeStringArray::from(vec!["a", "b"])),
                Arc::new(Int32Array::from(vec![1, 2])),
            ],
        )
        .unwrap();
        let out = conform_batch(&path(), &target, &b).unwrap();
        assert_eq!(out.schema(), target);
        assert_eq!(out.column(0).as_primitive::<Int32Type>().value(1), 2);

        // Wrong type names the column and both types.
        let bad = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", ArrowType::Utf8, false),
                Field::new("name", ArrowType::Utf8, true),
            ])),
            vec![
                Arc::new(StringArray::from(vec!["x"])),
                Arc::new(StringArray::from(vec!["y"])),
            ],
        )
        .unwrap();
        let e = conform_batch(&path(), &target, &bad).unwrap_err();
        assert!(
            e.message().contains("'id'") && e.message().contains("db.t"),
            "{e}"
        );
        assert!(
            e.message().contains("Int32") && e.message().contains("Utf8"),
            "{e}"
        );

        // Missing column.
        let missing = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("id", ArrowType::Int32, false)])),
            vec![Arc::new(Int32Array::from(vec![1]))],
        )
        .unwrap();
        let e = conform_batch(&path(), &target, &missing).unwrap_err();
        assert!(e.message().contains("no column 'name'"), "{e}");

        // Nulls in a NOT NULL column.
        let nulls = RecordBatch::try_new(
            src,
            vec![
                Arc::new(arrow_array::LargeStringArray::from(vec!["a"])),
                Arc::new(Int32Array::from(vec![None])),
            ],
        )
        .unwrap();
        let e = conform_batch(&path(), &target, &nulls).unwrap_err();
        assert!(
            e.message().contains("NOT NULL") && e.message().contains("'id'"),
            "{e}"
        );
    }

    fn one_column(name: &str, array: ArrayRef) -> RecordBatch {
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new(
                name,
                array.data_type().clone(),
                true,
            )])),
            vec![array],
        )
        .unwrap()
    }

    fn target_of(name: &str, t: ArrowType) -> SchemaRef {
        Arc::new(Schema::new(vec![Field::new(name, t, true)]))
    }

    #[test]
    fn timestamps_of_another_unit_keep_every_value_or_name_it() {
        use arrow_array::{TimestampMicrosecondArray, TimestampMillisecondArray};
        use arrow_schema::TimeUnit;
        let target = target_of("ts", ArrowType::Timestamp(TimeUnit::Millisecond, None));
        // 2026-01-01 00:00:00.123 and one before the epoch, in microseconds.
        let micros =
            TimestampMicrosecondArray::from(vec![Some(1_767_225_600_123_000), None, Some(-2_000)]);
        let out = conform_batch(&path(), &target, &one_column("ts", Arc::new(micros))).unwrap();
        let got = out
            .column(0)
            .as_any()
            .downcast_ref::<TimestampMillisecondArray>()
            .unwrap();
        assert_eq!(got.value(0), 1_767_225_600_123);
        assert!(got.is_null(1));
        assert_eq!(got.value(2), -2);
        // A microsecond digit would be lost: the error names the column, the row and the value.
        let lossy = TimestampMicrosecondArray::from(vec![1_000, 1_767_225_600_123_456]);
        let e = conform_batch(&path(), &target, &one_column("ts", Arc::new(lossy))).unwrap_err();
        assert!(
            e.message().contains("'ts'")
                && e.message().contains("row 1")
                && e.message().contains("1767225600123456"),
            "{e}"
        );
        // Widening multiplies, with the zone label of the table's column.
        let zoned = target_of(
            "ts",
            ArrowType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
        );
        let ms = TimestampMillisecondArray::from(vec![5]);
        let out = conform_batch(&path(), &zoned, &one_column("ts", Arc::new(ms))).unwrap();
        assert_eq!(out.schema(), zoned);
        assert_eq!(
            out.column(0)
                .as_primitive::<arrow_array::types::TimestampNanosecondType>()
                .value(0),
            5_000_000
        );
    }

    #[test]
    fn binary_into_binary_n_checks_each_length() {
        use arrow_array::BinaryArray;
        let target = target_of("b", ArrowType::FixedSizeBinary(3));
        let ok = BinaryArray::from(vec![Some(&b"abc"[..]), None, Some(&[0u8, 1, 2][..])]);
        let out = conform_batch(&path(), &target, &one_column("b", Arc::new(ok))).unwrap();
        let got = out.column(0).as_fixed_size_binary();
        assert_eq!(got.value(0), b"abc");
        assert!(got.is_null(1));
        assert_eq!(got.value(2), &[0, 1, 2]);
        let bad = BinaryArray::from(vec![&b"abc"[..], &b"ab"[..]]);
        let e = conform_batch(&path(), &target, &one_column("b", Arc::new(bad))).unwrap_err();
        assert!(
            e.message().contains("BINARY(3)")
                && e.message().contains("row 1")
                && e.message().contains("2 byte"),
            "{e}"
        );
    }

    #[test]
    fn integers_into_time_are_milliseconds_of_the_day() {
        use arrow_array::types::{Time32MillisecondType, Time32SecondType, Time64MicrosecondType};
        use arrow_schema::TimeUnit;
        let ints = || Arc::new(Int32Array::from(vec![Some(45_296_789), None, Some(0)])) as ArrayRef;
        let ms = target_of("t", ArrowType::Time32(TimeUnit::Millisecond));
        let out = conform_batch(&path(), &ms, &one_column("t", ints())).unwrap();
        let got = out.column(0).as_primitive::<Time32MillisecondType>();
        assert_eq!(
            (got.value(0), got.is_null(1), got.value(2)),
            (45_296_789, true, 0)
        );
        let us = target_of("t", ArrowType::Time64(TimeUnit::Microsecond));
        let out = conform_batch(&path(), &us, &one_column("t", ints())).unwrap();
        assert_eq!(
            out.column(0)
                .as_primitive::<Time64MicrosecondType>()
                .value(0),
            45_296_789_000
        );
        // TIME(0) keeps whole seconds only.
        let secs = target_of("t", ArrowType::Time32(TimeUnit::Second));
        let e = conform_batch(&path(), &secs, &one_column("t", ints())).unwrap_err();
        assert!(e.message().contains("45296789"), "{e}");
        let whole = Arc::new(Int32Array::from(vec![45_296_000])) as ArrayRef;
        let out = conform_batch(&path(), &secs, &one_column("t", whole)).unwrap();
        assert_eq!(
            out.column(0).as_primitive::<Time32SecondType>().value(0),
            45_296
        );
        // Outside the day.
        for v in [-1, 86_400_000] {
            let bad = Arc::new(Int32Array::from(vec![v])) as ArrayRef;
            let e = conform_batch(&path(), &ms, &one_column("t", bad)).unwrap_err();
            assert!(
                e.message().contains("'t'") && e.message().contains(&v.to_string()),
                "{e}"
            );
        }
    }

    #[test]
    fn pieces_group_and_cut() {
        let schema = Arc::new(Schema::new(vec![Field::new("v", ArrowType::Int32, false)]));
        let b = RecordBatch::try_new(
            schema,
            vec![Arc::new(Int32Array::from((0..100).collect::<Vec<i32>>()))],
        )
        .unwrap();
        let buckets: Vec<i32> = (0..100).map(|i| i % 3).collect();
        let pieces = pieces_from_batch(&b, None, Some(buckets), 1 << 20).unwrap();
        assert_eq!(pieces.len(), 3);
        let PiecePayload::Arrow(first) = &pieces[0].payload else {
            panic!()
        };
        assert_eq!(pieces[0].bucket, Some(0));
        assert_eq!(first.num_rows(), 34);
        assert_eq!(first.column(0).as_primitive::<Int32Type>().value(1), 3);

        // A small batch size cuts one group into several pieces.
        let pieces = pieces_from_batch(&b, None, None, 40).unwrap();
        assert!(pieces.len() > 1);
        let rows: usize = pieces
            .iter()
            .map(|p| match &p.payload {
                PiecePayload::Arrow(b) => b.num_rows(),
                _ => 0,
            })
            .sum();
        assert_eq!(rows, 100);

        // A slice of a larger batch (as a read's batches share their decoded region) is sized
        // by its own rows: 100 Int32 rows are 400 bytes, one piece under a 1 KiB batch size.
        let large = RecordBatch::try_new(
            b.schema(),
            vec![Arc::new(Int32Array::from(
                (0..100_000).collect::<Vec<i32>>(),
            ))],
        )
        .unwrap();
        let sliced = large.slice(500, 100);
        let pieces = pieces_from_batch(&sliced, None, None, 1024).unwrap();
        assert_eq!(pieces.len(), 1);
        assert_eq!(pieces[0].size, 400);
    }

    #[test]
    fn partition_values() {
        assert_eq!(day_string(0), "1970-01-01");
        assert_eq!(day_string(19723), "2024-01-01");
        assert_eq!(hex(&[0x0a, 0xff]), "0aff");
        let e = datum_partition_value(&path(), "p", &Datum::Null).unwrap_err();
        assert!(e.message().contains("'p'"));
    }
}
