//! The catalog: databases, tables (ids, schema ids, Fluss TableDescriptor JSON) and partitions,
//! persisted as one JSON document `catalog.json` in the data directory (atomic replace: temp
//! file + fsync + rename + directory fsync) and reloaded on start.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use riverlet::error::codes;
use riverlet::metadata::table::{keys, DeleteBehavior, KvFormat, LogFormat, MergeEngine};
use riverlet::metadata::{DataType, TableDescriptor};
use riverlet::record::arrow_payload::ArrowCompression;
use riverlet::scan::time::now_millis as now_ms;
use riverlet::{Error, Result};
use serde::{Deserialize, Serialize};

/// Fluss's default database, created on first start.
pub const DEFAULT_DATABASE: &str = "fluss";

fn fluss(code: i32, msg: impl Into<String>) -> Error {
    Error::from_fluss(code, msg)
}

/// A persisted database.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DatabaseEntry {
    /// Fluss DatabaseDescriptor JSON.
    pub json: String,
    /// Creation time (epoch ms).
    pub created: i64,
    /// Last modification (epoch ms).
    pub modified: i64,
}

/// A persisted partition.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartitionEntry {
    /// Partition id.
    pub id: i64,
    /// Partition name (values joined by `$`).
    pub name: String,
    /// Ordered key = value pairs.
    pub spec: Vec<(String, String)>,
}

/// A persisted table.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TableEntry {
    /// Table id.
    pub id: i64,
    /// Database name.
    pub database: String,
    /// Table name.
    pub name: String,
    /// Latest schema id.
    pub schema_id: i32,
    /// TableDescriptor JSON as stored (with server defaults applied).
    pub table_json: String,
    /// Creation time.
    pub created: i64,
    /// Last modification.
    pub modified: i64,
    /// Partitions by id.
    #[serde(default)]
    pub partitions: BTreeMap<i64, PartitionEntry>,
    /// Schema JSON of every earlier schema id (ALTER TABLE ... ADD COLUMN); data written
    /// under them is read with them.
    #[serde(default)]
    pub older_schemas: BTreeMap<i32, String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    next_table_id: i64,
    next_partition_id: i64,
    next_writer_id: i64,
    databases: BTreeMap<String, DatabaseEntry>,
    tables: BTreeMap<i64, TableEntry>,
}

/// Parsed, derived facts of a table that the tablets need.
#[derive(Debug)]
pub struct TableMeta {
    /// The persisted entry.
    pub entry: TableEntry,
    /// Its parsed descriptor.
    pub descriptor: TableDescriptor,
    /// Column types in order.
    pub types: Vec<DataType>,
    /// Arrow schema of the row type.
    pub arrow_schema: arrow_schema::SchemaRef,
    /// Primary-key column indexes (empty for log tables).
    pub pk_indexes: Vec<usize>,
    /// Bucket count.
    pub buckets: i32,
    /// Partition key names.
    pub partition_keys: Vec<String>,
    /// Merge engine of a PK table (None: the last write wins, with partial updates).
    pub merge_engine: Option<MergeEngine>,
    /// Index of the version column of the versioned merge engine.
    pub version_column: Option<usize>,
    /// The per-column fold of the aggregation merge engine.
    pub aggregation: Option<crate::aggregate::Aggregation>,
    /// What a delete does on a PK table.
    pub delete_behavior: DeleteBehavior,
    /// Index of the auto-increment column (see [`crate::autoinc`]).
    pub auto_increment: Option<usize>,
    /// `table.kv.format` is INDEXED (else COMPACTED).
    pub kv_indexed: bool,
    /// `table.log.format`.
    pub log_format: LogFormat,
    /// Arrow compression for server-built batches.
    pub compression: ArrowCompression,
    /// table.log.ttl in ms (<= 0: keep forever).
    pub ttl_ms: i64,
    /// Column types and Arrow schema of every earlier schema id.
    pub older: BTreeMap<i32, (Vec<DataType>, arrow_schema::SchemaRef)>,
}

