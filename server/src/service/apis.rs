//! The served APIs: one table gives both `ApiVersions` answers (full and Fluss 0.9) and the
//! request dispatch, so an API cannot be advertised without a handler or the other way round.

use std::sync::Arc;

use bytes::Bytes;
use prost::Message;
use riverlet::error::codes as error_codes;
use riverlet::proto::*;
use riverlet::rpc::ApiKey;
use riverlet::{Error, Result};

use super::{fluss, Server};

/// Expands the table of served APIs into [`SERVED_APIS`], the Fluss 0.9 limits and
/// `Server::dispatch`. Each row: `Key: highest version, highest version in Fluss 0.9 (None:
/// not served by 0.9) => how(request type, handler method)`, where `how` is
/// - `blocking`: decoded, then run on the blocking pool;
/// - `appending`: as `blocking`, then long-polling fetches are woken (the handler may append);
/// - `awaited`: an async handler awaited on the connection's task;
/// - `inline`: a cheap handler run on the connection's task;
/// - `connection`: answered by the connection layer before dispatch (`net.rs`).
macro_rules! served_apis {
    ($($key:ident: $max:literal, $max_0_9:expr => $how:ident $(($req:ty, $f:ident))?;)*) => {
        /// `ApiVersions` answer: (api, highest version served). Lowest is always 0.
        pub const SERVED_APIS: &[(ApiKey, i16)] = &[$((ApiKey::$key, $max)),*];

        /// Highest version of each of [`SERVED_APIS`] in Fluss 0.9.1 (`None`: not served).
        const FLUSS_0_9_MAX: &[Option<i16>] = &[$($max_0_9),*];

        impl Server {
            /// Decodes the request of an API of the table and runs its handler.
            pub(super) async fn dispatch(self: &Arc<Self>, key: ApiKey, body: Bytes) -> Result<Vec<u8>> {
                match key {
                    $(ApiKey::$key => served_apis!(@call self, key, body, $how $(($req, $f))?),)*
                    other => Err(unsupported(other)),
                }
            }
        }
    };
    (@call $s:ident, $key:ident, $body:ident, blocking($req:ty, $f:ident)) => {{
        let req = decode::<$req>($key, $body)?;
        let s = $s.clone();
        let resp = tokio::task::spawn_blocking(move || s.$f(req))
            .await
            .map_err(|e| Error::internal(format!("handler task failed: {e}")))??;
        Ok(resp.encode_to_vec())
    }};
    (@call $s:ident, $key:ident, $body:ident, appending($req:ty, $f:ident)) => {{
        let r: Result<Vec<u8>> = served_apis!(@call $s, $key, $body, blocking($req, $f));
        $s.appended.notify_waiters();
        r
    }};
    (@call $s:ident, $key:ident, $body:ident, awaited($req:ty, $f:ident)) => {{
        let req = decode::<$req>($key, $body)?;
        Ok($s.$f(req).await?.encode_to_vec())
    }};
    (@call $s:ident, $key:ident, $body:ident, inline($req:ty, $f:ident)) => {{
        let req = decode::<$req>($key, $body)?;
        Ok($s.$f(req)?.encode_to_vec())
    }};
    (@call $s:ident, $key:ident, $body:ident, connection) => {
        Err(unsupported($key))
    };
}

served_apis! {
    ApiVersions: 0, Some(0) => inline(ApiVersionsRequest, api_versions_answer);
    CreateDatabase: 0, Some(0) => blocking(CreateDatabaseRequest, create_database);
    DropDatabase: 0, Some(0) => blocking(DropDatabaseRequest, drop_database);
    ListDatabases: 0, Some(0) => blocking(ListDatabasesRequest, list_databases);
    DatabaseExists: 0, Some(0) => blocking(DatabaseExistsRequest, database_exists);
    CreateTable: 0, Some(0) => blocking(CreateTableRequest, create_table);
    DropTable: 0, Some(0) => blocking(DropTableRequest, drop_table);
    GetTableInfo: 0, Some(0) => blocking(GetTableInfoRequest, get_table_info);
    ListTables: 0, Some(0) => blocking(ListTablesRequest, list_tables);
    ListPartitionInfos: 0, Some(0) => blocking(ListPartitionInfosRequest, list_partitions);
    TableExists: 0, Some(0) => blocking(TableExistsRequest, table_exists);
    GetTableSchema: 0, Some(0) => blocking(GetTableSchemaRequest, get_table_schema);
    AlterTable: 0, Some(0) => blocking(AlterTableRequest, alter_table);
    GetMetadata: 0, Some(0) => blocking(MetadataRequest, get_metadata);
    ProduceLog: 0, Some(0) => appending(ProduceLogRequest, produce_log);
    FetchLog: 0, Some(0) => awaited(FetchLogRequest, fetch_log);
    PutKv: 2, Some(1) => appending(PutKvRequest, put_kv);
    // A lookup with insert_if_not_exists may append to the changelog.
    Lookup: 1, Some(1) => appending(LookupRequest, lookup);
    ListOffsets: 0, Some(0) => blocking(ListOffsetsRequest, list_offsets);
    GetLatestKvSnapshots: 0, Some(0) => blocking(GetLatestKvSnapshotsRequest, latest_kv_snapshots);
    GetKvSnapshotMetadata: 0, Some(0) => blocking(GetKvSnapshotMetadataRequest, kv_snapshot_metadata);
    InitWriter: 0, Some(0) => blocking(InitWriterRequest, init_writer);
    GetLakeSnapshot: 0, Some(0) => blocking(GetLakeSnapshotRequest, lake_snapshot);
    LimitScan: 0, Some(0) => blocking(LimitScanRequest, limit_scan);
    PrefixLookup: 1, Some(1) => blocking(PrefixLookupRequest, prefix_lookup);
    GetDatabaseInfo: 0, Some(0) => blocking(GetDatabaseInfoRequest, get_database_info);
    CreatePartition: 0, Some(0) => blocking(CreatePartitionRequest, create_partition);
    DropPartition: 0, Some(0) => blocking(DropPartitionRequest, drop_partition);
    Authenticate: 0, Some(0) => connection;
    GetTableStats: 0, Some(0) => blocking(GetTableStatsRequest, table_stats);
    ScanKv: 0, None => blocking(ScanKvRequest, scan_kv);
    GetFileSystemSecurityToken: 0, Some(0) => inline(GetFileSystemSecurityTokenRequest, fs_security_token);
}

fn unsupported(key: ApiKey) -> Error {
    fluss(
        error_codes::UNSUPPORTED_VERSION,
        format!("The server does not support {key:?}"),
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

    /// Fluss 0.9.1 has no ScanKv and serves PutKv up to version 1.
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
        let full = api_versions_of(false).api_versions;
        assert_eq!(full.len(), versions.len() + 1);
    }
}
