//! `_riverlet.Connection` and `_riverlet.Table`: admin calls and writers over
//! `riverlet::blocking`. Every blocking call runs with the GIL released.

use std::collections::BTreeMap;

use arrow::pyarrow::{PyArrowType, ToPyArrow};
use arrow_array::RecordBatch;
use arrow_schema::Schema as ArrowSchema;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use riverlet::blocking;
use riverlet::client::ClientConfig;
use riverlet::metadata::{PartitionSpec, TableDescriptor, TableOptions, TablePath};

use crate::errors::{closed, enter, PyResultExt};

/// A view of the "closed" flag of a connection, which the core owns, for everything opened from
/// it.
#[derive(Debug, Clone)]
pub struct Liveness(blocking::Connection);

impl Liveness {
    /// Fails with `ClosedError` naming `what` once the connection is closed.
    pub fn check(&self, what: &str) -> PyResult<()> {
        if self.is_closed() {
            Err(closed(what))
        } else {
            Ok(())
        }
    }
    /// Whether the connection was closed.
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }
}

fn parse_path(name: &str) -> PyResult<TablePath> {
    TablePath::parse(name).py_err()
}

/// Connects to a Fluss cluster (or a `LocalServer`). `properties` are Fluss client options
/// (`bootstrap.servers`, `client.security.sasl.username`, `client.request-timeout`, ...);
/// the core parses and validates them.
#[pyfunction]
pub fn connect(py: Python<'_>, properties: BTreeMap<String, String>) -> PyResult<PyConnection> {
    enter()?;
    let config = ClientConfig::from_properties(&properties).py_err()?;
    let inner = py
        .detach(|| blocking::Connection::connect(config))
        .py_err()?;
    Ok(PyConnection {
        live: Liveness(inner.clone()),
        inner,
    })
}

/// Sets the number of worker threads of Riverlet's runtime; call before the first connection.
#[pyfunction]
pub fn configure_runtime(threads: usize) -> PyResult<()> {
    blocking::configure_runtime(threads).py_err()
}

/// A connection to a Fluss cluster; see `riverlet.Connection`.
#[pyclass(module = "riverlet._riverlet", name = "Connection")]
pub struct PyConnection {
    inner: blocking::Connection,
    live: Liveness,
}

impl PyConnection {
    fn admin(&self) -> PyResult<blocking::Admin> {
        enter()?;
        self.live.check("the connection")?;
        Ok(self.inner.admin())
    }
}

#[pymethods]
impl PyConnection {
    /// Creates a database.
    #[pyo3(signature = (name, if_not_exists = false))]
    fn create_database(&self, py: Python<'_>, name: String, if_not_exists: bool) -> PyResult<()> {
        let admin = self.admin()?;
        py.detach(|| admin.create_database(&name, if_not_exists))
            .py_err()
    }

    /// Drops a database (`cascade` drops its tables too).
    #[pyo3(signature = (name, if_exists = false, cascade = false))]
    fn drop_database(
        &self,
        py: Python<'_>,
        name: String,
        if_exists: bool,
        cascade: bool,
    ) -> PyResult<()> {
        let admin = self.admin()?;
        py.detach(|| admin.drop_database(&name, if_exists, cascade))
            .py_err()
    }

    /// The names of all databases.
    fn list_databases(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let admin = self.admin()?;
        py.detach(|| admin.list_databases()).py_err()
    }

    /// Whether a database exists.
    fn database_exists(&self, py: Python<'_>, name: String) -> PyResult<bool> {
        let admin = self.admin()?;
        py.detach(|| admin.database_exists(&name)).py_err()
    }