impl TableMeta {
    /// Whether the table has a primary key.
    pub fn is_pk(&self) -> bool {
        !self.pk_indexes.is_empty()
    }
    /// Whether the table is partitioned.
    pub fn is_partitioned(&self) -> bool {
        !self.partition_keys.is_empty()
    }
    /// The column types of schema `id` (the latest or an earlier one).
    pub fn types_of(&self, id: i32) -> Result<&[DataType]> {
        if id == self.entry.schema_id {
            return Ok(&self.types);
        }
        self.older
            .get(&id)
            .map(|(t, _)| t.as_slice())
            .ok_or_else(|| {
                fluss(
                    codes::SCHEMA_NOT_EXIST,
                    format!(
                        "Schema for table {} with schema id {id} does not exist.",
                        self.path()
                    ),
                )
            })
    }

    /// The Arrow schema of schema `id` (the latest or an earlier one).
    pub fn arrow_of(&self, id: i32) -> Result<&arrow_schema::SchemaRef> {
        if id == self.entry.schema_id {
            return Ok(&self.arrow_schema);
        }
        self.older.get(&id).map(|(_, a)| a).ok_or_else(|| {
            fluss(
                codes::SCHEMA_NOT_EXIST,
                format!(
                    "Schema for table {} with schema id {id} does not exist.",
                    self.path()
                ),
            )
        })
    }

    /// "db.table".
    pub fn path(&self) -> String {
        format!("{}.{}", self.entry.database, self.entry.name)
    }
}

fn derive(entry: TableEntry) -> Result<TableMeta> {
    let descriptor = TableDescriptor::from_json(entry.table_json.as_bytes())?;
    let (meta, _) = derive_from(entry, descriptor)?;
    Ok(meta)
}

