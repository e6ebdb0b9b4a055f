//! Iceberg tiering of the tables with `table.datalake.enabled` (server feature `lake`): the
//! Iceberg table of each, its commits every `table.datalake.freshness`, and the lake snapshots
//! (snapshot id, per-bucket log offset) GetLakeSnapshot answers with.
//!
//! The Iceberg table is laid out as Fluss's Iceberg tiering lays it out: table
//! `<database>.<table>` in the catalog, the Fluss columns then the system columns `__bucket`
//! (int), `__offset` (long) and `__timestamp` (timestamptz, the batch's commit time), and
//! partitioned by `identity(__bucket)` (lake tables here have no bucket key). Each commit is
//! an Iceberg append whose summary carries `commit-user = __fluss_lake_tiering` and
//! `fluss-offsets`, the path of a JSON file (Fluss's `TableBucketOffsets` form) with the log
//! offset each bucket is tiered up to (exclusive). Those are the offsets a union read starts
//! the Fluss log from.
//!
//! The catalog is Iceberg's SQL catalog on SQLite (by default `WAREHOUSE/catalog.db`), which
//! pyiceberg's `SqlCatalog` and Java's `JdbcCatalog` open too, or with
//! `datalake.iceberg.type = rest` an Iceberg REST catalog (`datalake.iceberg.uri`, and the
//! REST client's properties as `datalake.iceberg.*`); both are opened by
//! `riverlet::lake::open_catalog`, and the tiering is the same for either. The writing goes through the
//! iceberg crate (no hand-written Iceberg metadata); it is on arrow 58, reached through the
//! zero-copy bridge in [`bridge`]. Data and metadata files go where the catalog places them, on
//! local disk or on S3 (a REST catalog's `s3://` warehouse, with the `datalake.iceberg.s3.*` and
//! `client.*` FileIO properties; see `riverlet::lake::storage`).

pub use riverlet::lake::bridge;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch};
use iceberg::spec::{
    DataFileFormat, Literal, NestedField, PartitionKey, PrimitiveType, Schema as IcebergSchema,
    Struct, Transform, Type, UnboundPartitionSpec,
};
use iceberg::transaction::{ApplyTransactionAction, Transaction};
use iceberg::writer::base_writer::data_file_writer::DataFileWriterBuilder;
use iceberg::writer::file_writer::location_generator::{
    DefaultFileNameGenerator, DefaultLocationGenerator,
};
use iceberg::writer::file_writer::rolling_writer::RollingFileWriterBuilder;
use iceberg::writer::file_writer::ParquetWriterBuilder;
use iceberg::writer::{IcebergWriter, IcebergWriterBuilder};
use iceberg::{Catalog, NamespaceIdent, TableCreation, TableIdent};
use riverlet::metadata::{DataType, TypeKind};
use riverlet::record::log_batch::LogBatchIter;
use riverlet::{Error, Result};

use crate::catalog::TableMeta;
use crate::config::ServerConfig;
use crate::fault::FaultKnob;

/// The system column holding the Fluss bucket of a row.
pub const BUCKET_COLUMN: &str = "__bucket";
/// The system column holding the Fluss log offset of a row.
pub const OFFSET_COLUMN: &str = "__offset";
/// The system column holding the commit timestamp of a row's log batch.
pub const TIMESTAMP_COLUMN: &str = "__timestamp";
/// The Iceberg snapshot summary key with the path of the tiered-offsets file (Fluss's name).
pub const OFFSETS_PROPERTY: &str = "fluss-offsets";
/// `commit-user` of the snapshots the tiering commits (Fluss's name).
pub const COMMIT_USER: &str = "__fluss_lake_tiering";
/// Fluss's default `table.datalake.freshness`.
const DEFAULT_FRESHNESS: Duration = Duration::from_secs(180);
/// Bytes read from a bucket's log per read while tiering.
const READ_CHUNK: usize = 4 * 1024 * 1024;

/// The test-only fault knob of lake commits ([`crate::fault::FaultKnob`]):
/// `RIVERLET_FAULT_LAKE_COMMIT=<step>` aborts the server process the first time a commit
/// reaches that step (the doc comment of [`Lake::commit_table`] says what is on disk at each);
/// another value is refused by [`Lake::open`].
pub static COMMIT_FAULT: FaultKnob = FaultKnob::new(
    "RIVERLET_FAULT_LAKE_COMMIT",
    "lake commit",
    &[
        "before-data-files",
        "between-data-files",
        "data-files",
        "offsets-file",
        "manifests",
        "committed",
        "recorded",
    ],
);

/// The catalog a commit goes through when the fault knob names `manifests`: every call is the
/// real catalog's, except that `update_table` (the fast append has written its manifests and
/// manifest list by then; the catalog still points at the previous metadata) aborts.
#[derive(Debug)]
struct FaultBeforeUpdate(Arc<dyn Catalog>);

