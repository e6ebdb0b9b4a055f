//! [`Admin`]: databases, tables, partitions and offsets.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::compat;
use super::connection::name_table;
use super::Connection;
use crate::error::codes;
use crate::metadata::{AddColumn, PartitionSpec, TableDescriptor, TableInfo, TablePath};
use crate::proto::{
    AlterTableRequest, CreateDatabaseRequest, CreatePartitionRequest, CreateTableRequest,
    DatabaseExistsRequest, DropDatabaseRequest, DropPartitionRequest, DropTableRequest,
    GetLakeSnapshotRequest, GetLatestKvSnapshotsRequest, ListDatabasesRequest, ListOffsetsRequest,
    ListTablesRequest, PbAddColumn, TableExistsRequest,
};
use crate::{Error, ErrorKind, Result};

mod cluster;
pub use cluster::{
    ClusterHealth, ConfigChange, ConfigEntry, DatabaseInfo, KvSnapshotEntry, RemoteLogManifest,
};

/// One partition of a partitioned table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionInfo {
    /// The server-assigned partition id.
    pub partition_id: i64,
    /// Partition key = value pairs, in partition-key order.
    pub spec: PartitionSpec,
    /// Fluss's partition name: the values joined by `$`.
    pub name: String,
}

/// The latest KV snapshot of one bucket of a primary-key table (GetLatestKvSnapshots).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketKvSnapshot {
    /// The bucket.
    pub bucket: i32,
    /// The snapshot id, `None` while the bucket has no snapshot.
    pub snapshot_id: Option<i64>,
    /// The log offset the snapshot covers (changes before it are in it).
    pub log_offset: Option<i64>,
}

/// A lake snapshot of a lake-enabled table (GetLakeSnapshot): the lake holds every record of
/// each bucket before its `log_offset`, so a union read continues each bucket's Fluss log
/// from there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LakeSnapshot {
    /// The table id the snapshot was committed for.
    pub table_id: i64,
    /// The lake's snapshot id (for Iceberg, the Iceberg snapshot id).
    pub snapshot_id: i64,
    /// Per bucket, sorted by (partition id, bucket).
    pub buckets: Vec<BucketLakeOffset>,
}

/// One bucket of a [`LakeSnapshot`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketLakeOffset {
    /// The partition id (partitioned tables).
    pub partition_id: Option<i64>,
    /// The bucket.
    pub bucket: i32,
    /// The log offset the lake holds this bucket's records before (`None`: nothing tiered
    /// yet, read the bucket from its start).
    pub log_offset: Option<i64>,
}

impl LakeSnapshot {
    /// The log offset a union read starts `bucket` (of `partition_id`) from: the recorded one,
    /// or 0 when the snapshot has none for it.
    pub fn start_offset(&self, partition_id: Option<i64>, bucket: i32) -> i64 {
        self.buckets
            .iter()
            .find(|b| b.partition_id == partition_id && b.bucket == bucket)
            .and_then(|b| b.log_offset)
            .unwrap_or(0)
    }
}

/// Which offset [`Admin::list_offsets`] asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetSpec {
    /// The log start offset.
    Earliest,
    /// The high watermark.
    Latest,
    /// The base offset of the first batch committed at or after this epoch-ms timestamp.
    Timestamp(i64),
}

impl OffsetSpec {
    fn wire(self) -> (i32, Option<i64>) {
        match self {
            OffsetSpec::Earliest => (0, None),
            OffsetSpec::Latest => (1, None),
            OffsetSpec::Timestamp(t) => (2, Some(t)),
        }
    }
}

/// Cluster administration over a [`Connection`].
#[derive(Debug, Clone)]
pub struct Admin {
    conn: Connection,
}

impl Admin {
    pub(crate) fn new(conn: Connection) -> Self {
        Admin { conn }
    }

