//! The embedded server entries (`io.riverlet.LocalServer`).

use std::path::PathBuf;
use std::sync::Mutex;

use jni::objects::{JClass, JObjectArray, JString};
use jni::sys::{jint, jlong, jstring};
use jni::JNIEnv;
use riverlet::Error;
use riverlet_server::{LocalServer, ServerConfig};

use crate::convert::{pairs, string};
use crate::handles::{borrow, free, into_handle};
use crate::jvm::{entry, JniResult};

/// The native side of `io.riverlet.LocalServer`.
pub struct ServerHandle {
    server: Mutex<Option<LocalServer>>,
    bootstrap: String,
}

/// Starts a server on `host:port` (0: a free port) with `data_dir`; `users` are flattened
/// SASL/PLAIN user, password pairs; `options` flattened server option name, value pairs.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_serverStart<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    data_dir: JString<'l>,
    host: JString<'l>,
    port: jint,
    users: JObjectArray<'l>,
    options: JObjectArray<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let dir = PathBuf::from(string(env, &data_dir, "data directory")?);
        let host = string(env, &host, "host")?;
        let port = u16::try_from(port)
            .map_err(|_| Error::invalid(format!("port {port} is not a TCP port (0..65535)")))?;
        let mut config = ServerConfig::new(dir).with_port(port);
        config.host = host;
        for (user, password) in pairs(env, &users, "users")? {
            config = config.with_sasl_user(user, password);
        }
        let config = config.with_options(pairs(env, &options, "options")?)?;
        let server = LocalServer::start(config)?;
        let bootstrap = server.bootstrap_servers();
        Ok(into_handle(ServerHandle {
            server: Mutex::new(Some(server)),
            bootstrap,
        }))
    })
}

/// `host:port` of the server.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_serverBootstrap<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let s = borrow::<ServerHandle>(h)?;
        Ok(env.new_string(&s.bootstrap)?.into_raw())
    })
}

/// Calls `f` with the running server of handle `h`; a server already shut down is an
/// invalid-argument error.
fn with_running_server(h: jlong, f: impl FnOnce(&LocalServer) -> JniResult<()>) -> JniResult<()> {
    let s = borrow::<ServerHandle>(h)?;
    let g = s.server.lock().unwrap_or_else(|p| p.into_inner());
    match g.as_ref() {
        Some(server) => f(server),
        None => Err(Error::invalid("the local server is shut down").into()),
    }
}

/// Takes a KV snapshot of every primary-key bucket whose state changed, now.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_serverTakeKvSnapshots<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    entry(&mut env, (), |_| {
        with_running_server(h, |server| {
            server.take_kv_snapshots();
            Ok(())
        })
    })
}

/// Commits the new rows of every lake-enabled table to the lake, now.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_serverCommitLake<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    entry(&mut env, (), |_| {
        with_running_server(h, |server| Ok(server.commit_lake()?))
    })
}

/// Stops the server, flushing acknowledged data.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_serverShutdown<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    entry(&mut env, (), |_| {
        let s = borrow::<ServerHandle>(h)?;
        let server = s.server.lock().unwrap_or_else(|p| p.into_inner()).take();
        match server {
            Some(server) => Ok(server.shutdown()?),
            None => Ok(()),
        }
    })
}

/// Frees the server handle (stopping the server if still running).
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_serverFree<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    entry(&mut env, (), |_| {
        free::<ServerHandle>(h);
        Ok(())
    })
}
