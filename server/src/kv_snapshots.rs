//! KV snapshots of one primary-key bucket, in the sense of Fluss's periodic KV snapshots
//! (`kv.snapshot.interval`): a numbered, immutable copy of the bucket's whole state and the log
//! offset it covers, which GetLatestKvSnapshots reports and GetKvSnapshotMetadata names as
//! files. Where Fluss uploads RocksDB files to remote storage, this server writes one file in
//! the core's snapshot format (`riverlet::record::kv_snapshot`) to
//! `{bucket dir}/kv-snapshots/{id}/riverlet-kv-snapshot` and names it by a `file:` URL.
//! These are not the KV tablet's own recovery files (`kv.rs`), which change in place.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use riverlet::error::codes;
use riverlet::record::kv_snapshot::{encode_kv_snapshot, KV_SNAPSHOT_FILE_NAME};
use riverlet::{Error, Result};

/// One completed snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvSnapshot {
    /// Snapshot id (per bucket, increasing from 0).
    pub id: i64,
    /// The log offset the state covers: changes before it are in it.
    pub log_offset: i64,
}

/// The snapshots of one bucket (the latest two are kept, so a reader that just learned the
/// previous id still finds its file while the next one is written, and so are the ones a KV
/// snapshot lease holds, until it is released or expires).
pub struct KvSnapshotStore {
    dir: PathBuf,
    snapshots: Vec<KvSnapshot>,
}

const RETAINED: usize = 2;

fn io_err(what: &str, path: &Path, e: impl std::fmt::Display) -> Error {
    Error::from_fluss(
        codes::KV_STORAGE_EXCEPTION,
        format!("kv snapshot: {what} {}: {e}", path.display()),
    )
}

impl KvSnapshotStore {
    /// Opens `dir` (creating it), recovering the complete snapshots in it;
    /// leftovers of an interrupted write are removed.
    pub fn open(dir: &Path) -> KvSnapshotStore {
        // Created here, not by `write`: a write racing with the bucket's drop then fails
        // instead of leaving a directory behind.
        let _ = fs::create_dir_all(dir);
        let mut snapshots = Vec::new();
        if let Ok(rd) = fs::read_dir(dir) {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                let file = e.path().join(KV_SNAPSHOT_FILE_NAME);
                let parsed = name.parse::<i64>().ok().and_then(|id| {
                    let bytes = fs::read(&file).ok()?;
                    let (log_offset, _) =
                        riverlet::record::kv_snapshot::decode_kv_snapshot(&bytes).ok()?;
                    Some(KvSnapshot { id, log_offset })
                });
                match parsed {
                    Some(s) => snapshots.push(s),
                    None => {
                        let _ = fs::remove_dir_all(e.path());
                    }
                }
            }
        }
        snapshots.sort_by_key(|s| s.id);
        KvSnapshotStore {
            dir: dir.to_path_buf(),
            snapshots,
        }
    }

    /// The latest completed snapshot.
    pub fn latest(&self) -> Option<KvSnapshot> {
        self.snapshots.last().copied()
    }

    /// A retained snapshot and its file.
    pub fn get(&self, id: i64) -> Option<(KvSnapshot, PathBuf)> {
        self.snapshots
            .iter()
            .find(|s| s.id == id)
            .map(|s| (*s, self.file(s.id)))
    }

    /// Every snapshot kept, oldest first.
    pub fn all(&self) -> &[KvSnapshot] {
        &self.snapshots
    }

    /// Deletes the snapshots neither among the latest two nor `leased`.
    pub fn prune(&mut self, leased: &dyn Fn(i64) -> bool) {
        let keep_from = self.snapshots.len().saturating_sub(RETAINED);
        let mut i = 0;
        self.snapshots.retain(|s| {
            let keep = i >= keep_from || leased(s.id);
            i += 1;
            if !keep {
                let _ = fs::remove_dir_all(self.dir.join(s.id.to_string()));
            }
            keep
        });
    }

    fn file(&self, id: i64) -> PathBuf {
        self.dir.join(id.to_string()).join(KV_SNAPSHOT_FILE_NAME)
    }

    /// Writes a new snapshot of `values` (schema-prefixed, key order) covering the log up to
    /// `log_offset`, and drops the snapshots no longer retained (`leased`: the ids a lease
    /// holds, kept).
    pub fn write(
        &mut self,
        log_offset: i64,
        values: &[&[u8]],
        leased: &dyn Fn(i64) -> bool,
    ) -> Result<KvSnapshot> {
        let id = self.latest().map_or(0, |s| s.id + 1);
        let bytes = encode_kv_snapshot(log_offset, values);
        let tmp = self.dir.join(format!("{id}.tmp"));
        let _ = fs::remove_dir_all(&tmp);
        fs::create_dir(&tmp).map_err(|e| io_err("create", &tmp, e))?;
        let tmp_file = tmp.join(KV_SNAPSHOT_FILE_NAME);
        {
            let mut f = fs::File::create(&tmp_file).map_err(|e| io_err("create", &tmp_file, e))?;
            f.write_all(&bytes)
                .map_err(|e| io_err("write", &tmp_file, e))?;
            f.sync_all().map_err(|e| io_err("fsync", &tmp_file, e))?;
        }
        let done = self.dir.join(id.to_string());
        fs::rename(&tmp, &done).map_err(|e| io_err("rename", &tmp, e))?;
        crate::log::sync_dir(&self.dir);
        let s = KvSnapshot { id, log_offset };
        self.snapshots.push(s);
        self.prune(leased);
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_advance_two_are_retained_and_they_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = KvSnapshotStore::open(dir.path());
        assert_eq!(s.latest(), None);
        let v: &[u8] = &[1, 0, 7];
        assert_eq!(
            s.write(3, &[v], &|_| false).unwrap(),
            KvSnapshot {
                id: 0,
                log_offset: 3
            }
        );
        assert_eq!(s.write(5, &[v], &|_| false).unwrap().id, 1);
        assert_eq!(
            s.write(9, &[], &|_| false).unwrap(),
            KvSnapshot {
                id: 2,
                log_offset: 9
            }
        );
        assert!(s.get(0).is_none());
        let (_, file) = s.get(1).unwrap();
        assert!(file.exists());
        std::fs::create_dir_all(dir.path().join("3.tmp")).unwrap();
        let s = KvSnapshotStore::open(dir.path());
        assert_eq!(
            s.latest(),
            Some(KvSnapshot {
                id: 2,
                log_offset: 9
            })
        );
        assert!(s.get(1).is_some());
        assert!(!dir.path().join("3.tmp").exists());
    }
}
