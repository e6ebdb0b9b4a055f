//! KV tablet: the primary-key state of one bucket (encoded PK bytes -> value bytes, where a value
//! is Fluss's `int16 schema id (LE) + row bytes`), kept in an ordered in-memory map so prefix
//! lookups are range scans.
//!
//! Durability (a Riverlet-private format, not a Fluss one): every applied PutKv appends one
//! record of the resulting mutations to `kv.wal`:
//! `u32 payload length | u32 crc32c(payload) | payload`, payload =
//! `i64 log end offset after the write | u32 count | count x (u8 op (1 put, 0 delete) | u32 key len | key | [u32 value len | value])`
//! (little-endian). A snapshot `kv.snapshot` (same mutation encoding with op=1 for every entry,
//! written to a temp file, fsynced and renamed) is taken when the WAL grows past a threshold and
//! on clean shutdown; the WAL is then reset. Recovery loads the snapshot and replays the WAL up to
//! the first torn record.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use riverlet::error::codes;
use riverlet::{Error, Result};

use crate::config::FsyncPolicy;

const SNAPSHOT: &str = "kv.snapshot";
const WAL: &str = "kv.wal";

fn kv_err(context: &str, e: impl std::fmt::Display) -> Error {
    Error::from_fluss(codes::KV_STORAGE_EXCEPTION, format!("{context}: {e}"))
}

/// One state change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mutation {
    /// Set key to value.
    Put(Vec<u8>, Vec<u8>),
    /// Remove key.
    Delete(Vec<u8>),
}

/// The KV state of one bucket.
pub struct KvTablet {
    dir: PathBuf,
    map: BTreeMap<Vec<u8>, Vec<u8>>,
    wal: File,
    wal_bytes: u64,
    /// Log end offset the state is consistent with.
    log_offset: i64,
    fsync: FsyncPolicy,
    snapshot_threshold: u64,
}

/// The head of a WAL record or snapshot payload: the log offset it brings the state to and
/// the number of mutations after it.
fn encode_head(out: &mut Vec<u8>, log_offset: i64, count: usize) {
    out.extend_from_slice(&log_offset.to_le_bytes());
    out.extend_from_slice(&(count as u32).to_le_bytes());
}

fn encode_mutations(out: &mut Vec<u8>, log_offset: i64, muts: &[Mutation]) {
    encode_head(out, log_offset, muts.len());
    for m in muts {
        match m {
            Mutation::Put(k, v) => encode_put(out, k, v),
            Mutation::Delete(k) => {
                out.push(0);
                out.extend_from_slice(&(k.len() as u32).to_le_bytes());
                out.extend_from_slice(k);
            }
        }
    }
}

fn encode_put(out: &mut Vec<u8>, k: &[u8], v: &[u8]) {
    out.push(1);
    out.extend_from_slice(&(k.len() as u32).to_le_bytes());
    out.extend_from_slice(k);
    out.extend_from_slice(&(v.len() as u32).to_le_bytes());
    out.extend_from_slice(v);
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

/// Decodes a mutation payload; None when malformed.
fn decode_mutations(payload: &[u8]) -> Option<(i64, Vec<Mutation>)> {
    let mut r = Reader {
        buf: payload,
        pos: 0,
    };
    let off = r.i64()?;
    let n = r.u32()? as usize;
    let mut muts = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        let op = *r.take(1)?.first()?;
        let kl = r.u32()? as usize;
        let k = r.take(kl)?.to_vec();
        if op == 1 {
            let vl = r.u32()? as usize;
            muts.push(Mutation::Put(k, r.take(vl)?.to_vec()));
        } else {
            muts.push(Mutation::Delete(k));
        }
    }
    Some((off, muts))
}

/// One framed record (payload length, CRC-32C of the payload, payload), with the payload
/// written by `encode` after a reserved header instead of being copied in.
fn frame_in_place(encode: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut out = vec![0u8; 8];
    encode(&mut out);
    let len = (out.len() - 8) as u32;
    let crc = crc32c::crc32c(&out[8..]);
    out[..4].copy_from_slice(&len.to_le_bytes());
    out[4..8].copy_from_slice(&crc.to_le_bytes());
    out
}

