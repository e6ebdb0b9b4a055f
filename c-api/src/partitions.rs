//! Admin calls on a table's partitions and bucket offsets: list / create / drop partitions, and
//! list offsets (earliest, latest, or at a timestamp) per bucket.

use std::ffi::c_char;
use std::sync::Arc;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use riverlet::blocking::BatchReader;
use riverlet::client::OffsetSpec;
use riverlet::metadata::PartitionSpec;
use riverlet::Error;

use crate::args::{i32_array, non_null, opt_str_arg, str_array};
use crate::arrow_io::export_stream;
use crate::connection::{connection, table_path, RiverletConnection};
use crate::error::{guard, CallResult, RiverletStatus};

/// `riverlet_list_offsets` spec: the log start offset (the first offset still retained).
pub const RIVERLET_OFFSET_EARLIEST: i32 = 0;
/// `riverlet_list_offsets` spec: the high watermark (the offset the next record gets).
pub const RIVERLET_OFFSET_LATEST: i32 = 1;
/// `riverlet_list_offsets` spec: the offset of the first batch committed at or after
/// `timestamp_ms`.
pub const RIVERLET_OFFSET_TIMESTAMP: i32 = 2;

/// A partition spec from parallel key / value arrays, in the order given.
///
/// # Safety
/// Both arrays hold `len` C strings.
unsafe fn partition_spec(
    keys: *const *const c_char,
    values: *const *const c_char,
    len: usize,
) -> CallResult<PartitionSpec> {
    // SAFETY: forwarded contract.
    let keys = unsafe { str_array(keys, len, "partition_keys") }?;
    // SAFETY: forwarded contract.
    let values = unsafe { str_array(values, len, "partition_values") }?;
    if keys.is_empty() {
        return Err(Error::invalid("a partition spec needs at least one key = value pair").into());
    }
    Ok(PartitionSpec::new(keys.into_iter().zip(values)))
}

