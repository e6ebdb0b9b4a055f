//! Request handlers: one function per Fluss API this node serves (it is both the coordinator
//! and the only tablet server, node id 0, leader of every bucket).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use prost::Message;
use riverlet::error::codes as error_codes;
use riverlet::metadata::TablePath;
use riverlet::proto::*;
use riverlet::record::log_batch::{self, LogBatchIter};
use riverlet::rpc::ApiKey;
use riverlet::scan::time::now_millis as now_ms;
use riverlet::{Error, Result};

use crate::catalog::{Catalog, TableMeta};
use crate::config::ServerConfig;
use crate::merge;
use crate::tablets::{Bucket, TableBucket, Tablets};
use crate::writers::SequenceCheck;

/// `ApiVersions` answer: (api, highest version served). Lowest is always 0.
pub const SERVED_APIS: &[(ApiKey, i16)] = &[
    (ApiKey::ApiVersions, 0),
    (ApiKey::CreateDatabase, 0),
    (ApiKey::DropDatabase, 0),
    (ApiKey::ListDatabases, 0),
    (ApiKey::DatabaseExists, 0),
    (ApiKey::CreateTable, 0),
    (ApiKey::DropTable, 0),
    (ApiKey::GetTableInfo, 0),
    (ApiKey::ListTables, 0),
    (ApiKey::ListPartitionInfos, 0),
    (ApiKey::TableExists, 0),
    (ApiKey::GetTableSchema, 0),
    (ApiKey::GetMetadata, 0),
    (ApiKey::ProduceLog, 0),
    (ApiKey::FetchLog, 0),
    (ApiKey::PutKv, 2),
    (ApiKey::Lookup, 1),
    (ApiKey::ListOffsets, 0),
    (ApiKey::GetLatestKvSnapshots, 0),
    (ApiKey::GetKvSnapshotMetadata, 0),
    (ApiKey::InitWriter, 0),
    (ApiKey::GetLakeSnapshot, 0),
    (ApiKey::LimitScan, 0),
    (ApiKey::PrefixLookup, 1),
    (ApiKey::GetDatabaseInfo, 0),
    (ApiKey::CreatePartition, 0),
    (ApiKey::DropPartition, 0),
    (ApiKey::Authenticate, 0),
    (ApiKey::GetTableStats, 0),
    (ApiKey::ScanKv, 0),
];

/// Fluss's `FetchParams.FETCH_FROM_EARLIEST_OFFSET`.
const FETCH_FROM_EARLIEST_OFFSET: i64 = -2;
/// Idle ScanKv sessions are dropped after this long (Fluss `kv.scanner.ttl` default 10 min).
const SCANNER_TTL: Duration = Duration::from_secs(600);
/// Upper bound of one ScanKv response (Fluss `kv.scanner.max-batch-size` default 8 MiB).
const SCANNER_MAX_BATCH: usize = 8 * 1024 * 1024;

fn fluss(code: i32, msg: impl Into<String>) -> Error {
    Error::from_fluss(code, msg)
}

/// The Fluss code to send for an error (server-side errors carry one; others map by kind).
pub fn code_of(e: &Error) -> i32 {
    if let Some(c) = e.fluss_code() {
        return c;
    }
    use riverlet::ErrorKind as K;
    match e.kind() {
        K::Corrupt => error_codes::CORRUPT_MESSAGE,
        K::InvalidArgument => error_codes::INVALID_TABLE_EXCEPTION,
        K::Io => error_codes::STORAGE_EXCEPTION,
        _ => error_codes::UNKNOWN_SERVER_ERROR,
    }
}

fn err_fields(e: &Error) -> (Option<i32>, Option<String>) {
    (Some(code_of(e)), Some(e.message().to_string()))
}

struct ScanSession {
    bucket: TableBucket,
    values: Vec<Vec<u8>>,
    pos: usize,
    call_seq: i32,
    last_access: Instant,
}

/// The server state shared by all connections.
pub struct Server {
    /// Configuration.
    pub config: ServerConfig,
    /// Catalog.
    pub catalog: Mutex<Catalog>,
    /// Buckets.
    pub tablets: Tablets,
    /// Woken on every append (long-polling fetches wait on it).
    pub appended: tokio::sync::Notify,
    scanners: Mutex<HashMap<Vec<u8>, ScanSession>>,
    scanner_seq: AtomicU64,
    advertised: OnceLock<(String, u16)>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn read_bucket(b: &std::sync::RwLock<Bucket>) -> std::sync::RwLockReadGuard<'_, Bucket> {
    b.read().unwrap_or_else(|p| p.into_inner())
}

fn write_bucket(b: &std::sync::RwLock<Bucket>) -> std::sync::RwLockWriteGuard<'_, Bucket> {
    b.write().unwrap_or_else(|p| p.into_inner())
}

impl Server {
    /// Opens the data directory: catalog and every bucket (recovering them).
    pub fn open(config: ServerConfig) -> Result<Arc<Server>> {
        std::fs::create_dir_all(&config.data_dir).map_err(|e| {
            Error::from(e).context(format!("data directory {}", config.data_dir.display()))
        })?;
        let catalog = Catalog::open(&config.data_dir, config.default_bucket_number)?;
        let tablets = Tablets::new(&config);
        for t in catalog.all_tables() {
            if t.is_partitioned() {
                for p in catalog.partitions(&t, &[])? {
                    tablets.open_buckets(&t, Some(p.id))?;
                }
            } else {
                tablets.open_buckets(&t, None)?;
            }
        }
        Ok(Arc::new(Server {
            config,
            catalog: Mutex::new(catalog),
            tablets,
            appended: tokio::sync::Notify::new(),
            scanners: Mutex::new(HashMap::new()),
            scanner_seq: AtomicU64::new(1),
            advertised: OnceLock::new(),
        }))
    }

    /// Records the address clients are told to connect to (after bind).
    pub fn set_advertised(&self, host: String, port: u16) {
        let _ = self.advertised.set((host, port));
    }

    fn node(&self) -> PbServerNode {
        let (host, port) = self
            .advertised
            .get()
            .cloned()
            .unwrap_or_else(|| (self.config.host.clone(), self.config.port));
        PbServerNode {
            node_id: 0,
            host,
            port: port as i32,
            listeners: None,
            rack: None,
        }
    }

