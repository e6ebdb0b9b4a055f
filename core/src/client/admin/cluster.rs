//! Cluster administration calls of [`Admin`]: the dynamic server options (Fluss's
//! `Admin.describeClusterConfigs` / `alterClusterConfigs`), a database's comment and custom
//! properties (`alterDatabase`, `getDatabaseInfo`), the cluster's health, the KV snapshots a
//! bucket keeps and the leases that keep them (`KvSnapshotLease`), and the remote log
//! manifests of a table's tiered buckets.

use std::collections::BTreeMap;

use super::{name_database, name_table, Admin, ProducerBucket};
use crate::metadata::TablePath;
use crate::proto::{
    AcquireKvSnapshotLeaseRequest, AlterClusterConfigsRequest, AlterDatabaseRequest,
    DescribeClusterConfigsRequest, DropKvSnapshotLeaseRequest, GetClusterHealthRequest,
    GetDatabaseInfoRequest, ListKvSnapshotsRequest, ListRemoteLogManifestsRequest, PbAlterConfig,
    PbKvSnapshotLeaseForBucket, PbKvSnapshotLeaseForTable, PbTableBucket,
    ReleaseKvSnapshotLeaseRequest,
};
use crate::{Error, Result};

/// One server option as DescribeClusterConfigs answers it (Fluss's `ConfigEntry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEntry {
    /// The option's name (`kv.snapshot.interval`).
    pub key: String,
    /// Its value (`None`: unset).
    pub value: Option<String>,
    /// Where the value comes from: `INITIAL_SERVER_CONFIG` (the server's start-up options) or
    /// `DYNAMIC_SERVER_CONFIG` (set while it runs).
    pub source: String,
}

/// One change of an option or property (Fluss's `AlterConfig` with op SET or DELETE).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigChange {
    /// Sets `key` to `value`.
    Set(String, String),
    /// Removes `key` (a dynamic server option returns to its start-up value).
    Delete(String),
}

impl ConfigChange {
    fn to_proto(&self) -> Result<PbAlterConfig> {
        let (key, value, op) = match self {
            ConfigChange::Set(k, v) => (k, Some(v.clone()), 0),
            ConfigChange::Delete(k) => (k, None, 1),
        };
        if key.trim().is_empty() {
            return Err(Error::invalid(format!(
                "a config change needs a key (got '{key}')"
            )));
        }
        Ok(PbAlterConfig {
            config_key: key.clone(),
            config_value: value,
            op_type: op,
        })
    }
}

/// A database's descriptor and times (GetDatabaseInfo).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseInfo {
    /// The database.
    pub name: String,
    /// Its comment, if it has one.
    pub comment: Option<String>,
    /// Its custom properties.
    pub custom_properties: BTreeMap<String, String>,
    /// Creation time (epoch ms).
    pub created_time: i64,
    /// Last modification (epoch ms).
    pub modified_time: i64,
}

/// Replica counts of the cluster (GetClusterHealth).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterHealth {
    /// Replicas of every bucket.
    pub replicas: i32,
    /// Of those, in sync.
    pub in_sync_replicas: i32,
    /// Buckets (one leader replica each).
    pub leader_replicas: i32,
    /// Buckets whose leader is active.
    pub active_leader_replicas: i32,
    /// `GREEN` (all in sync, all leaders active), `YELLOW` (a replica out of sync), `RED` (a
    /// leader inactive) or `UNKNOWN`.
    pub status: &'static str,
}

/// One KV snapshot a bucket keeps (ListKvSnapshots).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvSnapshotEntry {
    /// The bucket.
    pub bucket: i32,
    /// The snapshot id.
    pub snapshot_id: i64,
    /// The log offset it covers.
    pub log_offset: Option<i64>,
}

/// The remote log manifest of one tiered bucket (ListRemoteLogManifests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteLogManifest {
    /// The bucket.
    pub bucket: ProducerBucket,
    /// Where the manifest file is.
    pub manifest_path: String,
    /// The offset after the bucket's last tiered record.
    pub remote_log_end_offset: i64,
}

impl Admin {
    /// Every server option with where its value comes from (Fluss's
    /// `Admin.describeClusterConfigs`; DESCRIBE on the cluster).
    pub async fn describe_cluster_configs(&self) -> Result<Vec<ConfigEntry>> {
        let resp = self
            .conn
            .request_coordinator(&DescribeClusterConfigsRequest {}, true)
            .await?;
        Ok(resp
            .configs
            .into_iter()
            .map(|c| ConfigEntry {
                key: c.config_key,
                value: c.config_value,
                source: c.config_source,
            })
            .collect())
    }

