//! The Fluss cluster as a DataFusion catalog: databases are schemas, tables are
//! [`FlussTable`]s, and `<table>$changelog` names a table's changelog.

use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, SchemaProvider, TableProvider};
use datafusion::error::{DataFusionError, Result as DfResult};
use riverlet::client::Connection;
use riverlet::metadata::{split_table_name, TablePath, ViewKind};
use riverlet::ErrorKind;

use crate::core_err;
use crate::provider::{FlussTable, View};

/// Runs `fut` from one of DataFusion's synchronous catalog calls (listing names).
///
/// Those calls are made on a runtime worker; `block_in_place` lets the worker wait without
/// starving the runtime. A current-thread runtime cannot do that: it gets an error instead.
pub(crate) fn wait<T>(fut: impl Future<Output = riverlet::Result<T>>) -> DfResult<T> {
    let handle = tokio::runtime::Handle::try_current().map_err(|_| {
        DataFusionError::Execution("the Fluss catalog needs a tokio runtime".to_string())
    })?;
    if handle.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
        return Err(DataFusionError::Execution(
            "listing Fluss databases and tables needs a multi-thread tokio runtime".to_string(),
        ));
    }
    tokio::task::block_in_place(|| handle.block_on(fut)).map_err(core_err)
}

/// The databases of one Fluss connection.
#[derive(Debug, Clone)]
pub struct FlussCatalog {
    conn: Connection,
}

impl FlussCatalog {
    /// A catalog over `conn`.
    pub fn new(conn: Connection) -> FlussCatalog {
        FlussCatalog { conn }
    }

    /// The connection inside.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }
}

impl CatalogProvider for FlussCatalog {
    fn schema_names(&self) -> Vec<String> {
        match wait(self.conn.admin().list_databases()) {
            Ok(names) => names,
            Err(e) => {
                tracing::warn!("listing Fluss databases: {e}");
                vec![]
            }
        }
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        Some(Arc::new(FlussDatabase {
            conn: self.conn.clone(),
            database: name.to_string(),
        }))
    }
}

/// One Fluss database as a DataFusion schema.
#[derive(Debug, Clone)]
pub struct FlussDatabase {
    conn: Connection,
    database: String,
}

/// Opens `name` of `database` (`<table>` or `<table>$changelog`); None when there is no such
/// table.
pub async fn open_table(
    conn: &Connection,
    database: &str,
    name: &str,
) -> DfResult<Option<FlussTable>> {
    // The core opens lake views by their full name; a changelog is a way of reading the table.
    let (table, view) = match split_table_name(name).map_err(core_err)? {
        (t, ViewKind::Changelog) => (t, View::Changelog),
        _ => (name, View::Latest),
    };
    match conn.table(&TablePath::new(database, table)).await {
        Ok(t) => FlussTable::new(t, view).map(Some),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(core_err(e)),
    }
}

#[async_trait]
impl SchemaProvider for FlussDatabase {
    fn table_names(&self) -> Vec<String> {
        match wait(self.conn.admin().list_tables(&self.database)) {
            Ok(names) => names,
            Err(e) => {
                tracing::warn!("listing the tables of {}: {e}", self.database);
                vec![]
            }
        }
    }

    async fn table(&self, name: &str) -> DfResult<Option<Arc<dyn TableProvider>>> {
        Ok(open_table(&self.conn, &self.database, name)
            .await?
            .map(|t| Arc::new(t) as Arc<dyn TableProvider>))
    }

    fn table_exist(&self, name: &str) -> bool {
        // A view exists when its table does.
        let Ok((table, _)) = split_table_name(name) else {
            return false;
        };
        wait(
            self.conn
                .admin()
                .table_exists(&TablePath::new(&self.database, table)),
        )
        .unwrap_or(false)
    }
}
