//! The Arrow C Data Interface side: importing schemas and record batches from C, exporting
//! schemas and streams to C.
//!
//! Ownership rules (also stated in the header):
//! - an input `ArrowSchema` is borrowed: Riverlet reads it during the call and never releases it;
//! - an input `ArrowArray` is moved: once the call starts (whatever its outcome) Riverlet owns
//!   it, releases it when done and sets the caller's `release` to NULL;
//! - an output `ArrowSchema` / `ArrowArrayStream` is written into caller-allocated memory; the
//!   caller releases it with its `release` callback.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use arrow_array::ffi::{from_ffi, FFI_ArrowArray};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{Array, RecordBatch, RecordBatchOptions, RecordBatchReader, StructArray};
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{ArrowError, DataType, Schema, SchemaRef};
use riverlet::{Error, ErrorKind};

use crate::args::non_null;
use crate::error::{panic_message, CallResult};

/// Reads a borrowed C `ArrowSchema` describing a record batch (format `+s`).
///
/// # Safety
/// `schema` is NULL or points to a valid, unreleased `ArrowSchema`.
pub unsafe fn import_schema(
    schema: *const FFI_ArrowSchema,
    what: &'static str,
) -> CallResult<Schema> {
    non_null(schema, what)?;
    // SAFETY: non-NULL and valid per the caller's contract; we only read it.
    let schema = unsafe { &*schema };
    if schema.release().is_none() {
        return Err(Error::invalid(format!("'{what}' is a released ArrowSchema")).into());
    }
    let dt = DataType::try_from(schema)
        .map_err(|e| Error::invalid(format!("'{what}' is not a valid ArrowSchema: {e}")))?;
    match dt {
        DataType::Struct(fields) => Ok(Schema::new(fields)),
        other => Err(Error::invalid(format!(
            "'{what}' must describe a record batch (a struct, format '+s'), not {other}"
        ))
        .into()),
    }
}

/// Takes ownership of the C array (moving it out, so the caller's `release` becomes NULL) and
/// imports it with `schema` as a record batch. The array is released on every path.
///
/// # Safety
/// `array` is NULL or points to a valid `ArrowArray` (released or not); `schema` as in
/// [`import_schema`].
pub unsafe fn import_batch(
    array: *mut FFI_ArrowArray,
    schema: *const FFI_ArrowSchema,
) -> CallResult<RecordBatch> {
    non_null(array.cast_const(), "array")?;
    // SAFETY: non-NULL and valid per the caller's contract; `from_raw` moves it out and leaves
    // an empty (released) struct behind.
    let owned = unsafe { FFI_ArrowArray::from_raw(array) };
    if owned.is_released() {
        return Err(Error::invalid("'array' is a released ArrowArray").into());
    }
    // SAFETY: forwarded contract.
    let arrow_schema = unsafe { import_schema(schema, "schema") }?;
    // SAFETY: checked non-NULL above (import_schema).
    let ffi_schema = unsafe { &*schema };
    check_shape(ffi_schema, &owned, "the batch")?;
    // SAFETY: the array and schema come from the caller, who promises they agree with the C
    // data interface; the buffers are then validated in full before use.
    let data = unsafe { from_ffi(owned, ffi_schema) }
        .map_err(|e| Error::invalid(format!("cannot import the ArrowArray: {e}")))?;
    data.validate_full()
        .map_err(|e| Error::invalid(format!("the ArrowArray is not valid for its schema: {e}")))?;
    let structs = StructArray::from(data);
    if structs.null_count() > 0 {
        return Err(Error::invalid(
            "the ArrowArray has null rows at the top level; a record batch cannot have them",
        )
        .into());
    }
    let rows = structs.len();
    let (_, columns, _) = structs.into_parts();
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    let batch = RecordBatch::try_new_with_options(Arc::new(arrow_schema), columns, &options)?;
    Ok(batch)
}

/// Checks that an array has as many children (and dictionaries) as its schema says, at every
/// level. The Arrow import asserts this instead of returning an error, and the children
/// pointers beyond the array's own count must never be read.
fn check_shape(schema: &FFI_ArrowSchema, array: &FFI_ArrowArray, path: &str) -> CallResult<()> {
    let want = schema.children().count();
    let got = array.num_children();
    if want != got {
        return Err(Error::invalid(format!(
            "{path}: the ArrowSchema has {want} children but the ArrowArray has {got}"
        ))
        .into());
    }
    for i in 0..want {
        let child = schema.child(i);
        let name = child.name().unwrap_or("?");
        check_shape(child, array.child(i), &format!("{path}.{name}"))?;
    }
    match (schema.dictionary(), array.dictionary()) {
        (Some(s), Some(a)) => check_shape(s, a, &format!("{path} (dictionary)")),
        (None, None) => Ok(()),
        _ => Err(Error::invalid(format!(
            "{path}: the ArrowSchema and the ArrowArray disagree on having a dictionary"
        ))
        .into()),
    }
}

/// Writes `schema` into the caller-allocated `out` (as a struct, format `+s`).
///
/// # Safety
/// `out` is NULL or valid for writing one `ArrowSchema`.
pub unsafe fn export_schema(schema: &Schema, out: *mut FFI_ArrowSchema) -> CallResult<()> {
    non_null(out.cast_const(), "out_schema")?;
    let ffi = FFI_ArrowSchema::try_from(schema)?;
    // SAFETY: `out` is writable per the caller's contract; ownership passes to the caller.
    unsafe { out.write(ffi) };
    Ok(())
}

