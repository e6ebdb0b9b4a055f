//! [`Table`]: a handle on one table, the entry point of writers and (in `core::scan`) readers,
//! and [`TableView`], which of the table's readable forms (the table, its lake rows, its lake
//! snapshots) the handle reads.

use std::sync::Arc;

use super::Connection;
use crate::metadata::table::split_system_suffix;
use crate::metadata::{TableInfo, TablePath};

/// What a [`Table`] handle reads, from the name it was opened by: `db.t` the table itself
/// (for a lake-enabled log table with a lake snapshot, the union of the lake and the log after
/// it), `db.t$lake` only the rows of the table's latest lake snapshot, `db.t$lake$snapshots`
/// the lake's snapshots (Fluss's system tables of the same names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TableView {
    /// The table (`db.t`).
    #[default]
    Table,
    /// The rows of the latest lake snapshot (`db.t$lake`).
    Lake,
    /// One row per lake snapshot (`db.t$lake$snapshots`).
    LakeSnapshots,
}

impl TableView {
    /// The table a path names and the view of it: `db.t$lake` is (`db.t`, `Lake`).
    pub fn split(path: &TablePath) -> (TablePath, TableView) {
        match split_system_suffix(&path.table) {
            (base, Some("$lake")) => (TablePath::new(&path.database, base), TableView::Lake),
            (base, Some(_)) => (
                TablePath::new(&path.database, base),
                TableView::LakeSnapshots,
            ),
            (_, None) => (path.clone(), TableView::Table),
        }
    }

    /// The suffix of the view's name (`""`, `$lake`, `$lake$snapshots`).
    pub fn suffix(self) -> &'static str {
        match self {
            TableView::Table => "",
            TableView::Lake => "$lake",
            TableView::LakeSnapshots => "$lake$snapshots",
        }
    }
}

/// One table of the cluster, with the info it had when it was opened.
#[derive(Debug, Clone)]
pub struct Table {
    /// The connection the table was opened on.
    pub conn: Connection,
    /// The table's info (schema, descriptor, ids) at open time.
    pub info: Arc<TableInfo>,
    /// What reads of this handle return (the table, or one of its lake views).
    pub view: TableView,
}

impl Table {
    pub(crate) fn new(conn: Connection, info: Arc<TableInfo>) -> Self {
        Table {
            conn,
            info,
            view: TableView::Table,
        }
    }

    /// The same table read as `view`.
    pub fn with_view(mut self, view: TableView) -> Self {
        self.view = view;
        self
    }

    /// The name reads report: `db.t`, or `db.t$lake` / `db.t$lake$snapshots` for a lake view.
    pub fn view_name(&self) -> String {
        format!("{}{}", self.info.table_path, self.view.suffix())
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
