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
    GetLatestKvSnapshotsRequest, ListDatabasesRequest, ListOffsetsRequest, ListTablesRequest,
    PbAddColumn, TableExistsRequest,
};
use crate::{Error, ErrorKind, Result};

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
