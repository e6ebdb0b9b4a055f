//! Coordinator handlers: databases, tables, partitions, metadata, writer ids and the
//! KV snapshots (the periodic ones of `kv.snapshot.interval`) and (always empty) lake
//! snapshots.

use riverlet::error::codes as error_codes;
use riverlet::metadata::TablePath;
use riverlet::proto::*;
use riverlet::remote::{log_partition_rel_dir, log_table_rel_dir};
use riverlet::Result;

use super::{fluss, lock, Server};
use crate::tablets::TableBucket;

impl Server {
    pub(super) fn create_database(
        &self,
        r: CreateDatabaseRequest,
    ) -> Result<CreateDatabaseResponse> {
        lock(&self.catalog).create_database(
            &r.database_name,
            r.database_json.as_deref(),
            r.ignore_if_exists,
        )?;
        Ok(CreateDatabaseResponse::default())
    }

    pub(super) fn drop_database(&self, r: DropDatabaseRequest) -> Result<DropDatabaseResponse> {
        if r.database_name == crate::catalog::DEFAULT_DATABASE {
            return Err(fluss(
                error_codes::UNKNOWN_SERVER_ERROR,
                format!(
                    "Cannot drop the default database '{}'. The default database is required for cluster operation.",
                    r.database_name
                ),
            ));
        }
        let dropped = lock(&self.catalog).drop_database(
            &r.database_name,
            r.ignore_if_not_exists,
            r.cascade,
        )?;
        for (id, table) in dropped {
            self.forget_dropped_table(&r.database_name, &table, id);
        }
        Ok(DropDatabaseResponse::default())
    }

    pub(super) fn list_databases(&self, _r: ListDatabasesRequest) -> Result<ListDatabasesResponse> {
        Ok(ListDatabasesResponse {
            database_name: lock(&self.catalog).databases(),
            ..Default::default()
        })
    }

    pub(super) fn database_exists(
        &self,
        r: DatabaseExistsRequest,
    ) -> Result<DatabaseExistsResponse> {
        Ok(DatabaseExistsResponse {
            exists: lock(&self.catalog).database(&r.database_name).is_ok(),
        })
    }

    pub(super) fn get_database_info(
        &self,
        r: GetDatabaseInfoRequest,
    ) -> Result<GetDatabaseInfoResponse> {
        let c = lock(&self.catalog);
        let d = c.database(&r.database_name)?;
        Ok(GetDatabaseInfoResponse {
            database_json: d.json.as_bytes().to_vec(),
            created_time: d.created,
            modified_time: d.modified,
        })
    }

    pub(super) fn create_table(&self, r: CreateTableRequest) -> Result<CreateTableResponse> {
        let p = r.table_path;
        let json = self.lake_table_json(r.table_json)?;
        let mut c = lock(&self.catalog);
        if let Some(meta) =
            c.create_table(&p.database_name, &p.table_name, &json, r.ignore_if_exists)?
        {
            if let Err(e) = self.create_lake_table(&meta) {
                let _ = c.drop_table(&p.database_name, &p.table_name, true);
                return Err(e);
            }
            if !meta.is_partitioned() {
                if let Err(e) = self.tablets.open_buckets(&meta, None) {
                    let _ = c.drop_table(&p.database_name, &p.table_name, true);
                    return Err(e);
                }
            }
        }
        Ok(CreateTableResponse::default())
    }

    /// Everything a dropped table leaves outside the catalog: its buckets, its remote log
    /// (removed in the background) and its lake tiering state.
    fn forget_dropped_table(&self, database: &str, table: &str, id: i64) {
        self.tablets.drop_buckets(id, None, true);
        self.remove_remote_log(log_table_rel_dir(database, table, id));
        #[cfg(feature = "lake")]
        if let Some(lake) = self.lake.get() {
            lake.forget(id);
        }
    }

    pub(super) fn drop_table(&self, r: DropTableRequest) -> Result<DropTableResponse> {
        let p = r.table_path;
        let id = lock(&self.catalog).drop_table(
            &p.database_name,
            &p.table_name,
            r.ignore_if_not_exists,
        )?;
        if let Some(id) = id {
            self.forget_dropped_table(&p.database_name, &p.table_name, id);
        }
        Ok(DropTableResponse::default())
    }

    pub(super) fn get_table_info(&self, r: GetTableInfoRequest) -> Result<GetTableInfoResponse> {
        let t = lock(&self.catalog).table(&r.table_path.database_name, &r.table_path.table_name)?;
        Ok(GetTableInfoResponse {
            table_id: t.entry.id,
            schema_id: t.entry.schema_id,
            table_json: self.table_info_json(&t),
            created_time: t.entry.created,
            modified_time: t.entry.modified,
            remote_data_dir: self.remote.as_ref().map(|r| r.uri().to_string()),
        })
    }

