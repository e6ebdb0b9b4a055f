//! `RiverletConnection`: connecting, and the admin calls (databases and tables).

use std::ffi::c_char;
use std::sync::Arc;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{ArrayRef, RecordBatch, StringArray};
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{DataType, Field, Schema};
use riverlet::blocking::{BatchReader, Connection};
use riverlet::client::ClientConfig;
use riverlet::metadata::{TableDescriptor, TableOptions, TablePath};
use riverlet::Error;

use crate::args::{key_values, non_null, opt_str_arg, str_arg, str_array};
use crate::arrow_io::{export_stream, import_schema};
use crate::error::{guard, CallResult, RiverletStatus};
use crate::handle::{write_handle, HandleKind, Registry};

/// A connection to a Fluss cluster or a Riverlet server (opaque handle).
pub struct RiverletConnection {
    _private: [u8; 0],
}

static CONNECTIONS: Registry<Connection> = Registry::new(HandleKind::Connection);

/// The live connection behind a handle.
pub(crate) fn connection(handle: *const RiverletConnection) -> CallResult<Arc<Connection>> {
    CONNECTIONS.get(handle, "connection")
}

/// How a table is created; every field may be zero / NULL (a log table with the server's
/// defaults). String arrays come with their lengths; an array may be NULL when its length is 0.
#[repr(C)]
pub struct RiverletTableOptions {
    /// Primary key columns (none: a log table).
    pub primary_key: *const *const c_char,
    /// Number of primary key columns.
    pub num_primary_key: usize,
    /// Partition columns (none: not partitioned).
    pub partition_keys: *const *const c_char,
    /// Number of partition columns.
    pub num_partition_keys: usize,
    /// Bucket key columns (none: the primary key minus the partition columns, or none for a log
    /// table).
    pub bucket_keys: *const *const c_char,
    /// Number of bucket key columns.
    pub num_bucket_keys: usize,
    /// Number of buckets; 0 or less: the server's default.
    pub bucket_count: i32,
    /// Table property keys (e.g. "table.log.ttl"), parallel to `property_values`.
    pub property_keys: *const *const c_char,
    /// Table property values.
    pub property_values: *const *const c_char,
    /// Number of properties.
    pub num_properties: usize,
    /// A comment, or NULL.
    pub comment: *const c_char,
    /// The auto-increment column (INT or BIGINT, not in the primary key), or NULL: the server
    /// assigns its values to new keys, and writes must name their columns without it.
    pub auto_increment_column: *const c_char,
}

unsafe fn connect_impl(
    bootstrap_servers: *const c_char,
    option_keys: *const *const c_char,
    option_values: *const *const c_char,
    num_options: usize,
    out: *mut *mut RiverletConnection,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_connection")?;
    // Riverlet's recorder, unless the host program installed a `metrics` recorder already.
    riverlet::metrics::install();
    // SAFETY: C strings and arrays per the function's contract.
    let bootstrap = unsafe { str_arg(bootstrap_servers, "bootstrap_servers") }?;
    // SAFETY: as above.
    let mut props = unsafe { key_values(option_keys, option_values, num_options, "options") }?;
    if let Some(other) = props.get("bootstrap.servers") {
        if other != bootstrap {
            return Err(Error::invalid(format!(
                "'bootstrap.servers' is given twice: '{bootstrap}' and option '{other}'"
            ))
            .into());
        }
    }
    props.insert("bootstrap.servers".to_string(), bootstrap.to_string());
    let config = ClientConfig::from_properties(&props)?;
    let conn = Connection::connect(config)?;
    let handle = CONNECTIONS.insert(conn);
    // SAFETY: checked non-NULL above.
    unsafe { write_handle(out, handle) };
    Ok(())
}

/// Connects to the servers in `bootstrap_servers` ("host:port[,host:port...]") and writes the
/// connection handle to `*out_connection`.
///
/// Options are Fluss client option names with their values, as parallel arrays of `num_options`
/// strings (NULL when 0), e.g. "client.request-timeout" = "30 s",
/// "client.security.protocol" = "SASL" with "client.security.sasl.username" and
/// "client.security.sasl.password" for SASL/PLAIN, "client.writer.batch-timeout", ...
/// An unknown option is INVALID_ARGUMENT naming it.
#[no_mangle]
pub unsafe extern "C" fn riverlet_connect(
    bootstrap_servers: *const c_char,
    option_keys: *const *const c_char,
    option_values: *const *const c_char,
    num_options: usize,
    out_connection: *mut *mut RiverletConnection,
) -> RiverletStatus {
    guard(|| unsafe {
        connect_impl(
            bootstrap_servers,
            option_keys,
            option_values,
            num_options,
            out_connection,
        )
    })
}

