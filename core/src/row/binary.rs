//! Shared pieces of Fluss's binary formats: a bounds-checked reader, unsigned VLQ varints,
//! decimal byte form, and the BinaryArray / BinaryMap layout used for ARRAY and MAP values
//! inside both CompactedRow and IndexedRow.
//!
//! BinaryArray layout (all little-endian): `i32 numElements`, a null bitset padded to a multiple
//! of 4 bytes (`4 * ceil(n / 32)`), then one fixed-size slot per element (1 byte for
//! BOOLEAN/TINYINT, 2 SMALLINT, 4 INT/FLOAT/DATE/TIME, 8 for everything else), the fixed part
//! rounded up to 8 bytes, then a variable part. Variable-length values of at most 7 bytes live
//! inside their 8-byte slot (bytes in the low positions, top byte = `0x80 | len`); longer ones go
//! to the variable part (8-byte aligned) with the slot holding `offset << 32 | len`, offset
//! relative to the array start. Non-compact decimals reserve 16 bytes; non-compact timestamps
//! put the millis in 8 variable bytes and `offset << 32 | nanos` in the slot. Nested arrays, maps
//! and rows are variable-part blobs. A map is `i32 keyArrayBytes | key array | value array`.

use crate::error::{Error, Result};
use crate::metadata::datatype::{DataType, TypeKind, MAX_COMPACT_TIMESTAMP_PRECISION};

use super::{Datum, TimestampLtz, TimestampNtz};

/// Which row format nested ROW values use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowFormat {
    Compacted,
    Indexed,
}

/// A cursor over untrusted bytes; every read is bounds-checked.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(Error::corrupt(format!(
                "truncated row: need {n} bytes at offset {}, only {} left",
                self.pos,
                self.remaining()
            )));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    /// Fluss `readInt`: up to 5 bytes, the fifth contributing its low bits only.
    pub(crate) fn var_u32(&mut self) -> Result<u32> {
        let mut result: u32 = 0;
        for i in 0..5 {
            let b = self.u8()?;
            if i == 4 {
                result |= (b as u32) << 28;
                return Ok(result);
            }
            result |= ((b & 0x7f) as u32) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(result);
            }
        }
        Ok(result)
    }

    /// Fluss `readLong`: up to 10 bytes; more is corrupt.
    pub(crate) fn var_u64(&mut self) -> Result<u64> {
        let mut result: u64 = 0;
        let mut shift = 0u32;
        while shift < 64 {
            let b = self.u8()?;
            result |= ((b & 0x7f) as u64).wrapping_shl(shift);
            if b & 0x80 == 0 {
                return Ok(result);
            }
            shift += 7;
        }
        Err(Error::corrupt("malformed varint: more than 10 bytes"))
    }

    /// A varint length prefix, rejecting negatives and lengths beyond the buffer.
    pub(crate) fn var_len(&mut self) -> Result<usize> {
        let n = self.var_u32()? as i32;
        if n < 0 {
            return Err(Error::corrupt(format!("negative length {n}")));
        }
        Ok(n as usize)
    }

    pub(crate) fn finish(&self) -> Result<()> {
        if self.remaining() != 0 {
            return Err(Error::corrupt(format!(
                "{} unexpected trailing bytes after the row",
                self.remaining()
            )));
        }
        Ok(())
    }
}

pub(crate) use crate::record::le::put_unsigned_varint;

