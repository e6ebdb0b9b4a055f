//! Lake reads (feature `lake`): the rows of a lake-enabled table's lake snapshot (`db.t$lake`,
//! the lake half of a union read, and a primary-key bucket's lake state that its changelog is
//! folded over), the lake's snapshots (`db.t$lake$snapshots`), and [`bridge`], the one crossing
//! between the workspace's arrow and the lake crates' arrow 58 (the server's tiering writes
//! through it too).
//!
//! One interface over two formats, picked by the table's `table.datalake.format`
//! ([`LakeFormat`]): Iceberg (`iceberg_lake`, the iceberg crate) and Paimon (`paimon_lake`,
//! the paimon crate). Each opens its catalog from the `table.datalake.<format>.*` properties
//! the server puts in its table info with the connection's `<format>.*` lake catalog options
//! over them (the secrets a cluster leaves out of table info), as Fluss's readers do. The reads here take nothing else
//! from the server but GetLakeSnapshot's snapshot id, which a union read pairs with its log
//! offsets. The option checks and the planning of those reads live in `core::scan`
//! (`scan::lake_view`, the union in `scan::reader`).

pub mod bridge;
mod iceberg_lake;
mod paimon_lake;
pub mod storage;

use std::collections::BTreeMap;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::SchemaRef;
use futures::stream::BoxStream;

use crate::client::{Table, TableView};
use crate::metadata::TableInfo;
use crate::{Error, ErrorKind, Result};

pub use iceberg_lake::{
    catalog_properties, error_kind, iceberg_err, load_hadoop_table, open_catalog,
    ICEBERG_PROPERTY_PREFIX,
};
pub use paimon_lake::{open_paimon_catalog, paimon_err, PAIMON_PROPERTY_PREFIX};

/// The lake formats Riverlet reads, by `table.datalake.format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LakeFormat {
    /// Apache Iceberg (`iceberg`).
    Iceberg,
    /// Apache Paimon (`paimon`), Fluss's default lake format.
    Paimon,
}

impl LakeFormat {
    /// The format's name as `table.datalake.format` spells it.
    pub fn name(self) -> &'static str {
        match self {
            LakeFormat::Iceberg => "iceberg",
            LakeFormat::Paimon => "paimon",
        }
    }

    /// The format of a `table.datalake.format` value (None: a format Riverlet does not read,
    /// e.g. `lance`).
    pub fn parse(name: &str) -> Option<LakeFormat> {
        match name.trim().to_ascii_lowercase().as_str() {
            "iceberg" => Some(LakeFormat::Iceberg),
            "paimon" => Some(LakeFormat::Paimon),
            _ => None,
        }
    }

    /// The prefix of the format's catalog properties in a table's info
    /// (`table.datalake.<format>.`).
    pub fn property_prefix(self) -> &'static str {
        match self {
            LakeFormat::Iceberg => ICEBERG_PROPERTY_PREFIX,
            LakeFormat::Paimon => PAIMON_PROPERTY_PREFIX,
        }
    }

    /// The table's catalog properties of this format, without their prefix.
    pub fn catalog_properties(self, info: &TableInfo) -> BTreeMap<String, String> {
        let prefix = self.property_prefix();
        info.descriptor
            .properties
            .iter()
            .filter_map(|(k, v)| k.strip_prefix(prefix).map(|k| (k.to_string(), v.clone())))
            .collect()
    }

    /// The catalog properties a read of `table` opens this format's catalog with: the table
    /// info's ([`Self::catalog_properties`]) with the connection's own `<format>.*` lake
    /// catalog options over them ([`crate::client::LakeCatalogOptions`]), the connection's
    /// winning, as Fluss's Flink catalog prefers its own. That is how a reader gets the
    /// secrets (`s3.secret-key`...) a cluster leaves out of table info.
    pub fn read_catalog_properties(self, table: &Table) -> BTreeMap<String, String> {
        let mut props = self.catalog_properties(&table.info);
        props.extend(table.conn.config().lake_catalog.of_format(self.name()));
        props
    }
}

