//! `riverlet-server`: an embedded, persistent, single-node Apache Fluss-compatible server.
//!
//! One process is both the coordinator and the only tablet server (node id 0, leader of every
//! bucket). It listens on TCP and speaks Fluss's wire protocol through the `riverlet` core
//! codecs, so any Fluss client (Riverlet's, the official Java client, pyfluss) can use it.
//!
//! Start it as a library with [`LocalServer::start`] (own runtime on a background thread) or
//! [`AsyncServer::start`] (inside an existing tokio runtime), or as a process with the
//! `riverlet-server` binary / `riverlet serve` ([`run_cli_serve`]).
#![warn(missing_docs)]
// No unwrap/expect/panic outside tests: internal invariants are `Error`s too.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod aggregate;
pub mod authz;
pub mod autoinc;
pub mod batch;
pub mod catalog;
pub mod config;
pub mod config_dynamic;
pub mod fault;
pub mod kv;
pub mod kv_snapshots;
#[cfg(feature = "lake")]
pub mod lake;
pub mod log;
pub mod merge;
pub mod metrics_http;
pub mod net;
pub mod response;
pub mod service;
pub mod tablets;
pub mod validate;
pub mod writers;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

pub use config::{FsyncPolicy, ServerConfig, SERVER_OPTIONS};
use riverlet::{Error, Result};
use tokio::sync::watch;

