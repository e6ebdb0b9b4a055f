//! KV values (row/encode/ValueEncoder.java): `i16` schema id, little-endian, then the row bytes.

use crate::error::{Error, Result};

/// Prefixes row bytes with the schema id (LE), as stored in the KV store and returned by Lookup.
pub fn encode_value(schema_id: i16, row: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 + row.len());
    out.extend_from_slice(&schema_id.to_le_bytes());
    out.extend_from_slice(row);
    out
}

/// Splits a value into its schema id and row bytes.
pub fn decode_value(bytes: &[u8]) -> Result<(i16, &[u8])> {
    match bytes {
        [a, b, rest @ ..] => Ok((i16::from_le_bytes([*a, *b]), rest)),
        _ => Err(Error::corrupt(format!(
            "value of {} bytes is too short for its 2-byte schema id",
            bytes.len()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_id_is_little_endian() {
        let v = encode_value(0x0102, &[9, 8]);
        assert_eq!(v, [0x02, 0x01, 9, 8]);
        assert_eq!(decode_value(&v).unwrap(), (0x0102, &[9u8, 8][..]));
        assert_eq!(decode_value(&[1, 0]).unwrap(), (1, &[][..]));
        assert!(decode_value(&[1]).is_err());
        assert!(decode_value(&[]).is_err());
    }
}
