//! Conversions between Java values and core values, and Arrow through the C Data Interface
//! (structs allocated by the JVM; this side moves data in or writes data out, without copies
//! except for slices, which Arrow Java cannot import: see `own_buffers`).

use std::sync::Arc;

use arrow_array::ffi::{from_ffi, to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{
    make_array, Array, RecordBatch, RecordBatchOptions, RecordBatchReader, StructArray,
};
use arrow_data::transform::MutableArrayData;
use arrow_data::ArrayData;
use arrow_schema::{ArrowError, Schema, SchemaRef};
use jni::objects::{JIntArray, JLongArray, JObject, JObjectArray, JString};
use jni::sys::jlong;
use jni::JNIEnv;
use riverlet::scan::TimePoint;
use riverlet::Error;

use crate::handles::LiveToken;
use crate::jvm::{cache, JniResult};

/// A Java string (not null).
pub fn string(env: &mut JNIEnv<'_>, s: &JString<'_>, what: &str) -> JniResult<String> {
    if s.is_null() {
        return Err(Error::invalid(format!("{what} must not be null")).into());
    }
    Ok(env.get_string(s)?.into())
}

/// A Java string that may be null.
pub fn opt_string(env: &mut JNIEnv<'_>, s: &JObject<'_>) -> JniResult<Option<String>> {
    if s.is_null() {
        return Ok(None);
    }
    let js: &JString = s.into();
    Ok(Some(env.get_string(js)?.into()))
}

/// A Java `String[]` (null gives `None`; a null element is an error naming `what`).
pub fn string_array(
    env: &mut JNIEnv<'_>,
    arr: &JObjectArray<'_>,
    what: &str,
) -> JniResult<Option<Vec<String>>> {
    if arr.is_null() {
        return Ok(None);
    }
    let n = env.get_array_length(arr)?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let el = env.get_object_array_element(arr, i)?;
        match opt_string(env, &el)? {
            Some(s) => out.push(s),
            None => return Err(Error::invalid(format!("{what}[{i}] must not be null")).into()),
        }
        env.delete_local_ref(el)?;
    }
    Ok(Some(out))
}

/// Key, value pairs (a partition spec, properties).
pub type Pairs = Vec<(String, String)>;

/// A flattened `key, value, key, value...` `String[]` as pairs.
pub fn pairs(
    env: &mut JNIEnv<'_>,
    arr: &JObjectArray<'_>,
    what: &str,
) -> JniResult<Vec<(String, String)>> {
    let flat = string_array(env, arr, what)?.unwrap_or_default();
    let mut it = flat.into_iter();
    let mut out = Vec::new();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        out.push((k, v));
    }
    Ok(out)
}

/// A new Java `String[]`.
pub fn new_string_array<'l>(env: &mut JNIEnv<'l>, items: &[String]) -> JniResult<JObjectArray<'l>> {
    string_array_of(env, items.len(), items.iter().map(|s| Some(s.as_str())))
}

/// A new Java `String[]` whose `None` items are null.
pub fn new_opt_string_array<'l>(
    env: &mut JNIEnv<'l>,
    items: &[Option<String>],
) -> JniResult<JObjectArray<'l>> {
    string_array_of(env, items.len(), items.iter().map(Option::as_deref))
}

fn string_array_of<'l, 'a>(
    env: &mut JNIEnv<'l>,
    len: usize,
    items: impl Iterator<Item = Option<&'a str>>,
) -> JniResult<JObjectArray<'l>> {
    let c = cache()?;
    let arr = env.new_object_array(
        len as i32,
        <&jni::objects::JClass>::from(c.string_class.as_obj()),
        JObject::null(),
    )?;
    for (i, s) in items.enumerate() {
        if let Some(s) = s {
            let js = env.new_string(s)?;
            env.set_object_array_element(&arr, i as i32, &js)?;
            env.delete_local_ref(js)?;
        }
    }
    Ok(arr)
}

/// A Java `int[]` (null gives `None`).
pub fn int_array(env: &mut JNIEnv<'_>, arr: &JIntArray<'_>) -> JniResult<Option<Vec<i32>>> {
    if arr.is_null() {
        return Ok(None);
    }
    let n = env.get_array_length(arr)?;
    let mut buf = vec![0i32; n as usize];
    env.get_int_array_region(arr, 0, &mut buf)?;
    Ok(Some(buf))
}

/// A Java `long[]` (null gives `None`).
pub fn long_array_values(
    env: &mut JNIEnv<'_>,
    arr: &JLongArray<'_>,
) -> JniResult<Option<Vec<i64>>> {
    if arr.is_null() {
        return Ok(None);
    }
    let n = env.get_array_length(arr)?;
    let mut buf = vec![0i64; n as usize];
    env.get_long_array_region(arr, 0, &mut buf)?;
    Ok(Some(buf))
}

/// A new Java `long[]`.
pub fn new_long_array<'l>(env: &mut JNIEnv<'l>, values: &[i64]) -> JniResult<JLongArray<'l>> {
    let arr = env.new_long_array(values.len() as i32)?;
    env.set_long_array_region(&arr, 0, values)?;
    Ok(arr)
}

