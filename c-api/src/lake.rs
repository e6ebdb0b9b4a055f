//! Admin calls on a lake-enabled table's lake: how far it is tiered (its lake snapshots).

use std::ffi::c_char;
use std::sync::Arc;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use riverlet::blocking::BatchReader;

use crate::args::non_null;
use crate::arrow_io::export_stream;
use crate::connection::{connection, table_path, RiverletConnection};
use crate::error::{guard, CallResult, RiverletStatus};

/// # Safety
/// As [`riverlet_lake_snapshot`].
#[allow(clippy::too_many_arguments)]
unsafe fn lake_snapshot_impl(
    conn: *const RiverletConnection,
    database: *const c_char,
    name: *const c_char,
    snapshot_id: *const i64,
    readable: bool,
    out_found: *mut bool,
    out_snapshot_id: *mut i64,
    out: *mut FFI_ArrowArrayStream,
) -> CallResult<()> {
    non_null(out_found.cast_const(), "out_found")?;
    non_null(out_snapshot_id.cast_const(), "out_snapshot_id")?;
    non_null(out.cast_const(), "out_stream")?;
    let c = connection(conn)?;
    // SAFETY: C strings per the function's contract.
    let path = unsafe { table_path(database, name) }?;
    // SAFETY: NULL or one readable int64 per the function's contract.
    let snapshot_id = unsafe { snapshot_id.as_ref() }.copied();
    let found = c.admin().lake_snapshot(&path, snapshot_id, readable)?;
    let schema = Arc::new(Schema::new(vec![
        Field::new("partition_id", DataType::Int64, true),
        Field::new("bucket", DataType::Int32, false),
        Field::new("log_offset", DataType::Int64, true),
    ]));
    let buckets = found.as_ref().map_or(&[][..], |s| &s.buckets[..]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter(
            buckets.iter().map(|b| b.partition_id),
        )),
        Arc::new(Int32Array::from_iter_values(
            buckets.iter().map(|b| b.bucket),
        )),
        Arc::new(Int64Array::from_iter(buckets.iter().map(|b| b.log_offset))),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns)?;
    // SAFETY: all three checked non-NULL above; the stream is caller-allocated per the contract.
    unsafe {
        out_found.write(found.is_some());
        out_snapshot_id.write(found.as_ref().map_or(-1, |s| s.snapshot_id));
        export_stream(
            Box::new(BatchReader::from_batches(schema, vec![batch])),
            out,
        )
    }
}

/// How far the lake of lake-enabled table `database`.`table` holds its log: one of its lake
/// snapshots, as Fluss's `getLatestLakeSnapshot` / `getReadableLakeSnapshot` answer.
///
/// `snapshot_id` NULL and `readable` false: the latest snapshot; `snapshot_id` non-NULL: the
/// snapshot with `*snapshot_id`; `readable` true (with `snapshot_id` NULL): the snapshot union
/// reads take (for a Paimon table with deletion vectors the latest compacted one, else the
/// latest). Asking for both an id and `readable` is RIVERLET_STATUS_INVALID_ARGUMENT.
///
/// A table whose lake has no such snapshot yet is not an error: `*out_found` is false,
/// `*out_snapshot_id` -1 and the stream empty. Otherwise `*out_found` is true,
/// `*out_snapshot_id` the lake's snapshot id (for Iceberg its snapshot id), and the
/// caller-allocated `*out_stream` gets one row per bucket, sorted by partition and bucket,
/// columns partition_id (int64, NULL for a table without partitions), bucket (int32) and
/// log_offset (int64: the log offset the lake holds the bucket's records before; NULL where
/// nothing of it is tiered yet). A table that does not exist or is not lake-enabled is an error.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn riverlet_lake_snapshot(
    connection: *const RiverletConnection,
    database: *const c_char,
    table: *const c_char,
    snapshot_id: *const i64,
    readable: bool,
    out_found: *mut bool,
    out_snapshot_id: *mut i64,
    out_stream: *mut FFI_ArrowArrayStream,
) -> RiverletStatus {
    guard(|| unsafe {
        lake_snapshot_impl(
            connection,
            database,
            table,
            snapshot_id,
            readable,
            out_found,
            out_snapshot_id,
            out_stream,
        )
    })
}
