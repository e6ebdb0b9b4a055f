//! [`Table`]: a handle on one table, the entry point of writers and (in `core::scan`) readers,
//! and [`TableView`], which of the table's readable forms (the table, its lake rows, its lake
//! snapshots) the handle reads.

use std::sync::Arc;

use super::Connection;
use crate::metadata::table::{split_table_name, ViewKind};
use crate::metadata::{DataType, Schema, TableInfo, TablePath};
use crate::{Error, ErrorKind, Result};

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
    /// Whether a read of this view can be split by bucket (a bucket or partition selection
    /// per reader, as engines split reads): the table's can; a lake view is read whole, its
    /// rows being the lake's (a lake view's read refuses a selection).
    pub fn reads_by_bucket(self) -> bool {
        self == TableView::Table
    }

    /// The table a path names and the view of it, by [`split_table_name`]: `db.t$lake` is
    /// (`db.t`, `Lake`). Any other name (a plain one, a `$changelog` one, which the core reads
    /// as a form of read and does not open, or one that is only a suffix) is the table itself.
    pub fn split(path: &TablePath) -> (TablePath, TableView) {
        match split_table_name(&path.table) {
            Ok((base, ViewKind::Lake)) => (TablePath::new(&path.database, base), TableView::Lake),
            Ok((base, ViewKind::LakeSnapshots)) => (
                TablePath::new(&path.database, base),
                TableView::LakeSnapshots,
            ),
            _ => (path.clone(), TableView::Table),
        }
    }

    /// The kind of name this view is opened by.
    pub fn kind(self) -> ViewKind {
        match self {
            TableView::Table => ViewKind::Table,
            TableView::Lake => ViewKind::Lake,
            TableView::LakeSnapshots => ViewKind::LakeSnapshots,
        }
    }

    /// The suffix of the view's name (`""`, `$lake`, `$lake$snapshots`).
    pub fn suffix(self) -> &'static str {
        self.kind().suffix()
    }

    /// The schema of this view of table `info`, in Fluss types (Fluss's system tables): the
    /// table's own for `Table`; for `Lake` the table's columns then `__bucket` INT, `__offset`
    /// BIGINT, `__timestamp` TIMESTAMP_LTZ(3); for `LakeSnapshots` of an Iceberg lake
    /// `committed_at` TIMESTAMP_LTZ(3), `snapshot_id` BIGINT, `parent_id` BIGINT (null for the
    /// first), `operation` STRING, and of a Paimon lake the columns of Paimon's `t$snapshots`
    /// (`snapshot_id`, `schema_id`, `commit_user`, `commit_identifier`, `commit_kind`,
    /// `commit_time` TIMESTAMP(3), the manifest lists, the record counts, `watermark`). Reads of a view return [`Schema::to_arrow`] of it, like reads of a
    /// table. A lake view of a table that is not lake-enabled does not exist (`NotFound`, as
    /// with Fluss).
    pub fn schema(self, info: &TableInfo) -> Result<Schema> {
        if self == TableView::Table {
            return Ok(info.schema().clone());
        }
        if !info.descriptor.lake_enabled() {
            return Err(not_lake_enabled(info, self));
        }
        let paimon = info.descriptor.datalake_format().as_deref() == Some("paimon");
        let b = match self {
            // Paimon's own `t$snapshots` system table, which Fluss maps `t$lake$snapshots` to
            // for a Paimon lake (Paimon's SnapshotsTable columns).
            TableView::LakeSnapshots if paimon => Schema::builder()
                .column("snapshot_id", DataType::bigint().not_null())
                .column("schema_id", DataType::bigint().not_null())
                .column("commit_user", DataType::string().not_null())
                .column("commit_identifier", DataType::bigint().not_null())
                .column("commit_kind", DataType::string().not_null())
                .column("commit_time", DataType::timestamp(3).not_null())
                .column("base_manifest_list", DataType::string().not_null())
                .column("delta_manifest_list", DataType::string().not_null())
                .column("changelog_manifest_list", DataType::string())
                .column("total_record_count", DataType::bigint())
                .column("delta_record_count", DataType::bigint())
                .column("changelog_record_count", DataType::bigint())
                .column("watermark", DataType::bigint()),
            TableView::LakeSnapshots => Schema::builder()
                .column("committed_at", DataType::timestamp_ltz(3).not_null())
                .column("snapshot_id", DataType::bigint().not_null())
                .column("parent_id", DataType::bigint())
                .column("operation", DataType::string().not_null()),
            _ => {
                let mut b = Schema::builder();
                for c in &info.schema().columns {
                    b = b.column(c.name.clone(), c.data_type.clone());
                }
                let system = [
                    DataType::int(),
                    DataType::bigint(),
                    DataType::timestamp_ltz(3),
                ];
                for (name, t) in LAKE_SYSTEM_COLUMNS.iter().zip(system) {
                    b = b.column(*name, t.not_null());
                }
                b
            }
        };
        b.build()
    }
}

/// The system columns Fluss's lake layout appends to a table's columns in `db.t$lake`, in
/// order: the bucket, the log offset and the commit time of each row.
pub const LAKE_SYSTEM_COLUMNS: [&str; 3] = ["__bucket", "__offset", "__timestamp"];

/// The error for a lake view of a table that is not lake-enabled.
fn not_lake_enabled(info: &TableInfo, view: TableView) -> Error {
    let name = &info.table_path;
    Error::new(
        ErrorKind::NotFound,
        format!(
            "{name}{} does not exist: table '{name}' is not lake-enabled \
             (table.datalake.enabled is not true)",
            view.suffix()
        ),
    )
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

    /// The schema of what this handle reads, in Fluss types: the table's, or for a lake view
    /// the view's ([`TableView::schema`]; `NotFound` for a table that is not lake-enabled).
    pub fn schema(&self) -> Result<Schema> {
        self.view.schema(&self.info)
    }

    /// Whether the table has a primary key.
    pub fn has_primary_key(&self) -> bool {
        self.info.descriptor.has_primary_key()
    }
}
