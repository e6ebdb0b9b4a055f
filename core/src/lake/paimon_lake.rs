//! The Paimon half of the lake reads: the catalog a lake-enabled table's
//! `table.datalake.paimon.*` properties name (Paimon's filesystem catalog on local disk or S3,
//! or a REST catalog: the paimon crate's `metastore` option), the rows of a snapshot (the
//! crate merges a primary-key table's files by key as Paimon does, so a read is the lake's
//! latest state per key), and the snapshots as Paimon's `t$snapshots` lists them.
//!
//! Fluss lays a table out in Paimon as `<database>.<table>`, with its columns and then
//! `__bucket`, `__offset`, `__timestamp`; a table with a bucket key keeps each Fluss bucket in
//! the Paimon bucket of the same number, one without writes every bucket to Paimon bucket 0
//! and keeps the Fluss bucket only in `__bucket`. A read of some buckets therefore keeps the
//! splits of those Paimon buckets when the table has fixed buckets, and then, in every layout,
//! the rows whose `__bucket` is one of them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_array::{Array, RecordBatch};
use arrow_schema::SchemaRef;
use futures::stream::BoxStream;
use futures::StreamExt as _;
use paimon::catalog::Identifier;
use paimon::{Catalog, CatalogFactory, Options};

use super::{
    bridge, conform, lake_err, of_buckets, of_partitions, snapshots_schema, LakeFormat,
    SYSTEM_COLUMNS,
};
use crate::client::Table;
use crate::{Error, ErrorKind, Result};

/// The prefix of the Paimon catalog properties in a lake-enabled table's info (Fluss's
/// `table.datalake.<format>.*`, format paimon).
pub const PAIMON_PROPERTY_PREFIX: &str = "table.datalake.paimon.";

/// A paimon error as a Riverlet error naming `what`: a missing database, table or snapshot is
/// `NotFound`, a feature the crate lacks `Unsupported`, a bad option `InvalidArgument`, a
/// storage failure by what the storage said (refused credentials `Authentication`, a missing
/// bucket or object `NotFound`, a bad storage option `InvalidArgument`, anything else
/// `Network`), anything else `Internal`. No S3 credentials at all (none among the catalog
/// options, none in the environment) is `Authentication` naming the options that give them,
/// and no region `InvalidArgument` naming `s3.region`.
pub fn paimon_err(what: impl std::fmt::Display, e: paimon::Error) -> Error {
    use paimon::Error as P;
    if let P::IoUnexpected { message, source } = &e {
        // opendal's one-line form (kind, operation, the object's path, its cause), not its
        // `Debug`, which the crate's own message embeds, over several lines with a backtrace
        let detail = source.to_string();
        let storage_kind: &'static str = source.kind().into();
        if error_chain_contains(source.as_ref(), "failed to load signing credential") {
            return Error::new(
                ErrorKind::Authentication,
                format!(
                    "lake read: {what}: no S3 credentials to sign the warehouse's requests with: \
                     set the Paimon catalog options s3.access-key and s3.secret-key (a client \
                     takes them as paimon.s3.access-key and paimon.s3.secret-key among its \
                     options, as Fluss's catalog does: table info carries no secrets), or \
                     AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment"
                ),
            );
        }
        if storage_kind == "ConfigInvalid" && detail.contains("region is missing") {
            return Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "lake read: {what}: no S3 region: set the Paimon catalog option s3.region \
                     (a client: paimon.s3.region among its options) or AWS_REGION"
                ),
            );
        }
        let kind = match storage_kind {
            "PermissionDenied" => ErrorKind::Authentication,
            "NotFound" => ErrorKind::NotFound,
            "ConfigInvalid" => ErrorKind::InvalidArgument,
            "Unsupported" => ErrorKind::Unsupported,
            _ => ErrorKind::Network,
        };
        return Error::new(kind, format!("lake read: {what}: {message}: {detail}"));
    }
    let kind = match &e {
        P::DatabaseNotExist { .. } | P::TableNotExist { .. } | P::SnapshotNotExist { .. } => {
            ErrorKind::NotFound
        }
        P::Unsupported { .. } | P::IoUnsupported { .. } => ErrorKind::Unsupported,
        P::ConfigInvalid { .. } | P::IdentifierInvalid { .. } => ErrorKind::InvalidArgument,
        _ => ErrorKind::Internal,
    };
    // Other errors may still end in a captured backtrace when RUST_BACKTRACE is set: the
    // message keeps what failed and why, not the frames.
    let text = e.to_string();
    let text = text
        .split("\n\nBacktrace:")
        .next()
        .unwrap_or_default()
        .trim_end();
    Error::new(kind, format!("lake read: {what}: {text}"))
}

