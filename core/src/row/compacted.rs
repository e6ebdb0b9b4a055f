//! Fluss's CompactedRow (row/compacted/CompactedRowWriter.java, CompactedRowReader.java).
//!
//! Layout: a null bitset of `ceil(n / 8)` bytes (bit `i` of byte `i / 8` set = field `i` null),
//! then every non-null field in order: BOOLEAN / TINYINT one byte, SMALLINT two bytes LE,
//! INT / DATE / TIME an unsigned base-128 varint of the two's-complement value (no zigzag, so
//! negatives take 5 bytes), BIGINT the same with up to 10 bytes, FLOAT / DOUBLE 4 / 8 bytes LE,
//! CHAR / STRING / BINARY / BYTES a varint length then the bytes, DECIMAL with precision <= 18 a
//! BIGINT varint of the unscaled value else varint length + big-endian two's-complement bytes,
//! TIMESTAMP(_LTZ) with precision <= 3 a BIGINT varint of the millis else millis then an INT
//! varint of the nanos of milli, ARRAY / MAP a varint length + BinaryArray / BinaryMap, and ROW
//! a varint length + a nested CompactedRow.

use crate::error::{Error, Result};
use crate::metadata::datatype::{DataType, TypeKind, MAX_COMPACT_TIMESTAMP_PRECISION};

use super::binary::{
    check_decimal, decimal_from_bytes, decimal_to_bytes, decode_array, decode_map,
    decode_nested_row, encode_array, encode_map, make_decimal, make_timestamp, mismatch,
    put_unsigned_varint, timestamp_parts, utf8, Reader, RowFormat,
};
use super::Datum;

/// Bytes of the null bitset of a row with `fields` fields.
pub fn null_bitset_len(fields: usize) -> usize {
    fields.div_ceil(8)
}

fn write_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_unsigned_varint(out, b.len() as u32);
    out.extend_from_slice(b);
}

