//! The Paimon format of the lake tiering ([`super::LakeTableFormat`], `datalake.format =
//! paimon`, Fluss's default lake format): the filesystem catalog of the `datalake.paimon.*`
//! options, the Paimon table of each lake-enabled table, and its commits, through the paimon
//! crate (no hand-written Paimon files).
//!
//! The layout is Fluss 0.9.1's (`fluss-lake-paimon`, `PaimonConversions.toPaimonSchema`):
//! table `<database>.<table>` (a missing database is created); the Fluss columns (types 1:1)
//! then `__bucket` INT, `__offset` BIGINT, `__timestamp` TIMESTAMP_LTZ(3); partition keys =
//! Fluss's, with `partition.legacy-name = false`; with a bucket key (every primary-key table
//! has one) `bucket` = the Fluss bucket count and `bucket-key` = the Fluss bucket keys, and each
//! Fluss bucket's rows are written into the Paimon bucket of the same number (the crate's
//! `write_arrow(.., Some(bucket))`, as Fluss's writer bypasses Paimon's bucket function);
//! without one `bucket = -1` (a bucket-unaware append table, every row in Paimon bucket 0, the
//! Fluss bucket only in `__bucket`). A primary-key table gets the Fluss primary key and
//! `changelog-producer = input`, and no merge engine (Paimon's deduplicate), as Fluss sets
//! none: the changelog tiered is the Fluss table's merged result already (its merge engine,
//! first-row, versioned, aggregation or partial update, decided each -U/+U), so the last change
//! per key is the table's state. Each change goes in with its row kind (+I, -U, +U, -D as the
//! crate's trailing `_VALUE_KIND` column; a log table's rows are +I). Table properties
//! `paimon.X` become Paimon options `X`; every other property `fluss.<key>`; `bucket`,
//! `bucket-key`, `path` and `partition.legacy-name` cannot be set (Fluss's error).
//!
//! `ALTER TABLE ... ADD COLUMN` (nullable, last) of a lake-enabled table alters the Paimon
//! table first, as Fluss 0.9.1's `PaimonLakeCatalog.alterTable` does: each new column (with
//! its comment) goes in before the first system column `__bucket`, so the Paimon columns stay
//! the Fluss columns then the system ones; data files written before keep their schema id and
//! Paimon's readers fill the new column with NULL for them. When the Paimon table already has
//! the new columns (an earlier ALTER altered it, then the server died before the Fluss schema
//! was stored) the lake part is skipped; a Paimon table matching neither the Fluss table nor
//! the altered one refuses the ALTER (InvalidAlterTableException naming both schemas).
//!
//! Where the offsets go (a deviation from Fluss): Fluss records each round's offsets file as
//! the Paimon snapshot property `fluss-offsets`; the crate has no way to set snapshot
//! properties, so here each round commits with commit user `__fluss_lake_tiering` and its own
//! commit identifier (the newest tiering snapshot's plus one; Fluss uses Long.MAX_VALUE for
//! every round), and the offsets file, written and synced BEFORE the commit, is
//! `DATA_DIR/lake-offsets/<table id>-paimon-<commit identifier>.offsets`. The newest Paimon
//! snapshot of that commit user thus leads to its offsets file, which is how a restart (and a
//! round whose previous commit's outcome was not seen) resumes. The commit is
//! `filter_and_commit_with_identifier`, so a retried identifier is never committed twice.
//! Fluss's own tiering service, pointed at such a lake, would find no `fluss-offsets` property
//! on these snapshots (its committer then fails to recover with "Failed to load committed
//! lake snapshot properties"); Riverlet's own reads take the offsets from GetLakeSnapshot.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Int8Array, RecordBatch};
use arrow_schema::SchemaRef;
use paimon::catalog::Identifier;
use paimon::spec::{
    BigIntType, BinaryType, BooleanType, CharType, ColumnMove, DataType as PType, DateType,
    DecimalType, DoubleType, FloatType, IntType, LocalZonedTimestampType, Schema as PaimonSchema,
    SchemaChange, SmallIntType, TimeType, TimestampType, TinyIntType, VarBinaryType, VarCharType,
};
use paimon::Catalog;
use riverlet::lake::paimon_err;
use riverlet::metadata::{AddColumn, DataType, TypeKind};
use riverlet::record::ChangeType;
use riverlet::{Error, Result};

