//! Request handlers: one function per Fluss API this node serves (it is both the coordinator
//! and the only tablet server, node id 0, leader of every bucket). The server state and what
//! the handlers share live here; the served-API table in `apis`, the handlers in
//! `coordinator`, `log_handlers` and `kv_handlers`.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use riverlet::error::codes as error_codes;
use riverlet::proto::*;
use riverlet::rpc::ApiKey;
use riverlet::{Error, Result};

use crate::catalog::{Catalog, TableMeta};
use crate::config::ServerConfig;
use crate::tablets::{Bucket, TableBucket, Tablets};

mod acls;
mod apis;
mod cluster_admin;
mod coordinator;
mod guard;
mod kv_handlers;
mod kv_leases;
mod lake_tiering;
mod log_handlers;
mod producer_offsets;
pub(crate) mod tiering;

use apis::served_apis;
pub use apis::{api_versions, api_versions_of, API_AUTHORIZATION, NOT_SERVED, SERVED_APIS};
pub use guard::Rule;
use kv_handlers::ScanSession;
pub use kv_leases::KV_SNAPSHOT_LEASES_FILE;
pub use producer_offsets::PRODUCER_OFFSETS_FILE;

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

/// A response message, or the per-bucket part of one, with Fluss's error fields.
trait ErrorFields: Default {
    /// Sets the error fields from `e`.
    fn set_error(&mut self, e: &Error);
}

macro_rules! error_fields {
    ($($ty:ty),* $(,)?) => {$(
        impl ErrorFields for $ty {
            fn set_error(&mut self, e: &Error) {
                self.error_code = Some(code_of(e));
                self.error_message = Some(e.message().to_string());
            }
        }
    )*};
}

error_fields!(
    PbProduceLogRespForBucket,
    PbFetchLogRespForBucket,
    PbListOffsetsRespForBucket,
    PbTableStatsRespForBucket,
    PbPutKvRespForBucket,
    PbLookupRespForBucket,
    PbPrefixLookupRespForBucket,
    LimitScanResponse,
    ScanKvResponse,
);

/// `base` completed by the outcome: `ok` fills in a success, an error sets the error fields.
fn answer<T, A: ErrorFields>(mut base: A, res: Result<T>, ok: impl FnOnce(&mut A, T)) -> A {
    match res {
        Ok(v) => ok(&mut base, v),
        Err(e) => base.set_error(&e),
    }
    base
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
    /// The ACLs and the authorization decisions (`authorizer.enabled`).
    pub authz: crate::authz::Authorizer,
    /// The dynamic server options (AlterClusterConfigs), persisted in the data directory.
    pub dynamic: crate::config_dynamic::DynamicConfigs,
    /// The KV snapshot leases, persisted in the data directory.
    leases: Mutex<kv_leases::Leases>,
    /// `remote.data.dir`, opened (log segments are tiered there when set).
    pub remote: Option<riverlet::remote::RemoteDir>,
    /// The lake of `datalake.format`, Iceberg or Paimon (set once at start-up, when configured).
    #[cfg(feature = "lake")]
    pub lake: OnceLock<Arc<crate::lake::Lake>>,
}

/// The catalog, locked (for start-up work outside the handlers).
pub fn lock_catalog(s: &Server) -> std::sync::MutexGuard<'_, Catalog> {
    lock(&s.catalog)
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
        let remote = match &config.remote_data_dir {
            Some(d) => Some(
                riverlet::remote::RemoteDir::create(d, &config.s3)
                    .map_err(|e| e.context("remote.data.dir"))?,
            ),
            None => None,
        };
        let authz = crate::authz::Authorizer::open(
            &config.data_dir,
            config.authorizer_enabled,
            config.super_users.clone(),
        )?;
        let dynamic = crate::config_dynamic::DynamicConfigs::open(&config)?;
        let leases = Mutex::new(kv_leases::Leases::open(&config.data_dir)?);
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
            authz,
            dynamic,
            leases,
            remote,
            #[cfg(feature = "lake")]
            lake: OnceLock::new(),
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

    /// Handles one request as the server itself (not authorized) and returns the encoded
    /// response message in one buffer.
    pub async fn handle(
        self: &Arc<Self>,
        key: ApiKey,
        version: i16,
        body: Bytes,
    ) -> Result<Vec<u8>> {
        self.handle_as(&crate::authz::Session::internal(), key, version, body)
            .await
            .map(|encoded| encoded.to_vec())
    }

    /// Handles one request of `session` (authorized as the served-API table says) and returns
    /// the encoded response message.
    pub async fn handle_as(
        self: &Arc<Self>,
        session: &crate::authz::Session,
        key: ApiKey,
        version: i16,
        body: Bytes,
    ) -> Result<crate::response::Encoded> {
        let max = served_apis(self.config.fluss_0_9_apis)
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
            .ok_or_else(|| apis::unsupported(key))?;
        if version < 0 || version > max {
            return Err(fluss(
                error_codes::UNSUPPORTED_VERSION,
                format!(
                    "The server does not support version {version} of {key:?} (highest: {max})"
                ),
            ));
        }
        self.dispatch(session, key, body).await
    }

    // ------------------------------------------------------------------ shared by the handlers

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

    /// Deletes expired segments of every log table (table.log.ttl). PK tables keep their
    /// changelog: clients without ScanKv rebuild the state from it (a KV snapshot covers only
    /// the changes before its offset).
    pub fn enforce_ttl(&self) {
        for (tb, bucket) in self.tablets.all() {
            let Ok(meta) = self.table(tb.table_id) else {
                continue;
            };
            // With tiering, local segments go once copied and remote ones expire instead.
            if meta.is_pk() || meta.ttl_ms <= 0 || self.remote.is_some() {
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

    /// Takes a KV snapshot of every primary-key bucket whose state moved since its latest one
    /// (Fluss's periodic snapshot, every `kv.snapshot.interval`). The state is copied under
    /// the bucket's read lock and written without it.
    pub fn take_kv_snapshots(&self) {
        for (tb, bucket) in self.tablets.all() {
            let (store, log_offset, values) = {
                let g = read_bucket(&bucket);
                let (Some(kv), Some(store)) = (g.kv.as_ref(), g.snapshots.as_ref()) else {
                    continue;
                };
                let covered = lock(store).latest().map_or(0, |s| s.log_offset);
                if kv.log_offset() == covered {
                    continue;
                }
                (store.clone(), kv.log_offset(), kv.snapshot_entries())
            };
            let leased = self.leased_snapshot_ids(&tb);
            let written = lock(&store).write(log_offset, &values, &|id| leased.contains(&id));
            match written {
                Ok(s) => {
                    tracing::debug!("{tb}: kv snapshot {} at log offset {}", s.id, s.log_offset)
                }
                Err(e) => tracing::warn!("{tb}: kv snapshot failed: {e}"),
            }
        }
    }

    /// Flushes everything to disk (clean shutdown).
    pub fn flush(&self) -> Result<()> {
        self.tablets.flush_all()
    }
}

/// Fluss accepts acks -1 (all), 0 and 1 only.
fn check_acks(acks: i32) -> Result<()> {
    if !(-1..=1).contains(&acks) {
        return Err(fluss(
            error_codes::INVALID_REQUIRED_ACKS,
            format!("Invalid required acks: {acks}"),
        ));
    }
    Ok(())
}
