//! The Iceberg half of the lake reads: the catalog a lake-enabled table's
//! `table.datalake.iceberg.*` properties name (SQL, REST, or a Hadoop directory), the rows of a
//! snapshot and the snapshots (Iceberg's `committed_at`, `snapshot_id`, `parent_id`,
//! `operation`). The format-neutral parts (which format a table has, the schemas of the views,
//! conforming rows to them) are in the parent module.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::stream::BoxStream;
use futures::StreamExt as _;
use iceberg::{Catalog, CatalogBuilder, TableIdent};
use iceberg_catalog_rest::RestCatalogBuilder;
use iceberg_catalog_sql::{SqlBindStyle, SqlCatalogBuilder};

use super::{
    bridge, conform, lake_err, of_buckets, of_partitions, snapshots_schema, storage, LakeFormat,
    SYSTEM_COLUMNS,
};
use crate::client::Table;
use crate::metadata::TableInfo;
use crate::{Error, ErrorKind, Result};

/// The prefix of the catalog properties in a lake-enabled table's info (Fluss's
/// `table.datalake.<format>.*`, format iceberg).
pub const ICEBERG_PROPERTY_PREFIX: &str = "table.datalake.iceberg.";

/// The kind of an iceberg error for Riverlet's callers: a storage failure by what S3 answered
/// (found in the error's sources: a refused or unreachable endpoint is `Network`, denied
/// credentials `Authentication`, a missing bucket or file `NotFound`), a storage or catalog
/// feature Riverlet lacks `Unsupported`, anything else `Internal`.
pub fn error_kind(e: &iceberg::Error) -> ErrorKind {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(o) = s.downcast_ref::<object_store::Error>() {
            return match o {
                object_store::Error::NotFound { .. } => ErrorKind::NotFound,
                object_store::Error::PermissionDenied { .. }
                | object_store::Error::Unauthenticated { .. } => ErrorKind::Authentication,
                object_store::Error::NotSupported { .. }
                | object_store::Error::NotImplemented { .. } => ErrorKind::Unsupported,
                _ => ErrorKind::Network,
            };
        }
        source = s.source();
    }
    match e.kind() {
        iceberg::ErrorKind::FeatureUnsupported => ErrorKind::Unsupported,
        iceberg::ErrorKind::TableNotFound | iceberg::ErrorKind::NamespaceNotFound => {
            ErrorKind::NotFound
        }
        _ => ErrorKind::Internal,
    }
}

/// An iceberg error of a lake read as a Riverlet error of its [`error_kind`], naming `what`.
pub fn iceberg_err(what: impl std::fmt::Display, e: iceberg::Error) -> Error {
    Error::new(error_kind(&e), format!("lake read: {what}: {e}"))
}

/// The Iceberg catalog properties of a lake-enabled table (the `table.datalake.iceberg.*`
/// keys without their prefix). A table that is not lake-enabled is a `NotFound` error naming
/// `view` (its lake views do not exist, as with Fluss); another lake format is `Unsupported`.
pub fn catalog_properties(info: &TableInfo, view: &str) -> Result<BTreeMap<String, String>> {
    super::expect_format(info, view, LakeFormat::Iceberg)?;
    Ok(LakeFormat::Iceberg.catalog_properties(info))
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
/// Table files are read and written through [`storage::LakeStorageFactory`]: local files and
/// S3 (`s3://`), with the S3 settings as Iceberg's FileIO properties name them (`s3.endpoint`,
/// `client.region`, `s3.path-style-access`, `s3.access-key-id`, ...; see [`storage`]). A REST
/// catalog adds the `config` it hands out with each table (vended credentials); a SQL catalog
/// takes the `s3.*` and `client.*` properties. Any other `type` is an `Unsupported` error
/// naming it. `what` names the operation in errors (a view name, or the
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
    let kind = catalog_type(props);
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
            // the FileIO properties only: the builder's uri and warehouse stay as set above
            let io_props: HashMap<String, String> = props
                .iter()
                .filter(|(k, _)| k.starts_with("s3.") || k.starts_with("client."))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let catalog = SqlCatalogBuilder::default()
                .uri(uri.clone())
                .warehouse_location(warehouse)
                .sql_bind_style(bind)
                .with_storage_factory(Arc::new(storage::LakeStorageFactory))
                .load(name, io_props)
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
                .with_storage_factory(Arc::new(storage::LakeStorageFactory))
                .load(name, rest_props)
                .await
                .map_err(|e| lake_err(format!("{what}: open the Iceberg REST catalog {uri}"), e))?;
            Ok(Arc::new(catalog))
        }
        other => Err(Error::unsupported(format!(
            "{what}: Iceberg catalog type '{other}'; Riverlet opens the types sql (jdbc) and \
             rest (and reads the tables of a hadoop one)"
        ))),
    }
}