#[async_trait::async_trait]
impl Catalog for FaultBeforeUpdate {
    async fn list_namespaces(
        &self,
        parent: Option<&NamespaceIdent>,
    ) -> iceberg::Result<Vec<NamespaceIdent>> {
        self.0.list_namespaces(parent).await
    }
    async fn create_namespace(
        &self,
        namespace: &NamespaceIdent,
        properties: HashMap<String, String>,
    ) -> iceberg::Result<iceberg::Namespace> {
        self.0.create_namespace(namespace, properties).await
    }
    async fn get_namespace(
        &self,
        namespace: &NamespaceIdent,
    ) -> iceberg::Result<iceberg::Namespace> {
        self.0.get_namespace(namespace).await
    }
    async fn namespace_exists(&self, namespace: &NamespaceIdent) -> iceberg::Result<bool> {
        self.0.namespace_exists(namespace).await
    }
    async fn update_namespace(
        &self,
        namespace: &NamespaceIdent,
        properties: HashMap<String, String>,
    ) -> iceberg::Result<()> {
        self.0.update_namespace(namespace, properties).await
    }
    async fn drop_namespace(&self, namespace: &NamespaceIdent) -> iceberg::Result<()> {
        self.0.drop_namespace(namespace).await
    }
    async fn list_tables(&self, namespace: &NamespaceIdent) -> iceberg::Result<Vec<TableIdent>> {
        self.0.list_tables(namespace).await
    }
    async fn create_table(
        &self,
        namespace: &NamespaceIdent,
        creation: TableCreation,
    ) -> iceberg::Result<iceberg::table::Table> {
        self.0.create_table(namespace, creation).await
    }
    async fn load_table(&self, table: &TableIdent) -> iceberg::Result<iceberg::table::Table> {
        self.0.load_table(table).await
    }
    async fn drop_table(&self, table: &TableIdent) -> iceberg::Result<()> {
        self.0.drop_table(table).await
    }
    async fn purge_table(&self, table: &TableIdent) -> iceberg::Result<()> {
        self.0.purge_table(table).await
    }
    async fn table_exists(&self, table: &TableIdent) -> iceberg::Result<bool> {
        self.0.table_exists(table).await
    }
    async fn rename_table(&self, src: &TableIdent, dest: &TableIdent) -> iceberg::Result<()> {
        self.0.rename_table(src, dest).await
    }
    async fn register_table(
        &self,
        table: &TableIdent,
        metadata_location: String,
    ) -> iceberg::Result<iceberg::table::Table> {
        self.0.register_table(table, metadata_location).await
    }
    async fn update_table(
        &self,
        commit: iceberg::TableCommit,
    ) -> iceberg::Result<iceberg::table::Table> {
        COMMIT_FAULT.point("manifests");
        self.0.update_table(commit).await
    }
}

fn lake_err(what: impl std::fmt::Display, e: impl std::fmt::Display) -> Error {
    Error::internal(format!("lake: {what}: {e}"))
}

/// `table.datalake.enabled = true`.
pub fn lake_enabled(meta: &TableMeta) -> bool {
    meta.descriptor.lake_enabled()
}

/// `table.datalake.freshness` of a table (Fluss's default 3 min).
pub fn freshness(meta: &TableMeta) -> Duration {
    meta.descriptor
        .property("table.datalake.freshness")
        .and_then(|v| riverlet::metadata::table::parse_duration_ms(v).ok())
        .filter(|ms| *ms > 0)
        .map_or(DEFAULT_FRESHNESS, |ms| Duration::from_millis(ms as u64))
}

/// One committed lake snapshot of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LakeSnapshot {
    /// The Iceberg snapshot id.
    pub snapshot_id: i64,
    /// When it was committed (epoch ms).
    pub committed_at: i64,
    /// (partition id, bucket) -> the log offset the lake holds the rows before.
    pub offsets: BTreeMap<(Option<i64>, i32), i64>,
}

#[derive(Debug, Default)]
struct TableLake {
    /// Committed snapshots of this Fluss table (this table id), oldest first.
    snapshots: Vec<LakeSnapshot>,
    /// When the latest commit round ran (None: not since the server started).
    last_round: Option<Instant>,
}

/// The lake of one server: its Iceberg catalog and the lake snapshots of each table.
pub struct Lake {
    catalog: Arc<dyn Catalog>,
    /// The runtime every catalog call runs on (see [`IoRuntime`]).
    io: IoRuntime,
    /// The catalog's effective properties (`type`, `warehouse`, `uri`, `name`; a REST
    /// catalog's as configured).
    properties: BTreeMap<String, String>,
    /// The local warehouse directory of a SQL catalog (None for a REST catalog, which places
    /// table files itself).
    warehouse: Option<PathBuf>,
    offsets_dir: PathBuf,
    tables: Mutex<HashMap<i64, TableLake>>,
    /// One commit at a time per server (rounds and on-demand commits may meet).
    commit: tokio::sync::Mutex<()>,
}