use super::{
    bridge, lake_err, read_offsets_file, LakeSnapshot, LakeTableFormat, TieredBatch, TieringRound,
    BUCKET_COLUMN, COMMIT_USER, OFFSET_COLUMN, TIMESTAMP_COLUMN,
};
use crate::catalog::{PartitionEntry, TableMeta};

/// The trailing Int8 column of a primary-key table's write batches that carries each row's
/// kind (the crate's name, Paimon's `RowKind` bytes).
const VALUE_KIND_COLUMN: &str = "_VALUE_KIND";

/// Options Fluss sets itself and refuses from users (`PAIMON_UNSETTABLE_OPTIONS`).
const UNSETTABLE_OPTIONS: [&str; 4] = ["bucket", "bucket-key", "path", "partition.legacy-name"];

/// A paimon error as a Riverlet error naming `what` (the kinds of `riverlet::lake::paimon_err`,
/// with the tiering's wording).
fn perr(what: impl std::fmt::Display, e: paimon::Error) -> Error {
    let e = paimon_err(what, e);
    Error::new(
        e.kind(),
        e.message().replacen("lake read: ", "lake tiering: ", 1),
    )
}

/// Paimon's row kind byte of a Fluss change type (Fluss's `PaimonConversions.toRowKind`).
fn row_kind(c: ChangeType) -> i8 {
    match c {
        ChangeType::AppendOnly | ChangeType::Insert => 0,
        ChangeType::UpdateBefore => 1,
        ChangeType::UpdateAfter => 2,
        ChangeType::Delete => 3,
    }
}

/// The Paimon type of a Fluss column type (Fluss's `FlussDataTypeToPaimonDataType`: one to
/// one, STRING = VARCHAR(max), BYTES = VARBINARY(max)).
fn paimon_type(t: &DataType) -> Result<PType> {
    let n = t.nullable;
    let bad = |e: paimon::Error| lake_err(format!("the Paimon type of {t}"), e);
    Ok(match &t.kind {
        TypeKind::Boolean => PType::Boolean(BooleanType::with_nullable(n)),
        TypeKind::TinyInt => PType::TinyInt(TinyIntType::with_nullable(n)),
        TypeKind::SmallInt => PType::SmallInt(SmallIntType::with_nullable(n)),
        TypeKind::Int => PType::Int(IntType::with_nullable(n)),
        TypeKind::BigInt => PType::BigInt(BigIntType::with_nullable(n)),
        TypeKind::Float => PType::Float(FloatType::with_nullable(n)),
        TypeKind::Double => PType::Double(DoubleType::with_nullable(n)),
        TypeKind::Decimal { precision, scale } => {
            PType::Decimal(DecimalType::with_nullable(n, *precision, *scale).map_err(bad)?)
        }
        TypeKind::Char { length } => {
            PType::Char(CharType::with_nullable(n, *length as usize).map_err(bad)?)
        }
        TypeKind::String => {
            PType::VarChar(VarCharType::with_nullable(n, VarCharType::MAX_LENGTH).map_err(bad)?)
        }
        TypeKind::Binary { length } => {
            PType::Binary(BinaryType::with_nullable(n, *length as usize).map_err(bad)?)
        }
        TypeKind::Bytes => {
            PType::VarBinary(VarBinaryType::try_new(n, VarBinaryType::MAX_LENGTH).map_err(bad)?)
        }
        TypeKind::Date => PType::Date(DateType::with_nullable(n)),
        TypeKind::Time { precision } => {
            PType::Time(TimeType::with_nullable(n, *precision).map_err(bad)?)
        }
        TypeKind::Timestamp { precision } => {
            PType::Timestamp(TimestampType::with_nullable(n, *precision).map_err(bad)?)
        }
        TypeKind::TimestampLtz { precision } => PType::LocalZonedTimestamp(
            LocalZonedTimestampType::with_nullable(n, *precision).map_err(bad)?,
        ),
        TypeKind::Array(_) | TypeKind::Map(..) | TypeKind::Row(_) => {
            return Err(Error::unsupported(format!(
                "lake tiering of {t} columns is not supported by the embedded server"
            )))
        }
    })
}

/// The Fluss table property that turns on Paimon deletion vectors (Paimon's
/// `deletion-vectors.enabled`, passed through as every `paimon.X` is).
const DELETION_VECTORS_PROPERTY: &str = "paimon.deletion-vectors.enabled";

