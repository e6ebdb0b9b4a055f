//! The blocking facade: the same operations as [`crate::client`] and [`crate::write`] as plain
//! blocking calls, backed by one lazily created global tokio runtime. This is the only API the
//! bindings (Python, JNI, C) call.
//!
//! - [`configure_runtime`]`(threads)` before first use; [`shutdown_runtime`] at exit.
//! - [`block_on`] / [`block_on_interruptible`] for bindings' own futures; they refuse to run
//!   inside an async runtime (clear [`ErrorKind::Unsupported`](crate::ErrorKind) error) instead
//!   of nesting. Safe from any thread.
//! - [`Connection`], [`Admin`], [`Table`], [`AppendWriter`], [`UpsertWriter`], [`WriteHandle`];
//!   [`TableWriters`] for bindings whose table handle writes itself (calls kept in order).
//!   `Connection::table` takes `db.t$lake` and `db.t$lake$snapshots` too (the lake views, read
//!   like any table; see [`crate::client::TableView`]).
//! - Reads from one plain request each (see [`scan`]): [`Table::read`]`(&ReadRequest)` ->
//!   [`BatchReader`] (an [`arrow_array::RecordBatchReader`] carrying the read's warnings),
//!   [`Table::count`], [`Table::subscribe`]`(&SubscribeRequest)` -> [`scan::Subscription`].

mod reader;
mod runtime;
pub mod scan;
mod writers;

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::client::{self, BucketLeader, ClientConfig, OffsetSpec, PartitionInfo};
use crate::metadata::{PartitionSpec, Schema, TableDescriptor, TableInfo, TablePath};
use crate::row::Datum;
use crate::scan::Expr;
use crate::write::{self, Assignments, WriteFuture};
use crate::Result;

pub use crate::scan::{BucketOffset, Filter, ReadRequest, StartupMode, SubscribeRequest};
pub use reader::{AsyncBatchSource, BatchReader};
pub use runtime::{
    block_on, block_on_interruptible, configure_runtime, runtime_handle, shutdown_runtime,
};
pub use writers::TableWriters;

/// Flattens `block_on` of a fallible future.
fn run<T>(fut: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    block_on(fut)?
}

/// A blocking connection to a Fluss cluster (cheap to clone).
#[derive(Debug, Clone)]
pub struct Connection {
    inner: client::Connection,
}

impl Connection {
    /// Connects (bootstrap with retries and backoff).
    pub fn connect(config: ClientConfig) -> Result<Connection> {
        Ok(Connection {
            inner: run(client::Connection::connect(config))?,
        })
    }

    /// Connects with default settings to `bootstrap_servers`.
    pub fn connect_to(bootstrap_servers: &str) -> Result<Connection> {
        Self::connect(ClientConfig::new(bootstrap_servers))
    }

    /// The async connection inside.
    pub fn inner(&self) -> &client::Connection {
        &self.inner
    }

    /// A blocking admin.
    pub fn admin(&self) -> Admin {
        Admin {
            inner: self.inner.admin(),
        }
    }

    /// Opens a table.
    pub fn table(&self, path: &TablePath) -> Result<Table> {
        let inner = run(self.inner.table(path))?;
        Ok(Table { inner })
    }

    /// Opens a table named `db.table`.
    pub fn table_by_name(&self, name: &str) -> Result<Table> {
        self.table(&TablePath::parse(name)?)
    }

    /// Closes the connection; later calls fail with `ErrorKind::Closed`.
    pub fn close(&self) -> Result<()> {
        block_on(self.inner.close())
    }

    /// Whether [`Connection::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }
}

/// Blocking cluster administration.
#[derive(Debug, Clone)]
pub struct Admin {
    inner: client::Admin,
}

