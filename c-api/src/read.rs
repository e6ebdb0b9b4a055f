//! Reads: plain and time-range reads returning Arrow C streams, and point lookups.

use std::ffi::c_char;

use arrow_array::ffi::FFI_ArrowArray;
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_schema::ffi::FFI_ArrowSchema;
use riverlet::blocking::{BatchReader, Table};
use riverlet::scan::time::TimePoint;

use crate::args::{non_null, opt_str_arg, str_arg, str_array};
use crate::arrow_io::{export_stream, import_batch};
use crate::error::{guard, CallResult, RiverletStatus};
use crate::table::{table, RiverletTable};

/// Options of a read; a zeroed struct (or a NULL pointer) reads every row and column.
#[repr(C)]
pub struct RiverletReadOptions {
    /// Columns to read, in this order (projection); NULL / 0: all columns.
    pub columns: *const *const c_char,
    /// Number of `columns`.
    pub num_columns: usize,
    /// A filter in Riverlet's filter text, e.g. "score >= 20 AND name LIKE 'a%'"; NULL: none.
    pub filter: *const c_char,
    /// Partitions to read, by Fluss partition name (values joined by '$', e.g. "2024-01-01$eu");
    /// NULL / 0: all partitions.
    pub partitions: *const *const c_char,
    /// Number of `partitions`.
    pub num_partitions: usize,
    /// At most this many rows; 0 or less: no limit.
    pub limit: i64,
    /// Time zone of timestamp texts of time-range reads: an IANA name ("Asia/Shanghai"), "UTC",
    /// an offset ("+08:00") or "local"; NULL: the process's local zone (TZ, else the system's).
    pub time_zone: *const c_char,
}

/// A time-range window given as texts or epoch milliseconds.
enum Window {
    None,
    Between(TimePoint, Option<TimePoint>),
}

/// Builds the read from the C options and runs it, returning the stream reader.
///
/// # Safety
/// `options` is NULL or valid, with arrays and strings as documented on the struct.
unsafe fn run_read(
    t: &Table,
    options: *const RiverletReadOptions,
    window: Window,
) -> CallResult<BatchReader> {
    let mut scan = t.scan();
    // SAFETY: NULL or valid per the function's contract.
    if let Some(o) = unsafe { options.as_ref() } {
        // SAFETY: the struct's arrays and strings are valid per its contract.
        let columns = unsafe { str_array(o.columns, o.num_columns, "columns") }?;
        if !columns.is_empty() {
            let refs: Vec<&str> = columns.iter().map(String::as_str).collect();
            scan = scan.project(&refs);
        }
        // SAFETY: as above.
        if let Some(f) = unsafe { opt_str_arg(o.filter, "filter") }? {
            scan = scan.filter_text(f);
        }
        // SAFETY: as above.
        let parts = unsafe { str_array(o.partitions, o.num_partitions, "partitions") }?;
        if !parts.is_empty() {
            scan = scan.partitions(parts);
        }
        if o.limit > 0 {
            scan = scan.limit(usize::try_from(o.limit).unwrap_or(usize::MAX));
        }
        // SAFETY: as above.
        if let Some(tz) = unsafe { opt_str_arg(o.time_zone, "time_zone") }? {
            scan = scan.time_zone(tz);
        }
    }
    if let Window::Between(start, end) = window {
        scan = scan.between(start, end);
    }
    Ok(scan.execute()?)
}

unsafe fn read_impl(
    t: *const RiverletTable,
    options: *const RiverletReadOptions,
    out: *mut FFI_ArrowArrayStream,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_stream")?;
    let t = table(t)?;
    // SAFETY: forwarded contract.
    let reader = unsafe { run_read(&t, options, Window::None) }?;
    // SAFETY: checked non-NULL; caller-allocated per the function's contract.
    unsafe { export_stream(Box::new(reader), out) }
}

/// Reads the table and writes an Arrow C stream of its rows into the caller-allocated
/// `*out_stream` (release it with its `release` callback). A log table yields its records, a
/// primary-key table its latest value per key. `options` may be NULL. Invalid options (unknown
/// column, bad filter, unknown partition) fail here, before a stream is made.
#[no_mangle]
pub unsafe extern "C" fn riverlet_table_read(
    table: *const RiverletTable,
    options: *const RiverletReadOptions,
    out_stream: *mut FFI_ArrowArrayStream,
) -> RiverletStatus {
    guard(|| unsafe { read_impl(table, options, out_stream) })
}