/// Whether the table asks for a Paimon deletion-vector table.
fn deletion_vectors_enabled(meta: &TableMeta) -> bool {
    let d = &meta.descriptor;
    d.properties
        .iter()
        .chain(&d.custom_properties)
        .any(|(k, v)| k == DELETION_VECTORS_PROPERTY && v.trim().eq_ignore_ascii_case("true"))
}

/// The Paimon options of a Fluss table: Fluss's defaults and layout, then its properties
/// (`paimon.X` as `X`, the others as `fluss.<key>`).
fn paimon_options(meta: &TableMeta) -> Result<Vec<(String, String)>> {
    let d = &meta.descriptor;
    let mut out = vec![("partition.legacy-name".to_string(), "false".to_string())];
    let bucket_keys = d.effective_bucket_keys();
    if bucket_keys.is_empty() {
        out.push(("bucket".into(), "-1".into()));
    } else {
        out.push(("bucket".into(), meta.buckets.to_string()));
        out.push(("bucket-key".into(), bucket_keys.join(",")));
    }
    if meta.is_pk() {
        out.push(("changelog-producer".into(), "input".into()));
    }
    for (k, v) in d.properties.iter().chain(&d.custom_properties) {
        let paimon_key = k.strip_prefix("paimon.").unwrap_or(k);
        if UNSETTABLE_OPTIONS.contains(&paimon_key) {
            return Err(Error::invalid(format!(
                "The Paimon option {k} will be set automatically by Fluss and should not be \
                 set manually."
            )));
        }
        if let Some(p) = k.strip_prefix("paimon.") {
            out.push((p.to_string(), v.clone()));
        } else if !k.starts_with(riverlet::lake::PAIMON_PROPERTY_PREFIX) {
            out.push((format!("fluss.{k}"), v.clone()));
        }
    }
    Ok(out)
}

/// The Paimon schema of a Fluss table (see the module doc).
fn paimon_schema(meta: &TableMeta) -> Result<PaimonSchema> {
    let mut b = PaimonSchema::builder();
    for (c, t) in meta.descriptor.schema.columns.iter().zip(&meta.types) {
        if [BUCKET_COLUMN, OFFSET_COLUMN, TIMESTAMP_COLUMN].contains(&c.name.as_str()) {
            return Err(Error::invalid(format!(
                "Column {} conflicts with a system column name of paimon table, please rename \
                 the column.",
                c.name
            )));
        }
        b = b.column_with_description(c.name.clone(), paimon_type(t)?, c.comment.clone());
    }
    b = b
        .column(BUCKET_COLUMN, PType::Int(IntType::new()))
        .column(OFFSET_COLUMN, PType::BigInt(BigIntType::new()))
        .column(
            TIMESTAMP_COLUMN,
            PType::LocalZonedTimestamp(
                LocalZonedTimestampType::new(3).map_err(|e| lake_err("__timestamp", e))?,
            ),
        );
    if let Some(pk) = &meta.descriptor.schema.primary_key {
        b = b.primary_key(pk.iter().cloned());
    }
    b = b
        .partition_keys(meta.partition_keys.iter().cloned())
        .options(paimon_options(meta)?)
        .comment(meta.descriptor.comment.clone());
    b.build()
        .map_err(|e| perr(format!("the Paimon schema of {}", meta.path()), e))
}

/// Whether the Paimon table's schema `have` is laid out as `want` (Fluss's
/// `isPaimonSchemaCompatible`): the same columns in order (name, type, comment; field ids
/// aside), primary and partition keys, table comment, and each option `want` sets with the
/// same value (options the table has beyond them do not matter).
fn same_layout(have: &paimon::spec::TableSchema, want: &PaimonSchema) -> bool {
    have.fields().len() == want.fields().len()
        && have.fields().iter().zip(want.fields()).all(|(a, b)| {
            a.name() == b.name()
                && a.data_type() == b.data_type()
                && a.description() == b.description()
        })
        && have.primary_keys() == want.primary_keys()
        && have.partition_keys() == want.partition_keys()
        && have.comment() == want.comment()
        && want
            .options()
            .iter()
            .all(|(k, v)| have.options().get(k) == Some(v))
}

/// `name TYPE, ...` of Paimon columns, for messages.
fn layout_text(fields: &[paimon::spec::DataField]) -> String {
    let cols: Vec<String> = fields
        .iter()
        .map(|f| format!("{} {}", f.name(), f.data_type()))
        .collect();
    format!("({})", cols.join(", "))
}