fn free_impl(conn: *mut RiverletConnection) -> CallResult<()> {
    if let Some(c) = CONNECTIONS.remove(conn.cast_const(), "connection")? {
        c.close()?;
    }
    Ok(())
}

/// Closes the connection and frees the handle. Tables and writers opened from it then return
/// CLOSED. NULL is accepted (OK); freeing a handle twice returns CLOSED.
#[no_mangle]
pub extern "C" fn riverlet_connection_free(connection: *mut RiverletConnection) -> RiverletStatus {
    guard(|| free_impl(connection))
}

/// A table path from two C strings.
///
/// # Safety
/// Both are NULL or NUL-terminated strings.
pub(crate) unsafe fn table_path(
    database: *const c_char,
    table: *const c_char,
) -> CallResult<TablePath> {
    // SAFETY: forwarded contract.
    let path = unsafe { unchecked_table_path(database, table) }?;
    path.validate()?;
    Ok(path)
}

/// [`table_path`] of a table being opened: `table` may name a lake view (`t$lake`,
/// `t$lake$snapshots`).
///
/// # Safety
/// Both are NULL or NUL-terminated strings.
pub(crate) unsafe fn readable_table_path(
    database: *const c_char,
    table: *const c_char,
) -> CallResult<TablePath> {
    // SAFETY: forwarded contract.
    let path = unsafe { unchecked_table_path(database, table) }?;
    path.validate_readable()?;
    Ok(path)
}

/// The two C strings as a table path, its names not validated yet.
///
/// # Safety
/// Both are NULL or NUL-terminated strings.
unsafe fn unchecked_table_path(
    database: *const c_char,
    table: *const c_char,
) -> CallResult<TablePath> {
    // SAFETY: forwarded contract.
    let db = unsafe { str_arg(database, "database") }?;
    // SAFETY: forwarded contract.
    let t = unsafe { str_arg(table, "table") }?;
    Ok(TablePath::new(db, t))
}

unsafe fn create_database_impl(
    conn: *const RiverletConnection,
    name: *const c_char,
    ignore_if_exists: bool,
) -> CallResult<()> {
    let c = connection(conn)?;
    // SAFETY: C string per the function's contract.
    let name = unsafe { str_arg(name, "database") }?;
    Ok(c.admin().create_database(name, ignore_if_exists)?)
}

/// Creates a database; ALREADY_EXISTS when it exists unless `ignore_if_exists`.
#[no_mangle]
pub unsafe extern "C" fn riverlet_create_database(
    connection: *const RiverletConnection,
    database: *const c_char,
    ignore_if_exists: bool,
) -> RiverletStatus {
    guard(|| unsafe { create_database_impl(connection, database, ignore_if_exists) })
}

unsafe fn drop_database_impl(
    conn: *const RiverletConnection,
    name: *const c_char,
    ignore_if_not_exists: bool,
    cascade: bool,
) -> CallResult<()> {
    let c = connection(conn)?;
    // SAFETY: C string per the function's contract.
    let name = unsafe { str_arg(name, "database") }?;
    Ok(c.admin()
        .drop_database(name, ignore_if_not_exists, cascade)?)
}

/// Drops a database (with its tables when `cascade`); NOT_FOUND when it does not exist unless
/// `ignore_if_not_exists`.
#[no_mangle]
pub unsafe extern "C" fn riverlet_drop_database(
    connection: *const RiverletConnection,
    database: *const c_char,
    ignore_if_not_exists: bool,
    cascade: bool,
) -> RiverletStatus {
    guard(|| unsafe { drop_database_impl(connection, database, ignore_if_not_exists, cascade) })
}

unsafe fn database_exists_impl(
    conn: *const RiverletConnection,
    name: *const c_char,
    out: *mut bool,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_exists")?;
    let c = connection(conn)?;
    // SAFETY: C string per the function's contract.
    let name = unsafe { str_arg(name, "database") }?;
    let exists = c.admin().database_exists(name)?;
    // SAFETY: checked non-NULL above.
    unsafe { out.write(exists) };
    Ok(())
}

/// Writes whether the database exists to `*out_exists`.
#[no_mangle]
pub unsafe extern "C" fn riverlet_database_exists(
    connection: *const RiverletConnection,
    database: *const c_char,
    out_exists: *mut bool,
) -> RiverletStatus {
    guard(|| unsafe { database_exists_impl(connection, database, out_exists) })
}