fn non_null_address(address: jlong, what: &str) -> JniResult<()> {
    if address == 0 {
        return Err(Error::internal(format!("null address of the {what}")).into());
    }
    Ok(())
}

/// Moves the batch the JVM exported into `array_address`/`schema_address` (an `ArrowArray` of
/// a struct and its `ArrowSchema`) into Rust; the buffers stay the JVM's (released when the
/// batch is dropped).
pub fn import_batch(array_address: jlong, schema_address: jlong) -> JniResult<RecordBatch> {
    non_null_address(array_address, "Arrow array")?;
    non_null_address(schema_address, "Arrow schema")?;
    // SAFETY: Java passes the addresses of an ArrowArray and ArrowSchema it just exported;
    // from_raw moves their contents out and marks the JVM's structs released.
    let (array, schema) = unsafe {
        (
            FFI_ArrowArray::from_raw(array_address as *mut FFI_ArrowArray),
            FFI_ArrowSchema::from_raw(schema_address as *mut FFI_ArrowSchema),
        )
    };
    // SAFETY: the array and schema come from the same export.
    let data = unsafe { from_ffi(array, &schema) }?;
    let s = StructArray::from(data);
    if s.null_count() > 0 {
        return Err(Error::invalid("the exported Arrow batch has null top-level rows").into());
    }
    Ok(RecordBatch::from(s))
}

/// Whether `data` or any of its children starts inside its buffers (a slice): a non-zero
/// offset, or value offsets that do not start at 0 (arrow-rs slices a string, binary or list
/// array by slicing its offsets buffer, with offset 0).
fn starts_inside(data: &ArrayData) -> bool {
    use arrow_schema::DataType as T;
    let first = |width: usize| {
        data.buffers()
            .first()
            .is_some_and(|b| b.len() >= width && b.as_slice()[..width].iter().any(|x| *x != 0))
    };
    let sliced_offsets = match data.data_type() {
        T::Utf8 | T::Binary | T::List(_) | T::Map(..) => first(4),
        T::LargeUtf8 | T::LargeBinary | T::LargeList(_) => first(8),
        _ => false,
    };
    data.offset() != 0 || sliced_offsets || data.child_data().iter().any(starts_inside)
}

/// `batch` with every column that starts inside its buffers (a slice of a larger batch: a
/// scan's `batchSize` pieces, a read starting inside a log batch) copied into buffers of its
/// own. Arrow Java's C Data import does not take a non-zero `offset`, nor value offsets that do
/// not start at 0 (it sizes the data buffer from them and then reads out of its bounds), so such
/// columns must not cross as they are. Other columns cross without a copy.
fn own_buffers(batch: RecordBatch) -> Result<RecordBatch, ArrowError> {
    let mut copied = false;
    let columns = batch
        .columns()
        .iter()
        .map(|c| {
            let data = c.to_data();
            if !starts_inside(&data) {
                return Ok(c.clone());
            }
            copied = true;
            let mut copy = MutableArrayData::new(vec![&data], false, data.len());
            copy.try_extend(0, 0, data.len())?;
            Ok(make_array(copy.freeze()))
        })
        .collect::<Result<Vec<_>, ArrowError>>()?;
    if !copied {
        return Ok(batch);
    }
    RecordBatch::try_new_with_options(
        batch.schema(),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )
}

/// Writes `batch` into the JVM's `ArrowArray`/`ArrowSchema` structs (ownership passes to the
/// JVM, which releases them through the structs' release callbacks).
pub fn export_batch(
    batch: RecordBatch,
    array_address: jlong,
    schema_address: jlong,
) -> JniResult<()> {
    non_null_address(array_address, "Arrow array")?;
    non_null_address(schema_address, "Arrow schema")?;
    let data = StructArray::from(own_buffers(batch)?).into_data();
    let (array, schema) = to_ffi(&data)?;
    // SAFETY: the addresses are of zeroed (unreleased-empty) structs the JVM allocated.
    unsafe {
        std::ptr::write(array_address as *mut FFI_ArrowArray, array);
        std::ptr::write(schema_address as *mut FFI_ArrowSchema, schema);
    }
    Ok(())
}

/// Writes `schema` into the JVM's `ArrowSchema` struct.
pub fn export_schema(schema: &Schema, schema_address: jlong) -> JniResult<()> {
    non_null_address(schema_address, "Arrow schema")?;
    let ffi = FFI_ArrowSchema::try_from(schema)?;
    // SAFETY: the address is of a zeroed struct the JVM allocated.
    unsafe { std::ptr::write(schema_address as *mut FFI_ArrowSchema, ffi) };
    Ok(())
}

/// Moves the schema the JVM exported into Rust.
pub fn import_schema(schema_address: jlong) -> JniResult<Schema> {
    non_null_address(schema_address, "Arrow schema")?;
    // SAFETY: Java passes the address of an ArrowSchema it just exported.
    let ffi = unsafe { FFI_ArrowSchema::from_raw(schema_address as *mut FFI_ArrowSchema) };
    Ok(Schema::try_from(&ffi)?)
}