/// The lake format of a table `view` reads: a table that is not lake-enabled is a `NotFound`
/// error naming `view` (its lake views do not exist, as with Fluss); a table without a
/// `table.datalake.format`, or with one Riverlet does not read, is `Unsupported`.
pub fn format_of(info: &TableInfo, view: &str) -> Result<LakeFormat> {
    let name = &info.table_path;
    if !lake_enabled(info) {
        return Err(Error::new(
            ErrorKind::NotFound,
            format!(
                "{view} does not exist: table '{name}' is not lake-enabled \
                 (table.datalake.enabled is not true)"
            ),
        ));
    }
    match info.descriptor.datalake_format() {
        Some(f) => LakeFormat::parse(&f).ok_or_else(|| {
            Error::unsupported(format!(
                "{view}: table '{name}' is tiered to a {f} lake; Riverlet reads Paimon and \
                 Iceberg lakes"
            ))
        }),
        None => Err(Error::unsupported(format!(
            "{view}: table '{name}' has no table.datalake.format in its table info (the \
             cluster advertises no lake)"
        ))),
    }
}

/// [`format_of`], which must be `want` (a read of one format's catalog).
fn expect_format(info: &TableInfo, view: &str, want: LakeFormat) -> Result<()> {
    let got = format_of(info, view)?;
    if got != want {
        return Err(Error::unsupported(format!(
            "{view}: table '{}' is tiered to a {} lake, not {}",
            info.table_path,
            got.name(),
            want.name()
        )));
    }
    Ok(())
}

/// The system columns Fluss's lake layout appends to a table's columns, in order: the bucket,
/// the log offset and the commit time of each row.
pub const SYSTEM_COLUMNS: [&str; 3] = crate::client::LAKE_SYSTEM_COLUMNS;

fn lake_err(what: impl std::fmt::Display, e: impl std::fmt::Display) -> Error {
    Error::internal(format!("lake read: {what}: {e}"))
}

/// Whether the table has `table.datalake.enabled = true`.
pub fn lake_enabled(info: &TableInfo) -> bool {
    info.descriptor.lake_enabled()
}

/// The Arrow schema of a read of `db.t$lake` (of the view's Fluss schema, see
/// [`TableView::schema`]).
pub fn lake_schema(info: &TableInfo) -> Result<SchemaRef> {
    Ok(TableView::Lake.schema(info)?.to_arrow())
}

/// The Arrow schema of a read of `db.t$lake$snapshots` (of the view's Fluss schema, see
/// [`TableView::schema`]).
pub fn snapshots_schema(info: &TableInfo) -> Result<SchemaRef> {
    Ok(TableView::LakeSnapshots.schema(info)?.to_arrow())
}

/// `batch`'s columns as `target`'s, matched by name and cast to its types (Iceberg widens
/// TINYINT/SMALLINT to int and keeps timestamps in micros); a column the lake lacks (added to
/// the table after its rows were tiered) is all nulls.
pub fn conform(batch: &RecordBatch, target: &SchemaRef) -> Result<RecordBatch> {
    let n = batch.num_rows();
    let mut cols: Vec<ArrayRef> = Vec::with_capacity(target.fields().len());
    for f in target.fields() {
        let col = match batch.schema().index_of(f.name()) {
            Ok(i) => arrow_cast::cast(batch.column(i), f.data_type())
                .map_err(|e| lake_err(format!("column {}", f.name()), e))?,
            Err(_) => arrow_array::new_null_array(f.data_type(), n),
        };
        cols.push(col);
    }
    RecordBatch::try_new_with_options(
        target.clone(),
        cols,
        &RecordBatchOptions::new().with_row_count(Some(n)),
    )
    .map_err(|e| lake_err("batch", e))
}

