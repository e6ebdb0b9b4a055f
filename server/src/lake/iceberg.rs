//! The Iceberg format of the lake tiering ([`super::LakeTableFormat`], `datalake.format =
//! iceberg`): the catalog, the table of each lake-enabled log table, and its commits.
//!
//! The Iceberg table is laid out as Fluss's Iceberg tiering lays it out: table
//! `<database>.<table>` in the catalog, the Fluss columns then the system columns `__bucket`
//! (int), `__offset` (long) and `__timestamp` (timestamptz, the batch's commit time), and
//! partitioned by `identity(<key>)` of each Fluss partition key (STRING keys only, as Fluss
//! 0.9.1's Iceberg lake catalog requires) then `identity(__bucket)` (lake tables here have no
//! bucket key), so a Fluss partition's rows are the Iceberg partitions holding its values (a
//! union read of selected partitions filters on them). Each commit is
//! an Iceberg append whose summary carries `commit-user = __fluss_lake_tiering` and
//! `fluss-offsets`, the path of the round's offsets file (Fluss's `TableBucketOffsets` JSON)
//! with the log offset each bucket is tiered up to (exclusive). Those are the offsets a union
//! read starts the Fluss log from. `ALTER TABLE ... ADD COLUMN` of a lake-enabled table is
//! refused, as Fluss 0.9.1's Iceberg lake catalog refuses it (the lake table keeps the columns
//! it was created with, so neither does the Fluss table get new ones).
//!
//! The catalog is Iceberg's SQL catalog on SQLite (by default `WAREHOUSE/catalog.db`), which
//! pyiceberg's `SqlCatalog` and Java's `JdbcCatalog` open too, or with
//! `datalake.iceberg.type = rest` an Iceberg REST catalog (`datalake.iceberg.uri`, and the
//! REST client's properties as `datalake.iceberg.*`); both are opened by
//! `riverlet::lake::open_catalog`, and the tiering is the same for either. The writing goes
//! through the iceberg crate (no hand-written Iceberg metadata); it is on arrow 58, reached
//! through the zero-copy bridge in [`super::bridge`]. Data and metadata files go where the
//! catalog places them, on local disk or on S3 (a REST catalog's `s3://` warehouse, with the
//! `datalake.iceberg.s3.*` and `client.*` FileIO properties; see `riverlet::lake::storage`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_schema::SchemaRef;
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
use riverlet::metadata::{AddColumn, DataType, TypeKind};
use riverlet::{Error, Result};

use super::{
    bridge, lake_err, path_of, read_offsets_file, LakeSnapshot, LakeTableFormat, TieredBatch,
    TieringRound, BUCKET_COLUMN, COMMIT_FAULT, COMMIT_USER, OFFSETS_PROPERTY, OFFSET_COLUMN,
    TIMESTAMP_COLUMN,
};
use crate::catalog::{PartitionEntry, TableMeta};

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