    pub(super) fn list_tables(&self, r: ListTablesRequest) -> Result<ListTablesResponse> {
        Ok(ListTablesResponse {
            table_name: lock(&self.catalog).list_tables(&r.database_name)?,
        })
    }

    pub(super) fn table_exists(&self, r: TableExistsRequest) -> Result<TableExistsResponse> {
        Ok(TableExistsResponse {
            exists: lock(&self.catalog)
                .table(&r.table_path.database_name, &r.table_path.table_name)
                .is_ok(),
        })
    }

    pub(super) fn get_table_schema(
        &self,
        r: GetTableSchemaRequest,
    ) -> Result<GetTableSchemaResponse> {
        let t = lock(&self.catalog).table(&r.table_path.database_name, &r.table_path.table_name)?;
        match r.schema_id {
            Some(id) if id != t.entry.schema_id => match t.entry.older_schemas.get(&id) {
                Some(json) => Ok(GetTableSchemaResponse {
                    schema_id: id,
                    schema_json: json.as_bytes().to_vec(),
                }),
                None => Err(fluss(
                    error_codes::SCHEMA_NOT_EXIST,
                    format!(
                        "Schema for table {} with schema id {id} does not exist.",
                        t.path()
                    ),
                )),
            },
            _ => Ok(GetTableSchemaResponse {
                schema_id: t.entry.schema_id,
                schema_json: t.descriptor.schema.to_json(),
            }),
        }
    }

    /// ALTER TABLE: ADD COLUMN (nullable, LAST) only; other changes are refused, naming them.
    /// A lake-enabled table's lake table is altered first (`Server::add_columns`).
    pub(super) fn alter_table(&self, r: AlterTableRequest) -> Result<AlterTableResponse> {
        let path = TablePath::new(&r.table_path.database_name, &r.table_path.table_name);
        let refuse = |what: &str| {
            Err(fluss(
                error_codes::INVALID_ALTER_TABLE_EXCEPTION,
                format!(
                    "ALTER TABLE {path}: {what} is not supported by the Riverlet embedded server \
                     (it supports ADD COLUMN, nullable, at the end)"
                ),
            ))
        };
        if !r.config_changes.is_empty() {
            return refuse("changing table properties");
        }
        if !r.drop_columns.is_empty() {
            return refuse("DROP COLUMN");
        }
        if !r.rename_columns.is_empty() {
            return refuse("RENAME COLUMN");
        }
        if !r.modify_columns.is_empty() {
            return refuse("MODIFY COLUMN");
        }
        if r.add_columns.is_empty() {
            return Ok(AlterTableResponse::default());
        }
        let mut columns = Vec::new();
        for c in &r.add_columns {
            if c.column_position_type != 0 {
                return Err(fluss(
                    error_codes::INVALID_ALTER_TABLE_EXCEPTION,
                    format!(
                        "ALTER TABLE {path}: column '{}' must be added at the end (LAST), got \
                         position type {}",
                        c.column_name, c.column_position_type
                    ),
                ));
            }
            if c.agg_function_type.is_some() {
                return refuse("an aggregation function on an added column");
            }
            let data_type = serde_json::from_slice::<serde_json::Value>(&c.data_type_json)
                .map_err(|e| e.to_string())
                .and_then(|v| {
                    riverlet::metadata::DataType::from_json_value(&v)
                        .map_err(|e| e.message().to_string())
                })
                .map_err(|e| {
                    fluss(
                        error_codes::INVALID_ALTER_TABLE_EXCEPTION,
                        format!(
                            "ALTER TABLE {path}: bad data type of column '{}': {e}",
                            c.column_name
                        ),
                    )
                })?;
            columns.push(riverlet::metadata::AddColumn {
                name: c.column_name.clone(),
                data_type,
                comment: c.comment.clone(),
            });
        }
        let done = self.add_columns(&path, &columns, r.ignore_if_not_exists)?;
        if let Some(t) = done {
            tracing::info!(
                "{}: schema id {} adds {} column(s)",
                t.path(),
                t.entry.schema_id,
                columns.len()
            );
        }
        Ok(AlterTableResponse::default())
    }