fn derive_from(entry: TableEntry, descriptor: TableDescriptor) -> Result<(TableMeta, ())> {
    let invalid = |e: Error| {
        fluss(
            codes::INVALID_CONFIG_EXCEPTION,
            format!("Invalid table property: {}", e.message()),
        )
    };
    let schema = &descriptor.schema;
    let types: Vec<DataType> = schema.columns.iter().map(|c| c.data_type.clone()).collect();
    let arrow_schema = schema.to_arrow();
    let pk_indexes = schema.primary_key_indexes();
    let is_pk = !pk_indexes.is_empty();
    let buckets = descriptor.bucket_count.unwrap_or(1);
    let partition_keys = descriptor.partition_keys.clone();
    let merge = descriptor.merge_engine().map_err(invalid)?;
    // `table.statistics.columns`, checked as Fluss's StatisticsConfigUtils does.
    riverlet::stats::statistics_columns(
        descriptor
            .properties
            .get(riverlet::stats::STATISTICS_COLUMNS_OPTION)
            .map(String::as_str),
        &schema.column_names(),
        &types,
        is_pk,
    )?;
    let (mut version_column, mut aggregation) = (None, None);
    match merge {
        None => {}
        Some(_) if !is_pk => {
            return Err(fluss(
                codes::INVALID_CONFIG_EXCEPTION,
                "Merge engine is only supported in primary key table.",
            ))
        }
        Some(MergeEngine::FirstRow) => {}
        Some(MergeEngine::Versioned) => {
            let Some(col) = descriptor.property(keys::MERGE_ENGINE_VERSION_COLUMN) else {
                return Err(fluss(
                    codes::INVALID_CONFIG_EXCEPTION,
                    "'table.merge-engine.versioned.ver-column' must be set for versioned merge engine.",
                ));
            };
            let Some(idx) = schema.column_index(col) else {
                return Err(fluss(
                    codes::INVALID_CONFIG_EXCEPTION,
                    format!(
                        "The version column '{col}' for versioned merge engine doesn't exist in schema."
                    ),
                ));
            };
            if !crate::merge::is_version_type(&types[idx]) {
                return Err(fluss(
                    codes::INVALID_CONFIG_EXCEPTION,
                    format!(
                        "The version column '{col}' for versioned merge engine must be one type of \
                         [INT, BIGINT, TIMESTAMP, TIMESTAMP_LTZ], but got {}.",
                        types[idx]
                    ),
                ));
            }
            version_column = Some(idx);
        }
        Some(MergeEngine::Aggregation) => {
            let wal = descriptor
                .property("table.changelog.image")
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("wal"));
            if wal {
                return Err(fluss(
                    codes::INVALID_CONFIG_EXCEPTION,
                    "Table with 'AGGREGATION' merge engine does not support 'WAL' changelog image \
                     mode. Aggregation merge engine tables require FULL changelog image mode for \
                     correct UNDO recovery. Please set 'table.changelog.image' to 'FULL' or \
                     remove the setting.",
                ));
            }
            aggregation = Some(crate::aggregate::Aggregation::from_schema(schema)?);
        }
    }
    let delete_set = descriptor.property(keys::DELETE_BEHAVIOR).is_some();
    if !is_pk && delete_set {
        return Err(fluss(
            codes::INVALID_CONFIG_EXCEPTION,
            "The 'table.delete.behavior' configuration is only supported for primary key tables.",
        ));
    }
    let delete_behavior = match (delete_set, descriptor.delete_behavior().map_err(invalid)?) {
        (false, _) if merge.is_some() => DeleteBehavior::Ignore,
        (_, DeleteBehavior::Allow) => {
            // Aggregation tables may allow deletes (they remove the whole row), as in Fluss.
            if matches!(merge, Some(MergeEngine::FirstRow | MergeEngine::Versioned)) {
                return Err(fluss(
                    codes::INVALID_CONFIG_EXCEPTION,
                    format!(
                        "Table with '{}' merge engine does not support delete operations. The \
                         'table.delete.behavior' config must be set to 'ignore' or 'disable', but got 'allow'.",
                        merge.map(|m| m.as_str()).unwrap_or("")
                    ),
                ));
            }
            DeleteBehavior::Allow
        }
        (_, other) => other,
    };
    let log_format = descriptor.log_format().map_err(invalid)?;
    let kv_format = descriptor.kv_format().map_err(invalid)?;
    if is_pk && log_format != LogFormat::Arrow {
        return Err(fluss(
            codes::INVALID_CONFIG_EXCEPTION,
            format!(
                "The Riverlet embedded server supports only the ARROW 'table.log.format' for \
                 primary key tables, got '{log_format}'."
            ),
        ));
    }
    let compression = descriptor.log_compression().map_err(invalid)?;
    let ttl_ms = descriptor.log_ttl_ms().map_err(invalid)?;
    let mut older = BTreeMap::new();
    for (id, json) in &entry.older_schemas {
        let s = riverlet::metadata::Schema::from_json(json.as_bytes())?;
        older.insert(*id, (s.data_types(), s.to_arrow()));
    }
    Ok((
        TableMeta {
            entry,
            types,
            arrow_schema,
            pk_indexes,
            buckets,
            partition_keys,
            merge_engine: merge,
            version_column,
            aggregation,
            delete_behavior,
            auto_increment: schema
                .auto_increment_columns
                .first()
                .and_then(|c| schema.column_index(c)),
            kv_indexed: kv_format == KvFormat::Indexed,
            log_format,
            compression,
            ttl_ms,
            older,
            descriptor,
        },
        (),
    ))
}

/// The catalog.
pub struct Catalog {
    path: PathBuf,
    state: State,
    tables: BTreeMap<i64, Arc<TableMeta>>,
    default_buckets: i32,
}

