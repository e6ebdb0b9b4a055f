//! The buckets this node leads (all of them): a log tablet each, plus a KV tablet for
//! primary-key tables. Directory layout: `{data_dir}/tablets/{table id}[-p{partition id}]/{bucket}/{log,kv,kv-snapshots}`.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use riverlet::error::codes;
use riverlet::{Error, Result};

use crate::catalog::TableMeta;
use crate::config::ServerConfig;
use crate::kv::KvTablet;
use crate::kv_snapshots::{BucketId, KvSnapshotStore};
use crate::log::{LogConfig, LogTablet};

/// Identifies one bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableBucket {
    /// Table id.
    pub table_id: i64,
    /// Partition id of partitioned tables.
    pub partition_id: Option<i64>,
    /// Bucket number.
    pub bucket: i32,
}

impl fmt::Display for TableBucket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.partition_id {
            Some(p) => write!(
                f,
                "TableBucket{{tableId={}, partitionId={p}, bucket={}}}",
                self.table_id, self.bucket
            ),
            None => write!(
                f,
                "TableBucket{{tableId={}, bucket={}}}",
                self.table_id, self.bucket
            ),
        }
    }
}

/// One bucket's storage.
pub struct Bucket {
    /// Its log (the changelog for PK tables).
    pub log: LogTablet,
    /// Its KV state (PK tables only).
    pub kv: Option<KvTablet>,
    /// Its KV snapshots (PK tables only), apart from the bucket lock so that writing one does
    /// not hold up the bucket's writes.
    pub snapshots: Option<Arc<Mutex<KvSnapshotStore>>>,
}

/// All buckets.
pub struct Tablets {
    root: PathBuf,
    log_cfg: LogConfig,
    kv_snapshot_bytes: u64,
    map: Mutex<HashMap<TableBucket, Arc<RwLock<Bucket>>>>,
    /// Auto-increment sequences of the tables that have such a column.
    pub sequences: crate::autoinc::Sequences,
}

fn table_dir(root: &Path, table_id: i64, partition_id: Option<i64>) -> PathBuf {
    match partition_id {
        Some(p) => root.join(format!("{table_id}-p{p}")),
        None => root.join(format!("{table_id}")),
    }
}

impl Tablets {
    /// Creates the registry (nothing opened yet).
    pub fn new(cfg: &ServerConfig) -> Tablets {
        Tablets {
            root: cfg.data_dir.join("tablets"),
            log_cfg: LogConfig {
                segment_bytes: cfg.segment_bytes,
                segment_ms: cfg.segment_ms,
                index_interval_bytes: cfg.index_interval_bytes,
                fsync: cfg.fsync,
            },
            kv_snapshot_bytes: cfg.kv_snapshot_wal_bytes,
            map: Mutex::new(HashMap::new()),
            sequences: crate::autoinc::Sequences::new(cfg.data_dir.join("tablets")),
        }
    }

    /// The bucket map. A thread that panicked while holding the lock cannot have left it half
    /// changed (every change is one insert or retain), so a poisoned lock is recovered, as the
    /// service recovers its other locks, instead of taking every later request down with it.
    fn buckets(&self) -> MutexGuard<'_, HashMap<TableBucket, Arc<RwLock<Bucket>>>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens (creating or recovering) every bucket of a table or of one partition.
    pub fn open_buckets(&self, meta: &TableMeta, partition_id: Option<i64>) -> Result<()> {
        for b in 0..meta.buckets {
            let tb = TableBucket {
                table_id: meta.entry.id,
                partition_id,
                bucket: b,
            };
            let dir = table_dir(&self.root, tb.table_id, partition_id).join(b.to_string());
            let mut log = LogTablet::open(&dir.join("log"), tb.to_string(), self.log_cfg.clone())?;
            let snapshots = meta.is_pk().then(|| {
                let id = BucketId {
                    table_id: tb.table_id,
                    partition_id,
                    bucket: b,
                };
                Arc::new(Mutex::new(KvSnapshotStore::open(
                    &dir.join("kv-snapshots"),
                    id,
                )))
            });
            let kv = if meta.is_pk() {
                let kv =
                    KvTablet::open(&dir.join("kv"), self.log_cfg.fsync, self.kv_snapshot_bytes)?;
                if kv.log_offset() < log.log_end_offset() {
                    tracing::warn!(
                        "{tb}: changelog ends at {} but KV state only reached {}; dropping the \
                         unacknowledged changelog tail",
                        log.log_end_offset(),
                        kv.log_offset()
                    );
                    log.truncate_to(kv.log_offset())?;
                }
                Some(kv)
            } else {
                None
            };
            self.buckets()
                .insert(tb, Arc::new(RwLock::new(Bucket { log, kv, snapshots })));
        }
        Ok(())
    }