    /// Handles one decoded request and returns the encoded response message.
    pub async fn handle(
        self: &Arc<Self>,
        key: ApiKey,
        version: i16,
        body: Bytes,
    ) -> Result<Vec<u8>> {
        let max = served_apis(self.config.fluss_0_9_apis)
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
            .ok_or_else(|| {
                fluss(
                    error_codes::UNSUPPORTED_VERSION,
                    format!("The server does not support {key:?}"),
                )
            })?;
        if version < 0 || version > max {
            return Err(fluss(
                error_codes::UNSUPPORTED_VERSION,
                format!(
                    "The server does not support version {version} of {key:?} (highest: {max})"
                ),
            ));
        }
        macro_rules! blocking {
            ($req:ty, $f:ident) => {{
                let req = <$req>::decode(body).map_err(|e| {
                    fluss(
                        error_codes::CORRUPT_MESSAGE,
                        format!("malformed {key:?} request: {e}"),
                    )
                })?;
                let s = self.clone();
                let resp = tokio::task::spawn_blocking(move || s.$f(req))
                    .await
                    .map_err(|e| Error::internal(format!("handler task failed: {e}")))??;
                Ok(resp.encode_to_vec())
            }};
        }
        match key {
            ApiKey::ApiVersions => {
                ApiVersionsRequest::decode(body).map_err(|e| {
                    fluss(
                        error_codes::CORRUPT_MESSAGE,
                        format!("malformed ApiVersions request: {e}"),
                    )
                })?;
                Ok(api_versions_of(self.config.fluss_0_9_apis).encode_to_vec())
            }
            ApiKey::CreateDatabase => blocking!(CreateDatabaseRequest, create_database),
            ApiKey::DropDatabase => blocking!(DropDatabaseRequest, drop_database),
            ApiKey::ListDatabases => blocking!(ListDatabasesRequest, list_databases),
            ApiKey::DatabaseExists => blocking!(DatabaseExistsRequest, database_exists),
            ApiKey::GetDatabaseInfo => blocking!(GetDatabaseInfoRequest, get_database_info),
            ApiKey::CreateTable => blocking!(CreateTableRequest, create_table),
            ApiKey::DropTable => blocking!(DropTableRequest, drop_table),
            ApiKey::GetTableInfo => blocking!(GetTableInfoRequest, get_table_info),
            ApiKey::ListTables => blocking!(ListTablesRequest, list_tables),
            ApiKey::TableExists => blocking!(TableExistsRequest, table_exists),
            ApiKey::GetTableSchema => blocking!(GetTableSchemaRequest, get_table_schema),
            ApiKey::ListPartitionInfos => blocking!(ListPartitionInfosRequest, list_partitions),
            ApiKey::CreatePartition => blocking!(CreatePartitionRequest, create_partition),
            ApiKey::DropPartition => blocking!(DropPartitionRequest, drop_partition),
            ApiKey::GetMetadata => blocking!(MetadataRequest, get_metadata),
            ApiKey::ProduceLog => {
                let r: Result<Vec<u8>> = blocking!(ProduceLogRequest, produce_log);
                self.appended.notify_waiters();
                r
            }
            ApiKey::PutKv => {
                let r: Result<Vec<u8>> = blocking!(PutKvRequest, put_kv);
                self.appended.notify_waiters();
                r
            }
            ApiKey::FetchLog => {
                let req = FetchLogRequest::decode(body).map_err(|e| {
                    fluss(
                        error_codes::CORRUPT_MESSAGE,
                        format!("malformed FetchLog request: {e}"),
                    )
                })?;
                Ok(self.fetch_log(req).await?.encode_to_vec())
            }
            ApiKey::ListOffsets => blocking!(ListOffsetsRequest, list_offsets),
            ApiKey::Lookup => {
                // A lookup with insert_if_not_exists may have appended to the changelog.
                let r: Result<Vec<u8>> = blocking!(LookupRequest, lookup);
                self.appended.notify_waiters();
                r
            }
            ApiKey::PrefixLookup => blocking!(PrefixLookupRequest, prefix_lookup),
            ApiKey::LimitScan => blocking!(LimitScanRequest, limit_scan),
            ApiKey::ScanKv => blocking!(ScanKvRequest, scan_kv),
            ApiKey::GetTableStats => blocking!(GetTableStatsRequest, table_stats),
            ApiKey::InitWriter => blocking!(InitWriterRequest, init_writer),
            ApiKey::GetLatestKvSnapshots => {
                blocking!(GetLatestKvSnapshotsRequest, latest_kv_snapshots)
            }
            ApiKey::GetKvSnapshotMetadata => {
                blocking!(GetKvSnapshotMetadataRequest, kv_snapshot_metadata)
            }
            ApiKey::GetLakeSnapshot => blocking!(GetLakeSnapshotRequest, lake_snapshot),
            other => Err(fluss(
                error_codes::UNSUPPORTED_VERSION,
                format!("The server does not support {other:?}"),
            )),
        }
    }

    // ------------------------------------------------------------------ catalog

    fn create_database(&self, r: CreateDatabaseRequest) -> Result<CreateDatabaseResponse> {
        lock(&self.catalog).create_database(
            &r.database_name,
            r.database_json.as_deref(),
            r.ignore_if_exists,
        )?;
        Ok(CreateDatabaseResponse::default())
    }

    fn drop_database(&self, r: DropDatabaseRequest) -> Result<DropDatabaseResponse> {
        if r.database_name == crate::catalog::DEFAULT_DATABASE {
            return Err(fluss(
                error_codes::UNKNOWN_SERVER_ERROR,
                format!(
                    "Cannot drop the default database '{}'. The default database is required for cluster operation.",
                    r.database_name
                ),
            ));
        }
        let ids = lock(&self.catalog).drop_database(
            &r.database_name,
            r.ignore_if_not_exists,
            r.cascade,
        )?;
        for id in ids {
            self.tablets.drop_buckets(id, None, true);
        }
        Ok(DropDatabaseResponse::default())
    }

    fn list_databases(&self, _r: ListDatabasesRequest) -> Result<ListDatabasesResponse> {
        Ok(ListDatabasesResponse {
            database_name: lock(&self.catalog).databases(),
            ..Default::default()
        })
    }

    fn database_exists(&self, r: DatabaseExistsRequest) -> Result<DatabaseExistsResponse> {
        Ok(DatabaseExistsResponse {
            exists: lock(&self.catalog).database(&r.database_name).is_ok(),
        })
    }

    fn get_database_info(&self, r: GetDatabaseInfoRequest) -> Result<GetDatabaseInfoResponse> {
        let c = lock(&self.catalog);
        let d = c.database(&r.database_name)?;
        Ok(GetDatabaseInfoResponse {
            database_json: d.json.as_bytes().to_vec(),
            created_time: d.created,
            modified_time: d.modified,
        })
    }

    fn create_table(&self, r: CreateTableRequest) -> Result<CreateTableResponse> {
        let p = r.table_path;
        let mut c = lock(&self.catalog);
        if let Some(meta) = c.create_table(
            &p.database_name,
            &p.table_name,
            &r.table_json,
            r.ignore_if_exists,
        )? {
            if !meta.is_partitioned() {
                if let Err(e) = self.tablets.open_buckets(&meta, None) {
                    let _ = c.drop_table(&p.database_name, &p.table_name, true);
                    return Err(e);
                }
            }
        }
        Ok(CreateTableResponse::default())
    }

