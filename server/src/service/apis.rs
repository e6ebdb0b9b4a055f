//! The served APIs: one table gives both `ApiVersions` answers (full and Fluss 0.9), the
//! request dispatch and the authorization each API needs ([`API_AUTHORIZATION`], checked
//! before the handler runs), so an API cannot be advertised without a handler or a rule, or
//! the other way round.

use std::sync::Arc;

use bytes::Bytes;
use prost::Message;
use riverlet::error::codes as error_codes;
use riverlet::proto::*;
use riverlet::rpc::ApiKey;
use riverlet::{Error, Result};

use super::guard::Rule;
use super::{fluss, Server};
use crate::authz::Session;
use crate::response::Encoded;
use riverlet::acl::OperationType::{Alter, Create, Describe, Drop, Read, Write};

/// Expands the table of served APIs into [`SERVED_APIS`], the Fluss 0.9 limits,
/// [`API_AUTHORIZATION`] and `Server::dispatch`. Each row: `Key: highest version, highest
/// version in Fluss 0.9 (None: not served by 0.9) => how(request type, handler method), rule`,
/// where `rule` is the [`Rule`] the request is checked against before its handler runs (with
/// `authorizer.enabled`), and `how` is
/// - `blocking`: decoded, then run on the blocking pool;
/// - `appending`: as `blocking`, then long-polling fetches are woken (the handler may append);
/// - `awaited`: an async handler awaited on the connection's task;
/// - `inline`: a cheap handler run on the connection's task;
/// - `session`: as `blocking`, the handler also given the caller's session;
/// - `connection`: answered by the connection layer before dispatch (`net.rs`).
macro_rules! served_apis {
    ($($key:ident: $max:literal, $max_0_9:expr => $how:ident $(($req:ty, $f:ident))?, $rule:expr;)*) => {
        /// `ApiVersions` answer: (api, highest version served). Lowest is always 0.
        pub const SERVED_APIS: &[(ApiKey, i16)] = &[$((ApiKey::$key, $max)),*];

        /// Highest version of each of [`SERVED_APIS`] in Fluss 0.9.1 (`None`: not served).
        const FLUSS_0_9_MAX: &[Option<i16>] = &[$($max_0_9),*];

        /// Which operation on which resource each served API needs (Fluss's checks).
        pub const API_AUTHORIZATION: &[(ApiKey, Rule)] = &[$((ApiKey::$key, $rule)),*];

        impl Server {
            /// Decodes the request of an API of the table, checks it against its rule for
            /// `session` and runs its handler.
            pub(super) async fn dispatch(
                self: &Arc<Self>,
                session: &Session,
                key: ApiKey,
                body: Bytes,
            ) -> Result<Encoded> {
                match key {
                    $(ApiKey::$key => served_apis!(@call self, session, key, body, $rule, $how $(($req, $f))?),)*
                    other => Err(unsupported(other)),
                }
            }
        }
    };
    (@call $s:ident, $sess:ident, $key:ident, $body:ident, $rule:expr, blocking($req:ty, $f:ident)) => {{
        let req = decode::<$req>($key, $body)?;
        let (s, sess) = ($s.clone(), $sess.clone());
        let resp = tokio::task::spawn_blocking(move || -> Result<_> {
            let (req, post) = s.guard(&sess, $rule, req)?;
            let resp = s.$f(req)?;
            Ok(s.after_guard::<$req>(&sess, post, resp))
        })
        .await
        .map_err(|e| Error::internal(format!("handler task failed: {e}")))??;
        Ok(Encoded::of(&resp))
    }};
    (@call $s:ident, $sess:ident, $key:ident, $body:ident, $rule:expr, appending($req:ty, $f:ident)) => {{
        let r: Result<Encoded> = served_apis!(@call $s, $sess, $key, $body, $rule, blocking($req, $f));
        $s.appended.notify_waiters();
        r
    }};
    (@call $s:ident, $sess:ident, $key:ident, $body:ident, $rule:expr, session($req:ty, $f:ident)) => {{
        let req = decode::<$req>($key, $body)?;
        let (s, sess) = ($s.clone(), $sess.clone());
        let resp = tokio::task::spawn_blocking(move || -> Result<_> {
            let (req, post) = s.guard(&sess, $rule, req)?;
            let resp = s.$f(&sess, req)?;
            Ok(s.after_guard::<$req>(&sess, post, resp))
        })
        .await
        .map_err(|e| Error::internal(format!("handler task failed: {e}")))??;
        Ok(Encoded::of(&resp))
    }};
    (@call $s:ident, $sess:ident, $key:ident, $body:ident, $rule:expr, awaited($req:ty, $f:ident)) => {{
        let req = decode::<$req>($key, $body)?;
        let (req, post) = $s.guard($sess, $rule, req)?;
        let resp = $s.$f(req).await?;
        Ok(Encoded::of(&$s.after_guard::<$req>($sess, post, resp)))
    }};
    (@call $s:ident, $sess:ident, $key:ident, $body:ident, $rule:expr, inline($req:ty, $f:ident)) => {{
        let req = decode::<$req>($key, $body)?;
        let (req, post) = $s.guard($sess, $rule, req)?;
        let resp = $s.$f(req)?;
        Ok(Encoded::of(&$s.after_guard::<$req>($sess, post, resp)))
    }};
    (@call $s:ident, $sess:ident, $key:ident, $body:ident, $rule:expr, connection) => {{
        let _ = ($sess, $rule);
        Err(unsupported($key))
    }};
}