fn ident(meta: &TableMeta) -> Identifier {
    Identifier::new(meta.entry.database.clone(), meta.entry.name.clone())
}

/// The newest snapshot of `table` the tiering committed (commit user
/// `__fluss_lake_tiering`): its id and commit identifier.
async fn latest_tiering_snapshot(table: &paimon::Table) -> Result<Option<(i64, i64)>> {
    let sm = table.snapshot_manager();
    let Some(latest) = sm
        .get_latest_snapshot_id()
        .await
        .map_err(|e| perr("the latest Paimon snapshot", e))?
    else {
        return Ok(None);
    };
    let earliest = sm
        .earliest_snapshot_id()
        .await
        .map_err(|e| perr("the earliest Paimon snapshot", e))?
        .unwrap_or(latest);
    // newest first: usually the latest snapshot is the tiering's own
    for id in (earliest..=latest).rev() {
        let s = sm
            .get_snapshot(id)
            .await
            .map_err(|e| perr(format!("Paimon snapshot {id}"), e))?;
        if s.commit_user() == COMMIT_USER {
            return Ok(Some((s.id(), s.commit_identifier())));
        }
    }
    Ok(None)
}

/// The Paimon lake of a server: its filesystem catalog.
pub(super) struct PaimonFormat {
    catalog: Arc<dyn Catalog>,
    /// `metastore`, `warehouse` (a local one made absolute) and the `s3.*` options.
    properties: BTreeMap<String, String>,
    /// Where the offsets files are (`DATA_DIR/lake-offsets`).
    offsets_dir: PathBuf,
}

impl PaimonFormat {
    /// Opens the filesystem catalog of the `datalake.paimon.*` options `props` (without the
    /// prefix); a local warehouse directory is created when missing.
    pub(super) async fn open(
        mut props: BTreeMap<String, String>,
        offsets_dir: PathBuf,
    ) -> Result<PaimonFormat> {
        let Some(warehouse) = props.get("warehouse").cloned() else {
            return Err(Error::invalid(
                "datalake.format is paimon but datalake.paimon.warehouse is not set: the \
                 Paimon filesystem catalog needs a warehouse (a local directory or an s3:// \
                 URL)",
            ));
        };
        props
            .entry("metastore".into())
            .or_insert_with(|| "filesystem".into());
        if !warehouse.contains("://") || warehouse.starts_with("file://") {
            let dir = PathBuf::from(warehouse.strip_prefix("file://").unwrap_or(&warehouse));
            std::fs::create_dir_all(&dir).map_err(|e| {
                Error::from(e).context(format!("datalake.paimon.warehouse {}", dir.display()))
            })?;
            let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
            props.insert("warehouse".into(), dir.display().to_string());
        }
        let catalog = riverlet::lake::open_paimon_catalog(&props, "datalake.paimon").await?;
        Ok(PaimonFormat {
            catalog,
            properties: props,
            offsets_dir,
        })
    }

    async fn load(&self, meta: &TableMeta) -> Result<paimon::Table> {
        self.catalog
            .get_table(&ident(meta))
            .await
            .map_err(|e| perr(format!("load the Paimon table {}", meta.path()), e))
    }

    /// The offsets file of the round committed with `identifier`.
    fn offsets_file(&self, table_id: i64, identifier: i64) -> PathBuf {
        self.offsets_dir
            .join(offsets_file_name(table_id, identifier))
    }
}

fn offsets_file_name(table_id: i64, identifier: i64) -> String {
    format!("{table_id}-paimon-{identifier}.offsets")
}

