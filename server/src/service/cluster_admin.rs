//! Cluster administration handlers: the dynamic server options (DescribeClusterConfigs,
//! AlterClusterConfigs; the options themselves in `config_dynamic.rs`), AlterDatabase,
//! GetClusterHealth and ListRemoteLogManifests, answered as Fluss's `CoordinatorService` and
//! `RpcServiceBase` do.

use riverlet::error::codes as error_codes;
use riverlet::proto::*;
use riverlet::Result;

use super::guard::Guarded;
use super::kv_leases::check_partition;
use super::{fluss, lock, Server};

impl Server {
    pub(super) fn describe_cluster_configs(
        &self,
        _r: DescribeClusterConfigsRequest,
    ) -> Result<DescribeClusterConfigsResponse> {
        Ok(DescribeClusterConfigsResponse {
            configs: self
                .dynamic
                .describe()
                .into_iter()
                .map(|(key, value, source)| PbDescribeConfig {
                    config_key: key,
                    config_value: Some(value),
                    config_source: source.to_string(),
                })
                .collect(),
        })
    }

    pub(super) fn alter_cluster_configs(
        &self,
        r: AlterClusterConfigsRequest,
    ) -> Result<AlterClusterConfigsResponse> {
        let changes: Vec<(String, Option<String>, i32)> = r
            .alter_configs
            .into_iter()
            .map(|c| (c.config_key, c.config_value, c.op_type))
            .collect();
        if !changes.is_empty() {
            self.dynamic.alter(&changes)?;
        }
        Ok(AlterClusterConfigsResponse {})
    }

    /// Fluss's `alterDatabaseProperties`: SET / DELETE of custom properties and the comment
    /// (an empty comment removes it); nothing changed, nothing written.
    pub(super) fn alter_database(&self, r: AlterDatabaseRequest) -> Result<AlterDatabaseResponse> {
        let mut set: Vec<(String, String)> = Vec::new();
        let mut reset: Vec<String> = Vec::new();
        for c in r.config_changes {
            match c.op_type {
                0 => set.push((c.config_key, c.config_value.unwrap_or_default())),
                1 => reset.push(c.config_key),
                other => {
                    return Err(fluss(
                        error_codes::UNKNOWN_SERVER_ERROR,
                        format!("Unsupported alter database configs op type {other}"),
                    ))
                }
            }
        }
        let mut c = lock(&self.catalog);
        let current = match c.database(&r.database_name) {
            Ok(d) => d.json.clone(),
            Err(_) if r.ignore_if_not_exists => return Ok(AlterDatabaseResponse {}),
            Err(_) => {
                return Err(fluss(
                    error_codes::DATABASE_NOT_EXIST,
                    format!("Database {} not exists.", r.database_name),
                ))
            }
        };
        let doc: serde_json::Value = serde_json::from_str(&current).unwrap_or_default();
        let mut props: serde_json::Map<String, serde_json::Value> = doc
            .get("custom_properties")
            .and_then(|p| p.as_object())
            .cloned()
            .unwrap_or_default();
        let old_props = props.clone();
        for (k, v) in set {
            props.insert(k, v.into());
        }
        for k in reset {
            props.remove(&k);
        }
        if props == old_props && r.comment.is_none() {
            return Ok(AlterDatabaseResponse {});
        }
        let comment = match &r.comment {
            Some(c) if c.is_empty() => None,
            Some(c) => Some(c.clone()),
            None => doc
                .get("comment")
                .and_then(|c| c.as_str())
                .map(str::to_string),
        };
        // Fluss's DatabaseDescriptor JSON, its field order: version, comment, custom_properties
        let mut json = String::from("{\"version\":1");
        if let Some(c) = comment {
            json.push_str(",\"comment\":");
            json.push_str(&serde_json::Value::from(c).to_string());
        }
        json.push_str(",\"custom_properties\":");
        json.push_str(&serde_json::Value::Object(props).to_string());
        json.push('}');
        c.set_database_json(&r.database_name, json)?;
        Ok(AlterDatabaseResponse {})
    }

    /// Fluss's `computeClusterHealth` on one node: every bucket has its one replica, in sync
    /// and leading, so the cluster is GREEN (0).
    pub(super) fn cluster_health(
        &self,
        _r: GetClusterHealthRequest,
    ) -> Result<GetClusterHealthResponse> {
        let buckets = self.tablets.all().len() as i32;
        Ok(GetClusterHealthResponse {
            num_replicas: buckets,
            in_sync_replicas: buckets,
            num_leader_replicas: buckets,
            active_leader_replicas: buckets,
            status: 0,
        })
    }

    /// The remote log manifest of each bucket of the table (or of its partition) that has
    /// tiered segments: the manifest file's path and the offset after its last segment.
    pub(super) fn list_remote_log_manifests(
        &self,
        r: ListRemoteLogManifestsRequest,
    ) -> Result<ListRemoteLogManifestsResponse> {
        let t = self.table(r.table_id)?;
        check_partition(self, &t, r.partition_id)?;
        let mut manifests = Vec::new();
        let mut buckets: Vec<_> = self
            .tablets
            .all()
            .into_iter()
            .filter(|(tb, _)| tb.table_id == r.table_id && tb.partition_id == r.partition_id)
            .collect();
        buckets.sort_by_key(|(tb, _)| tb.bucket);
        for (tb, bucket) in buckets {
            let state = super::read_bucket(&bucket).log.remote_state().clone();
            let (Some(manifest), Some(last)) = (&state.manifest, state.segments.last()) else {
                continue;
            };
            let Some(dir) = self.remote_log_tablet_dir(&t, tb.partition_id, tb.bucket) else {
                continue;
            };
            manifests.push(PbRemoteLogManifestEntry {
                table_bucket: PbTableBucket {
                    table_id: tb.table_id,
                    partition_id: tb.partition_id,
                    bucket_id: tb.bucket,
                },
                remote_log_manifest_path: format!("{}/metadata/{manifest}", dir.uri()),
                remote_log_end_offset: last.end,
            });
        }
        Ok(ListRemoteLogManifestsResponse { manifests })
    }
}

// Fluss's checks: DESCRIBE / ALTER on the cluster (the configs, health), ALTER on the database,
// DESCRIBE on the table (manifests); the rules are in the served-API table.
impl Guarded for DescribeClusterConfigsRequest {
    type Response = DescribeClusterConfigsResponse;
}

impl Guarded for AlterClusterConfigsRequest {
    type Response = AlterClusterConfigsResponse;
}

impl Guarded for GetClusterHealthRequest {
    type Response = GetClusterHealthResponse;
}

impl Guarded for AlterDatabaseRequest {
    type Response = AlterDatabaseResponse;
    fn database(&self) -> Option<&str> {
        Some(&self.database_name)
    }
}

impl Guarded for ListRemoteLogManifestsRequest {
    type Response = ListRemoteLogManifestsResponse;
    fn table_id(&self, _s: &Server) -> Option<i64> {
        Some(self.table_id)
    }
}