    /// Creates table `name` (`db.table`) with an Arrow `schema`; see `riverlet.Connection`.
    #[pyo3(signature = (name, schema, primary_key = None, partition_by = None, buckets = None,
                        bucket_keys = None, properties = None, custom_properties = None,
                        comment = None, if_not_exists = false, auto_increment = None))]
    #[allow(clippy::too_many_arguments)]
    fn create_table(
        &self,
        py: Python<'_>,
        name: String,
        schema: PyArrowType<ArrowSchema>,
        primary_key: Option<Vec<String>>,
        partition_by: Option<Vec<String>>,
        buckets: Option<Bound<'_, PyAny>>,
        bucket_keys: Option<Vec<String>>,
        properties: Option<BTreeMap<String, String>>,
        custom_properties: Option<BTreeMap<String, String>>,
        comment: Option<String>,
        if_not_exists: bool,
        auto_increment: Option<String>,
    ) -> PyResult<()> {
        let buckets = buckets
            .map(|b| crate::convert::int_arg::<i32>(&b, "buckets", "a positive 32-bit integer"))
            .transpose()?;
        let admin = self.admin()?;
        let path = parse_path(&name)?;
        let options = TableOptions {
            primary_key,
            auto_increment,
            partition_keys: partition_by.unwrap_or_default(),
            bucket_count: buckets,
            bucket_keys: bucket_keys.unwrap_or_default(),
            properties: properties.unwrap_or_default().into_iter().collect(),
            custom_properties: custom_properties.unwrap_or_default().into_iter().collect(),
            comment,
        };
        let descriptor = TableDescriptor::from_arrow(&schema.0, options).py_err()?;
        py.detach(|| admin.create_table(&path, &descriptor, if_not_exists))
            .py_err()
    }

    /// `ALTER TABLE name ADD COLUMN ...`: appends the (nullable) fields of `columns`.
    fn add_columns(
        &self,
        py: Python<'_>,
        name: String,
        columns: PyArrowType<ArrowSchema>,
    ) -> PyResult<()> {
        let admin = self.admin()?;
        let path = parse_path(&name)?;
        let columns = riverlet::metadata::AddColumn::from_arrow(&columns.0).py_err()?;
        py.detach(|| admin.add_columns(&path, &columns)).py_err()
    }

    /// Drops a table.
    #[pyo3(signature = (name, if_exists = false))]
    fn drop_table(&self, py: Python<'_>, name: String, if_exists: bool) -> PyResult<()> {
        let admin = self.admin()?;
        let path = parse_path(&name)?;
        py.detach(|| admin.drop_table(&path, if_exists)).py_err()
    }

    /// The table names of a database.
    fn list_tables(&self, py: Python<'_>, database: String) -> PyResult<Vec<String>> {
        let admin = self.admin()?;
        py.detach(|| admin.list_tables(&database)).py_err()
    }

    /// Whether a table exists.
    fn table_exists(&self, py: Python<'_>, name: String) -> PyResult<bool> {
        let admin = self.admin()?;
        let path = parse_path(&name)?;
        py.detach(|| admin.table_exists(&path)).py_err()
    }

    /// Adds ACLs, each `(resource, principal, operation, host)` in the text forms of
    /// `riverlet::acl::AclBinding::parse`.
    fn create_acls(
        &self,
        py: Python<'_>,
        acls: Vec<(String, String, String, Option<String>)>,
    ) -> PyResult<()> {
        let admin = self.admin()?;
        let bindings = acls
            .iter()
            .map(|(r, p, o, h)| riverlet::acl::AclBinding::parse(r, p, o, h.as_deref()))
            .collect::<riverlet::Result<Vec<_>>>()
            .py_err()?;
        py.detach(|| admin.create_acls(&bindings)).py_err()
    }

    /// The ACLs matching a filter (`riverlet::acl::AclFilter::parse`), as dicts.
    #[pyo3(signature = (resource = None, principal = None, operation = None, host = None, permission = None))]
    fn list_acls<'py>(
        &self,
        py: Python<'py>,
        resource: Option<String>,
        principal: Option<String>,
        operation: Option<String>,
        host: Option<String>,
        permission: Option<String>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let admin = self.admin()?;
        let f = riverlet::acl::AclFilter::parse(
            resource.as_deref(),
            principal.as_deref(),
            operation.as_deref(),
            host.as_deref(),
            permission.as_deref(),
        )
        .py_err()?;
        let found = py.detach(|| admin.list_acls(&f)).py_err()?;
        found.iter().map(|b| acl_dict(py, b)).collect()
    }

    /// Removes the ACLs matching a filter (as `list_acls`) and returns them as dicts.
    #[pyo3(signature = (resource = None, principal = None, operation = None, host = None, permission = None))]
    fn drop_acls<'py>(
        &self,
        py: Python<'py>,
        resource: Option<String>,
        principal: Option<String>,
        operation: Option<String>,
        host: Option<String>,
        permission: Option<String>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let admin = self.admin()?;
        let f = riverlet::acl::AclFilter::parse(
            resource.as_deref(),
            principal.as_deref(),
            operation.as_deref(),
            host.as_deref(),
            permission.as_deref(),
        )
        .py_err()?;
        let gone = py.detach(|| admin.drop_acls(&[f])).py_err()?;
        gone.iter().map(|b| acl_dict(py, b)).collect()
    }

    /// Every server option as a dict (`key`, `value`, `source`), see
    /// `riverlet::client::Admin::describe_cluster_configs`.
    fn describe_cluster_configs<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let admin = self.admin()?;
        let found = py.detach(|| admin.describe_cluster_configs()).py_err()?;
        found
            .into_iter()
            .map(|c| {
                let d = PyDict::new(py);
                d.set_item("key", c.key)?;
                d.set_item("value", c.value)?;
                d.set_item("source", c.source)?;
                Ok(d)
            })
            .collect()
    }

    /// Sets (`set`) and deletes (`delete`) dynamic server options.
    fn alter_cluster_configs(
        &self,
        py: Python<'_>,
        set: BTreeMap<String, String>,
        delete: Vec<String>,
    ) -> PyResult<()> {
        let admin = self.admin()?;
        let changes = config_changes(set, delete);
        py.detach(|| admin.alter_cluster_configs(&changes)).py_err()
    }

    /// Sets (`set`) and resets (`reset`) a database's custom properties and its comment
    /// (`""` removes it, None keeps it).
    fn alter_database(
        &self,
        py: Python<'_>,
        name: String,
        set: BTreeMap<String, String>,
        reset: Vec<String>,
        comment: Option<String>,
        if_exists: bool,
    ) -> PyResult<()> {
        let admin = self.admin()?;
        let changes = config_changes(set, reset);
        py.detach(|| admin.alter_database(&name, &changes, comment.as_deref(), if_exists))
            .py_err()
    }

    /// A database's `name`, `comment`, `custom_properties`, `created_time` and
    /// `modified_time` (epoch ms) as a dict.
    fn database_info<'py>(&self, py: Python<'py>, name: String) -> PyResult<Bound<'py, PyDict>> {
        let admin = self.admin()?;
        let info = py.detach(|| admin.database_info(&name)).py_err()?;
        let d = PyDict::new(py);
        d.set_item("name", info.name)?;
        d.set_item("comment", info.comment)?;
        d.set_item("custom_properties", info.custom_properties)?;
        d.set_item("created_time", info.created_time)?;
        d.set_item("modified_time", info.modified_time)?;
        Ok(d)
    }

    /// Registers a producer's offsets, `{(table_id, partition_id, bucket): offset}`, kept for
    /// `ttl_ms` (None: the server's default); true when registered, false when a live
    /// registration of that producer was kept (`riverlet::client::Admin`).
    #[pyo3(signature = (producer_id, offsets, ttl_ms = None))]
    fn register_producer_offsets(
        &self,
        py: Python<'_>,
        producer_id: String,
        offsets: BTreeMap<(i64, Option<i64>, i32), i64>,
        ttl_ms: Option<i64>,
    ) -> PyResult<bool> {
        let admin = self.admin()?;
        let ttl = ttl_ms
            .map(|ms| {
                u64::try_from(ms)
                    .map(std::time::Duration::from_millis)
                    .map_err(|_| {
                        riverlet::Error::invalid(format!("ttl_ms must not be negative, got {ms}"))
                    })
            })
            .transpose()
            .py_err()?;
        let offsets = producer_buckets(offsets);
        let r = py
            .detach(|| admin.register_producer_offsets(&producer_id, &offsets, ttl))
            .py_err()?;
        Ok(r == riverlet::client::RegisterResult::Created)
    }

    /// A producer's registration as a dict (`producer_id`, `expiration_time_ms`, `offsets`
    /// keyed by `(table_id, partition_id, bucket)`), or None.
    fn get_producer_offsets<'py>(
        &self,
        py: Python<'py>,
        producer_id: String,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let admin = self.admin()?;
        let Some(p) = py
            .detach(|| admin.get_producer_offsets(&producer_id))
            .py_err()?
        else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("producer_id", &p.producer_id)?;
        d.set_item("expiration_time_ms", p.expiration_time_ms)?;
        let offsets = PyDict::new(py);
        for (b, o) in &p.offsets {
            offsets.set_item((b.table_id, b.partition_id, b.bucket), o)?;
        }
        d.set_item("offsets", offsets)?;
        Ok(Some(d))
    }

    /// Deletes a producer's registration (nothing to delete is not an error).
    fn delete_producer_offsets(&self, py: Python<'_>, producer_id: String) -> PyResult<()> {
        let admin = self.admin()?;
        py.detach(|| admin.delete_producer_offsets(&producer_id))
            .py_err()
    }

    /// A lake-enabled table's lake snapshot as a dict (`table_id`, `snapshot_id`, `buckets`:
    /// dicts with `partition_id`, `bucket`, `log_offset`), or None when it has none.
    #[pyo3(signature = (name, snapshot_id = None, readable = false))]
    fn lake_snapshot<'py>(
        &self,
        py: Python<'py>,
        name: String,
        snapshot_id: Option<i64>,
        readable: bool,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let admin = self.admin()?;
        let path = parse_path(&name)?;
        let Some(s) = py
            .detach(|| admin.lake_snapshot(&path, snapshot_id, readable))
            .py_err()?
        else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("table_id", s.table_id)?;
        d.set_item("snapshot_id", s.snapshot_id)?;
        let buckets = s
            .buckets
            .iter()
            .map(|b| {
                let e = PyDict::new(py);
                e.set_item("partition_id", b.partition_id)?;
                e.set_item("bucket", b.bucket)?;
                e.set_item("log_offset", b.log_offset)?;
                Ok(e)
            })
            .collect::<PyResult<Vec<_>>>()?;
        d.set_item("buckets", buckets)?;
        Ok(Some(d))
    }

    /// The partitions of a table: dicts with `id`, `name` and `spec` (key -> value).
    fn list_partitions<'py>(
        &self,
        py: Python<'py>,
        name: String,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let admin = self.admin()?;
        let path = parse_path(&name)?;
        let parts = py.detach(|| admin.list_partitions(&path)).py_err()?;
        parts
            .into_iter()
            .map(|p| {
                let d = PyDict::new(py);
                d.set_item("id", p.partition_id)?;
                d.set_item("name", p.name)?;
                let spec = PyDict::new(py);
                for (k, v) in p.spec.entries {
                    spec.set_item(k, v)?;
                }
                d.set_item("spec", spec)?;
                Ok(d)
            })
            .collect()
    }

    /// Creates a partition given as key -> value.
    #[pyo3(signature = (name, spec, if_not_exists = false))]
    fn create_partition(
        &self,
        py: Python<'_>,
        name: String,
        spec: Vec<(String, String)>,
        if_not_exists: bool,
    ) -> PyResult<()> {
        let admin = self.admin()?;
        let path = parse_path(&name)?;
        let spec = PartitionSpec::new(spec);
        py.detach(|| admin.create_partition(&path, &spec, if_not_exists))
            .py_err()
    }

    /// Drops a partition given as key -> value.
    #[pyo3(signature = (name, spec, if_exists = false))]
    fn drop_partition(
        &self,
        py: Python<'_>,
        name: String,
        spec: Vec<(String, String)>,
        if_exists: bool,
    ) -> PyResult<()> {
        let admin = self.admin()?;
        let path = parse_path(&name)?;
        let spec = PartitionSpec::new(spec);
        py.detach(|| admin.drop_partition(&path, &spec, if_exists))
            .py_err()
    }

    /// Opens table `name` (`db.table`).
    fn table(&self, py: Python<'_>, name: String) -> PyResult<PyTable> {
        enter()?;
        self.live.check("the connection")?;
        let path = parse_path(&name)?;
        let conn = self.inner.clone();
        let inner = py.detach(|| conn.table(&path)).py_err()?;
        Ok(PyTable::new(inner, self.live.clone()))
    }

    /// Closes the connection and everything opened from it. Idempotent.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        if self.live.is_closed() {
            return Ok(());
        }
        enter()?;
        let conn = self.inner.clone();
        py.detach(|| conn.close()).py_err()
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.live.is_closed()
    }
}