    fn drop_table(&self, r: DropTableRequest) -> Result<DropTableResponse> {
        let p = r.table_path;
        let id = lock(&self.catalog).drop_table(
            &p.database_name,
            &p.table_name,
            r.ignore_if_not_exists,
        )?;
        if let Some(id) = id {
            self.tablets.drop_buckets(id, None, true);
        }
        Ok(DropTableResponse::default())
    }

    fn get_table_info(&self, r: GetTableInfoRequest) -> Result<GetTableInfoResponse> {
        let t = lock(&self.catalog).table(&r.table_path.database_name, &r.table_path.table_name)?;
        Ok(GetTableInfoResponse {
            table_id: t.entry.id,
            schema_id: t.entry.schema_id,
            table_json: t.entry.table_json.as_bytes().to_vec(),
            created_time: t.entry.created,
            modified_time: t.entry.modified,
            remote_data_dir: None,
        })
    }

    fn list_tables(&self, r: ListTablesRequest) -> Result<ListTablesResponse> {
        Ok(ListTablesResponse {
            table_name: lock(&self.catalog).list_tables(&r.database_name)?,
        })
    }

    fn table_exists(&self, r: TableExistsRequest) -> Result<TableExistsResponse> {
        Ok(TableExistsResponse {
            exists: lock(&self.catalog)
                .table(&r.table_path.database_name, &r.table_path.table_name)
                .is_ok(),
        })
    }

    fn get_table_schema(&self, r: GetTableSchemaRequest) -> Result<GetTableSchemaResponse> {
        let t = lock(&self.catalog).table(&r.table_path.database_name, &r.table_path.table_name)?;
        if let Some(id) = r.schema_id {
            if id != t.entry.schema_id {
                return Err(fluss(
                    error_codes::SCHEMA_NOT_EXIST,
                    format!(
                        "Schema for table {} with schema id {id} does not exist.",
                        t.path()
                    ),
                ));
            }
        }
        Ok(GetTableSchemaResponse {
            schema_id: t.entry.schema_id,
            schema_json: t.descriptor.schema.to_json(),
        })
    }

    fn list_partitions(&self, r: ListPartitionInfosRequest) -> Result<ListPartitionInfosResponse> {
        let c = lock(&self.catalog);
        let t = c.table(&r.table_path.database_name, &r.table_path.table_name)?;
        let filter: Vec<(String, String)> = r
            .partial_partition_spec
            .map(|s| {
                s.partition_key_values
                    .into_iter()
                    .map(|kv| (kv.key, kv.value))
                    .collect()
            })
            .unwrap_or_default();
        let parts = c.partitions(&t, &filter)?;
        Ok(ListPartitionInfosResponse {
            partitions_info: parts
                .into_iter()
                .map(|p| PbPartitionInfo {
                    partition_id: p.id,
                    partition_spec: PbPartitionSpec {
                        partition_key_values: p
                            .spec
                            .into_iter()
                            .map(|(key, value)| PbKeyValue { key, value })
                            .collect(),
                    },
                    remote_data_dir: None,
                })
                .collect(),
        })
    }

    fn create_partition(&self, r: CreatePartitionRequest) -> Result<CreatePartitionResponse> {
        let mut c = lock(&self.catalog);
        let t = c.table(&r.table_path.database_name, &r.table_path.table_name)?;
        let spec: Vec<(String, String)> = r
            .partition_spec
            .partition_key_values
            .into_iter()
            .map(|kv| (kv.key, kv.value))
            .collect();
        // Fluss names the flag ignore_if_not_exists but uses it as "ignore if exists".
        if let Some(p) = c.create_partition(&t, &spec, r.ignore_if_not_exists)? {
            self.tablets.open_buckets(&t, Some(p.id))?;
        }
        Ok(CreatePartitionResponse::default())
    }

    fn drop_partition(&self, r: DropPartitionRequest) -> Result<DropPartitionResponse> {
        let mut c = lock(&self.catalog);
        let t = c.table(&r.table_path.database_name, &r.table_path.table_name)?;
        let spec: Vec<(String, String)> = r
            .partition_spec
            .partition_key_values
            .into_iter()
            .map(|kv| (kv.key, kv.value))
            .collect();
        if let Some(id) = c.drop_partition(&t, &spec, r.ignore_if_not_exists)? {
            self.tablets.drop_buckets(t.entry.id, Some(id), false);
        }
        Ok(DropPartitionResponse::default())
    }

    fn bucket_metadata(n: i32) -> Vec<PbBucketMetadata> {
        (0..n)
            .map(|b| PbBucketMetadata {
                bucket_id: b,
                leader_id: Some(0),
                replica_id: vec![0],
                leader_epoch: Some(0),
            })
            .collect()
    }

    fn get_metadata(&self, r: MetadataRequest) -> Result<MetadataResponse> {
        let c = lock(&self.catalog);
        let mut tables = Vec::new();
        for p in &r.table_path {
            let t = c.table(&p.database_name, &p.table_name)?;
            tables.push(PbTableMetadata {
                table_path: PbTablePath::from(&TablePath::new(&t.entry.database, &t.entry.name)),
                table_id: t.entry.id,
                schema_id: t.entry.schema_id,
                table_json: t.entry.table_json.as_bytes().to_vec(),
                bucket_metadata: if t.is_partitioned() {
                    Vec::new()
                } else {
                    Self::bucket_metadata(t.buckets)
                },
                created_time: t.entry.created,
                modified_time: t.entry.modified,
                remote_data_dir: None,
            });
        }
        let mut parts = Vec::new();
        for p in &r.partitions_path {
            let t = c.table(&p.database_name, &p.table_name)?;
            let name = p.partition_name.clone().unwrap_or_default();
            let Some(e) = c.partition_by_name(&t, &name) else {
                return Err(fluss(
                    error_codes::PARTITION_NOT_EXISTS,
                    format!(
                        "Table partition '{}.{}(p={name})' does not exist.",
                        t.entry.database, t.entry.name
                    ),
                ));
            };
            parts.push(PbPartitionMetadata {
                table_id: t.entry.id,
                partition_name: e.name,
                partition_id: e.id,
                bucket_metadata: Self::bucket_metadata(t.buckets),
            });
        }
        for id in &r.partitions_id {
            let Some((table_id, e)) = c.partition_by_id(*id) else {
                return Err(fluss(
                    error_codes::PARTITION_NOT_EXISTS,
                    format!("The partition id '{id}' does not exist or you don't have permission to access it."),
                ));
            };
            if parts.iter().any(|p| p.partition_id == *id) {
                continue;
            }
            let t = c.table_by_id(table_id)?;
            parts.push(PbPartitionMetadata {
                table_id,
                partition_name: e.name,
                partition_id: e.id,
                bucket_metadata: Self::bucket_metadata(t.buckets),
            });
        }
        Ok(MetadataResponse {
            coordinator_server: Some(self.node()),
            tablet_servers: vec![self.node()],
            table_metadata: tables,
            partition_metadata: parts,
        })
    }

