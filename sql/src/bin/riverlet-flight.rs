//! `riverlet flight`: an Arrow Flight SQL service over a Fluss cluster (or an embedded server),
//! for any Flight SQL client (ADBC, the Flight SQL JDBC driver, pyarrow.flight).
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

use std::net::SocketAddr;
use std::sync::Arc;

use clap::Parser;
use riverlet::scan::IpcBodies;
use riverlet::{Error, ErrorKind, Result};
use riverlet_sql::cli::{init_logging, runtime, ConnArgs};
use riverlet_sql::flight::{Connector, FlussFlightSql};
use riverlet_sql::SqlOptions;

#[derive(Parser)]
#[command(
    name = "riverlet flight",
    version,
    about = "Arrow Flight SQL over Fluss tables: queries (with the time-range function), \
             catalog metadata and DoPut appends/upserts; Flight basic auth is passed to Fluss \
             as SASL/PLAIN"
)]
struct Args {
    #[command(flatten)]
    conn: ConnArgs,
    /// Host to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port to listen on (0 picks a free one; the address is printed on stdout).
    #[arg(long, default_value_t = 32010)]
    port: u16,
    /// The default database (unqualified table names).
    #[arg(long, default_value = "fluss")]
    database: String,
    /// The session time zone of datetime texts (IANA name, UTC or +08:00; default: local).
    #[arg(long)]
    tz: Option<String>,
    /// Which stored log-batch bodies a plain read (`SELECT <columns> FROM t`, a time window)
    /// sends as they are: `stored` forwards Fluss's batches compressed as stored (ZSTD by
    /// default; the least work here, the client decompresses), `uncompressed` decompresses
    /// compressed ones once here first (for clients whose decompression is slow). Measured in
    /// benches/RESULTS.md.
    #[arg(long, value_parser = ["stored", "uncompressed"], default_value = "stored")]
    ipc_bodies: String,
    /// A plain read of a log table gets one endpoint per piece of about this many records of
    /// a bucket (at most 16 per bucket) when that makes more endpoints than one per bucket
    /// (0, the default: one endpoint per bucket). Meant for clients that read endpoints in
    /// order a few batches ahead (ADBC); measured slower so far (benches/PROFILE.md).
    #[arg(long, default_value_t = 0)]
    split_records: u64,
    /// Stop when stdin reaches end of file as well as on Ctrl-C: `riverlet serve
    /// --flight-port` runs this program with its stdin on a pipe, so the gateway also ends
    /// when that process dies.
    #[arg(long = "stop-on-stdin-eof", hide = true)]
    stop_on_stdin_eof: bool,
}

fn main() {
    init_logging();
    let args = Args::parse();
    if let Err(e) = run(args) {
        eprintln!("riverlet flight: {e}");
        std::process::exit(1);
    }
}

fn run(args: Args) -> Result<()> {
    // A bad zone fails here, naming it, not at the first datetime text of a query.
    if let Some(tz) = &args.tz {
        riverlet::scan::time::TimeZoneSpec::parse(tz)?;
    }
    let target = args.conn.target()?;
    let rt = runtime()?;
    rt.block_on(async move {
        let conn_args = Arc::new(args.conn.clone());
        let bootstrap = target.bootstrap.clone();
        let connector: Connector = Arc::new(move |credentials| {
            let conn_args = conn_args.clone();
            let bootstrap = bootstrap.clone();
            Box::pin(async move {
                let creds = credentials
                    .as_ref()
                    .map(|(u, p): &(String, String)| (u.as_str(), p.as_str()));
                conn_args.connect(&bootstrap, creds).await
            })
        });
        let options = SqlOptions {
            database: args.database.clone(),
            time_zone: args.tz.clone(),
            ipc_bodies: if args.ipc_bodies == "uncompressed" {
                IpcBodies::Uncompressed
            } else {
                IpcBodies::AsStored
            },
            split_records: args.split_records,
            ..SqlOptions::default()
        };
        let service = FlussFlightSql::new(connector, options)
            .map_err(|s| Error::internal(s.message().to_string()))?;
        let addr: SocketAddr = format!("{}:{}", args.host, args.port)
            .parse()
            .map_err(|e| Error::invalid(format!("bad --host/--port: {e}")))?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Error::new(ErrorKind::Io, format!("cannot listen on {addr}: {e}")))?;
        let local = listener.local_addr()?;
        println!(
            "riverlet flight listening on grpc://{local} (Fluss at {})",
            target.bootstrap
        );
        let incoming = tonic::transport::server::TcpIncoming::from(listener);
        let eof = stdin_eof(args.stop_on_stdin_eof);
        let shutdown = async move {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = eof => {}
            }
        };
        tonic::transport::Server::builder()
            .add_service(service.into_server())
            .serve_with_incoming_shutdown(incoming, shutdown)
            .await
            .map_err(|e| Error::new(ErrorKind::Io, format!("flight server: {e}")))
    })
}

/// Completes when stdin reaches end of file (read on a thread: blocking stdin reads do not
/// belong on the runtime); never when `watch` is false.
async fn stdin_eof(watch: bool) {
    if !watch {
        return std::future::pending().await;
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        let _ = tx.send(());
    });
    let _ = rx.await;
}
