//! KV snapshot leases (AcquireKvSnapshotLease, ReleaseKvSnapshotLease, DropKvSnapshotLease)
//! and ListKvSnapshots, as Fluss's `CoordinatorService` and `KvSnapshotLeaseManager` answer
//! them: a lease holds one snapshot per bucket of primary-key tables, and a held snapshot is
//! not deleted by the KV snapshot retention (`kv_snapshots.rs`, the latest two) until the
//! lease releases it, is dropped, or expires (`lease_duration_ms` after it was last
//! acquired). Acquiring a snapshot the bucket no longer has (or never had) answers it among
//! `unavailable_snapshots` (Fluss's intent; its 0.9.1 leaves this check as a TODO, apache/fluss
//! #2600). Fluss keeps leases in ZooKeeper; here they live in [`KV_SNAPSHOT_LEASES_FILE`] of
//! the data directory (temporary file, fsync, rename), so they survive a restart.
//! ListKvSnapshots answers every snapshot a bucket keeps: the retained ones and the leased.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use riverlet::error::codes as error_codes;
use riverlet::proto::*;
use riverlet::scan::time::now_millis;
use riverlet::{Error, Result};

use super::guard::Guarded;
use super::{fluss, lock, Server};
use crate::tablets::TableBucket;

/// The file of the data directory holding the leases.
pub const KV_SNAPSHOT_LEASES_FILE: &str = "kv_snapshot_leases.json";

/// (table id, partition id, bucket).
type BucketKey = (i64, Option<i64>, i32);

/// One lease: when it expires and the snapshot it holds of each bucket.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct Lease {
    expiration_time: i64,
    snapshots: Vec<LeasedSnapshot>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct LeasedSnapshot {
    table_id: i64,
    partition_id: Option<i64>,
    bucket: i32,
    snapshot_id: i64,
}

impl LeasedSnapshot {
    fn key(&self) -> BucketKey {
        (self.table_id, self.partition_id, self.bucket)
    }
}