/// The lake's own tokio runtime (one worker thread), on which the catalog is opened and every
/// catalog call runs. A REST catalog's HTTP connections are driven by their runtime's I/O
/// driver; on the server's runtime a table creation (run under the server's catalog lock,
/// from the blocking pool) waited forever for its response when both worker threads were
/// blocked on that lock by other requests. Here the driver never waits for the server.
struct IoRuntime(Option<tokio::runtime::Runtime>);

impl IoRuntime {
    fn new() -> Result<IoRuntime> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("riverlet-lake-io")
            .enable_all()
            .build()
            .map_err(|e| Error::internal(format!("lake I/O runtime: {e}")))?;
        Ok(IoRuntime(Some(rt)))
    }

    /// Runs `f` on this runtime and waits for it (from any runtime or thread).
    async fn run<T: Send + 'static>(
        &self,
        f: impl std::future::Future<Output = T> + Send + 'static,
    ) -> Result<T> {
        let rt = self
            .0
            .as_ref()
            .ok_or_else(|| Error::internal("lake I/O runtime already shut down"))?;
        rt.spawn(f)
            .await
            .map_err(|e| Error::internal(format!("lake I/O task failed: {e}")))
    }
}

impl Drop for IoRuntime {
    fn drop(&mut self) {
        // dropped possibly inside the server's runtime, where a blocking shutdown panics
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The Iceberg type of a Fluss column type (Fluss's `FlussDataTypeToIcebergDataType`).
fn iceberg_type(t: &DataType) -> Result<PrimitiveType> {
    Ok(match &t.kind {
        TypeKind::Boolean => PrimitiveType::Boolean,
        TypeKind::TinyInt | TypeKind::SmallInt | TypeKind::Int => PrimitiveType::Int,
        TypeKind::BigInt => PrimitiveType::Long,
        TypeKind::Float => PrimitiveType::Float,
        TypeKind::Double => PrimitiveType::Double,
        TypeKind::Decimal { precision, scale } => PrimitiveType::Decimal {
            precision: *precision,
            scale: *scale,
        },
        TypeKind::Char { .. } | TypeKind::String => PrimitiveType::String,
        TypeKind::Binary { .. } | TypeKind::Bytes => PrimitiveType::Binary,
        TypeKind::Date => PrimitiveType::Date,
        TypeKind::Time { .. } => PrimitiveType::Time,
        TypeKind::Timestamp { .. } => PrimitiveType::Timestamp,
        TypeKind::TimestampLtz { .. } => PrimitiveType::Timestamptz,
        TypeKind::Array(_) | TypeKind::Map(..) | TypeKind::Row(_) => {
            return Err(Error::unsupported(format!(
                "lake tiering of {t} columns is not supported by the embedded server"
            )))
        }
    })
}

/// The Iceberg schema of a Fluss table: its columns, then the system columns.
fn iceberg_schema(meta: &TableMeta) -> Result<IcebergSchema> {
    let mut fields = Vec::new();
    let mut id = 1;
    for (c, t) in meta.descriptor.schema.columns.iter().zip(&meta.types) {
        if [BUCKET_COLUMN, OFFSET_COLUMN, TIMESTAMP_COLUMN].contains(&c.name.as_str()) {
            return Err(Error::invalid(format!(
                "column '{}' conflicts with a reserved system column name of lake tables",
                c.name
            )));
        }
        let ty = Type::Primitive(iceberg_type(t)?);
        let f = if t.nullable {
            NestedField::optional(id, &c.name, ty)
        } else {
            NestedField::required(id, &c.name, ty)
        };
        fields.push(Arc::new(f));
        id += 1;
    }
    for (name, ty) in [
        (BUCKET_COLUMN, PrimitiveType::Int),
        (OFFSET_COLUMN, PrimitiveType::Long),
        (TIMESTAMP_COLUMN, PrimitiveType::Timestamptz),
    ] {
        fields.push(Arc::new(NestedField::required(
            id,
            name,
            Type::Primitive(ty),
        )));
        id += 1;
    }
    IcebergSchema::builder()
        .with_fields(fields)
        .build()
        .map_err(|e| lake_err("schema", e))
}

/// Why the embedded server cannot tier this table to the lake (None: it can).
pub fn unsupported_reason(meta: &TableMeta) -> Option<String> {
    if meta.is_pk() {
        return Some("primary-key tables".into());
    }
    if meta.is_partitioned() {
        return Some("partitioned tables".into());
    }
    if !meta.descriptor.bucket_keys.is_empty() {
        return Some("tables with a bucket key (bucket.key)".into());
    }
    if !matches!(meta.log_format, riverlet::metadata::LogFormat::Arrow) {
        return Some("log formats other than ARROW".into());
    }
    if let Err(e) = iceberg_schema(meta) {
        return Some(e.message().to_string());
    }
    None
}

fn ident(meta: &TableMeta) -> Result<TableIdent> {
    TableIdent::from_strs([meta.entry.database.as_str(), meta.entry.name.as_str()])
        .map_err(|e| lake_err("table name", e))
}

/// Fluss's `TableBucketOffsets` JSON (version 1) of a non-partitioned table.
fn offsets_json(
    table_id: i64,
    buckets: i32,
    offsets: &BTreeMap<(Option<i64>, i32), i64>,
) -> Vec<u8> {
    let arr: Vec<i64> = (0..buckets)
        .map(|b| offsets.get(&(None, b)).copied().unwrap_or(-1))
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "version": 1,
        "table_id": table_id,
        "bucket_offsets": arr,
    }))
    .unwrap_or_default()
}