/// A table handle; see `riverlet.Table`.
#[pyclass(module = "riverlet._riverlet", name = "Table")]
pub struct PyTable {
    pub(crate) inner: blocking::Table,
    pub(crate) live: Liveness,
    /// The writers of `append`/`upsert`/`delete` (opened on first use, calls kept in order).
    writers: blocking::TableWriters,
}

impl PyTable {
    fn new(inner: blocking::Table, live: Liveness) -> Self {
        PyTable {
            writers: blocking::TableWriters::new(inner.clone()),
            inner,
            live,
        }
    }

    /// Checks the process and the connection before a blocking call.
    pub(crate) fn ready(&self) -> PyResult<()> {
        enter()?;
        self.live.check("the connection of this table")
    }
}

#[pymethods]
impl PyTable {
    /// `db.table`.
    #[getter]
    fn name(&self) -> String {
        self.inner.path().to_string()
    }

    /// The database name.
    #[getter]
    fn database(&self) -> String {
        self.inner.path().database.clone()
    }

    /// The table's Arrow schema (as its reads return it).
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.inner.arrow_schema().as_ref().to_pyarrow(py)
    }

    /// The primary-key columns, or None for a log table.
    #[getter]
    fn primary_key(&self) -> Option<Vec<String>> {
        self.inner.info().descriptor.schema.primary_key.clone()
    }

    /// The partition keys (empty when not partitioned).
    #[getter]
    fn partition_keys(&self) -> Vec<String> {
        self.inner.info().descriptor.partition_keys.clone()
    }

    /// The bucket keys (empty for a log table distributed without a key).
    #[getter]
    fn bucket_keys(&self) -> Vec<String> {
        self.inner.info().descriptor.effective_bucket_keys()
    }

    /// The number of buckets.
    #[getter]
    fn buckets(&self) -> i32 {
        self.inner.info().num_buckets()
    }

    /// The table's properties.
    #[getter]
    fn properties(&self) -> BTreeMap<String, String> {
        self.inner.info().descriptor.properties.clone()
    }

    /// The table comment.
    #[getter]
    fn comment(&self) -> Option<String> {
        self.inner.info().descriptor.comment.clone()
    }

    /// The server-assigned table id.
    #[getter]
    fn table_id(&self) -> i64 {
        self.inner.info().table_id
    }

    /// Queues one Arrow batch for appending (log tables); waits while the writer's buffer is
    /// full. Call `flush()` to wait for the acknowledgements.
    fn append(&self, py: Python<'_>, batch: PyArrowType<RecordBatch>) -> PyResult<()> {
        self.ready()?;
        let writers = &self.writers;
        py.detach(|| writers.append_writer()?.append(&batch.0).map(drop))
            .py_err()
    }

    /// Queues upserts of one Arrow batch (primary-key tables); `columns` makes it a partial
    /// update of those columns.
    #[pyo3(signature = (batch, columns = None))]
    fn upsert(
        &self,
        py: Python<'_>,
        batch: PyArrowType<RecordBatch>,
        columns: Option<Vec<String>>,
    ) -> PyResult<()> {
        self.ready()?;
        let writers = &self.writers;
        // Switching to another set of columns may wait for the previous set's acks.
        py.detach(|| writers.upsert_writer(columns)?.upsert(&batch.0).map(drop))
            .py_err()
    }

    /// Queues deletes of the keys in one Arrow batch (it needs the primary-key columns).
    fn delete(&self, py: Python<'_>, batch: PyArrowType<RecordBatch>) -> PyResult<()> {
        self.ready()?;
        let writers = &self.writers;
        py.detach(|| writers.upsert_writer(None)?.delete(&batch.0).map(drop))
            .py_err()
    }

    /// Waits until every queued write is acknowledged; raises the first write error since the
    /// previous flush.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.ready()?;
        let writers = &self.writers;
        py.detach(|| writers.flush()).py_err()
    }

    /// Flushes and closes this table's writers (the table can still be read; a later write
    /// opens new writers).
    fn close_writers(&self, py: Python<'_>) -> PyResult<()> {
        self.ready()?;
        let writers = &self.writers;
        py.detach(|| writers.close()).py_err()
    }

    /// Plans and starts a read; see `riverlet.Table.scan`. `start`/`end` make it a time-range
    /// read of commit time `[start, end)`; `changelog` adds the change columns;
    /// `keep_batches` says the caller keeps every batch (a read into one table).
    #[pyo3(signature = (columns = None, filter = None, partitions = None, limit = None,
                        start = None, end = None, tz = None, read_optimized = false,
                        changelog = false, keep_batches = false))]
    #[allow(clippy::too_many_arguments)]
    fn scan<'py>(
        &self,
        py: Python<'py>,
        columns: Option<Vec<String>>,
        filter: Option<Bound<'py, PyAny>>,
        partitions: Option<Vec<Bound<'py, PyAny>>>,
        limit: Option<Bound<'py, PyAny>>,
        start: Option<Bound<'py, PyAny>>,
        end: Option<Bound<'py, PyAny>>,
        tz: Option<String>,
        read_optimized: bool,
        changelog: bool,
        keep_batches: bool,
    ) -> PyResult<crate::stream::PyBatchStream> {
        let limit = limit
            .map(|l| crate::convert::int_arg::<usize>(&l, "limit", "a non-negative integer"))
            .transpose()?;
        let args = crate::read::ReadArgs {
            columns,
            filter,
            partitions,
            limit,
            start,
            end,
            tz,
            read_optimized,
            changelog,
            keep_batches,
        };
        crate::read::scan(py, self, args)
    }

    /// Deletes the rows matching `filter` (primary-key tables); the number deleted.
    fn delete_where(&self, py: Python<'_>, filter: Bound<'_, PyAny>) -> PyResult<u64> {
        crate::modify::delete_where(py, self, &filter)
    }

    /// Sets columns (`set`: dict or `"col = value, ..."`) of the rows matching `filter`; the
    /// number updated.
    fn update_where(
        &self,
        py: Python<'_>,
        filter: Bound<'_, PyAny>,
        set: Bound<'_, PyAny>,
    ) -> PyResult<u64> {
        crate::modify::update_where(py, self, &filter, &set)
    }

    /// The leader of every bucket (of every partition) as the cluster names it now: dicts with
    /// `partition_id`, `partition_name` (None without partitions), `bucket`, `leader_id` and
    /// `leader_address` (both None where no live leader is known).
    fn bucket_leaders<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.ready()?;
        let table = self.inner.clone();
        let leaders = py.detach(|| table.bucket_leaders()).py_err()?;
        leaders
            .into_iter()
            .map(|l| {
                let d = PyDict::new(py);
                d.set_item("partition_id", l.partition_id)?;
                d.set_item("partition_name", l.partition_name)?;
                d.set_item("bucket", l.bucket)?;
                d.set_item("leader_id", l.leader.as_ref().map(|n| n.id))?;
                d.set_item("leader_address", l.leader.map(|n| n.address))?;
                Ok(d)
            })
            .collect()
    }

    /// The number of rows (log tables: records retained; primary-key tables: keys).
    fn count(&self, py: Python<'_>) -> PyResult<u64> {
        crate::read::count(py, self)
    }

    /// The columns a prefix lookup takes (bucket keys, plus partition keys when partitioned).
    #[getter]
    fn prefix_lookup_columns(&self) -> PyResult<Vec<String>> {
        Ok(self.inner.inner().new_lookuper().py_err()?.prefix_columns())
    }

    /// Looks up the keys of a batch with the primary-key columns; the rows found. With
    /// `insert_if_not_exists` the server inserts missing keys (auto-increment values assigned).
    #[pyo3(signature = (keys, insert_if_not_exists = false))]
    fn lookup<'py>(
        &self,
        py: Python<'py>,
        keys: PyArrowType<RecordBatch>,
        insert_if_not_exists: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::read::lookup(py, self, keys, false, insert_if_not_exists)
    }

    /// Prefix lookups of a batch with the prefix columns; every row found.
    fn prefix_lookup<'py>(
        &self,
        py: Python<'py>,
        prefixes: PyArrowType<RecordBatch>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::read::lookup(py, self, prefixes, true, false)
    }

    /// Starts a subscription from `start` ("full", "earliest", "latest" or a timestamp), of
    /// some buckets and from explicit start offsets (dicts as `Subscription.position()` gives).
    #[pyo3(signature = (start, columns = None, partitions = None, tz = None, buckets = None, start_offsets = None))]
    #[allow(clippy::too_many_arguments)]
    fn subscribe<'py>(
        &self,
        py: Python<'py>,
        start: Bound<'py, PyAny>,
        columns: Option<Vec<String>>,
        partitions: Option<Vec<Bound<'py, PyAny>>>,
        tz: Option<String>,
        buckets: Option<Vec<Bound<'py, PyAny>>>,
        start_offsets: Option<Vec<Bound<'py, PyAny>>>,
    ) -> PyResult<crate::read::PySubscription> {
        let buckets = buckets
            .map(|bs| {
                bs.iter()
                    .map(|b| crate::convert::int_arg::<i32>(b, "bucket", "a bucket number"))
                    .collect::<PyResult<Vec<i32>>>()
            })
            .transpose()?;
        let args = crate::read::SubscribeArgs {
            columns,
            partitions,
            tz,
            buckets,
            start_offsets,
        };
        crate::read::subscribe(py, self, &start, args)
    }

    fn __repr__(&self) -> String {
        format!("Table({:?})", self.inner.path().to_string())
    }
}