/// A reader that counts as a live native object and turns a panic while reading into an error
/// (the C stream callbacks must never unwind into the JVM).
struct GuardedReader {
    inner: Box<dyn RecordBatchReader + Send>,
    _live: LiveToken,
}

impl Iterator for GuardedReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let inner = &mut self.inner;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            inner.next().map(|b| b.and_then(own_buffers))
        })) {
            Ok(r) => r,
            Err(_) => Some(Err(ArrowError::ExternalError(Box::new(Error::internal(
                "panic in riverlet-jni while reading the next batch",
            ))))),
        }
    }
}

impl RecordBatchReader for GuardedReader {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }
}

/// Writes a C stream of `reader` into the JVM's `ArrowArrayStream` struct; the JVM pulls
/// batches through it (each pull runs on the pulling Java thread) and releases it on close.
pub fn export_stream(
    reader: Box<dyn RecordBatchReader + Send>,
    stream_address: jlong,
) -> JniResult<()> {
    non_null_address(stream_address, "Arrow stream")?;
    let guarded = GuardedReader {
        inner: reader,
        _live: LiveToken::new(),
    };
    let ffi = FFI_ArrowArrayStream::new(Box::new(guarded));
    // SAFETY: the address is of a zeroed struct the JVM allocated.
    unsafe { std::ptr::write(stream_address as *mut FFI_ArrowArrayStream, ffi) };
    Ok(())
}

/// Batches already in memory as a reader.
pub fn batches_reader(
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
) -> Box<dyn RecordBatchReader + Send> {
    Box::new(arrow_array::RecordBatchIterator::new(
        batches.into_iter().map(Ok),
        schema,
    ))
}

/// An `io.riverlet.TimeBound` (null gives `None`): epoch millis, text, or an instant.
pub fn time_bound(env: &mut JNIEnv<'_>, bound: &JObject<'_>) -> JniResult<Option<TimePoint>> {
    if bound.is_null() {
        return Ok(None);
    }
    let kind = env.get_field(bound, "kind", "I")?.i()?;
    match kind {
        1 => Ok(Some(TimePoint::EpochMillis(
            env.get_field(bound, "millis", "J")?.j()?,
        ))),
        2 => {
            let t = env.get_field(bound, "text", "Ljava/lang/String;")?.l()?;
            let text = opt_string(env, &t)?.unwrap_or_default();
            Ok(Some(TimePoint::Text(text)))
        }
        3 => {
            let secs = env.get_field(bound, "seconds", "J")?.j()?;
            let nanos = env.get_field(bound, "nanos", "I")?.i()?;
            let dt =
                chrono::DateTime::from_timestamp(secs, nanos.max(0) as u32).ok_or_else(|| {
                    Error::invalid(format!("instant {secs}s {nanos}ns is out of range"))
                })?;
            Ok(Some(TimePoint::Instant(dt.fixed_offset())))
        }
        other => Err(Error::internal(format!("unknown TimeBound kind {other}")).into()),
    }
}

/// A field of type `String[]` of a Java options object.
pub fn string_array_field(
    env: &mut JNIEnv<'_>,
    obj: &JObject<'_>,
    field: &str,
) -> JniResult<Option<Vec<String>>> {
    let v = env.get_field(obj, field, "[Ljava/lang/String;")?.l()?;
    let arr = JObjectArray::from(v);
    string_array(env, &arr, field)
}

/// A field of type `String[][]` of flattened pairs.
pub fn pairs_array_field(
    env: &mut JNIEnv<'_>,
    obj: &JObject<'_>,
    field: &str,
) -> JniResult<Option<Vec<Pairs>>> {
    let v = env.get_field(obj, field, "[[Ljava/lang/String;")?.l()?;
    if v.is_null() {
        return Ok(None);
    }
    let outer = JObjectArray::from(v);
    let n = env.get_array_length(&outer)?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let inner = JObjectArray::from(env.get_object_array_element(&outer, i)?);
        out.push(pairs(env, &inner, field)?);
    }
    Ok(Some(out))
}

/// A field of type `int[]`.
pub fn int_array_field(
    env: &mut JNIEnv<'_>,
    obj: &JObject<'_>,
    field: &str,
) -> JniResult<Option<Vec<i32>>> {
    let v = env.get_field(obj, field, "[I")?.l()?;
    let arr = JIntArray::from(v);
    int_array(env, &arr)
}

/// A field of type `long[]`.
pub fn long_array_field(
    env: &mut JNIEnv<'_>,
    obj: &JObject<'_>,
    field: &str,
) -> JniResult<Option<Vec<i64>>> {
    let v = env.get_field(obj, field, "[J")?.l()?;
    let arr = JLongArray::from(v);
    long_array_values(env, &arr)
}

/// A field of type `String`.
pub fn string_field(
    env: &mut JNIEnv<'_>,
    obj: &JObject<'_>,
    field: &str,
) -> JniResult<Option<String>> {
    let v = env.get_field(obj, field, "Ljava/lang/String;")?.l()?;
    opt_string(env, &v)
}

/// An `Arc` of a schema (helper).
pub fn schema_ref(s: Schema) -> SchemaRef {
    Arc::new(s)
}