/// (partition id, bucket) -> log offset.
type BucketOffsets = BTreeMap<(Option<i64>, i32), i64>;

fn parse_offsets_json(bytes: &[u8]) -> Option<(i64, BucketOffsets)> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let table_id = v.get("table_id")?.as_i64()?;
    let mut out = BTreeMap::new();
    for (b, o) in v.get("bucket_offsets")?.as_array()?.iter().enumerate() {
        let o = o.as_i64()?;
        if o >= 0 {
            out.insert((None, b as i32), o);
        }
    }
    Some((table_id, out))
}

/// The id of the newest snapshot of `table` that the tiering committed (it names an offsets
/// file), of whichever table id.
fn latest_tiering_snapshot(table: &iceberg::table::Table) -> Option<i64> {
    table
        .metadata()
        .snapshots()
        .filter(|s| {
            s.summary()
                .additional_properties
                .contains_key(OFFSETS_PROPERTY)
        })
        .max_by_key(|s| s.sequence_number())
        .map(|s| s.snapshot_id())
}

/// The lake snapshots of `meta` (its table id) in `table`, oldest first. An older snapshot
/// whose offsets file is unreadable is left out; the newest one's is an error naming the file:
/// commits resuming from an older snapshot's offsets would tier its rows twice.
fn snapshots_of(table: &iceberg::table::Table, meta: &TableMeta) -> Result<Vec<LakeSnapshot>> {
    let latest = latest_tiering_snapshot(table);
    let mut out = Vec::new();
    let mut snaps: Vec<_> = table.metadata().snapshots().cloned().collect();
    snaps.sort_by_key(|s| s.sequence_number());
    for s in snaps {
        let Some(path) = s.summary().additional_properties.get(OFFSETS_PROPERTY) else {
            continue;
        };
        let parsed = std::fs::read(path_of(path))
            .map_err(|e| e.to_string())
            .and_then(|b| parse_offsets_json(&b).ok_or_else(|| "not an offsets file".into()));
        let (table_id, offsets) = match parsed {
            Ok(p) => p,
            Err(e) if Some(s.snapshot_id()) == latest => {
                return Err(Error::corrupt(format!(
                    "lake: the offsets file {path} of snapshot {} (the newest the tiering \
                     committed) of the Iceberg table of {}: {e}; the tiering of this table \
                     stops rather than tier rows twice",
                    s.snapshot_id(),
                    meta.path()
                )));
            }
            Err(_) => continue,
        };
        if table_id == meta.entry.id {
            out.push(LakeSnapshot {
                snapshot_id: s.snapshot_id(),
                committed_at: s.timestamp_ms(),
                offsets,
            });
        }
    }
    Ok(out)
}

/// Writes `bytes` to a new file and fsyncs it and its directory.
fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

fn path_of(location: &str) -> PathBuf {
    PathBuf::from(location.strip_prefix("file://").unwrap_or(location))
}