/// Splits framed records; returns the payloads and the byte length of the valid prefix.
fn unframe(buf: &[u8]) -> (Vec<&[u8]>, usize) {
    let mut out = Vec::new();
    let mut r = Reader { buf, pos: 0 };
    loop {
        let start = r.pos;
        let (Some(len), Some(crc)) = (r.u32(), r.u32()) else {
            return (out, start);
        };
        let Some(p) = r.take(len as usize) else {
            return (out, start);
        };
        if crc32c::crc32c(p) != crc {
            return (out, start);
        }
        out.push(p);
    }
}

impl KvTablet {
    /// Opens (or creates) the state in `dir`.
    pub fn open(dir: &Path, fsync: FsyncPolicy, snapshot_threshold: u64) -> Result<KvTablet> {
        fs::create_dir_all(dir).map_err(|e| kv_err("create kv dir", e))?;
        let mut map = BTreeMap::new();
        let mut log_offset = 0i64;
        if let Ok(bytes) = fs::read(dir.join(SNAPSHOT)) {
            let (payloads, _) = unframe(&bytes);
            let Some(p) = payloads.first() else {
                return Err(kv_err("kv snapshot", "corrupt snapshot file"));
            };
            let (off, muts) =
                decode_mutations(p).ok_or_else(|| kv_err("kv snapshot", "malformed snapshot"))?;
            log_offset = off;
            for m in muts {
                if let Mutation::Put(k, v) = m {
                    map.insert(k, v);
                }
            }
        }
        let wal_path = dir.join(WAL);
        let mut wal_bytes = 0;
        if let Ok(mut f) = File::open(&wal_path) {
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes)
                .map_err(|e| kv_err("read kv wal", e))?;
            let (payloads, valid) = unframe(&bytes);
            for p in payloads {
                let Some((off, muts)) = decode_mutations(p) else {
                    break;
                };
                log_offset = off;
                apply(&mut map, muts);
            }
            if valid < bytes.len() {
                tracing::warn!("truncating torn tail of {}", wal_path.display());
                let f = OpenOptions::new()
                    .write(true)
                    .open(&wal_path)
                    .map_err(|e| kv_err("open kv wal", e))?;
                f.set_len(valid as u64)
                    .map_err(|e| kv_err("truncate kv wal", e))?;
                f.sync_data().map_err(|e| kv_err("fsync kv wal", e))?;
            }
            wal_bytes = valid as u64;
        }
        let wal = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&wal_path)
            .map_err(|e| kv_err("open kv wal", e))?;
        Ok(KvTablet {
            dir: dir.to_path_buf(),
            map,
            wal,
            wal_bytes,
            log_offset,
            fsync,
            snapshot_threshold,
        })
    }

    /// Log end offset the state reflects.
    pub fn log_offset(&self) -> i64 {
        self.log_offset
    }

    /// Current value of a key.
    pub fn get(&self, key: &[u8]) -> Option<&[u8]> {
        self.map.get(key).map(|v| v.as_slice())
    }

    /// Values of every key starting with `prefix`, in key order.
    pub fn prefix(&self, prefix: &[u8]) -> Vec<Vec<u8>> {
        self.map
            .range(prefix.to_vec()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// Up to `limit` values in key order (all when limit <= 0).
    pub fn values(&self, limit: usize) -> Vec<Vec<u8>> {
        self.map.values().take(limit).cloned().collect()
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the state is empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Persists then applies a set of mutations that brought the log to `log_offset`.
    pub fn commit(&mut self, log_offset: i64, muts: Vec<Mutation>) -> Result<()> {
        let rec = frame_in_place(|out| encode_mutations(out, log_offset, &muts));
        self.wal
            .write_all(&rec)
            .map_err(|e| kv_err("append kv wal", e))?;
        if self.fsync == FsyncPolicy::Always {
            self.wal
                .sync_data()
                .map_err(|e| kv_err("fsync kv wal", e))?;
        }
        self.wal_bytes += rec.len() as u64;
        apply(&mut self.map, muts);
        self.log_offset = log_offset;
        if self.wal_bytes >= self.snapshot_threshold {
            self.snapshot()?;
        }
        Ok(())
    }

    /// Writes a full snapshot and resets the WAL.
    pub fn snapshot(&mut self) -> Result<()> {
        // Encoded straight from the map into one framed buffer: a state of N bytes costs N
        // bytes more while it is written, not three copies of it.
        let rec = frame_in_place(|out| {
            encode_head(out, self.log_offset, self.map.len());
            for (k, v) in &self.map {
                encode_put(out, k, v);
            }
        });
        let tmp = self.dir.join("kv.snapshot.tmp");
        {
            let mut f = File::create(&tmp).map_err(|e| kv_err("create kv snapshot", e))?;
            f.write_all(&rec)
                .map_err(|e| kv_err("write kv snapshot", e))?;
            f.sync_all().map_err(|e| kv_err("fsync kv snapshot", e))?;
        }
        fs::rename(&tmp, self.dir.join(SNAPSHOT)).map_err(|e| kv_err("rename kv snapshot", e))?;
        crate::log::sync_dir(&self.dir);
        self.wal.set_len(0).map_err(|e| kv_err("reset kv wal", e))?;
        self.wal
            .sync_data()
            .map_err(|e| kv_err("fsync kv wal", e))?;
        self.wal_bytes = 0;
        Ok(())
    }

    /// Whether the WAL holds mutations that no snapshot covers yet.
    pub fn has_unsnapshotted_changes(&self) -> bool {
        self.wal_bytes > 0
    }

    /// Syncs the WAL (clean shutdown).
    pub fn flush(&self) -> Result<()> {
        self.wal.sync_data().map_err(|e| kv_err("fsync kv wal", e))
    }

    /// A consistent copy of the whole state, keys and values, in key order (for KV snapshots).
    pub fn snapshot_entries(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.map
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// A consistent copy of the whole state (for ScanKv sessions), in key order.
    pub fn snapshot_values(&self) -> Vec<Vec<u8>> {
        self.map.values().cloned().collect()
    }
}

fn apply(map: &mut BTreeMap<Vec<u8>, Vec<u8>>, muts: Vec<Mutation>) {
    for m in muts {
        match m {
            Mutation::Put(k, v) => {
                map.insert(k, v);
            }
            Mutation::Delete(k) => {
                map.remove(&k);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wal_snapshot_and_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut kv = KvTablet::open(dir.path(), FsyncPolicy::Always, 1 << 30).unwrap();
            kv.commit(2, vec![Mutation::Put(b"a".to_vec(), b"1".to_vec())])
                .unwrap();
            kv.commit(
                4,
                vec![
                    Mutation::Put(b"ab".to_vec(), b"2".to_vec()),
                    Mutation::Put(b"b".to_vec(), b"3".to_vec()),
                ],
            )
            .unwrap();
            kv.snapshot().unwrap();
            kv.commit(5, vec![Mutation::Delete(b"b".to_vec())]).unwrap();
        }
        // a torn record at the end is dropped
        {
            let mut f = OpenOptions::new()
                .append(true)
                .open(dir.path().join(WAL))
                .unwrap();
            f.write_all(&[9, 0, 0, 0, 1, 2]).unwrap();
        }
        let kv = KvTablet::open(dir.path(), FsyncPolicy::Always, 1 << 30).unwrap();
        assert_eq!(kv.log_offset(), 5);
        assert_eq!(kv.len(), 2);
        assert_eq!(kv.prefix(b"a"), vec![b"1".to_vec(), b"2".to_vec()]);
        assert_eq!(kv.get(b"b"), None);
        assert_eq!(
            fs::metadata(dir.path().join(WAL)).unwrap().len() as usize,
            {
                let mut p = Vec::new();
                encode_mutations(&mut p, 5, &[Mutation::Delete(b"b".to_vec())]);
                p.len() + 8
            }
        );
    }
}
