//! [`Table`]: a handle on one table, the entry point of writers and (in `core::scan`) readers.

use std::sync::Arc;

use super::Connection;
use crate::metadata::{TableInfo, TablePath};

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
}