/// The rows of `batch` whose `__bucket` is one of `keep`.
fn of_buckets(batch: &RecordBatch, keep: &[i32]) -> Result<RecordBatch> {
    let col = batch
        .column_by_name(SYSTEM_COLUMNS[0])
        .and_then(|c| c.as_any().downcast_ref::<arrow_array::Int32Array>())
        .ok_or_else(|| lake_err("lake rows", "no INT __bucket column"))?;
    let mask: arrow_array::BooleanArray = col
        .iter()
        .map(|b| Some(b.is_some_and(|b| keep.contains(&b))))
        .collect();
    arrow_select::filter::filter_record_batch(batch, &mask).map_err(|e| lake_err("lake rows", e))
}

/// The Fluss partition names of `batch`'s rows (its `keys` columns' values as text joined by
/// `$`, as Fluss's union read matches lake partitions to its own), one per run of consecutive
/// rows with the same values: a lake data file holds one partition, so a batch is usually one
/// run, and a name is built per run, not per row. None for rows with a null partition value.
/// Both formats keep the partition columns as columns of the lake table (Paimon's partition
/// keys, Iceberg's identity partitions), so the names come from the rows.
pub(crate) fn partition_runs(
    batch: &RecordBatch,
    keys: &[String],
) -> Result<Vec<(std::ops::Range<usize>, Option<String>)>> {
    use arrow_array::Array as _;
    let mut values = Vec::with_capacity(keys.len());
    for k in keys {
        let col = batch
            .column_by_name(k)
            .ok_or_else(|| lake_err("lake rows", format!("no partition column {k}")))?;
        values.push(partition_value_texts(col, k)?);
    }
    let strings: Vec<&arrow_array::StringArray> = values
        .iter()
        .map(|a| a.as_any().downcast_ref::<arrow_array::StringArray>())
        .collect::<Option<_>>()
        .ok_or_else(|| lake_err("lake rows", "partition values are not strings"))?;
    fn value(a: &arrow_array::StringArray, row: usize) -> Option<&str> {
        (!a.is_null(row)).then(|| a.value(row))
    }
    let same = |x: usize, y: usize| strings.iter().all(|a| value(a, x) == value(a, y));
    let name = |row: usize| {
        let parts: Option<Vec<&str>> = strings.iter().map(|a| value(a, row)).collect();
        parts.map(|v| v.join(crate::metadata::table::PARTITION_NAME_SEPARATOR))
    };
    let rows = batch.num_rows();
    let mut runs = Vec::new();
    let mut start = 0;
    for row in 1..=rows {
        if row == rows || !same(start, row) {
            runs.push((start..row, name(start)));
            start = row;
        }
    }
    Ok(runs)
}

/// The text of each partition value of column `key` in a Fluss partition name: the value cast
/// to a string (dates `yyyy-MM-dd`), the one rule for lake rows ([`partition_runs`]) and lake
/// files' partition rows (the Paimon reads' plan).
pub(crate) fn partition_value_texts(
    col: &arrow_array::ArrayRef,
    key: &str,
) -> Result<arrow_array::ArrayRef> {
    arrow_cast::cast(col, &arrow_schema::DataType::Utf8)
        .map_err(|e| lake_err(format!("partition column {key}"), e))
}

/// The rows of `batch` in one of the partitions Fluss names `names` (see
/// [`partition_runs`]).
fn of_partitions(batch: &RecordBatch, keys: &[String], names: &[String]) -> Result<RecordBatch> {
    let mut mask = arrow_array::builder::BooleanBuilder::with_capacity(batch.num_rows());
    for (rows, name) in partition_runs(batch, keys)? {
        mask.append_n(rows.len(), name.is_some_and(|n| names.contains(&n)));
    }
    arrow_select::filter::filter_record_batch(batch, &mask.finish())
        .map_err(|e| lake_err("lake rows", e))
}