    pub(super) fn list_partitions(
        &self,
        r: ListPartitionInfosRequest,
    ) -> Result<ListPartitionInfosResponse> {
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
                    remote_data_dir: self.remote.as_ref().map(|r| r.uri().to_string()),
                })
                .collect(),
        })
    }

    pub(super) fn create_partition(
        &self,
        r: CreatePartitionRequest,
    ) -> Result<CreatePartitionResponse> {
        let mut c = lock(&self.catalog);
        let t = c.table(&r.table_path.database_name, &r.table_path.table_name)?;
        let spec = spec_pairs(r.partition_spec);
        // Fluss names the flag ignore_if_not_exists but uses it as "ignore if exists".
        if let Some(p) = c.create_partition(&t, &spec, r.ignore_if_not_exists)? {
            self.tablets.open_buckets(&t, Some(p.id))?;
        }
        Ok(CreatePartitionResponse::default())
    }

    pub(super) fn drop_partition(&self, r: DropPartitionRequest) -> Result<DropPartitionResponse> {
        let mut c = lock(&self.catalog);
        let t = c.table(&r.table_path.database_name, &r.table_path.table_name)?;
        let spec = spec_pairs(r.partition_spec);
        if let Some((id, name)) = c.drop_partition(&t, &spec, r.ignore_if_not_exists)? {
            self.tablets.drop_buckets(t.entry.id, Some(id), false);
            self.remove_remote_log(log_partition_rel_dir(
                &t.entry.database,
                &t.entry.name,
                t.entry.id,
                (&name, id),
            ));
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

    pub(super) fn get_metadata(&self, r: MetadataRequest) -> Result<MetadataResponse> {
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
                remote_data_dir: self.remote.as_ref().map(|r| r.uri().to_string()),
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

    pub(super) fn init_writer(&self, _r: InitWriterRequest) -> Result<InitWriterResponse> {
        Ok(InitWriterResponse {
            writer_id: lock(&self.catalog).next_writer_id()?,
        })
    }

    pub(super) fn latest_kv_snapshots(
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
        let table_id = t.entry.id;
        let buckets = t.buckets;
        drop(c);
        let latest_snapshots = (0..buckets)
            .map(|b| {
                let tb = TableBucket {
                    table_id,
                    partition_id,
                    bucket: b,
                };
                let latest = self.snapshot_store(&tb)?.and_then(|s| lock(&s).latest());
                Ok(PbKvSnapshot {
                    bucket_id: b,
                    snapshot_id: latest.map(|s| s.id),
                    log_offset: latest.map(|s| s.log_offset),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(GetLatestKvSnapshotsResponse {
            table_id,
            partition_id,
            latest_snapshots,
        })
    }

    pub(super) fn snapshot_store(
        &self,
        tb: &TableBucket,
    ) -> Result<Option<std::sync::Arc<std::sync::Mutex<crate::kv_snapshots::KvSnapshotStore>>>>
    {
        let bucket = self.tablets.get(tb)?;
        let g = super::read_bucket(&bucket);
        Ok(g.snapshots.clone())
    }

    pub(super) fn kv_snapshot_metadata(
        &self,
        r: GetKvSnapshotMetadataRequest,
    ) -> Result<GetKvSnapshotMetadataResponse> {
        let tb = TableBucket {
            table_id: r.table_id,
            partition_id: r.partition_id,
            bucket: r.bucket_id,
        };
        let found = self
            .tablets
            .get(&tb)
            .ok()
            .and_then(|b| super::read_bucket(&b).snapshots.clone())
            .and_then(|s| lock(&s).get(r.snapshot_id));
        let Some((snapshot, files)) = found else {
            return Err(fluss(
                error_codes::KV_SNAPSHOT_NOT_EXIST,
                format!(
                    "Failed to get kv snapshot metadata for table bucket {tb} and snapshot id {}. Error: Kv snapshot not found",
                    r.snapshot_id
                ),
            ));
        };
        Ok(GetKvSnapshotMetadataResponse {
            log_offset: snapshot.log_offset,
            snapshot_files: files
                .into_iter()
                .map(|f| PbRemotePathAndLocalFile {
                    remote_path: f.remote_path,
                    local_file_name: f.local_file_name,
                })
                .collect(),
        })
    }

    pub(super) fn lake_snapshot(
        &self,
        r: GetLakeSnapshotRequest,
    ) -> Result<GetLakeSnapshotResponse> {
        let t = lock(&self.catalog).table(&r.table_path.database_name, &r.table_path.table_name)?;
        #[cfg(feature = "lake")]
        if let Some(s) = self
            .lake
            .get()
            .and_then(|l| l.snapshot(t.entry.id, r.snapshot_id))
        {
            return Ok(GetLakeSnapshotResponse {
                table_id: t.entry.id,
                snapshot_id: s.snapshot_id,
                bucket_snapshots: s
                    .offsets
                    .iter()
                    .map(|((partition_id, bucket), off)| PbLakeSnapshotForBucket {
                        partition_id: *partition_id,
                        bucket_id: *bucket,
                        log_offset: Some(*off),
                        partition_name: None,
                    })
                    .collect(),
            });
        }
        Err(fluss(
            error_codes::LAKE_SNAPSHOT_NOT_EXIST,
            format!(
                "Lake table snapshot doesn't exist for table: {}, table id: {}",
                t.path(),
                t.entry.id
            ),
        ))
    }
}

/// A partition spec as (key, value) pairs, as the catalog takes it.
fn spec_pairs(spec: PbPartitionSpec) -> Vec<(String, String)> {
    spec.partition_key_values
        .into_iter()
        .map(|kv| (kv.key, kv.value))
        .collect()
}