/// The catalog `type` of the properties, lower-cased (`sql` when not given).
fn catalog_type(props: &BTreeMap<String, String>) -> String {
    props
        .get("type")
        .map(|t| t.trim().to_ascii_lowercase())
        .unwrap_or_else(|| "sql".into())
}

/// Reads the table `id` of an Iceberg Hadoop catalog (`type` `hadoop`, Iceberg-Java's
/// `HadoopCatalog`, which Fluss's Iceberg page configures: `datalake.iceberg.type: hadoop` and
/// a `warehouse` directory). There is no catalog service: the table lives in
/// `<warehouse>/<namespace>/<table>`, and its current metadata file is
/// `metadata/v<N>.metadata.json` (or `v<N>.gz.metadata.json`), where `N` is the number in
/// `metadata/version-hint.text`, as Iceberg's `HadoopTableOperations` writes them. The files
/// are read through [`storage::LakeStorageFactory`] (local paths, `file://` and S3, with the
/// `s3.*` / `client.*` properties). Reads only: Riverlet does not write Hadoop catalogs.
pub async fn load_hadoop_table(
    props: &BTreeMap<String, String>,
    id: &TableIdent,
    what: &str,
) -> Result<iceberg::table::Table> {
    let warehouse = props.get("warehouse").ok_or_else(|| {
        Error::unsupported(format!(
            "{what}: no {ICEBERG_PROPERTY_PREFIX}warehouse, where the Iceberg Hadoop catalog \
             keeps its tables"
        ))
    })?;
    let io = iceberg::io::FileIOBuilder::new(Arc::new(storage::LakeStorageFactory))
        .with_props(
            props
                .iter()
                .filter(|(k, _)| k.starts_with("s3.") || k.starts_with("client.")),
        )
        .build();
    let mut dir = warehouse.trim_end_matches('/').to_string();
    for part in id.namespace().iter().chain(std::iter::once(&id.name)) {
        dir.push('/');
        dir.push_str(part);
    }
    let hint = format!("{dir}/metadata/version-hint.text");
    let not_found = |detail: String| {
        Error::new(
            ErrorKind::NotFound,
            format!(
                "{what}: the Iceberg Hadoop catalog at {warehouse} has no table {id}: {detail}"
            ),
        )
    };
    if !io
        .exists(&hint)
        .await
        .map_err(|e| iceberg_err(format!("{what}: look for {hint}"), e))?
    {
        return Err(not_found(format!("no {hint}")));
    }
    let text = io
        .new_input(&hint)
        .map_err(|e| iceberg_err(format!("{what}: open {hint}"), e))?
        .read()
        .await
        .map_err(|e| iceberg_err(format!("{what}: read {hint}"), e))?;
    let version: u64 = std::str::from_utf8(&text)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .ok_or_else(|| {
            Error::internal(format!(
                "{what}: {hint} holds {:?}, not a metadata version number",
                String::from_utf8_lossy(&text)
            ))
        })?;
    let mut location = None;
    for name in [
        format!("v{version}.metadata.json"),
        format!("v{version}.gz.metadata.json"),
    ] {
        let file = format!("{dir}/metadata/{name}");
        if io
            .exists(&file)
            .await
            .map_err(|e| iceberg_err(format!("{what}: look for {file}"), e))?
        {
            location = Some(file);
            break;
        }
    }
    let location = location.ok_or_else(|| {
        not_found(format!(
            "{hint} names version {version}, but {dir}/metadata has no v{version}.metadata.json"
        ))
    })?;
    let table = iceberg::table::StaticTable::from_metadata_file(&location, id.clone(), io)
        .await
        .map_err(|e| iceberg_err(format!("{what}: read {location}"), e))?;
    Ok(table.into_table())
}