    fn init_writer(&self, _r: InitWriterRequest) -> Result<InitWriterResponse> {
        Ok(InitWriterResponse {
            writer_id: lock(&self.catalog).next_writer_id()?,
        })
    }

    fn latest_kv_snapshots(
        &self,
        r: GetLatestKvSnapshotsRequest,
    ) -> Result<GetLatestKvSnapshotsResponse> {
        let c = lock(&self.catalog);
        let t = c.table(&r.table_path.database_name, &r.table_path.table_name)?;
        if !t.is_pk() {
            return Err(fluss(
                error_codes::NON_PRIMARY_KEY_TABLE_EXCEPTION,
                format!(
                    "Table '{}' is not a primary key table, so it doesn't have any kv snapshots.",
                    t.path()
                ),
            ));
        }
        let partition_id = match (&r.partition_name, t.is_partitioned()) {
            (Some(_), false) => {
                return Err(fluss(
                    error_codes::TABLE_NOT_PARTITIONED_EXCEPTION,
                    format!("Table '{}' is not a partitioned table.", t.path()),
                ))
            }
            (None, true) => {
                return Err(fluss(
                    error_codes::PARTITION_NOT_EXISTS,
                    format!(
                        "Table '{}' is a partitioned table, but partition name is not provided.",
                        t.path()
                    ),
                ))
            }
            (Some(n), true) => Some(
                c.partition_by_name(&t, n)
                    .ok_or_else(|| {
                        fluss(
                            error_codes::PARTITION_NOT_EXISTS,
                            format!(
                                "The partition '{n}' of table '{}' does not exist.",
                                t.path()
                            ),
                        )
                    })?
                    .id,
            ),
            (None, false) => None,
        };
        // No KV snapshots are ever taken in the Fluss sense: every bucket reports none, so clients
        // rebuild the state from the changelog starting at the earliest offset.
        Ok(GetLatestKvSnapshotsResponse {
            table_id: t.entry.id,
            partition_id,
            latest_snapshots: (0..t.buckets)
                .map(|b| PbKvSnapshot {
                    bucket_id: b,
                    snapshot_id: None,
                    log_offset: None,
                })
                .collect(),
        })
    }

    fn kv_snapshot_metadata(
        &self,
        r: GetKvSnapshotMetadataRequest,
    ) -> Result<GetKvSnapshotMetadataResponse> {
        Err(fluss(
            error_codes::KV_SNAPSHOT_NOT_EXIST,
            format!(
                "Failed to get kv snapshot metadata for table bucket {} and snapshot id {}. Error: Kv snapshot not found",
                TableBucket { table_id: r.table_id, partition_id: r.partition_id, bucket: r.bucket_id },
                r.snapshot_id
            ),
        ))
    }

    fn lake_snapshot(&self, r: GetLakeSnapshotRequest) -> Result<GetLakeSnapshotResponse> {
        let t = lock(&self.catalog).table(&r.table_path.database_name, &r.table_path.table_name)?;
        Err(fluss(
            error_codes::LAKE_SNAPSHOT_NOT_EXIST,
            format!(
                "Lake table snapshot doesn't exist for table: {}, table id: {}",
                t.path(),
                t.entry.id
            ),
        ))
    }

    // ------------------------------------------------------------------ tablets

    fn table(&self, id: i64) -> Result<Arc<TableMeta>> {
        lock(&self.catalog).table_by_id(id)
    }

    fn bucket(
        &self,
        meta: &TableMeta,
        partition_id: Option<i64>,
        bucket: i32,
    ) -> Result<(TableBucket, Arc<std::sync::RwLock<Bucket>>)> {
        let tb = TableBucket {
            table_id: meta.entry.id,
            partition_id,
            bucket,
        };
        Ok((tb, self.tablets.get(&tb)?))
    }

    fn produce_log(&self, r: ProduceLogRequest) -> Result<ProduceLogResponse> {
        check_acks(r.acks)?;
        let meta = self.table(r.table_id);
        let mut out = Vec::new();
        for b in r.buckets_req {
            let res = meta.as_ref().map_err(Clone::clone).and_then(|meta| {
                if meta.is_pk() {
                    return Err(fluss(
                        error_codes::INVALID_TABLE_EXCEPTION,
                        format!(
                            "Cannot produce log records to primary key table '{}'; use PutKv.",
                            meta.path()
                        ),
                    ));
                }
                let (_, bucket) = self.bucket(meta, b.partition_id, b.bucket_id)?;
                crate::validate::log_records(meta, &b.records, &self.config)?;
                let mut g = write_bucket(&bucket);
                g.log.append(b.records.to_vec())
            });
            out.push(match res {
                Ok(a) => PbProduceLogRespForBucket {
                    partition_id: b.partition_id,
                    bucket_id: b.bucket_id,
                    error_code: None,
                    error_message: None,
                    base_offset: Some(a.base_offset),
                },
                Err(e) => {
                    let (error_code, error_message) = err_fields(&e);
                    PbProduceLogRespForBucket {
                        partition_id: b.partition_id,
                        bucket_id: b.bucket_id,
                        error_code,
                        error_message,
                        base_offset: None,
                    }
                }
            });
        }
        Ok(ProduceLogResponse { buckets_resp: out })
    }

    async fn fetch_log(self: &Arc<Self>, r: FetchLogRequest) -> Result<FetchLogResponse> {
        let wait = Duration::from_millis(r.max_wait_ms.unwrap_or(0).max(0) as u64);
        let deadline = Instant::now() + wait;
        let min_bytes = r.min_bytes.unwrap_or(1).max(0) as usize;
        let r = Arc::new(r);
        loop {
            let notified = self.appended.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let s = self.clone();
            let req = r.clone();
            let (resp, total, errors) = tokio::task::spawn_blocking(move || s.fetch_once(&req))
                .await
                .map_err(|e| Error::internal(format!("fetch task failed: {e}")))?;
            let now = Instant::now();
            if total >= min_bytes.max(1) || errors || now >= deadline {
                return Ok(resp);
            }
            let _ = tokio::time::timeout(deadline - now, notified).await;
        }
    }

