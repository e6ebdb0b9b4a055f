//! KV snapshots of one primary-key bucket, in the sense of Fluss's periodic KV snapshots
//! (`kv.snapshot.interval`): a numbered, immutable copy of the bucket's whole state and the log
//! offset it covers, which GetLatestKvSnapshots reports and GetKvSnapshotMetadata names as
//! files. These are not the KV tablet's own recovery files (`kv.rs`), which change in place.
//!
//! Two formats, in the bucket's `kv-snapshots/` directory:
//!
//! - with the `kv-snapshot` feature, RocksDB files laid out and described as Apache Fluss does
//!   (`snap-{id}/` with `_METADATA`, SSTs in `shared/`: [`fluss_layout`], written by `rocks`),
//!   which Fluss's Java client (`KvSnapshotBatchScanner`) and core's `kv-snapshot` reader open;
//! - without it, one file in the core's snapshot format (`riverlet::record::kv_snapshot`) at
//!   `{id}/riverlet-kv-snapshot`, which only Riverlet reads (Fluss's clients open snapshot
//!   files as RocksDB and fail on it).
//!
//! A store recovers both, whatever the build (reading `_METADATA` needs no RocksDB), so a
//! data directory keeps its snapshots across a rebuild with or without the feature. Every
//! file is named by a `file://` URL.

pub mod fluss_layout;
#[cfg(feature = "kv-snapshot")]
mod rocks;

use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use riverlet::error::codes;
use riverlet::record::kv_snapshot::{encode_kv_snapshot, KV_SNAPSHOT_FILE_NAME};
use riverlet::{Error, Result};

use fluss_layout::{SnapshotHandle, METADATA_FILE, SHARED_DIR, SNAPSHOT_DIR_PREFIX};

/// One completed snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvSnapshot {
    /// Snapshot id (per bucket, increasing from 0).
    pub id: i64,
    /// The log offset the state covers: changes before it are in it.
    pub log_offset: i64,
}

/// A file GetKvSnapshotMetadata names: where it is and its local RocksDB name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedFile {
    /// A `file://` URL.
    pub remote_path: String,
    /// The name a reader gives its copy.
    pub local_file_name: String,
}

/// How one retained snapshot is stored.
enum Stored {
    /// `{id}/riverlet-kv-snapshot`.
    Riverlet,
    /// `snap-{id}/` and the shared files its handle names.
    Fluss(SnapshotHandle),
}

struct Entry {
    snapshot: KvSnapshot,
    stored: Stored,
}

/// The bucket a store belongs to (Fluss's `_METADATA` names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketId {
    /// Table id.
    pub table_id: i64,
    /// Partition id of a partitioned table's bucket.
    pub partition_id: Option<i64>,
    /// Bucket number.
    pub bucket: i32,
}

/// The snapshots of one bucket (the latest two are kept, so a reader that just learned the
/// previous id still finds its files while the next one is written, and so are the ones a KV
/// snapshot lease holds, until it is released or expires).
pub struct KvSnapshotStore {
    dir: PathBuf,
    #[cfg_attr(not(feature = "kv-snapshot"), allow(dead_code))]
    bucket: BucketId,
    entries: Vec<Entry>,
}

const RETAINED: usize = 2;

fn io_err(what: &str, path: &Path, e: impl std::fmt::Display) -> Error {
    Error::from_fluss(
        codes::KV_STORAGE_EXCEPTION,
        format!("kv snapshot: {what} {}: {e}", path.display()),
    )
}

/// The Riverlet-format snapshot in `dir` (`{id}/riverlet-kv-snapshot`), if complete.
fn recover_riverlet(id: i64, dir: &Path) -> Option<Entry> {
    let bytes = fs::read(dir.join(KV_SNAPSHOT_FILE_NAME)).ok()?;
    let (log_offset, _) = riverlet::record::kv_snapshot::decode_kv_snapshot(&bytes).ok()?;
    Some(Entry {
        snapshot: KvSnapshot { id, log_offset },
        stored: Stored::Riverlet,
    })
}