#[async_trait::async_trait]
impl LakeTableFormat for PaimonFormat {
    fn name(&self) -> &'static str {
        "paimon"
    }

    fn properties(&self) -> &BTreeMap<String, String> {
        &self.properties
    }

    /// Columns of a type the tiering does not map (nested types), and deletion-vector tables;
    /// a bad option or a column named like a system column is refused by
    /// [`LakeTableFormat::create_table`] instead, as Fluss refuses it.
    fn unsupported_reason(&self, meta: &TableMeta) -> Option<String> {
        if let Some(t) = meta.types.iter().find(|t| paimon_type(t).is_err()) {
            return Some(format!("{t} columns"));
        }
        deletion_vectors_enabled(meta).then(|| {
            format!(
                "deletion-vector tables ({DELETION_VECTORS_PROPERTY} = true): the paimon \
                 crate writes only level-0 files and cannot compact them, and a deletion-vector \
                 read skips level-0 files, so the rows tiered would not be readable from the \
                 lake while the union read skipped them in the log"
            )
        })
    }

    /// An existing Paimon table is taken over when its columns, primary key and partition
    /// keys are the ones this table gets and it has no snapshot (Fluss's Paimon catalog takes
    /// over an empty compatible table); otherwise LAKE_TABLE_ALREADY_EXIST.
    async fn create_table(&self, meta: &TableMeta) -> Result<()> {
        let schema = paimon_schema(meta)?;
        self.catalog
            .create_database(&meta.entry.database, true, HashMap::new())
            .await
            .map_err(|e| perr(format!("create Paimon database {}", meta.entry.database), e))?;
        match self
            .catalog
            .create_table(&ident(meta), schema.clone(), false)
            .await
        {
            Ok(()) => Ok(()),
            Err(paimon::Error::TableAlreadyExist { .. }) => {
                let t = self.load(meta).await?;
                let have = t.schema();
                let same = have.fields().len() == schema.fields().len()
                    && have
                        .fields()
                        .iter()
                        .zip(schema.fields())
                        .all(|(a, b)| a.name() == b.name() && a.data_type() == b.data_type())
                    && have.primary_keys() == schema.primary_keys()
                    && have.partition_keys() == schema.partition_keys();
                if !same {
                    return Err(Error::from_fluss(
                        riverlet::error::codes::LAKE_TABLE_ALREADY_EXIST,
                        format!(
                            "The table {} already exists in the Paimon catalog with another \
                             schema; drop it there first or use another table name.",
                            meta.path()
                        ),
                    ));
                }
                let latest = t
                    .snapshot_manager()
                    .get_latest_snapshot_id()
                    .await
                    .map_err(|e| perr("the latest Paimon snapshot", e))?;
                if let Some(id) = latest {
                    return Err(Error::from_fluss(
                        riverlet::error::codes::LAKE_TABLE_ALREADY_EXIST,
                        format!(
                            "The table {} already exists in the Paimon catalog and is not \
                             empty (snapshot {id}, left by a dropped table of the same \
                             name?); drop it there first or use another table name.",
                            meta.path()
                        ),
                    ));
                }
                Ok(())
            }
            Err(e) => Err(perr(format!("create Paimon table {}", meta.path()), e)),
        }
    }

    /// Fluss's `PaimonLakeCatalog.alterTable` for ADD COLUMN: the Paimon table laid out as
    /// `current` is now gets the columns before `__bucket`; laid out as `altered` already, it
    /// is left as it is; otherwise the ALTER is refused, naming both schemas.
    async fn add_columns(
        &self,
        current: &TableMeta,
        altered: &TableMeta,
        columns: &[AddColumn],
    ) -> Result<()> {
        let path = current.path();
        let t = match self.catalog.get_table(&ident(current)).await {
            Ok(t) => t,
            // Fluss's coordinator words it so
            Err(paimon::Error::TableNotExist { .. }) => {
                return Err(Error::internal(format!(
                    "Lake table doesn't exist for lake-enabled table {path}, which shouldn't \
                     happen. Please check if the lake table was deleted manually."
                )))
            }
            Err(e) => return Err(perr(format!("load the Paimon table {path}"), e)),
        };
        let have = t.schema();
        if same_layout(have, &paimon_schema(altered)?) {
            tracing::info!("{path}: the Paimon table has the added column(s) already");
            return Ok(());
        }
        let now = paimon_schema(current)?;
        if !same_layout(have, &now) {
            return Err(Error::from_fluss(
                riverlet::error::codes::INVALID_ALTER_TABLE_EXCEPTION,
                format!(
                    "Paimon schema is not compatible with Fluss schema: Paimon schema: {}, \
                     Fluss schema: {}. therefore you need to add the diff columns all at \
                     once, rather than applying other table changes: ADD COLUMN {} (table \
                     {path})",
                    layout_text(have.fields()),
                    layout_text(now.fields()),
                    columns
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        let mut changes = Vec::with_capacity(columns.len());
        for c in columns {
            let data_type = paimon_type(&c.data_type).map_err(|e| {
                Error::new(
                    e.kind(),
                    format!("ALTER TABLE {path} ADD COLUMN {}: {}", c.name, e.message()),
                )
            })?;
            changes.push(SchemaChange::AddColumn {
                field_names: vec![c.name.clone()],
                data_type,
                comment: c.comment.clone(),
                column_move: Some(ColumnMove::move_before(
                    c.name.clone(),
                    BUCKET_COLUMN.to_string(),
                )),
            });
        }
        self.catalog
            .alter_table(&ident(current), changes, false)
            .await
            .map_err(|e| match e {
                paimon::Error::ColumnAlreadyExist { .. } | paimon::Error::ColumnNotExist { .. } => {
                    Error::from_fluss(
                        riverlet::error::codes::INVALID_ALTER_TABLE_EXCEPTION,
                        format!("ALTER TABLE {path}: the Paimon table: {e}"),
                    )
                }
                e => perr(format!("add column(s) to the Paimon table {path}"), e),
            })
    }

    async fn begin_round(&self, meta: &TableMeta) -> Result<Box<dyn TieringRound>> {
        let table = self.load(meta).await?;
        let latest = latest_tiering_snapshot(&table).await?;
        let arrow58 = paimon::arrow::build_target_arrow_schema(table.schema().fields())
            .map_err(|e| perr("the Paimon table's arrow schema", e))?;
        let ours = bridge::schema_from_58(&arrow58)?;
        let pk = !table.schema().primary_keys().is_empty();
        let with_kind = if pk {
            let mut fields: Vec<_> = arrow58.fields().iter().cloned().collect();
            fields.push(Arc::new(arrow_schema_58::Field::new(
                VALUE_KIND_COLUMN,
                arrow_schema_58::DataType::Int8,
                false,
            )));
            Arc::new(arrow_schema_58::Schema::new(fields))
        } else {
            arrow58.clone()
        };
        let fixed_buckets = table
            .schema()
            .options()
            .get("bucket")
            .and_then(|b| b.trim().parse::<i32>().ok())
            .is_some_and(|b| b > 0);
        let write = table
            .new_write_builder()
            .with_commit_user(COMMIT_USER)
            .and_then(|b| b.new_write())
            .map_err(|e| perr(format!("write to the Paimon table {}", meta.path()), e))?;
        Ok(Box::new(PaimonRound {
            path: meta.path(),
            table,
            write,
            identifier: latest.map_or(1, |(_, i)| i + 1),
            latest: latest.map(|(id, _)| id),
            ours,
            write_schema: with_kind,
            pk,
            fixed_buckets,
        }))
    }

    async fn tiering_snapshots(&self, meta: &TableMeta) -> Result<Vec<LakeSnapshot>> {
        let table = self.load(meta).await?;
        let latest = latest_tiering_snapshot(&table).await?.map(|(id, _)| id);
        let mut snaps = table
            .snapshot_manager()
            .list_all()
            .await
            .map_err(|e| perr("list the Paimon snapshots", e))?;
        snaps.sort_by_key(|s| s.id());
        let mut out = Vec::new();
        for s in snaps.iter().filter(|s| s.commit_user() == COMMIT_USER) {
            let file = self.offsets_file(meta.entry.id, s.commit_identifier());
            match read_offsets_file(&file) {
                Ok((table_id, offsets)) if table_id == meta.entry.id => out.push(LakeSnapshot {
                    snapshot_id: s.id(),
                    committed_at: s.time_millis() as i64,
                    offsets,
                }),
                Ok(_) => continue,
                Err(e) if Some(s.id()) == latest => {
                    return Err(Error::corrupt(format!(
                        "lake: the offsets file {} of snapshot {} (the newest the tiering \
                         committed, commit identifier {}) of the Paimon table of {}: {e}; the \
                         tiering of this table stops rather than tier rows twice",
                        file.display(),
                        s.id(),
                        s.commit_identifier(),
                        meta.path()
                    )));
                }
                Err(_) => continue,
            }
        }
        Ok(out)
    }
}

/// One commit round of a Paimon table: its open writer (files written so far).
struct PaimonRound {
    path: String,
    table: paimon::Table,
    write: paimon::table::TableWrite,
    /// This round's commit identifier.
    identifier: i64,
    /// The newest tiering snapshot's id when the round began.
    latest: Option<i64>,
    /// The table's columns (workspace arrow).
    ours: SchemaRef,
    /// What the writer takes (arrow 58): the columns, plus `_VALUE_KIND` for a primary-key
    /// table.
    write_schema: Arc<arrow_schema_58::Schema>,
    pk: bool,
    /// `bucket` > 0: each Fluss bucket is the Paimon bucket of its number.
    fixed_buckets: bool,
}

#[async_trait::async_trait]
impl TieringRound for PaimonRound {
    fn schema(&self) -> SchemaRef {
        self.ours.clone()
    }

    fn latest_tiering_snapshot(&self) -> Option<i64> {
        self.latest
    }

    /// Keyed by the commit identifier the commit will carry (see the module doc).
    fn offsets_file_name(&self, table_id: i64) -> String {
        offsets_file_name(table_id, self.identifier)
    }

    /// Data files in the partition's `bucket-N/` (and, for a primary-key table, changelog
    /// files of the same rows).
    async fn write_bucket(
        &mut self,
        _partition: Option<&PartitionEntry>,
        bucket: i32,
        batches: Vec<TieredBatch>,
    ) -> Result<()> {
        let mut out = Vec::with_capacity(batches.len());
        for b in batches {
            let rows = if self.pk {
                let n = b.rows.num_rows();
                let kinds: Int8Array = match &b.kinds {
                    Some(k) => k.iter().map(|c| Some(row_kind(*c))).collect(),
                    None => std::iter::repeat_n(Some(0i8), n).collect(),
                };
                let mut cols = b.rows.columns().to_vec();
                cols.push(Arc::new(kinds));
                let mut fields: Vec<_> = b.rows.schema().fields().iter().cloned().collect();
                fields.push(Arc::new(arrow_schema::Field::new(
                    VALUE_KIND_COLUMN,
                    arrow_schema::DataType::Int8,
                    false,
                )));
                RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), cols)
                    .map_err(|e| lake_err("row kinds", e))?
            } else {
                b.rows
            };
            out.push(bridge::batch_to_58(rows, self.write_schema.clone())?);
        }
        // a partition's rows all carry its values, from which the crate places them
        let target = self.fixed_buckets.then_some(bucket);
        self.write
            .write_arrow(&out, target)
            .await
            .map_err(|e| perr(format!("write bucket {bucket} of {}", self.path), e))
    }

    /// `filter_and_commit_with_identifier` as `__fluss_lake_tiering`, identifier
    /// [`PaimonRound::identifier`].
    async fn commit(&mut self, _offsets_file: &Path) -> Result<(i64, i64)> {
        let messages = self
            .write
            .prepare_commit()
            .await
            .map_err(|e| perr(format!("prepare the commit to {}", self.path), e))?;
        let commit = self
            .table
            .new_write_builder()
            .with_commit_user(COMMIT_USER)
            .and_then(|b| b.try_new_commit())
            .map_err(|e| perr(format!("commit to the Paimon table {}", self.path), e))?;
        commit
            .filter_and_commit_with_identifier(messages, self.identifier)
            .await
            .map_err(|e| perr(format!("commit to the Paimon table {}", self.path), e))?;
        // the snapshot that carries this round's identifier
        let sm = self.table.snapshot_manager();
        let mut id = sm
            .get_latest_snapshot_id()
            .await
            .map_err(|e| perr("the latest Paimon snapshot", e))?;
        while let Some(i) = id.filter(|i| *i > 0) {
            let s = sm
                .get_snapshot(i)
                .await
                .map_err(|e| perr(format!("Paimon snapshot {i}"), e))?;
            if s.commit_user() == COMMIT_USER && s.commit_identifier() == self.identifier {
                // Not newer than the round's start: the identifier was committed before (by
                // another writer of this warehouse) and the commit skipped ours; recording
                // these offsets against that snapshot would lose this round's rows.
                if self.latest.is_some_and(|l| s.id() <= l) {
                    return Err(Error::internal(format!(
                        "lake tiering: commit identifier {} of {} was already committed (Paimon \
                         snapshot {}) by another writer; this round's files were not committed",
                        self.identifier,
                        self.path,
                        s.id()
                    )));
                }
                return Ok((s.id(), s.time_millis() as i64));
            }
            id = Some(i - 1);
        }
        Err(lake_err(
            format!("commit to the Paimon table {}", self.path),
            format!(
                "no snapshot with commit identifier {} after the commit",
                self.identifier
            ),
        ))
    }
}