// The rules are Fluss 0.9.1's checks (RpcServiceBase, CoordinatorService, TabletService);
// ListOffsets, which Fluss leaves unchecked ("TODO: authorize DESCRIBE permission"), and
// ScanKv (Fluss 1.0) follow the reads next to them.
served_apis! {
    ApiVersions: 0, Some(0) => inline(ApiVersionsRequest, api_versions_answer),
        Rule::Open("asked before anything else");
    CreateDatabase: 0, Some(0) => blocking(CreateDatabaseRequest, create_database), Rule::Cluster(Create);
    DropDatabase: 0, Some(0) => blocking(DropDatabaseRequest, drop_database), Rule::Database(Drop);
    ListDatabases: 0, Some(0) => blocking(ListDatabasesRequest, list_databases), Rule::Filter(Describe);
    DatabaseExists: 0, Some(0) => blocking(DatabaseExistsRequest, database_exists),
        Rule::Open("by design in Fluss");
    CreateTable: 0, Some(0) => blocking(CreateTableRequest, create_table), Rule::Database(Create);
    DropTable: 0, Some(0) => blocking(DropTableRequest, drop_table), Rule::Table(Drop);
    GetTableInfo: 0, Some(0) => blocking(GetTableInfoRequest, get_table_info), Rule::Table(Describe);
    ListTables: 0, Some(0) => blocking(ListTablesRequest, list_tables), Rule::Filter(Describe);
    ListPartitionInfos: 0, Some(0) => blocking(ListPartitionInfosRequest, list_partitions), Rule::Table(Describe);
    TableExists: 0, Some(0) => blocking(TableExistsRequest, table_exists), Rule::Open("by design in Fluss");
    GetTableSchema: 0, Some(0) => blocking(GetTableSchemaRequest, get_table_schema), Rule::Table(Describe);
    AlterTable: 0, Some(0) => blocking(AlterTableRequest, alter_table), Rule::Table(Alter);
    GetMetadata: 0, Some(0) => blocking(MetadataRequest, get_metadata), Rule::Filter(Describe);
    ProduceLog: 0, Some(0) => appending(ProduceLogRequest, produce_log), Rule::TableId(Write);
    FetchLog: 0, Some(0) => awaited(FetchLogRequest, fetch_log), Rule::Buckets(Read);
    PutKv: 2, Some(1) => appending(PutKvRequest, put_kv), Rule::TableId(Write);
    // A lookup with insert_if_not_exists may append to the changelog.
    Lookup: 1, Some(1) => appending(LookupRequest, lookup), Rule::LookupOrInsert;
    ListOffsets: 0, Some(0) => blocking(ListOffsetsRequest, list_offsets), Rule::TableId(Describe);
    GetLatestKvSnapshots: 0, Some(0) => blocking(GetLatestKvSnapshotsRequest, latest_kv_snapshots),
        Rule::Table(Describe);
    GetKvSnapshotMetadata: 0, Some(0) => blocking(GetKvSnapshotMetadataRequest, kv_snapshot_metadata),
        Rule::TableId(Describe);
    InitWriter: 0, Some(0) => blocking(InitWriterRequest, init_writer), Rule::AnyTable(Write);
    GetLakeSnapshot: 0, Some(0) => blocking(GetLakeSnapshotRequest, lake_snapshot), Rule::Table(Describe);
    LimitScan: 0, Some(0) => blocking(LimitScanRequest, limit_scan), Rule::TableId(Read);
    PrefixLookup: 1, Some(1) => blocking(PrefixLookupRequest, prefix_lookup), Rule::Buckets(Read);
    GetDatabaseInfo: 0, Some(0) => blocking(GetDatabaseInfoRequest, get_database_info), Rule::Database(Describe);
    CreatePartition: 0, Some(0) => blocking(CreatePartitionRequest, create_partition), Rule::Table(Write);
    DropPartition: 0, Some(0) => blocking(DropPartitionRequest, drop_partition), Rule::Table(Write);
    Authenticate: 0, Some(0) => connection, Rule::Open("the login itself");
    GetTableStats: 0, Some(0) => blocking(GetTableStatsRequest, table_stats), Rule::TableId(Read);
    ScanKv: 0, None => blocking(ScanKvRequest, scan_kv), Rule::TableId(Read);
    GetFileSystemSecurityToken: 0, Some(0) => inline(GetFileSystemSecurityTokenRequest, fs_security_token),
        Rule::Open("Fluss: per-table ACL still to come (apache/fluss#752)");
    CreateAcls: 0, Some(0) => session(CreateAclsRequest, create_acls), Rule::Acls;
    ListAcls: 0, Some(0) => session(ListAclsRequest, list_acls), Rule::Acls;
    DropAcls: 0, Some(0) => session(DropAclsRequest, drop_acls), Rule::Acls;
    RegisterProducerOffsets: 0, Some(0) => blocking(RegisterProducerOffsetsRequest, register_producer_offsets),
        Rule::EachTableId(Write);
    GetProducerOffsets: 0, Some(0) => blocking(GetProducerOffsetsRequest, get_producer_offsets),
        Rule::Filter(Read);
    DeleteProducerOffsets: 0, Some(0) => blocking(DeleteProducerOffsetsRequest, delete_producer_offsets),
        Rule::EachTableId(Write);
    DescribeClusterConfigs: 0, Some(0) => blocking(DescribeClusterConfigsRequest, describe_cluster_configs),
        Rule::Cluster(Describe);
    AlterClusterConfigs: 0, Some(0) => blocking(AlterClusterConfigsRequest, alter_cluster_configs),
        Rule::Cluster(Alter);
    // Fluss checks READ on each table of a lease (its comments say WRITE; the code, READ).
    AcquireKvSnapshotLease: 0, Some(0) => blocking(AcquireKvSnapshotLeaseRequest, acquire_kv_snapshot_lease),
        Rule::EachTableId(Read);
    ReleaseKvSnapshotLease: 0, Some(0) => blocking(ReleaseKvSnapshotLeaseRequest, release_kv_snapshot_lease),
        Rule::EachTableId(Read);
    DropKvSnapshotLease: 0, Some(0) => blocking(DropKvSnapshotLeaseRequest, drop_kv_snapshot_lease),
        Rule::EachTableId(Read);
    AlterDatabase: 0, None => blocking(AlterDatabaseRequest, alter_database), Rule::Database(Alter);
    GetClusterHealth: 0, None => blocking(GetClusterHealthRequest, cluster_health), Rule::Cluster(Describe);
    ListRemoteLogManifests: 0, None => blocking(ListRemoteLogManifestsRequest, list_remote_log_manifests),
        Rule::TableId(Describe);
    ListKvSnapshots: 0, None => blocking(ListKvSnapshotsRequest, list_kv_snapshots), Rule::TableId(Describe);
}

