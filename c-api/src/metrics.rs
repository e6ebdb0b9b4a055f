//! `riverlet_metrics`: the client's (and an in-process server's) metrics from the core's
//! recorder, as an Arrow stream, e.g. how many log batches a filtered read let the server skip.

use std::sync::Arc;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{ArrayRef, Float64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use riverlet::blocking::BatchReader;

use crate::args::non_null;
use crate::arrow_io::export_stream;
use crate::error::{guard, CallResult, RiverletStatus};

unsafe fn metrics_impl(out: *mut FFI_ArrowArrayStream) -> CallResult<()> {
    non_null(out.cast_const(), "out_stream")?;
    let samples = riverlet::metrics::snapshot();
    let labels = samples.iter().map(|s| {
        s.labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    });
    let schema = Arc::new(Schema::new(vec![
        Field::new("name", DataType::Utf8, false),
        Field::new("labels", DataType::Utf8, false),
        Field::new("value", DataType::Float64, false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(
            samples.iter().map(|s| s.name.as_str()),
        )),
        Arc::new(StringArray::from_iter_values(labels)),
        Arc::new(Float64Array::from_iter_values(
            samples.iter().map(|s| s.value),
        )),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns)?;
    // SAFETY: checked non-NULL; caller-allocated per the function's contract.
    unsafe {
        export_stream(
            Box::new(BatchReader::from_batches(schema, vec![batch])),
            out,
        )
    }
}

/// Writes every metric recorded in this process to `*out_stream`: one row per counter and
/// gauge (and a histogram's `_count` and `_sum`), with columns "name" (utf8, e.g.
/// "riverlet_client_scan_skipped_batches_total"), "labels" (utf8, `key=value` pairs joined by
/// ",", e.g. "table=db.events"; empty without labels) and "value" (float64). Recording starts
/// with the first `riverlet_connect` or `riverlet_local_server_start` of the process.
#[no_mangle]
pub unsafe extern "C" fn riverlet_metrics(out_stream: *mut FFI_ArrowArrayStream) -> RiverletStatus {
    guard(|| unsafe { metrics_impl(out_stream) })
}