impl Admin {
    /// The async admin inside.
    pub fn inner(&self) -> &client::Admin {
        &self.inner
    }
    /// Creates a database.
    pub fn create_database(&self, name: &str, ignore_if_exists: bool) -> Result<()> {
        run(self.inner.create_database(name, ignore_if_exists))
    }
    /// Drops a database.
    pub fn drop_database(
        &self,
        name: &str,
        ignore_if_not_exists: bool,
        cascade: bool,
    ) -> Result<()> {
        run(self
            .inner
            .drop_database(name, ignore_if_not_exists, cascade))
    }
    /// Every server option and its source (see
    /// [`crate::client::Admin::describe_cluster_configs`]).
    pub fn describe_cluster_configs(&self) -> Result<Vec<crate::client::ConfigEntry>> {
        run(self.inner.describe_cluster_configs())
    }
    /// Changes dynamic server options (see [`crate::client::Admin::alter_cluster_configs`]).
    pub fn alter_cluster_configs(&self, changes: &[crate::client::ConfigChange]) -> Result<()> {
        run(self.inner.alter_cluster_configs(changes))
    }
    /// Changes a database's properties and comment (see
    /// [`crate::client::Admin::alter_database`]).
    pub fn alter_database(
        &self,
        name: &str,
        changes: &[crate::client::ConfigChange],
        comment: Option<&str>,
        ignore_if_not_exists: bool,
    ) -> Result<()> {
        run(self
            .inner
            .alter_database(name, changes, comment, ignore_if_not_exists))
    }
    /// A database's comment and properties (see [`crate::client::Admin::database_info`]).
    pub fn database_info(&self, name: &str) -> Result<crate::client::DatabaseInfo> {
        run(self.inner.database_info(name))
    }
    /// The cluster's health (see [`crate::client::Admin::cluster_health`]).
    pub fn cluster_health(&self) -> Result<crate::client::ClusterHealth> {
        run(self.inner.cluster_health())
    }
    /// Adds ACL bindings (see [`crate::client::Admin::create_acls`]).
    pub fn create_acls(&self, bindings: &[crate::acl::AclBinding]) -> Result<()> {
        run(self.inner.create_acls(bindings))
    }
    /// The ACL bindings matching a filter (see [`crate::client::Admin::list_acls`]).
    pub fn list_acls(&self, filter: &crate::acl::AclFilter) -> Result<Vec<crate::acl::AclBinding>> {
        run(self.inner.list_acls(filter))
    }
    /// Removes the ACL bindings matching any filter and returns them (see
    /// [`crate::client::Admin::drop_acls`]).
    pub fn drop_acls(
        &self,
        filters: &[crate::acl::AclFilter],
    ) -> Result<Vec<crate::acl::AclBinding>> {
        run(self.inner.drop_acls(filters))
    }
    /// Registers a producer's offsets (see
    /// [`crate::client::Admin::register_producer_offsets`]).
    pub fn register_producer_offsets(
        &self,
        producer_id: &str,
        offsets: &std::collections::BTreeMap<crate::client::ProducerBucket, i64>,
        ttl: Option<std::time::Duration>,
    ) -> Result<crate::client::RegisterResult> {
        run(self
            .inner
            .register_producer_offsets(producer_id, offsets, ttl))
    }
    /// A producer's registered offsets, or None (see
    /// [`crate::client::Admin::get_producer_offsets`]).
    pub fn get_producer_offsets(
        &self,
        producer_id: &str,
    ) -> Result<Option<crate::client::ProducerOffsets>> {
        run(self.inner.get_producer_offsets(producer_id))
    }
    /// A lake-enabled table's latest lake snapshot, the one with `snapshot_id`, or with
    /// `readable` the one union reads take; None when it has none (see
    /// [`crate::client::Admin::find_lake_snapshot`]).
    pub fn lake_snapshot(
        &self,
        path: &TablePath,
        snapshot_id: Option<i64>,
        readable: bool,
    ) -> Result<Option<crate::client::LakeSnapshot>> {
        run(self.inner.find_lake_snapshot(path, snapshot_id, readable))
    }
    /// Deletes a producer's registered offsets (see
    /// [`crate::client::Admin::delete_producer_offsets`]).
    pub fn delete_producer_offsets(&self, producer_id: &str) -> Result<()> {
        run(self.inner.delete_producer_offsets(producer_id))
    }
    /// Lists databases.
    pub fn list_databases(&self) -> Result<Vec<String>> {
        run(self.inner.list_databases())
    }
    /// Whether a database exists.
    pub fn database_exists(&self, name: &str) -> Result<bool> {
        run(self.inner.database_exists(name))
    }
    /// Creates a table.
    pub fn create_table(
        &self,
        path: &TablePath,
        descriptor: &TableDescriptor,
        ignore_if_exists: bool,
    ) -> Result<()> {
        run(self.inner.create_table(path, descriptor, ignore_if_exists))
    }
    /// `ALTER TABLE ... ADD COLUMN` (see [`crate::client::Admin::add_columns`]).
    pub fn add_columns(
        &self,
        path: &TablePath,
        columns: &[crate::metadata::AddColumn],
    ) -> Result<()> {
        run(self.inner.add_columns(path, columns))
    }
    /// Drops a table.
    pub fn drop_table(&self, path: &TablePath, ignore_if_not_exists: bool) -> Result<()> {
        run(self.inner.drop_table(path, ignore_if_not_exists))
    }
    /// Lists the tables of a database.
    pub fn list_tables(&self, database: &str) -> Result<Vec<String>> {
        run(self.inner.list_tables(database))
    }
    /// A table's current info.
    pub fn table_info(&self, path: &TablePath) -> Result<Arc<TableInfo>> {
        run(self.inner.table_info(path))
    }
    /// Whether a table exists.
    pub fn table_exists(&self, path: &TablePath) -> Result<bool> {
        run(self.inner.table_exists(path))
    }
    /// Lists partitions.
    pub fn list_partitions(&self, path: &TablePath) -> Result<Vec<PartitionInfo>> {
        run(self.inner.list_partitions(path))
    }
    /// Creates a partition.
    pub fn create_partition(
        &self,
        path: &TablePath,
        spec: &PartitionSpec,
        ignore_if_exists: bool,
    ) -> Result<()> {
        run(self.inner.create_partition(path, spec, ignore_if_exists))
    }
    /// Drops a partition.
    pub fn drop_partition(
        &self,
        path: &TablePath,
        spec: &PartitionSpec,
        ignore_if_not_exists: bool,
    ) -> Result<()> {
        run(self.inner.drop_partition(path, spec, ignore_if_not_exists))
    }
    /// Offsets per bucket (all buckets when `buckets` is empty).
    pub fn list_offsets(
        &self,
        path: &TablePath,
        partition: Option<&str>,
        buckets: &[i32],
        spec: OffsetSpec,
    ) -> Result<BTreeMap<i32, i64>> {
        run(self.inner.list_offsets(path, partition, buckets, spec))
    }
}