    /// The connection this admin uses.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Creates a database.
    pub async fn create_database(&self, name: &str, ignore_if_exists: bool) -> Result<()> {
        check_name("database", name)?;
        let req = CreateDatabaseRequest {
            database_name: name.to_string(),
            ignore_if_exists,
            database_json: Some(br#"{"version":1,"custom_properties":{}}"#.to_vec()),
        };
        self.conn
            .request_coordinator(&req, false)
            .await
            .map_err(|e| name_database(e, name))?;
        Ok(())
    }

    /// Drops a database; `cascade` drops its tables too.
    pub async fn drop_database(
        &self,
        name: &str,
        ignore_if_not_exists: bool,
        cascade: bool,
    ) -> Result<()> {
        let req = DropDatabaseRequest {
            database_name: name.to_string(),
            ignore_if_not_exists,
            cascade,
        };
        self.conn
            .request_coordinator(&req, false)
            .await
            .map_err(|e| name_database(e, name))?;
        Ok(())
    }

    /// The names of all databases.
    pub async fn list_databases(&self) -> Result<Vec<String>> {
        let resp = self
            .conn
            .request_any_retrying(&ListDatabasesRequest::default())
            .await?;
        Ok(resp.database_name)
    }

    /// Whether a database exists.
    pub async fn database_exists(&self, name: &str) -> Result<bool> {
        let req = DatabaseExistsRequest {
            database_name: name.to_string(),
        };
        Ok(self.conn.request_any_retrying(&req).await?.exists)
    }

    /// Creates a table from a descriptor (schema, primary key, partition keys, buckets,
    /// bucket keys, properties).
    pub async fn create_table(
        &self,
        path: &TablePath,
        descriptor: &TableDescriptor,
        ignore_if_exists: bool,
    ) -> Result<()> {
        check_name("table", &path.table)?;
        let req = CreateTableRequest {
            table_path: crate::proto::PbTablePath::from(path),
            table_json: descriptor.to_json(),
            ignore_if_exists,
        };
        self.conn.forget_table(path);
        self.conn
            .request_coordinator(&req, false)
            .await
            .map_err(|e| name_table(e, path))?;
        Ok(())
    }

    /// Drops a table.
    pub async fn drop_table(&self, path: &TablePath, ignore_if_not_exists: bool) -> Result<()> {
        let req = DropTableRequest {
            table_path: crate::proto::PbTablePath::from(path),
            ignore_if_not_exists,
        };
        let r = self.conn.request_coordinator(&req, false).await;
        self.conn.forget_table(path);
        r.map_err(|e| name_table(e, path))?;
        Ok(())
    }

    /// The table names of a database.
    pub async fn list_tables(&self, database: &str) -> Result<Vec<String>> {
        let req = ListTablesRequest {
            database_name: database.to_string(),
        };
        let resp = self
            .conn
            .request_any_retrying(&req)
            .await
            .map_err(|e| name_database(e, database))?;
        Ok(resp.table_name)
    }

    /// The table's current info, fetched from the server (and stored in the connection's cache).
    pub async fn table_info(&self, path: &TablePath) -> Result<Arc<TableInfo>> {
        self.conn.table_info_refresh(path, true).await
    }

    /// `ALTER TABLE path ADD COLUMN ...` (Fluss's AlterTable): appends nullable columns; the
    /// table gets a new schema id. Rows written before read the new columns as null; writers
    /// and readers opened after this call use the new schema. An added column must be new and
    /// nullable (InvalidArgument naming it).
    pub async fn add_columns(&self, path: &TablePath, columns: &[AddColumn]) -> Result<()> {
        let info = self.conn.table_info_refresh(path, true).await?;
        // The rule is checked here too, so a bad column gets the same message on any server.
        info.schema().with_added_columns(columns)?;
        let req = AlterTableRequest {
            table_path: crate::proto::PbTablePath::from(path),
            ignore_if_not_exists: false,
            add_columns: columns
                .iter()
                .map(|c| PbAddColumn {
                    column_name: c.name.clone(),
                    data_type_json: c.data_type.to_json_value().to_string().into_bytes(),
                    comment: c.comment.clone(),
                    // LAST
                    column_position_type: 0,
                    agg_function_type: None,
                    agg_function_params: vec![],
                })
                .collect(),
            ..Default::default()
        };
        self.conn
            .request_coordinator(&req, false)
            .await
            .map_err(|e| name_table(e, path))?;
        self.conn.table_info_refresh(path, true).await?;
        Ok(())
    }

    /// Whether a table exists.
    pub async fn table_exists(&self, path: &TablePath) -> Result<bool> {
        let req = TableExistsRequest {
            table_path: crate::proto::PbTablePath::from(path),
        };
        match self.conn.request_any_retrying(&req).await {
            Ok(r) => Ok(r.exists),
            Err(e) if e.fluss_code() == Some(codes::DATABASE_NOT_EXIST) => Ok(false),
            Err(e) => Err(name_table(e, path)),
        }
    }

    /// The partitions of a partitioned table.
    pub async fn list_partitions(&self, path: &TablePath) -> Result<Vec<PartitionInfo>> {
        self.conn.partitions(path).await
    }

    /// Creates a partition.
    pub async fn create_partition(
        &self,
        path: &TablePath,
        spec: &PartitionSpec,
        ignore_if_exists: bool,
    ) -> Result<()> {
        let req = CreatePartitionRequest {
            table_path: crate::proto::PbTablePath::from(path),
            partition_spec: compat::spec_to_pb(spec),
            ignore_if_not_exists: ignore_if_exists,
        };
        self.conn
            .request_coordinator(&req, false)
            .await
            .map_err(|e| name_table(e, path))?;
        Ok(())
    }

    /// Drops a partition.
    pub async fn drop_partition(
        &self,
        path: &TablePath,
        spec: &PartitionSpec,
        ignore_if_not_exists: bool,
    ) -> Result<()> {
        let req = DropPartitionRequest {
            table_path: crate::proto::PbTablePath::from(path),
            partition_spec: compat::spec_to_pb(spec),
            ignore_if_not_exists,
        };
        self.conn
            .request_coordinator(&req, false)
            .await
            .map_err(|e| name_table(e, path))?;
        Ok(())
    }

    /// The latest KV snapshot of every bucket of a primary-key table, or of one of its
    /// partitions (by partition name), in bucket order.
    pub async fn latest_kv_snapshots(
        &self,
        path: &TablePath,
        partition: Option<&str>,
    ) -> Result<Vec<BucketKvSnapshot>> {
        let req = GetLatestKvSnapshotsRequest {
            table_path: crate::proto::PbTablePath::from(path),
            partition_name: partition.map(str::to_string),
        };
        let resp = self
            .conn
            .request_coordinator(&req, true)
            .await
            .map_err(|e| name_table(e, path))?;
        let mut out: Vec<BucketKvSnapshot> = resp
            .latest_snapshots
            .into_iter()
            .map(|s| BucketKvSnapshot {
                bucket: s.bucket_id,
                snapshot_id: s.snapshot_id,
                log_offset: s.log_offset,
            })
            .collect();
        out.sort_by_key(|s| s.bucket);
        Ok(out)
    }

    /// The latest lake snapshot of a lake-enabled table, or the one with `snapshot_id`
    /// (GetLakeSnapshot). A table without one is a `NotFound` error (Fluss's
    /// LakeTableSnapshotNotExistException).
    pub async fn lake_snapshot(
        &self,
        path: &TablePath,
        snapshot_id: Option<i64>,
    ) -> Result<LakeSnapshot> {
        self.get_lake_snapshot(path, snapshot_id, None).await
    }

    /// The latest READABLE lake snapshot of a lake-enabled table (Fluss's
    /// `getReadableLakeSnapshot`, which its union reads use): for a Paimon table with deletion
    /// vectors the latest compacted snapshot and the offsets its readers see; otherwise the
    /// latest one. A table without one is a `NotFound` error.
    pub async fn readable_lake_snapshot(&self, path: &TablePath) -> Result<LakeSnapshot> {
        self.get_lake_snapshot(path, None, Some(true)).await
    }

    /// [`Admin::lake_snapshot`] (`readable` false) or [`Admin::readable_lake_snapshot`]
    /// (`readable` true, no `snapshot_id`), with None where the table has no such snapshot
    /// (Fluss's LAKE_SNAPSHOT_NOT_EXIST; a missing table stays an error).
    pub async fn find_lake_snapshot(
        &self,
        path: &TablePath,
        snapshot_id: Option<i64>,
        readable: bool,
    ) -> Result<Option<LakeSnapshot>> {
        if readable && snapshot_id.is_some() {
            crate::bail_invalid!(
                "lake snapshot of table '{path}': ask for the readable snapshot or for snapshot \
                 {} by id, not both",
                snapshot_id.unwrap_or_default()
            );
        }
        let found = if readable {
            self.readable_lake_snapshot(path).await
        } else {
            self.lake_snapshot(path, snapshot_id).await
        };
        match found {
            Ok(s) => Ok(Some(s)),
            Err(e) if e.fluss_code() == Some(codes::LAKE_SNAPSHOT_NOT_EXIST) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn get_lake_snapshot(
        &self,
        path: &TablePath,
        snapshot_id: Option<i64>,
        readable: Option<bool>,
    ) -> Result<LakeSnapshot> {
        let req = GetLakeSnapshotRequest {
            table_path: crate::proto::PbTablePath::from(path),
            snapshot_id,
            readable,
        };
        let resp = self
            .conn
            .request_coordinator(&req, true)
            .await
            .map_err(|e| name_table(e, path))?;
        let mut buckets: Vec<BucketLakeOffset> = resp
            .bucket_snapshots
            .into_iter()
            .map(|b| BucketLakeOffset {
                partition_id: b.partition_id,
                bucket: b.bucket_id,
                log_offset: b.log_offset,
            })
            .collect();
        buckets.sort_by_key(|b| (b.partition_id, b.bucket));
        Ok(LakeSnapshot {
            table_id: resp.table_id,
            snapshot_id: resp.snapshot_id,
            buckets,
        })
    }

    /// Adds ACL bindings (Fluss's `Admin.createAcls`; the server needs `authorizer.enabled`).
    /// The caller needs `ALTER` on each binding's resource (a table's: its database). A binding
    /// the server refuses fails the call with the server's error, naming the binding; the
    /// others may have been added.
    pub async fn create_acls(&self, bindings: &[crate::acl::AclBinding]) -> Result<()> {
        for b in bindings {
            b.validate()?;
        }
        let req = crate::proto::CreateAclsRequest {
            acl: bindings.iter().map(|b| b.to_proto()).collect(),
        };
        let resp = self.conn.request_coordinator(&req, false).await?;
        for r in resp.acl_res {
            if let Some(code) = r.error_code.filter(|c| *c != codes::NONE) {
                let b = crate::acl::AclBinding::from_proto(&r.acl)?;
                return Err(Error::from_fluss(code, r.error_message.unwrap_or_default())
                    .context(format!("creating ACL {b}")));
            }
        }
        Ok(())
    }

    /// The ACL bindings matching `filter`, on the resources the caller may `DESCRIBE`
    /// (Fluss's `Admin.listAcls`).
    pub async fn list_acls(
        &self,
        filter: &crate::acl::AclFilter,
    ) -> Result<Vec<crate::acl::AclBinding>> {
        let req = crate::proto::ListAclsRequest {
            acl_filter: filter.to_proto(),
        };
        let resp = self.conn.request_coordinator(&req, true).await?;
        resp.acl
            .iter()
            .map(crate::acl::AclBinding::from_proto)
            .collect()
    }

    /// Removes every ACL binding matching any of `filters` and returns the removed bindings
    /// (Fluss's `Admin.dropAcls`). The caller needs `ALTER` on each matched resource (a
    /// table's: its database).
    pub async fn drop_acls(
        &self,
        filters: &[crate::acl::AclFilter],
    ) -> Result<Vec<crate::acl::AclBinding>> {
        let req = crate::proto::DropAclsRequest {
            acl_filter: filters.iter().map(|f| f.to_proto()).collect(),
        };
        let resp = self.conn.request_coordinator(&req, false).await?;
        let mut removed = Vec::new();
        for r in resp.filter_results {
            if let Some(code) = r.error_code.filter(|c| *c != codes::NONE) {
                return Err(Error::from_fluss(code, r.error_message.unwrap_or_default()));
            }
            for m in r.matching_acls {
                let b = crate::acl::AclBinding::from_proto(&m.acl)?;
                if let Some(code) = m.error_code.filter(|c| *c != codes::NONE) {
                    return Err(Error::from_fluss(code, m.error_message.unwrap_or_default())
                        .context(format!("dropping ACL {b}")));
                }
                if !removed.contains(&b) {
                    removed.push(b);
                }
            }
        }
        Ok(removed)
    }

    /// Offsets of the given buckets (all buckets when `buckets` is empty) of a table or of one of
    /// its partitions (by partition name), keyed by bucket id.
    pub async fn list_offsets(
        &self,
        path: &TablePath,
        partition: Option<&str>,
        buckets: &[i32],
        spec: OffsetSpec,
    ) -> Result<BTreeMap<i32, i64>> {
        let info = self.conn.table_info(path).await?;
        let partition_id = match partition {
            None => {
                if !info.descriptor.partition_keys.is_empty() {
                    crate::bail_invalid!(
                        "table '{path}' is partitioned by {:?}: name a partition to list offsets",
                        info.descriptor.partition_keys
                    );
                }
                None
            }
            Some(name) => Some(self.conn.partition_id(path, name).await?.ok_or_else(|| {
                Error::from_fluss(
                    codes::PARTITION_NOT_EXISTS,
                    format!("partition '{name}' of table '{path}' does not exist"),
                )
            })?),
        };
        let bucket_count = info.num_buckets();
        if let Some(b) = buckets.iter().find(|b| !(0..bucket_count).contains(*b)) {
            crate::bail_invalid!(
                "table '{path}' has no bucket {b}: its buckets are 0..{}",
                bucket_count - 1
            );
        }
        let all: Vec<i32>;
        let buckets = if buckets.is_empty() {
            all = (0..bucket_count).collect();
            &all[..]
        } else {
            buckets
        };
        self.list_offsets_by_id(info.table_id, partition_id, buckets, spec)
            .await
            .map_err(|e| name_table(e, path))
    }

    /// [`Admin::list_offsets`] by table and partition id (the table must have been opened
    /// through this connection).
    pub async fn list_offsets_by_id(
        &self,
        table_id: i64,
        partition_id: Option<i64>,
        buckets: &[i32],
        spec: OffsetSpec,
    ) -> Result<BTreeMap<i32, i64>> {
        let (offset_type, start_timestamp) = spec.wire();
        let mut out = BTreeMap::new();
        let mut pending: Vec<i32> = buckets.to_vec();
        let mut attempt = 0u32;
        loop {
            // Group the buckets by their leader's address.
            let mut by_leader: HashMap<String, Vec<i32>> = HashMap::new();
            let mut failed: Option<Error> = None;
            for b in &pending {
                match self.conn.leader_node(table_id, partition_id, *b).await {
                    Ok(node) => by_leader.entry(node.address).or_default().push(*b),
                    Err(e) => failed = Some(e),
                }
            }
            let mut retry: Vec<i32> = Vec::new();
            let mut last_err = failed;
            if last_err.is_some() {
                retry.extend(
                    pending
                        .iter()
                        .filter(|b| !by_leader.values().any(|v| v.contains(b))),
                );
            }
            for (address, bs) in by_leader {
                let req = ListOffsetsRequest {
                    follower_server_id: -1,
                    offset_type,
                    table_id,
                    partition_id,
                    bucket_id: bs.clone(),
                    start_timestamp,
                };
                let resp = match self.conn.server(&address).await {
                    Ok(c) => c.request(&req).await,
                    Err(e) => Err(e),
                };
                match resp {
                    Ok(resp) => {
                        for r in resp.buckets_resp {
                            match r.error_code.filter(|c| *c != codes::NONE) {
                                None => {
                                    out.insert(r.bucket_id, r.offset.unwrap_or(-1));
                                }
                                Some(code) => {
                                    let e = Error::from_fluss(
                                        code,
                                        r.error_message.unwrap_or_default(),
                                    );
                                    if e.is_retriable() {
                                        retry.push(r.bucket_id);
                                        last_err = Some(e);
                                    } else {
                                        return Err(e.context(format!("bucket {}", r.bucket_id)));
                                    }
                                }
                            }
                        }
                    }
                    Err(e) if e.is_retriable() => {
                        retry.extend(bs);
                        last_err = Some(e);
                    }
                    Err(e) => return Err(e),
                }
            }
            if retry.is_empty() {
                return Ok(out);
            }
            if attempt >= self.conn.config().retries {
                return Err(last_err.unwrap_or_else(|| Error::network("list offsets failed")));
            }
            self.conn.invalidate_table(table_id);
            tokio::time::sleep(self.conn.backoff().delay(attempt)).await;
            attempt += 1;
            pending = retry;
        }
    }
}

/// Fluss's name rules, checked before a request is sent (as Fluss's own admin client does).
fn check_name(what: &str, name: &str) -> Result<()> {
    if what == "database" {
        crate::metadata::validate_database_name(name)
    } else {
        crate::metadata::validate_table_name(name)
    }
}

fn name_database(e: Error, name: &str) -> Error {
    if e.message().contains(name) || e.kind() == ErrorKind::Closed {
        e
    } else {
        e.context(format!("database '{name}'"))
    }
}

/// A bucket of a producer's registered offsets (Fluss's `TableBucket`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProducerBucket {
    /// Table id.
    pub table_id: i64,
    /// Partition id (partitioned tables).
    pub partition_id: Option<i64>,
    /// Bucket id.
    pub bucket: i32,
}

/// What `register_producer_offsets` did (Fluss's `RegisterResult`, wire codes 0 and 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegisterResult {
    /// The offsets were registered.
    Created,
    /// An unexpired registration of the producer exists; it was kept unchanged.
    AlreadyExists,
}

/// A producer's registered offsets (Fluss's `ProducerOffsetsResult`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerOffsets {
    /// The producer id (Fluss's Flink sink uses the job id).
    pub producer_id: String,
    /// When the registration expires, in milliseconds since the epoch.
    pub expiration_time_ms: i64,
    /// Offset of each bucket (the log end offset the producer's recovery starts from).
    pub offsets: BTreeMap<ProducerBucket, i64>,
}