/// Whether `e` or one of its sources says `needle`.
fn error_chain_contains(e: &(dyn std::error::Error + 'static), needle: &str) -> bool {
    let mut at = Some(e);
    while let Some(e) = at {
        if e.to_string().contains(needle) {
            return true;
        }
        at = e.source();
    }
    false
}

/// Opens the Paimon catalog the properties name (a lake-enabled table's
/// `table.datalake.paimon.*` properties without their prefix, or the embedded server's
/// `datalake.paimon.*` options), with Paimon's option names, as Fluss hands them over:
/// `metastore` (`filesystem`, the default, or `rest`), `warehouse` (a local path, `file://`
/// or `s3://` URL), and the storage's own options (`s3.endpoint`, `s3.access-key`,
/// `s3.secret-key`, `s3.region`, `s3.path-style-access`; the crate also takes the Hadoop
/// `fs.s3a.*` names). `what` names the operation in errors; option values are never put in
/// them (they may hold secrets).
pub async fn open_paimon_catalog(
    props: &BTreeMap<String, String>,
    what: &str,
) -> Result<Arc<dyn Catalog>> {
    let metastore = props.get("metastore").map_or("filesystem", String::as_str);
    if metastore == "filesystem" && !props.contains_key("warehouse") {
        return Err(Error::unsupported(format!(
            "{what}: no {PAIMON_PROPERTY_PREFIX}warehouse, where Paimon's filesystem catalog \
             keeps its tables"
        )));
    }
    let mut options = Options::new();
    for (k, v) in props {
        options.set(k.clone(), v.clone());
    }
    CatalogFactory::create(options)
        .await
        .map_err(|e| paimon_err(format!("{what}: open the Paimon {metastore} catalog"), e))
}

/// Where a lake-enabled table's rows are in Paimon: its catalog properties (prefix stripped),
/// its `<database>.<table>`, and its Fluss partition keys.
#[derive(Debug, Clone)]
pub(crate) struct PaimonTableRef {
    pub props: BTreeMap<String, String>,
    pub database: String,
    pub table: String,
    pub partition_keys: Vec<String>,
}

impl PaimonTableRef {
    fn of(table: &Table, view: &str) -> Result<PaimonTableRef> {
        super::expect_format(&table.info, view, LakeFormat::Paimon)?;
        let path = &table.info.table_path;
        Ok(PaimonTableRef {
            props: LakeFormat::Paimon.read_catalog_properties(table),
            database: path.database.clone(),
            table: path.table.clone(),
            partition_keys: table.info.descriptor.partition_keys.clone(),
        })
    }

    /// The Paimon table (`<database>.<table>` in the catalog).
    async fn load(&self, view: &str) -> Result<paimon::Table> {
        let catalog = open_paimon_catalog(&self.props, view).await?;
        let name = format!("{}.{}", self.database, self.table);
        catalog
            .get_table(&Identifier::new(self.database.clone(), self.table.clone()))
            .await
            .map_err(|e| match e {
                paimon::Error::TableNotExist { .. } | paimon::Error::DatabaseNotExist { .. } => {
                    Error::new(
                        ErrorKind::NotFound,
                        format!("{view}: the Paimon catalog has no table {name}: {e}"),
                    )
                }
                e => paimon_err(format!("{view}: load the Paimon table {name}"), e),
            })
    }
}

/// The table's rows in Paimon snapshot `snapshot_id` (None: the latest; a table without one
/// has no rows), of `buckets` and of the partitions named `partitions` (Fluss's names: the
/// values of the partition keys joined by `$`) only when given, batch by batch, conformed to
/// `target` (columns by name).
pub(super) async fn snapshot_batches(
    table: &Table,
    snapshot_id: Option<i64>,
    buckets: Option<&[i32]>,
    partitions: Option<&[String]>,
    target: &SchemaRef,
    view: &str,
) -> Result<BoxStream<'static, Result<RecordBatch>>> {
    let at = PaimonTableRef::of(table, view)?;
    read_rows(&at, snapshot_id, buckets, partitions, target, view).await
}