/// Every lease, by id.
#[derive(Default)]
pub struct Leases {
    path: PathBuf,
    leases: BTreeMap<String, Lease>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Doc {
    version: i32,
    leases: BTreeMap<String, Lease>,
}

impl Leases {
    /// The leases stored in `data_dir`.
    pub fn open(data_dir: &Path) -> Result<Leases> {
        let path = data_dir.join(KV_SNAPSHOT_LEASES_FILE);
        let leases = match std::fs::read(&path) {
            Ok(b) => {
                serde_json::from_slice::<Doc>(&b)
                    .map_err(|e| {
                        Error::corrupt(format!("{}: not a lease document: {e}", path.display()))
                    })?
                    .leases
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => return Err(Error::from(e).context(format!("reading {}", path.display()))),
        };
        Ok(Leases { path, leases })
    }

    fn store(&self) -> Result<()> {
        let doc = Doc {
            version: 1,
            leases: self.leases.clone(),
        };
        let bytes = serde_json::to_vec_pretty(&doc)
            .map_err(|e| Error::internal(format!("encode kv snapshot leases: {e}")))?;
        let tmp = self.path.with_extension("json.tmp");
        let write = || -> std::io::Result<()> {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        };
        write().map_err(|e| Error::from(e).context(format!("writing {}", self.path.display())))
    }

    /// Drops the expired leases (Fluss's periodic expiry); true when one was.
    fn expire(&mut self, now: i64) -> bool {
        let before = self.leases.len();
        self.leases.retain(|_, l| l.expiration_time >= now);
        before != self.leases.len()
    }

    /// Whether an unexpired lease holds `snapshot_id` of `tb`.
    pub fn holds(&self, tb: &TableBucket, snapshot_id: i64) -> bool {
        let now = now_millis();
        self.leases.values().any(|l| {
            l.expiration_time >= now
                && l.snapshots.iter().any(|s| {
                    s.key() == (tb.table_id, tb.partition_id, tb.bucket)
                        && s.snapshot_id == snapshot_id
                })
        })
    }

    /// The tables a lease holds snapshots of.
    fn tables_of(&self, lease_id: &str) -> Vec<i64> {
        let mut ids: Vec<i64> = self
            .leases
            .get(lease_id)
            .map(|l| l.snapshots.iter().map(|s| s.table_id).collect())
            .unwrap_or_default();
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}

/// A lease call that failed other than by an API error: UNKNOWN_SERVER_ERROR naming the lease,
/// as Fluss answers it.
fn failed(what: &str, lease_id: &str, e: Error) -> Error {
    if e.fluss_code().is_some() {
        return e;
    }
    fluss(
        error_codes::UNKNOWN_SERVER_ERROR,
        format!("Failed to {what} kv snapshot lease for {lease_id}: {e}"),
    )
}

impl Server {
    /// Fluss's `validateKvTable`: the table exists and has a primary key.
    fn check_kv_table(&self, table_id: i64) -> Result<()> {
        let t = self.table(table_id)?;
        if !t.is_pk() {
            return Err(fluss(
                error_codes::NON_PRIMARY_KEY_TABLE_EXCEPTION,
                format!("Table '{}' is not a primary key table", t.path()),
            ));
        }
        Ok(())
    }

    /// Deletes the snapshots of `buckets` no longer retained nor leased.
    fn prune_snapshots(&self, buckets: impl IntoIterator<Item = BucketKey>) {
        for (table_id, partition_id, bucket) in buckets {
            let tb = TableBucket {
                table_id,
                partition_id,
                bucket,
            };
            if let Ok(Some(store)) = self.snapshot_store(&tb) {
                let leases = lock(&self.leases);
                lock(&store).prune(&|id| leases.holds(&tb, id));
            }
        }
    }

    pub(super) fn acquire_kv_snapshot_lease(
        &self,
        r: AcquireKvSnapshotLeaseRequest,
    ) -> Result<AcquireKvSnapshotLeaseResponse> {
        for t in &r.snapshots_to_lease {
            self.check_kv_table(t.table_id)?;
        }
        let mut unavailable: Vec<PbKvSnapshotLeaseForTable> = Vec::new();
        let mut leases = lock(&self.leases);
        let now = now_millis();
        leases.expire(now);
        let mut lease = leases.leases.get(&r.lease_id).cloned().unwrap_or_default();
        lease.expiration_time = now.saturating_add(r.lease_duration_ms);
        for t in &r.snapshots_to_lease {
            let mut missing = Vec::new();
            for b in &t.bucket_snapshots {
                let tb = TableBucket {
                    table_id: t.table_id,
                    partition_id: b.partition_id,
                    bucket: b.bucket_id,
                };
                let exists = self
                    .snapshot_store(&tb)
                    .ok()
                    .flatten()
                    .is_some_and(|s| lock(&s).get(b.snapshot_id).is_some());
                if !exists {
                    missing.push(*b);
                    continue;
                }
                let held = LeasedSnapshot {
                    table_id: t.table_id,
                    partition_id: b.partition_id,
                    bucket: b.bucket_id,
                    snapshot_id: b.snapshot_id,
                };
                // one snapshot per bucket: a new one replaces the lease's previous one
                lease.snapshots.retain(|s| s.key() != held.key());
                lease.snapshots.push(held);
            }
            if !missing.is_empty() {
                unavailable.push(PbKvSnapshotLeaseForTable {
                    table_id: t.table_id,
                    bucket_snapshots: missing,
                });
            }
        }
        let replaced: Vec<BucketKey> = leases
            .leases
            .get(&r.lease_id)
            .map(|l| l.snapshots.iter().map(LeasedSnapshot::key).collect())
            .unwrap_or_default();
        leases.leases.insert(r.lease_id.clone(), lease);
        leases
            .store()
            .map_err(|e| failed("acquire", &r.lease_id, e))?;
        drop(leases);
        self.prune_snapshots(replaced);
        Ok(AcquireKvSnapshotLeaseResponse {
            unavailable_snapshots: unavailable,
        })
    }

    pub(super) fn release_kv_snapshot_lease(
        &self,
        r: ReleaseKvSnapshotLeaseRequest,
    ) -> Result<ReleaseKvSnapshotLeaseResponse> {
        for b in &r.buckets_to_release {
            self.check_kv_table(b.table_id)?;
        }
        let released: Vec<BucketKey> = r
            .buckets_to_release
            .iter()
            .map(|b| (b.table_id, b.partition_id, b.bucket_id))
            .collect();
        {
            let mut leases = lock(&self.leases);
            let Some(lease) = leases.leases.get_mut(&r.lease_id) else {
                return Ok(ReleaseKvSnapshotLeaseResponse {});
            };
            lease.snapshots.retain(|s| !released.contains(&s.key()));
            if lease.snapshots.is_empty() {
                leases.leases.remove(&r.lease_id);
            }
            leases
                .store()
                .map_err(|e| failed("release", &r.lease_id, e))?;
        }
        self.prune_snapshots(released);
        Ok(ReleaseKvSnapshotLeaseResponse {})
    }

    pub(super) fn drop_kv_snapshot_lease(
        &self,
        r: DropKvSnapshotLeaseRequest,
    ) -> Result<DropKvSnapshotLeaseResponse> {
        let held: Vec<BucketKey> = {
            let mut leases = lock(&self.leases);
            let Some(lease) = leases.leases.remove(&r.lease_id) else {
                return Ok(DropKvSnapshotLeaseResponse {});
            };
            leases.store().map_err(|e| failed("drop", &r.lease_id, e))?;
            lease.snapshots.iter().map(LeasedSnapshot::key).collect()
        };
        self.prune_snapshots(held);
        Ok(DropKvSnapshotLeaseResponse {})
    }

    pub(super) fn list_kv_snapshots(
        &self,
        r: ListKvSnapshotsRequest,
    ) -> Result<ListKvSnapshotsResponse> {
        let t = self.table(r.table_id)?;
        check_partition(self, &t, r.partition_id)?;
        let mut active_snapshots = Vec::new();
        if t.is_pk() {
            for bucket in 0..t.buckets {
                let tb = TableBucket {
                    table_id: r.table_id,
                    partition_id: r.partition_id,
                    bucket,
                };
                let Ok(Some(store)) = self.snapshot_store(&tb) else {
                    continue;
                };
                for s in lock(&store).all() {
                    active_snapshots.push(PbKvSnapshot {
                        bucket_id: bucket,
                        snapshot_id: Some(s.id),
                        log_offset: Some(s.log_offset),
                    });
                }
            }
        }
        Ok(ListKvSnapshotsResponse {
            table_id: r.table_id,
            partition_id: r.partition_id,
            active_snapshots,
        })
    }

    /// The snapshot ids of `tb` unexpired leases hold (the KV snapshot retention keeps them).
    /// Taken before the bucket's snapshot store is locked: the lease calls lock the leases,
    /// then a store.
    pub(super) fn leased_snapshot_ids(&self, tb: &TableBucket) -> Vec<i64> {
        let leases = lock(&self.leases);
        let now = now_millis();
        leases
            .leases
            .values()
            .filter(|l| l.expiration_time >= now)
            .flat_map(|l| l.snapshots.iter())
            .filter(|s| s.key() == (tb.table_id, tb.partition_id, tb.bucket))
            .map(|s| s.snapshot_id)
            .collect()
    }
}

/// Fluss's `validatePartitionOwnership`: a partition id named must be one of the table's.
pub(super) fn check_partition(
    s: &Server,
    t: &crate::catalog::TableMeta,
    partition_id: Option<i64>,
) -> Result<()> {
    let Some(p) = partition_id else {
        return Ok(());
    };
    match lock(&s.catalog).partition_by_id(p) {
        Some((table_id, _)) if table_id == t.entry.id => Ok(()),
        _ => Err(fluss(
            error_codes::PARTITION_NOT_EXISTS,
            format!(
                "Partition id {p} does not exist or does not belong to table '{}' (id {}).",
                t.path(),
                t.entry.id
            ),
        )),
    }
}

// Fluss's checks: READ on each table the request names (Acquire, Release) or the lease holds
// (Drop).
impl Guarded for AcquireKvSnapshotLeaseRequest {
    type Response = AcquireKvSnapshotLeaseResponse;
    fn table_ids(&self, _s: &Server) -> Vec<i64> {
        self.snapshots_to_lease.iter().map(|t| t.table_id).collect()
    }
}

impl Guarded for ReleaseKvSnapshotLeaseRequest {
    type Response = ReleaseKvSnapshotLeaseResponse;
    fn table_ids(&self, _s: &Server) -> Vec<i64> {
        self.buckets_to_release.iter().map(|b| b.table_id).collect()
    }
}

impl Guarded for DropKvSnapshotLeaseRequest {
    type Response = DropKvSnapshotLeaseResponse;
    fn table_ids(&self, s: &Server) -> Vec<i64> {
        lock(&s.leases).tables_of(&self.lease_id)
    }
}

impl Guarded for ListKvSnapshotsRequest {
    type Response = ListKvSnapshotsResponse;
    fn table_id(&self, _s: &Server) -> Option<i64> {
        Some(self.table_id)
    }
}
