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

use super::{bridge, conform, lake_err, of_buckets, snapshots_schema, LakeFormat, SYSTEM_COLUMNS};
use crate::client::Table;
use crate::{Error, ErrorKind, Result};

/// The prefix of the Paimon catalog properties in a lake-enabled table's info (Fluss's
/// `table.datalake.<format>.*`, format paimon).
pub const PAIMON_PROPERTY_PREFIX: &str = "table.datalake.paimon.";

/// A paimon error as a Riverlet error naming `what`: a missing database, table or snapshot is
/// `NotFound`, a feature the crate lacks `Unsupported`, a bad option `InvalidArgument`, a
/// storage failure `Network`, anything else `Internal`.
pub fn paimon_err(what: impl std::fmt::Display, e: paimon::Error) -> Error {
    use paimon::Error as P;
    let kind = match &e {
        P::DatabaseNotExist { .. } | P::TableNotExist { .. } | P::SnapshotNotExist { .. } => {
            ErrorKind::NotFound
        }
        P::Unsupported { .. } | P::IoUnsupported { .. } => ErrorKind::Unsupported,
        P::ConfigInvalid { .. } | P::IdentifierInvalid { .. } => ErrorKind::InvalidArgument,
        P::IoUnexpected { .. } => ErrorKind::Network,
        _ => ErrorKind::Internal,
    };
    Error::new(kind, format!("lake read: {what}: {e}"))
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

/// The Paimon table of a lake-enabled table (`<database>.<table>` in its catalog).
async fn load_table(table: &Table, view: &str) -> Result<paimon::Table> {
    super::expect_format(&table.info, view, LakeFormat::Paimon)?;
    let props = LakeFormat::Paimon.catalog_properties(&table.info);
    let catalog = open_paimon_catalog(&props, view).await?;
    let path = &table.info.table_path;
    catalog
        .get_table(&Identifier::new(path.database.clone(), path.table.clone()))
        .await
        .map_err(|e| match e {
            paimon::Error::TableNotExist { .. } | paimon::Error::DatabaseNotExist { .. } => {
                Error::new(
                    ErrorKind::NotFound,
                    format!("{view}: the Paimon catalog has no table {path}: {e}"),
                )
            }
            e => paimon_err(format!("{view}: load the Paimon table {path}"), e),
        })
}

/// The table's rows in Paimon snapshot `snapshot_id` (None: the latest; a table without one
/// has no rows), of `buckets` and of the partition named `partition` (Fluss's name: the
/// values of the partition keys joined by `$`) only when given, batch by batch, conformed to
/// `target` (columns by name).
pub(super) async fn snapshot_batches(
    table: &Table,
    snapshot_id: Option<i64>,
    buckets: Option<&[i32]>,
    partition: Option<Option<&str>>,
    target: &SchemaRef,
    view: &str,
) -> Result<BoxStream<'static, Result<RecordBatch>>> {
    let t = load_table(table, view).await?;
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
                return Ok(futures::stream::empty().boxed());
            }
            t
        }
    };
    let partition_keys = table.info.descriptor.partition_keys.clone();
    // Only the columns asked for (and present in the lake) are read from the data files, plus
    // those the bucket and partition filters need.
    let lake_cols: Vec<String> = {
        let present = |name: &str| t.schema().fields().iter().any(|f| f.name() == name);
        let mut cols: Vec<String> = target
            .fields()
            .iter()
            .filter(|f| present(f.name()))
            .map(|f| f.name().clone())
            .collect();
        let mut need = Vec::new();
        if buckets.is_some() {
            need.push(SYSTEM_COLUMNS[0].to_string());
        }
        if partition.is_some() {
            need.extend(partition_keys.iter().cloned());
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
    let names: Vec<&str> = lake_cols.iter().map(String::as_str).collect();
    let mut rb = t.new_read_builder();
    rb.with_projection(&names)
        .map_err(|e| paimon_err(format!("{view}: project the Paimon read"), e))?;
    let plan = rb
        .new_scan()
        .plan()
        .await
        .map_err(|e| paimon_err(format!("{view}: plan the Paimon scan"), e))?;
    let splits: Vec<_> = plan
        .splits()
        .iter()
        .filter(|s| !fixed_buckets || buckets.is_none_or(|keep| keep.contains(&s.bucket())))
        .cloned()
        .collect();
    let batches = rb
        .new_read()
        .and_then(|r| r.to_arrow(&splits))
        .map_err(|e| paimon_err(format!("{view}: read the Paimon table"), e))?;
    let (target, view) = (target.clone(), view.to_string());
    let buckets = buckets.map(<[i32]>::to_vec);
    let partition = partition.map(|p| p.map(str::to_string));
    Ok(batches
        .map(move |b| {
            let b = b.map_err(|e| paimon_err(format!("{view}: read the Paimon table"), e))?;
            let b = bridge::batch_from_58(b)?;
            let b = match &buckets {
                Some(keep) => of_buckets(&b, keep)?,
                None => b,
            };
            let b = match &partition {
                Some(name) => of_partition(&b, &partition_keys, name.as_deref())?,
                None => b,
            };
            conform(&b, &target)
        })
        .boxed())
}

/// The rows of `batch` in the partition Fluss names `name` (the partition keys' values as
/// strings joined by `$`, as Fluss's union read matches Paimon partitions to its own); a
/// table without partitions (`name` None) keeps every row.
fn of_partition(batch: &RecordBatch, keys: &[String], name: Option<&str>) -> Result<RecordBatch> {
    let Some(name) = name else {
        return Ok(batch.clone());
    };
    let mut values = Vec::with_capacity(keys.len());
    for k in keys {
        let col = batch
            .column_by_name(k)
            .ok_or_else(|| lake_err("lake rows", format!("no partition column {k}")))?;
        let s = arrow_cast::cast(col, &arrow_schema::DataType::Utf8)
            .map_err(|e| lake_err(format!("partition column {k}"), e))?;
        values.push(s);
    }
    let strings: Vec<&arrow_array::StringArray> = values
        .iter()
        .map(|a| a.as_any().downcast_ref::<arrow_array::StringArray>())
        .collect::<Option<_>>()
        .ok_or_else(|| lake_err("lake rows", "partition values are not strings"))?;
    let mask: arrow_array::BooleanArray = (0..batch.num_rows())
        .map(|row| {
            let joined: Option<Vec<&str>> = strings
                .iter()
                .map(|a| (!a.is_null(row)).then(|| a.value(row)))
                .collect();
            Some(joined.is_some_and(|v| v.join("$") == name))
        })
        .collect();
    arrow_select::filter::filter_record_batch(batch, &mask)
        .map_err(|e| lake_err("lake rows", e))
}

/// The Paimon table's snapshots, oldest first, as one batch of [`snapshots_schema`] (the
/// columns of Paimon's `t$snapshots`).
pub(super) async fn snapshots(table: &Table, view: &str) -> Result<RecordBatch> {
    use arrow_array::{Int64Array, StringArray, TimestampMillisecondArray};
    let t = load_table(table, view).await?;
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
    let commit_time: TimestampMillisecondArray = snaps
        .iter()
        .map(|s| Some(s.time_millis() as i64))
        .collect();
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