/// Producer offsets keyed as the Python API gives them, in the core's bucket type.
fn producer_buckets(
    offsets: BTreeMap<(i64, Option<i64>, i32), i64>,
) -> BTreeMap<riverlet::client::ProducerBucket, i64> {
    offsets
        .into_iter()
        .map(|((table_id, partition_id, bucket), o)| {
            (
                riverlet::client::ProducerBucket {
                    table_id,
                    partition_id,
                    bucket,
                },
                o,
            )
        })
        .collect()
}

/// An ACL binding as the dict the Python API returns.
fn acl_dict<'py>(py: Python<'py>, b: &riverlet::acl::AclBinding) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("resource", b.resource.text())?;
    d.set_item("resource_type", b.resource.resource_type.as_str())?;
    d.set_item("resource_name", &b.resource.name)?;
    d.set_item("principal", b.principal.to_string())?;
    d.set_item("host", &b.host)?;
    d.set_item("operation", b.operation.as_str())?;
    d.set_item("permission", b.permission.as_str())?;
    Ok(d)
}

/// `set` then `delete` as the core's config changes.
fn config_changes(
    set: BTreeMap<String, String>,
    delete: Vec<String>,
) -> Vec<riverlet::client::ConfigChange> {
    set.into_iter()
        .map(|(k, v)| riverlet::client::ConfigChange::Set(k, v))
        .chain(
            delete
                .into_iter()
                .map(riverlet::client::ConfigChange::Delete),
        )
        .collect()
}
