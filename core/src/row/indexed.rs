//! Fluss's IndexedRow (row/indexed/IndexedRowWriter.java, IndexedRow.java).
//!
//! Layout: a null bitset of `ceil(n / 8)` bytes, then one `i32` LE length slot for every
//! variable-length column of the row type (STRING, BYTES, ARRAY, MAP, ROW and DECIMAL with
//! precision > 18), then the non-null values in order. Null fields contribute nothing, and the
//! length slots are filled in order by the non-null variable-length values only (unused slots
//! stay zero). Fixed-width values: BOOLEAN/TINYINT 1 byte, SMALLINT 2, INT/FLOAT/DATE/TIME 4,
//! BIGINT/DOUBLE/compact DECIMAL 8, TIMESTAMP(_LTZ) 8 (precision <= 3) or 12 (millis + i32 nanos);
//! CHAR(n) and BINARY(n) take exactly `n` bytes, zero padded (readers strip trailing zeros).
//! Non-compact decimals are big-endian two's-complement bytes; arrays and maps use BinaryArray /
//! BinaryMap with nested rows in IndexedRow format; a nested ROW is an IndexedRow.

use crate::error::{Error, Result};
use crate::metadata::datatype::{DataType, TypeKind, MAX_COMPACT_TIMESTAMP_PRECISION};

use super::binary::{
    check_decimal, decimal_from_bytes, decimal_to_bytes, decode_array, decode_map,
    decode_nested_row, encode_array, encode_map, make_decimal, make_timestamp, mismatch,
    timestamp_parts, utf8, Reader, RowFormat,
};
use super::Datum;

/// Whether a value of `t` has a fixed width in an IndexedRow (IndexedRow.isFixedLength).
pub fn is_fixed_length(t: &DataType) -> bool {
    match t.kind {
        TypeKind::String
        | TypeKind::Bytes
        | TypeKind::Array(_)
        | TypeKind::Map(..)
        | TypeKind::Row(_) => false,
        TypeKind::Decimal { .. } => t.is_compact_decimal(),
        _ => true,
    }
}

fn fixed_len(t: &DataType) -> usize {
    match t.kind {
        TypeKind::Boolean | TypeKind::TinyInt => 1,
        TypeKind::SmallInt => 2,
        TypeKind::Int | TypeKind::Float | TypeKind::Date | TypeKind::Time { .. } => 4,
        TypeKind::Timestamp { precision } | TypeKind::TimestampLtz { precision } => {
            if precision <= MAX_COMPACT_TIMESTAMP_PRECISION {
                8
            } else {
                12
            }
        }
        TypeKind::Char { length } | TypeKind::Binary { length } => length as usize,
        _ => 8,
    }
}

fn padded(t: &DataType, b: &[u8], length: u32) -> Result<Vec<u8>> {
    let n = length as usize;
    if b.len() > n {
        return Err(Error::invalid(format!(
            "value of {} bytes is longer than {t}",
            b.len()
        )));
    }
    let mut v = b.to_vec();
    v.resize(n, 0);
    Ok(v)
}

fn strip_trailing_zeros(b: &[u8]) -> &[u8] {
    let end = b.iter().rposition(|&x| x != 0).map_or(0, |i| i + 1);
    &b[..end]
}