/// Why the Iceberg tiering cannot take this table (None: it can): iceberg 0.10.1 cannot
/// commit the delete files a primary-key table's changelog needs, the layout here is Fluss's
/// for log tables without a bucket key, and Fluss 0.9.1's Iceberg lake catalog partitions by
/// STRING partition keys only ("Partition key only support string type for iceberg
/// currently").
fn unsupported_reason(meta: &TableMeta) -> Option<String> {
    if meta.is_pk() {
        return Some("primary-key tables".into());
    }
    for k in &meta.partition_keys {
        let ty = meta
            .descriptor
            .schema
            .columns
            .iter()
            .position(|c| &c.name == k)
            .and_then(|i| meta.types.get(i));
        if !ty.is_some_and(|t| matches!(t.kind, TypeKind::String | TypeKind::Char { .. })) {
            return Some(format!(
                "partitioned tables whose partition key is not STRING (column '{k}'; Fluss's \
                 Iceberg lake partitions by STRING keys only)"
            ));
        }
    }
    if !meta.descriptor.bucket_keys.is_empty() {
        return Some("tables with a bucket key (bucket.key)".into());
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
        let parsed = read_offsets_file(&path_of(path));
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

/// An iceberg error as a Riverlet error naming `what`.
fn ice<T>(what: impl std::fmt::Display, r: iceberg::Result<T>) -> Result<T> {
    r.map_err(|e| lake_err(what, e))
}

/// The Iceberg lake of a server: its catalog.
pub(super) struct IcebergFormat {
    catalog: Arc<dyn Catalog>,
    /// The catalog's effective properties (`type`, `warehouse`, `uri`, `name`; a REST
    /// catalog's as configured).
    properties: BTreeMap<String, String>,
}

impl IcebergFormat {
    /// Opens (creating when missing) the catalog of the `datalake.iceberg.*` options `props`
    /// (without the prefix).
    pub(super) async fn open(props: BTreeMap<String, String>) -> Result<IcebergFormat> {
        let kind = props.get("type").map(String::as_str).unwrap_or("sql");
        if kind == "rest" {
            // the REST catalog decides where table files go; readers get the same properties
            if !props.contains_key("uri") {
                return Err(Error::invalid(
                    "datalake.iceberg.type is rest but datalake.iceberg.uri (the REST \
                     catalog's URI) is not set",
                ));
            }
            let catalog = riverlet::lake::open_catalog(&props, "datalake.iceberg").await?;
            return Ok(IcebergFormat {
                catalog,
                properties: props,
            });
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
        let catalog = riverlet::lake::open_catalog(&properties, "datalake.iceberg").await?;
        Ok(IcebergFormat {
            catalog,
            properties,
        })
    }
}

#[async_trait::async_trait]
impl LakeTableFormat for IcebergFormat {
    fn name(&self) -> &'static str {
        "iceberg"
    }

    fn properties(&self) -> &BTreeMap<String, String> {
        &self.properties
    }

    fn unsupported_reason(&self, meta: &TableMeta) -> Option<String> {
        unsupported_reason(meta)
    }

    /// An existing Iceberg table is taken over when it has the same schema and no snapshot
    /// (as Fluss's Paimon catalog takes over an empty compatible table; Fluss 0.9.1's Iceberg
    /// catalog refuses any existing table); one with another schema or holding rows is
    /// refused with LAKE_TABLE_ALREADY_EXIST.
    async fn create_table(&self, meta: &TableMeta) -> Result<()> {
        let c = &self.catalog;
        let schema = iceberg_schema(meta)?;
        let id = ident(meta)?;
        let ns = NamespaceIdent::new(meta.entry.database.clone());
        if !ice("namespace", c.namespace_exists(&ns).await)? {
            ice(
                format!("create namespace {}", meta.entry.database),
                c.create_namespace(&ns, HashMap::new()).await,
            )?;
        }
        if ice("table exists", c.table_exists(&id).await)? {
            let t = ice("load table", c.load_table(&id).await)?;
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
        // the spec id set explicitly: Iceberg-Java's REST servers reject a CreateTableRequest
        // whose partition spec has none ("Cannot parse missing int: spec-id"). Fluss's order:
        // the partition keys, then the bucket.
        let mut spec = UnboundPartitionSpec::builder().with_spec_id(0);
        for name in meta
            .partition_keys
            .iter()
            .map(String::as_str)
            .chain([BUCKET_COLUMN])
        {
            let id = schema
                .field_by_name(name)
                .map(|f| f.id)
                .ok_or_else(|| lake_err("schema", format!("no column {name}")))?;
            spec = spec
                .add_partition_field(id, name, Transform::Identity)
                .map_err(|e| lake_err("partition spec", e))?;
        }
        let spec = spec.build();
        let creation = TableCreation::builder()
            .name(meta.entry.name.clone())
            .schema(schema)
            .partition_spec(spec)
            .build();
        ice(
            format!("create Iceberg table {}", meta.path()),
            c.create_table(&ns, creation).await,
        )?;
        Ok(())
    }

    /// Refused, as Fluss 0.9.1 refuses it: its `IcebergLakeCatalog.alterTable` takes only
    /// SetOption and ResetOption ("Unsupported table change" for an AddColumn), and its
    /// coordinator alters the lake table before the Fluss schema, so the ALTER fails and the
    /// Fluss schema stays as it is.
    async fn add_columns(
        &self,
        current: &TableMeta,
        _altered: &TableMeta,
        columns: &[AddColumn],
    ) -> Result<()> {
        let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
        Err(Error::from_fluss(
            riverlet::error::codes::INVALID_ALTER_TABLE_EXCEPTION,
            format!(
                "ALTER TABLE {} ADD COLUMN {}: the table is lake-enabled and its Iceberg lake \
                 table takes no new columns (Fluss 0.9.1's Iceberg lake catalog alters only \
                 table options: Unsupported table change AddColumn); the table's schema is \
                 unchanged",
                current.path(),
                names.join(", ")
            ),
        ))
    }

    async fn begin_round(&self, meta: &TableMeta) -> Result<Box<dyn TieringRound>> {
        let id = ident(meta)?;
        let table = ice(
            format!("load Iceberg table {}", meta.path()),
            self.catalog.load_table(&id).await,
        )?;
        let ice_schema = table.metadata().current_schema().clone();
        let arrow58 = Arc::new(ice(
            "arrow schema",
            iceberg::arrow::schema_to_arrow_schema(&ice_schema),
        )?);
        let ours = bridge::schema_from_58(&arrow58)?;
        Ok(Box::new(IcebergRound {
            catalog: self.catalog.clone(),
            path: meta.path(),
            table,
            ice_schema,
            arrow58,
            ours,
            prefix: uuid::Uuid::new_v4().to_string(),
            files: Vec::new(),
            partition_keys: meta.partition_keys.clone(),
        }))
    }

    async fn tiering_snapshots(&self, meta: &TableMeta) -> Result<Vec<LakeSnapshot>> {
        let id = ident(meta)?;
        let t = ice("load table", self.catalog.load_table(&id).await)?;
        snapshots_of(&t, meta)
    }
}

/// One commit round of an Iceberg table: the data files written so far.
struct IcebergRound {
    catalog: Arc<dyn Catalog>,
    path: String,
    table: iceberg::table::Table,
    ice_schema: iceberg::spec::SchemaRef,
    arrow58: Arc<arrow_schema_58::Schema>,
    ours: SchemaRef,
    /// The data files' name prefix (fresh each round).
    prefix: String,
    files: Vec<iceberg::spec::DataFile>,
    /// The Fluss partition keys (the first fields of the partition spec).
    partition_keys: Vec<String>,
}

#[async_trait::async_trait]
impl TieringRound for IcebergRound {
    fn schema(&self) -> SchemaRef {
        self.ours.clone()
    }

    fn latest_tiering_snapshot(&self) -> Option<i64> {
        latest_tiering_snapshot(&self.table)
    }

    /// A fresh name each round: the snapshot's `fluss-offsets` names the file.
    fn offsets_file_name(&self, table_id: i64) -> String {
        format!("{table_id}-{}.offsets", uuid::Uuid::new_v4())
    }

    /// Parquet data files under the table's `data/` (`<uuid>-b<bucket>-*.parquet`), in the
    /// Iceberg partition of the Fluss partition's values and `__bucket`.
    async fn write_bucket(
        &mut self,
        partition: Option<&PartitionEntry>,
        bucket: i32,
        batches: Vec<TieredBatch>,
    ) -> Result<()> {
        // the values in the spec's order: each partition key's, then the bucket
        let mut values = Vec::with_capacity(self.partition_keys.len() + 1);
        for k in &self.partition_keys {
            let v = partition
                .and_then(|p| p.spec.iter().find(|(name, _)| name == k))
                .map(|(_, v)| v.clone())
                .ok_or_else(|| {
                    lake_err(
                        "partition",
                        format!("table {}: no value of partition key {k}", self.path),
                    )
                })?;
            values.push(Some(Literal::string(v)));
        }
        values.push(Some(Literal::int(bucket)));
        let location = ice(
            "location",
            DefaultLocationGenerator::new(self.table.metadata()),
        )?;
        let names = DefaultFileNameGenerator::new(
            format!("{}-b{bucket}", self.prefix),
            None,
            DataFileFormat::Parquet,
        );
        let pw = ParquetWriterBuilder::new(Default::default(), self.ice_schema.clone());
        let rolling = RollingFileWriterBuilder::new_with_default_file_size(
            pw,
            self.table.file_io().clone(),
            location,
            names,
        );
        let key = PartitionKey::new(
            self.table
                .metadata()
                .default_partition_spec()
                .as_ref()
                .clone(),
            self.ice_schema.clone(),
            Struct::from_iter(values),
        );
        let mut w = ice(
            "data file writer",
            DataFileWriterBuilder::new(rolling).build(Some(key)).await,
        )?;
        for b in batches {
            let b58 = bridge::batch_to_58(b.rows, self.arrow58.clone())?;
            ice("write", w.write(b58).await)?;
        }
        self.files.extend(ice("close data file", w.close().await)?);
        Ok(())
    }

    /// An Iceberg fast append whose summary holds `fluss-offsets` and `commit-user`.
    async fn commit(&mut self, offsets_file: &Path) -> Result<(i64, i64)> {
        let props = HashMap::from([
            (
                OFFSETS_PROPERTY.to_string(),
                offsets_file.display().to_string(),
            ),
            ("commit-user".to_string(), COMMIT_USER.to_string()),
        ]);
        let tx = Transaction::new(&self.table);
        let tx = ice(
            "append",
            tx.fast_append()
                .add_data_files(std::mem::take(&mut self.files))
                .set_snapshot_properties(props)
                .apply(tx),
        )?;
        let what = format!("commit to Iceberg table {}", self.path);
        let table = if matches!(COMMIT_FAULT.step(), Ok(Some("manifests"))) {
            ice(
                what,
                tx.commit(&FaultBeforeUpdate(self.catalog.clone())).await,
            )?
        } else {
            ice(what, tx.commit(self.catalog.as_ref()).await)?
        };
        let snap = table
            .metadata()
            .current_snapshot()
            .ok_or_else(|| lake_err("commit", "no current snapshot after the commit"))?;
        Ok((snap.snapshot_id(), snap.timestamp_ms()))
    }
}
