//! Table entries: writes (append, upsert, partial update, delete, flush), table info, lookups
//! (blocking and async, completing a Java future on a runtime thread).

use arrow_array::RecordBatch;
use jni::objects::{GlobalRef, JClass, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong, jobject, jobjectArray, jvalue, JNI_FALSE};
use jni::JNIEnv;
use riverlet::blocking;
use riverlet::Error;

use crate::admin::table_info_object;
use crate::convert::{export_batch, import_batch, new_string_array, string_array};
use crate::handles::{borrow, free};
use crate::jvm::{cache, entry, exception, with_attached_daemon, JniResult};

/// The native side of `io.riverlet.Table`: the table and its writers (opened on first use;
/// [`blocking::TableWriters`] keeps upserts, partial updates and deletes in call order).
#[derive(Debug)]
pub struct TableHandle {
    /// The table.
    pub table: blocking::Table,
    writers: blocking::TableWriters,
}

impl TableHandle {
    /// Wraps a table.
    pub fn new(table: blocking::Table) -> Self {
        TableHandle {
            writers: blocking::TableWriters::new(table.clone()),
            table,
        }
    }
}

/// The table behind a handle.
pub fn table_handle<'a>(h: jlong) -> JniResult<&'a TableHandle> {
    borrow::<TableHandle>(h)
}

/// Frees a table handle (Java flushed and closed its writers first).
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_tableFree<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    entry(&mut env, (), |_| {
        free::<TableHandle>(h);
        Ok(())
    })
}

/// The table's info as of opening; the schema of what it reads (a lake view's for a lake view)
/// goes to `schema_address`.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_tableInfoOf<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    schema_address: jlong,
) -> jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let t = table_handle(h)?;
        let schema = t.table.schema()?;
        Ok(table_info_object(env, t.table.info(), &schema, schema_address)?.into_raw())
    })
}

/// Queues an appended batch.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_append<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    array: jlong,
    schema: jlong,
) {
    entry(&mut env, (), |_| {
        let t = table_handle(h)?;
        let batch = import_batch(array, schema)?;
        let w = t.writers.append_writer()?;
        w.append(&batch)?;
        Ok(())
    })
}

/// Queues upserts (all columns, or a partial update of `columns`).
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_upsert<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    array: jlong,
    schema: jlong,
    columns: JObjectArray<'l>,
) {
    entry(&mut env, (), |env| {
        let t = table_handle(h)?;
        let batch = import_batch(array, schema)?;
        let columns = string_array(env, &columns, "partial-update columns")?;
        let w = t.writers.upsert_writer(columns)?;
        w.upsert(&batch)?;
        Ok(())
    })
}

/// Queues deletes of the batch's keys (by the writer of a partial update's `columns`, which
/// sends them as that update's target columns, or of whole rows).
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_delete<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    array: jlong,
    schema: jlong,
    columns: JObjectArray<'l>,
) {
    entry(&mut env, (), |env| {
        let t = table_handle(h)?;
        let batch = import_batch(array, schema)?;
        let columns = string_array(env, &columns, "partial-update columns")?;
        let w = t.writers.upsert_writer(columns)?;
        w.delete(&batch)?;
        Ok(())
    })
}

/// Waits for every queued write of the table's writers.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_flush<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    entry(&mut env, (), |_| {
        table_handle(h)?.writers.flush()?;
        Ok(())
    })
}

/// Flushes and closes the table's writers (on `Table.close`); the first error is thrown after
/// every writer was closed.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_closeWriters<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    entry(&mut env, (), |_| {
        table_handle(h)?.writers.close()?;
        Ok(())
    })
}

/// Stops the table's writers at once, discarding the writes not acknowledged yet (on
/// `Table.abort`; see [`blocking::TableWriters::abort`]).
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_abortWriters<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    entry(&mut env, (), |_| {
        table_handle(h)?.writers.abort()?;
        Ok(())
    })
}

/// The key columns (`prefix` false) or prefix-lookup columns.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_lookupColumns<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    prefix: jboolean,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let t = table_handle(h)?;
        let l = t.table.new_lookuper()?;
        let cols = if prefix != JNI_FALSE {
            l.prefix_columns()
        } else {
            l.key_columns()
        };
        Ok(new_string_array(env, &cols)?.into_raw())
    })
}

