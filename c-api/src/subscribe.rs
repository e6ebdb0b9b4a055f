//! `RiverletSubscription`: an unbounded subscription to a table's changes (every startup mode,
//! a subset of partitions and buckets, explicit start offsets to resume from a checkpoint) and
//! its position. The options fill the core's `SubscribeRequest`; the startup words and
//! timestamps are parsed by the core.

use std::ffi::c_char;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use riverlet::blocking::scan::Subscription;
use riverlet::blocking::{BatchReader, BucketOffset, StartupMode, SubscribeRequest};
use riverlet::scan::{changelog_meta_fields, TimeZoneSpec};
use riverlet::{Error, ErrorKind};

use crate::args::{i32_array, non_null, opt_str_arg, str_array};
use crate::arrow_io::export_stream;
use crate::error::{guard, CallResult, RiverletStatus};
use crate::handle::{write_handle, HandleKind, Registry};
use crate::table::{table, RiverletTable};

/// An unbounded subscription to a table's changes (opaque handle).
pub struct RiverletSubscription {
    _private: [u8; 0],
}

/// The next offset of one bucket: a start offset of a subscription (to resume from a
/// checkpoint), as `riverlet_subscription_position` reports it.
#[repr(C)]
pub struct RiverletBucketOffset {
    /// The partition's name (values joined by '$'); NULL for a table without partitions or to
    /// name the partition by `partition_id`.
    pub partition_name: *const c_char,
    /// The partition's id when `partition_name` is NULL; -1 for a table without partitions.
    pub partition_id: i64,
    /// The bucket.
    pub bucket: i32,
    /// The log offset of the next record to read.
    pub offset: i64,
}

/// Options of a subscription; a zeroed struct (or a NULL pointer) subscribes to every column,
/// partition and bucket in startup mode "full".
#[repr(C)]
pub struct RiverletSubscribeOptions {
    /// Columns to return, in this order; NULL / 0: all columns.
    pub columns: *const *const c_char,
    /// Number of `columns`.
    pub num_columns: usize,
    /// Partitions to read, by name; NULL / 0: all partitions existing when subscribing.
    pub partitions: *const *const c_char,
    /// Number of `partitions`.
    pub num_partitions: usize,
    /// Buckets to read in every partition; NULL / 0: all.
    pub buckets: *const i32,
    /// Number of `buckets`.
    pub num_buckets: usize,
    /// Fluss's scan.startup.mode: "full" (NULL: the default; primary-key tables: a snapshot
    /// then the log; log tables: from the earliest offset), "earliest", "latest" or
    /// "timestamp" (with `startup_timestamp`).
    pub startup_mode: *const c_char,
    /// Fluss's scan.startup.timestamp for mode "timestamp": epoch milliseconds as digits or
    /// "yyyy-MM-dd HH:mm:ss" in `time_zone`; NULL otherwise.
    pub startup_timestamp: *const c_char,
    /// Time zone of `startup_timestamp` texts (an IANA name, "UTC", "+08:00", "local"); NULL:
    /// the process's local zone.
    pub time_zone: *const c_char,
    /// Buckets that start at an explicit offset (e.g. a restored checkpoint), whatever the
    /// startup mode; each must name a bucket the subscription reads. NULL / 0: none.
    pub start_offsets: *const RiverletBucketOffset,
    /// Number of `start_offsets`.
    pub num_start_offsets: usize,
}

static SUBSCRIPTIONS: Registry<Mutex<Subscription>> = Registry::new(HandleKind::Subscription);