/// A one-column stream of names.
fn names_stream(column: &str, names: Vec<String>) -> CallResult<BatchReader> {
    let schema = Arc::new(Schema::new(vec![Field::new(column, DataType::Utf8, false)]));
    let array: ArrayRef = Arc::new(StringArray::from(names));
    let batch = RecordBatch::try_new(schema.clone(), vec![array])?;
    Ok(BatchReader::from_batches(schema, vec![batch]))
}

unsafe fn list_databases_impl(
    conn: *const RiverletConnection,
    out: *mut FFI_ArrowArrayStream,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_stream")?;
    let c = connection(conn)?;
    let names = c.admin().list_databases()?;
    // SAFETY: checked non-NULL; caller-allocated per the function's contract.
    unsafe { export_stream(Box::new(names_stream("database_name", names)?), out) }
}

/// Writes a stream of the database names (one utf8 column "database_name") to `*out_stream`.
#[no_mangle]
pub unsafe extern "C" fn riverlet_list_databases(
    connection: *const RiverletConnection,
    out_stream: *mut FFI_ArrowArrayStream,
) -> RiverletStatus {
    guard(|| unsafe { list_databases_impl(connection, out_stream) })
}

unsafe fn list_tables_impl(
    conn: *const RiverletConnection,
    database: *const c_char,
    out: *mut FFI_ArrowArrayStream,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_stream")?;
    let c = connection(conn)?;
    // SAFETY: C string per the function's contract.
    let db = unsafe { str_arg(database, "database") }?;
    let names = c.admin().list_tables(db)?;
    // SAFETY: checked non-NULL; caller-allocated per the function's contract.
    unsafe { export_stream(Box::new(names_stream("table_name", names)?), out) }
}

/// Writes a stream of the table names of `database` (one utf8 column "table_name") to
/// `*out_stream`.
#[no_mangle]
pub unsafe extern "C" fn riverlet_list_tables(
    connection: *const RiverletConnection,
    database: *const c_char,
    out_stream: *mut FFI_ArrowArrayStream,
) -> RiverletStatus {
    guard(|| unsafe { list_tables_impl(connection, database, out_stream) })
}

/// The table descriptor of an Arrow schema plus C table options.
///
/// # Safety
/// `schema` as in [`import_schema`]; `options` NULL or valid with arrays as documented.
unsafe fn descriptor(
    schema: *const FFI_ArrowSchema,
    options: *const RiverletTableOptions,
) -> CallResult<TableDescriptor> {
    // SAFETY: forwarded contract.
    let arrow = unsafe { import_schema(schema, "schema") }?;
    // SAFETY: NULL or valid per the function's contract.
    let options = unsafe { options.as_ref() };
    let Some(o) = options else {
        return Ok(TableDescriptor::from_arrow(
            &arrow,
            TableOptions::default(),
        )?);
    };
    // SAFETY: the arrays hold the given number of strings per the struct's contract.
    let pk = unsafe { str_array(o.primary_key, o.num_primary_key, "primary_key") }?;
    // SAFETY: as above.
    let partition_keys =
        unsafe { str_array(o.partition_keys, o.num_partition_keys, "partition_keys") }?;
    // SAFETY: as above.
    let bucket_keys = unsafe { str_array(o.bucket_keys, o.num_bucket_keys, "bucket_keys") }?;
    // SAFETY: as above.
    let properties = unsafe {
        key_values(
            o.property_keys,
            o.property_values,
            o.num_properties,
            "properties",
        )
    }?;
    // SAFETY: NULL or a C string.
    let comment = unsafe { opt_str_arg(o.comment, "comment") }?.map(str::to_owned);
    // SAFETY: NULL or a C string per the struct's contract.
    let auto_increment = unsafe { opt_str_arg(o.auto_increment_column, "auto_increment_column") }?
        .map(str::to_owned);
    let options = TableOptions {
        primary_key: (!pk.is_empty()).then_some(pk),
        auto_increment,
        partition_keys,
        bucket_count: (o.bucket_count > 0).then_some(o.bucket_count),
        bucket_keys,
        properties: properties.into_iter().collect(),
        custom_properties: Vec::new(),
        comment,
    };
    Ok(TableDescriptor::from_arrow(&arrow, options)?)
}

