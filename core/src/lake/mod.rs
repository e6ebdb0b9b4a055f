//! Lake reads (feature `lake`): opening a lake-enabled table's Iceberg catalog from the
//! `table.datalake.iceberg.*` properties the server puts in its table info, the rows of a lake
//! snapshot (`db.t$lake`, and the lake half of a union read), the lake's snapshots
//! (`db.t$lake$snapshots`), and [`bridge`], the one crossing between the workspace's arrow and
//! the iceberg crate's (the server's tiering writes through it too).
//!
//! The reads here take nothing from the server but its table info and GetLakeSnapshot: the
//! catalog's `type` (`sql` or `rest`, see [`open_catalog`]), `uri` and `warehouse`, and the snapshot
//! id a union read pairs with its log offsets. The option checks and the planning of those reads
//! live in `core::scan` (`scan::lake_view` and the union in `scan::reader`).

pub mod bridge;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::SchemaRef;
use futures::stream::BoxStream;
use futures::StreamExt as _;
use iceberg::{Catalog, CatalogBuilder, TableIdent};
use iceberg_catalog_rest::RestCatalogBuilder;
use iceberg_catalog_sql::{SqlBindStyle, SqlCatalogBuilder};

use crate::client::{Table, TableView};
use crate::metadata::table::keys;
use crate::metadata::TableInfo;
use crate::{Error, ErrorKind, Result};

/// The system columns Fluss's lake layout appends to a table's columns, in order: the bucket,
/// the log offset and the commit time of each row.
pub const SYSTEM_COLUMNS: [&str; 3] = crate::client::LAKE_SYSTEM_COLUMNS;

/// The prefix of the catalog properties in a lake-enabled table's info (Fluss's
/// `table.datalake.<format>.*`, format iceberg).
pub const ICEBERG_PROPERTY_PREFIX: &str = "table.datalake.iceberg.";

fn lake_err(what: impl std::fmt::Display, e: impl std::fmt::Display) -> Error {
    Error::internal(format!("lake read: {what}: {e}"))
}

