//! `RiverletTable` and `RiverletWriter`: opening tables, their schema, and writing.

use std::ffi::c_char;
use std::sync::{Arc, Mutex};

use arrow_array::ffi::FFI_ArrowArray;
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{DataType, Field, Schema};
use riverlet::blocking::{AppendWriter, BatchReader, Table, UpsertWriter};
use riverlet::{Error, ErrorKind};

use crate::args::{non_null, str_array};
use crate::arrow_io::{export_schema, export_stream, import_batch};
use crate::connection::{connection, readable_table_path, RiverletConnection};
use crate::error::{guard, CallResult, RiverletStatus};
use crate::handle::{write_handle, HandleKind, Registry};

/// An open table (opaque handle).
pub struct RiverletTable {
    _private: [u8; 0],
}

/// A writer of one table: an append writer (log tables) or an upsert writer (primary-key
/// tables, upserts and deletes) (opaque handle).
pub struct RiverletWriter {
    _private: [u8; 0],
}

static TABLES: Registry<Table> = Registry::new(HandleKind::Table);

enum Writer {
    Append(AppendWriter),
    Upsert(UpsertWriter),
}

/// A writer handle's object: `None` once it was closed by a failed free race (never reused).
struct WriterState {
    writer: Mutex<Option<Writer>>,
}

static WRITERS: Registry<WriterState> = Registry::new(HandleKind::Writer);

/// The live table behind a handle.
pub(crate) fn table(handle: *const RiverletTable) -> CallResult<Arc<Table>> {
    TABLES.get(handle, "table")
}

unsafe fn get_table_impl(
    conn: *const RiverletConnection,
    database: *const c_char,
    name: *const c_char,
    out: *mut *mut RiverletTable,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_table")?;
    let c = connection(conn)?;
    // SAFETY: C strings per the function's contract.
    let path = unsafe { readable_table_path(database, name) }?;
    let t = c.table(&path)?;
    let handle = TABLES.insert(t);
    // SAFETY: checked non-NULL above.
    unsafe { write_handle(out, handle) };
    Ok(())
}

/// Opens table `database`.`table` and writes its handle to `*out_table`; NOT_FOUND when it does
/// not exist. A lake-enabled table is also opened as `table$lake` (reads return only the rows of
/// its latest lake snapshot, then the columns `__bucket`, `__offset`, `__timestamp`) and
/// `table$lake$snapshots` (one row per lake commit: `committed_at`, `snapshot_id`, `parent_id`,
/// `operation`); those handles are read-only, and NOT_FOUND to read when the table is not
/// lake-enabled. A plain read of a lake-enabled log table is the union of its lake snapshot and
/// the log after it; a time-range read never reads the lake.
#[no_mangle]
pub unsafe extern "C" fn riverlet_connection_get_table(
    connection: *const RiverletConnection,
    database: *const c_char,
    table: *const c_char,
    out_table: *mut *mut RiverletTable,
) -> RiverletStatus {
    guard(|| unsafe { get_table_impl(connection, database, table, out_table) })
}

fn table_free_impl(t: *mut RiverletTable) -> CallResult<()> {
    TABLES.remove(t.cast_const(), "table")?;
    Ok(())
}

/// Frees a table handle (writers opened from it stay usable). NULL is accepted (OK); freeing a
/// handle twice returns CLOSED.
#[no_mangle]
pub extern "C" fn riverlet_table_free(table: *mut RiverletTable) -> RiverletStatus {
    guard(|| table_free_impl(table))
}

unsafe fn table_schema_impl(t: *const RiverletTable, out: *mut FFI_ArrowSchema) -> CallResult<()> {
    non_null(out.cast_const(), "out_schema")?;
    let t = table(t)?;
    // SAFETY: checked non-NULL; caller-allocated per the function's contract.
    unsafe { export_schema(&t.arrow_schema(), out) }
}

/// Writes the table's Arrow schema (a struct, format "+s", one child per column, as reads return
/// it) into the caller-allocated `*out_schema`; release it with its `release` callback.
#[no_mangle]
pub unsafe extern "C" fn riverlet_table_schema(
    table: *const RiverletTable,
    out_schema: *mut FFI_ArrowSchema,
) -> RiverletStatus {
    guard(|| unsafe { table_schema_impl(table, out_schema) })
}

unsafe fn has_pk_impl(t: *const RiverletTable, out: *mut bool) -> CallResult<()> {
    non_null(out.cast_const(), "out_has_primary_key")?;
    let t = table(t)?;
    let has = t.info().descriptor.has_primary_key();
    // SAFETY: checked non-NULL above.
    unsafe { out.write(has) };
    Ok(())
}