impl Lake {
    /// Opens (creating when missing) the Iceberg catalog `config` names, or None when no
    /// `datalake.format` is set.
    pub async fn open(config: &ServerConfig) -> Result<Option<Arc<Lake>>> {
        if config.datalake_format.is_none() {
            return Ok(None);
        }
        COMMIT_FAULT.step()?;
        let props = &config.datalake_iceberg;
        let offsets_dir = config.data_dir.join("lake-offsets");
        std::fs::create_dir_all(&offsets_dir)
            .map_err(|e| Error::from(e).context(format!("{}", offsets_dir.display())))?;
        let kind = props.get("type").map(String::as_str).unwrap_or("sql");
        if kind == "rest" {
            // the REST catalog decides where table files go; readers get the same properties
            if !props.contains_key("uri") {
                return Err(Error::invalid(
                    "datalake.iceberg.type is rest but datalake.iceberg.uri (the REST \
                     catalog's URI) is not set",
                ));
            }
            let io = IoRuntime::new()?;
            let p = props.clone();
            let catalog = io
                .run(async move { riverlet::lake::open_catalog(&p, "datalake.iceberg").await })
                .await??;
            return Ok(Some(Arc::new(Lake {
                catalog,
                io,
                properties: props.clone(),
                warehouse: None,
                offsets_dir,
                tables: Mutex::new(HashMap::new()),
                commit: tokio::sync::Mutex::new(()),
            })));
        }
        let Some(warehouse) = props.get("warehouse") else {
            return Err(Error::invalid(
                "datalake.format is set but datalake.iceberg.warehouse is not: the embedded \
                 server's SQL catalog needs a local warehouse directory",
            ));
        };
        let warehouse = PathBuf::from(warehouse.strip_prefix("file://").unwrap_or(warehouse));
        std::fs::create_dir_all(&warehouse).map_err(|e| {
            Error::from(e).context(format!(
                "datalake.iceberg.warehouse {}",
                warehouse.display()
            ))
        })?;
        let warehouse = std::fs::canonicalize(&warehouse).unwrap_or(warehouse);
        let uri = match props.get("uri") {
            Some(u) => u.clone(),
            None => format!("sqlite:{}?mode=rwc", warehouse.join("catalog.db").display()),
        };
        let properties = BTreeMap::from([
            ("type".to_string(), "sql".to_string()),
            ("warehouse".to_string(), warehouse.display().to_string()),
            ("uri".to_string(), uri),
            (
                "name".to_string(),
                props
                    .get("name")
                    .cloned()
                    .unwrap_or_else(|| "fluss-iceberg-catalog".into()),
            ),
        ]);
        let io = IoRuntime::new()?;
        let p = properties.clone();
        let catalog = io
            .run(async move { riverlet::lake::open_catalog(&p, "datalake.iceberg").await })
            .await??;
        Ok(Some(Arc::new(Lake {
            catalog,
            io,
            properties,
            warehouse: Some(warehouse),
            offsets_dir,
            tables: Mutex::new(HashMap::new()),
            commit: tokio::sync::Mutex::new(()),
        })))
    }

    /// The catalog's effective properties (`type`, `warehouse`, `uri`, `name`): what a lake
    /// reader opens the catalog with. GetTableInfo hands them to clients as
    /// `table.datalake.iceberg.*` table properties, as Fluss does.
    pub fn properties(&self) -> &BTreeMap<String, String> {
        &self.properties
    }

    /// The local warehouse directory of a SQL catalog (None for a REST catalog).
    pub fn warehouse(&self) -> Option<&Path> {
        self.warehouse.as_deref()
    }

    /// Runs one catalog call on the lake's runtime; an error names `what`.
    async fn on_catalog<T, F>(
        &self,
        what: impl std::fmt::Display,
        f: impl FnOnce(Arc<dyn Catalog>) -> F,
    ) -> Result<T>
    where
        T: Send + 'static,
        F: std::future::Future<Output = iceberg::Result<T>> + Send + 'static,
    {
        self.io
            .run(f(self.catalog.clone()))
            .await?
            .map_err(|e| lake_err(what, e))
    }

    /// The catalog (for readers in this process).
    pub fn catalog(&self) -> &dyn Catalog {
        self.catalog.as_ref()
    }

    /// Creates the Iceberg table of a lake-enabled Fluss table. An existing one is taken over
    /// when it has the same schema and no snapshot (as Fluss's Paimon catalog takes over an
    /// empty compatible table; Fluss 0.9.1's Iceberg catalog refuses any existing table); one
    /// with another schema or holding rows is refused with LAKE_TABLE_ALREADY_EXIST.
    pub async fn create_table(&self, meta: &TableMeta) -> Result<()> {
        if let Some(why) = unsupported_reason(meta) {
            return Err(Error::unsupported(format!(
                "table.datalake.enabled: the embedded server does not tier {why} to the lake \
                 (table {})",
                meta.path()
            )));
        }
        let schema = iceberg_schema(meta)?;
        let id = ident(meta)?;
        let ns = NamespaceIdent::new(meta.entry.database.clone());
        let n = ns.clone();
        let exists = self
            .on_catalog("namespace", |c| async move { c.namespace_exists(&n).await })
            .await?;
        if !exists {
            let n = ns.clone();
            self.on_catalog(
                format!("create namespace {}", meta.entry.database),
                |c| async move { c.create_namespace(&n, HashMap::new()).await },
            )
            .await?;
        }
        let i = id.clone();
        if self
            .on_catalog("table exists", |c| async move { c.table_exists(&i).await })
            .await?
        {
            let i = id.clone();
            let t = self
                .on_catalog("load table", |c| async move { c.load_table(&i).await })
                .await?;
            let have = t.metadata().current_schema();
            let same = have.as_struct().fields().len() == schema.as_struct().fields().len()
                && have
                    .as_struct()
                    .fields()
                    .iter()
                    .zip(schema.as_struct().fields())
                    .all(|(a, b)| {
                        a.name == b.name && a.field_type == b.field_type && a.required == b.required
                    });
            if !same {
                return Err(Error::from_fluss(
                    riverlet::error::codes::LAKE_TABLE_ALREADY_EXIST,
                    format!(
                        "The table {} already exists in the Iceberg catalog with another \
                         schema; drop it there first or use another table name.",
                        meta.path()
                    ),
                ));
            }
            // Rows in it (of a dropped table of the same name) would show in this table's lake
            // and union reads, at offsets of another table: refused, as Fluss refuses a lake
            // table that is not empty (its Iceberg catalog refuses any existing table).
            if let Some(snap) = t.metadata().current_snapshot() {
                return Err(Error::from_fluss(
                    riverlet::error::codes::LAKE_TABLE_ALREADY_EXIST,
                    format!(
                        "The table {} already exists in the Iceberg catalog and is not empty \
                         (snapshot {}, left by a dropped table of the same name?); drop it \
                         there first or use another table name.",
                        meta.path(),
                        snap.snapshot_id()
                    ),
                ));
            }
            return Ok(());
        }
        let bucket_id = schema
            .field_by_name(BUCKET_COLUMN)
            .map(|f| f.id)
            .ok_or_else(|| lake_err("schema", "no __bucket column"))?;
        // the spec id set explicitly: Iceberg-Java's REST servers reject a CreateTableRequest
        // whose partition spec has none ("Cannot parse missing int: spec-id")
        let spec = UnboundPartitionSpec::builder()
            .with_spec_id(0)
            .add_partition_field(bucket_id, BUCKET_COLUMN, Transform::Identity)
            .map_err(|e| lake_err("partition spec", e))?
            .build();
        let creation = TableCreation::builder()
            .name(meta.entry.name.clone())
            .schema(schema)
            .partition_spec(spec)
            .build();
        self.on_catalog(
            format!("create Iceberg table {}", meta.path()),
            |c| async move { c.create_table(&ns, creation).await },
        )
        .await?;
        // the first commit comes one freshness interval after the creation
        lock(&self.tables)
            .entry(meta.entry.id)
            .or_default()
            .last_round = Some(Instant::now());
        Ok(())
    }