    /// Removes a table's (or partition's) buckets and deletes their files.
    pub fn drop_buckets(&self, table_id: i64, partition_id: Option<i64>, all_partitions: bool) {
        let mut map = self.buckets();
        map.retain(|tb, _| {
            !(tb.table_id == table_id && (all_partitions || tb.partition_id == partition_id))
        });
        drop(map);
        if all_partitions {
            self.sequences.drop_table(table_id);
            if let Ok(rd) = std::fs::read_dir(&self.root) {
                for e in rd.flatten() {
                    let n = e.file_name().to_string_lossy().to_string();
                    if n == table_id.to_string() || n.starts_with(&format!("{table_id}-p")) {
                        let _ = std::fs::remove_dir_all(e.path());
                    }
                }
            }
        } else {
            let _ = std::fs::remove_dir_all(table_dir(&self.root, table_id, partition_id));
        }
    }

    /// The bucket, or UNKNOWN_TABLE_OR_BUCKET.
    pub fn get(&self, tb: &TableBucket) -> Result<Arc<RwLock<Bucket>>> {
        self.buckets().get(tb).cloned().ok_or_else(|| {
            Error::from_fluss(
                codes::UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                format!("Unknown table or bucket: {tb}"),
            )
        })
    }

    /// Every bucket.
    pub fn all(&self) -> Vec<(TableBucket, Arc<RwLock<Bucket>>)> {
        self.buckets()
            .iter()
            .map(|(k, v)| (*k, v.clone()))
            .collect()
    }

    /// Syncs every log and snapshots every KV tablet (clean shutdown).
    pub fn flush_all(&self) -> Result<()> {
        for (tb, b) in self.all() {
            let mut g = b
                .write()
                .map_err(|_| Error::internal("bucket lock poisoned"))?;
            g.log.flush().map_err(|e| e.context(tb))?;
            if let Some(kv) = g.kv.as_mut() {
                kv.flush()?;
                // Compacting the WAL into a snapshot only pays off when it holds something.
                if kv.has_unsnapshotted_changes() {
                    kv.snapshot()?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_registry_lock_is_recovered() {
        let dir = tempfile::tempdir().unwrap();
        let tablets = Arc::new(Tablets::new(&ServerConfig::new(dir.path())));
        let t = tablets.clone();
        let panicked = std::thread::spawn(move || {
            let _held = t.map.lock().unwrap();
            panic!("a request handler panics while holding the registry lock");
        })
        .join();
        assert!(panicked.is_err());
        assert!(tablets.map.is_poisoned());
        // Every registry call still answers instead of panicking.
        let tb = TableBucket {
            table_id: 1,
            partition_id: None,
            bucket: 0,
        };
        let e = tablets.get(&tb).err().unwrap();
        assert_eq!(
            e.fluss_code(),
            Some(codes::UNKNOWN_TABLE_OR_BUCKET_EXCEPTION)
        );
        assert!(tablets.all().is_empty());
        tablets.drop_buckets(1, None, true);
        tablets.flush_all().unwrap();
    }
}
