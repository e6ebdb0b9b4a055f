//! Compacted key encoding (row/encode/CompactedKeyEncoder.java, CompactedKeyWriter.java): the
//! key columns in CompactedRow field encoding, without a null bitset. Used for primary-key bytes
//! and bucket-key bytes when no data-lake format is configured.

use arrow_array::{
    Array, BinaryArray, BooleanArray, Date32Array, Float32Array, Float64Array, Int16Array,
    Int32Array, Int64Array, Int8Array, LargeBinaryArray, LargeStringArray, RecordBatch,
    StringArray,
};
use arrow_schema::DataType as ArrowType;

use crate::error::{Error, Result};
use crate::metadata::{DataType, Schema, TypeKind};

use super::binary::{put_unsigned_varint, Reader};
use super::compacted::{read_value, write_value};
use super::{arrow_rows::datum_from_array, Datum};

fn null_key_error(pos: usize, t: &DataType, column: Option<&str>) -> Error {
    match column {
        Some(c) => Error::invalid(format!(
            "Null value is not allowed for compacted key encoder in position {pos} with type {t} (key column '{c}')."
        )),
        None => Error::invalid(format!(
            "Null value is not allowed for compacted key encoder in position {pos} with type {t}."
        )),
    }
}

/// Encodes key values (already projected to the key columns) as compacted key bytes.
pub fn encode_key(types: &[DataType], values: &[Datum]) -> Result<Vec<u8>> {
    encode_key_named(types, values, None)
}

pub(crate) fn encode_key_named(
    types: &[DataType],
    values: &[Datum],
    names: Option<&[String]>,
) -> Result<Vec<u8>> {
    if types.len() != values.len() {
        return Err(Error::invalid(format!(
            "key has {} values but {} key columns",
            values.len(),
            types.len()
        )));
    }
    let mut out = Vec::with_capacity(8 * types.len());
    for (i, (t, v)) in types.iter().zip(values).enumerate() {
        let name = names.and_then(|n| n.get(i)).map(String::as_str);
        if v.is_null() {
            return Err(null_key_error(i, t, name));
        }
        write_value(&mut out, t, v).map_err(|e| match name {
            Some(n) => e.context(format!("key column '{n}'")),
            None => e.context(format!("key position {i}")),
        })?;
    }
    Ok(out)
}

/// Decodes compacted key bytes back into the key values.
pub fn decode_key(types: &[DataType], bytes: &[u8]) -> Result<Vec<Datum>> {
    let mut r = Reader::new(bytes);
    let out = types
        .iter()
        .map(|t| read_value(&mut r, t))
        .collect::<Result<Vec<_>>>()?;
    r.finish()?;
    Ok(out)
}

/// A key encoder bound to a schema and its key columns; errors name the column.
#[derive(Debug, Clone)]
pub struct CompactedKeyEncoder {
    indexes: Vec<usize>,
    names: Vec<String>,
    types: Vec<DataType>,
}

impl CompactedKeyEncoder {
    /// An encoder of `key_columns` (in key order) of `schema`.
    pub fn new(schema: &Schema, key_columns: &[String]) -> Result<Self> {
        let indexes = schema.indexes_of(key_columns)?;
        let types = indexes
            .iter()
            .map(|&i| schema.columns[i].data_type.clone())
            .collect();
        Ok(CompactedKeyEncoder {
            indexes,
            names: key_columns.to_vec(),
            types,
        })
    }

    /// Key column indexes in the full row.
    pub fn key_indexes(&self) -> &[usize] {
        &self.indexes
    }

    /// Key column types.
    pub fn key_types(&self) -> &[DataType] {
        &self.types
    }

    /// Encodes the key of a full row of the schema.
    pub fn encode(&self, row: &[Datum]) -> Result<Vec<u8>> {
        let values: Vec<Datum> = self
            .indexes
            .iter()
            .map(|&i| {
                row.get(i).cloned().ok_or_else(|| {
                    Error::invalid(format!(
                        "row has {} values, key column {i} missing",
                        row.len()
                    ))
                })
            })
            .collect::<Result<_>>()?;
        encode_key_named(&self.types, &values, Some(&self.names))
    }

    /// Encodes the keys of every row of a record batch whose columns follow the schema.
    pub fn encode_batch(&self, batch: &RecordBatch) -> Result<Vec<Vec<u8>>> {
        encode_keys_from_batch(batch, &self.indexes, &self.types)
    }
}