    /// Loads the lake snapshots of the lake-enabled tables from their Iceberg tables (at
    /// start-up): the snapshots committed by the tiering for this table id.
    pub async fn recover(&self, tables: &[Arc<TableMeta>]) {
        for meta in tables.iter().filter(|m| lake_enabled(m)) {
            match self.load_snapshots(meta).await {
                Ok(s) => {
                    lock(&self.tables)
                        .entry(meta.entry.id)
                        .or_default()
                        .snapshots = s;
                }
                Err(e) => tracing::warn!("{}: loading its lake snapshots failed: {e}", meta.path()),
            }
        }
    }

    async fn load_snapshots(&self, meta: &TableMeta) -> Result<Vec<LakeSnapshot>> {
        let id = ident(meta)?;
        let t = self
            .on_catalog("load table", |c| async move { c.load_table(&id).await })
            .await?;
        snapshots_of(&t, meta)
    }

    /// The latest lake snapshot of a table, or the one with `snapshot_id`.
    pub fn snapshot(&self, table_id: i64, snapshot_id: Option<i64>) -> Option<LakeSnapshot> {
        let g = lock(&self.tables);
        let snaps = &g.get(&table_id)?.snapshots;
        match snapshot_id {
            None => snaps.last().cloned(),
            Some(id) => snaps.iter().find(|s| s.snapshot_id == id).cloned(),
        }
    }

    /// Forgets a dropped table's state (its Iceberg table stays, as with Fluss).
    pub fn forget(&self, table_id: i64) {
        lock(&self.tables).remove(&table_id);
    }

    /// Whether the table's freshness interval has passed since its latest commit round.
    pub fn due(&self, meta: &TableMeta) -> bool {
        let g = lock(&self.tables);
        match g.get(&meta.entry.id).and_then(|t| t.last_round) {
            None => true,
            Some(at) => at.elapsed() >= freshness(meta),
        }
    }

