//! [`Table`]: a handle on one table, the entry point of writers and (in `core::scan`) readers.

use std::sync::Arc;

use super::Connection;
use crate::metadata::{TableInfo, TablePath};
use crate::write::{AppendWriter, UpsertWriter};
use crate::Result;

/// One table of the cluster, with the info it had when it was opened.
#[derive(Debug, Clone)]
pub struct Table {
    /// The connection the table was opened on.
    pub conn: Connection,
    /// The table's info (schema, descriptor, ids) at open time.
    pub info: Arc<TableInfo>,
}

impl Table {
    pub(crate) fn new(conn: Connection, info: Arc<TableInfo>) -> Self {
        Table { conn, info }
    }

    /// The table's info.
    pub fn info(&self) -> &Arc<TableInfo> {
        &self.info
    }

    /// The table's path.
    pub fn path(&self) -> &TablePath {
        &self.info.table_path
    }

    /// The connection the table was opened on.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Whether the table has a primary key.
    pub fn has_primary_key(&self) -> bool {
        self.info.descriptor.has_primary_key()
    }

    /// A writer appending rows or Arrow batches to this log table. Fails (naming the table)
    /// when the table has a primary key: use [`Table::new_upsert_writer`] there.
    pub fn new_append_writer(&self) -> Result<AppendWriter> {
        AppendWriter::new(self.clone())
    }

    /// A writer upserting and deleting rows of this primary-key table. With `partial_columns`,
    /// upserts update only those columns (they must include the whole primary key). Fails
    /// (naming the table) on a log table.
    pub fn new_upsert_writer(&self, partial_columns: Option<&[&str]>) -> Result<UpsertWriter> {
        UpsertWriter::new(self.clone(), partial_columns)
    }
}
