//! `RiverletLocalServer`: the embedded Fluss-compatible server, started from C.

use std::ffi::{c_char, CString};
use std::sync::Mutex;

use riverlet::{Error, ErrorKind};
use riverlet_server::{FsyncPolicy, LocalServer, ServerConfig};

use crate::args::{key_values, non_null, opt_str_arg};
use crate::error::{c_string_lossy, guard, CallResult, RiverletStatus};
use crate::handle::{write_handle, HandleKind, Registry};

/// An embedded Riverlet server running in this process (opaque handle).
pub struct RiverletLocalServer {
    _private: [u8; 0],
}

struct ServerState {
    server: Mutex<Option<LocalServer>>,
    bootstrap: CString,
    /// The temporary data directory, removed when the handle is freed.
    _temp_dir: Option<tempfile::TempDir>,
}

static SERVERS: Registry<ServerState> = Registry::new(HandleKind::LocalServer);

fn config_from_options(
    data_dir: std::path::PathBuf,
    port: u16,
    options: std::collections::BTreeMap<String, String>,
) -> CallResult<ServerConfig> {
    let mut config = ServerConfig::new(data_dir).with_port(port);
    for (key, value) in options {
        let bad = |what: &str| {
            Error::invalid(format!(
                "invalid value '{value}' for server option '{key}': expected {what}"
            ))
        };
        if let Some(user) = key.strip_prefix("sasl.user.") {
            config = config.with_sasl_user(user, value.as_str());
            continue;
        }
        match key.as_str() {
            "host" => config.host = value.clone(),
            "fsync" => {
                config.fsync = match value.to_ascii_lowercase().as_str() {
                    "always" => FsyncPolicy::Always,
                    "never" => FsyncPolicy::Never,
                    _ => return Err(bad("'always' or 'never'").into()),
                }
            }
            _ => config.set(&key, &value)?,
        }
    }
    Ok(config)
}

unsafe fn start_impl(
    data_dir: *const c_char,
    port: u16,
    option_keys: *const *const c_char,
    option_values: *const *const c_char,
    num_options: usize,
    out: *mut *mut RiverletLocalServer,
) -> CallResult<()> {
    riverlet::metrics::install();
    non_null(out.cast_const(), "out_server")?;
    // SAFETY: C strings per the function's contract.
    let dir = unsafe { opt_str_arg(data_dir, "data_dir") }?;
    // SAFETY: arrays of `num_options` strings per the function's contract.
    let options = unsafe { key_values(option_keys, option_values, num_options, "options") }?;
    let (path, temp_dir) = match dir {
        Some(d) => (std::path::PathBuf::from(d), None),
        None => {
            let t = tempfile::Builder::new()
                .prefix("riverlet-server-")
                .tempdir()
                .map_err(|e| Error::new(ErrorKind::Io, format!("temporary data directory: {e}")))?;
            (t.path().to_path_buf(), Some(t))
        }
    };
    let config = config_from_options(path, port, options)?;
    let server = LocalServer::start(config)?;
    let bootstrap = c_string_lossy(&server.bootstrap_servers());
    let handle = SERVERS.insert(ServerState {
        server: Mutex::new(Some(server)),
        bootstrap,
        _temp_dir: temp_dir,
    });
    // SAFETY: checked non-NULL above.
    unsafe { write_handle(out, handle) };
    Ok(())
}

/// Starts an embedded server and writes its handle to `*out_server`.
///
/// `data_dir`: directory of the catalog and data (created when missing), or NULL for a new
/// temporary directory that is deleted by riverlet_local_server_free. `port`: TCP port on
/// 127.0.0.1, 0 for a free one. Options (parallel arrays of `num_options` keys and values, may
/// be NULL when 0): "host" (bind and advertise, default 127.0.0.1), "fsync" ("always" default, or
/// "never"), "sasl.user.<name>" = password (enables SASL/PLAIN), and every server option by its
/// Apache Fluss name (riverlet_server::SERVER_OPTIONS, e.g. "default.bucket.number",
/// "remote.data.dir", "log.segment.file-size"); an unknown key is an error naming it.
#[no_mangle]
pub unsafe extern "C" fn riverlet_local_server_start(
    data_dir: *const c_char,
    port: u16,
    option_keys: *const *const c_char,
    option_values: *const *const c_char,
    num_options: usize,
    out_server: *mut *mut RiverletLocalServer,
) -> RiverletStatus {
    guard(|| unsafe {
        start_impl(
            data_dir,
            port,
            option_keys,
            option_values,
            num_options,
            out_server,
        )
    })
}