/// A blocking table handle.
#[derive(Debug, Clone)]
pub struct Table {
    inner: client::Table,
}

impl Table {
    /// Wraps an async table.
    pub fn from_async(inner: client::Table) -> Self {
        Table { inner }
    }
    /// The async table inside (scan wrappers use it).
    pub fn inner(&self) -> &client::Table {
        &self.inner
    }
    /// The table's info.
    pub fn info(&self) -> &Arc<TableInfo> {
        self.inner.info()
    }
    /// The table's path.
    pub fn path(&self) -> &TablePath {
        self.inner.path()
    }
    /// The schema of what this handle reads, in Fluss types: the table's, or for a lake view
    /// (`db.t$lake`, `db.t$lake$snapshots`) the view's (`NotFound` for a table that is not
    /// lake-enabled).
    pub fn schema(&self) -> Result<Schema> {
        self.inner.schema()
    }
    /// The Arrow schema of the handle's reads ([`Table::schema`] in Fluss's Arrow types); for a
    /// lake view of a table that is not lake-enabled, the table's (its reads report the error).
    pub fn arrow_schema(&self) -> SchemaRef {
        match self.inner.schema() {
            Ok(s) => s.to_arrow(),
            Err(_) => self.inner.info.descriptor.schema.to_arrow(),
        }
    }
    /// An append writer (log tables).
    pub fn new_append_writer(&self) -> Result<AppendWriter> {
        let t = self.inner.clone();
        let inner = run(async move { t.new_append_writer() })?;
        Ok(AppendWriter { inner })
    }
    /// An upsert writer (primary-key tables), optionally for a partial update of some columns.
    pub fn new_upsert_writer(&self, partial_columns: Option<&[&str]>) -> Result<UpsertWriter> {
        let t = self.inner.clone();
        let cols: Option<Vec<String>> =
            partial_columns.map(|c| c.iter().map(|s| s.to_string()).collect());
        let inner = run(async move {
            let refs: Option<Vec<&str>> = cols
                .as_ref()
                .map(|c| c.iter().map(|s| s.as_str()).collect());
            t.new_upsert_writer(refs.as_deref())
        })?;
        Ok(UpsertWriter { inner })
    }
    /// The leader of every bucket (of every partition) as the cluster names it now, `None`
    /// where no live leader is known (see [`crate::client::Table::bucket_leaders`]).
    pub fn bucket_leaders(&self) -> Result<Vec<BucketLeader>> {
        run(self.inner.bucket_leaders())
    }
    /// Deletes the rows of this primary-key table that match `filter` and returns how many
    /// (see [`crate::client::Table::delete_where`]).
    pub fn delete_where(&self, filter: &Expr) -> Result<u64> {
        run(self.inner.delete_where(filter))
    }
    /// Sets columns of the rows that match `filter` and returns how many rows were updated
    /// (see [`crate::client::Table::update_where`]).
    pub fn update_where(&self, filter: &Expr, assignments: &Assignments) -> Result<u64> {
        run(self.inner.update_where(filter, assignments))
    }
}