unsafe fn create_table_impl(
    conn: *const RiverletConnection,
    database: *const c_char,
    table: *const c_char,
    schema: *const FFI_ArrowSchema,
    options: *const RiverletTableOptions,
    ignore_if_exists: bool,
) -> CallResult<()> {
    let c = connection(conn)?;
    // SAFETY: C strings per the function's contract.
    let path = unsafe { table_path(database, table) }?;
    // SAFETY: forwarded contract.
    let d = unsafe { descriptor(schema, options) }?;
    Ok(c.admin().create_table(&path, &d, ignore_if_exists)?)
}

/// Creates table `database`.`table` with the columns of `schema` (an ArrowSchema of a struct,
/// format "+s", one child per column; borrowed, not released) and `options` (NULL: a log table
/// with the server's defaults). Column types follow Fluss's Arrow mapping (int64 -> BIGINT,
/// utf8 -> STRING, timestamp[ms] -> TIMESTAMP(3), timestamp[ms, tz] -> TIMESTAMP_LTZ(3), ...);
/// a column type Fluss has no type for is UNSUPPORTED naming the column.
#[no_mangle]
pub unsafe extern "C" fn riverlet_create_table(
    connection: *const RiverletConnection,
    database: *const c_char,
    table: *const c_char,
    schema: *const FFI_ArrowSchema,
    options: *const RiverletTableOptions,
    ignore_if_exists: bool,
) -> RiverletStatus {
    guard(|| unsafe {
        create_table_impl(
            connection,
            database,
            table,
            schema,
            options,
            ignore_if_exists,
        )
    })
}

unsafe fn drop_table_impl(
    conn: *const RiverletConnection,
    database: *const c_char,
    table: *const c_char,
    ignore_if_not_exists: bool,
) -> CallResult<()> {
    let c = connection(conn)?;
    // SAFETY: C strings per the function's contract.
    let path = unsafe { table_path(database, table) }?;
    Ok(c.admin().drop_table(&path, ignore_if_not_exists)?)
}

/// Drops table `database`.`table`; NOT_FOUND when it does not exist unless
/// `ignore_if_not_exists`.
#[no_mangle]
pub unsafe extern "C" fn riverlet_drop_table(
    connection: *const RiverletConnection,
    database: *const c_char,
    table: *const c_char,
    ignore_if_not_exists: bool,
) -> RiverletStatus {
    guard(|| unsafe { drop_table_impl(connection, database, table, ignore_if_not_exists) })
}

unsafe fn add_columns_impl(
    conn: *const RiverletConnection,
    database: *const c_char,
    table: *const c_char,
    columns: *const FFI_ArrowSchema,
) -> CallResult<()> {
    let c = connection(conn)?;
    // SAFETY: C strings per the function's contract.
    let path = unsafe { table_path(database, table) }?;
    // SAFETY: NULL or a valid schema per the function's contract.
    let arrow = unsafe { import_schema(columns, "columns") }?;
    let columns = riverlet::metadata::AddColumn::from_arrow(&arrow)?;
    Ok(c.admin().add_columns(&path, &columns)?)
}

/// `ALTER TABLE database.table ADD COLUMN ...`: appends the fields of `columns` (a record-batch
/// ArrowSchema, format "+s"; every field nullable and new) at the end. Rows written before read
/// the new columns as null; table handles opened earlier keep the old schema (get the table
/// again). A NOT NULL or existing column is INVALID_ARGUMENT naming it.
#[no_mangle]
pub unsafe extern "C" fn riverlet_add_columns(
    connection: *const RiverletConnection,
    database: *const c_char,
    table: *const c_char,
    columns: *const FFI_ArrowSchema,
) -> RiverletStatus {
    guard(|| unsafe { add_columns_impl(connection, database, table, columns) })
}

unsafe fn table_exists_impl(
    conn: *const RiverletConnection,
    database: *const c_char,
    table: *const c_char,
    out: *mut bool,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_exists")?;
    let c = connection(conn)?;
    // SAFETY: C strings per the function's contract.
    let path = unsafe { table_path(database, table) }?;
    let exists = c.admin().table_exists(&path)?;
    // SAFETY: checked non-NULL above.
    unsafe { out.write(exists) };
    Ok(())
}

/// Writes whether table `database`.`table` exists to `*out_exists`.
#[no_mangle]
pub unsafe extern "C" fn riverlet_table_exists(
    connection: *const RiverletConnection,
    database: *const c_char,
    table: *const c_char,
    out_exists: *mut bool,
) -> RiverletStatus {
    guard(|| unsafe { table_exists_impl(connection, database, table, out_exists) })
}