/// Writes whether the table has a primary key to `*out_has_primary_key`.
#[no_mangle]
pub unsafe extern "C" fn riverlet_table_has_primary_key(
    table: *const RiverletTable,
    out_has_primary_key: *mut bool,
) -> RiverletStatus {
    guard(|| unsafe { has_pk_impl(table, out_has_primary_key) })
}

unsafe fn bucket_leaders_impl(
    t: *const RiverletTable,
    out: *mut FFI_ArrowArrayStream,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_stream")?;
    let t = table(t)?;
    let leaders = t.bucket_leaders()?;
    let schema = Arc::new(Schema::new(vec![
        Field::new("partition_id", DataType::Int64, true),
        Field::new("partition_name", DataType::Utf8, true),
        Field::new("bucket", DataType::Int32, false),
        Field::new("leader_id", DataType::Int32, true),
        Field::new("leader_address", DataType::Utf8, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter(
            leaders.iter().map(|l| l.partition_id),
        )),
        Arc::new(StringArray::from_iter(
            leaders.iter().map(|l| l.partition_name.as_deref()),
        )),
        Arc::new(Int32Array::from_iter_values(
            leaders.iter().map(|l| l.bucket),
        )),
        Arc::new(Int32Array::from_iter(
            leaders.iter().map(|l| l.leader.as_ref().map(|n| n.id)),
        )),
        Arc::new(StringArray::from_iter(
            leaders
                .iter()
                .map(|l| l.leader.as_ref().map(|n| n.address.as_str())),
        )),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns)?;
    let reader = BatchReader::from_batches(schema, vec![batch]);
    // SAFETY: checked non-NULL; caller-allocated per the function's contract.
    unsafe { export_stream(Box::new(reader), out) }
}

/// Writes a stream of the leader of every bucket of the table, as the cluster names it now, into
/// the caller-allocated `*out_stream`: one row per bucket in bucket order (a partitioned table:
/// per partition by name, then bucket), columns partition_id (int64) and partition_name (utf8,
/// both NULL for a table without partitions), bucket (int32), leader_id (int32, the tablet
/// server id) and leader_address (utf8, its "host:port"). leader_id and leader_address are NULL
/// where the bucket has no live leader right now (one is being elected, or the leader just died);
/// that is not an error. The table's cached leaders are asked from the cluster again first, so
/// its connection's writes and reads route by this answer from then on.
#[no_mangle]
pub unsafe extern "C" fn riverlet_table_bucket_leaders(
    table: *const RiverletTable,
    out_stream: *mut FFI_ArrowArrayStream,
) -> RiverletStatus {
    guard(|| unsafe { bucket_leaders_impl(table, out_stream) })
}

fn insert_writer(w: Writer, out: *mut *mut RiverletWriter) {
    let handle = WRITERS.insert(WriterState {
        writer: Mutex::new(Some(w)),
    });
    // SAFETY: every caller checked `out` non-NULL.
    unsafe { write_handle(out, handle) };
}

fn append_writer_impl(t: *const RiverletTable, out: *mut *mut RiverletWriter) -> CallResult<()> {
    non_null(out.cast_const(), "out_writer")?;
    let t = table(t)?;
    let w = t.new_append_writer()?;
    insert_writer(Writer::Append(w), out);
    Ok(())
}

/// Creates an append writer of a log table and writes its handle to `*out_writer`.
#[no_mangle]
pub extern "C" fn riverlet_table_new_append_writer(
    table: *const RiverletTable,
    out_writer: *mut *mut RiverletWriter,
) -> RiverletStatus {
    guard(|| append_writer_impl(table, out_writer))
}

unsafe fn upsert_writer_impl(
    t: *const RiverletTable,
    columns: *const *const c_char,
    num_columns: usize,
    out: *mut *mut RiverletWriter,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_writer")?;
    let t = table(t)?;
    // SAFETY: `num_columns` C strings per the function's contract.
    let cols = unsafe { str_array(columns, num_columns, "columns") }?;
    let refs: Vec<&str> = cols.iter().map(String::as_str).collect();
    let partial = (!refs.is_empty()).then_some(refs.as_slice());
    let w = t.new_upsert_writer(partial)?;
    insert_writer(Writer::Upsert(w), out);
    Ok(())
}

/// Creates an upsert writer of a primary-key table and writes its handle to `*out_writer`.
/// With `num_columns` > 0 it is a partial update of those columns (they must include the primary
/// key); rows then carry all columns and only the named ones are updated.
#[no_mangle]
pub unsafe extern "C" fn riverlet_table_new_upsert_writer(
    table: *const RiverletTable,
    columns: *const *const c_char,
    num_columns: usize,
    out_writer: *mut *mut RiverletWriter,
) -> RiverletStatus {
    guard(|| unsafe { upsert_writer_impl(table, columns, num_columns, out_writer) })
}

#[derive(Clone, Copy)]
enum WriteOp {
    Append,
    Upsert,
    Delete,
}

unsafe fn write_impl(
    w: *const RiverletWriter,
    array: *mut FFI_ArrowArray,
    schema: *const FFI_ArrowSchema,
    op: WriteOp,
) -> CallResult<()> {
    // The array is moved in first, so it is released on every path below.
    // SAFETY: forwarded contract.
    let imported = unsafe { import_batch(array, schema) };
    let state = WRITERS.get(w, "writer")?;
    let batch = imported?;
    let guard = state.writer.lock().unwrap_or_else(|p| p.into_inner());
    let writer = guard
        .as_ref()
        .ok_or_else(|| Error::new(ErrorKind::Closed, "the writer was closed"))?;
    let handle =
        match (writer, op) {
            (Writer::Append(a), WriteOp::Append) => a.append(&batch)?,
            (Writer::Upsert(u), WriteOp::Upsert) => u.upsert(&batch)?,
            (Writer::Upsert(u), WriteOp::Delete) => u.delete(&batch)?,
            (Writer::Append(_), _) => return Err(Error::invalid(
                "this is an append writer (log table): upsert and delete need an upsert writer \
                 of a primary-key table",
            )
            .into()),
            (Writer::Upsert(_), WriteOp::Append) => {
                return Err(Error::invalid(
                    "this is an upsert writer (primary-key table): use riverlet_writer_upsert",
                )
                .into())
            }
        };
    // Acknowledgements are awaited by riverlet_writer_flush.
    drop(handle);
    Ok(())
}

/// Appends the rows of `array` (a struct array, moved in: Riverlet releases it) described by
/// `schema` (borrowed) to a log table. Returns once the rows are queued; riverlet_writer_flush
/// waits for the server's acknowledgement and reports write errors.
#[no_mangle]
pub unsafe extern "C" fn riverlet_writer_append(
    writer: *const RiverletWriter,
    array: *mut FFI_ArrowArray,
    schema: *const FFI_ArrowSchema,
) -> RiverletStatus {
    guard(|| unsafe { write_impl(writer, array, schema, WriteOp::Append) })
}

/// Upserts the rows of `array` (moved in) described by `schema` (borrowed) into a primary-key
/// table (a partial-update writer updates only its columns). Queued like riverlet_writer_append.
#[no_mangle]
pub unsafe extern "C" fn riverlet_writer_upsert(
    writer: *const RiverletWriter,
    array: *mut FFI_ArrowArray,
    schema: *const FFI_ArrowSchema,
) -> RiverletStatus {
    guard(|| unsafe { write_impl(writer, array, schema, WriteOp::Upsert) })
}

/// Deletes the keys of the rows of `array` (moved in; full rows or the primary key columns)
/// described by `schema` (borrowed) from a primary-key table. Queued like
/// riverlet_writer_append.
#[no_mangle]
pub unsafe extern "C" fn riverlet_writer_delete(
    writer: *const RiverletWriter,
    array: *mut FFI_ArrowArray,
    schema: *const FFI_ArrowSchema,
) -> RiverletStatus {
    guard(|| unsafe { write_impl(writer, array, schema, WriteOp::Delete) })
}

fn flush_impl(w: *const RiverletWriter) -> CallResult<()> {
    let state = WRITERS.get(w, "writer")?;
    let guard = state.writer.lock().unwrap_or_else(|p| p.into_inner());
    match guard.as_ref() {
        Some(Writer::Append(a)) => Ok(a.flush()?),
        Some(Writer::Upsert(u)) => Ok(u.flush()?),
        None => Err(Error::new(ErrorKind::Closed, "the writer was closed").into()),
    }
}

/// Waits until every queued write is acknowledged; returns the first write error since the
/// previous flush.
#[no_mangle]
pub extern "C" fn riverlet_writer_flush(writer: *const RiverletWriter) -> RiverletStatus {
    guard(|| flush_impl(writer))
}

fn writer_free_impl(w: *mut RiverletWriter) -> CallResult<()> {
    let Some(state) = WRITERS.remove(w.cast_const(), "writer")? else {
        return Ok(());
    };
    let taken = state
        .writer
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    match taken {
        Some(Writer::Append(a)) => a.close()?,
        Some(Writer::Upsert(u)) => u.close()?,
        None => {}
    }
    Ok(())
}

/// Flushes pending writes, stops the writer and frees the handle. The handle is freed even when
/// the flush fails (the status then reports the write error). NULL is accepted (OK); freeing a
/// handle twice returns CLOSED.
#[no_mangle]
pub extern "C" fn riverlet_writer_free(writer: *mut RiverletWriter) -> RiverletStatus {
    guard(|| writer_free_impl(writer))
}
