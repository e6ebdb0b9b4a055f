//! Process-level entries (version, handle count, runtime size) and the connection.

use std::collections::BTreeMap;

use jni::objects::{JClass, JObjectArray, JString};
use jni::sys::{jint, jlong, jstring};
use jni::JNIEnv;
use riverlet::blocking;
use riverlet::client::ClientConfig;

use crate::admin::AdminHandle;
use crate::convert::{string, string_array};
use crate::handles::{borrow, free, into_handle, live};
use crate::jvm::entry;
use crate::table::TableHandle;

/// The crate version.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_version<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        Ok(env.new_string(env!("CARGO_PKG_VERSION"))?.into_raw())
    })
}

/// Live native objects.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_liveHandles<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jlong {
    entry(&mut env, 0, |_| Ok(live()))
}

/// Sets the core runtime's worker threads.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_configureRuntime<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    threads: jint,
) {
    entry(&mut env, (), |_| {
        let n = usize::try_from(threads).map_err(|_| {
            riverlet::Error::invalid(format!("runtime threads must be positive, not {threads}"))
        })?;
        Ok(blocking::configure_runtime(n)?)
    })
}

/// Connects with Fluss client properties (the core validates them).
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_connect<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    keys: JObjectArray<'l>,
    values: JObjectArray<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let keys = string_array(env, &keys, "option names")?.unwrap_or_default();
        let values = string_array(env, &values, "option values")?.unwrap_or_default();
        let props: BTreeMap<String, String> = keys.into_iter().zip(values).collect();
        let config = ClientConfig::from_properties(&props)?;
        let conn = blocking::Connection::connect(config)?;
        Ok(into_handle(conn))
    })
}

/// Closes the connection (the handle is freed separately).
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_connectionClose<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    conn: jlong,
) {
    entry(&mut env, (), |_| {
        let c: &blocking::Connection = borrow(conn)?;
        Ok(c.close()?)
    })
}

/// Frees the connection handle.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_connectionFree<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    conn: jlong,
) {
    entry(&mut env, (), |_| {
        free::<blocking::Connection>(conn);
        Ok(())
    })
}

/// An admin of the connection.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_connectionAdmin<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    conn: jlong,
) -> jlong {
    entry(&mut env, 0, |_| {
        let c: &blocking::Connection = borrow(conn)?;
        Ok(into_handle(AdminHandle::new(c.admin())))
    })
}

/// Opens a table `db.table`.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_connectionTable<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    conn: jlong,
    name: JString<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let c: &blocking::Connection = borrow(conn)?;
        let name = string(env, &name, "table name")?;
        let table = c.table_by_name(&name)?;
        Ok(into_handle(TableHandle::new(table)))
    })
}