/// The core request of the C options.
///
/// # Safety
/// `options` is NULL or valid with arrays and strings as documented on the struct.
unsafe fn subscribe_request(o: *const RiverletSubscribeOptions) -> CallResult<SubscribeRequest> {
    let mut r = SubscribeRequest::default();
    // SAFETY: NULL or valid per the function's contract.
    let Some(o) = (unsafe { o.as_ref() }) else {
        return Ok(r);
    };
    // SAFETY: the struct's arrays and strings are valid per its contract.
    let columns = unsafe { str_array(o.columns, o.num_columns, "columns") }?;
    r.columns = (!columns.is_empty()).then_some(columns);
    // SAFETY: as above.
    let parts = unsafe { str_array(o.partitions, o.num_partitions, "partitions") }?;
    r.partitions = (!parts.is_empty()).then(|| parts.into_iter().map(Into::into).collect());
    // SAFETY: as above.
    let buckets = unsafe { i32_array(o.buckets, o.num_buckets, "buckets") }?;
    r.buckets = (!buckets.is_empty()).then_some(buckets);
    // SAFETY: as above.
    let mode = unsafe { opt_str_arg(o.startup_mode, "startup_mode") }?;
    // SAFETY: as above.
    let timestamp = unsafe { opt_str_arg(o.startup_timestamp, "startup_timestamp") }?;
    // SAFETY: as above.
    let zone = match unsafe { opt_str_arg(o.time_zone, "time_zone") }? {
        Some(z) => TimeZoneSpec::parse(z)?,
        None => TimeZoneSpec::Local,
    };
    r.startup_mode = StartupMode::from_options(mode, timestamp, &zone)?;
    if o.num_start_offsets > 0 {
        non_null(o.start_offsets, "start_offsets")?;
        // SAFETY: `num_start_offsets` structs per the struct's contract.
        let raw = unsafe { std::slice::from_raw_parts(o.start_offsets, o.num_start_offsets) };
        for s in raw {
            // SAFETY: NULL or a valid C string per the struct's contract.
            let name = unsafe { opt_str_arg(s.partition_name, "start_offsets.partition_name") }?;
            r.start_offsets.push(BucketOffset {
                partition_id: (s.partition_id >= 0).then_some(s.partition_id),
                partition_name: name.map(str::to_string),
                bucket: s.bucket,
                offset: s.offset,
            });
        }
    }
    Ok(r)
}

unsafe fn subscribe_impl(
    t: *const RiverletTable,
    options: *const RiverletSubscribeOptions,
    out: *mut *mut RiverletSubscription,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_subscription")?;
    let t = table(t)?;
    // SAFETY: forwarded contract.
    let request = unsafe { subscribe_request(options) }?;
    let sub = t.subscribe(&request)?;
    let handle = SUBSCRIPTIONS.insert(Mutex::new(sub));
    // SAFETY: checked non-NULL above.
    unsafe { write_handle(out, handle) };
    Ok(())
}

/// Subscribes to the table's changes as `options` (NULL: every column, partition and bucket,
/// startup mode "full") describe, and writes the handle to `*out_subscription`. The startup
/// positions are taken now. A bad mode or timestamp, an unknown column, partition or bucket,
/// or a start offset naming no bucket read is INVALID_ARGUMENT (or NOT_FOUND for a partition).
#[no_mangle]
pub unsafe extern "C" fn riverlet_table_subscribe(
    table: *const RiverletTable,
    options: *const RiverletSubscribeOptions,
    out_subscription: *mut *mut RiverletSubscription,
) -> RiverletStatus {
    guard(|| unsafe { subscribe_impl(table, options, out_subscription) })
}

fn subscription(s: *const RiverletSubscription) -> CallResult<Arc<Mutex<Subscription>>> {
    SUBSCRIPTIONS.get(s, "subscription")
}

