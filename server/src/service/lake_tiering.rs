//! The server side of `table.datalake.enabled`: refusing lake tables without a lake (as Fluss
//! does), creating their lake table (Iceberg or Paimon) with the Fluss table, and the commit
//! rounds of [`crate::lake`] (periodic, every table's `table.datalake.freshness`, or on
//! demand).

use riverlet::error::codes as error_codes;
use riverlet::Result;

use super::{fluss, Server};
use crate::catalog::TableMeta;

/// `table.datalake.enabled = true` in a table descriptor JSON's properties.
fn json_lake_enabled(v: &serde_json::Value) -> bool {
    riverlet::metadata::table::lake_enabled_value(
        v.get("properties")
            .and_then(|p| p.get(riverlet::metadata::table::keys::DATALAKE_ENABLED))
            .and_then(|e| e.as_str()),
    )
}

impl Server {
    fn lake_format(&self) -> Option<&str> {
        #[cfg(feature = "lake")]
        if self.lake.get().is_some() {
            return self.config.datalake_format.as_deref();
        }
        None
    }

    /// The descriptor JSON to store for a new table: a lake-enabled table gets
    /// `table.datalake.format` of the server (as Fluss's coordinator adds it); without a lake
    /// it is refused with Fluss's error.
    pub(super) fn lake_table_json(&self, json: Vec<u8>) -> Result<Vec<u8>> {
        let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(&json) else {
            return Ok(json);
        };
        if !json_lake_enabled(&v) {
            return Ok(json);
        }
        let Some(format) = self.lake_format() else {
            // Fluss's coordinator answers so; the server options that fix it are named too.
            return Err(fluss(
                error_codes::INVALID_TABLE_EXCEPTION,
                if cfg!(feature = "lake") {
                    "'table.datalake.enabled' is enabled for the table, but the Fluss cluster \
                     doesn't enable datalake tables (server options datalake.format and \
                     datalake.iceberg.warehouse or datalake.paimon.warehouse)."
                } else {
                    "'table.datalake.enabled' is enabled for the table, but the Fluss cluster \
                     doesn't enable datalake tables (this riverlet-server was built without \
                     its `lake` feature)."
                },
            ));
        };
        if let Some(p) = v.get_mut("properties").and_then(|p| p.as_object_mut()) {
            p.insert(
                riverlet::metadata::table::keys::DATALAKE_FORMAT.into(),
                format.into(),
            );
        }
        Ok(serde_json::to_vec(&v).unwrap_or(json))
    }

    /// The descriptor JSON GetTableInfo returns: a lake-enabled table's properties carry the
    /// lake catalog's as `table.datalake.<format>.*` (Fluss's default table lake options), which
    /// lake readers open the catalog with. For Paimon, as Fluss's coordinator does, without
    /// the options whose key looks secret (`crate::lake::is_sensitive_lake_option`: S3 keys
    /// reach readers from their own configuration); an Iceberg REST catalog's token and
    /// credential are handed on, which readers of this server's lake need.
    pub(super) fn table_info_json(&self, meta: &TableMeta) -> Vec<u8> {
        let json = meta.entry.table_json.as_bytes().to_vec();
        #[cfg(feature = "lake")]
        if let (Some(lake), Some(format)) = (self.lake.get(), self.lake_format()) {
            if crate::lake::lake_enabled(meta) {
                if let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(&json) {
                    if let Some(p) = v.get_mut("properties").and_then(|p| p.as_object_mut()) {
                        let paimon = lake.format_name() == "paimon";
                        for (k, val) in lake.properties() {
                            if paimon && crate::lake::is_sensitive_lake_option(k) {
                                continue;
                            }
                            p.insert(format!("table.datalake.{format}.{k}"), val.clone().into());
                        }
                    }
                    return serde_json::to_vec(&v).unwrap_or(json);
                }
            }
        }
        json
    }

    /// The first offset of a bucket the lake tiering has not committed yet (`i64::MAX` for
    /// tables not tiered to the lake): local segments from there on stay until it has, as the
    /// lake tiering reads the local log only.
    pub(super) fn lake_pending_from(
        &self,
        meta: &TableMeta,
        tb: &crate::tablets::TableBucket,
    ) -> i64 {
        #[cfg(feature = "lake")]
        if let Some(lake) = self.lake.get() {
            if crate::lake::lake_enabled(meta) {
                return lake
                    .snapshot(meta.entry.id, None)
                    .and_then(|s| s.offsets.get(&(tb.partition_id, tb.bucket)).copied())
                    .unwrap_or(0);
            }
        }
        let _ = (meta, tb);
        i64::MAX
    }