/// Every Fluss API key this server does not serve, with the reason: a request of one answers
/// UNSUPPORTED_VERSION naming it. Each key of [`ApiKey::ALL`] is in exactly one of
/// [`SERVED_APIS`] and this table (`server/tests/api_walk.rs` checks it on the wire).
pub const NOT_SERVED: &[(ApiKey, &str)] = &[
    (
        ApiKey::UpdateMetadata,
        "server-to-server: the coordinator pushes metadata to tablet servers",
    ),
    (
        ApiKey::NotifyLeaderAndIsr,
        "server-to-server: replica leadership, one node leads every bucket here",
    ),
    (ApiKey::StopReplica, "server-to-server: replica management"),
    (
        ApiKey::AdjustIsr,
        "server-to-server: in-sync replica changes, one replica per bucket here",
    ),
    (
        ApiKey::CommitKvSnapshot,
        "server-to-server: tablet servers commit KV snapshots to the coordinator",
    ),
    (
        ApiKey::CommitRemoteLogManifest,
        "server-to-server: tablet servers commit tiered-log manifests",
    ),
    (
        ApiKey::NotifyRemoteLogOffsets,
        "server-to-server: coordinator to tablet servers",
    ),
    (
        ApiKey::NotifyKvSnapshotOffset,
        "server-to-server: coordinator to tablet servers",
    ),
    (
        ApiKey::CommitLakeTableSnapshot,
        "lake tiering service to coordinator: this server tiers to the lake itself",
    ),
    (
        ApiKey::NotifyLakeTableOffset,
        "server-to-server: coordinator to tablet servers",
    ),
    (
        ApiKey::LakeTieringHeartbeat,
        "lake tiering service to coordinator: this server tiers to the lake itself",
    ),
    (
        ApiKey::ControlledShutdown,
        "server-to-server: a tablet server leaving the cluster",
    ),
    (
        ApiKey::PrepareLakeTableSnapshot,
        "lake tiering service to coordinator: this server tiers to the lake itself",
    ),
    (
        ApiKey::AddServerTag,
        "cluster-only: server tags steer replica placement across tablet servers; one node here",
    ),
    (
        ApiKey::RemoveServerTag,
        "cluster-only: server tags steer replica placement across tablet servers; one node here",
    ),
    (
        ApiKey::Rebalance,
        "cluster-only: moves replicas between tablet servers; one node here",
    ),
    (
        ApiKey::ListRebalanceProgress,
        "cluster-only: there is no rebalance on one node",
    ),
    (
        ApiKey::CancelRebalance,
        "cluster-only: there is no rebalance on one node",
    ),
];

