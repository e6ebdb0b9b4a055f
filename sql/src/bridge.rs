//! The one crossing between the core's arrow (60) and DataFusion's arrow (59).
//!
//! DataFusion 55 (the newest release) is built on arrow 59 while the workspace is on arrow 60,
//! and Rust sees `arrow_array::RecordBatch` of two majors as unrelated types. The Arrow C Data
//! Interface structs (`FFI_ArrowArray`, `FFI_ArrowSchema`) are the C ABI of the Arrow spec:
//! `#[repr(C)]` with the same fields in every arrow-rs version. So a batch is exported by one
//! version and imported by the other without copying a buffer: the importer takes over the
//! release callback, which keeps the exporter's buffers alive until the last user drops them.
//! When DataFusion moves to the workspace's arrow, this module becomes identity functions.

use std::sync::Arc;

use arrow::array::{Array as _, StructArray as DfStructArray};
use arrow::datatypes::{Schema as DfSchema, SchemaRef as DfSchemaRef};
use arrow::record_batch::{RecordBatch as DfBatch, RecordBatchOptions as DfBatchOptions};
use arrow_array::{Array as _, RecordBatch, RecordBatchOptions, StructArray};
use arrow_schema::{Schema, SchemaRef};
use datafusion::error::{DataFusionError, Result as DfResult};

fn ffi_err(what: &str, e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Internal(format!("Arrow C Data Interface ({what}): {e}"))
}

/// A core (arrow 60) schema as DataFusion's (arrow 59), metadata included.
pub fn schema_to_df(schema: &Schema) -> DfResult<DfSchemaRef> {
    let ffi = arrow_schema::ffi::FFI_ArrowSchema::try_from(schema)
        .map_err(|e| ffi_err("export schema", e))?;
    // SAFETY: FFI_ArrowSchema is the #[repr(C)] ArrowSchema struct of the C Data Interface in
    // both versions; the 59 side only reads it here and `ffi` releases it when dropped.
    let theirs = unsafe { &*(&ffi as *const _ as *const arrow::ffi::FFI_ArrowSchema) };
    let s = DfSchema::try_from(theirs).map_err(|e| ffi_err("import schema", e))?;
    Ok(Arc::new(s))
}

/// A DataFusion (arrow 59) schema as the core's (arrow 60).
pub fn schema_from_df(schema: &DfSchema) -> DfResult<SchemaRef> {
    let ffi =
        arrow::ffi::FFI_ArrowSchema::try_from(schema).map_err(|e| ffi_err("export schema", e))?;
    // SAFETY: as in `schema_to_df`, the other way round.
    let ours = unsafe { &*(&ffi as *const _ as *const arrow_schema::ffi::FFI_ArrowSchema) };
    let s = Schema::try_from(ours).map_err(|e| ffi_err("import schema", e))?;
    Ok(Arc::new(s))
}

/// A core batch as a DataFusion batch of `schema` (the DataFusion form of the batch's schema),
/// sharing its buffers.
pub fn batch_to_df(batch: RecordBatch, schema: &DfSchemaRef) -> DfResult<DfBatch> {
    let rows = batch.num_rows();
    if batch.num_columns() == 0 {
        return DfBatch::try_new_with_options(
            schema.clone(),
            vec![],
            &DfBatchOptions::new().with_row_count(Some(rows)),
        )
        .map_err(|e| ffi_err("empty batch", e));
    }
    let data = StructArray::from(batch).into_data();
    let mut array = arrow_data::ffi::FFI_ArrowArray::new(&data);
    let ffi_schema = arrow_schema::ffi::FFI_ArrowSchema::try_from(data.data_type())
        .map_err(|e| ffi_err("export batch type", e))?;
    // SAFETY: both FFI structs are the C ABI structs of the Arrow spec in either version.
    // `from_raw` moves the array out (leaving an empty, released struct behind), so its buffers
    // are released exactly once, by the 59 side; the schema is only read.
    let imported = unsafe {
        let array = arrow::ffi::FFI_ArrowArray::from_raw(
            &mut array as *mut arrow_data::ffi::FFI_ArrowArray as *mut arrow::ffi::FFI_ArrowArray,
        );
        let schema = &*(&ffi_schema as *const _ as *const arrow::ffi::FFI_ArrowSchema);
        arrow::ffi::from_ffi(array, schema).map_err(|e| ffi_err("import batch", e))?
    };
    let columns = DfStructArray::from(imported).into_parts().1;
    DfBatch::try_new_with_options(
        schema.clone(),
        columns,
        &DfBatchOptions::new().with_row_count(Some(rows)),
    )
    .map_err(|e| ffi_err("batch", e))
}

/// A DataFusion batch as a core batch (what the core's writers take), sharing its buffers.
pub fn batch_from_df(batch: DfBatch) -> DfResult<RecordBatch> {
    let rows = batch.num_rows();
    let schema = schema_from_df(batch.schema_ref())?;
    if batch.num_columns() == 0 {
        return RecordBatch::try_new_with_options(
            schema,
            vec![],
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )
        .map_err(|e| ffi_err("empty batch", e));
    }
    let data = DfStructArray::from(batch).into_data();
    let mut array = arrow::ffi::FFI_ArrowArray::new(&data);
    let ffi_schema = arrow::ffi::FFI_ArrowSchema::try_from(data.data_type())
        .map_err(|e| ffi_err("export batch type", e))?;
    // SAFETY: as in `batch_to_df`, the other way round.
    let imported = unsafe {
        let array = arrow_data::ffi::FFI_ArrowArray::from_raw(
            &mut array as *mut arrow::ffi::FFI_ArrowArray as *mut arrow_data::ffi::FFI_ArrowArray,
        );
        let schema = &*(&ffi_schema as *const _ as *const arrow_schema::ffi::FFI_ArrowSchema);
        arrow_array::ffi::from_ffi(array, schema).map_err(|e| ffi_err("import batch", e))?
    };
    let columns = StructArray::from(imported).into_parts().1;
    RecordBatch::try_new_with_options(
        schema,
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
    .map_err(|e| ffi_err("batch", e))
}