    fn fetch_once(&self, r: &FetchLogRequest) -> (FetchLogResponse, usize, bool) {
        let mut limit = r.max_bytes.max(0) as usize;
        let mut min_one = true;
        let mut total = 0usize;
        let mut errors = false;
        let mut tables = Vec::new();
        for t in &r.tables_req {
            let meta = self.table(t.table_id);
            let projection = meta.as_ref().map_err(Clone::clone).and_then(|m| {
                if t.projection_pushdown_enabled {
                    check_projection(m, &t.projected_fields).map(Some)
                } else {
                    Ok(None)
                }
            });
            let mut buckets = Vec::new();
            for b in &t.buckets_req {
                let res = meta.as_ref().map_err(Clone::clone).and_then(|meta| {
                    let proj = projection.clone()?;
                    let (_, bucket) = self.bucket(meta, b.partition_id, b.bucket_id)?;
                    let g = read_bucket(&bucket);
                    let want = limit.min(b.max_fetch_bytes.max(0) as usize);
                    // Fluss's FETCH_FROM_EARLIEST_OFFSET (-2): read from the log start offset
                    let offset = if b.fetch_offset == FETCH_FROM_EARLIEST_OFFSET {
                        g.log.log_start_offset()
                    } else {
                        b.fetch_offset
                    };
                    let bytes = g.log.read(offset, want, min_one)?;
                    let bytes = match &proj {
                        Some(fields) if !bytes.is_empty() => project(meta, &bytes, fields)?,
                        _ => bytes,
                    };
                    Ok((bytes, g.log.high_watermark(), g.log.log_start_offset()))
                });
                buckets.push(match res {
                    Ok((bytes, hw, start)) => {
                        if !bytes.is_empty() {
                            min_one = false;
                        }
                        limit = limit.saturating_sub(bytes.len());
                        total += bytes.len();
                        PbFetchLogRespForBucket {
                            partition_id: b.partition_id,
                            bucket_id: b.bucket_id,
                            high_watermark: Some(hw),
                            log_start_offset: Some(start),
                            records: Some(Bytes::from(bytes)),
                            ..Default::default()
                        }
                    }
                    Err(e) => {
                        errors = true;
                        let (error_code, error_message) = err_fields(&e);
                        PbFetchLogRespForBucket {
                            partition_id: b.partition_id,
                            bucket_id: b.bucket_id,
                            error_code,
                            error_message,
                            ..Default::default()
                        }
                    }
                });
            }
            tables.push(PbFetchLogRespForTable {
                table_id: t.table_id,
                buckets_resp: buckets,
            });
        }
        (
            FetchLogResponse {
                tables_resp: tables,
            },
            total,
            errors,
        )
    }

    fn list_offsets(&self, r: ListOffsetsRequest) -> Result<ListOffsetsResponse> {
        let meta = self.table(r.table_id);
        let mut out = Vec::new();
        for &bucket_id in &r.bucket_id {
            let res = meta.as_ref().map_err(Clone::clone).and_then(|meta| {
                let (tb, bucket) = self.bucket(meta, r.partition_id, bucket_id)?;
                let g = read_bucket(&bucket);
                match r.offset_type {
                    0 => Ok(g.log.log_start_offset()),
                    1 => Ok(g.log.high_watermark()),
                    2 => {
                        let Some(ts) = r.start_timestamp else {
                            return Err(fluss(
                                error_codes::UNKNOWN_SERVER_ERROR,
                                "startTimestamp is not present while list offset by timestamp.",
                            ));
                        };
                        let now = now_ms();
                        let max = g.log.max_timestamp();
                        if ts > now {
                            return Err(fluss(
                                error_codes::INVALID_TIMESTAMP_EXCEPTION,
                                format!(
                                    "Get offset error for table bucket {tb}, the fetch timestamp {ts} \
                                     is larger than the current timestamp {now}"
                                ),
                            ));
                        }
                        if ts > max {
                            return Ok(g.log.high_watermark());
                        }
                        g.log.offset_for_timestamp(ts)?.ok_or_else(|| {
                            fluss(
                                error_codes::INVALID_TIMESTAMP_EXCEPTION,
                                format!(
                                    "Lookup offset error for table bucket {tb}, the fetch timestamp \
                                     {ts} is larger than the max timestamp {max}"
                                ),
                            )
                        })
                    }
                    t => Err(fluss(
                        error_codes::UNKNOWN_SERVER_ERROR,
                        format!("Invalid list offset type: {t}"),
                    )),
                }
            });
            out.push(match res {
                Ok(o) => PbListOffsetsRespForBucket {
                    bucket_id,
                    error_code: None,
                    error_message: None,
                    offset: Some(o),
                },
                Err(e) => {
                    let (error_code, error_message) = err_fields(&e);
                    PbListOffsetsRespForBucket {
                        bucket_id,
                        error_code,
                        error_message,
                        offset: None,
                    }
                }
            });
        }
        Ok(ListOffsetsResponse { buckets_resp: out })
    }