/// UNSUPPORTED_VERSION for `key`, naming it (and why, when it is in [`NOT_SERVED`]).
pub(super) fn unsupported(key: ApiKey) -> Error {
    let why = NOT_SERVED
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(String::new(), |(_, why)| format!(" ({why})"));
    fluss(
        error_codes::UNSUPPORTED_VERSION,
        format!("The server does not support {key}{why}"),
    )
}

fn decode<M: Message + Default>(key: ApiKey, body: Bytes) -> Result<M> {
    M::decode(body).map_err(|e| {
        fluss(
            error_codes::CORRUPT_MESSAGE,
            format!("malformed {key:?} request: {e}"),
        )
    })
}

impl Server {
    /// What a client needs to read `remote.data.dir`. As Fluss: a local directory (or none)
    /// answers scheme `file` with an empty token; S3 answers the credentials as Fluss's
    /// `CredentialsJsonSerde` JSON (the configured static keys here: there is no STS) and the
    /// endpoint, region and path style under Hadoop S3A's names.
    fn fs_security_token(
        &self,
        _r: GetFileSystemSecurityTokenRequest,
    ) -> Result<GetFileSystemSecurityTokenResponse> {
        use riverlet::remote::{self, TokenCredentials};
        let dir = self.config.remote_data_dir.as_deref().unwrap_or("");
        if !remote::is_s3(dir) {
            return Ok(GetFileSystemSecurityTokenResponse {
                schema: "file".into(),
                token: Vec::new(),
                expiration_time: None,
                addition_info: vec![],
            });
        }
        let s3 = &self.config.s3;
        let token = serde_json::to_vec(&TokenCredentials {
            version: 1,
            access_key_id: s3.access_key.clone(),
            access_key_secret: s3.secret_key.clone(),
            security_token: None,
        })
        .map_err(|e| Error::internal(format!("encode security token: {e}")))?;
        let mut infos = Vec::new();
        if let Some(e) = &s3.endpoint {
            infos.push((remote::TOKEN_ENDPOINT_KEY, e.clone()));
        }
        if let Some(r) = &s3.region {
            infos.push((remote::TOKEN_REGION_KEY, r.clone()));
        }
        infos.push((remote::TOKEN_PATH_STYLE_KEY, s3.path_style.to_string()));
        Ok(GetFileSystemSecurityTokenResponse {
            schema: dir.split("://").next().unwrap_or("s3").to_string(),
            token,
            expiration_time: None,
            addition_info: infos
                .into_iter()
                .map(|(k, v)| PbKeyValue {
                    key: k.to_string(),
                    value: v,
                })
                .collect(),
        })
    }