/// [`snapshot_batches`] of the Paimon table `at` names.
pub(crate) async fn read_rows(
    at: &PaimonTableRef,
    snapshot_id: Option<i64>,
    buckets: Option<&[i32]>,
    partitions: Option<&[String]>,
    target: &SchemaRef,
    view: &str,
) -> Result<BoxStream<'static, Result<RecordBatch>>> {
    // A table without partitions keeps every row whatever partitions are asked for.
    let partitions = partitions.filter(|_| !at.partition_keys.is_empty());
    let planned = plan_read(
        at,
        snapshot_id,
        buckets.is_some(),
        partitions.is_some(),
        target,
        view,
    )
    .await?;
    match planned {
        Some(p) => p.read(buckets, partitions),
        None => Ok(futures::stream::empty().boxed()),
    }
}

/// A read of one Paimon snapshot planned once: the table at that snapshot, the columns read
/// and the scan's splits. [`PlannedRead::read`] reads some of its buckets (and partitions) from
/// those splits, so the readers of a primary-key union read's buckets share one catalog
/// opening, one table load and one scan plan, and all see the same snapshot.
pub(crate) struct PlannedRead {
    table: paimon::Table,
    columns: Vec<String>,
    /// The scan's splits, each with the Fluss name of its partition when it could be told
    /// from the split's partition row (see [`partition_name`]).
    splits: Vec<(paimon::table::DataSplit, Option<String>)>,
    /// Whether the table has fixed buckets (Fluss bucket N is Paimon bucket N), so splits can
    /// be chosen by bucket; otherwise only the `__bucket` column tells.
    fixed_buckets: bool,
    partition_keys: Vec<String>,
    target: SchemaRef,
    view: String,
}

/// Plans the read of the Paimon table `at` names at `snapshot_id` (None: the latest; None is
/// returned when the table has no snapshot yet), of the `target` columns the lake has, plus
/// `__bucket` (`by_bucket`) and the partition keys (`by_partition`) that reads of some buckets
/// or some partitions filter on.
pub(crate) async fn plan_read(
    at: &PaimonTableRef,
    snapshot_id: Option<i64>,
    by_bucket: bool,
    by_partition: bool,
    target: &SchemaRef,
    view: &str,
) -> Result<Option<PlannedRead>> {
    let t = at.load(view).await?;
    let t = match snapshot_id {
        Some(id) => t
            .copy_with_time_travel_strict(HashMap::from([(
                "scan.snapshot-id".to_string(),
                id.to_string(),
            )]))
            .await
            .map_err(|e| paimon_err(format!("{view}: Paimon snapshot {id}"), e))?,
        None => {
            let latest = t
                .snapshot_manager()
                .get_latest_snapshot_id()
                .await
                .map_err(|e| paimon_err(format!("{view}: the latest Paimon snapshot"), e))?;
            if latest.is_none() {
                return Ok(None);
            }
            t
        }
    };
    // Only the columns asked for (and present in the lake) are read from the data files, plus
    // those the bucket and partition filters need.
    let columns: Vec<String> = {
        let present = |name: &str| t.schema().fields().iter().any(|f| f.name() == name);
        let mut cols: Vec<String> = target
            .fields()
            .iter()
            .filter(|f| present(f.name()))
            .map(|f| f.name().clone())
            .collect();
        let mut need = Vec::new();
        if by_bucket {
            need.push(SYSTEM_COLUMNS[0].to_string());
        }
        if by_partition {
            need.extend(at.partition_keys.iter().cloned());
        }
        for c in need {
            if !cols.contains(&c) && present(&c) {
                cols.push(c);
            }
        }
        cols
    };
    let fixed_buckets = t
        .schema()
        .options()
        .get("bucket")
        .and_then(|b| b.trim().parse::<i32>().ok())
        .is_some_and(|b| b > 0);
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut rb = t.new_read_builder();
    rb.with_projection(&names)
        .map_err(|e| paimon_err(format!("{view}: project the Paimon read"), e))?;
    let plan = rb
        .new_scan()
        .plan()
        .await
        .map_err(|e| paimon_err(format!("{view}: plan the Paimon scan"), e))?;
    let splits = plan
        .splits()
        .iter()
        .map(|s| {
            let name = partition_name(t.schema(), &at.partition_keys, s.partition());
            (s.clone(), name)
        })
        .collect();
    Ok(Some(PlannedRead {
        table: t,
        columns,
        splits,
        fixed_buckets,
        partition_keys: at.partition_keys.clone(),
        target: target.clone(),
        view: view.to_string(),
    }))
}