/// Whether the table has `table.datalake.enabled = true`.
pub fn lake_enabled(info: &TableInfo) -> bool {
    info.descriptor
        .property(keys::DATALAKE_ENABLED)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// The Iceberg catalog properties of a lake-enabled table (the `table.datalake.iceberg.*`
/// keys without their prefix). A table that is not lake-enabled is a `NotFound` error naming
/// `view` (its lake views do not exist, as with Fluss); another lake format is `Unsupported`.
pub fn catalog_properties(info: &TableInfo, view: &str) -> Result<BTreeMap<String, String>> {
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
    match info.descriptor.datalake_format().as_deref() {
        Some("iceberg") => {}
        Some(f) => {
            return Err(Error::unsupported(format!(
                "{view}: table '{name}' is tiered to a {f} lake; Riverlet reads Iceberg lakes \
                 only"
            )))
        }
        None => {
            return Err(Error::unsupported(format!(
                "{view}: table '{name}' has no table.datalake.format in its table info (the \
                 cluster advertises no lake)"
            )))
        }
    }
    Ok(info
        .descriptor
        .properties
        .iter()
        .filter_map(|(k, v)| {
            k.strip_prefix(ICEBERG_PROPERTY_PREFIX)
                .map(|k| (k.to_string(), v.clone()))
        })
        .collect())
}

/// The property keys of a REST catalog that name the catalog itself rather than configure
/// the REST client: they are not passed to iceberg-rust's REST catalog.
const REST_CATALOG_KEYS: [&str; 4] = ["type", "name", "catalog-impl", "io-impl"];

/// Opens the Iceberg catalog the properties name (a lake-enabled table's
/// `table.datalake.iceberg.*` properties without their prefix, or the embedded server's
/// `datalake.iceberg.*` options), by its `type`:
///
/// - `sql` (the default; `jdbc` is taken as `sql`): Iceberg's SQL catalog, `uri` (the catalog
///   database, `sqlite:` or `postgres:`), `warehouse` (a local path or `file://` URL) and
///   optional `name`;
/// - `rest`: an Iceberg REST catalog (Lakekeeper, Polaris, Iceberg's own REST server...).
///   `uri` is required and `warehouse` optional (for a REST catalog it may be a warehouse name,
///   not a location). Every other property is passed to iceberg-rust's REST catalog under its
///   own name except `type`, `name`, `catalog-impl` and `io-impl` (which name the catalog and
///   Java's FileIO class). Fluss hands these properties through with the names Iceberg-Java's
///   `RESTCatalog` reads, and iceberg-rust's REST catalog reads the same names, so none is
///   renamed: `token` (a bearer token), `credential` (`client_id:client_secret` or a secret,
///   exchanged for a token at `oauth2-server-uri`, default `<uri>/v1/oauth/tokens`), `scope`,
///   `audience`, `resource`, `header.<name>` (extra HTTP headers) and `prefix`.
///
/// Table files are read and written through the local file system only (iceberg-rust's
/// `LocalFsStorageFactory`): a REST catalog whose tables live on S3 opens, but reading a table
/// fails with the iceberg crate's error naming the storage scheme. Any other `type` is an
/// `Unsupported` error naming it. `what` names the operation in errors (a view name, or the
/// server option).
pub async fn open_catalog(
    props: &BTreeMap<String, String>,
    what: &str,
) -> Result<Arc<dyn Catalog>> {
    let get = |k: &str| {
        props.get(k).ok_or_else(|| {
            Error::unsupported(format!(
                "{what}: no {ICEBERG_PROPERTY_PREFIX}{k}, which the Iceberg catalog is opened \
                 with"
            ))
        })
    };
    let kind = props
        .get("type")
        .map(|t| t.trim().to_ascii_lowercase())
        .unwrap_or_else(|| "sql".into());
    let name = props
        .get("name")
        .cloned()
        .unwrap_or_else(|| "fluss-iceberg-catalog".into());
    match kind.as_str() {
        "sql" | "jdbc" => {
            let uri = get("uri")?.clone();
            let warehouse = get("warehouse")?;
            let warehouse = if warehouse.contains("://") {
                warehouse.clone()
            } else {
                format!("file://{warehouse}")
            };
            let bind = if uri.starts_with("postgres") {
                SqlBindStyle::DollarNumeric
            } else {
                SqlBindStyle::QMark
            };
            let catalog = SqlCatalogBuilder::default()
                .uri(uri.clone())
                .warehouse_location(warehouse)
                .sql_bind_style(bind)
                .with_storage_factory(Arc::new(iceberg::io::LocalFsStorageFactory))
                .load(name, HashMap::new())
                .await
                .map_err(|e| lake_err(format!("{what}: open the Iceberg SQL catalog {uri}"), e))?;
            Ok(Arc::new(catalog))
        }
        "rest" => {
            let uri = get("uri")?.clone();
            let rest_props: HashMap<String, String> = props
                .iter()
                .filter(|(k, _)| !REST_CATALOG_KEYS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let catalog = RestCatalogBuilder::default()
                .with_storage_factory(Arc::new(iceberg::io::LocalFsStorageFactory))
                .load(name, rest_props)
                .await
                .map_err(|e| lake_err(format!("{what}: open the Iceberg REST catalog {uri}"), e))?;
            Ok(Arc::new(catalog))
        }
        other => Err(Error::unsupported(format!(
            "{what}: Iceberg catalog type '{other}'; Riverlet opens the types sql (jdbc) and \
             rest"
        ))),
    }
}

/// The Iceberg table of a lake-enabled table (`<database>.<table>` in its catalog).
async fn load_table(table: &Table, view: &str) -> Result<iceberg::table::Table> {
    let props = catalog_properties(&table.info, view)?;
    let catalog = open_catalog(&props, view).await?;
    let path = &table.info.table_path;
    let id = TableIdent::from_strs([path.database.as_str(), path.table.as_str()])
        .map_err(|e| lake_err(view, e))?;
    catalog.load_table(&id).await.map_err(|e| {
        if e.kind() == iceberg::ErrorKind::TableNotFound {
            Error::new(
                ErrorKind::NotFound,
                format!("{view}: the Iceberg catalog has no table {path}: {e}"),
            )
        } else {
            lake_err(format!("{view}: load the Iceberg table"), e)
        }
    })
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

/// The rows of the table's lake snapshot `snapshot_id` (None: the latest; a table without
/// one has no rows), of `buckets` only when given, batch by batch, conformed to `target`
/// (columns by name, see [`conform`]).
pub async fn snapshot_batches(
    table: &Table,
    snapshot_id: Option<i64>,
    buckets: Option<&[i32]>,
    target: &SchemaRef,
    view: &str,
) -> Result<BoxStream<'static, Result<RecordBatch>>> {
    let t = load_table(table, view).await?;
    if snapshot_id.is_none() && t.metadata().current_snapshot().is_none() {
        return Ok(futures::stream::empty().boxed());
    }
    // Only the columns asked for (and present in the lake) are read from the data files.
    let lake_cols: Vec<String> = {
        let schema = t.metadata().current_schema();
        let mut cols: Vec<String> = target
            .fields()
            .iter()
            .filter(|f| schema.field_by_name(f.name()).is_some())
            .map(|f| f.name().clone())
            .collect();
        if buckets.is_some() && !cols.iter().any(|c| c == SYSTEM_COLUMNS[0]) {
            cols.push(SYSTEM_COLUMNS[0].to_string());
        }
        cols
    };
    let mut scan = t.scan().select(lake_cols);
    if let Some(id) = snapshot_id {
        scan = scan.snapshot_id(id);
    }
    let scan = scan
        .build()
        .map_err(|e| lake_err(format!("{view}: plan the Iceberg scan"), e))?;
    let batches = scan
        .to_arrow()
        .await
        .map_err(|e| lake_err(format!("{view}: read the Iceberg table"), e))?;
    let (target, view) = (target.clone(), view.to_string());
    let buckets = buckets.map(<[i32]>::to_vec);
    Ok(batches
        .map(move |b| {
            let b = b.map_err(|e| lake_err(format!("{view}: read the Iceberg table"), e))?;
            let b = bridge::batch_from_58(b)?;
            let b = match &buckets {
                Some(keep) => of_buckets(&b, keep)?,
                None => b,
            };
            conform(&b, &target)
        })
        .boxed())
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

/// The lake's snapshots, oldest first, as one batch of [`snapshots_schema`].
pub async fn snapshots(table: &Table, view: &str) -> Result<RecordBatch> {
    let t = load_table(table, view).await?;
    let mut snaps: Vec<_> = t.metadata().snapshots().cloned().collect();
    snaps.sort_by_key(|s| (s.sequence_number(), s.timestamp_ms()));
    let committed: arrow_array::TimestampMillisecondArray =
        snaps.iter().map(|s| Some(s.timestamp_ms())).collect();
    let ids: arrow_array::Int64Array = snaps.iter().map(|s| Some(s.snapshot_id())).collect();
    let parents: arrow_array::Int64Array = snaps.iter().map(|s| s.parent_snapshot_id()).collect();
    let ops: arrow_array::StringArray = snaps
        .iter()
        .map(|s| Some(s.summary().operation.as_str().to_string()))
        .collect();
    RecordBatch::try_new(
        snapshots_schema(&table.info)?,
        vec![
            Arc::new(committed),
            Arc::new(ids),
            Arc::new(parents),
            Arc::new(ops),
        ],
    )
    .map_err(|e| lake_err(view, e))
}