/// Appends one non-null value in the compacted encoding (shared with the key encoder).
pub(crate) fn write_value(out: &mut Vec<u8>, t: &DataType, v: &Datum) -> Result<()> {
    match (&t.kind, v) {
        (TypeKind::Boolean, Datum::Boolean(b)) => out.push(*b as u8),
        (TypeKind::TinyInt, Datum::TinyInt(x)) => out.push(*x as u8),
        (TypeKind::SmallInt, Datum::SmallInt(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (TypeKind::Int, Datum::Int(x))
        | (TypeKind::Date, Datum::Date(x))
        | (TypeKind::Time { .. }, Datum::Time(x)) => put_unsigned_varint(out, *x as u32),
        (TypeKind::BigInt, Datum::BigInt(x)) => put_unsigned_varint(out, *x as u64),
        (TypeKind::Float, Datum::Float(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (TypeKind::Double, Datum::Double(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (TypeKind::Char { .. } | TypeKind::String, Datum::String(s)) => {
            write_bytes(out, s.as_bytes())
        }
        (TypeKind::Binary { .. } | TypeKind::Bytes, Datum::Binary(b)) => write_bytes(out, b),
        (TypeKind::Decimal { .. }, _) => {
            let unscaled = check_decimal(t, v)?;
            if t.is_compact_decimal() {
                let l = i64::try_from(unscaled).map_err(|_| mismatch(t, v))?;
                put_unsigned_varint(out, l as u64);
            } else {
                write_bytes(out, &decimal_to_bytes(unscaled));
            }
        }
        (TypeKind::Timestamp { .. } | TypeKind::TimestampLtz { .. }, _) => {
            let (millis, nanos, compact) = timestamp_parts(t, v)?;
            put_unsigned_varint(out, millis as u64);
            if !compact {
                put_unsigned_varint(out, nanos as u32);
            }
        }
        (TypeKind::Array(e), Datum::Array(items)) => {
            write_bytes(out, &encode_array(e, items, RowFormat::Compacted)?)
        }
        (TypeKind::Map(k, val), Datum::Map(entries)) => {
            write_bytes(out, &encode_map(k, val, entries, RowFormat::Compacted)?)
        }
        (TypeKind::Row(fields), Datum::Row(values)) => {
            let types: Vec<DataType> = fields.iter().map(|f| f.data_type.clone()).collect();
            write_bytes(out, &encode_compacted_row(&types, values)?)
        }
        _ => return Err(mismatch(t, v)),
    }
    Ok(())
}

/// Reads one non-null value in the compacted encoding (shared with key decoding).
pub(crate) fn read_value(r: &mut Reader<'_>, t: &DataType) -> Result<Datum> {
    Ok(match &t.kind {
        TypeKind::Boolean => Datum::Boolean(r.u8()? != 0),
        TypeKind::TinyInt => Datum::TinyInt(r.u8()? as i8),
        TypeKind::SmallInt => Datum::SmallInt(i16::from_le_bytes(r.array()?)),
        TypeKind::Int => Datum::Int(r.var_u32()? as i32),
        TypeKind::Date => Datum::Date(r.var_u32()? as i32),
        TypeKind::Time { .. } => Datum::Time(r.var_u32()? as i32),
        TypeKind::BigInt => Datum::BigInt(r.var_u64()? as i64),
        TypeKind::Float => Datum::Float(f32::from_le_bytes(r.array()?)),
        TypeKind::Double => Datum::Double(f64::from_le_bytes(r.array()?)),
        TypeKind::Char { .. } | TypeKind::String => {
            let n = r.var_len()?;
            Datum::String(utf8(r.take(n)?)?)
        }
        TypeKind::Binary { .. } | TypeKind::Bytes => {
            let n = r.var_len()?;
            Datum::Binary(r.take(n)?.to_vec())
        }
        TypeKind::Decimal { .. } => {
            let unscaled = if t.is_compact_decimal() {
                r.var_u64()? as i64 as i128
            } else {
                let n = r.var_len()?;
                decimal_from_bytes(r.take(n)?)?
            };
            make_decimal(t, unscaled)?
        }
        TypeKind::Timestamp { precision } | TypeKind::TimestampLtz { precision } => {
            let millis = r.var_u64()? as i64;
            let nanos = if *precision <= MAX_COMPACT_TIMESTAMP_PRECISION {
                0
            } else {
                r.var_u32()? as i32
            };
            make_timestamp(t, millis, nanos)?
        }
        TypeKind::Array(e) => {
            let n = r.var_len()?;
            Datum::Array(decode_array(e, r.take(n)?, RowFormat::Compacted)?)
        }
        TypeKind::Map(k, v) => {
            let n = r.var_len()?;
            Datum::Map(decode_map(k, v, r.take(n)?, RowFormat::Compacted)?)
        }
        TypeKind::Row(_) => {
            let n = r.var_len()?;
            decode_nested_row(t, r.take(n)?, RowFormat::Compacted)?
        }
    })
}

/// Encodes one row as Fluss's CompactedRow bytes.
pub fn encode_compacted_row(types: &[DataType], values: &[Datum]) -> Result<Vec<u8>> {
    if types.len() != values.len() {
        return Err(Error::invalid(format!(
            "row has {} values but the row type has {} fields",
            values.len(),
            types.len()
        )));
    }
    let mut out = vec![0u8; null_bitset_len(types.len())];
    for (i, (t, v)) in types.iter().zip(values).enumerate() {
        if v.is_null() {
            if !t.nullable {
                return Err(Error::invalid(format!(
                    "field {i} of type {t} is NOT NULL but the value is null"
                )));
            }
            out[i / 8] |= 1 << (i % 8);
        } else {
            write_value(&mut out, t, v).map_err(|e| e.context(format!("field {i}")))?;
        }
    }
    Ok(out)
}

/// Decodes Fluss's CompactedRow bytes; truncated or garbage input is [`crate::ErrorKind::Corrupt`].
pub fn decode_compacted_row(types: &[DataType], bytes: &[u8]) -> Result<Vec<Datum>> {
    let mut r = Reader::new(bytes);
    let bits = r.take(null_bitset_len(types.len()))?;
    let mut out = Vec::with_capacity(types.len());
    for (i, t) in types.iter().enumerate() {
        // Like CompactedRowReader, the bit is only consulted for nullable fields.
        if t.nullable && bits[i / 8] & (1 << (i % 8)) != 0 {
            out.push(Datum::Null);
        } else {
            out.push(
                read_value(&mut r, t)
                    .map_err(|e| e.context(format!("field {i} ({t}) at byte {}", r.position())))?,
            );
        }
    }
    r.finish()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::test_support::*;
    use crate::ErrorKind;
    use proptest::prelude::*;

    /// Found by the compacted_row fuzz target: a row whose DECIMAL(10, 2) holds 11 digits
    /// decoded, and re-encoding it failed. The decoder now rejects it (also inside an ARRAY).
    #[test]
    fn decimal_wider_than_its_precision_is_corrupt() {
        let wide = |p| Datum::Decimal {
            unscaled: 10_000_000_000,
            precision: p,
            scale: 2,
        };
        let bytes = encode_compacted_row(&[DataType::decimal(18, 2)], &[wide(18)]).unwrap();
        let e = decode_compacted_row(&[DataType::decimal(10, 2)], &bytes).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corrupt);
        assert!(e.message().contains("10000000000"), "{e}");
        let arr = |p| DataType::array(DataType::decimal(p, 2));
        let bytes = encode_compacted_row(&[arr(18)], &[Datum::Array(vec![wide(18)])]).unwrap();
        let e = decode_compacted_row(&[arr(10)], &bytes).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corrupt);
        assert!(e.message().contains("10000000000"), "{e}");
        let ok = Datum::Decimal {
            unscaled: -9_999_999_999,
            precision: 10,
            scale: 2,
        };
        let bytes =
            encode_compacted_row(&[DataType::decimal(10, 2)], std::slice::from_ref(&ok)).unwrap();
        assert_eq!(
            decode_compacted_row(&[DataType::decimal(10, 2)], &bytes).unwrap(),
            vec![ok]
        );
    }

    /// CompactedRow of every type, the last (MAP) field null. The field bytes are the
    /// `encoded_key.hex` vector of Fluss's IndexedRowTest.genRecordForAllTypes row, as quoted in
    /// fluss-rust crates/fluss/src/row/encode/compacted_key_encoder.rs
    /// (test_all_data_types_java_compatible); a CompactedRow is those same field bytes behind a
    /// null bitset (CompactedRowWriter vs CompactedKeyWriter, which differ only in the bitset).
    #[test]
    fn golden_row_of_every_type_with_null() {
        let mut types = all_types_key_golden().0;
        types.push(DataType::map(DataType::int(), DataType::string()));
        let mut values = all_types_key_golden().1;
        values.push(Datum::Null);
        let bytes = encode_compacted_row(&types, &values).unwrap();
        // 23 fields -> 3 bitset bytes, field 22 null -> bit 6 of byte 2.
        let mut expected = vec![0x00, 0x00, 0x40];
        expected.extend_from_slice(ENCODED_KEY_GOLDEN);
        assert_eq!(bytes, expected);
        assert_eq!(decode_compacted_row(&types, &bytes).unwrap(), values);
    }

    #[test]
    fn small_rows_byte_exact() {
        // CompactedKeyEncoderTest.testEncodeKey: INT 1, BIGINT 3, INT 2 -> [1, 3, 2] behind a bitset.
        let t = [DataType::int(), DataType::bigint(), DataType::int()];
        let v = [Datum::Int(1), Datum::BigInt(3), Datum::Int(2)];
        assert_eq!(encode_compacted_row(&t, &v).unwrap(), [0, 1, 3, 2]);
        let t = [DataType::int(), DataType::string()];
        let v = [Datum::Null, Datum::from("a2")];
        assert_eq!(encode_compacted_row(&t, &v).unwrap(), [1, 2, b'a', b'2']);
        // Negative INT takes 5 bytes (no zigzag).
        assert_eq!(
            encode_compacted_row(&[DataType::int()], &[Datum::Int(-1)]).unwrap(),
            [0, 0xff, 0xff, 0xff, 0xff, 0x0f]
        );
        // Non-compact decimal and timestamp.
        let t = [DataType::decimal(20, 0), DataType::timestamp(6)];
        let v = [
            Datum::Decimal {
                unscaled: 10,
                precision: 20,
                scale: 0,
            },
            Datum::Timestamp(crate::row::TimestampNtz {
                millis: 1,
                nanos_of_milli: 2,
            }),
        ];
        assert_eq!(encode_compacted_row(&t, &v).unwrap(), [0, 1, 10, 1, 2]);
    }

    #[test]
    fn nested_row_and_map() {
        let inner = DataType::row(vec![
            crate::metadata::DataField::new("x", DataType::int()),
            crate::metadata::DataField::new("s", DataType::string()),
        ]);
        let t = [
            inner.clone(),
            DataType::map(DataType::int(), DataType::string()),
        ];
        let v = [
            Datum::Row(vec![Datum::Int(22), Datum::Null]),
            Datum::Map(vec![
                (Datum::Int(0), Datum::Null),
                (Datum::Int(1), Datum::from("1")),
            ]),
        ];
        let b = encode_compacted_row(&t, &v).unwrap();
        // Nested row: length 2, bitset 0b10, varint 22.
        assert_eq!(&b[..4], &[0, 2, 0x02, 22]);
        assert_eq!(decode_compacted_row(&t, &b).unwrap(), v);
    }

    #[test]
    fn rejects_bad_values() {
        assert!(encode_compacted_row(&[DataType::int().not_null()], &[Datum::Null]).is_err());
        assert!(encode_compacted_row(&[DataType::int()], &[Datum::BigInt(1)]).is_err());
        assert!(encode_compacted_row(&[DataType::int()], &[]).is_err());
        let bad = Datum::Decimal {
            unscaled: 100_000,
            precision: 5,
            scale: 2,
        };
        assert!(encode_compacted_row(&[DataType::decimal(5, 2)], &[bad]).is_err());
    }

    #[test]
    fn truncated_golden_is_corrupt_everywhere() {
        let (types, values) = all_types_key_golden();
        let bytes = encode_compacted_row(&types, &values).unwrap();
        for cut in 0..bytes.len() {
            let e = decode_compacted_row(&types, &bytes[..cut]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Corrupt, "cut {cut}: {e}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode_compacted_row(&types, &longer).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn round_trip_every_type((types, rows) in typed_rows(4)) {
            for row in &rows {
                let bytes = encode_compacted_row(&types, row).unwrap();
                prop_assert_eq!(&decode_compacted_row(&types, &bytes).unwrap(), row);
            }
        }

        #[test]
        fn random_bytes_never_panic((types, _rows) in typed_rows(1), bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode_compacted_row(&types, &bytes);
        }

        #[test]
        fn mutated_rows_never_panic((types, rows) in typed_rows(1), idx in any::<usize>(), byte in any::<u8>()) {
            let mut bytes = encode_compacted_row(&types, &rows[0]).unwrap();
            if !bytes.is_empty() {
                let i = idx % bytes.len();
                bytes[i] = byte;
                let _ = decode_compacted_row(&types, &bytes);
                let _ = decode_compacted_row(&types, &bytes[..i]);
            }
        }
    }
}