/// The Iceberg table of a lake-enabled table (`<database>.<table>` in its catalog).
async fn load_table(table: &Table, view: &str) -> Result<iceberg::table::Table> {
    super::expect_format(&table.info, view, LakeFormat::Iceberg)?;
    let props = LakeFormat::Iceberg.read_catalog_properties(table);
    let path = &table.info.table_path;
    let id = TableIdent::from_strs([path.database.as_str(), path.table.as_str()])
        .map_err(|e| lake_err(view, e))?;
    if catalog_type(&props) == "hadoop" {
        return load_hadoop_table(&props, &id, view).await;
    }
    let catalog = open_catalog(&props, view).await?;
    catalog.load_table(&id).await.map_err(|e| {
        if e.kind() == iceberg::ErrorKind::TableNotFound {
            Error::new(
                ErrorKind::NotFound,
                format!("{view}: the Iceberg catalog has no table {path}: {e}"),
            )
        } else {
            iceberg_err(format!("{view}: load the Iceberg table"), e)
        }
    })
}

/// The Iceberg filter of the rows of the partitions Fluss names `names`: Fluss tiers a
/// partitioned table with an identity partition of each (STRING) partition key, so the
/// filter on those columns prunes the other partitions' data files in the scan's planning.
/// None when a key is not a string column of the lake table (then the rows are only
/// filtered after the read).
fn partition_predicate(
    schema: &iceberg::spec::Schema,
    keys: &[String],
    names: &[String],
) -> Option<iceberg::expr::Predicate> {
    use iceberg::expr::{Predicate, Reference};
    use iceberg::spec::{Datum, PrimitiveType, Type};
    let all_strings = keys.iter().all(|k| {
        schema
            .field_by_name(k)
            .is_some_and(|f| *f.field_type == Type::Primitive(PrimitiveType::String))
    });
    if keys.is_empty() || !all_strings {
        return None;
    }
    let mut any = Predicate::AlwaysFalse;
    for name in names {
        // not a name of this table's partitions: it matches no row
        let Ok(spec) = crate::metadata::PartitionSpec::from_partition_name(keys, name) else {
            continue;
        };
        let mut all = Predicate::AlwaysTrue;
        for k in keys {
            let v = spec.get(k).unwrap_or_default();
            all = all.and(Reference::new(k.clone()).equal_to(Datum::string(v)));
        }
        any = any.or(all);
    }
    Some(any)
}

/// The rows of the table's lake snapshot `snapshot_id` (None: the latest; a table without
/// one has no rows), of `buckets` and of the partitions Fluss names `partitions` only when
/// given, batch by batch, conformed to `target` (columns by name, see [`conform`]).
pub(super) async fn snapshot_batches(
    table: &Table,
    snapshot_id: Option<i64>,
    buckets: Option<&[i32]>,
    partitions: Option<&[String]>,
    target: &SchemaRef,
    view: &str,
) -> Result<BoxStream<'static, Result<RecordBatch>>> {
    let keys = table.info.descriptor.partition_keys.clone();
    // A table without partitions keeps every row whatever partitions are asked for.
    let partitions = partitions.filter(|_| !keys.is_empty());
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
        let mut need: Vec<String> = Vec::new();
        if buckets.is_some() {
            need.push(SYSTEM_COLUMNS[0].to_string());
        }
        if partitions.is_some() {
            need.extend(keys.iter().cloned());
        }
        for c in need {
            if !cols.contains(&c) && schema.field_by_name(&c).is_some() {
                cols.push(c);
            }
        }
        cols
    };
    let mut scan = t.scan().select(lake_cols);
    if let Some(id) = snapshot_id {
        scan = scan.snapshot_id(id);
    }
    if let Some(names) = partitions {
        if let Some(p) = partition_predicate(t.metadata().current_schema(), &keys, names) {
            scan = scan.with_filter(p);
        }
    }
    let scan = scan
        .build()
        .map_err(|e| iceberg_err(format!("{view}: plan the Iceberg scan"), e))?;
    let batches = scan
        .to_arrow()
        .await
        .map_err(|e| iceberg_err(format!("{view}: read the Iceberg table"), e))?;
    let (target, view) = (target.clone(), view.to_string());
    let buckets = buckets.map(<[i32]>::to_vec);
    // The scan's filter prunes files (and may filter rows); the rows are matched by name
    // again, the rule both formats share.
    let partitions = partitions.map(<[String]>::to_vec);
    Ok(batches
        .map(move |b| {
            let b = b.map_err(|e| iceberg_err(format!("{view}: read the Iceberg table"), e))?;
            let b = bridge::batch_from_58(b)?;
            let b = match &buckets {
                Some(keep) => of_buckets(&b, keep)?,
                None => b,
            };
            let b = match &partitions {
                Some(names) => of_partitions(&b, &keys, names)?,
                None => b,
            };
            conform(&b, &target)
        })
        .boxed())
}