/// Java `BigInteger.toByteArray()`: minimal big-endian two's complement.
pub(crate) fn decimal_to_bytes(v: i128) -> Vec<u8> {
    let full = v.to_be_bytes();
    let mut start = 0;
    while start < 15 {
        let (b, next) = (full[start], full[start + 1]);
        if (b == 0x00 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    full[start..].to_vec()
}

/// Inverse of [`decimal_to_bytes`]; 1 to 16 bytes.
pub(crate) fn decimal_from_bytes(b: &[u8]) -> Result<i128> {
    if b.is_empty() || b.len() > 16 {
        return Err(Error::corrupt(format!(
            "decimal must be 1..=16 bytes, got {}",
            b.len()
        )));
    }
    let fill = if b[0] & 0x80 != 0 { 0xff } else { 0x00 };
    let mut full = [fill; 16];
    full[16 - b.len()..].copy_from_slice(b);
    Ok(i128::from_be_bytes(full))
}

pub(crate) fn mismatch(t: &DataType, v: &Datum) -> Error {
    Error::invalid(format!("value {} does not match type {t}", v.kind_name()))
}

/// Checks a decimal datum against its type; returns the unscaled value.
pub(crate) fn check_decimal(t: &DataType, v: &Datum) -> Result<i128> {
    let (tp, ts) = match t.kind {
        TypeKind::Decimal { precision, scale } => (precision, scale),
        _ => return Err(mismatch(t, v)),
    };
    match v {
        Datum::Decimal {
            unscaled, scale, ..
        } => {
            if *scale != ts {
                return Err(Error::invalid(format!(
                    "decimal with scale {scale} does not match type {t}"
                )));
            }
            let limit = 10i128.checked_pow(tp).unwrap_or(i128::MAX);
            if unscaled.unsigned_abs() >= limit.unsigned_abs() {
                return Err(Error::invalid(format!(
                    "decimal unscaled value {unscaled} has more than {tp} digits ({t})"
                )));
            }
            Ok(*unscaled)
        }
        _ => Err(mismatch(t, v)),
    }
}

pub(crate) fn check_nanos(n: i32) -> Result<i32> {
    if !(0..=999_999).contains(&n) {
        return Err(Error::invalid(format!(
            "nanos of millisecond must be in 0..=999999, got {n}"
        )));
    }
    Ok(n)
}

pub(crate) fn timestamp_parts(t: &DataType, v: &Datum) -> Result<(i64, i32, bool)> {
    match (&t.kind, v) {
        (TypeKind::Timestamp { precision }, Datum::Timestamp(ts)) => Ok((
            ts.millis,
            check_nanos(ts.nanos_of_milli)?,
            *precision <= MAX_COMPACT_TIMESTAMP_PRECISION,
        )),
        (TypeKind::TimestampLtz { precision }, Datum::TimestampLtz(ts)) => Ok((
            ts.epoch_millis,
            check_nanos(ts.nanos_of_milli)?,
            *precision <= MAX_COMPACT_TIMESTAMP_PRECISION,
        )),
        _ => Err(mismatch(t, v)),
    }
}

/// A decoded decimal of type `t`; an unscaled value with more digits than the type's precision
/// is corrupt (no Fluss writer produces one, and Arrow decimal arrays would carry it unchecked).
pub(crate) fn make_decimal(t: &DataType, unscaled: i128) -> Result<Datum> {
    let TypeKind::Decimal { precision, scale } = t.kind else {
        return Err(Error::corrupt(format!("{t} is not a decimal type")));
    };
    let limit = 10i128.checked_pow(precision).unwrap_or(i128::MAX);
    if unscaled.unsigned_abs() >= limit.unsigned_abs() {
        return Err(Error::corrupt(format!(
            "decimal unscaled value {unscaled} has more than {precision} digits ({t})"
        )));
    }
    Ok(Datum::Decimal {
        unscaled,
        precision,
        scale,
    })
}

pub(crate) fn make_timestamp(t: &DataType, millis: i64, nanos: i32) -> Result<Datum> {
    if !(0..=999_999).contains(&nanos) {
        return Err(Error::corrupt(format!(
            "nanos of millisecond out of range: {nanos}"
        )));
    }
    Ok(match t.kind {
        TypeKind::TimestampLtz { .. } => Datum::TimestampLtz(TimestampLtz {
            epoch_millis: millis,
            nanos_of_milli: nanos,
        }),
        _ => Datum::Timestamp(TimestampNtz {
            millis,
            nanos_of_milli: nanos,
        }),
    })
}

pub(crate) fn utf8(b: &[u8]) -> Result<String> {
    String::from_utf8(b.to_vec()).map_err(|_| Error::corrupt("string is not valid UTF-8"))
}

fn round8(n: usize) -> usize {
    (n + 7) & !7
}

fn array_header_len(n: usize) -> usize {
    4 + n.div_ceil(32) * 4
}

fn slot_size(t: &DataType) -> usize {
    match t.kind {
        TypeKind::Boolean | TypeKind::TinyInt => 1,
        TypeKind::SmallInt => 2,
        TypeKind::Int | TypeKind::Float | TypeKind::Date | TypeKind::Time { .. } => 4,
        _ => 8,
    }
}

fn nested_row_bytes(t: &DataType, v: &Datum, fmt: RowFormat) -> Result<Vec<u8>> {
    let fields = t.row_fields().ok_or_else(|| mismatch(t, v))?;
    let values = match v {
        Datum::Row(values) => values,
        _ => return Err(mismatch(t, v)),
    };
    let types: Vec<DataType> = fields.iter().map(|f| f.data_type.clone()).collect();
    match fmt {
        RowFormat::Compacted => super::compacted::encode_compacted_row(&types, values),
        RowFormat::Indexed => super::indexed::encode_indexed_row(&types, values),
    }
}

pub(crate) fn decode_nested_row(t: &DataType, bytes: &[u8], fmt: RowFormat) -> Result<Datum> {
    let fields = t
        .row_fields()
        .ok_or_else(|| Error::internal(format!("{t} is not a ROW")))?;
    let types: Vec<DataType> = fields.iter().map(|f| f.data_type.clone()).collect();
    let values = match fmt {
        RowFormat::Compacted => super::compacted::decode_compacted_row(&types, bytes)?,
        RowFormat::Indexed => super::indexed::decode_indexed_row(&types, bytes)?,
    };
    Ok(Datum::Row(values))
}

struct ArrayWriter {
    buf: Vec<u8>,
}

impl ArrayWriter {
    fn put(&mut self, at: usize, bytes: &[u8]) {
        self.buf[at..at + bytes.len()].copy_from_slice(bytes);
    }

    /// Appends `data` 8-byte aligned to the variable part and returns its offset.
    fn append_var(&mut self, data: &[u8], reserve: usize) -> usize {
        let off = self.buf.len();
        let len = round8(data.len().max(reserve));
        self.buf.resize(off + len, 0);
        self.buf[off..off + data.len()].copy_from_slice(data);
        off
    }

    fn put_var(&mut self, slot: usize, data: &[u8]) {
        let off = self.append_var(data, 0);
        let v = ((off as u64) << 32) | data.len() as u64;
        self.put(slot, &v.to_le_bytes());
    }

    fn put_small_or_var(&mut self, slot: usize, data: &[u8]) {
        if data.len() <= 7 {
            let mut s = [0u8; 8];
            s[..data.len()].copy_from_slice(data);
            s[7] = 0x80 | data.len() as u8;
            self.put(slot, &s);
        } else {
            self.put_var(slot, data);
        }
    }
}

/// Encodes an ARRAY value as a BinaryArray.
pub(crate) fn encode_array(elem: &DataType, items: &[Datum], fmt: RowFormat) -> Result<Vec<u8>> {
    let n = items.len();
    let header = array_header_len(n);
    let size = slot_size(elem);
    let fixed = round8(header + size * n);
    let mut w = ArrayWriter {
        buf: vec![0u8; fixed],
    };
    w.put(0, &(n as i32).to_le_bytes());
    for (i, v) in items.iter().enumerate() {
        let slot = header + i * size;
        if v.is_null() {
            w.buf[4 + i / 8] |= 1 << (i % 8);
            continue;
        }
        match (&elem.kind, v) {
            (TypeKind::Boolean, Datum::Boolean(b)) => w.buf[slot] = *b as u8,
            (TypeKind::TinyInt, Datum::TinyInt(x)) => w.buf[slot] = *x as u8,
            (TypeKind::SmallInt, Datum::SmallInt(x)) => w.put(slot, &x.to_le_bytes()),
            (TypeKind::Int, Datum::Int(x))
            | (TypeKind::Date, Datum::Date(x))
            | (TypeKind::Time { .. }, Datum::Time(x)) => w.put(slot, &x.to_le_bytes()),
            (TypeKind::BigInt, Datum::BigInt(x)) => w.put(slot, &x.to_le_bytes()),
            // Arrays store NaN in its canonical form (BinaryArrayWriter.writeFloat/Double).
            (TypeKind::Float, Datum::Float(x)) => {
                let x = if x.is_nan() { f32::NAN } else { *x };
                w.put(slot, &x.to_le_bytes())
            }
            (TypeKind::Double, Datum::Double(x)) => {
                let x = if x.is_nan() { f64::NAN } else { *x };
                w.put(slot, &x.to_le_bytes())
            }
            (TypeKind::Char { .. } | TypeKind::String, Datum::String(s)) => {
                w.put_small_or_var(slot, s.as_bytes())
            }
            (TypeKind::Binary { .. } | TypeKind::Bytes, Datum::Binary(b)) => {
                w.put_small_or_var(slot, b)
            }
            (TypeKind::Decimal { .. }, _) => {
                let unscaled = check_decimal(elem, v)?;
                if elem.is_compact_decimal() {
                    let l = i64::try_from(unscaled).map_err(|_| mismatch(elem, v))?;
                    w.put(slot, &l.to_le_bytes());
                } else {
                    let bytes = decimal_to_bytes(unscaled);
                    let off = w.append_var(&bytes, 16);
                    let s = ((off as u64) << 32) | bytes.len() as u64;
                    w.put(slot, &s.to_le_bytes());
                }
            }
            (TypeKind::Timestamp { .. } | TypeKind::TimestampLtz { .. }, _) => {
                let (millis, nanos, compact) = timestamp_parts(elem, v)?;
                if compact {
                    w.put(slot, &millis.to_le_bytes());
                } else {
                    let off = w.append_var(&millis.to_le_bytes(), 8);
                    let s = ((off as u64) << 32) | nanos as u32 as u64;
                    w.put(slot, &s.to_le_bytes());
                }
            }
            (TypeKind::Array(e), Datum::Array(inner)) => {
                let bytes = encode_array(e, inner, fmt)?;
                w.put_var(slot, &bytes);
            }
            (TypeKind::Map(k, val), Datum::Map(entries)) => {
                let bytes = encode_map(k, val, entries, fmt)?;
                w.put_var(slot, &bytes);
            }
            (TypeKind::Row(_), Datum::Row(_)) => {
                let bytes = nested_row_bytes(elem, v, fmt)?;
                w.put_var(slot, &bytes);
            }
            _ => return Err(mismatch(elem, v)),
        }
    }
    Ok(w.buf)
}

/// Encodes a MAP value as a BinaryMap.
pub(crate) fn encode_map(
    key: &DataType,
    value: &DataType,
    entries: &[(Datum, Datum)],
    fmt: RowFormat,
) -> Result<Vec<u8>> {
    let keys: Vec<Datum> = entries.iter().map(|(k, _)| k.clone()).collect();
    let values: Vec<Datum> = entries.iter().map(|(_, v)| v.clone()).collect();
    let kb = encode_array(key, &keys, fmt)?;
    let vb = encode_array(value, &values, fmt)?;
    let mut out = Vec::with_capacity(4 + kb.len() + vb.len());
    out.extend_from_slice(&(kb.len() as i32).to_le_bytes());
    out.extend_from_slice(&kb);
    out.extend_from_slice(&vb);
    Ok(out)
}

fn slice(b: &[u8], off: usize, len: usize) -> Result<&[u8]> {
    off.checked_add(len)
        .and_then(|end| b.get(off..end))
        .ok_or_else(|| {
            Error::corrupt(format!(
                "array element at offset {off} length {len} is outside the {}-byte array",
                b.len()
            ))
        })
}

fn read_le<const N: usize>(b: &[u8], at: usize) -> Result<[u8; N]> {
    let s = slice(b, at, N)?;
    let mut a = [0u8; N];
    a.copy_from_slice(s);
    Ok(a)
}

fn var_part(b: &[u8], slot_value: u64) -> Result<&[u8]> {
    slice(
        b,
        (slot_value >> 32) as usize,
        (slot_value & 0xffff_ffff) as usize,
    )
}

fn small_or_var(b: &[u8], slot: usize, slot_value: u64) -> Result<&[u8]> {
    if slot_value & (1u64 << 63) != 0 {
        let len = ((slot_value >> 56) & 0x7f) as usize;
        if len > 7 {
            return Err(Error::corrupt(format!(
                "inline array value length {len} > 7"
            )));
        }
        slice(b, slot, len)
    } else {
        var_part(b, slot_value)
    }
}

/// Decodes a BinaryArray into its elements.
pub(crate) fn decode_array(elem: &DataType, b: &[u8], fmt: RowFormat) -> Result<Vec<Datum>> {
    let n = i32::from_le_bytes(read_le::<4>(b, 0)?);
    if n < 0 {
        return Err(Error::corrupt(format!("negative array size {n}")));
    }
    let n = n as usize;
    let size = slot_size(elem);
    let header = array_header_len(n);
    let fixed_end = n
        .checked_mul(size)
        .and_then(|x| x.checked_add(header))
        .ok_or_else(|| Error::corrupt("array size overflow"))?;
    if fixed_end > b.len() {
        return Err(Error::corrupt(format!(
            "array of {n} elements needs {fixed_end} bytes, only {} present",
            b.len()
        )));
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        if b[4 + i / 8] & (1 << (i % 8)) != 0 {
            out.push(Datum::Null);
            continue;
        }
        let slot = header + i * size;
        let long = || -> Result<u64> { Ok(u64::from_le_bytes(read_le::<8>(b, slot)?)) };
        let d = match &elem.kind {
            TypeKind::Boolean => Datum::Boolean(b[slot] != 0),
            TypeKind::TinyInt => Datum::TinyInt(b[slot] as i8),
            TypeKind::SmallInt => Datum::SmallInt(i16::from_le_bytes(read_le::<2>(b, slot)?)),
            TypeKind::Int => Datum::Int(i32::from_le_bytes(read_le::<4>(b, slot)?)),
            TypeKind::Date => Datum::Date(i32::from_le_bytes(read_le::<4>(b, slot)?)),
            TypeKind::Time { .. } => Datum::Time(i32::from_le_bytes(read_le::<4>(b, slot)?)),
            TypeKind::BigInt => Datum::BigInt(long()? as i64),
            TypeKind::Float => Datum::Float(f32::from_le_bytes(read_le::<4>(b, slot)?)),
            TypeKind::Double => Datum::Double(f64::from_bits(long()?)),
            TypeKind::Char { .. } | TypeKind::String => {
                Datum::String(utf8(small_or_var(b, slot, long()?)?)?)
            }
            TypeKind::Binary { .. } | TypeKind::Bytes => {
                Datum::Binary(small_or_var(b, slot, long()?)?.to_vec())
            }
            TypeKind::Decimal { .. } => {
                let unscaled = if elem.is_compact_decimal() {
                    long()? as i64 as i128
                } else {
                    decimal_from_bytes(var_part(b, long()?)?)?
                };
                make_decimal(elem, unscaled)?
            }
            TypeKind::Timestamp { precision } | TypeKind::TimestampLtz { precision } => {
                let s = long()?;
                if *precision <= MAX_COMPACT_TIMESTAMP_PRECISION {
                    make_timestamp(elem, s as i64, 0)?
                } else {
                    let millis = i64::from_le_bytes(read_le::<8>(b, (s >> 32) as usize)?);
                    make_timestamp(elem, millis, s as u32 as i32)?
                }
            }
            TypeKind::Array(e) => Datum::Array(decode_array(e, var_part(b, long()?)?, fmt)?),
            TypeKind::Map(k, v) => Datum::Map(decode_map(k, v, var_part(b, long()?)?, fmt)?),
            TypeKind::Row(_) => decode_nested_row(elem, var_part(b, long()?)?, fmt)?,
        };
        out.push(d);
    }
    Ok(out)
}

/// Decodes a BinaryMap into its entries.
pub(crate) fn decode_map(
    key: &DataType,
    value: &DataType,
    b: &[u8],
    fmt: RowFormat,
) -> Result<Vec<(Datum, Datum)>> {
    let kl = i32::from_le_bytes(read_le::<4>(b, 0)?);
    if kl < 0 {
        return Err(Error::corrupt(format!("negative map key array size {kl}")));
    }
    let keys = decode_array(key, slice(b, 4, kl as usize)?, fmt)?;
    let values = decode_array(value, &b[4 + kl as usize..], fmt)?;
    if keys.len() != values.len() {
        return Err(Error::corrupt(format!(
            "map has {} keys but {} values",
            keys.len(),
            values.len()
        )));
    }
    Ok(keys.into_iter().zip(values).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_match_java_writer() {
        let mut out = Vec::new();
        put_unsigned_varint(&mut out, 100u32);
        assert_eq!(out, [0x64]);
        out.clear();
        put_unsigned_varint(&mut out, (-1i32) as u32);
        assert_eq!(out, [0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(Reader::new(&out).var_u32().unwrap() as i32, -1);
        out.clear();
        put_unsigned_varint(&mut out, (-1i64) as u64);
        assert_eq!(out.len(), 10);
        assert_eq!(Reader::new(&out).var_u64().unwrap() as i64, -1);
        assert!(Reader::new(&[0x80; 11]).var_u64().is_err());
        assert!(Reader::new(&[0x80]).var_u32().is_err());
    }

    #[test]
    fn decimal_bytes_like_big_integer() {
        assert_eq!(decimal_to_bytes(10), [0x0a]);
        assert_eq!(decimal_to_bytes(0), [0x00]);
        assert_eq!(decimal_to_bytes(-1), [0xff]);
        assert_eq!(decimal_to_bytes(128), [0x00, 0x80]);
        assert_eq!(decimal_to_bytes(-129), [0xff, 0x7f]);
        for v in [
            0i128,
            1,
            -1,
            127,
            128,
            -128,
            -129,
            i128::MAX,
            i128::MIN,
            10i128.pow(37),
        ] {
            assert_eq!(decimal_from_bytes(&decimal_to_bytes(v)).unwrap(), v);
        }
        assert!(decimal_from_bytes(&[]).is_err());
    }
}