/// The rows of the table's lake snapshot `snapshot_id` (None: the latest; a table without
/// one has no rows), of `buckets` only when given and of the partitions Fluss names
/// `partitions` only when given (a partitioned table's), batch by batch, conformed to
/// `target` (columns by name, see [`conform`]).
pub async fn snapshot_batches(
    table: &Table,
    snapshot_id: Option<i64>,
    buckets: Option<&[i32]>,
    partitions: Option<&[String]>,
    target: &SchemaRef,
    view: &str,
) -> Result<BoxStream<'static, Result<RecordBatch>>> {
    match format_of(&table.info, view)? {
        LakeFormat::Iceberg => {
            iceberg_lake::snapshot_batches(table, snapshot_id, buckets, partitions, target, view)
                .await
        }
        LakeFormat::Paimon => {
            paimon_lake::snapshot_batches(table, snapshot_id, buckets, partitions, target, view)
                .await
        }
    }
}

/// The merged states of a primary-key table's buckets in one lake snapshot, the half of a
/// primary-key union read that each bucket's changelog from the snapshot's offset is folded
/// over (Fluss's rule: the log wins by key). Planned once per read by [`bucket_states`] (the
/// catalog opened, the table loaded at the snapshot and its scan planned once), then read
/// bucket by bucket ([`BucketStates::bucket`]), every bucket from the same snapshot.
pub struct BucketStates {
    /// None: nothing to read (a snapshot without a plan).
    planned: Option<paimon_lake::PlannedRead>,
}

impl std::fmt::Debug for BucketStates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BucketStates")
            .field("planned", &self.planned.is_some())
            .finish_non_exhaustive()
    }
}

/// Plans [`BucketStates`] of lake snapshot `snapshot_id` of `table`, rows conformed to
/// `target`. Paimon only: Iceberg's lake rows are not merged by key (and Riverlet's Iceberg
/// lakes hold log tables only), as with Fluss, whose Iceberg union read is for log tables.
pub async fn bucket_states(
    table: &Table,
    snapshot_id: i64,
    target: &SchemaRef,
    view: &str,
) -> Result<BucketStates> {
    match format_of(&table.info, view)? {
        LakeFormat::Paimon => Ok(BucketStates {
            planned: paimon_lake::plan_bucket_states(table, snapshot_id, target, view).await?,
        }),
        LakeFormat::Iceberg => Err(Error::unsupported(format!(
            "{view}: the union read of a primary-key table needs a lake that merges rows by \
             key; table '{}' is tiered to Iceberg",
            table.info.table_path
        ))),
    }
}

impl BucketStates {
    /// The merged state one bucket (of one partition, by its Fluss name) holds in the
    /// snapshot, one row per key.
    pub async fn bucket(
        &self,
        partition_name: Option<&str>,
        bucket: i32,
    ) -> Result<Vec<RecordBatch>> {
        use futures::TryStreamExt as _;
        match &self.planned {
            Some(p) => {
                let partitions = partition_name.map(|p| vec![p.to_string()]);
                p.read(Some(&[bucket]), partitions.as_deref())?
                    .try_collect()
                    .await
            }
            None => Ok(Vec::new()),
        }
    }
}

/// Whether the table's lake can serve [`bucket_states`]: lake-enabled, in a format whose
/// reads merge rows by primary key (Paimon).
pub fn merges_by_key(info: &TableInfo) -> bool {
    lake_enabled(info)
        && info
            .descriptor
            .datalake_format()
            .and_then(|f| LakeFormat::parse(&f))
            == Some(LakeFormat::Paimon)
}

/// The lake's snapshots, oldest first, as one batch of [`snapshots_schema`] (whose columns
/// are the format's own snapshots table's).
pub async fn snapshots(table: &Table, view: &str) -> Result<RecordBatch> {
    match format_of(&table.info, view)? {
        LakeFormat::Iceberg => iceberg_lake::snapshots(table, view).await,
        LakeFormat::Paimon => paimon_lake::snapshots(table, view).await,
    }
}