    /// Commits to the lake every row of `meta` below each bucket's high watermark that the
    /// latest lake snapshot does not hold yet. Returns the new snapshot (None: nothing new).
    ///
    /// The steps, in order, each named as the fault knob ([`COMMIT_FAULT`]) names it (the knob
    /// aborts the process when a commit reaches the step, before doing what follows it):
    ///
    /// 1. Load the Iceberg table; for each bucket read the log from the latest snapshot's
    ///    offset up to the high watermark. `before-data-files`: the first bucket with new rows
    ///    is read, nothing is written yet.
    /// 2. Write each bucket's new rows as Parquet data files under the table's `data/`
    ///    (`<uuid>-b<bucket>-*.parquet`, fresh names each commit). `between-data-files`: the
    ///    first such bucket's files are written and closed, the next one's are not.
    ///    `data-files`: every data file is written.
    /// 3. Write the offsets file (`DATA_DIR/lake-offsets/<table id>-<uuid>.offsets`, Fluss's
    ///    `TableBucketOffsets` JSON: the log offset each bucket is tiered up to).
    ///    `offsets-file`: it is written, the Iceberg commit has not started.
    /// 4. The Iceberg fast append: it writes a manifest and a manifest list naming the data
    ///    files, then asks the catalog to move the table to new metadata whose snapshot's
    ///    summary holds `fluss-offsets` (the offsets file's path). `manifests`: the manifest
    ///    files are written, the catalog still points at the previous metadata. The catalog's
    ///    own update (new `metadata.json`, then one conditional SQL `UPDATE`, or one REST call)
    ///    is the commit point: before it no snapshot exists, after it the whole one does.
    ///    `committed`: the catalog holds the new snapshot, the server's in-memory list of lake
    ///    snapshots (which GetLakeSnapshot answers from) does not.
    /// 5. Append the snapshot to the in-memory list. `recorded`: done, nothing else is written.
    ///
    /// A process killed before the commit point leaves the lake at its previous snapshot;
    /// what it wrote (data files, offsets file, manifests) is referenced by no snapshot, so no
    /// reader sees it, and the next commit reads again from the previous snapshot's offsets.
    /// Killed after it, [`Lake::recover`] finds the snapshot in the catalog at the next start
    /// (its offsets from the offsets file) and the next commit starts from its offsets. The
    /// log rows a commit reads stay on local disk until a snapshot holds them
    /// (`lake_pending_from`), so either way each row reaches the lake exactly once.
    pub async fn commit_table(
        &self,
        server: &crate::service::Server,
        meta: &Arc<TableMeta>,
    ) -> Result<Option<LakeSnapshot>> {
        let _one = self.commit.lock().await;
        lock(&self.tables)
            .entry(meta.entry.id)
            .or_default()
            .last_round = Some(Instant::now());
        let id = ident(meta)?;
        let table = self
            .on_catalog(
                format!("load Iceberg table {}", meta.path()),
                |c| async move { c.load_table(&id).await },
            )
            .await?;
        // The offsets to resume from are the newest tiering snapshot's in the catalog: the
        // list in memory is reloaded when it is not that one (its loading at start-up failed).
        if latest_tiering_snapshot(&table)
            != self.snapshot(meta.entry.id, None).map(|s| s.snapshot_id)
        {
            let snaps = snapshots_of(&table, meta)?;
            lock(&self.tables)
                .entry(meta.entry.id)
                .or_default()
                .snapshots = snaps;
        }
        let prev = self.snapshot(meta.entry.id, None);
        let ice_schema = table.metadata().current_schema().clone();
        let arrow58 = Arc::new(
            iceberg::arrow::schema_to_arrow_schema(&ice_schema)
                .map_err(|e| lake_err("arrow schema", e))?,
        );
        let ours = bridge::schema_from_58(&arrow58)?;
        let mut offsets = prev.as_ref().map(|p| p.offsets.clone()).unwrap_or_default();
        let mut files = Vec::new();
        let mut any = false;
        let prefix = uuid::Uuid::new_v4().to_string();
        for bucket in 0..meta.buckets {
            let from = offsets.get(&(None, bucket)).copied().unwrap_or(0);
            let (batches, next) = read_bucket(server, meta, bucket, from, &ours)?;
            offsets.insert((None, bucket), next);
            if batches.is_empty() {
                continue;
            }
            COMMIT_FAULT.point(if any {
                "between-data-files"
            } else {
                "before-data-files"
            });
            any = true;
            let location = DefaultLocationGenerator::new(table.metadata())
                .map_err(|e| lake_err("location", e))?;
            let names = DefaultFileNameGenerator::new(
                format!("{prefix}-b{bucket}"),
                None,
                DataFileFormat::Parquet,
            );
            let pw = ParquetWriterBuilder::new(Default::default(), ice_schema.clone());
            let rolling = RollingFileWriterBuilder::new_with_default_file_size(
                pw,
                table.file_io().clone(),
                location,
                names,
            );
            let key = PartitionKey::new(
                table.metadata().default_partition_spec().as_ref().clone(),
                ice_schema.clone(),
                Struct::from_iter([Some(Literal::int(bucket))]),
            );
            let mut w = DataFileWriterBuilder::new(rolling)
                .build(Some(key))
                .await
                .map_err(|e| lake_err("data file writer", e))?;
            for b in batches {
                let b58 = bridge::batch_to_58(b, arrow58.clone())?;
                w.write(b58).await.map_err(|e| lake_err("write", e))?;
            }
            files.extend(
                w.close()
                    .await
                    .map_err(|e| lake_err("close data file", e))?,
            );
        }
        if !any {
            return Ok(None);
        }
        COMMIT_FAULT.point("data-files");
        let file = self.offsets_dir.join(format!(
            "{}-{}.offsets",
            meta.entry.id,
            uuid::Uuid::new_v4()
        ));
        // fsynced: the snapshot the catalog commits below names it, and recovery reads it
        write_synced(&file, &offsets_json(meta.entry.id, meta.buckets, &offsets))
            .map_err(|e| Error::from(e).context(format!("write {}", file.display())))?;
        COMMIT_FAULT.point("offsets-file");
        let props = HashMap::from([
            (OFFSETS_PROPERTY.to_string(), file.display().to_string()),
            ("commit-user".to_string(), COMMIT_USER.to_string()),
        ]);
        let tx = Transaction::new(&table);
        let tx = tx
            .fast_append()
            .add_data_files(files)
            .set_snapshot_properties(props)
            .apply(tx)
            .map_err(|e| lake_err("append", e))?;
        let fault_before_update = matches!(COMMIT_FAULT.step(), Ok(Some("manifests")));
        let table = self
            .on_catalog(
                format!("commit to Iceberg table {}", meta.path()),
                |c| async move {
                    if fault_before_update {
                        tx.commit(&FaultBeforeUpdate(c)).await
                    } else {
                        tx.commit(c.as_ref()).await
                    }
                },
            )
            .await?;
        COMMIT_FAULT.point("committed");
        let snap = table
            .metadata()
            .current_snapshot()
            .ok_or_else(|| lake_err("commit", "no current snapshot after the commit"))?;
        let s = LakeSnapshot {
            snapshot_id: snap.snapshot_id(),
            committed_at: snap.timestamp_ms(),
            offsets,
        };
        lock(&self.tables)
            .entry(meta.entry.id)
            .or_default()
            .snapshots
            .push(s.clone());
        COMMIT_FAULT.point("recorded");
        Ok(Some(s))
    }
}