/// Fluss's reason why `id` cannot be a producer id (the table name rule: ASCII
/// alphanumerics, `_` and `-`, at most 200 characters), or None when it is valid.
pub fn invalid_producer_id(id: &str) -> Option<String> {
    crate::metadata::table::detect_invalid_name(id)
        .map(|why| format!("Invalid producer ID '{id}': {why}"))
}

/// `offsets` grouped by table, as RegisterProducerOffsets and GetProducerOffsets carry them.
pub fn producer_offsets_to_proto(
    offsets: &BTreeMap<ProducerBucket, i64>,
) -> Vec<crate::proto::PbProducerTableOffsets> {
    let mut out: Vec<crate::proto::PbProducerTableOffsets> = Vec::new();
    for (b, &offset) in offsets {
        let entry = crate::proto::PbBucketOffset {
            partition_id: b.partition_id,
            bucket_id: b.bucket,
            log_end_offset: Some(offset),
        };
        match out.last_mut() {
            Some(t) if t.table_id == b.table_id => t.bucket_offsets.push(entry),
            _ => out.push(crate::proto::PbProducerTableOffsets {
                table_id: b.table_id,
                bucket_offsets: vec![entry],
            }),
        }
    }
    out
}

/// The offsets of `tables`; a bucket without `log_end_offset` is an error naming it.
pub fn producer_offsets_from_proto(
    tables: &[crate::proto::PbProducerTableOffsets],
) -> Result<BTreeMap<ProducerBucket, i64>> {
    let mut out = BTreeMap::new();
    for t in tables {
        for b in &t.bucket_offsets {
            let bucket = ProducerBucket {
                table_id: t.table_id,
                partition_id: b.partition_id,
                bucket: b.bucket_id,
            };
            let offset = b.log_end_offset.ok_or_else(|| {
                Error::invalid(format!(
                    "producer offset of {bucket:?} has no log_end_offset"
                ))
            })?;
            out.insert(bucket, offset);
        }
    }
    Ok(out)
}

