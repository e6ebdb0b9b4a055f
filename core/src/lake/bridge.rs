//! The one crossing between the workspace's arrow (60) and the iceberg crate's arrow (58).
//!
//! Rust sees `RecordBatch` of two arrow majors as unrelated types. The Arrow C Data Interface
//! structs (`FFI_ArrowArray`, `FFI_ArrowSchema`) are the C ABI of the Arrow spec, `#[repr(C)]`
//! with the same fields in every arrow-rs version, so a batch exported by one version is
//! imported by the other without copying a buffer: the importer takes over the release
//! callback, which keeps the exporter's buffers alive until the last user drops them.

use std::sync::Arc;

use crate::{Error, Result};
use arrow_array::{Array as _, RecordBatch, RecordBatchOptions, StructArray};
use arrow_array_58 as a58;
use arrow_schema::{Schema, SchemaRef};
use arrow_schema_58 as s58;

fn ffi_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::internal(format!("Arrow C Data Interface ({what}): {e}"))
}

/// An iceberg-side (arrow 58) schema as the workspace's (arrow 60), metadata included.
pub fn schema_from_58(schema: &s58::Schema) -> Result<SchemaRef> {
    let ffi = s58::ffi::FFI_ArrowSchema::try_from(schema).map_err(|e| ffi_err("export", e))?;
    // SAFETY: FFI_ArrowSchema is the #[repr(C)] ArrowSchema struct of the C Data Interface in
    // both versions; the 60 side only reads it here and `ffi` releases it when dropped.
    let ours = unsafe { &*(&ffi as *const _ as *const arrow_schema::ffi::FFI_ArrowSchema) };
    Ok(Arc::new(
        Schema::try_from(ours).map_err(|e| ffi_err("import", e))?,
    ))
}

/// A workspace batch as an iceberg-side batch of `schema`, sharing its buffers. The columns
/// must already have `schema`'s types (the field metadata, e.g. Iceberg's field ids, comes
/// from `schema`).
pub fn batch_to_58(batch: RecordBatch, schema: s58::SchemaRef) -> Result<a58::RecordBatch> {
    let rows = batch.num_rows();
    if batch.num_columns() == 0 {
        return a58::RecordBatch::try_new_with_options(
            schema,
            vec![],
            &a58::RecordBatchOptions::new().with_row_count(Some(rows)),
        )
        .map_err(|e| ffi_err("empty batch", e));
    }
    let data = StructArray::from(batch).into_data();
    let mut array = arrow_data::ffi::FFI_ArrowArray::new(&data);
    let ffi_schema = arrow_schema::ffi::FFI_ArrowSchema::try_from(data.data_type())
        .map_err(|e| ffi_err("export batch type", e))?;
    // SAFETY: both FFI structs are the C ABI structs of the Arrow spec in either version.
    // `from_raw` moves the array out (leaving a released struct behind), so its buffers are
    // released exactly once, by the 58 side; the schema is only read.
    let imported = unsafe {
        let array = arrow_data_58::ffi::FFI_ArrowArray::from_raw(
            &mut array as *mut arrow_data::ffi::FFI_ArrowArray
                as *mut arrow_data_58::ffi::FFI_ArrowArray,
        );
        let s = &*(&ffi_schema as *const _ as *const s58::ffi::FFI_ArrowSchema);
        a58::ffi::from_ffi(array, s).map_err(|e| ffi_err("import batch", e))?
    };
    let columns = a58::StructArray::from(imported).into_parts().1;
    a58::RecordBatch::try_new_with_options(
        schema,
        columns,
        &a58::RecordBatchOptions::new().with_row_count(Some(rows)),
    )
    .map_err(|e| ffi_err("batch", e))
}

/// An iceberg-side batch as a workspace batch, sharing its buffers.
pub fn batch_from_58(batch: a58::RecordBatch) -> Result<RecordBatch> {
    use a58::Array as _;
    let rows = batch.num_rows();
    let schema = schema_from_58(batch.schema_ref())?;
    if batch.num_columns() == 0 {
        return RecordBatch::try_new_with_options(
            schema,
            vec![],
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )
        .map_err(|e| ffi_err("empty batch", e));
    }
    let data = a58::StructArray::from(batch).into_data();
    let mut array = arrow_data_58::ffi::FFI_ArrowArray::new(&data);
    let ffi_schema = s58::ffi::FFI_ArrowSchema::try_from(data.data_type())
        .map_err(|e| ffi_err("export batch type", e))?;
    // SAFETY: as in `batch_to_58`, the other way round.
    let imported = unsafe {
        let array = arrow_data::ffi::FFI_ArrowArray::from_raw(
            &mut array as *mut arrow_data_58::ffi::FFI_ArrowArray
                as *mut arrow_data::ffi::FFI_ArrowArray,
        );
        let s = &*(&ffi_schema as *const _ as *const arrow_schema::ffi::FFI_ArrowSchema);
        arrow_array::ffi::from_ffi(array, s).map_err(|e| ffi_err("import batch", e))?
    };
    let columns = StructArray::from(imported).into_parts().1;
    RecordBatch::try_new_with_options(
        schema,
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
    .map_err(|e| ffi_err("batch", e))
}