/// Encodes one row as Fluss's IndexedRow bytes.
pub fn encode_indexed_row(types: &[DataType], values: &[Datum]) -> Result<Vec<u8>> {
    if types.len() != values.len() {
        return Err(Error::invalid(format!(
            "row has {} values but the row type has {} fields",
            values.len(),
            types.len()
        )));
    }
    let bitset = types.len().div_ceil(8);
    let var_count = types.iter().filter(|t| !is_fixed_length(t)).count();
    let header = bitset + 4 * var_count;
    let mut out = vec![0u8; header];
    let mut next_len_slot = bitset;
    for (i, (t, v)) in types.iter().zip(values).enumerate() {
        if v.is_null() {
            if !t.nullable {
                return Err(Error::invalid(format!(
                    "field {i} of type {t} is NOT NULL but the value is null"
                )));
            }
            out[i / 8] |= 1 << (i % 8);
            continue;
        }
        let var = |out: &mut Vec<u8>, slot: &mut usize, bytes: &[u8]| {
            out[*slot..*slot + 4].copy_from_slice(&(bytes.len() as i32).to_le_bytes());
            *slot += 4;
            out.extend_from_slice(bytes);
        };
        let ctx = |e: Error| e.context(format!("field {i}"));
        match (&t.kind, v) {
            (TypeKind::Boolean, Datum::Boolean(b)) => out.push(*b as u8),
            (TypeKind::TinyInt, Datum::TinyInt(x)) => out.push(*x as u8),
            (TypeKind::SmallInt, Datum::SmallInt(x)) => out.extend_from_slice(&x.to_le_bytes()),
            (TypeKind::Int, Datum::Int(x))
            | (TypeKind::Date, Datum::Date(x))
            | (TypeKind::Time { .. }, Datum::Time(x)) => out.extend_from_slice(&x.to_le_bytes()),
            (TypeKind::BigInt, Datum::BigInt(x)) => out.extend_from_slice(&x.to_le_bytes()),
            (TypeKind::Float, Datum::Float(x)) => out.extend_from_slice(&x.to_le_bytes()),
            (TypeKind::Double, Datum::Double(x)) => out.extend_from_slice(&x.to_le_bytes()),
            (TypeKind::Char { length }, Datum::String(s)) => {
                let b = padded(t, s.as_bytes(), *length).map_err(ctx)?;
                out.extend_from_slice(&b)
            }
            (TypeKind::Binary { length }, Datum::Binary(b)) => {
                let b = padded(t, b, *length).map_err(ctx)?;
                out.extend_from_slice(&b)
            }
            (TypeKind::String, Datum::String(s)) => var(&mut out, &mut next_len_slot, s.as_bytes()),
            (TypeKind::Bytes, Datum::Binary(b)) => var(&mut out, &mut next_len_slot, b),
            (TypeKind::Decimal { .. }, _) => {
                let unscaled = check_decimal(t, v).map_err(ctx)?;
                if t.is_compact_decimal() {
                    let l = i64::try_from(unscaled).map_err(|_| mismatch(t, v))?;
                    out.extend_from_slice(&l.to_le_bytes());
                } else {
                    var(&mut out, &mut next_len_slot, &decimal_to_bytes(unscaled));
                }
            }
            (TypeKind::Timestamp { .. } | TypeKind::TimestampLtz { .. }, _) => {
                let (millis, nanos, compact) = timestamp_parts(t, v).map_err(ctx)?;
                out.extend_from_slice(&millis.to_le_bytes());
                if !compact {
                    out.extend_from_slice(&nanos.to_le_bytes());
                }
            }
            (TypeKind::Array(e), Datum::Array(items)) => {
                let b = encode_array(e, items, RowFormat::Indexed).map_err(ctx)?;
                var(&mut out, &mut next_len_slot, &b)
            }
            (TypeKind::Map(k, val), Datum::Map(entries)) => {
                let b = encode_map(k, val, entries, RowFormat::Indexed).map_err(ctx)?;
                var(&mut out, &mut next_len_slot, &b)
            }
            (TypeKind::Row(fields), Datum::Row(inner)) => {
                let nested: Vec<DataType> = fields.iter().map(|f| f.data_type.clone()).collect();
                let b = encode_indexed_row(&nested, inner).map_err(ctx)?;
                var(&mut out, &mut next_len_slot, &b)
            }
            _ => return Err(ctx(mismatch(t, v))),
        }
    }
    Ok(out)
}