unsafe fn bootstrap_impl(
    server: *const RiverletLocalServer,
    out: *mut *const c_char,
) -> CallResult<()> {
    non_null(out.cast_const(), "out_bootstrap_servers")?;
    let state = SERVERS.get(server, "server")?;
    let running = state
        .server
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .is_some();
    if !running {
        return Err(Error::new(ErrorKind::Closed, "the local server was stopped").into());
    }
    // SAFETY: checked non-NULL; the string lives as long as the handle (documented).
    unsafe { out.write(state.bootstrap.as_ptr()) };
    Ok(())
}

/// Writes the server's bootstrap address ("127.0.0.1:PORT", for riverlet_connect) to
/// `*out_bootstrap_servers`. The string belongs to the server handle and stays valid until it is
/// freed. CLOSED after riverlet_local_server_stop.
#[no_mangle]
pub unsafe extern "C" fn riverlet_local_server_bootstrap_servers(
    server: *const RiverletLocalServer,
    out_bootstrap_servers: *mut *const c_char,
) -> RiverletStatus {
    guard(|| unsafe { bootstrap_impl(server, out_bootstrap_servers) })
}

fn take_kv_snapshots_impl(server: *const RiverletLocalServer) -> CallResult<()> {
    let state = SERVERS.get(server, "server")?;
    let g = state.server.lock().unwrap_or_else(|p| p.into_inner());
    match g.as_ref() {
        Some(s) => {
            s.take_kv_snapshots();
            Ok(())
        }
        None => Err(Error::new(ErrorKind::Closed, "the local server was stopped").into()),
    }
}

/// Takes a KV snapshot of every primary-key bucket whose state changed since its latest one,
/// now (what the "kv.snapshot.interval" task does periodically); returns once they are written.
/// CLOSED after riverlet_local_server_stop.
#[no_mangle]
pub extern "C" fn riverlet_local_server_take_kv_snapshots(
    server: *const RiverletLocalServer,
) -> RiverletStatus {
    guard(|| take_kv_snapshots_impl(server))
}

fn commit_lake_impl(server: *const RiverletLocalServer) -> CallResult<()> {
    let state = SERVERS.get(server, "server")?;
    let g = state.server.lock().unwrap_or_else(|p| p.into_inner());
    match g.as_ref() {
        Some(s) => Ok(s.commit_lake()?),
        None => Err(Error::new(ErrorKind::Closed, "the local server was stopped").into()),
    }
}

/// Commits the new rows of every lake-enabled table to the lake now (what the
/// "table.datalake.freshness" rounds do periodically); returns once committed. The server needs
/// the options "datalake.format" ("iceberg") and "datalake.iceberg.warehouse" (a directory).
/// CLOSED after riverlet_local_server_stop.
#[no_mangle]
pub extern "C" fn riverlet_local_server_commit_lake(
    server: *const RiverletLocalServer,
) -> RiverletStatus {
    guard(|| commit_lake_impl(server))
}

fn stop_impl(server: *const RiverletLocalServer) -> CallResult<()> {
    let state = SERVERS.get(server, "server")?;
    let running = state
        .server
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    match running {
        Some(s) => Ok(s.shutdown()?),
        None => Err(Error::new(ErrorKind::Closed, "the local server was already stopped").into()),
    }
}

/// Stops the server (all acknowledged data is on disk when it returns). The handle stays valid
/// until riverlet_local_server_free; stopping twice returns CLOSED.
#[no_mangle]
pub extern "C" fn riverlet_local_server_stop(server: *const RiverletLocalServer) -> RiverletStatus {
    guard(|| stop_impl(server))
}

fn free_impl(server: *mut RiverletLocalServer) -> CallResult<()> {
    if let Some(state) = SERVERS.remove(server.cast_const(), "server")? {
        let running = state
            .server
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(s) = running {
            s.shutdown()?;
        }
        drop(state);
    }
    Ok(())
}

/// Stops the server if it is running and frees the handle (and its temporary data directory).
/// NULL is accepted (OK); freeing a handle twice returns CLOSED.
#[no_mangle]
pub extern "C" fn riverlet_local_server_free(server: *mut RiverletLocalServer) -> RiverletStatus {
    guard(|| free_impl(server))
}
