//! The KV snapshot file of riverlet-server: the whole state of one primary-key bucket at a log
//! offset, as the embedded server's periodic KV snapshots (`kv.snapshot.interval`) write it
//! when it is built without its `kv-snapshot` feature, and as GetKvSnapshotMetadata names it (a
//! `file:` remote path whose local file name is [`KV_SNAPSHOT_FILE_NAME`]). Apache Fluss stores
//! its snapshots as RocksDB files instead (and so does riverlet-server with that feature),
//! which Riverlet reads only with core's `kv-snapshot` feature.
//!
//! Layout (Riverlet-private, little-endian): magic [`KV_SNAPSHOT_MAGIC`] (8 bytes) | int64 log
//! offset the state covers (changes before it are in, from it on are not) | uint32
//! crc32c(value batch) | a value record batch (Fluss `DefaultValueRecordBatch`) of every value,
//! each `int16 schema id | row bytes`, in key order.

use super::value_batch::{encode_value_batch_from_values, ValueRecordBatch};
use crate::{Error, Result};

/// The local file name GetKvSnapshotMetadata gives a Riverlet snapshot file.
pub const KV_SNAPSHOT_FILE_NAME: &str = "riverlet-kv-snapshot";
/// The first bytes of a Riverlet snapshot file.
pub const KV_SNAPSHOT_MAGIC: &[u8; 8] = b"RVKVSNP1";
const HEADER: usize = 8 + 8 + 4;

/// Encodes a snapshot file of `values` (schema-prefixed values, in key order) at `log_offset`.
pub fn encode_kv_snapshot(log_offset: i64, values: &[&[u8]]) -> Vec<u8> {
    let batch = encode_value_batch_from_values(values);
    let mut out = Vec::with_capacity(HEADER + batch.len());
    out.extend_from_slice(KV_SNAPSHOT_MAGIC);
    out.extend_from_slice(&log_offset.to_le_bytes());
    out.extend_from_slice(&crc32c::crc32c(&batch).to_le_bytes());
    out.extend_from_slice(&batch);
    out
}

/// Whether `bytes` start like a Riverlet snapshot file.
pub fn is_kv_snapshot(bytes: &[u8]) -> bool {
    bytes.starts_with(KV_SNAPSHOT_MAGIC)
}

/// Decodes a snapshot file: the log offset it covers and its values (schema-prefixed).
pub fn decode_kv_snapshot(bytes: &[u8]) -> Result<(i64, Vec<&[u8]>)> {
    if !is_kv_snapshot(bytes) {
        return Err(Error::corrupt(
            "not a Riverlet KV snapshot file (bad magic)",
        ));
    }
    if bytes.len() < HEADER {
        return Err(Error::corrupt(format!(
            "truncated KV snapshot file: {} bytes, the header alone is {HEADER}",
            bytes.len()
        )));
    }
    let mut o = [0u8; 8];
    o.copy_from_slice(&bytes[8..16]);
    let log_offset = i64::from_le_bytes(o);
    let mut c = [0u8; 4];
    c.copy_from_slice(&bytes[16..20]);
    let batch = &bytes[HEADER..];
    if crc32c::crc32c(batch) != u32::from_le_bytes(c) {
        return Err(Error::corrupt("KV snapshot file fails its checksum"));
    }
    let vb = ValueRecordBatch::new(batch)?;
    if vb.size_in_bytes() != batch.len() {
        return Err(Error::corrupt(format!(
            "KV snapshot file has {} bytes after its value batch",
            batch.len().saturating_sub(vb.size_in_bytes())
        )));
    }
    let mut values = Vec::with_capacity(vb.record_count().max(0) as usize);
    for r in vb.records() {
        values.push(r?.value);
    }
    Ok((log_offset, values))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let a: &[u8] = &[1, 0, 9, 9];
        let b: &[u8] = &[1, 0];
        let bytes = encode_kv_snapshot(42, &[a, b]);
        let (off, values) = decode_kv_snapshot(&bytes).unwrap();
        assert_eq!(off, 42);
        assert_eq!(values, vec![a, b]);
        let mut bad = bytes.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(decode_kv_snapshot(&bad).is_err());
        assert!(decode_kv_snapshot(&bytes[..12]).is_err());
        assert!(decode_kv_snapshot(b"CURRENT\n").is_err());
        let empty = encode_kv_snapshot(0, &[]);
        let (off, values) = decode_kv_snapshot(&empty).unwrap();
        assert_eq!((off, values.len()), (0, 0));
    }
}