/// Wraps a reader so a panic in it becomes an error of the stream (a panic must not unwind out
/// of `get_next`), and rewrites errors so that `get_last_error` says "riverlet <kind>: ..." and
/// `get_next` returns an errno that fits the kind.
struct GuardedReader {
    schema: SchemaRef,
    inner: Option<Box<dyn RecordBatchReader + Send>>,
}

impl Iterator for GuardedReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let inner = self.inner.as_mut()?;
        match catch_unwind(AssertUnwindSafe(|| inner.next())) {
            Ok(Some(Ok(batch))) => Some(Ok(batch)),
            Ok(Some(Err(e))) => Some(Err(stream_error(&e))),
            Ok(None) => None,
            Err(payload) => {
                // A reader that panicked is not used again.
                self.inner = None;
                Some(Err(ArrowError::ExternalError(Box::new(StreamError(
                    format!(
                        "riverlet panic: Riverlet panicked while reading (this is a bug): {}",
                        panic_message(payload.as_ref())
                    )
                    .replace('\0', "\\0"),
                )))))
            }
        }
    }
}

impl RecordBatchReader for GuardedReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// An error message ready for `get_last_error`.
#[derive(Debug)]
struct StreamError(String);

impl std::fmt::Display for StreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StreamError {}

/// The error `get_next` reports for a reader error. arrow-rs derives the errno from the
/// variant: network, timeout and I/O errors become `IoError` (EIO), unsupported ones
/// `NotYetImplemented` (ENOSYS), the rest `ExternalError` (EINVAL). The text names the kind as
/// "riverlet <kind>: message" and has no NUL byte.
fn stream_error(e: &ArrowError) -> ArrowError {
    let riverlet = match e {
        ArrowError::ExternalError(inner) => inner.downcast_ref::<Error>(),
        _ => None,
    };
    let Some(r) = riverlet else {
        return ArrowError::ExternalError(Box::new(StreamError(
            format!("riverlet arrow: {e}").replace('\0', "\\0"),
        )));
    };
    let text = format!("riverlet {}: {r}", r.kind().as_str()).replace('\0', "\\0");
    match r.kind() {
        ErrorKind::Network | ErrorKind::Timeout | ErrorKind::Io => {
            ArrowError::IoError(text.clone(), std::io::Error::other(text))
        }
        ErrorKind::Unsupported => ArrowError::NotYetImplemented(text),
        _ => ArrowError::ExternalError(Box::new(StreamError(text))),
    }
}

/// Writes a stream over `reader` into the caller-allocated `out`.
///
/// # Safety
/// `out` is NULL or valid for writing one `ArrowArrayStream`.
pub unsafe fn export_stream(
    reader: Box<dyn RecordBatchReader + Send>,
    out: *mut FFI_ArrowArrayStream,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_stream")?;
    let guarded = GuardedReader {
        schema: reader.schema(),
        inner: Some(reader),
    };
    let stream = FFI_ArrowArrayStream::new(Box::new(guarded));
    // SAFETY: `out` is writable per the caller's contract; ownership passes to the caller.
    unsafe { out.write(stream) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, RecordBatchIterator, StringArray};
    use arrow_schema::Field;

    fn batch() -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(vec![1, 2])),
                Arc::new(StringArray::from(vec![Some("a"), None])),
            ],
        )
        .unwrap()
    }

    #[test]
    fn batch_round_trips_through_the_c_structs() {
        let b = batch();
        let s = StructArray::from(b.clone());
        let mut array = FFI_ArrowArray::new(&s.to_data());
        let schema = FFI_ArrowSchema::try_from(b.schema().as_ref()).unwrap();
        let back = unsafe { import_batch(&mut array, &schema) }.unwrap();
        assert_eq!(back, b);
        assert!(array.is_released(), "the input array was moved");
        // a second import of the moved-out array is an error, not a double free
        assert!(unsafe { import_batch(&mut array, &schema) }.is_err());
    }

    #[test]
    fn non_struct_schema_is_rejected() {
        let schema = FFI_ArrowSchema::try_from(&DataType::Int32).unwrap();
        assert!(unsafe { import_schema(&schema, "schema") }.is_err());
    }

    #[test]
    fn stream_errors_carry_the_kind() {
        let b = batch();
        let items: Vec<Result<RecordBatch, ArrowError>> = vec![
            Ok(b.clone()),
            Err(ArrowError::ExternalError(Box::new(Error::new(
                riverlet::ErrorKind::Network,
                "connection reset",
            )))),
        ];
        let reader = RecordBatchIterator::new(items, b.schema());
        let mut out = FFI_ArrowArrayStream::empty();
        unsafe { export_stream(Box::new(reader), &mut out) }.unwrap();
        let mut imported = arrow_array::ffi_stream::RecordBatchStreamReader::try_new(out).unwrap();
        assert_eq!(imported.next().unwrap().unwrap(), b);
        let err = imported.next().unwrap().unwrap_err().to_string();
        assert!(err.contains("riverlet network: connection reset"), "{err}");
    }
}