impl PlannedRead {
    /// The planned rows of `buckets` and of the partitions named `partitions` (Fluss's
    /// names) only when given, batch by batch, conformed to the target columns. With fixed buckets
    /// only the splits of those buckets are read, and only the splits of those partitions
    /// (those whose partition could not be named are read, and their rows matched by name).
    pub(crate) fn read(
        &self,
        buckets: Option<&[i32]>,
        partitions: Option<&[String]>,
    ) -> Result<BoxStream<'static, Result<RecordBatch>>> {
        let view = &self.view;
        let splits: Vec<_> = self
            .splits
            .iter()
            .filter(|(s, name)| {
                let bucket_kept =
                    !self.fixed_buckets || buckets.is_none_or(|keep| keep.contains(&s.bucket()));
                let partition_kept = match (partitions, name) {
                    (Some(keep), Some(name)) => keep.contains(name),
                    _ => true,
                };
                bucket_kept && partition_kept
            })
            .map(|(s, _)| s.clone())
            .collect();
        let names: Vec<&str> = self.columns.iter().map(String::as_str).collect();
        let mut rb = self.table.new_read_builder();
        rb.with_projection(&names)
            .map_err(|e| paimon_err(format!("{view}: project the Paimon read"), e))?;
        let batches = rb
            .new_read()
            .and_then(|r| r.to_arrow(&splits))
            .map_err(|e| paimon_err(format!("{view}: read the Paimon table"), e))?;
        let (target, view) = (self.target.clone(), view.clone());
        let partition_keys = self.partition_keys.clone();
        let buckets = buckets.map(<[i32]>::to_vec);
        let partitions = partitions.map(<[String]>::to_vec);
        Ok(batches
            .map(move |b| {
                let b = b.map_err(|e| paimon_err(format!("{view}: read the Paimon table"), e))?;
                let b = bridge::batch_from_58(b)?;
                let b = match &buckets {
                    Some(keep) => of_buckets(&b, keep)?,
                    None => b,
                };
                let b = match &partitions {
                    Some(names) => of_partitions(&b, &partition_keys, names)?,
                    None => b,
                };
                conform(&b, &target)
            })
            .boxed())
    }
}

/// The Fluss name of the partition whose Paimon partition row is `row` (the values of the
/// partition `keys` as text, by [`super::partition_value_texts`], joined by `$`, as
/// [`super::partition_runs`] names the rows), so a read of some partitions plans only their
/// splits. None when the table has no partitions, or when a value is null or of a type not
/// mapped here (such a split is read, and its rows matched by name).
fn partition_name(
    schema: &paimon::spec::TableSchema,
    keys: &[String],
    row: &paimon::spec::BinaryRow,
) -> Option<String> {
    use arrow_array::{
        ArrayRef, BooleanArray, Date32Array, Int16Array, Int32Array, Int64Array, Int8Array,
        StringArray,
    };
    use paimon::spec::Datum;
    if keys.is_empty() {
        return None;
    }
    let paimon_keys = schema.partition_keys();
    let mut values = Vec::with_capacity(keys.len());
    for k in keys {
        let pos = paimon_keys.iter().position(|p| p == k)?;
        let field = schema.fields().iter().find(|f| f.name() == k)?;
        // the value as a one-row column of the type the lake rows carry it in
        let one: ArrayRef = match row.get_datum(pos, field.data_type()).ok()?? {
            Datum::String(v) => Arc::new(StringArray::from(vec![v])),
            Datum::Bool(v) => Arc::new(BooleanArray::from(vec![v])),
            Datum::TinyInt(v) => Arc::new(Int8Array::from(vec![v])),
            Datum::SmallInt(v) => Arc::new(Int16Array::from(vec![v])),
            Datum::Int(v) => Arc::new(Int32Array::from(vec![v])),
            Datum::Long(v) => Arc::new(Int64Array::from(vec![v])),
            Datum::Date(days) => Arc::new(Date32Array::from(vec![days])),
            _ => return None,
        };
        let text = super::partition_value_texts(&one, k).ok()?;
        let text = text.as_any().downcast_ref::<StringArray>()?;
        values.push(text.value(0).to_string());
    }
    Some(values.join(crate::metadata::table::PARTITION_NAME_SEPARATOR))
}