/// Producer offsets (Fluss's `Admin.registerProducerOffsets` / `getProducerOffsets` /
/// `deleteProducerOffsets`): where a producer's undo recovery starts, kept by the coordinator
/// until deleted or expired.
impl Admin {
    /// Registers `offsets` for `producer_id` unless an unexpired registration exists
    /// ([`RegisterResult::AlreadyExists`], the existing one kept). `ttl`: how long it is
    /// kept (None: the server's `coordinator.producer-offsets.ttl`, 24 h by default).
    pub async fn register_producer_offsets(
        &self,
        producer_id: &str,
        offsets: &BTreeMap<ProducerBucket, i64>,
        ttl: Option<std::time::Duration>,
    ) -> Result<RegisterResult> {
        let ttl_ms =
            match ttl {
                Some(t) => Some(i64::try_from(t.as_millis()).map_err(|_| {
                    Error::invalid(format!("producer offsets TTL {t:?} is too long"))
                })?),
                None => None,
            };
        let req = crate::proto::RegisterProducerOffsetsRequest {
            producer_id: producer_id.to_string(),
            table_offsets: producer_offsets_to_proto(offsets),
            ttl_ms,
        };
        let resp = self
            .conn
            .request_coordinator(&req, false)
            .await
            .map_err(|e| name_producer(e, producer_id))?;
        match resp.result {
            Some(0) => Ok(RegisterResult::Created),
            Some(1) => Ok(RegisterResult::AlreadyExists),
            other => Err(Error::corrupt(format!(
                "RegisterProducerOffsets of producer '{producer_id}' answered result {other:?} \
                 (expected 0 CREATED or 1 ALREADY_EXISTS)"
            ))),
        }
    }