/// The leader of every bucket (`Table::bucket_leaders` of the core) as
/// `io.riverlet.BucketLeader[]`: a null partition name means no partition, a null address no
/// live leader (the id beside it is then ignored).
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_bucketLeaders<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let leaders = table_handle(h)?.table.bucket_leaders()?;
        let c = cache()?;
        let class = <&JClass>::from(c.bucket_leader_class.as_obj());
        let ctor = env.get_method_id(
            class,
            "<init>",
            "(JLjava/lang/String;IILjava/lang/String;)V",
        )?;
        let len = i32::try_from(leaders.len())
            .map_err(|_| Error::internal("more buckets than a Java array holds"))?;
        let arr = env.new_object_array(len, class, JObject::null())?;
        for (i, l) in leaders.iter().enumerate() {
            let name = match &l.partition_name {
                Some(n) => env.new_string(n)?,
                None => JString::from(JObject::null()),
            };
            let address = match &l.leader {
                Some(n) => env.new_string(&n.address)?,
                None => JString::from(JObject::null()),
            };
            let args = [
                jvalue {
                    j: l.partition_id.unwrap_or(-1),
                },
                jvalue { l: name.as_raw() },
                jvalue { i: l.bucket },
                jvalue {
                    i: l.leader.as_ref().map_or(-1, |n| n.id),
                },
                jvalue {
                    l: address.as_raw(),
                },
            ];
            // SAFETY: the constructor id belongs to this class; arguments match its signature.
            let o = unsafe { env.new_object_unchecked(class, ctor, &args) }?;
            env.set_object_array_element(&arr, i as i32, &o)?;
            env.delete_local_ref(o)?;
            for s in [name, address] {
                if !s.is_null() {
                    env.delete_local_ref(s)?;
                }
            }
        }
        Ok(arr.into_raw())
    })
}

/// Point lookups (mode 0), point lookups with the key index (1) or prefix lookups (2); the
/// result batch goes to `out_array`/`out_schema`.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_lookup<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    mode: jint,
    keys_array: jlong,
    keys_schema: jlong,
    out_array: jlong,
    out_schema: jlong,
) {
    entry(&mut env, (), |_| {
        let t = table_handle(h)?;
        let keys = import_batch(keys_array, keys_schema)?;
        let l = t.table.new_lookuper()?;
        let found = match mode {
            0 => l.lookup(&keys)?,
            1 => l.lookup_with_key_index(&keys)?,
            _ => l.prefix_lookup(&keys)?,
        };
        export_batch(found, out_array, out_schema)
    })
}

/// Completes `completion` (an `io.riverlet.Table$AsyncLookup`) from the runtime thread the
/// lookup finished on, attached to the JVM as a daemon.
fn complete(
    completion: &GlobalRef,
    result: riverlet::Result<RecordBatch>,
    out_array: jlong,
    out_schema: jlong,
) -> JniResult<()> {
    with_attached_daemon(|env| {
        let exported = result
            .map_err(crate::jvm::Failure::from)
            .and_then(|b| export_batch(b, out_array, out_schema));
        match exported {
            Ok(()) => {
                env.call_method(completion.as_obj(), "complete", "()V", &[])?;
            }
            Err(crate::jvm::Failure::Core(e)) => {
                let exc = exception(env, &e)?;
                env.call_method(
                    completion.as_obj(),
                    "fail",
                    "(Ljava/lang/Throwable;)V",
                    &[(&exc).into()],
                )?;
            }
            Err(crate::jvm::Failure::Java) => {
                let exc = env.exception_occurred()?;
                env.exception_clear()?;
                env.call_method(
                    completion.as_obj(),
                    "fail",
                    "(Ljava/lang/Throwable;)V",
                    &[(&exc).into()],
                )?;
            }
        }
        Ok(())
    })
}

/// Starts a point lookup on the core's runtime and returns at once; `completion` is completed
/// from a runtime thread.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_lookupAsync<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    keys_array: jlong,
    keys_schema: jlong,
    out_array: jlong,
    out_schema: jlong,
    completion: JObject<'l>,
) {
    entry(&mut env, (), |env| {
        let t = table_handle(h)?;
        let keys = import_batch(keys_array, keys_schema)?;
        let lookuper = t.table.inner().new_lookuper()?;
        let completion = env.new_global_ref(completion)?;
        let runtime = blocking::runtime_handle()?;
        runtime.spawn(async move {
            let result = lookuper.lookup(&keys).await;
            drop(keys);
            // A failure to reach the JVM leaves nothing to report to; the future then stays
            // incomplete, which only happens when the JVM is shutting down.
            let _ = complete(&completion, result, out_array, out_schema);
        });
        Ok(())
    })
}