    /// ALTER TABLE ADD COLUMN (runs on the blocking pool): checked and planned in the catalog,
    /// then for a lake-enabled table its lake table is altered, then the new schema is stored
    /// — "lake first", as Fluss 0.9.1's `MetadataManager.alterTableSchema`: when the lake
    /// refuses or fails, the ALTER fails and the Fluss schema is unchanged. Commit rounds are
    /// held off meanwhile (before the catalog lock, the order a round takes them in). Returns
    /// the table's new meta (None: missing and `ignore`).
    pub(super) fn add_columns(
        &self,
        path: &riverlet::metadata::TablePath,
        columns: &[riverlet::metadata::AddColumn],
        ignore: bool,
    ) -> Result<Option<std::sync::Arc<TableMeta>>> {
        #[cfg(feature = "lake")]
        let (lake, handle) = match self.lake.get() {
            Some(l) => (
                Some(l),
                Some(tokio::runtime::Handle::try_current().map_err(|e| {
                    riverlet::Error::internal(format!("ALTER TABLE outside the runtime: {e}"))
                })?),
            ),
            None => (None, None),
        };
        #[cfg(feature = "lake")]
        let _no_round = match (lake, &handle) {
            (Some(l), Some(h)) => Some(h.block_on(l.hold_commits())),
            _ => None,
        };
        let mut c = super::lock(&self.catalog);
        let Some((current, altered)) =
            c.plan_add_columns(&path.database, &path.table, columns, ignore)?
        else {
            return Ok(None);
        };
        if current.descriptor.lake_enabled() {
            #[cfg(feature = "lake")]
            if let (Some(l), Some(h)) = (lake, &handle) {
                h.block_on(l.add_columns(&current, &altered, columns))?;
                return c.store_altered(altered).map(Some);
            }
            // Fluss's coordinator answers so
            return Err(fluss(
                error_codes::INVALID_ALTER_TABLE_EXCEPTION,
                format!(
                    "Cannot alter schema for datalake enabled table {path}, because the Fluss \
                     cluster doesn't enable datalake tables."
                ),
            ));
        }
        c.store_altered(altered).map(Some)
    }

    /// Creates the lake table of a new lake-enabled table (runs on the blocking pool).
    pub(super) fn create_lake_table(&self, meta: &std::sync::Arc<TableMeta>) -> Result<()> {
        #[cfg(feature = "lake")]
        if let Some(lake) = self.lake.get() {
            if crate::lake::lake_enabled(meta) {
                let handle = tokio::runtime::Handle::try_current().map_err(|e| {
                    riverlet::Error::internal(format!(
                        "lake table creation outside the runtime: {e}"
                    ))
                })?;
                return handle.block_on(lake.create_table(meta));
            }
        }
        let _ = meta;
        Ok(())
    }
}

#[cfg(feature = "lake")]
impl Server {
    /// Commits every lake-enabled table whose freshness interval passed (`all`: every one,
    /// now). Errors are logged per table when `all` is false, returned otherwise.
    pub async fn lake_round(&self, all: bool) -> Result<()> {
        let Some(lake) = self.lake.get().cloned() else {
            return Ok(());
        };
        let tables: Vec<std::sync::Arc<TableMeta>> = super::lock(&self.catalog)
            .all_tables()
            .into_iter()
            .filter(|m| crate::lake::lake_enabled(m))
            .collect();
        for meta in tables {
            if !all && !lake.due(&meta) {
                continue;
            }
            match lake.commit_table(self, &meta).await {
                Ok(Some(s)) => tracing::debug!(
                    "{}: lake snapshot {} at offsets {:?}",
                    meta.path(),
                    s.snapshot_id,
                    s.offsets
                ),
                Ok(None) => {}
                Err(e) if all => return Err(e),
                Err(e) => tracing::warn!("{}: lake tiering failed: {e}", meta.path()),
            }
        }
        Ok(())
    }
}