/// Decodes Fluss's IndexedRow bytes; truncated or garbage input is [`crate::ErrorKind::Corrupt`].
pub fn decode_indexed_row(types: &[DataType], bytes: &[u8]) -> Result<Vec<Datum>> {
    let bitset_len = types.len().div_ceil(8);
    let var_count = types.iter().filter(|t| !is_fixed_length(t)).count();
    let mut r = Reader::new(bytes);
    let bits = r.take(bitset_len)?;
    let lens = r.take(4 * var_count)?;
    let mut next_len = 0usize;
    let mut out = Vec::with_capacity(types.len());
    for (i, t) in types.iter().enumerate() {
        if bits[i / 8] & (1 << (i % 8)) != 0 {
            // A null takes no bytes here, so the bit cannot be ignored as CompactedRow does.
            if !t.nullable {
                return Err(Error::corrupt(format!(
                    "field {i} of type {t} is NOT NULL but its null bit is set"
                )));
            }
            out.push(Datum::Null);
            continue;
        }
        let len = if is_fixed_length(t) {
            fixed_len(t)
        } else {
            let mut a = [0u8; 4];
            a.copy_from_slice(&lens[next_len * 4..next_len * 4 + 4]);
            next_len += 1;
            let n = i32::from_le_bytes(a);
            if n < 0 {
                return Err(Error::corrupt(format!("field {i}: negative length {n}")));
            }
            n as usize
        };
        let b = r
            .take(len)
            .map_err(|e| e.context(format!("field {i} ({t})")))?;
        let le8 = |b: &[u8]| -> [u8; 8] {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[..8]);
            a
        };
        let d = match &t.kind {
            TypeKind::Boolean => Datum::Boolean(b[0] != 0),
            TypeKind::TinyInt => Datum::TinyInt(b[0] as i8),
            TypeKind::SmallInt => Datum::SmallInt(i16::from_le_bytes([b[0], b[1]])),
            TypeKind::Int => Datum::Int(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            TypeKind::Date => Datum::Date(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            TypeKind::Time { .. } => Datum::Time(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            TypeKind::Float => Datum::Float(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            TypeKind::BigInt => Datum::BigInt(i64::from_le_bytes(le8(b))),
            TypeKind::Double => Datum::Double(f64::from_le_bytes(le8(b))),
            TypeKind::Char { .. } => Datum::String(utf8(strip_trailing_zeros(b))?),
            TypeKind::Binary { .. } => Datum::Binary(strip_trailing_zeros(b).to_vec()),
            TypeKind::String => Datum::String(utf8(b)?),
            TypeKind::Bytes => Datum::Binary(b.to_vec()),
            TypeKind::Decimal { .. } => make_decimal(
                t,
                if t.is_compact_decimal() {
                    i64::from_le_bytes(le8(b)) as i128
                } else {
                    decimal_from_bytes(b)?
                },
            )?,
            TypeKind::Timestamp { .. } | TypeKind::TimestampLtz { .. } => {
                let millis = i64::from_le_bytes(le8(b));
                let nanos = if b.len() == 12 {
                    i32::from_le_bytes([b[8], b[9], b[10], b[11]])
                } else {
                    0
                };
                make_timestamp(t, millis, nanos)?
            }
            TypeKind::Array(e) => Datum::Array(decode_array(e, b, RowFormat::Indexed)?),
            TypeKind::Map(k, v) => Datum::Map(decode_map(k, v, b, RowFormat::Indexed)?),
            TypeKind::Row(_) => decode_nested_row(t, b, RowFormat::Indexed)?,
        };
        out.push(d);
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

    /// Found by the indexed_row fuzz target: a null bit on a NOT NULL field decoded as a null
    /// that the encoder (and the table) refuse.
    #[test]
    fn null_bit_on_a_not_null_field_is_corrupt() {
        let types = [DataType::string(), DataType::int().not_null()];
        let bytes = encode_indexed_row(&types, &[Datum::Null, Datum::Int(7)]).unwrap();
        let mut bad = bytes.clone();
        bad[0] |= 0b10;
        let e = decode_indexed_row(&types, &bad).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corrupt);
        assert!(e.message().contains("field 1 of type INT NOT NULL"), "{e}");
        assert_eq!(
            decode_indexed_row(&types, &bytes).unwrap(),
            vec![Datum::Null, Datum::Int(7)]
        );
    }

    /// Found by the indexed_row fuzz target: a DECIMAL(10, 2) field holding 11 digits decoded,
    /// and re-encoding it failed. The decoder now rejects it.
    #[test]
    fn decimal_wider_than_its_precision_is_corrupt() {
        let wide = Datum::Decimal {
            unscaled: -10_000_000_000,
            precision: 18,
            scale: 2,
        };
        let bytes = encode_indexed_row(&[DataType::decimal(18, 2)], &[wide]).unwrap();
        let e = decode_indexed_row(&[DataType::decimal(10, 2)], &bytes).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corrupt);
        assert!(e.message().contains("-10000000000"), "{e}");
    }

    #[test]
    fn layout_byte_exact() {
        // INT 7, STRING "ab", BYTES null, CHAR(3) "x", BIGINT -1.
        let t = [
            DataType::int(),
            DataType::string(),
            DataType::bytes(),
            DataType::char(3),
            DataType::bigint(),
        ];
        let v = [
            Datum::Int(7),
            Datum::from("ab"),
            Datum::Null,
            Datum::from("x"),
            Datum::BigInt(-1),
        ];
        let b = encode_indexed_row(&t, &v).unwrap();
        let mut expected = vec![0b0000_0100];
        expected.extend_from_slice(&2i32.to_le_bytes()); // length of "ab"
        expected.extend_from_slice(&0i32.to_le_bytes()); // unused slot (BYTES is null)
        expected.extend_from_slice(&7i32.to_le_bytes());
        expected.extend_from_slice(b"ab");
        expected.extend_from_slice(b"x\0\0");
        expected.extend_from_slice(&(-1i64).to_le_bytes());
        assert_eq!(b, expected);
        assert_eq!(decode_indexed_row(&t, &b).unwrap(), v);
    }

    #[test]
    fn every_type_golden_row_round_trips() {
        let (types, values) = all_types_key_golden();
        let b = encode_indexed_row(&types, &values).unwrap();
        assert_eq!(decode_indexed_row(&types, &b).unwrap(), values);
        for cut in 0..b.len() {
            assert_eq!(
                decode_indexed_row(&types, &b[..cut]).unwrap_err().kind(),
                ErrorKind::Corrupt
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn round_trip_every_type((types, rows) in typed_rows(4)) {
            for row in &rows {
                let bytes = encode_indexed_row(&types, row).unwrap();
                prop_assert_eq!(&decode_indexed_row(&types, &bytes).unwrap(), row);
            }
        }

        #[test]
        fn random_bytes_never_panic((types, _r) in typed_rows(1), bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode_indexed_row(&types, &bytes);
        }

        #[test]
        fn mutated_rows_never_panic((types, rows) in typed_rows(1), idx in any::<usize>(), byte in any::<u8>()) {
            let mut bytes = encode_indexed_row(&types, &rows[0]).unwrap();
            if !bytes.is_empty() {
                let i = idx % bytes.len();
                bytes[i] = byte;
                let _ = decode_indexed_row(&types, &bytes);
            }
        }
    }
}