/// The rows of one bucket from offset `from` up to its high watermark, with the system
/// columns, cast to `target` (the Iceberg table's arrow types). Returns them and the offset
/// after the last one read.
fn read_bucket(
    server: &crate::service::Server,
    meta: &TableMeta,
    bucket: i32,
    from: i64,
    target: &arrow_schema::SchemaRef,
) -> Result<(Vec<RecordBatch>, i64)> {
    let tb = crate::tablets::TableBucket {
        table_id: meta.entry.id,
        partition_id: None,
        bucket,
    };
    let b = server.tablets.get(&tb)?;
    let g = b.read().unwrap_or_else(|p| p.into_inner());
    let hw = g.log.high_watermark();
    let mut at = from.max(g.log.log_start_offset());
    if at < g.log.local_log_start_offset() {
        // Rows only in remote segments are not read back for the lake (yet).
        return Err(Error::unsupported(format!(
            "{tb}: lake tiering from offset {at}, which is only in remote storage now (local \
             log starts at {})",
            g.log.local_log_start_offset()
        )));
    }
    let mut out = Vec::new();
    while at < hw {
        let buf = g.log.read(at, READ_CHUNK, true)?;
        if buf.is_empty() {
            break;
        }
        let mut progressed = false;
        for item in LogBatchIter::new(&buf) {
            let lb = item?;
            if lb.next_offset() <= at {
                continue;
            }
            if lb.base_offset() >= hw {
                at = hw;
                break;
            }
            progressed = true;
            let schema = meta.arrow_of(lb.schema_id() as i32)?;
            let (_, rows) = lb.arrow_records(schema)?;
            let base = lb.base_offset();
            let skip = (at - base).max(0) as usize;
            let end = ((hw.min(lb.next_offset()) - base) as usize).min(rows.num_rows());
            if skip < end {
                let rows = rows.slice(skip, end - skip);
                out.push(with_system_columns(
                    &rows,
                    bucket,
                    base + skip as i64,
                    lb.commit_timestamp(),
                    target,
                )?);
            }
            at = lb.next_offset().min(hw);
        }
        if !progressed {
            break;
        }
    }
    Ok((out, at.max(from)))
}

/// `rows` (user columns of one log batch, possibly of an older schema with fewer columns)
/// with the system columns appended, every column cast to `target`'s type.
fn with_system_columns(
    rows: &RecordBatch,
    bucket: i32,
    first_offset: i64,
    commit_ts_ms: i64,
    target: &arrow_schema::SchemaRef,
) -> Result<RecordBatch> {
    let n = rows.num_rows();
    let user = target.fields().len() - 3;
    let mut cols: Vec<ArrayRef> = Vec::with_capacity(target.fields().len());
    for (i, f) in target.fields().iter().take(user).enumerate() {
        let col = match rows.columns().get(i) {
            Some(c) => arrow_cast::cast(c, f.data_type())
                .map_err(|e| lake_err(format!("column {}", f.name()), e))?,
            None => arrow_array::new_null_array(f.data_type(), n),
        };
        cols.push(col);
    }
    cols.push(Arc::new(Int32Array::from(vec![bucket; n])));
    cols.push(Arc::new(Int64Array::from_iter_values(
        (0..n as i64).map(|i| first_offset + i),
    )));
    let ts: ArrayRef = Arc::new(arrow_array::TimestampMillisecondArray::from(vec![
        commit_ts_ms;
        n
    ]));
    cols.push(
        arrow_cast::cast(&ts, target.field(user + 2).data_type())
            .map_err(|e| lake_err("__timestamp", e))?,
    );
    RecordBatch::try_new(target.clone(), cols).map_err(|e| lake_err("batch", e))
}
