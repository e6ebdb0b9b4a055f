//! Reads: plain, time-range and changelog reads returning Arrow C streams, counts, and point
//! and prefix lookups. Each fills the core's `ReadRequest`; the core does the rest.

use std::ffi::c_char;

use arrow_array::ffi::FFI_ArrowArray;
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_schema::ffi::FFI_ArrowSchema;
use riverlet::blocking::{BatchReader, Filter, ReadRequest, Table};
use riverlet::scan::time::TimePoint;

use crate::args::{i32_array, non_null, opt_str_arg, str_arg, str_array};
use crate::arrow_io::{export_stream, import_batch};
use crate::error::{guard, set_warnings, CallResult, RiverletStatus};
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
    /// Buckets to read in every partition read (e.g. one bucket per worker); NULL / 0: all.
    /// A bucket the table does not have is INVALID_ARGUMENT.
    pub buckets: *const i32,
    /// Number of `buckets`.
    pub num_buckets: usize,
    /// true: the changelog form: `_change_type`, `_log_offset`, `_commit_timestamp` columns
    /// before the table's (for primary-key tables every change, not folded).
    pub changelog: bool,
    /// true: read-optimized read of a primary-key table (Fluss's read.optimized): each bucket's
    /// latest KV snapshot without the log changes after it (possibly stale; a bucket without a
    /// snapshot yet gives no rows). Not with a window nor `changelog`.
    pub read_optimized: bool,
    /// At most this many rows per stream batch; 0 or less: batches as they come.
    pub batch_size: i64,
}

/// The core request of the C options (a NULL `options` reads everything).
///
/// # Safety
/// `options` is NULL or valid, with arrays and strings as documented on the struct.
pub(crate) unsafe fn read_request(options: *const RiverletReadOptions) -> CallResult<ReadRequest> {
    let mut r = ReadRequest::default();
    // SAFETY: NULL or valid per the function's contract.
    let Some(o) = (unsafe { options.as_ref() }) else {
        return Ok(r);
    };
    // SAFETY: the struct's arrays and strings are valid per its contract.
    let columns = unsafe { str_array(o.columns, o.num_columns, "columns") }?;
    r.columns = (!columns.is_empty()).then_some(columns);
    // SAFETY: as above.
    r.filter = unsafe { opt_str_arg(o.filter, "filter") }?.map(Filter::from);
    // SAFETY: as above.
    let parts = unsafe { str_array(o.partitions, o.num_partitions, "partitions") }?;
    r.partitions = (!parts.is_empty()).then(|| parts.into_iter().map(Into::into).collect());
    // SAFETY: as above.
    let buckets = unsafe { i32_array(o.buckets, o.num_buckets, "buckets") }?;
    r.buckets = (!buckets.is_empty()).then_some(buckets);
    r.limit = (o.limit > 0).then(|| usize::try_from(o.limit).unwrap_or(usize::MAX));
    // SAFETY: as above.
    r.time_zone = unsafe { opt_str_arg(o.time_zone, "time_zone") }?.map(str::to_string);
    r.changelog = o.changelog;
    r.read_optimized = o.read_optimized;
    r.batch_size = (o.batch_size > 0).then(|| usize::try_from(o.batch_size).unwrap_or(usize::MAX));
    Ok(r)
}

/// Runs `request` and writes its stream into `*out`, keeping the read's warnings for
/// `riverlet_last_warning`.
///
/// # Safety
/// `out` is NULL or caller-allocated.
unsafe fn export_read(
    t: &Table,
    request: &ReadRequest,
    out: *mut FFI_ArrowArrayStream,
) -> CallResult<()> {
    let reader = t.read(request)?;
    set_warnings(reader.warnings());
    // SAFETY: forwarded contract.
    unsafe { export_stream(Box::new(reader), out) }
}

unsafe fn read_impl(
    t: *const RiverletTable,
    options: *const RiverletReadOptions,
    out: *mut FFI_ArrowArrayStream,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_stream")?;
    let t = table(t)?;
    // SAFETY: forwarded contract.
    let request = unsafe { read_request(options) }?;
    // SAFETY: checked non-NULL; caller-allocated per the function's contract.
    unsafe { export_read(&t, &request, out) }
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
    // SAFETY: forwarded contract.
    let mut request = unsafe { read_request(options) }?;
    request.start = Some(start.into());
    request.end = end.map(TimePoint::from);
    // SAFETY: checked non-NULL; caller-allocated per the function's contract.
    unsafe { export_read(&t, &request, out) }
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
    // SAFETY: forwarded contract.
    let mut request = unsafe { read_request(options) }?;
    request.start = Some(TimePoint::EpochMillis(start_ms));
    request.end = end.map(TimePoint::EpochMillis);
    // SAFETY: checked non-NULL; caller-allocated per the function's contract.
    unsafe { export_read(&t, &request, out) }
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

unsafe fn count_impl(
    t: *const RiverletTable,
    options: *const RiverletReadOptions,
    out: *mut i64,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_count")?;
    let t = table(t)?;
    // SAFETY: forwarded contract.
    let request = unsafe { read_request(options) }?;
    let n = t.count(&request)?;
    // SAFETY: checked non-NULL above.
    unsafe { out.write(i64::try_from(n).unwrap_or(i64::MAX)) };
    Ok(())
}

/// Writes to `*out_count` the number of rows riverlet_table_read would return with `options`
/// (NULL: the whole table: the records retained by a log table, the keys of a primary-key
/// table). A log table without a filter is counted from its offsets, without reading records.
#[no_mangle]
pub unsafe extern "C" fn riverlet_table_count(
    table: *const RiverletTable,
    options: *const RiverletReadOptions,
    out_count: *mut i64,
) -> RiverletStatus {
    guard(|| unsafe { count_impl(table, options, out_count) })
}

unsafe fn lookup_impl(
    t: *const RiverletTable,
    keys: *mut FFI_ArrowArray,
    key_schema: *const FFI_ArrowSchema,
    out: *mut FFI_ArrowArrayStream,
    prefix: bool,
) -> CallResult<()> {
    // The key array is moved in first, so it is released on every path.
    // SAFETY: forwarded contract.
    let imported = unsafe { import_batch(keys, key_schema) };
    non_null(out.cast_const(), "out_stream")?;
    let t = table(t)?;
    let keys = imported?;
    let lookuper = t.new_lookuper()?;
    let found = if prefix {
        lookuper.prefix_lookup(&keys)?
    } else {
        lookuper.lookup(&keys)?
    };
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
    guard(|| unsafe { lookup_impl(table, keys, key_schema, out_stream, false) })
}

/// Prefix lookups in a primary-key table whose bucket key is a prefix of its primary key:
/// `prefixes` (moved in) holds one row per prefix with the bucket-key columns (by name),
/// described by `prefix_schema` (borrowed). Writes a stream of every row matching any prefix
/// (full rows) into the caller-allocated `*out_stream`. A table without such a prefix is
/// INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn riverlet_table_prefix_lookup(
    table: *const RiverletTable,
    prefixes: *mut FFI_ArrowArray,
    prefix_schema: *const FFI_ArrowSchema,
    out_stream: *mut FFI_ArrowArrayStream,
) -> RiverletStatus {
    guard(|| unsafe { lookup_impl(table, prefixes, prefix_schema, out_stream, true) })
}