    /// Changes dynamic server options (Fluss's `Admin.alterClusterConfigs`; ALTER on the
    /// cluster). The server refuses an option it does not change at run time, naming it.
    pub async fn alter_cluster_configs(&self, changes: &[ConfigChange]) -> Result<()> {
        let req = AlterClusterConfigsRequest {
            alter_configs: changes
                .iter()
                .map(ConfigChange::to_proto)
                .collect::<Result<_>>()?,
        };
        self.conn.request_coordinator(&req, false).await?;
        Ok(())
    }

    /// Changes a database's custom properties and comment (Fluss's `Admin.alterDatabase`;
    /// ALTER on the database). `comment`: `Some("")` removes it, `None` keeps it.
    pub async fn alter_database(
        &self,
        name: &str,
        changes: &[ConfigChange],
        comment: Option<&str>,
        ignore_if_not_exists: bool,
    ) -> Result<()> {
        let req = AlterDatabaseRequest {
            database_name: name.to_string(),
            ignore_if_not_exists,
            config_changes: changes
                .iter()
                .map(ConfigChange::to_proto)
                .collect::<Result<_>>()?,
            comment: comment.map(str::to_string),
        };
        self.conn
            .request_coordinator(&req, false)
            .await
            .map_err(|e| name_database(e, name))?;
        Ok(())
    }