unsafe fn between_impl(
    t: *const RiverletTable,
    options: *const RiverletReadOptions,
    start: *const c_char,
    end: *const c_char,
    out: *mut FFI_ArrowArrayStream,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_stream")?;
    let t = table(t)?;
    // SAFETY: C strings per the function's contract.
    let start = unsafe { str_arg(start, "start") }?;
    // SAFETY: as above.
    let end = unsafe { opt_str_arg(end, "end") }?;
    let window = Window::Between(start.into(), end.map(TimePoint::from));
    // SAFETY: forwarded contract.
    let reader = unsafe { run_read(&t, options, window) }?;
    // SAFETY: checked non-NULL; caller-allocated per the function's contract.
    unsafe { export_stream(Box::new(reader), out) }
}

/// A time-range read: what was written to the table in the window [start, end) of commit time
/// (a log table: every record appended in the window; a primary-key table: each key changed
/// in the window once, with its last value, keys whose last change is a delete left out).
///
/// `start` (required) and `end` (NULL: the moment the read is planned) are epoch milliseconds
/// as digits, "yyyy-MM-dd HH:mm:ss[.fff]", "yyyy-MM-dd", or with a 'T' and a "Z" / "+hh:mm"
/// offset; texts without an offset are read in `options->time_zone`. A bad timestamp, an end
/// not after the start, or a start in the future is INVALID_ARGUMENT (the message names the
/// value and the accepted forms), before any data is read.
#[no_mangle]
pub unsafe extern "C" fn riverlet_table_read_between(
    table: *const RiverletTable,
    options: *const RiverletReadOptions,
    start: *const c_char,
    end: *const c_char,
    out_stream: *mut FFI_ArrowArrayStream,
) -> RiverletStatus {
    guard(|| unsafe { between_impl(table, options, start, end, out_stream) })
}

unsafe fn between_ms_impl(
    t: *const RiverletTable,
    options: *const RiverletReadOptions,
    start_ms: i64,
    end_ms: *const i64,
    out: *mut FFI_ArrowArrayStream,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_stream")?;
    let t = table(t)?;
    // SAFETY: NULL or a valid i64 per the function's contract.
    let end = unsafe { end_ms.as_ref() }.copied();
    let window = Window::Between(
        TimePoint::EpochMillis(start_ms),
        end.map(TimePoint::EpochMillis),
    );
    // SAFETY: forwarded contract.
    let reader = unsafe { run_read(&t, options, window) }?;
    // SAFETY: checked non-NULL; caller-allocated per the function's contract.
    unsafe { export_stream(Box::new(reader), out) }
}

/// riverlet_table_read_between with epoch milliseconds: the window [start_ms, *end_ms), or up
/// to the moment the read is planned when `end_ms` is NULL.
#[no_mangle]
pub unsafe extern "C" fn riverlet_table_read_between_ms(
    table: *const RiverletTable,
    options: *const RiverletReadOptions,
    start_ms: i64,
    end_ms: *const i64,
    out_stream: *mut FFI_ArrowArrayStream,
) -> RiverletStatus {
    guard(|| unsafe { between_ms_impl(table, options, start_ms, end_ms, out_stream) })
}

unsafe fn lookup_impl(
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
    let found = t.new_lookuper()?.lookup(&keys)?;
    let reader = BatchReader::from_batches(found.schema(), vec![found]);
    // SAFETY: checked non-NULL; caller-allocated per the function's contract.
    unsafe { export_stream(Box::new(reader), out) }
}

/// Point lookups in a primary-key table: `keys` (moved in) holds one row per key with the
/// primary key columns (by name; other columns are ignored), described by `key_schema`
/// (borrowed). Writes a stream of the rows found (full rows, missing keys left out) into the
/// caller-allocated `*out_stream`.
#[no_mangle]
pub unsafe extern "C" fn riverlet_table_lookup(
    table: *const RiverletTable,
    keys: *mut FFI_ArrowArray,
    key_schema: *const FFI_ArrowSchema,
    out_stream: *mut FFI_ArrowArrayStream,
) -> RiverletStatus {
    guard(|| unsafe { lookup_impl(table, keys, key_schema, out_stream) })
}