    fn put_kv(&self, r: PutKvRequest) -> Result<PutKvResponse> {
        check_acks(r.acks)?;
        let meta = self.table(r.table_id);
        let target = meta
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|m| merge::check_target_columns(m, &r.target_columns));
        let mut out = Vec::new();
        for b in &r.buckets_req {
            let res = meta.as_ref().map_err(Clone::clone).and_then(|meta| {
                let target = target.clone()?;
                self.put_bucket(meta, b, target.as_deref())
            });
            out.push(match res {
                Ok(leo) => PbPutKvRespForBucket {
                    partition_id: b.partition_id,
                    bucket_id: b.bucket_id,
                    log_end_offset: Some(leo),
                    ..Default::default()
                },
                Err(e) => {
                    let (error_code, error_message) = err_fields(&e);
                    PbPutKvRespForBucket {
                        partition_id: b.partition_id,
                        bucket_id: b.bucket_id,
                        error_code,
                        error_message,
                        ..Default::default()
                    }
                }
            });
        }
        Ok(PutKvResponse { buckets_resp: out })
    }

    fn put_bucket(
        &self,
        meta: &TableMeta,
        b: &PbPutKvReqForBucket,
        target: Option<&[bool]>,
    ) -> Result<i64> {
        let (tb, bucket) = self.bucket(meta, b.partition_id, b.bucket_id)?;
        if !meta.is_pk() {
            return Err(fluss(
                error_codes::NON_PRIMARY_KEY_TABLE_EXCEPTION,
                format!("the primary key table not exists for {tb}"),
            ));
        }
        crate::validate::kv_records(meta, &b.records, &self.config)?;
        let kvb = riverlet::record::kv_batch::KvRecordBatch::new(&b.records).map_err(|e| {
            fluss(
                error_codes::CORRUPT_RECORD_EXCEPTION,
                e.message().to_string(),
            )
        })?;
        if !kvb.is_valid() {
            return Err(fluss(
                error_codes::CORRUPT_RECORD_EXCEPTION,
                format!("KV record batch for {tb} failed its CRC check"),
            ));
        }
        let schema_id = kvb.schema_id();
        let latest = meta.entry.schema_id as i16;
        if schema_id > latest || schema_id < 0 {
            return Err(fluss(
                error_codes::SCHEMA_NOT_EXIST,
                format!("Invalid schema id: {schema_id}, latest schema id: {latest}"),
            ));
        }
        let mut records = Vec::new();
        for rec in kvb.records() {
            let rec = rec.map_err(|e| {
                fluss(
                    error_codes::CORRUPT_RECORD_EXCEPTION,
                    e.message().to_string(),
                )
            })?;
            records.push((rec.key.to_vec(), rec.value.map(|v| v.to_vec())));
        }
        let (writer_id, seq) = (kvb.writer_id(), kvb.batch_sequence());
        let mut g = write_bucket(&bucket);
        let g = &mut *g;
        if let SequenceCheck::Duplicate(m) = g.log.check_sequence(writer_id, seq)? {
            return Ok(m.last_offset + 1);
        }
        self.write_kv(meta, g, &records, target, writer_id, seq)
    }

    /// Applies KV records to a bucket (merge engine, auto-increment values), appends their
    /// changelog and commits the state; the new log end offset.
    fn write_kv(
        &self,
        meta: &TableMeta,
        g: &mut Bucket,
        records: &[(Vec<u8>, Option<Vec<u8>>)],
        target: Option<&[bool]>,
        writer_id: i64,
        seq: i32,
    ) -> Result<i64> {
        let latest = meta.entry.schema_id as i16;
        let kv =
            g.kv.as_mut()
                .ok_or_else(|| Error::internal(format!("{} has no KV tablet", meta.path())))?;
        let table_id = meta.entry.id;
        let w = merge::apply_batch(meta, kv, latest, records, target, &mut || {
            self.tablets.sequences.next(table_id)
        })?;
        let rb = riverlet::row::arrow_rows::rows_to_record_batch(
            &meta.arrow_schema,
            &meta.types,
            &w.rows,
        )?;
        let batch = log_batch::build_arrow_log_batch(
            latest,
            &rb,
            meta.compression,
            Some(&w.change_types),
            writer_id,
            seq,
        )?;
        g.log.append(batch)?;
        let leo = g.log.log_end_offset();
        kv.commit(leo, w.mutations)?;
        Ok(leo)
    }

    /// Lookup with insert-if-not-exists (Fluss's dictionary-encoding pattern): every missing key
    /// is inserted as a write of only the primary-key columns (other columns null, the
    /// auto-increment column assigned), as Fluss's ReplicaManager does before it looks the keys
    /// up again.
    fn insert_missing_keys(
        &self,
        meta: &TableMeta,
        tb: &TableBucket,
        bucket: &std::sync::RwLock<Bucket>,
        keys: &[Vec<u8>],
    ) -> Result<()> {
        let mut g = write_bucket(bucket);
        let g = &mut *g;
        let kv =
            g.kv.as_ref()
                .ok_or_else(|| Error::internal("no KV tablet"))?;
        // In request order (the order values are assigned in), each key once.
        let mut missing: Vec<&Vec<u8>> = Vec::new();
        for k in keys {
            if kv.get(k).is_none() && !missing.contains(&k) {
                missing.push(k);
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        let pk_targets: Vec<i32> = meta.pk_indexes.iter().map(|i| *i as i32).collect();
        let target = merge::check_target_columns(meta, &pk_targets)?;
        let partition_cols: Vec<usize> = meta
            .partition_keys
            .iter()
            .filter_map(|k| meta.descriptor.schema.column_index(k))
            .collect();
        let key_cols: Vec<usize> = meta
            .pk_indexes
            .iter()
            .copied()
            .filter(|i| !partition_cols.contains(i))
            .collect();
        let key_types: Vec<_> = key_cols.iter().map(|i| meta.types[*i].clone()).collect();
        let mut template = vec![riverlet::row::Datum::Null; meta.types.len()];
        if let Some(pid) = tb.partition_id {
            let (_, partition) = lock(&self.catalog).partition_by_id(pid).ok_or_else(|| {
                fluss(
                    error_codes::PARTITION_NOT_EXISTS,
                    format!("partition {pid} of {} does not exist", meta.path()),
                )
            })?;
            for (col, (_, text)) in partition_cols.iter().zip(&partition.spec) {
                template[*col] = merge::partition_datum(&meta.types[*col], text).map_err(|e| {
                    e.context(format!(
                        "lookup with insert_if_not_exists in partition '{}' of {}",
                        partition.name,
                        meta.path()
                    ))
                })?;
            }
        }
        let mut records = Vec::with_capacity(missing.len());
        for key in missing {
            let values = riverlet::row::key::decode_key(&key_types, key)?;
            let mut row = template.clone();
            for (col, v) in key_cols.iter().zip(values) {
                row[*col] = v;
            }
            records.push((key.clone(), Some(merge::encode_row(meta, &row)?)));
        }
        self.write_kv(
            meta,
            g,
            &records,
            target.as_deref(),
            crate::writers::NO_WRITER_ID,
            -1,
        )?;
        Ok(())
    }

    fn kv_bucket_check(meta: &TableMeta, tb: &TableBucket) -> Result<()> {
        if !meta.is_pk() {
            return Err(fluss(
                error_codes::NON_PRIMARY_KEY_TABLE_EXCEPTION,
                format!("the primary key table not exists for {tb}"),
            ));
        }
        Ok(())
    }

    fn lookup(&self, r: LookupRequest) -> Result<LookupResponse> {
        let meta = self.table(r.table_id);
        let mut out = Vec::new();
        for b in r.buckets_req {
            let res = meta.as_ref().map_err(Clone::clone).and_then(|meta| {
                let (tb, bucket) = self.bucket(meta, b.partition_id, b.bucket_id)?;
                Self::kv_bucket_check(meta, &tb)?;
                if r.insert_if_not_exists == Some(true) {
                    self.insert_missing_keys(meta, &tb, &bucket, &b.keys)?;
                }
                let g = read_bucket(&bucket);
                let kv =
                    g.kv.as_ref()
                        .ok_or_else(|| Error::internal("no KV tablet"))?;
                Ok(b.keys
                    .iter()
                    .map(|k| PbValue {
                        values: kv.get(k).map(|v| v.to_vec()),
                    })
                    .collect::<Vec<_>>())
            });
            out.push(match res {
                Ok(values) => PbLookupRespForBucket {
                    partition_id: b.partition_id,
                    bucket_id: b.bucket_id,
                    values,
                    original_partition_name: b.original_partition_name.clone(),
                    ..Default::default()
                },
                Err(e) => {
                    let (error_code, error_message) = err_fields(&e);
                    PbLookupRespForBucket {
                        partition_id: b.partition_id,
                        bucket_id: b.bucket_id,
                        error_code,
                        error_message,
                        original_partition_name: b.original_partition_name.clone(),
                        ..Default::default()
                    }
                }
            });
        }
        Ok(LookupResponse { buckets_resp: out })
    }

    fn prefix_lookup(&self, r: PrefixLookupRequest) -> Result<PrefixLookupResponse> {
        let meta = self.table(r.table_id);
        let mut out = Vec::new();
        for b in r.buckets_req {
            let res = meta.as_ref().map_err(Clone::clone).and_then(|meta| {
                let (_tb, bucket) = self.bucket(meta, b.partition_id, b.bucket_id)?;
                if !meta.is_pk() {
                    return Err(fluss(
                        error_codes::NON_PRIMARY_KEY_TABLE_EXCEPTION,
                        format!(
                            "Try to do prefix lookup on a non primary key table: {}",
                            meta.path()
                        ),
                    ));
                }
                let g = read_bucket(&bucket);
                let kv =
                    g.kv.as_ref()
                        .ok_or_else(|| Error::internal("no KV tablet"))?;
                Ok(b.keys
                    .iter()
                    .map(|k| PbValueList {
                        values: kv.prefix(k),
                    })
                    .collect::<Vec<_>>())
            });
            out.push(match res {
                Ok(value_lists) => PbPrefixLookupRespForBucket {
                    partition_id: b.partition_id,
                    bucket_id: b.bucket_id,
                    value_lists,
                    ..Default::default()
                },
                Err(e) => {
                    let (error_code, error_message) = err_fields(&e);
                    PbPrefixLookupRespForBucket {
                        partition_id: b.partition_id,
                        bucket_id: b.bucket_id,
                        error_code,
                        error_message,
                        ..Default::default()
                    }
                }
            });
        }
        Ok(PrefixLookupResponse { buckets_resp: out })
    }

    fn limit_scan(&self, r: LimitScanRequest) -> Result<LimitScanResponse> {
        let res = (|| {
            let meta = self.table(r.table_id)?;
            let (_, bucket) = self.bucket(&meta, r.partition_id, r.bucket_id)?;
            let limit = r.limit.max(0) as usize;
            let g = read_bucket(&bucket);
            if let Some(kv) = &g.kv {
                let values = kv.values(limit);
                let refs: Vec<&[u8]> = values.iter().map(|v| v.as_slice()).collect();
                let bytes = riverlet::record::value_batch::encode_value_batch_from_values(&refs);
                Ok((false, bytes))
            } else {
                let hw = g.log.high_watermark();
                let mut offset = g.log.log_start_offset().max(hw - limit as i64);
                let mut bytes = Vec::new();
                while offset < hw {
                    let chunk = g.log.read(offset, i32::MAX as usize, true)?;
                    let (infos, _) = crate::batch::scan(&chunk, false);
                    let Some(last) = infos.last() else { break };
                    offset = last.next_offset;
                    bytes.extend_from_slice(&chunk);
                }
                Ok((true, bytes))
            }
        })();
        Ok(match res {
            Ok((is_log, bytes)) => LimitScanResponse {
                error_code: None,
                error_message: None,
                is_log_table: Some(is_log),
                records: Some(Bytes::from(bytes)),
            },
            Err(e) => {
                let (error_code, error_message) = err_fields(&e);
                LimitScanResponse {
                    error_code,
                    error_message,
                    is_log_table: None,
                    records: None,
                }
            }
        })
    }

    fn scan_kv(&self, r: ScanKvRequest) -> Result<ScanKvResponse> {
        let res = self.scan_kv_inner(r);
        Ok(res.unwrap_or_else(|e| {
            let (error_code, error_message) = err_fields(&e);
            ScanKvResponse {
                error_code,
                error_message,
                ..Default::default()
            }
        }))
    }

    fn scan_kv_inner(&self, r: ScanKvRequest) -> Result<ScanKvResponse> {
        let invalid = |m: &str| fluss(error_codes::INVALID_SCAN_REQUEST, m.to_string());
        if r.bucket_scan_req.is_some() && r.scanner_id.is_some() {
            return Err(invalid(
                "ScanKvRequest must not set both bucket_scan_req and scanner_id.",
            ));
        }
        let close = r.close_scanner == Some(true);
        if r.bucket_scan_req.is_some() && close {
            return Err(invalid(
                "ScanKvRequest must not set close_scanner together with bucket_scan_req.",
            ));
        }
        if r.bucket_scan_req.is_none() && r.scanner_id.is_none() {
            return Err(invalid(
                "ScanKvRequest must have either bucket_scan_req (new scan) or scanner_id (continuation).",
            ));
        }
        let mut batch_size = 0usize;
        if !close {
            let Some(bs) = r.batch_size_bytes else {
                return Err(invalid(
                    "batch_size_bytes is required for data-fetching scan requests.",
                ));
            };
            if bs <= 0 {
                return Err(invalid("batch_size_bytes must be greater than 0."));
            }
            batch_size = (bs as usize).min(SCANNER_MAX_BATCH);
        }
        let mut sessions = lock(&self.scanners);
        sessions.retain(|_, s| s.last_access.elapsed() < SCANNER_TTL);
        let (id, mut session, log_offset) = if let Some(req) = &r.bucket_scan_req {
            let meta = self.table(req.table_id)?;
            let (tb, bucket) = self.bucket(&meta, req.partition_id, req.bucket_id)?;
            Self::kv_bucket_check(&meta, &tb)?;
            let g = read_bucket(&bucket);
            let kv =
                g.kv.as_ref()
                    .ok_or_else(|| Error::internal("no KV tablet"))?;
            let mut values = kv.snapshot_values();
            if let Some(limit) = req.limit.filter(|l| *l > 0) {
                values.truncate(limit as usize);
            }
            let log_offset = g.log.high_watermark();
            if values.is_empty() {
                return Ok(ScanKvResponse {
                    has_more_results: Some(false),
                    log_offset: Some(log_offset),
                    ..Default::default()
                });
            }
            let n = self.scanner_seq.fetch_add(1, Ordering::Relaxed);
            let mut id = n.to_be_bytes().to_vec();
            id.extend_from_slice(&now_ms().to_be_bytes());
            (
                id,
                ScanSession {
                    bucket: tb,
                    values,
                    pos: 0,
                    call_seq: -1,
                    last_access: Instant::now(),
                },
                Some(log_offset),
            )
        } else {
            let id = r.scanner_id.clone().unwrap_or_default();
            let Some(s) = sessions.remove(&id) else {
                if close {
                    return Ok(ScanKvResponse {
                        scanner_id: Some(id),
                        has_more_results: Some(false),
                        ..Default::default()
                    });
                }
                return Err(fluss(
                    error_codes::UNKNOWN_SCANNER_ID,
                    "Unknown scanner ID. The session may have expired or never existed.",
                ));
            };
            // the bucket may have been dropped since the scan opened
            self.tablets.get(&s.bucket)?;
            (id, s, None)
        };
        if close {
            return Ok(ScanKvResponse {
                scanner_id: Some(id),
                has_more_results: Some(false),
                ..Default::default()
            });
        }
        let Some(seq) = r.call_seq_id else {
            sessions.insert(id.clone(), session);
            return Err(invalid(
                "call_seq_id is required for ScanKV requests to ensure in-order processing and at-least-once semantics.",
            ));
        };
        if seq != session.call_seq + 1 {
            let expected = session.call_seq + 1;
            sessions.insert(id.clone(), session);
            return Err(fluss(
                error_codes::INVALID_SCAN_REQUEST,
                format!("Out-of-order scan request: expected callSeqId={expected} but got {seq}."),
            ));
        }
        // at least one record per response, then up to batch_size bytes
        let mut size = 0usize;
        let start = session.pos;
        let mut end = start;
        while end < session.values.len() && (end == start || size < batch_size) {
            size += 4 + session.values[end].len();
            end += 1;
        }
        let refs: Vec<&[u8]> = session.values[start..end]
            .iter()
            .map(|v| v.as_slice())
            .collect();
        let records = riverlet::record::value_batch::encode_value_batch_from_values(&refs);
        session.pos = end;
        session.call_seq = seq;
        session.last_access = Instant::now();
        let has_more = session.pos < session.values.len();
        if has_more {
            sessions.insert(id.clone(), session);
        }
        Ok(ScanKvResponse {
            error_code: None,
            error_message: None,
            scanner_id: Some(id),
            has_more_results: Some(has_more),
            records: Some(Bytes::from(records)),
            log_offset,
        })
    }

    fn table_stats(&self, r: GetTableStatsRequest) -> Result<GetTableStatsResponse> {
        let meta = self.table(r.table_id);
        let mut out = Vec::new();
        for b in r.buckets_req {
            let res = meta.as_ref().map_err(Clone::clone).and_then(|meta| {
                let (_, bucket) = self.bucket(meta, b.partition_id, b.bucket_id)?;
                let g = read_bucket(&bucket);
                Ok(match &g.kv {
                    Some(kv) => kv.len() as i64,
                    None => g.log.high_watermark() - g.log.log_start_offset(),
                })
            });
            out.push(match res {
                Ok(n) => PbTableStatsRespForBucket {
                    partition_id: b.partition_id,
                    bucket_id: b.bucket_id,
                    row_count: Some(n),
                    ..Default::default()
                },
                Err(e) => {
                    let (error_code, error_message) = err_fields(&e);
                    PbTableStatsRespForBucket {
                        error_code,
                        error_message,
                        partition_id: b.partition_id,
                        bucket_id: b.bucket_id,
                        row_count: None,
                    }
                }
            });
        }
        Ok(GetTableStatsResponse { buckets_resp: out })
    }

    /// Deletes expired segments of every log table (table.log.ttl). PK tables keep their
    /// changelog: with no Fluss KV snapshots it is what clients rebuild state from.
    pub fn enforce_ttl(&self) {
        for (tb, bucket) in self.tablets.all() {
            let Ok(meta) = self.table(tb.table_id) else {
                continue;
            };
            if meta.is_pk() || meta.ttl_ms <= 0 {
                continue;
            }
            let mut g = write_bucket(&bucket);
            match g.log.delete_expired(meta.ttl_ms) {
                Ok(n) if n > 0 => tracing::info!("{tb}: deleted {n} expired log segment(s)"),
                Ok(_) => {}
                Err(e) => tracing::warn!("{tb}: TTL cleanup failed: {e}"),
            }
        }
    }

    /// Flushes everything to disk (clean shutdown).
    pub fn flush(&self) -> Result<()> {
        self.tablets.flush_all()
    }
}

/// The ApiVersions response.
pub fn api_versions() -> ApiVersionsResponse {
    api_versions_of(false)
}

/// The served APIs and their highest versions; with `fluss_0_9`, those of Fluss 0.9.1 (no
/// ScanKv, PutKv up to version 1).
fn served_apis(fluss_0_9: bool) -> impl Iterator<Item = (ApiKey, i16)> {
    SERVED_APIS
        .iter()
        .filter_map(move |(k, v)| match (fluss_0_9, k) {
            (true, ApiKey::ScanKv) => None,
            (true, ApiKey::PutKv) => Some((*k, (*v).min(1))),
            _ => Some((*k, *v)),
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

fn check_acks(acks: i32) -> Result<()> {
    if !(-1..=1).contains(&acks) {
        return Err(fluss(
            error_codes::INVALID_REQUIRED_ACKS,
            format!("Invalid required acks: {acks}"),
        ));
    }
    Ok(())
}

fn check_projection(meta: &TableMeta, fields: &[i32]) -> Result<Vec<usize>> {
    let bad = |m: String| fluss(error_codes::INVALID_COLUMN_PROJECTION, m);
    if meta.log_format != riverlet::metadata::table::LogFormat::Arrow {
        return Err(bad(format!(
            "Column projection is only supported for ARROW format, but the table {} is {} format.",
            meta.path(),
            meta.log_format
        )));
    }
    if fields.is_empty() {
        return Err(bad(
            "Empty projection is not supported. Please project at least one column.".to_string(),
        ));
    }
    let n = meta.types.len() as i32;
    let mut prev = -1;
    for &f in fields {
        if f < prev {
            return Err(bad(format!(
                "The projection indexes should be in field order, but is {fields:?}"
            )));
        } else if f == prev {
            return Err(bad(format!(
                "The projection indexes should not contain duplicated fields, but is {fields:?}"
            )));
        } else if f >= n {
            return Err(bad(format!(
                "Projected fields {fields:?} is out of bound for schema with {n} fields."
            )));
        }
        prev = f;
    }
    Ok(fields.iter().map(|f| *f as usize).collect())
}

/// Re-encodes stored batches keeping only the projected Arrow columns (header fields kept).
///
/// Like Fluss's `FileLogProjection`, the header keeps the stored batch's CRC, which no longer
/// matches the re-encoded payload: clients skip the CRC check of projected fetches.
fn project(meta: &TableMeta, bytes: &[u8], fields: &[usize]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len());
    for item in LogBatchIter::new(bytes) {
        let b = item?;
        let (cts, rb) = b.arrow_records_projected(&meta.arrow_schema, fields)?;
        let mut nb = log_batch::build_arrow_log_batch(
            b.schema_id(),
            &rb,
            meta.compression,
            cts.as_deref(),
            b.writer_id(),
            b.batch_sequence(),
        )?;
        log_batch::set_base_offset(&mut nb, b.base_offset())?;
        log_batch::set_commit_timestamp(&mut nb, b.commit_timestamp())?;
        log_batch::set_crc(&mut nb, b.crc())?;
        out.extend_from_slice(&nb);
    }
    Ok(out)
}