/// The lake's snapshots, oldest first, as one batch of [`snapshots_schema`].
pub(super) async fn snapshots(table: &Table, view: &str) -> Result<RecordBatch> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use iceberg::spec::{NestedField, PrimitiveType, Schema as IcebergSchema, Type};
    use iceberg::TableCreation;

    /// Writes table `db.t` of a Hadoop catalog in `wh` as Iceberg-Java's HadoopCatalog lays it
    /// out: `db/t/metadata/v<N>.metadata.json` and `version-hint.text` holding `N`.
    fn hadoop_table(wh: &std::path::Path, versions: &[u32], hint: &str) -> String {
        let location = wh.join("db/t");
        let meta = location.join("metadata");
        std::fs::create_dir_all(&meta).unwrap();
        for v in versions {
            let schema = IcebergSchema::builder()
                .with_fields((1..=*v as i32).map(|id| {
                    NestedField::optional(
                        id,
                        format!("c{id}"),
                        Type::Primitive(PrimitiveType::Long),
                    )
                    .into()
                }))
                .build()
                .unwrap();
            let creation = TableCreation::builder()
                .name("t".into())
                .location(location.to_str().unwrap().to_string())
                .schema(schema)
                .build();
            let metadata = iceberg::spec::TableMetadataBuilder::from_table_creation(creation)
                .unwrap()
                .build()
                .unwrap()
                .metadata;
            let json = serde_json::to_vec(&metadata).unwrap();
            std::fs::write(meta.join(format!("v{v}.metadata.json")), json).unwrap();
        }
        std::fs::write(meta.join("version-hint.text"), hint).unwrap();
        meta.to_str().unwrap().to_string()
    }

    fn props(wh: &str) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("type".to_string(), "hadoop".to_string()),
            ("warehouse".to_string(), wh.to_string()),
        ])
    }

    fn ident() -> TableIdent {
        TableIdent::from_strs(["db", "t"]).unwrap()
    }

    /// The table's current metadata is the version `version-hint.text` names, with a warehouse
    /// given as a path or a `file://` URL.
    #[tokio::test]
    async fn hadoop_table_is_the_version_the_hint_names() {
        let dir = tempfile::tempdir().unwrap();
        let meta = hadoop_table(dir.path(), &[1, 2, 3], "2\n");
        for wh in [
            dir.path().to_str().unwrap().to_string(),
            format!("file://{}/", dir.path().display()),
        ] {
            let t = load_hadoop_table(&props(&wh), &ident(), "db.t$lake")
                .await
                .unwrap();
            assert_eq!(t.metadata().current_schema().as_struct().fields().len(), 2);
            assert!(t
                .metadata_location()
                .unwrap()
                .ends_with("/v2.metadata.json"));
            assert!(t
                .metadata_location()
                .unwrap()
                .contains(meta.trim_start_matches('/')));
            assert!(t.metadata().current_snapshot().is_none());
        }
    }

    /// A missing table, a hint naming a missing version, a hint that is not a number and a
    /// catalog without a warehouse are typed errors naming what is wrong.
    #[tokio::test]
    async fn hadoop_table_errors_name_the_bad_value() {
        let dir = tempfile::tempdir().unwrap();
        let wh = dir.path().to_str().unwrap().to_string();
        let e = load_hadoop_table(&props(&wh), &ident(), "db.t$lake")
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
        assert!(e.message().contains("version-hint.text"), "{e}");
        assert!(e.message().contains("db.t$lake"), "{e}");

        hadoop_table(dir.path(), &[1], "7");
        let e = load_hadoop_table(&props(&wh), &ident(), "db.t$lake")
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
        assert!(e.message().contains("v7.metadata.json"), "{e}");

        hadoop_table(dir.path(), &[1], "seven");
        let e = load_hadoop_table(&props(&wh), &ident(), "db.t$lake")
            .await
            .unwrap_err();
        assert!(e.message().contains("\"seven\""), "{e}");

        let no_wh = BTreeMap::from([("type".to_string(), "hadoop".to_string())]);
        let e = load_hadoop_table(&no_wh, &ident(), "db.t$lake")
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
        assert!(e.message().contains("warehouse"), "{e}");
    }
}