/// A server running inside the caller's tokio runtime.
pub struct AsyncServer {
    addr: SocketAddr,
    server: Arc<service::Server>,
    stop: watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl AsyncServer {
    /// Opens the data directory, binds the listener and starts serving. Returns once bound.
    pub async fn start(config: ServerConfig) -> Result<AsyncServer> {
        let host = config.host.clone();
        let port = config.port;
        let ttl_every = config.ttl_check_interval;
        let tier_every = config.remote_log_task_interval;
        if config.remote_data_dir.is_some() {
            service::tiering::TIERING_FAULT.step()?;
        }
        #[cfg(feature = "lake")]
        let lake = lake::Lake::open(&config).await?;
        #[cfg(not(feature = "lake"))]
        if config.datalake_format.is_some() {
            return Err(Error::unsupported(
                "datalake.format: this riverlet-server was built without its `lake` feature",
            ));
        }
        let server = tokio::task::spawn_blocking(move || service::Server::open(config))
            .await
            .map_err(|e| Error::internal(format!("open task failed: {e}")))??;
        #[cfg(feature = "lake")]
        if let Some(lake) = lake {
            let tables = service::lock_catalog(&server).all_tables();
            lake.recover(&tables).await;
            let _ = server.lake.set(lake);
        }
        let listener = tokio::net::TcpListener::bind((host.as_str(), port))
            .await
            .map_err(|e| Error::from(e).context(format!("bind {host}:{port}")))?;
        let addr = listener.local_addr()?;
        server.set_advertised(advertised_host(&host, addr), addr.port());
        let (stop, rx) = watch::channel(false);
        let mut tasks = Vec::new();
        tasks.push(tokio::spawn(net::accept_loop(
            server.clone(),
            listener,
            rx.clone(),
        )));
        let s = server.clone();
        let mut rx2 = rx;
        tasks.push(tokio::spawn(async move {
            let mut tick = tokio::time::interval(ttl_every.max(Duration::from_millis(10)));
            tick.tick().await;
            loop {
                tokio::select! {
                    _ = rx2.changed() => break,
                    _ = tick.tick() => {
                        let s = s.clone();
                        let _ = tokio::task::spawn_blocking(move || s.enforce_ttl()).await;
                    }
                }
            }
        }));
        {
            // every kv.snapshot.interval, which AlterClusterConfigs may change (or turn off)
            let s = server.clone();
            let mut rx3 = stop.subscribe();
            let mut every = server.dynamic.watch_kv_snapshot_interval();
            tasks.push(tokio::spawn(async move {
                loop {
                    let period = every.borrow_and_update().map(|d| d.max(Duration::from_millis(10)));
                    let wait = async {
                        match period {
                            Some(p) => tokio::time::sleep(p).await,
                            None => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        _ = rx3.changed() => break,
                        r = every.changed() => if r.is_err() { break },
                        _ = wait => {
                            let s = s.clone();
                            let _ = tokio::task::spawn_blocking(move || s.take_kv_snapshots()).await;
                        }
                    }
                }
            }));
        }
        if server.remote.is_some() {
            let s = server.clone();
            let mut rx3 = stop.subscribe();
            tasks.push(tokio::spawn(async move {
                let mut tick = tokio::time::interval(tier_every.max(Duration::from_millis(10)));
                tick.tick().await;
                loop {
                    tokio::select! {
                        _ = rx3.changed() => break,
                        _ = tick.tick() => s.tier_once().await,
                    }
                }
            }));
        }
        #[cfg(feature = "lake")]
        if server.lake.get().is_some() {
            let s = server.clone();
            let mut rx3 = stop.subscribe();
            tasks.push(tokio::spawn(async move {
                // Each table commits once its own table.datalake.freshness has passed.
                let mut tick = tokio::time::interval(Duration::from_millis(500));
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tokio::select! {
                        _ = rx3.changed() => break,
                        _ = tick.tick() => { let _ = s.lake_round(false).await; }
                    }
                }
            }));
        }
        Ok(AsyncServer {
            addr,
            server,
            stop,
            tasks,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `host:port` for clients (`bootstrap.servers`).
    pub fn bootstrap_servers(&self) -> String {
        format!(
            "{}:{}",
            advertised_host(&self.server.config.host, self.addr),
            self.addr.port()
        )
    }

    /// Takes a KV snapshot of every primary-key bucket whose state changed since its latest
    /// one, now, as the periodic `kv.snapshot.interval` task does (for tests that need a
    /// snapshot at a known point, like Fluss's own test harness).
    pub async fn take_kv_snapshots(&self) {
        let s = self.server.clone();
        let _ = tokio::task::spawn_blocking(move || s.take_kv_snapshots()).await;
    }

    /// Commits every lake-enabled table to the lake now, as the periodic
    /// `table.datalake.freshness` rounds do (for tests that need a lake snapshot at a known
    /// point). A table with nothing new gets no snapshot.
    #[cfg(feature = "lake")]
    pub async fn commit_lake(&self) -> Result<()> {
        self.server.lake_round(true).await
    }

    /// Stops accepting, closes connections and flushes all data to disk.
    pub async fn shutdown(mut self) -> Result<()> {
        let _ = self.stop.send(true);
        for t in self.tasks.drain(..) {
            let _ = t.await;
        }
        let s = self.server.clone();
        tokio::task::spawn_blocking(move || s.flush())
            .await
            .map_err(|e| Error::internal(format!("flush task failed: {e}")))?
    }
}

fn advertised_host(host: &str, addr: SocketAddr) -> String {
    if host == "0.0.0.0" || host == "::" || host.is_empty() {
        "127.0.0.1".to_string()
    } else if host == "localhost" {
        addr.ip().to_string()
    } else {
        host.to_string()
    }
}

/// A server on its own dedicated tokio runtime (a background thread). Dropping it shuts it
/// down cleanly (all acknowledged data is on disk before `drop` returns).
pub struct LocalServer {
    bootstrap: String,
    server: Arc<service::Server>,
    #[cfg_attr(not(feature = "lake"), allow(dead_code))]
    handle: tokio::runtime::Handle,
    addr: SocketAddr,
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<()>>>,
}

impl LocalServer {
    /// Starts the server and returns once the listener is bound.
    pub fn start(config: ServerConfig) -> Result<LocalServer> {
        type Ready = (
            String,
            SocketAddr,
            Arc<service::Server>,
            tokio::runtime::Handle,
        );
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<Ready>>();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("riverlet-server".into())
            .spawn(move || -> Result<()> {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .thread_name("riverlet-server-worker")
                    .enable_all()
                    .build()
                    .map_err(|e| Error::internal(format!("server runtime: {e}")))?;
                rt.block_on(async move {
                    let srv = match AsyncServer::start(config).await {
                        Ok(s) => s,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e.clone()));
                            return Err(e);
                        }
                    };
                    let _ = ready_tx.send(Ok((
                        srv.bootstrap_servers(),
                        srv.local_addr(),
                        srv.server.clone(),
                        tokio::runtime::Handle::current(),
                    )));
                    // wait for the stop signal without blocking a runtime worker
                    let _ = tokio::task::spawn_blocking(move || {
                        let _ = stop_rx.recv();
                    })
                    .await;
                    srv.shutdown().await
                })
            })
            .map_err(|e| Error::internal(format!("spawn server thread: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok((bootstrap, addr, server, handle))) => Ok(LocalServer {
                bootstrap,
                server,
                handle,
                addr,
                stop: Some(stop_tx),
                thread: Some(thread),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => match thread.join() {
                Ok(Err(e)) => Err(e),
                _ => Err(Error::internal("server thread exited before binding")),
            },
        }
    }

    /// `127.0.0.1:PORT`, for a client's `bootstrap.servers`.
    pub fn bootstrap_servers(&self) -> String {
        self.bootstrap.clone()
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Takes a KV snapshot of every primary-key bucket whose state changed since its latest
    /// one, now (see [`AsyncServer::take_kv_snapshots`]); returns once they are written.
    pub fn take_kv_snapshots(&self) {
        self.server.take_kv_snapshots();
    }

    /// Commits every lake-enabled table to the lake now (see [`AsyncServer::commit_lake`]);
    /// returns once committed.
    #[cfg(feature = "lake")]
    pub fn commit_lake(&self) -> Result<()> {
        let s = self.server.clone();
        let handle = self.handle.clone();
        // On the server's own runtime (the catalog's connections belong to it), from a plain
        // thread so that callers inside another runtime may wait too.
        std::thread::spawn(move || handle.block_on(async move { s.lake_round(true).await }))
            .join()
            .map_err(|_| Error::internal("lake commit thread panicked"))?
    }

    /// Shuts down and waits until everything is flushed.
    pub fn shutdown(mut self) -> Result<()> {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> Result<()> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| Error::internal("server thread panicked"))?,
            None => Ok(()),
        }
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        if let Err(e) = self.stop_inner() {
            tracing::warn!("riverlet-server shutdown: {e}");
        }
    }
}

/// Command-line flags shared by `riverlet-server` and `riverlet serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Data directory (created when missing).
    #[arg(long = "data-dir")]
    pub data_dir: std::path::PathBuf,
    /// Host to bind and advertise.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port (0 picks a free one).
    #[arg(long, default_value_t = 9123)]
    pub port: u16,
    /// Enable SASL/PLAIN with this user (USER:PASS); repeatable.
    #[arg(long = "sasl-user", value_name = "USER:PASS")]
    pub sasl_user: Vec<String>,
    /// Fsync policy of the write path: always (safe, default) or never (faster).
    #[arg(long, default_value = "always")]
    pub fsync: String,
    /// Serve TLS with this PEM certificate chain (with --tls-key).
    #[arg(long = "tls-cert", value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long = "tls-key", value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,
    /// Serve the server's metrics in Prometheus's text format at http://HOST:PORT/metrics
    /// (0 picks a free port; printed as "metrics: HOST:PORT").
    #[arg(long = "metrics-port", value_name = "PORT")]
    pub metrics_port: Option<u16>,
    /// Set a server option by its Apache Fluss name (e.g. remote.data.dir=/data/remote,
    /// log.segment.file-size=64mb); repeatable. An unknown name is an error.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

impl ServeArgs {
    /// The server configuration these flags describe.
    pub fn to_config(&self) -> Result<ServerConfig> {
        let mut c = ServerConfig::new(&self.data_dir);
        c.host = self.host.clone();
        c.port = self.port;
        c.fsync = match self.fsync.to_ascii_lowercase().as_str() {
            "always" => FsyncPolicy::Always,
            "never" => FsyncPolicy::Never,
            other => {
                return Err(Error::invalid(format!(
                    "--fsync must be 'always' or 'never', got '{other}'"
                )))
            }
        };
        for u in &self.sasl_user {
            let Some((user, pass)) = u.split_once(':') else {
                return Err(Error::invalid(format!(
                    "--sasl-user expects USER:PASS, got '{u}'"
                )));
            };
            if user.is_empty() {
                return Err(Error::invalid("--sasl-user: empty user name"));
            }
            c = c.with_sasl_user(user, pass);
        }
        for kv in &self.set {
            let Some((k, v)) = kv.split_once('=') else {
                return Err(Error::invalid(format!(
                    "--set expects KEY=VALUE, got '{kv}'"
                )));
            };
            c.set(k.trim(), v)?;
        }
        if let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) {
            c = c.with_tls(cert, key)?;
        }
        Ok(c)
    }
}

/// Runs a server in the foreground: prints `bootstrap: HOST:PORT` (flushed) once listening and
/// serves until SIGINT or SIGTERM, then shuts down cleanly.
pub fn run_cli_serve(args: &ServeArgs) -> Result<()> {
    run_cli_serve_with(args, |_| Ok(()))
}

/// [`run_cli_serve`] with a companion: `started` runs once the server listens and its
/// `bootstrap:` line is out, given the bootstrap address (`riverlet serve --flight-port` starts
/// the Flight SQL gateway there). What it returns lives until the signal and is dropped before
/// the server shuts down, so the companion stops first; an error from it stops the server and
/// is returned.
pub fn run_cli_serve_with<G>(
    args: &ServeArgs,
    started: impl FnOnce(&str) -> Result<G>,
) -> Result<()> {
    let config = args.to_config()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::internal(format!("runtime: {e}")))?;
    let host = config.host.clone();
    rt.block_on(async move {
        let metrics = match args.metrics_port {
            None => None,
            Some(port) => {
                riverlet::metrics::install();
                let listener = tokio::net::TcpListener::bind((host.as_str(), port))
                    .await
                    .map_err(|e| {
                        Error::network(format!(
                            "--metrics-port: cannot listen on {host}:{port}: {e}"
                        ))
                    })?;
                let addr = listener
                    .local_addr()
                    .map_err(|e| Error::network(e.to_string()))?;
                Some((addr, tokio::spawn(metrics_http::serve(listener))))
            }
        };
        let srv = AsyncServer::start(config).await?;
        {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "bootstrap: {}", srv.bootstrap_servers());
            if let Some((addr, _)) = &metrics {
                let _ = writeln!(out, "metrics: {addr}");
            }
            let _ = out.flush();
        }
        let companion = match started(&srv.bootstrap_servers()) {
            Ok(c) => c,
            Err(e) => {
                let _ = srv.shutdown().await;
                return Err(e);
            }
        };
        wait_for_signal().await;
        drop(companion);
        // Syncing a large data dir can take a while; say why the process has not exited yet.
        eprintln!("stopping: flushing data to disk");
        srv.shutdown().await
    })
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