unsafe fn list_partitions_impl(
    conn: *const RiverletConnection,
    database: *const c_char,
    name: *const c_char,
    out: *mut FFI_ArrowArrayStream,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_stream")?;
    let c = connection(conn)?;
    // SAFETY: C strings per the function's contract.
    let path = unsafe { table_path(database, name) }?;
    let parts = c.admin().list_partitions(&path)?;
    let spec_text = |p: &riverlet::client::PartitionInfo| {
        p.spec
            .entries
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let schema = Arc::new(Schema::new(vec![
        Field::new("partition_id", DataType::Int64, false),
        Field::new("partition_name", DataType::Utf8, false),
        Field::new("partition_spec", DataType::Utf8, false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(
            parts.iter().map(|p| p.partition_id),
        )),
        Arc::new(StringArray::from_iter_values(
            parts.iter().map(|p| p.name.as_str()),
        )),
        Arc::new(StringArray::from_iter_values(parts.iter().map(spec_text))),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns)?;
    let reader = BatchReader::from_batches(schema, vec![batch]);
    // SAFETY: checked non-NULL; caller-allocated per the function's contract.
    unsafe { export_stream(Box::new(reader), out) }
}

/// Writes a stream of the partitions of `database`.`table` into `*out_stream`: columns
/// partition_id (int64), partition_name (utf8, the values joined by '$') and partition_spec
/// (utf8, "key=value,key=value" in partition-key order).
#[no_mangle]
pub unsafe extern "C" fn riverlet_list_partitions(
    connection: *const RiverletConnection,
    database: *const c_char,
    table: *const c_char,
    out_stream: *mut FFI_ArrowArrayStream,
) -> RiverletStatus {
    guard(|| unsafe { list_partitions_impl(connection, database, table, out_stream) })
}

#[allow(clippy::too_many_arguments)]
unsafe fn alter_partition_impl(
    conn: *const RiverletConnection,
    database: *const c_char,
    name: *const c_char,
    keys: *const *const c_char,
    values: *const *const c_char,
    len: usize,
    ignore: bool,
    create: bool,
) -> CallResult<()> {
    let c = connection(conn)?;
    // SAFETY: C strings per the function's contract.
    let path = unsafe { table_path(database, name) }?;
    // SAFETY: forwarded contract.
    let spec = unsafe { partition_spec(keys, values, len) }?;
    let admin = c.admin();
    if create {
        admin.create_partition(&path, &spec, ignore)?;
    } else {
        admin.drop_partition(&path, &spec, ignore)?;
    }
    Ok(())
}

/// Creates the partition `keys[i] = values[i]` (i < `num_keys`, one pair per partition key) of
/// a partitioned table; ALREADY_EXISTS when it exists unless `ignore_if_exists`.
#[no_mangle]
pub unsafe extern "C" fn riverlet_create_partition(
    connection: *const RiverletConnection,
    database: *const c_char,
    table: *const c_char,
    keys: *const *const c_char,
    values: *const *const c_char,
    num_keys: usize,
    ignore_if_exists: bool,
) -> RiverletStatus {
    guard(|| unsafe {
        alter_partition_impl(
            connection,
            database,
            table,
            keys,
            values,
            num_keys,
            ignore_if_exists,
            true,
        )
    })
}

/// Drops the partition `keys[i] = values[i]` with its data; NOT_FOUND when it does not exist
/// unless `ignore_if_not_exists`.
#[no_mangle]
pub unsafe extern "C" fn riverlet_drop_partition(
    connection: *const RiverletConnection,
    database: *const c_char,
    table: *const c_char,
    keys: *const *const c_char,
    values: *const *const c_char,
    num_keys: usize,
    ignore_if_not_exists: bool,
) -> RiverletStatus {
    guard(|| unsafe {
        alter_partition_impl(
            connection,
            database,
            table,
            keys,
            values,
            num_keys,
            ignore_if_not_exists,
            false,
        )
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn list_offsets_impl(
    conn: *const RiverletConnection,
    database: *const c_char,
    name: *const c_char,
    partition: *const c_char,
    buckets: *const i32,
    num_buckets: usize,
    spec: i32,
    timestamp_ms: i64,
    out: *mut FFI_ArrowArrayStream,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_stream")?;
    let c = connection(conn)?;
    // SAFETY: C strings per the function's contract.
    let path = unsafe { table_path(database, name) }?;
    // SAFETY: as above.
    let partition = unsafe { opt_str_arg(partition, "partition") }?;
    // SAFETY: `num_buckets` integers per the function's contract.
    let buckets = unsafe { i32_array(buckets, num_buckets, "buckets") }?;
    let spec = match spec {
        RIVERLET_OFFSET_EARLIEST => OffsetSpec::Earliest,
        RIVERLET_OFFSET_LATEST => OffsetSpec::Latest,
        RIVERLET_OFFSET_TIMESTAMP => OffsetSpec::Timestamp(timestamp_ms),
        other => {
            return Err(Error::invalid(format!(
                "offset spec {other} is none of RIVERLET_OFFSET_EARLIEST (0), \
                 RIVERLET_OFFSET_LATEST (1), RIVERLET_OFFSET_TIMESTAMP (2)"
            ))
            .into())
        }
    };
    let offsets = c.admin().list_offsets(&path, partition, &buckets, spec)?;
    let schema = Arc::new(Schema::new(vec![
        Field::new("bucket", DataType::Int32, false),
        Field::new("offset", DataType::Int64, false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from_iter_values(offsets.keys().copied())),
        Arc::new(Int64Array::from_iter_values(offsets.values().copied())),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns)?;
    let reader = BatchReader::from_batches(schema, vec![batch]);
    // SAFETY: checked non-NULL; caller-allocated per the function's contract.
    unsafe { export_stream(Box::new(reader), out) }
}

/// Writes the offsets of buckets of `database`.`table` as a stream with columns bucket (int32)
/// and offset (int64) into `*out_stream`: of the partition named `partition` (NULL for a table
/// without partitions), of the `num_buckets` buckets in `buckets` (NULL / 0: all), per `spec`
/// (one of RIVERLET_OFFSET_EARLIEST, _LATEST, _TIMESTAMP; `timestamp_ms` is used by
/// RIVERLET_OFFSET_TIMESTAMP only).
#[no_mangle]
pub unsafe extern "C" fn riverlet_list_offsets(
    connection: *const RiverletConnection,
    database: *const c_char,
    table: *const c_char,
    partition: *const c_char,
    buckets: *const i32,
    num_buckets: usize,
    spec: i32,
    timestamp_ms: i64,
    out_stream: *mut FFI_ArrowArrayStream,
) -> RiverletStatus {
    guard(|| unsafe {
        list_offsets_impl(
            connection,
            database,
            table,
            partition,
            buckets,
            num_buckets,
            spec,
            timestamp_ms,
            out_stream,
        )
    })
}