unsafe fn poll_impl(
    s: *const RiverletSubscription,
    timeout_ms: i64,
    out: *mut FFI_ArrowArrayStream,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_stream")?;
    let sub = subscription(s)?;
    let Ok(timeout_ms) = u64::try_from(timeout_ms) else {
        return Err(Error::invalid(format!(
            "timeout_ms must be >= 0 (0 returns what has arrived), got {timeout_ms}"
        ))
        .into());
    };
    let timeout = Duration::from_millis(timeout_ms);
    let mut guard = sub.try_lock().map_err(|_| {
        Error::invalid("this subscription is being polled by another thread; poll it from one")
    })?;
    let changes = guard.poll(timeout)?;
    let mut fields = changelog_meta_fields();
    fields.extend(guard.schema().fields().iter().map(|f| f.as_ref().clone()));
    drop(guard);
    let batches = changes
        .iter()
        .map(|c| c.to_changelog_batch())
        .collect::<riverlet::Result<Vec<_>>>()?;
    let reader = BatchReader::from_batches(Arc::new(Schema::new(fields)), batches);
    // SAFETY: checked non-NULL; caller-allocated per the function's contract.
    unsafe { export_stream(Box::new(reader), out) }
}

/// Waits up to `timeout_ms` milliseconds for changes and writes a stream of what arrived
/// (possibly no batch) into the caller-allocated `*out_stream`: columns `_change_type` (utf8:
/// insert, update_before, update_after, delete), `_log_offset` (int64, -1 for snapshot rows),
/// `_commit_timestamp`, then the subscribed columns. Poll one subscription from one thread at a
/// time (a concurrent poll is INVALID_ARGUMENT). A negative `timeout_ms` is INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn riverlet_subscription_poll(
    subscription: *const RiverletSubscription,
    timeout_ms: i64,
    out_stream: *mut FFI_ArrowArrayStream,
) -> RiverletStatus {
    guard(|| unsafe { poll_impl(subscription, timeout_ms, out_stream) })
}

/// The position as a batch: partition_id, partition_name (null without partitions), bucket,
/// offset.
fn position_batch(position: &[BucketOffset]) -> CallResult<(Arc<Schema>, RecordBatch)> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("partition_id", DataType::Int64, true),
        Field::new("partition_name", DataType::Utf8, true),
        Field::new("bucket", DataType::Int32, false),
        Field::new("offset", DataType::Int64, false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter(
            position.iter().map(|p| p.partition_id),
        )),
        Arc::new(StringArray::from_iter(
            position.iter().map(|p| p.partition_name.as_deref()),
        )),
        Arc::new(Int32Array::from_iter_values(
            position.iter().map(|p| p.bucket),
        )),
        Arc::new(Int64Array::from_iter_values(
            position.iter().map(|p| p.offset),
        )),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns)?;
    Ok((schema, batch))
}

unsafe fn position_impl(
    s: *const RiverletSubscription,
    out: *mut FFI_ArrowArrayStream,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_stream")?;
    let sub = subscription(s)?;
    let position = sub
        .lock()
        .map_err(|_| Error::new(ErrorKind::Internal, "a poll of this subscription panicked"))?
        .position();
    let (schema, batch) = position_batch(&position)?;
    let reader = BatchReader::from_batches(schema, vec![batch]);
    // SAFETY: checked non-NULL; caller-allocated per the function's contract.
    unsafe { export_stream(Box::new(reader), out) }
}

/// Writes the subscription's position, the next offset of every bucket it reads, as a stream
/// of one batch with columns partition_id (int64, null without partitions), partition_name
/// (utf8, null without partitions), bucket (int32), offset (int64) into `*out_stream`. Store it
/// in a checkpoint and pass it back as `start_offsets` to resume after the rows polled so far.
#[no_mangle]
pub unsafe extern "C" fn riverlet_subscription_position(
    subscription: *const RiverletSubscription,
    out_stream: *mut FFI_ArrowArrayStream,
) -> RiverletStatus {
    guard(|| unsafe { position_impl(subscription, out_stream) })
}

fn subscription_free_impl(s: *mut RiverletSubscription) -> CallResult<()> {
    SUBSCRIPTIONS.remove(s.cast_const(), "subscription")?;
    Ok(())
}

/// Stops the subscription and frees the handle. NULL is accepted (OK); freeing a handle twice
/// returns CLOSED.
#[no_mangle]
pub extern "C" fn riverlet_subscription_free(
    subscription: *mut RiverletSubscription,
) -> RiverletStatus {
    guard(|| subscription_free_impl(subscription))
}