/// Encodes the key of every row of `batch`, column by column.
///
/// `types` are the Fluss types of the key columns in key order (`types[j]` for
/// `key_columns[j]`); a full-row type list (one per batch column) is also accepted when its
/// length differs from the number of key columns. A null key value is an error naming the column.
pub fn encode_keys_from_batch(
    batch: &RecordBatch,
    key_columns: &[usize],
    types: &[DataType],
) -> Result<Vec<Vec<u8>>> {
    let key_type = |j: usize, col: usize| -> Result<&DataType> {
        if types.len() == key_columns.len() {
            Ok(&types[j])
        } else if types.len() == batch.num_columns() {
            Ok(&types[col])
        } else {
            Err(Error::invalid(format!(
                "{} types given for {} key columns of a {}-column batch",
                types.len(),
                key_columns.len(),
                batch.num_columns()
            )))
        }
    };
    let rows = batch.num_rows();
    let mut out: Vec<Vec<u8>> = (0..rows)
        .map(|_| Vec::with_capacity(8 * key_columns.len()))
        .collect();
    for (j, &col) in key_columns.iter().enumerate() {
        if col >= batch.num_columns() {
            return Err(Error::invalid(format!(
                "key column index {col} out of range for a {}-column batch",
                batch.num_columns()
            )));
        }
        let t = key_type(j, col)?;
        let array = batch.column(col);
        let name = batch.schema().field(col).name().clone();
        if array.null_count() > 0 {
            if let Some(r) = (0..rows).find(|&r| array.is_null(r)) {
                return Err(null_key_error(j, t, Some(&name)).context(format!("row {r}")));
            }
        }
        macro_rules! fast {
            ($arr:ty, |$o:ident, $v:ident| $body:expr) => {{
                let a = array
                    .as_any()
                    .downcast_ref::<$arr>()
                    .ok_or_else(|| Error::internal("arrow downcast failed"))?;
                for (r, $o) in out.iter_mut().enumerate() {
                    let $v = a.value(r);
                    $body;
                }
            }};
        }
        match (&t.kind, array.data_type()) {
            (TypeKind::Boolean, ArrowType::Boolean) => fast!(BooleanArray, |o, v| o.push(v as u8)),
            (TypeKind::TinyInt, ArrowType::Int8) => fast!(Int8Array, |o, v| o.push(v as u8)),
            (TypeKind::SmallInt, ArrowType::Int16) => {
                fast!(Int16Array, |o, v| o.extend_from_slice(&v.to_le_bytes()))
            }
            (TypeKind::Int, ArrowType::Int32) => {
                fast!(Int32Array, |o, v| put_unsigned_varint(o, v as u32))
            }
            (TypeKind::Date, ArrowType::Date32) => {
                fast!(Date32Array, |o, v| put_unsigned_varint(o, v as u32))
            }
            (TypeKind::BigInt, ArrowType::Int64) => {
                fast!(Int64Array, |o, v| put_unsigned_varint(o, v as u64))
            }
            (TypeKind::Float, ArrowType::Float32) => {
                fast!(Float32Array, |o, v| o.extend_from_slice(&v.to_le_bytes()))
            }
            (TypeKind::Double, ArrowType::Float64) => {
                fast!(Float64Array, |o, v| o.extend_from_slice(&v.to_le_bytes()))
            }
            (TypeKind::String | TypeKind::Char { .. }, ArrowType::Utf8) => {
                fast!(StringArray, |o, v| {
                    put_unsigned_varint(o, v.len() as u32);
                    o.extend_from_slice(v.as_bytes())
                })
            }
            (TypeKind::String | TypeKind::Char { .. }, ArrowType::LargeUtf8) => {
                fast!(LargeStringArray, |o, v| {
                    put_unsigned_varint(o, v.len() as u32);
                    o.extend_from_slice(v.as_bytes())
                })
            }
            (TypeKind::Bytes, ArrowType::Binary) => fast!(BinaryArray, |o, v| {
                put_unsigned_varint(o, v.len() as u32);
                o.extend_from_slice(v)
            }),
            (TypeKind::Bytes, ArrowType::LargeBinary) => fast!(LargeBinaryArray, |o, v| {
                put_unsigned_varint(o, v.len() as u32);
                o.extend_from_slice(v)
            }),
            _ => {
                for (r, o) in out.iter_mut().enumerate() {
                    let d = datum_from_array(array.as_ref(), r, t)
                        .map_err(|e| e.context(format!("key column '{name}'")))?;
                    write_value(o, t, &d)
                        .map_err(|e| e.context(format!("key column '{name}' row {r}")))?;
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::test_support::*;
    use crate::row::{rows_to_record_batch, TimestampNtz};
    use proptest::prelude::*;

    /// The full all-types key of fluss-rust compacted_key_encoder.rs
    /// `test_all_data_types_java_compatible` (Java's encoded_key.hex).
    #[test]
    fn golden_all_types_key() {
        let (types, values) = all_types_key_golden();
        assert_eq!(encode_key(&types, &values).unwrap(), ENCODED_KEY_GOLDEN);
        assert_eq!(decode_key(&types, ENCODED_KEY_GOLDEN).unwrap(), values);
    }

    /// fluss-common/src/test/java/org/apache/fluss/row/encode/CompactedKeyEncoderTest.java.
    #[test]
    fn golden_compacted_key_encoder_test() {
        let t = [DataType::int(), DataType::bigint(), DataType::int()];
        let k = encode_key(&t, &[Datum::Int(1), Datum::BigInt(3), Datum::Int(2)]).unwrap();
        assert_eq!(k, [1, 3, 2]);
        let k = encode_key(&t, &[Datum::Int(2), Datum::BigInt(5), Datum::Int(6)]).unwrap();
        assert_eq!(k, [2, 5, 6]);
        let e = encode_key(&t, &[Datum::Int(1), Datum::BigInt(2), Datum::Null]).unwrap_err();
        assert_eq!(
            e.message(),
            "Null value is not allowed for compacted key encoder in position 2 with type INT."
        );
        // INT 1, STRING "a2" (fluss-rust test_int_string_as_primary_key).
        let k = encode_key(
            &[DataType::int(), DataType::string()],
            &[Datum::Int(1), Datum::from("a2")],
        )
        .unwrap();
        assert_eq!(k, [1, 2, 97, 50]);
    }

    #[test]
    fn encoder_names_null_column() {
        let schema = Schema::builder()
            .column("partition", DataType::string())
            .column("f1", DataType::bigint())
            .column("f2", DataType::string())
            .build()
            .unwrap();
        let enc = CompactedKeyEncoder::new(&schema, &["f2".to_string()]).unwrap();
        let k = enc
            .encode(&[Datum::from("p1"), Datum::BigInt(1), Datum::from("a2")])
            .unwrap();
        assert_eq!(k, [2, b'a', b'2']);
        let e = enc
            .encode(&[Datum::from("p1"), Datum::BigInt(1), Datum::Null])
            .unwrap_err();
        assert!(e.message().contains("'f2'"), "{e}");
        assert!(CompactedKeyEncoder::new(&schema, &["nope".to_string()]).is_err());
    }

    #[test]
    fn batch_keys_match_row_keys_and_name_nulls() {
        let (types, mut values) = all_types_key_golden();
        // Arrow holds BINARY(20) as 20 fixed bytes, so the batch key sees the padded value.
        values[9] = Datum::Binary(b"1234567890\0\0\0\0\0\0\0\0\0\0".to_vec());
        let expected = encode_key(&types, &values).unwrap();
        let schema = Schema::builder();
        let schema = types
            .iter()
            .enumerate()
            .fold(schema, |b, (i, t)| b.column(format!("c{i}"), t.clone()))
            .build()
            .unwrap();
        let arrow = schema.to_arrow();
        let batch =
            rows_to_record_batch(&arrow, &types, &[values.clone(), values.clone()]).unwrap();
        let cols: Vec<usize> = (0..types.len()).collect();
        let keys = encode_keys_from_batch(&batch, &cols, &types).unwrap();
        assert_eq!(keys, vec![expected; 2]);
        // Projected key in other order, with full-row types.
        let keys = encode_keys_from_batch(&batch, &[3, 12], &types).unwrap();
        assert_eq!(keys[0], [0x64, 5, b'h', b'e', b'l', b'l', b'o']);
        let mut with_null = values.clone();
        with_null[15] = Datum::Timestamp(TimestampNtz::from_millis(0));
        with_null[3] = Datum::Null;
        let batch = rows_to_record_batch(&arrow, &types, &[values, with_null]).unwrap();
        let e = encode_keys_from_batch(&batch, &[3], &[DataType::int()]).unwrap_err();
        assert!(
            e.message().contains("'c3'") && e.message().contains("row 1"),
            "{e}"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(150))]

        #[test]
        fn key_round_trip_and_batch_agree((types, rows) in typed_rows(5)) {
            let key_types: Vec<DataType> = types.iter().map(|t| t.clone().not_null()).collect();
            let names: Vec<String> = (0..types.len()).map(|i| format!("c{i}")).collect();
            // Rows with a null in a key column cannot be keys; replace the row set by non-null ones.
            let rows: Vec<Vec<Datum>> = rows.into_iter().filter(|r| r.iter().all(|d| !d.is_null())).collect();
            let mut b = Schema::builder();
            for (n, t) in names.iter().zip(&key_types) { b = b.column(n.clone(), t.clone()); }
            let schema = b.build().unwrap();
            let mut keys = Vec::new();
            for r in &rows {
                let k = encode_key(&key_types, r).unwrap();
                prop_assert_eq!(&decode_key(&key_types, &k).unwrap(), r);
                keys.push(k);
            }
            if !rows.is_empty() {
                let batch = rows_to_record_batch(&schema.to_arrow(), &key_types, &rows).unwrap();
                let cols: Vec<usize> = (0..types.len()).collect();
                prop_assert_eq!(encode_keys_from_batch(&batch, &cols, &key_types).unwrap(), keys);
            }
        }

        #[test]
        fn key_decoder_never_panics((types, _r) in typed_rows(1), bytes in proptest::collection::vec(any::<u8>(), 0..100)) {
            let _ = decode_key(&types, &bytes);
        }
    }
}