/// The acknowledgement of one blocking write: [`WriteHandle::wait`] blocks until the server
/// acked it. Dropping it is fine (use `flush` to wait for everything).
#[derive(Debug)]
pub struct WriteHandle {
    fut: Option<WriteFuture>,
}

impl WriteHandle {
    fn submit(mut fut: WriteFuture) -> Result<WriteHandle> {
        // Writes rejected before queueing (schema, null key...) fail right here.
        match fut.try_result() {
            Some(r) => {
                r?;
                Ok(WriteHandle { fut: None })
            }
            None => Ok(WriteHandle { fut: Some(fut) }),
        }
    }

    /// Blocks until the write is acknowledged.
    pub fn wait(self) -> Result<()> {
        match self.fut {
            None => Ok(()),
            Some(f) => run(f),
        }
    }
}

/// A blocking append writer. `append*` return once the write is queued (waiting while the
/// writer's buffer is full); `flush` waits for the acks.
#[derive(Debug)]
pub struct AppendWriter {
    inner: write::AppendWriter,
}

impl AppendWriter {
    /// The async writer inside.
    pub fn inner(&self) -> &write::AppendWriter {
        &self.inner
    }
    /// Queues an Arrow batch.
    pub fn append(&self, batch: &RecordBatch) -> Result<WriteHandle> {
        block_on(self.inner.ready())?;
        WriteHandle::submit(self.inner.append_batch(batch))
    }
    /// Queues rows given as values.
    pub fn append_rows(&self, rows: &[Vec<Datum>]) -> Result<WriteHandle> {
        block_on(self.inner.ready())?;
        WriteHandle::submit(self.inner.append_rows(rows))
    }
    /// Waits for every queued write; returns the first error since the previous flush.
    pub fn flush(&self) -> Result<()> {
        run(self.inner.flush())
    }
    /// Flushes and stops the writer.
    pub fn close(&self) -> Result<()> {
        run(self.inner.close())
    }
    /// Stops the writer at once, discarding the writes not acknowledged yet (they fail with
    /// [`crate::ErrorKind::Closed`]); for a caller that will write those rows again. See
    /// [`write::AppendWriter::abort`].
    pub fn abort(&self) -> Result<()> {
        block_on(self.inner.abort())
    }
}

/// A blocking upsert writer.
#[derive(Debug)]
pub struct UpsertWriter {
    inner: write::UpsertWriter,
}

impl UpsertWriter {
    /// The async writer inside.
    pub fn inner(&self) -> &write::UpsertWriter {
        &self.inner
    }
    /// Queues upserts of a batch's rows.
    pub fn upsert(&self, batch: &RecordBatch) -> Result<WriteHandle> {
        block_on(self.inner.ready())?;
        WriteHandle::submit(self.inner.upsert_batch(batch))
    }
    /// Queues deletes of a batch's keys.
    pub fn delete(&self, batch: &RecordBatch) -> Result<WriteHandle> {
        block_on(self.inner.ready())?;
        WriteHandle::submit(self.inner.delete_batch(batch))
    }
    /// Queues upserts of rows given as values.
    pub fn upsert_rows(&self, rows: &[Vec<Datum>]) -> Result<WriteHandle> {
        block_on(self.inner.ready())?;
        WriteHandle::submit(self.inner.upsert_rows(rows))
    }
    /// Queues deletes of rows (full rows or primary key values).
    pub fn delete_rows(&self, rows: &[Vec<Datum>]) -> Result<WriteHandle> {
        block_on(self.inner.ready())?;
        WriteHandle::submit(self.inner.delete_rows(rows))
    }
    /// Waits for every queued write; returns the first error since the previous flush.
    pub fn flush(&self) -> Result<()> {
        run(self.inner.flush())
    }
    /// Flushes and stops the writer.
    pub fn close(&self) -> Result<()> {
        run(self.inner.close())
    }
    /// Stops the writer at once, discarding the writes not acknowledged yet (they fail with
    /// [`crate::ErrorKind::Closed`]); for a caller that will write those rows again. See
    /// [`write::UpsertWriter::abort`].
    pub fn abort(&self) -> Result<()> {
        block_on(self.inner.abort())
    }
}