    /// A database's comment, custom properties and times (Fluss's `Admin.getDatabaseInfo`).
    pub async fn database_info(&self, name: &str) -> Result<DatabaseInfo> {
        let req = GetDatabaseInfoRequest {
            database_name: name.to_string(),
        };
        let resp = self
            .conn
            .request_coordinator(&req, true)
            .await
            .map_err(|e| name_database(e, name))?;
        let doc: serde_json::Value = serde_json::from_slice(&resp.database_json).map_err(|e| {
            Error::corrupt(format!("database '{name}': descriptor is not JSON: {e}"))
        })?;
        let custom_properties = doc
            .get("custom_properties")
            .and_then(|p| p.as_object())
            .map(|m| {
                m.iter()
                    .map(|(k, v)| {
                        let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                        (k.clone(), v)
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(DatabaseInfo {
            name: name.to_string(),
            comment: doc
                .get("comment")
                .and_then(|c| c.as_str())
                .map(str::to_string),
            custom_properties,
            created_time: resp.created_time,
            modified_time: resp.modified_time,
        })
    }

    /// The cluster's replica counts and status (GetClusterHealth; servers newer than Fluss
    /// 0.9).
    pub async fn cluster_health(&self) -> Result<ClusterHealth> {
        let r = self
            .conn
            .request_coordinator(&GetClusterHealthRequest {}, true)
            .await?;
        Ok(ClusterHealth {
            replicas: r.num_replicas,
            in_sync_replicas: r.in_sync_replicas,
            leader_replicas: r.num_leader_replicas,
            active_leader_replicas: r.active_leader_replicas,
            status: match r.status {
                0 => "GREEN",
                1 => "YELLOW",
                2 => "RED",
                _ => "UNKNOWN",
            },
        })
    }

    /// The table's id and the id of `partition` (by name).
    async fn table_and_partition(
        &self,
        path: &TablePath,
        partition: Option<&str>,
    ) -> Result<(i64, Option<i64>)> {
        let info = self.table_info(path).await?;
        let partition_id = match partition {
            None => None,
            Some(name) => Some(
                self.list_partitions(path)
                    .await?
                    .into_iter()
                    .find(|p| p.name == name)
                    .ok_or_else(|| {
                        Error::from_fluss(
                            crate::error::codes::PARTITION_NOT_EXISTS,
                            format!("table {path} has no partition '{name}'"),
                        )
                    })?
                    .partition_id,
            ),
        };
        Ok((info.table_id, partition_id))
    }

    /// Every KV snapshot the buckets of a primary-key table (or of one of its partitions)
    /// keep: the latest ones and those a lease holds (ListKvSnapshots; servers newer than
    /// Fluss 0.9), by bucket and id.
    pub async fn list_kv_snapshots(
        &self,
        path: &TablePath,
        partition: Option<&str>,
    ) -> Result<Vec<KvSnapshotEntry>> {
        let (table_id, partition_id) = self.table_and_partition(path, partition).await?;
        let req = ListKvSnapshotsRequest {
            table_id,
            partition_id,
        };
        let resp = self
            .conn
            .request_coordinator(&req, true)
            .await
            .map_err(|e| name_table(e, path))?;
        let mut out: Vec<KvSnapshotEntry> = resp
            .active_snapshots
            .into_iter()
            .filter_map(|s| {
                Some(KvSnapshotEntry {
                    bucket: s.bucket_id,
                    snapshot_id: s.snapshot_id?,
                    log_offset: s.log_offset,
                })
            })
            .collect();
        out.sort_by_key(|s| (s.bucket, s.snapshot_id));
        Ok(out)
    }

    /// The remote log manifest of each tiered bucket of a table (or of one of its partitions)
    /// (ListRemoteLogManifests; servers newer than Fluss 0.9), by bucket.
    pub async fn list_remote_log_manifests(
        &self,
        path: &TablePath,
        partition: Option<&str>,
    ) -> Result<Vec<RemoteLogManifest>> {
        let (table_id, partition_id) = self.table_and_partition(path, partition).await?;
        let req = ListRemoteLogManifestsRequest {
            table_id,
            partition_id,
        };
        let resp = self
            .conn
            .request_coordinator(&req, true)
            .await
            .map_err(|e| name_table(e, path))?;
        let mut out: Vec<RemoteLogManifest> = resp
            .manifests
            .into_iter()
            .map(|m| RemoteLogManifest {
                bucket: ProducerBucket {
                    table_id: m.table_bucket.table_id,
                    partition_id: m.table_bucket.partition_id,
                    bucket: m.table_bucket.bucket_id,
                },
                manifest_path: m.remote_log_manifest_path,
                remote_log_end_offset: m.remote_log_end_offset,
            })
            .collect();
        out.sort_by_key(|m| m.bucket);
        Ok(out)
    }

    /// Leases KV snapshots (Fluss's `KvSnapshotLease.acquireSnapshots`; READ on each table):
    /// each `(bucket, snapshot id)` is kept by the server until released, the lease dropped,
    /// or `duration` after this call (acquiring again renews the lease). Returns the asked
    /// snapshots the server could not lease (it no longer has them).
    pub async fn acquire_kv_snapshot_lease(
        &self,
        lease_id: &str,
        duration: std::time::Duration,
        snapshots: &[(ProducerBucket, i64)],
    ) -> Result<Vec<(ProducerBucket, i64)>> {
        let lease_duration_ms = i64::try_from(duration.as_millis())
            .map_err(|_| Error::invalid(format!("lease duration {duration:?} is too long")))?;
        let mut tables: Vec<PbKvSnapshotLeaseForTable> = Vec::new();
        for (b, id) in snapshots {
            let entry = PbKvSnapshotLeaseForBucket {
                partition_id: b.partition_id,
                bucket_id: b.bucket,
                snapshot_id: *id,
            };
            match tables.iter_mut().find(|t| t.table_id == b.table_id) {
                Some(t) => t.bucket_snapshots.push(entry),
                None => tables.push(PbKvSnapshotLeaseForTable {
                    table_id: b.table_id,
                    bucket_snapshots: vec![entry],
                }),
            }
        }
        let req = AcquireKvSnapshotLeaseRequest {
            lease_id: lease_id.to_string(),
            lease_duration_ms,
            snapshots_to_lease: tables,
        };
        let resp = self
            .conn
            .request_coordinator(&req, false)
            .await
            .map_err(|e| e.context(format!("kv snapshot lease '{lease_id}'")))?;
        Ok(resp
            .unavailable_snapshots
            .into_iter()
            .flat_map(|t| {
                t.bucket_snapshots.into_iter().map(move |b| {
                    (
                        ProducerBucket {
                            table_id: t.table_id,
                            partition_id: b.partition_id,
                            bucket: b.bucket_id,
                        },
                        b.snapshot_id,
                    )
                })
            })
            .collect())
    }

    /// Gives up the lease's snapshots of `buckets` (Fluss's `KvSnapshotLease.releaseSnapshots`).
    pub async fn release_kv_snapshot_lease(
        &self,
        lease_id: &str,
        buckets: &[ProducerBucket],
    ) -> Result<()> {
        let req = ReleaseKvSnapshotLeaseRequest {
            lease_id: lease_id.to_string(),
            buckets_to_release: buckets
                .iter()
                .map(|b| PbTableBucket {
                    table_id: b.table_id,
                    partition_id: b.partition_id,
                    bucket_id: b.bucket,
                })
                .collect(),
        };
        self.conn
            .request_coordinator(&req, false)
            .await
            .map_err(|e| e.context(format!("kv snapshot lease '{lease_id}'")))?;
        Ok(())
    }

    /// Gives up the whole lease (Fluss's `KvSnapshotLease.dropLease`).
    pub async fn drop_kv_snapshot_lease(&self, lease_id: &str) -> Result<()> {
        let req = DropKvSnapshotLeaseRequest {
            lease_id: lease_id.to_string(),
        };
        self.conn
            .request_coordinator(&req, false)
            .await
            .map_err(|e| e.context(format!("kv snapshot lease '{lease_id}'")))?;
        Ok(())
    }
}