impl Catalog {
    /// Loads (or initialises) the catalog in `data_dir`.
    pub fn open(data_dir: &Path, default_buckets: i32) -> Result<Catalog> {
        let path = data_dir.join("catalog.json");
        let state: State = match fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| Error::corrupt(format!("{}: {e}", path.display())))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => State::default(),
            Err(e) => return Err(e.into()),
        };
        let mut tables = BTreeMap::new();
        for (id, t) in &state.tables {
            tables.insert(*id, Arc::new(derive(t.clone())?));
        }
        let mut c = Catalog {
            path,
            state,
            tables,
            default_buckets,
        };
        if c.state.databases.is_empty() && c.state.next_table_id == 0 {
            let now = now_ms();
            c.state.databases.insert(
                DEFAULT_DATABASE.to_string(),
                DatabaseEntry {
                    json: r#"{"version":1,"custom_properties":{}}"#.to_string(),
                    created: now,
                    modified: now,
                },
            );
            c.persist()?;
        }
        Ok(c)
    }

    fn persist(&self) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(&self.state)
            .map_err(|e| Error::internal(format!("serialize catalog: {e}")))?;
        let tmp = self.path.with_extension("json.tmp");
        {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
        }
        fs::rename(&tmp, &self.path)?;
        if let Some(dir) = self.path.parent() {
            crate::log::sync_dir(dir);
        }
        Ok(())
    }

    /// Database names.
    pub fn databases(&self) -> Vec<String> {
        self.state.databases.keys().cloned().collect()
    }

    /// A database entry.
    pub fn database(&self, name: &str) -> Result<&DatabaseEntry> {
        self.state.databases.get(name).ok_or_else(|| {
            fluss(
                codes::DATABASE_NOT_EXIST,
                format!("Database '{name}' does not exist."),
            )
        })
    }

    /// Creates a database.
    pub fn create_database(&mut self, name: &str, json: Option<&[u8]>, ignore: bool) -> Result<()> {
        if let Err(e) = riverlet::metadata::validate_database_name(name) {
            return Err(fluss(codes::INVALID_DATABASE_EXCEPTION, e.message()));
        }
        if self.state.databases.contains_key(name) {
            if ignore {
                return Ok(());
            }
            return Err(fluss(
                codes::DATABASE_ALREADY_EXIST,
                format!("Database {name} already exists."),
            ));
        }
        let json = match json {
            Some(j) if !j.is_empty() => String::from_utf8_lossy(j).to_string(),
            _ => r#"{"version":1,"custom_properties":{}}"#.to_string(),
        };
        let now = now_ms();
        self.state.databases.insert(
            name.to_string(),
            DatabaseEntry {
                json,
                created: now,
                modified: now,
            },
        );
        self.persist()
    }

    /// Replaces a database's descriptor JSON (AlterDatabase; the caller computed it) and its
    /// modification time.
    pub fn set_database_json(&mut self, name: &str, json: String) -> Result<()> {
        self.database(name)?;
        if let Some(d) = self.state.databases.get_mut(name) {
            d.json = json;
            d.modified = now_ms();
        }
        self.persist()
    }

    /// Drops a database; returns the ids of the tables dropped with it.
    /// Drops a database; returns the id and name of each table it held (dropped with it).
    pub fn drop_database(
        &mut self,
        name: &str,
        ignore: bool,
        cascade: bool,
    ) -> Result<Vec<(i64, String)>> {
        if !self.state.databases.contains_key(name) {
            if ignore {
                return Ok(Vec::new());
            }
            return Err(fluss(
                codes::DATABASE_NOT_EXIST,
                format!("Database {name} does not exist."),
            ));
        }
        let dropped: Vec<(i64, String)> = self
            .state
            .tables
            .values()
            .filter(|t| t.database == name)
            .map(|t| (t.id, t.name.clone()))
            .collect();
        if !dropped.is_empty() && !cascade {
            return Err(fluss(
                codes::DATABASE_NOT_EMPTY,
                format!("Database {name} is not empty."),
            ));
        }
        for (id, _) in &dropped {
            self.state.tables.remove(id);
            self.tables.remove(id);
        }
        self.state.databases.remove(name);
        self.persist()?;
        Ok(dropped)
    }

    /// Table names of a database.
    pub fn list_tables(&self, db: &str) -> Result<Vec<String>> {
        self.database(db).map_err(|_| {
            fluss(
                codes::DATABASE_NOT_EXIST,
                format!("Database {db} does not exist."),
            )
        })?;
        Ok(self
            .state
            .tables
            .values()
            .filter(|t| t.database == db)
            .map(|t| t.name.clone())
            .collect())
    }

    /// Looks a table up by path.
    pub fn table(&self, db: &str, name: &str) -> Result<Arc<TableMeta>> {
        self.tables
            .values()
            .find(|t| t.entry.database == db && t.entry.name == name)
            .cloned()
            .ok_or_else(|| {
                fluss(
                    codes::TABLE_NOT_EXIST,
                    format!("Table '{db}.{name}' does not exist."),
                )
            })
    }

    /// Looks a table up by id.
    pub fn table_by_id(&self, id: i64) -> Result<Arc<TableMeta>> {
        self.tables.get(&id).cloned().ok_or_else(|| {
            fluss(
                codes::UNKNOWN_TABLE_OR_BUCKET_EXCEPTION,
                format!("Unknown table id {id}"),
            )
        })
    }

    /// All tables.
    pub fn all_tables(&self) -> Vec<Arc<TableMeta>> {
        self.tables.values().cloned().collect()
    }

    /// Creates a table from its descriptor JSON; returns None when it existed and `ignore`.
    pub fn create_table(
        &mut self,
        db: &str,
        name: &str,
        json: &[u8],
        ignore: bool,
    ) -> Result<Option<Arc<TableMeta>>> {
        if !self.state.databases.contains_key(db) {
            return Err(fluss(
                codes::DATABASE_NOT_EXIST,
                format!("Database {db} does not exist."),
            ));
        }
        if self.table(db, name).is_ok() {
            if ignore {
                return Ok(None);
            }
            return Err(fluss(
                codes::TABLE_ALREADY_EXIST,
                format!("Table {db}.{name} already exists."),
            ));
        }
        if let Err(e) = riverlet::metadata::validate_table_name(name) {
            return Err(fluss(codes::INVALID_TABLE_EXCEPTION, e.message()));
        }
        let mut d = TableDescriptor::from_json(json).map_err(|e| {
            fluss(
                codes::INVALID_TABLE_EXCEPTION,
                format!("Invalid table descriptor JSON: {}", e.message()),
            )
        })?;
        validate_and_default(&mut d, self.default_buckets)?;
        let now = now_ms();
        let entry = TableEntry {
            id: self.state.next_table_id,
            database: db.to_string(),
            name: name.to_string(),
            schema_id: 1,
            table_json: String::from_utf8_lossy(&d.to_json()).to_string(),
            created: now,
            modified: now,
            partitions: BTreeMap::new(),
            older_schemas: BTreeMap::new(),
        };
        let (meta, _) = derive_from(entry.clone(), d)?;
        self.state.next_table_id += 1;
        self.state.tables.insert(entry.id, entry.clone());
        let meta = Arc::new(meta);
        self.tables.insert(entry.id, meta.clone());
        self.persist()?;
        Ok(Some(meta))
    }

    /// `ALTER TABLE ... ADD COLUMN`: appends `columns` (core's rule: new names, nullable) as a
    /// new schema id, keeping the previous schema for the data written under it. Returns the
    /// table's new meta (None when missing and `ignore`).
    pub fn add_columns(
        &mut self,
        db: &str,
        name: &str,
        columns: &[riverlet::metadata::AddColumn],
        ignore: bool,
    ) -> Result<Option<Arc<TableMeta>>> {
        match self.plan_add_columns(db, name, columns, ignore)? {
            Some((_, altered)) => self.store_altered(altered).map(Some),
            None => Ok(None),
        }
    }

    /// The table `db.name` now and as `ALTER TABLE ... ADD COLUMN` of `columns` would leave
    /// it, nothing stored yet: the change is checked (core's rule: new names, nullable) before
    /// anything else (a lake table) is altered. None when missing and `ignore`.
    pub fn plan_add_columns(
        &self,
        db: &str,
        name: &str,
        columns: &[riverlet::metadata::AddColumn],
        ignore: bool,
    ) -> Result<Option<(Arc<TableMeta>, Arc<TableMeta>)>> {
        let t = match self.table(db, name) {
            Ok(t) => t,
            Err(_) if ignore => return Ok(None),
            Err(e) => return Err(e),
        };
        let schema = t
            .descriptor
            .schema
            .with_added_columns(columns)
            .map_err(|e| {
                fluss(
                    codes::INVALID_ALTER_TABLE_EXCEPTION,
                    e.message().to_string(),
                )
            })?;
        let mut d = t.descriptor.clone();
        let old_json = String::from_utf8_lossy(&d.schema.to_json()).to_string();
        d.schema = schema;
        let mut entry = t.entry.clone();
        entry.older_schemas.insert(entry.schema_id, old_json);
        entry.schema_id += 1;
        entry.table_json = String::from_utf8_lossy(&d.to_json()).to_string();
        entry.modified = now_ms();
        let (meta, _) = derive_from(entry, d)?;
        Ok(Some((t, Arc::new(meta))))
    }

    /// Stores a table altered by [`Catalog::plan_add_columns`] (planned under the same catalog
    /// lock, so nothing else changed the table in between) and returns its new meta.
    pub fn store_altered(&mut self, altered: Arc<TableMeta>) -> Result<Arc<TableMeta>> {
        let entry = altered.entry.clone();
        self.state.tables.insert(entry.id, entry);
        self.tables.insert(altered.entry.id, altered.clone());
        self.persist()?;
        Ok(altered)
    }

    /// Drops a table; returns its id (None when missing and `ignore`).
    pub fn drop_table(&mut self, db: &str, name: &str, ignore: bool) -> Result<Option<i64>> {
        let t = match self.table(db, name) {
            Ok(t) => t,
            Err(_) if ignore => return Ok(None),
            Err(_) => {
                return Err(fluss(
                    codes::TABLE_NOT_EXIST,
                    format!("Table {db}.{name} does not exist."),
                ))
            }
        };
        let id = t.entry.id;
        self.state.tables.remove(&id);
        self.tables.remove(&id);
        self.persist()?;
        Ok(Some(id))
    }

    /// Partitions of a table, optionally filtered by a partial spec.
    pub fn partitions(
        &self,
        t: &TableMeta,
        filter: &[(String, String)],
    ) -> Result<Vec<PartitionEntry>> {
        if !t.is_partitioned() {
            return Err(fluss(
                codes::TABLE_NOT_PARTITIONED_EXCEPTION,
                format!("Table '{}' is not a partitioned table.", t.path()),
            ));
        }
        let entry = self.state.tables.get(&t.entry.id);
        Ok(entry
            .map(|e| {
                e.partitions
                    .values()
                    .filter(|p| {
                        filter
                            .iter()
                            .all(|(k, v)| p.spec.iter().any(|(pk, pv)| pk == k && pv == v))
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default())
    }

    /// A partition by name.
    pub fn partition_by_name(&self, t: &TableMeta, name: &str) -> Option<PartitionEntry> {
        self.state
            .tables
            .get(&t.entry.id)?
            .partitions
            .values()
            .find(|p| p.name == name)
            .cloned()
    }

    /// A partition by id: (table id, partition).
    pub fn partition_by_id(&self, id: i64) -> Option<(i64, PartitionEntry)> {
        self.state
            .tables
            .values()
            .find_map(|t| t.partitions.get(&id).map(|p| (t.id, p.clone())))
    }

    /// Whether a partition id exists for the table.
    pub fn has_partition(&self, table_id: i64, partition_id: i64) -> bool {
        self.state
            .tables
            .get(&table_id)
            .is_some_and(|t| t.partitions.contains_key(&partition_id))
    }

    fn ordered_spec(t: &TableMeta, spec: &[(String, String)]) -> Result<Vec<(String, String)>> {
        let keys: Vec<&String> = spec.iter().map(|(k, _)| k).collect();
        let mut out = Vec::new();
        for k in &t.partition_keys {
            match spec.iter().find(|(sk, _)| sk == k) {
                Some((_, v)) if !v.is_empty() => out.push((k.clone(), v.clone())),
                _ => {
                    return Err(fluss(
                        codes::PARTITION_SPEC_INVALID_EXCEPTION,
                        format!(
                            "PartitionSpec {keys:?} does not contain partition key '{k}' of table \
                             '{}' with partition keys {:?}.",
                            t.path(),
                            t.partition_keys
                        ),
                    ))
                }
            }
        }
        if spec.len() != t.partition_keys.len() {
            return Err(fluss(
                codes::PARTITION_SPEC_INVALID_EXCEPTION,
                format!(
                    "PartitionSpec size is not equal to partition keys size for partitioned table \
                     {}. Partition keys: {:?}, partition spec keys: {keys:?}.",
                    t.path(),
                    t.partition_keys
                ),
            ));
        }
        Ok(out)
    }

    /// `spec` in partition-key order and its partition name; an error for a table without
    /// partitions.
    fn named_spec(
        t: &TableMeta,
        spec: &[(String, String)],
    ) -> Result<(Vec<(String, String)>, String)> {
        if !t.is_partitioned() {
            return Err(fluss(
                codes::TABLE_NOT_PARTITIONED_EXCEPTION,
                format!("Table '{}' is not a partitioned table.", t.path()),
            ));
        }
        let spec = Self::ordered_spec(t, spec)?;
        let name = riverlet::metadata::PartitionSpec::new(spec.iter().cloned()).partition_name();
        Ok((spec, name))
    }

    /// Creates a partition; returns it (None when it existed and `ignore`).
    pub fn create_partition(
        &mut self,
        t: &TableMeta,
        spec: &[(String, String)],
        ignore: bool,
    ) -> Result<Option<PartitionEntry>> {
        let (spec, name) = Self::named_spec(t, spec)?;
        if self.partition_by_name(t, &name).is_some() {
            if ignore {
                return Ok(None);
            }
            return Err(fluss(
                codes::PARTITION_ALREADY_EXISTS,
                format!(
                    "Partition '{}' already exists for table {}",
                    spec.iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join("/"),
                    t.path()
                ),
            ));
        }
        let id = self.state.next_partition_id;
        let p = PartitionEntry { id, name, spec };
        let entry = self
            .state
            .tables
            .get_mut(&t.entry.id)
            .ok_or_else(|| fluss(codes::TABLE_NOT_EXIST, "table vanished"))?;
        entry.partitions.insert(id, p.clone());
        self.state.next_partition_id += 1;
        self.persist()?;
        Ok(Some(p))
    }

    /// Drops a partition; returns its id (None when missing and `ignore`).
    pub fn drop_partition(
        &mut self,
        t: &TableMeta,
        spec: &[(String, String)],
        ignore: bool,
    ) -> Result<Option<(i64, String)>> {
        let (_, name) = Self::named_spec(t, spec)?;
        let Some(p) = self.partition_by_name(t, &name) else {
            if ignore {
                return Ok(None);
            }
            return Err(fluss(
                codes::PARTITION_NOT_EXISTS,
                format!("Partition '{name}' does not exist for table {}", t.path()),
            ));
        };
        if let Some(e) = self.state.tables.get_mut(&t.entry.id) {
            e.partitions.remove(&p.id);
        }
        self.persist()?;
        Ok(Some((p.id, name)))
    }

    /// Hands out a new writer id (persisted so ids never repeat across restarts).
    pub fn next_writer_id(&mut self) -> Result<i64> {
        let id = self.state.next_writer_id;
        self.state.next_writer_id += 1;
        self.persist()?;
        Ok(id)
    }
}

const SYSTEM_COLUMNS: [&str; 6] = [
    "__offset",
    "__timestamp",
    "__bucket",
    "_change_type",
    "_log_offset",
    "_commit_timestamp",
];

/// Applies the coordinator's defaults (bucket count, replication factor, kv format version,
/// delete behavior of merge engines, default bucket keys) and rejects what we do not support.
fn validate_and_default(d: &mut TableDescriptor, default_buckets: i32) -> Result<()> {
    // Table properties are Fluss's `table.*` options; anything else (a lake format's
    // `paimon.*`, a connector's option) is a custom property, as Fluss's
    // TableDescriptorValidation requires, so what a test passes here passes on a cluster.
    if let Some(k) = d.properties.keys().find(|k| !k.starts_with("table.")) {
        return Err(fluss(
            codes::INVALID_CONFIG_EXCEPTION,
            format!(
                "'{k}' is not a Fluss table property. Please use '.customProperty(..)' to set \
                 custom properties."
            ),
        ));
    }
    let is_pk = d.has_primary_key();
    if d.bucket_count.is_none() {
        d.bucket_count = Some(default_buckets);
    }
    let buckets = d.bucket_count.unwrap_or(1);
    if buckets <= 0 {
        return Err(fluss(
            codes::INVALID_TABLE_EXCEPTION,
            "Bucket number must be set.",
        ));
    }
    if buckets > 128_000 {
        return Err(fluss(
            codes::BUCKET_MAX_NUM_EXCEPTION,
            format!(
                "Bucket count {buckets} exceeds the maximum limit 128000 for a non-partitioned table or partition."
            ),
        ));
    }
    let reserved: Vec<&str> = d
        .schema
        .columns
        .iter()
        .map(|c| c.name.as_str())
        .filter(|n| SYSTEM_COLUMNS.contains(n))
        .collect();
    if !reserved.is_empty() {
        return Err(fluss(
            codes::INVALID_TABLE_EXCEPTION,
            format!(
                "{} cannot be used as column names, because they are reserved system columns in \
                 Fluss. Please use other names for these columns. The reserved system columns are: {}",
                reserved.join(", "),
                SYSTEM_COLUMNS.join(", ")
            ),
        ));
    }
    if d.bucket_keys.is_empty() && is_pk {
        d.bucket_keys = d.effective_bucket_keys();
    }
    let auto = d
        .properties
        .get("table.auto-partition.enabled")
        .map(|v| v.eq_ignore_ascii_case("true"))
        .unwrap_or(false);
    if auto {
        if d.partition_keys.is_empty() {
            return Err(fluss(
                codes::INVALID_CONFIG_EXCEPTION,
                "Currently, auto partition is only supported for partitioned table, please set \
                 table property 'table.auto-partition.enabled' to false.",
            ));
        }
        return Err(fluss(
            codes::INVALID_CONFIG_EXCEPTION,
            "Auto partitioning ('table.auto-partition.enabled' = true) is not supported by the \
             Riverlet embedded server; create partitions explicitly (CreatePartition) instead.",
        ));
    }
    d.properties
        .entry(keys::REPLICATION_FACTOR.to_string())
        .or_insert_with(|| "1".to_string());
    if let Some(rf) = d.properties.get(keys::REPLICATION_FACTOR) {
        if rf.trim().parse::<i32>().map_or(true, |v| v <= 0) {
            return Err(fluss(
                codes::INVALID_CONFIG_EXCEPTION,
                "'table.replication.factor' must be greater than 0.",
            ));
        }
    }
    let merge = d
        .properties
        .get("table.merge-engine")
        .map(|s| s.to_ascii_lowercase());
    if is_pk
        && matches!(
            merge.as_deref(),
            Some("first_row") | Some("versioned") | Some("aggregation")
        )
        && !d.properties.contains_key("table.delete.behavior")
    {
        d.properties
            .insert("table.delete.behavior".to_string(), "IGNORE".to_string());
    }
    if is_pk {
        d.properties
            .entry("table.kv.format-version".to_string())
            .or_insert_with(|| "2".to_string());
    }
    Ok(())
}
