//! Table entries: writes (append, upsert, partial update, delete, flush), table info, lookups
//! (blocking and async, completing a Java future on a runtime thread).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use arrow_array::RecordBatch;
use jni::objects::{GlobalRef, JClass, JObject, JObjectArray};
use jni::sys::{jboolean, jint, jlong, jobject, jobjectArray, JNI_FALSE};
use jni::JNIEnv;
use riverlet::blocking;
use riverlet::{Error, ErrorKind};

use crate::admin::table_info_object;
use crate::convert::{export_batch, import_batch, new_string_array, string_array};
use crate::handles::{borrow, free};
use crate::jvm::{entry, exception, with_attached_daemon, JniResult};

type UpsertWriters = HashMap<Option<Vec<String>>, Arc<blocking::UpsertWriter>>;

/// The native side of `io.riverlet.Table`: the table and its writers (one append writer, one
/// upsert writer per set of partial-update columns), opened on first use.
#[derive(Debug)]
pub struct TableHandle {
    /// The table.
    pub table: blocking::Table,
    append: Mutex<Option<Arc<blocking::AppendWriter>>>,
    upsert: Mutex<UpsertWriters>,
}

fn lock<'a, T>(m: &'a Mutex<T>) -> MutexGuard<'a, T> {
    // A writer call that panicked is reported to its caller; the map itself stays usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl TableHandle {
    /// Wraps a table.
    pub fn new(table: blocking::Table) -> Self {
        TableHandle {
            table,
            append: Mutex::new(None),
            upsert: Mutex::new(HashMap::new()),
        }
    }

    fn append_writer(&self) -> JniResult<Arc<blocking::AppendWriter>> {
        let mut g = lock(&self.append);
        if let Some(w) = g.as_ref() {
            return Ok(w.clone());
        }
        let w = Arc::new(self.table.new_append_writer()?);
        *g = Some(w.clone());
        Ok(w)
    }

    fn upsert_writer(
        &self,
        columns: Option<Vec<String>>,
    ) -> JniResult<Arc<blocking::UpsertWriter>> {
        let mut g = lock(&self.upsert);
        if let Some(w) = g.get(&columns) {
            return Ok(w.clone());
        }
        let refs: Option<Vec<&str>> = columns
            .as_ref()
            .map(|c| c.iter().map(String::as_str).collect());
        let w = Arc::new(self.table.new_upsert_writer(refs.as_deref())?);
        g.insert(columns, w.clone());
        Ok(w)
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
        let w = t.append_writer()?;
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
        let w = t.upsert_writer(columns)?;
        w.upsert(&batch)?;
        Ok(())
    })
}

/// Queues deletes of the batch's keys.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_delete<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    array: jlong,
    schema: jlong,
) {
    entry(&mut env, (), |_| {
        let t = table_handle(h)?;
        let batch = import_batch(array, schema)?;
        let w = t.upsert_writer(None)?;
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
        let t = table_handle(h)?;
        let append = lock(&t.append).clone();
        let upserts: Vec<_> = lock(&t.upsert).values().cloned().collect();
        if let Some(w) = append {
            w.flush()?;
        }
        for w in upserts {
            w.flush()?;
        }
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
        let t = table_handle(h)?;
        let append = lock(&t.append).take();
        let upserts: Vec<_> = lock(&t.upsert).drain().map(|(_, w)| w).collect();
        let mut first: Option<Error> = None;
        if let Some(w) = append {
            if let Err(e) = w.close() {
                first.get_or_insert(e);
            }
        }
        for w in upserts {
            if let Err(e) = w.close() {
                first.get_or_insert(e);
            }
        }
        // A writer whose connection was closed first has nothing left to flush.
        match first {
            Some(e) if e.kind() != ErrorKind::Closed => Err(e.into()),
            _ => Ok(()),
        }
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