/// A primary-key union read's planned snapshot (see [`PlannedRead`]) of `table`.
pub(super) async fn plan_bucket_states(
    table: &Table,
    snapshot_id: i64,
    target: &SchemaRef,
    view: &str,
) -> Result<Option<PlannedRead>> {
    let at = PaimonTableRef::of(table, view)?;
    let by_partition = !at.partition_keys.is_empty();
    plan_read(&at, Some(snapshot_id), true, by_partition, target, view).await
}

/// The Paimon table's snapshots, oldest first, as one batch of [`snapshots_schema`] (the
/// columns of Paimon's `t$snapshots`).
pub(super) async fn snapshots(table: &Table, view: &str) -> Result<RecordBatch> {
    use arrow_array::{Int64Array, StringArray, TimestampMillisecondArray};
    let t = PaimonTableRef::of(table, view)?.load(view).await?;
    let mut snaps = t
        .snapshot_manager()
        .list_all()
        .await
        .map_err(|e| paimon_err(format!("{view}: list the Paimon snapshots"), e))?;
    snaps.sort_by_key(|s| s.id());
    let i64s = |f: &dyn Fn(&paimon::spec::Snapshot) -> Option<i64>| -> Arc<dyn Array> {
        Arc::new(snaps.iter().map(f).collect::<Int64Array>())
    };
    let strs = |f: &dyn Fn(&paimon::spec::Snapshot) -> Option<String>| -> Arc<dyn Array> {
        Arc::new(snaps.iter().map(f).collect::<StringArray>())
    };
    let commit_time: TimestampMillisecondArray =
        snaps.iter().map(|s| Some(s.time_millis() as i64)).collect();
    RecordBatch::try_new(
        snapshots_schema(&table.info)?,
        vec![
            i64s(&|s| Some(s.id())),
            i64s(&|s| Some(s.schema_id())),
            strs(&|s| Some(s.commit_user().to_string())),
            i64s(&|s| Some(s.commit_identifier())),
            strs(&|s| Some(format!("{:?}", s.commit_kind()))),
            Arc::new(commit_time),
            strs(&|s| Some(s.base_manifest_list().to_string())),
            strs(&|s| Some(s.delta_manifest_list().to_string())),
            strs(&|s| s.changelog_manifest_list().map(str::to_string)),
            i64s(&|s| s.total_record_count()),
            i64s(&|s| s.delta_record_count()),
            i64s(&|s| s.changelog_record_count()),
            i64s(&|s| s.watermark()),
        ],
    )
    .map_err(|e| lake_err(view, e))
}

#[cfg(test)]
mod tests {
    //! Paimon tables in Fluss's layout, written here through the paimon crate as Fluss's
    //! tiering writes them (each Fluss bucket into the Paimon bucket of the same number,
    //! row kinds in `_VALUE_KIND`), read back through [`read_rows`]. Expected rows are the
    //! ones written.
    use super::*;
    use arrow_array::{Int32Array, StringArray};
    use arrow_array_58 as a58;
    use arrow_schema::{DataType, Field, Schema};
    use paimon::spec::{
        BigIntType, DataType as PT, IntType, LocalZonedTimestampType, Schema as PaimonSchema,
        VarCharType,
    };

