//! What the `riverlet-sql` and `riverlet-flight` binaries share: the connection flags (the
//! same as the `riverlet` CLI's, plus an embedded server) and the output writers of `sql`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use arrow::record_batch::RecordBatch;
use arrow::util::pretty::pretty_format_batches;
use riverlet::client::{ClientConfig, Connection};
use riverlet::{Error, Result};

/// Where the Fluss cluster is and how to log in.
#[derive(Debug, Clone, clap::Args)]
pub struct ConnArgs {
    /// Bootstrap servers, host:port[,host:port...].
    #[arg(long, env = "RIVERLET_BOOTSTRAP", default_value = "127.0.0.1:9123")]
    pub bootstrap: String,
    /// SASL/PLAIN user name.
    #[arg(long)]
    pub username: Option<String>,
    /// SASL/PLAIN password.
    #[arg(long, env = "RIVERLET_PASSWORD", hide_env_values = true)]
    pub password: Option<String>,
    /// Connect over TLS, trusting the CA certificates of this PEM file.
    #[arg(long = "tls-ca", value_name = "PEM")]
    pub tls_ca: Option<String>,
    /// Instead of --bootstrap: start an embedded server on this data directory (created when
    /// missing) for the duration of the command.
    #[arg(
        long = "embedded",
        value_name = "DATA_DIR",
        conflicts_with = "bootstrap"
    )]
    pub embedded: Option<PathBuf>,
    /// A client option KEY=VALUE (Fluss names, e.g.
    /// client.writer.dynamic-create-partition.enabled=true); repeatable.
    #[arg(long = "client-option", value_name = "KEY=VALUE")]
    pub client_options: Vec<String>,
}

/// A running connection target: the embedded server (when asked for) stays up while this lives.
pub struct Target {
    /// The bootstrap address to connect to.
    pub bootstrap: String,
    _server: Option<riverlet_server::LocalServer>,
}

impl ConnArgs {
    /// Starts the embedded server when `--embedded` was given.
    pub fn target(&self) -> Result<Target> {
        match &self.embedded {
            Some(dir) => {
                let config = riverlet_server::ServerConfig::new(dir).with_port(0);
                let server = riverlet_server::LocalServer::start(config)?;
                Ok(Target {
                    bootstrap: server.bootstrap_servers(),
                    _server: Some(server),
                })
            }
            None => Ok(Target {
                bootstrap: self.bootstrap.clone(),
                _server: None,
            }),
        }
    }

    /// The client options as the Fluss-style string map every binding passes to the core;
    /// `credentials` (Flight basic auth) replace --username/--password.
    pub fn properties(
        &self,
        bootstrap: &str,
        credentials: Option<(&str, &str)>,
    ) -> Result<BTreeMap<String, String>> {
        let mut props = BTreeMap::new();
        props.insert("bootstrap.servers".to_string(), bootstrap.to_string());
        let tls = self.tls_ca.is_some();
        if let Some(ca) = &self.tls_ca {
            props.insert("client.security.protocol".to_string(), "SSL".to_string());
            props.insert("client.security.ssl.ca-file".to_string(), ca.clone());
        }
        let user = match credentials {
            Some((u, p)) => Some((u.to_string(), p.to_string())),
            None => self
                .username
                .clone()
                .map(|u| (u, self.password.clone().unwrap_or_default())),
        };
        if let Some((user, password)) = user {
            let protocol = if tls { "SASL_SSL" } else { "SASL" };
            props.insert("client.security.protocol".to_string(), protocol.to_string());
            props.insert("client.security.sasl.username".to_string(), user);
            props.insert("client.security.sasl.password".to_string(), password);
        }
        for o in &self.client_options {
            let (k, v) = o.split_once('=').ok_or_else(|| {
                Error::invalid(format!("--client-option expects KEY=VALUE, got '{o}'"))
            })?;
            props.insert(k.trim().to_string(), v.trim().to_string());
        }
        Ok(props)
    }

    /// Connects (async core client) to `bootstrap`.
    pub async fn connect(
        &self,
        bootstrap: &str,
        credentials: Option<(&str, &str)>,
    ) -> Result<Connection> {
        let props = self.properties(bootstrap, credentials)?;
        Connection::connect(ClientConfig::from_properties(&props)?).await
    }
}

/// How `riverlet sql` writes a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A text table.
    Table,
    /// CSV with a header line.
    Csv,
    /// Parquet (uncompressed).
    Parquet,
    /// Arrow IPC file format.
    Arrow,
    /// Arrow IPC stream format.
    ArrowStream,
}

fn io(e: impl std::fmt::Display) -> Error {
    Error::new(riverlet::ErrorKind::Io, e.to_string())
}

/// Writes `batches` (of `schema`) in `format` to `out`.
pub fn write_batches(
    format: Format,
    schema: &arrow::datatypes::SchemaRef,
    batches: &[RecordBatch],
    mut out: impl Write + Send,
) -> Result<()> {
    match format {
        Format::Table => {
            if batches.iter().all(|b| b.num_rows() == 0) {
                let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                writeln!(out, "(no rows; columns: {})", names.join(", ")).map_err(io)?;
            } else {
                writeln!(out, "{}", pretty_format_batches(batches).map_err(io)?).map_err(io)?;
            }
        }
        Format::Csv => {
            let mut w = arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(out);
            for b in batches {
                w.write(b).map_err(io)?;
            }
        }
        Format::Parquet => {
            let mut w =
                parquet::arrow::ArrowWriter::try_new(out, schema.clone(), None).map_err(io)?;
            for b in batches {
                w.write(b).map_err(io)?;
            }
            w.close().map_err(io)?;
        }
        Format::Arrow => {
            let mut w = arrow::ipc::writer::FileWriter::try_new(out, schema).map_err(io)?;
            for b in batches {
                w.write(b).map_err(io)?;
            }
            w.finish().map_err(io)?;
        }
        Format::ArrowStream => {
            let mut w = arrow::ipc::writer::StreamWriter::try_new(out, schema).map_err(io)?;
            for b in batches {
                w.write(b).map_err(io)?;
            }
            w.finish().map_err(io)?;
        }
    }
    Ok(())
}

/// A multi-thread tokio runtime (the catalog's name listings need one, see `catalog`).
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(io)
}

/// Logs to stderr, filtered by `RIVERLET_LOG` (default `warn`), as the `riverlet` CLI.
pub fn init_logging() {
    let mut filter = tracing_subscriber::EnvFilter::try_from_env("RIVERLET_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    for d in riverlet::logging::SECRET_SAFE_DIRECTIVES {
        if let Ok(d) = d.parse() {
            filter = filter.add_directive(d);
        }
    }
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}