/// The Fluss-layout snapshot in `dir` (`snap-{id}/_METADATA`), if complete: its handle is
/// written last, and names this snapshot.
fn recover_fluss(id: i64, dir: &Path) -> Option<Entry> {
    let file = dir.join(METADATA_FILE);
    let bytes = fs::read(&file).ok()?;
    let handle = match SnapshotHandle::from_json(&bytes, &file) {
        Ok(h) if h.snapshot_id == id => h,
        Ok(h) => {
            tracing::warn!(
                "{}: names snapshot {}, not {id}",
                file.display(),
                h.snapshot_id
            );
            return None;
        }
        Err(e) => {
            tracing::warn!("{e}");
            return None;
        }
    };
    Some(Entry {
        snapshot: KvSnapshot {
            id,
            log_offset: handle.log_offset,
        },
        stored: Stored::Fluss(handle),
    })
}

impl KvSnapshotStore {
    /// Opens `dir` (creating it), recovering the complete snapshots in it, in either format;
    /// leftovers of an interrupted write are removed (incomplete snapshot directories, and
    /// shared files no snapshot names).
    pub fn open(dir: &Path, bucket: BucketId) -> KvSnapshotStore {
        // Created here, not by `write`: a write racing with the bucket's drop then fails
        // instead of leaving a directory behind.
        let _ = fs::create_dir_all(dir);
        // Absolute, as the URLs in `_METADATA` and GetKvSnapshotMetadata must be.
        let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let mut entries = Vec::new();
        if let Ok(rd) = fs::read_dir(&dir) {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                if name == SHARED_DIR {
                    continue;
                }
                let recovered = if let Some(id) = fluss_layout::snapshot_dir_id(&name) {
                    recover_fluss(id, &e.path())
                } else {
                    name.parse::<i64>()
                        .ok()
                        .and_then(|id| recover_riverlet(id, &e.path()))
                };
                match recovered {
                    Some(entry) => entries.push(entry),
                    None => {
                        let _ = fs::remove_dir_all(e.path());
                    }
                }
            }
        }
        entries.sort_by_key(|e| e.snapshot.id);
        let store = KvSnapshotStore {
            dir,
            bucket,
            entries,
        };
        store.remove_unnamed_shared_files();
        store
    }

    /// Removes the files of `shared/` no retained snapshot names (an interrupted write's).
    fn remove_unnamed_shared_files(&self) {
        let named: HashSet<PathBuf> = self
            .entries
            .iter()
            .filter_map(|e| match &e.stored {
                Stored::Fluss(h) => Some(h.shared.iter()),
                Stored::Riverlet => None,
            })
            .flatten()
            .filter_map(|f| fluss_layout::local_path(&f.path))
            .collect();
        if let Ok(rd) = fs::read_dir(self.dir.join(SHARED_DIR)) {
            for e in rd.flatten() {
                if !named.contains(&e.path()) {
                    let _ = fs::remove_file(e.path());
                }
            }
        }
    }

    /// The latest completed snapshot.
    pub fn latest(&self) -> Option<KvSnapshot> {
        self.entries.last().map(|e| e.snapshot)
    }

    /// A retained snapshot and the files GetKvSnapshotMetadata names for it.
    pub fn get(&self, id: i64) -> Option<(KvSnapshot, Vec<NamedFile>)> {
        let e = self.entries.iter().find(|e| e.snapshot.id == id)?;
        let files = match &e.stored {
            Stored::Riverlet => vec![NamedFile {
                remote_path: fluss_layout::file_url(&self.riverlet_file(id)),
                local_file_name: KV_SNAPSHOT_FILE_NAME.to_string(),
            }],
            Stored::Fluss(h) => h
                .files()
                .map(|f| NamedFile {
                    remote_path: f.path.clone(),
                    local_file_name: f.local_name.clone(),
                })
                .collect(),
        };
        Some((e.snapshot, files))
    }

    /// Every snapshot kept, oldest first.
    pub fn all(&self) -> Vec<KvSnapshot> {
        self.entries.iter().map(|e| e.snapshot).collect()
    }

    /// Deletes the snapshots neither among the latest two nor `leased`.
    pub fn prune(&mut self, leased: &dyn Fn(i64) -> bool) {
        let keep_from = self.entries.len().saturating_sub(RETAINED);
        let mut i = 0;
        let dir = self.dir.clone();
        self.entries.retain(|e| {
            let keep = i >= keep_from || leased(e.snapshot.id);
            i += 1;
            if !keep {
                remove_snapshot(&dir, e);
            }
            keep
        });
    }

    fn riverlet_file(&self, id: i64) -> PathBuf {
        self.dir.join(id.to_string()).join(KV_SNAPSHOT_FILE_NAME)
    }

    /// Writes a new snapshot of `entries` (encoded key, schema-prefixed value; in key order)
    /// covering the log up to `log_offset`, and drops the snapshots no longer retained
    /// (`leased`: the ids a lease holds, kept). With the `kv-snapshot` feature it is RocksDB
    /// files in Fluss's layout, without it a Riverlet snapshot file (values only).
    pub fn write(
        &mut self,
        log_offset: i64,
        entries: &[(Vec<u8>, Vec<u8>)],
        leased: &dyn Fn(i64) -> bool,
    ) -> Result<KvSnapshot> {
        let id = self.latest().map_or(0, |s| s.id + 1);
        let stored = self.write_files(id, log_offset, entries)?;
        let s = KvSnapshot { id, log_offset };
        self.entries.push(Entry {
            snapshot: s,
            stored,
        });
        self.prune(leased);
        Ok(s)
    }

    #[cfg(feature = "kv-snapshot")]
    fn write_files(
        &self,
        id: i64,
        log_offset: i64,
        entries: &[(Vec<u8>, Vec<u8>)],
    ) -> Result<Stored> {
        let target = rocks::Target {
            dir: &self.dir,
            table_id: self.bucket.table_id,
            partition_id: self.bucket.partition_id,
            bucket: self.bucket.bucket,
        };
        rocks::write(&target, id, log_offset, entries).map(Stored::Fluss)
    }

    #[cfg(not(feature = "kv-snapshot"))]
    fn write_files(
        &self,
        id: i64,
        log_offset: i64,
        entries: &[(Vec<u8>, Vec<u8>)],
    ) -> Result<Stored> {
        let values: Vec<&[u8]> = entries.iter().map(|(_, v)| v.as_slice()).collect();
        write_riverlet_file(&self.dir, id, log_offset, &values)?;
        Ok(Stored::Riverlet)
    }
}