    fn schema_of(keyed: bool) -> PaimonSchema {
        let mut b = PaimonSchema::builder()
            .column("id", PT::Int(IntType::with_nullable(!keyed)))
            .column(
                "name",
                PT::VarChar(VarCharType::new(i32::MAX as u32).unwrap()),
            )
            .column("__bucket", PT::Int(IntType::with_nullable(false)))
            .column("__offset", PT::BigInt(BigIntType::with_nullable(false)))
            .column(
                "__timestamp",
                PT::LocalZonedTimestamp(LocalZonedTimestampType::with_nullable(false, 3).unwrap()),
            )
            .option("bucket", "2")
            .option("bucket-key", "id");
        if keyed {
            b = b.primary_key(["id"]).option("changelog-producer", "input");
        }
        b.build().unwrap()
    }

    /// Rows `(id, name, offset)` of Fluss bucket `bucket` as an arrow 58 batch of the Paimon
    /// table's columns (and `_VALUE_KIND` when `kinds` are given).
    fn rows58(
        table: &paimon::Table,
        bucket: i32,
        rows: &[(i32, &str, i64)],
        kinds: Option<&[i8]>,
    ) -> a58::RecordBatch {
        let schema = paimon::arrow::build_target_arrow_schema(table.schema().fields()).unwrap();
        let mut cols: Vec<a58::ArrayRef> = vec![
            Arc::new(a58::Int32Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(a58::StringArray::from_iter_values(rows.iter().map(|r| r.1))),
            Arc::new(a58::Int32Array::from_iter_values(
                rows.iter().map(|_| bucket),
            )),
            Arc::new(a58::Int64Array::from_iter_values(rows.iter().map(|r| r.2))),
        ];
        let tz = match schema.field(4).data_type() {
            arrow_schema_58::DataType::Timestamp(_, tz) => tz.clone(),
            other => panic!("__timestamp is {other}"),
        };
        let ts = a58::TimestampMillisecondArray::from_iter_values(rows.iter().map(|r| 1_000 + r.2));
        cols.push(Arc::new(ts.with_timezone_opt(tz)));
        let mut fields: Vec<_> = schema.fields().iter().cloned().collect();
        if let Some(k) = kinds {
            cols.push(Arc::new(a58::Int8Array::from(k.to_vec())));
            fields.push(Arc::new(arrow_schema_58::Field::new(
                "_VALUE_KIND",
                arrow_schema_58::DataType::Int8,
                false,
            )));
        }
        a58::RecordBatch::try_new(Arc::new(arrow_schema_58::Schema::new(fields)), cols).unwrap()
    }

    /// Writes one commit: each `(bucket, batch)` into that Paimon bucket.
    async fn commit(table: &paimon::Table, batches: Vec<(i32, a58::RecordBatch)>) {
        let wb = table
            .new_write_builder()
            .with_commit_user("__fluss_lake_tiering")
            .unwrap();
        let mut w = wb.new_write().unwrap();
        for (bucket, b) in batches {
            w.write_arrow(&[b], Some(bucket)).await.unwrap();
        }
        let messages = w.prepare_commit().await.unwrap();
        wb.new_commit().commit(messages).await.unwrap();
    }

    async fn create(
        dir: &std::path::Path,
        name: &str,
        keyed: bool,
    ) -> (PaimonTableRef, paimon::Table) {
        let at = PaimonTableRef {
            props: BTreeMap::from([("warehouse".to_string(), dir.to_str().unwrap().to_string())]),
            database: "fluss".into(),
            table: name.into(),
            partition_keys: Vec::new(),
        };
        let catalog = open_paimon_catalog(&at.props, "test").await.unwrap();
        catalog
            .create_database("fluss", true, HashMap::new())
            .await
            .unwrap();
        let id = Identifier::new("fluss", name);
        catalog
            .create_table(&id, schema_of(keyed), false)
            .await
            .unwrap();
        let table = catalog.get_table(&id).await.unwrap();
        (at, table)
    }

    fn target() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, true),
            Field::new("name", DataType::Utf8, true),
            Field::new("__bucket", DataType::Int32, false),
        ]))
    }

    /// The rows `(id, name, bucket)` a read returns, sorted.
    async fn read(
        at: &PaimonTableRef,
        snapshot: Option<i64>,
        buckets: Option<&[i32]>,
    ) -> Vec<(i32, String, i32)> {
        use futures::TryStreamExt as _;
        let batches: Vec<RecordBatch> = read_rows(at, snapshot, buckets, None, &target(), "t$lake")
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        let mut out = Vec::new();
        for b in batches {
            let ids = b.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
            let names = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
            let bk = b.column(2).as_any().downcast_ref::<Int32Array>().unwrap();
            for i in 0..b.num_rows() {
                out.push((ids.value(i), names.value(i).to_string(), bk.value(i)));
            }
        }
        out.sort();
        out
    }

    fn rows(v: &[(i32, &str, i32)]) -> Vec<(i32, String, i32)> {
        v.iter().map(|(a, b, c)| (*a, b.to_string(), *c)).collect()
    }

    #[tokio::test]
    async fn log_table_rows_by_snapshot_and_bucket() {
        let dir = tempfile::tempdir().unwrap();
        let (at, t) = create(dir.path(), "logs", false).await;
        assert!(
            read(&at, None, None).await.is_empty(),
            "no snapshot yet: no rows"
        );
        commit(
            &t,
            vec![
                (0, rows58(&t, 0, &[(1, "a", 0), (3, "c", 1)], None)),
                (1, rows58(&t, 1, &[(2, "b", 0)], None)),
            ],
        )
        .await;
        commit(&t, vec![(1, rows58(&t, 1, &[(4, "d", 1)], None))]).await;
        let first = rows(&[(1, "a", 0), (2, "b", 1), (3, "c", 0)]);
        assert_eq!(read(&at, Some(1), None).await, first);
        let all = rows(&[(1, "a", 0), (2, "b", 1), (3, "c", 0), (4, "d", 1)]);
        assert_eq!(read(&at, None, None).await, all);
        assert_eq!(read(&at, Some(2), None).await, all);
        assert_eq!(
            read(&at, None, Some(&[1])).await,
            rows(&[(2, "b", 1), (4, "d", 1)])
        );
        let missing = read_rows(&at, Some(9), None, None, &target(), "t$lake").await;
        assert!(missing.is_err(), "snapshot 9 does not exist");
    }

    #[tokio::test]
    async fn primary_key_table_reads_the_merged_state() {
        let dir = tempfile::tempdir().unwrap();
        let (at, t) = create(dir.path(), "keyed", true).await;
        // +I 1, 2 (bucket 0), 3 (bucket 1); then -U/+U of 1, -D of 2.
        commit(
            &t,
            vec![
                (0, rows58(&t, 0, &[(1, "a", 0), (2, "b", 1)], Some(&[0, 0]))),
                (1, rows58(&t, 1, &[(3, "c", 0)], Some(&[0]))),
            ],
        )
        .await;
        commit(
            &t,
            vec![(
                0,
                rows58(
                    &t,
                    0,
                    &[(1, "a", 2), (1, "A", 3), (2, "b", 4)],
                    Some(&[1, 2, 3]),
                ),
            )],
        )
        .await;
        assert_eq!(
            read(&at, Some(1), None).await,
            rows(&[(1, "a", 0), (2, "b", 0), (3, "c", 1)])
        );
        assert_eq!(
            read(&at, None, None).await,
            rows(&[(1, "A", 0), (3, "c", 1)])
        );
        assert_eq!(read(&at, None, Some(&[0])).await, rows(&[(1, "A", 0)]));
    }

    /// Partition rows are named as Fluss names partitions (the text of each value, joined by
    /// `$`, dates as `yyyy-MM-dd`); a null value or a type not told here gives no name.
    #[test]
    fn partition_rows_are_named_as_fluss_names_partitions() {
        use paimon::spec::{BinaryRow, BooleanType, DateType, Datum as D, DoubleType};
        let types = [
            PT::VarChar(VarCharType::new(10).unwrap()),
            PT::Int(IntType::new()),
            PT::Date(DateType::new()),
            PT::Boolean(BooleanType::new()),
            PT::Double(DoubleType::new()),
        ];
        let names = ["s", "i", "d", "b", "x"];
        let mut b = PaimonSchema::builder();
        for (n, t) in names.iter().zip(&types) {
            b = b.column(*n, t.clone());
        }
        let schema = paimon::spec::TableSchema::new(0, &b.partition_keys(names).build().unwrap());
        let keys = |n: &[&str]| n.iter().map(|k| k.to_string()).collect::<Vec<_>>();
        // 2026-01-05 is day 20458 after 1970-01-01; 1969-12-31 is day -1
        let values = [
            D::String("MSFT".into()),
            D::Int(-3),
            D::Date(20458),
            D::Bool(true),
            D::Double(1.5),
        ];
        let row = BinaryRow::from_datums(
            &values
                .iter()
                .zip(&types)
                .map(|(v, t)| (Some(v), t))
                .collect::<Vec<_>>(),
        );
        let name = |k: &[&str]| partition_name(&schema, &keys(k), &row);
        assert_eq!(
            name(&["s", "i", "d", "b"]).as_deref(),
            Some("MSFT$-3$2026-01-05$true")
        );
        // the keys' order is Fluss's
        assert_eq!(name(&["d", "s"]).as_deref(), Some("2026-01-05$MSFT"));
        assert_eq!(name(&[]), None, "no partitions");
        assert_eq!(name(&["s", "x"]), None, "a DOUBLE is not named here");
        assert_eq!(name(&["nope"]), None);
        let before_epoch = BinaryRow::from_datums(&[
            (Some(&D::String("a".into())), &types[0]),
            (None, &types[1]),
            (Some(&D::Date(-1)), &types[2]),
            (Some(&D::Bool(false)), &types[3]),
            (None, &types[4]),
        ]);
        let name = |k: &[&str]| partition_name(&schema, &keys(k), &before_epoch);
        assert_eq!(name(&["d", "b"]).as_deref(), Some("1969-12-31$false"));
        assert_eq!(name(&["s", "i"]), None, "a null value");
    }

    /// A batch of partition columns `day` (STRING) and `region` (INT).
    fn day_region(days: Vec<Option<&str>>, regions: Vec<i32>) -> RecordBatch {
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("day", DataType::Utf8, true),
                Field::new("region", DataType::Int32, true),
            ])),
            vec![
                Arc::new(StringArray::from(days)),
                Arc::new(Int32Array::from(regions)),
            ],
        )
        .unwrap()
    }

    #[test]
    fn partition_rows_are_matched_by_fluss_name() {
        let b = day_region(
            vec![Some("d1"), Some("d1"), Some("d2"), None],
            vec![1, 2, 1, 1],
        );
        let keys = ["day".to_string(), "region".to_string()];
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let kept = of_partitions(&b, &keys, &names(&["d1$2"])).unwrap();
        assert_eq!(kept.num_rows(), 1);
        let two = of_partitions(&b, &keys, &names(&["d1$2", "d2$1"])).unwrap();
        assert_eq!(two.num_rows(), 2);
        assert_eq!(
            of_partitions(&b, &keys, &names(&["d3$1"]))
                .unwrap()
                .num_rows(),
            0
        );
        assert!(of_partitions(&b, &["nope".into()], &names(&["x"])).is_err());
    }

    /// One name per run of rows with the same partition values, in row order.
    #[test]
    fn partition_names_come_per_run_of_equal_values() {
        let days = vec![Some("d1"), Some("d1"), Some("d1"), None, None, Some("d1")];
        let b = day_region(days, vec![1, 1, 2, 1, 1, 1]);
        let keys = ["day".to_string(), "region".to_string()];
        let runs = super::super::partition_runs(&b, &keys).unwrap();
        let d = |s: &str| Some(s.to_string());
        assert_eq!(
            runs,
            vec![
                (0..2, d("d1$1")),
                (2..3, d("d1$2")),
                (3..5, None),
                (5..6, d("d1$1"))
            ]
        );
        assert!(super::super::partition_runs(&b.slice(0, 0), &keys)
            .unwrap()
            .is_empty());
    }
}