    /// The offsets registered for `producer_id`, or None when it has none. With ACLs, the
    /// tables the caller may not READ are left out.
    pub async fn get_producer_offsets(&self, producer_id: &str) -> Result<Option<ProducerOffsets>> {
        let req = crate::proto::GetProducerOffsetsRequest {
            producer_id: producer_id.to_string(),
        };
        let resp = self
            .conn
            .request_coordinator(&req, true)
            .await
            .map_err(|e| name_producer(e, producer_id))?;
        let Some(id) = resp.producer_id else {
            return Ok(None);
        };
        Ok(Some(ProducerOffsets {
            producer_id: id,
            expiration_time_ms: resp.expiration_time.unwrap_or(0),
            offsets: producer_offsets_from_proto(&resp.table_offsets)
                .map_err(|e| name_producer(e, producer_id))?,
        }))
    }

    /// Deletes the offsets registered for `producer_id` (none registered: nothing to do).
    pub async fn delete_producer_offsets(&self, producer_id: &str) -> Result<()> {
        let req = crate::proto::DeleteProducerOffsetsRequest {
            producer_id: producer_id.to_string(),
        };
        self.conn
            .request_coordinator(&req, true)
            .await
            .map_err(|e| name_producer(e, producer_id))?;
        Ok(())
    }
}

fn name_producer(e: Error, producer_id: &str) -> Error {
    if e.message().contains(producer_id) || e.kind() == ErrorKind::Closed {
        e
    } else {
        e.context(format!("producer '{producer_id}'"))
    }
}