/// Writes snapshot `id` as a Riverlet snapshot file (`{id}/riverlet-kv-snapshot`, through
/// `{id}.tmp`). With the `kv-snapshot` feature only the tests write one (the recovery of
/// snapshots an earlier build wrote).
#[cfg_attr(all(feature = "kv-snapshot", not(test)), allow(dead_code))]
fn write_riverlet_file(dir: &Path, id: i64, log_offset: i64, values: &[&[u8]]) -> Result<()> {
    let bytes = encode_kv_snapshot(log_offset, values);
    let tmp = dir.join(format!("{id}.tmp"));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir(&tmp).map_err(|e| io_err("create", &tmp, e))?;
    let tmp_file = tmp.join(KV_SNAPSHOT_FILE_NAME);
    {
        let mut f = fs::File::create(&tmp_file).map_err(|e| io_err("create", &tmp_file, e))?;
        f.write_all(&bytes)
            .map_err(|e| io_err("write", &tmp_file, e))?;
        f.sync_all().map_err(|e| io_err("fsync", &tmp_file, e))?;
    }
    let done = dir.join(id.to_string());
    fs::rename(&tmp, &done).map_err(|e| io_err("rename", &tmp, e))?;
    crate::log::sync_dir(dir);
    Ok(())
}

/// Deletes a snapshot's files: its directory and, in Fluss's layout, the shared files its
/// handle names (no other snapshot names them: each writes its own).
fn remove_snapshot(dir: &Path, e: &Entry) {
    match &e.stored {
        Stored::Riverlet => {
            let _ = fs::remove_dir_all(dir.join(e.snapshot.id.to_string()));
        }
        Stored::Fluss(h) => {
            let _ = fs::remove_dir_all(dir.join(format!("{SNAPSHOT_DIR_PREFIX}{}", e.snapshot.id)));
            let shared = dir.join(SHARED_DIR);
            for f in &h.shared {
                // Only inside this store's shared/: a handle is data, not a licence to delete.
                if let Some(p) = fluss_layout::local_path(&f.path)
                    .filter(|p| p.parent() == Some(shared.as_path()))
                {
                    let _ = fs::remove_file(p);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUCKET: BucketId = BucketId {
        table_id: 5,
        partition_id: None,
        bucket: 0,
    };

    fn entry(k: u8) -> (Vec<u8>, Vec<u8>) {
        (vec![k], vec![1, 0, 7, k])
    }

    #[test]
    fn ids_advance_two_are_retained_and_they_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = KvSnapshotStore::open(dir.path(), BUCKET);
        assert_eq!(s.latest(), None);
        assert_eq!(
            s.write(3, &[entry(1)], &|_| false).unwrap(),
            KvSnapshot {
                id: 0,
                log_offset: 3
            }
        );
        assert_eq!(s.write(5, &[entry(1)], &|_| false).unwrap().id, 1);
        assert_eq!(
            s.write(9, &[], &|_| false).unwrap(),
            KvSnapshot {
                id: 2,
                log_offset: 9
            }
        );
        assert!(s.get(0).is_none());
        let (_, files) = s.get(1).unwrap();
        for f in &files {
            assert!(
                fluss_layout::local_path(&f.remote_path).unwrap().exists(),
                "{f:?}"
            );
        }
        std::fs::create_dir_all(dir.path().join("3.tmp")).unwrap();
        std::fs::create_dir_all(dir.path().join("snap-3.tmp")).unwrap();
        let s = KvSnapshotStore::open(dir.path(), BUCKET);
        assert_eq!(
            s.latest(),
            Some(KvSnapshot {
                id: 2,
                log_offset: 9
            })
        );
        assert_eq!(s.get(1).unwrap().1, files);
        assert!(!dir.path().join("3.tmp").exists());
        assert!(!dir.path().join("snap-3.tmp").exists());
    }

    #[test]
    fn riverlet_snapshot_files_of_an_earlier_build_are_recovered_and_retired() {
        let dir = tempfile::tempdir().unwrap();
        let v: &[u8] = &[1, 0, 7];
        write_riverlet_file(dir.path(), 0, 4, &[v]).unwrap();
        write_riverlet_file(dir.path(), 1, 6, &[v]).unwrap();
        let mut s = KvSnapshotStore::open(dir.path(), BUCKET);
        assert_eq!(s.all().iter().map(|s| s.id).collect::<Vec<_>>(), [0, 1]);
        let (snap, files) = s.get(1).unwrap();
        assert_eq!(snap.log_offset, 6);
        assert_eq!(files[0].local_file_name, KV_SNAPSHOT_FILE_NAME);
        // The next ids follow them, whatever format this build writes.
        assert_eq!(s.write(8, &[entry(2)], &|_| false).unwrap().id, 2);
        assert_eq!(s.write(9, &[entry(2)], &|_| false).unwrap().id, 3);
        assert!(!dir.path().join("0").exists() && !dir.path().join("1").exists());
        assert_eq!(s.all().iter().map(|s| s.id).collect::<Vec<_>>(), [2, 3]);
    }
}
