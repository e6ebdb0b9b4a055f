//! Writes that read first: DELETE and UPDATE by condition on primary-key tables
//! (`riverlet_table_delete_where`, `riverlet_table_update_where`) and lookups that insert
//! missing keys (`riverlet_table_lookup_or_insert`). The filter and the assignments are the
//! core's text forms (`riverlet::scan::parse_filter`, `riverlet::write::Assignments::parse`);
//! the rules and the work are the core's.

use std::ffi::c_char;

use arrow_array::ffi::FFI_ArrowArray;
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_schema::ffi::FFI_ArrowSchema;
use riverlet::blocking::BatchReader;
use riverlet::scan::parse_filter;
use riverlet::write::Assignments;

use crate::args::{non_null, str_arg};
use crate::arrow_io::{export_stream, import_batch};
use crate::error::{guard, CallResult, RiverletStatus};
use crate::table::{table, RiverletTable};

unsafe fn delete_where_impl(
    t: *const RiverletTable,
    filter: *const c_char,
    out: *mut u64,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_count")?;
    let t = table(t)?;
    // SAFETY: C string per the function's contract.
    let filter = parse_filter(unsafe { str_arg(filter, "filter") }?)?;
    let n = t.delete_where(&filter)?;
    // SAFETY: checked non-NULL above.
    unsafe { out.write(n) };
    Ok(())
}

/// Deletes every row of a primary-key table matching `filter` (`DELETE FROM t WHERE filter`)
/// and writes how many rows were deleted to `*out_count`.
///
/// `filter` is the text form of a read's filter, e.g. `"total_amount > 100"` or
/// `"shop_id = 1 AND user_id = 2"` (equality on every primary-key column deletes by key; any
/// other condition reads the table, pruned by partition, and deletes the matching keys).
/// UNSUPPORTED for log tables, tables with a merge engine and tables whose
/// `table.delete.behavior` is `disable`; with `ignore` nothing is deleted and the count is 0.
/// Not atomic: rows written after the statement's read starts are not affected, and a failure
/// part-way leaves the rows already deleted deleted.
#[no_mangle]
pub unsafe extern "C" fn riverlet_table_delete_where(
    table: *const RiverletTable,
    filter: *const c_char,
    out_count: *mut u64,
) -> RiverletStatus {
    guard(|| unsafe { delete_where_impl(table, filter, out_count) })
}

unsafe fn update_where_impl(
    t: *const RiverletTable,
    filter: *const c_char,
    assignments: *const c_char,
    out: *mut u64,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_count")?;
    let t = table(t)?;
    // SAFETY: C strings per the function's contract.
    let filter = parse_filter(unsafe { str_arg(filter, "filter") }?)?;
    // SAFETY: as above.
    let set = Assignments::parse(unsafe { str_arg(assignments, "assignments") }?)?;
    let n = t.update_where(&filter, &set)?;
    // SAFETY: checked non-NULL above.
    unsafe { out.write(n) };
    Ok(())
}

/// Sets columns of every row of a primary-key table matching `filter` (`UPDATE t SET
/// assignments WHERE filter`) and writes how many rows were updated to `*out_count`.
///
/// `assignments` is `"col = literal [, col = literal ...]"` with the filter's literals
/// (`"total_amount = 0, note = 'checked', day = DATE '2024-01-01'"`); each value is converted
/// exactly to its column's type (INVALID_ARGUMENT naming the column otherwise). Primary-key and
/// partition columns cannot be set (UNSUPPORTED naming the column). Each matching row is
/// written back whole, so a concurrent write to it may be overwritten (not atomic, as in
/// Fluss).
#[no_mangle]
pub unsafe extern "C" fn riverlet_table_update_where(
    table: *const RiverletTable,
    filter: *const c_char,
    assignments: *const c_char,
    out_count: *mut u64,
) -> RiverletStatus {
    guard(|| unsafe { update_where_impl(table, filter, assignments, out_count) })
}

unsafe fn lookup_or_insert_impl(
    t: *const RiverletTable,
    keys: *mut FFI_ArrowArray,
    key_schema: *const FFI_ArrowSchema,
    out: *mut FFI_ArrowArrayStream,
) -> CallResult<()> {
    // The key array is moved in first, so it is released on every path.
    // SAFETY: forwarded contract.
    let imported = unsafe { import_batch(keys, key_schema) };
    non_null(out.cast_const(), "out_stream")?;
    let t = table(t)?;
    let keys = imported?;
    let found = t
        .new_lookuper()?
        .insert_if_not_exists(true)?
        .lookup(&keys)?;
    let reader = BatchReader::from_batches(found.schema(), vec![found]);
    // SAFETY: checked non-NULL; caller-allocated per the function's contract.
    unsafe { export_stream(Box::new(reader), out) }
}

/// `riverlet_table_lookup`, but a key that does not exist is inserted by the server first (its
/// primary-key columns; other columns null, an auto-increment column assigned), so every key
/// has a row in the result: Fluss's lookup with insert-if-not-exists (the dictionary-encoding
/// pattern). INVALID_ARGUMENT when the table has NOT NULL columns outside the primary key and
/// the auto-increment column.
#[no_mangle]
pub unsafe extern "C" fn riverlet_table_lookup_or_insert(
    table: *const RiverletTable,
    keys: *mut FFI_ArrowArray,
    key_schema: *const FFI_ArrowSchema,
    out_stream: *mut FFI_ArrowArrayStream,
) -> RiverletStatus {
    guard(|| unsafe { lookup_or_insert_impl(table, keys, key_schema, out_stream) })
}