    fn api_versions_answer(&self, _r: ApiVersionsRequest) -> Result<ApiVersionsResponse> {
        Ok(api_versions_of(self.config.fluss_0_9_apis))
    }
}

/// The ApiVersions response.
pub fn api_versions() -> ApiVersionsResponse {
    api_versions_of(false)
}

/// The served APIs and their highest versions; with `fluss_0_9`, those of Fluss 0.9.1.
pub(super) fn served_apis(fluss_0_9: bool) -> impl Iterator<Item = (ApiKey, i16)> {
    SERVED_APIS
        .iter()
        .zip(FLUSS_0_9_MAX)
        .filter_map(move |(&(k, v), &v_0_9)| {
            if fluss_0_9 {
                v_0_9.map(|v| (k, v))
            } else {
                Some((k, v))
            }
        })
}

/// [`api_versions`], restricted to Fluss 0.9's APIs when `fluss_0_9` is set.
pub fn api_versions_of(fluss_0_9: bool) -> ApiVersionsResponse {
    ApiVersionsResponse {
        api_versions: served_apis(fluss_0_9)
            .map(|(k, v)| PbApiVersion {
                api_key: k as i16 as i32,
                min_version: 0,
                max_version: v as i32,
            })
            .collect(),
        // This node is both coordinator (1) and tablet server (2); clients that validate the
        // field (fluss-rust / pyfluss) skip the check when it is absent, so it is left unset.
        server_type: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ServerConfig;

    fn is_unsupported(r: &Result<Vec<u8>>) -> bool {
        matches!(r, Err(e) if e.fluss_code() == Some(error_codes::UNSUPPORTED_VERSION))
    }

    /// Every API either variant advertises reaches a handler (an empty body is a valid request
    /// of all defaults; the handler may reject it, but not as unsupported), except
    /// Authenticate, which the connection layer answers before dispatch.
    #[tokio::test]
    async fn every_advertised_api_reaches_a_handler() {
        for fluss_0_9 in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let mut config = ServerConfig::new(dir.path());
            config.fluss_0_9_apis = fluss_0_9;
            let server = Server::open(config).unwrap();
            for (key, max) in served_apis(fluss_0_9) {
                if key == ApiKey::Authenticate {
                    continue;
                }
                let r = server.handle(key, max, Bytes::new()).await;
                assert!(
                    !is_unsupported(&r),
                    "{key:?} v{max} (0.9: {fluss_0_9}): {r:?}"
                );
                let above = server.handle(key, max + 1, Bytes::new()).await;
                assert!(is_unsupported(&above), "{key:?} v{}: {above:?}", max + 1);
            }
        }
    }

    /// Fluss 0.9.1 has no ScanKv (nor AlterDatabase, GetClusterHealth, ListRemoteLogManifests,
    /// ListKvSnapshots) and serves PutKv up to version 1.
    #[tokio::test]
    async fn fluss_0_9_variant_drops_scan_kv_and_put_kv_v2() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = ServerConfig::new(dir.path());
        config.fluss_0_9_apis = true;
        let server = Server::open(config).unwrap();
        let scan = server.handle(ApiKey::ScanKv, 0, Bytes::new()).await;
        assert!(is_unsupported(&scan), "{scan:?}");
        let put = server.handle(ApiKey::PutKv, 2, Bytes::new()).await;
        assert!(is_unsupported(&put), "{put:?}");
        let versions = api_versions_of(true).api_versions;
        assert!(!versions
            .iter()
            .any(|v| v.api_key == ApiKey::ScanKv as i16 as i32));
        for newer in [
            ApiKey::AlterDatabase,
            ApiKey::GetClusterHealth,
            ApiKey::ListRemoteLogManifests,
            ApiKey::ListKvSnapshots,
        ] {
            assert!(!versions.iter().any(|v| v.api_key == newer as i16 as i32));
        }
        let full = api_versions_of(false).api_versions;
        assert_eq!(full.len(), versions.len() + 5);
    }
}
