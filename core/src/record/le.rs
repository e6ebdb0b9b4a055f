//! Checked little-endian reads and writes on byte slices (no panics on short input).

/// `N` bytes at `off`, or `None` when the slice is too short.
#[inline]
pub(crate) fn array<const N: usize>(buf: &[u8], off: usize) -> Option<[u8; N]> {
    let end = off.checked_add(N)?;
    buf.get(off..end)?.try_into().ok()
}

#[inline]
pub(crate) fn u8_at(buf: &[u8], off: usize) -> Option<u8> {
    buf.get(off).copied()
}

#[inline]
pub(crate) fn i16_at(buf: &[u8], off: usize) -> Option<i16> {
    array::<2>(buf, off).map(i16::from_le_bytes)
}

#[inline]
pub(crate) fn i32_at(buf: &[u8], off: usize) -> Option<i32> {
    array::<4>(buf, off).map(i32::from_le_bytes)
}

#[inline]
pub(crate) fn u32_at(buf: &[u8], off: usize) -> Option<u32> {
    array::<4>(buf, off).map(u32::from_le_bytes)
}

#[inline]
pub(crate) fn i64_at(buf: &[u8], off: usize) -> Option<i64> {
    array::<8>(buf, off).map(i64::from_le_bytes)
}

/// Overwrites `bytes.len()` bytes at `off`; `false` (and nothing written) when out of range.
#[inline]
pub(crate) fn put(buf: &mut [u8], off: usize, bytes: &[u8]) -> bool {
    let Some(end) = off.checked_add(bytes.len()) else {
        return false;
    };
    match buf.get_mut(off..end) {
        Some(dst) => {
            dst.copy_from_slice(bytes);
            true
        }
        None => false,
    }
}

/// Appends an unsigned LEB128 varint (Fluss `VarLengthUtils.writeUnsignedVarInt` and
/// `writeUnsignedVarLong`): the one varint writer of record batches and binary rows.
pub(crate) fn put_unsigned_varint(out: &mut Vec<u8>, v: impl Into<u64>) {
    let mut v: u64 = v.into();
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads an unsigned varint of at most 5 bytes at `off`: `(value, bytes used)`.
pub(crate) fn unsigned_varint_at(buf: &[u8], off: usize) -> Option<(u32, usize)> {
    let mut value: u32 = 0;
    for i in 0..5 {
        let b = *buf.get(off.checked_add(i)?)?;
        if i == 4 && b > 0x0f {
            return None;
        }
        value |= ((b & 0x7f) as u32) << (7 * i);
        if b & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// Size of `v` as an unsigned varint.
pub(crate) fn unsigned_varint_len(v: u32) -> usize {
    match v {
        0..=0x7f => 1,
        0x80..=0x3fff => 2,
        0x4000..=0x1f_ffff => 3,
        0x20_0000..=0x0fff_ffff => 4,
        _ => 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip_and_limits() {
        for v in [
            0u32,
            1,
            127,
            128,
            300,
            16383,
            16384,
            1 << 21,
            1 << 28,
            u32::MAX,
        ] {
            let mut out = Vec::new();
            put_unsigned_varint(&mut out, v);
            assert_eq!(out.len(), unsigned_varint_len(v));
            assert_eq!(unsigned_varint_at(&out, 0), Some((v, out.len())));
        }
        assert_eq!(unsigned_varint_at(&[0x80, 0x80], 0), None);
        assert_eq!(unsigned_varint_at(&[0xff, 0xff, 0xff, 0xff, 0x7f], 0), None);
        assert_eq!(i32_at(&[1, 2, 3], 0), None);
        assert_eq!(i32_at(&[1, 0, 0, 0], usize::MAX), None);
    }
}
