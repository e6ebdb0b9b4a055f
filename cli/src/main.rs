//! The `riverlet` command line: serve an embedded server, run the demo, and poke at any Fluss
//! server (list tables, create a table, read with projection, filter, time range and limit).
// No unwrap/expect/panic outside tests.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod companion;
mod demo;
mod scenario;

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use clap::{Args, Parser, Subcommand};
use riverlet::blocking::{Connection, ReadRequest};
use riverlet::client::ClientConfig;
use riverlet::metadata::{parse_columns, Schema, TableDescriptor, TablePath};
use riverlet::scan::time::TimePoint;
use riverlet::{Error, Result};

// The process's allocator (feature `mimalloc`, on by default): the module of the server's own
// binary, compiled into this one too (it says why it is no module of a library).
#[cfg(feature = "mimalloc")]
#[path = "../../server/src/allocator.rs"]
mod allocator;

#[derive(Parser)]
#[command(
    name = "riverlet",
    version,
    about = "Riverlet: an Arrow-native client for Apache Fluss"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the embedded single-node Fluss-compatible server in the foreground.
    Serve(ServeCmd),
    /// Start an embedded server on a temporary directory and run the seed scenarios on it.
    Demo,
    /// List databases and their tables.
    Tables {
        #[command(flatten)]
        conn: ConnArgs,
        /// Only this database.
        #[arg(long)]
        database: Option<String>,
    },
    /// Create a table (and its database when missing).
    CreateTable {
        /// The table, as database.table.
        table: String,
        /// Columns, e.g. "order_id BIGINT NOT NULL, item STRING, dt STRING".
        #[arg(long)]
        schema: String,
        /// Primary-key columns, comma separated.
        #[arg(long = "primary-key", value_delimiter = ',')]
        primary_key: Vec<String>,
        /// Partition columns, comma separated.
        #[arg(long = "partition-by", value_delimiter = ',')]
        partition_by: Vec<String>,
        /// Bucket count (the server's default when omitted).
        #[arg(long)]
        buckets: Option<i32>,
        /// Bucket-key columns, comma separated.
        #[arg(long = "bucket-key", value_delimiter = ',')]
        bucket_key: Vec<String>,
        /// A table property KEY=VALUE; repeatable.
        #[arg(long = "property", value_name = "KEY=VALUE")]
        properties: Vec<String>,
        #[command(flatten)]
        conn: ConnArgs,
    },
    /// ALTER TABLE ... ADD COLUMN: append nullable columns; rows written before read them as
    /// null.
    AddColumns {
        /// The table, as database.table.
        table: String,
        /// The columns, e.g. "note STRING, qty BIGINT".
        #[arg(long)]
        columns: String,
        #[command(flatten)]
        conn: ConnArgs,
    },
    /// Write rows given as JSON (a list of rows, each a list in column order or an object):
    /// appended to a log table, upserted into a primary-key table.
    Write {
        /// The table, as database.table.
        table: String,
        /// The rows, e.g. '[[1, "a", 10], {"id": 2, "item": "b", "amount": 20}]'; '-' reads stdin.
        rows: String,
        #[command(flatten)]
        conn: ConnArgs,
    },
    /// Read a table: projection, filter, a commit-time window [START, END) and a limit.
    Read {
        /// The table, as database.table.
        table: String,
        /// Columns to return, comma separated.
        #[arg(long, value_delimiter = ',')]
        columns: Vec<String>,
        /// A filter, e.g. "amount >= 10 AND dt IN ('2026-01-01')".
        #[arg(long)]
        filter: Option<String>,
        /// A commit-time window: START \[END\] as epoch ms or 'yyyy-MM-dd HH:mm:ss'.
        #[arg(long, num_args = 1..=2, value_names = ["START", "END"])]
        between: Vec<String>,
        /// Time zone of 'yyyy-MM-dd HH:mm:ss' bounds (default: the local zone).
        #[arg(long)]
        tz: Option<String>,
        /// At most this many rows.
        #[arg(long)]
        limit: Option<usize>,
        /// Show the changelog (change type, offset, commit timestamp) instead of the rows.
        #[arg(long)]
        changelog: bool,
        /// Primary-key tables: each bucket's latest KV snapshot without the log changes after
        /// it (Fluss's read.optimized; possibly stale).
        #[arg(long = "read-optimized")]
        read_optimized: bool,
        #[command(flatten)]
        conn: ConnArgs,
    },
    /// Manage ACLs (the server needs authorizer.enabled): add, list, drop.
    Acl {
        #[command(subcommand)]
        cmd: AclCmd,
    },
    /// Show or change the server options (dynamic ones change while the server runs).
    Config {
        #[command(subcommand)]
        cmd: ConfigCmd,
    },
    /// `riverlet sql ...` and `riverlet flight ...` (and any `riverlet NAME`) run the program
    /// `riverlet-NAME` found next to this one or on PATH, git-style: SQL and Flight SQL live in
    /// the riverlet-sql crate (DataFusion), so building `riverlet` (and `make demo`) does not
    /// compile DataFusion. Build them with `cargo build -p riverlet-sql`.
    #[command(external_subcommand)]
    External(Vec<String>),
}

#[derive(Subcommand)]
enum ConfigCmd {
    /// Print every server option: KEY, VALUE and where it comes from (INITIAL_SERVER_CONFIG or
    /// DYNAMIC_SERVER_CONFIG).
    Describe {
        #[command(flatten)]
        conn: ConnArgs,
    },
    /// Set or delete dynamic server options (the server refuses the others, naming them).
    Alter {
        /// KEY=VALUE to set (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// KEY to delete: the option returns to its start-up value (repeatable).
        #[arg(long = "delete", value_name = "KEY")]
        delete: Vec<String>,
        #[command(flatten)]
        conn: ConnArgs,
    },
}

#[derive(Subcommand)]
enum AclCmd {
    /// Allow a principal an operation on a resource.
    Add {
        /// cluster, cluster.DATABASE or cluster.DATABASE.TABLE.
        #[arg(long)]
        resource: String,
        /// Type:name, e.g. User:alice.
        #[arg(long)]
        principal: String,
        /// READ, WRITE, CREATE, DROP, ALTER, DESCRIBE or ALL.
        #[arg(long)]
        operation: String,
        /// The client host it applies to (default: every host).
        #[arg(long)]
        host: Option<String>,
        #[command(flatten)]
        conn: ConnArgs,
    },
    /// List the ACLs matching a filter (every field optional; ANY matches everything).
    List {
        #[command(flatten)]
        filter: AclFilterArgs,
        #[command(flatten)]
        conn: ConnArgs,
    },
    /// Remove the ACLs matching a filter and print them.
    Drop {
        #[command(flatten)]
        filter: AclFilterArgs,
        #[command(flatten)]
        conn: ConnArgs,
    },
}

#[derive(Args)]
struct AclFilterArgs {
    /// cluster, cluster.DATABASE or cluster.DATABASE.TABLE.
    #[arg(long)]
    resource: Option<String>,
    /// Type:name, e.g. User:alice (ALL: the wildcard principal).
    #[arg(long)]
    principal: Option<String>,
    /// An operation (READ, WRITE, ...).
    #[arg(long)]
    operation: Option<String>,
    /// A host.
    #[arg(long)]
    host: Option<String>,
    /// A permission (ALLOW).
    #[arg(long)]
    permission: Option<String>,
}

impl AclFilterArgs {
    fn filter(&self) -> Result<riverlet::acl::AclFilter> {
        riverlet::acl::AclFilter::parse(
            self.resource.as_deref(),
            self.principal.as_deref(),
            self.operation.as_deref(),
            self.host.as_deref(),
            self.permission.as_deref(),
        )
    }
}

#[derive(Args)]
struct ServeCmd {
    #[command(flatten)]
    serve: riverlet_server::ServeArgs,
    /// Also serve Arrow Flight SQL on this port (0 picks a free one; printed as
    /// "flight: grpc://HOST:PORT"): runs `riverlet-flight` (from `cargo build -p riverlet-sql`)
    /// against this server until it stops.
    #[arg(long = "flight-port", value_name = "PORT")]
    flight_port: Option<u16>,
}

#[derive(Args)]
struct ConnArgs {
    /// Bootstrap servers, host:port[,host:port...].
    #[arg(long, env = "RIVERLET_BOOTSTRAP", default_value = "127.0.0.1:9123")]
    bootstrap: String,
    /// SASL/PLAIN user name.
    #[arg(long)]
    username: Option<String>,
    /// SASL/PLAIN password.
    #[arg(long, env = "RIVERLET_PASSWORD", hide_env_values = true)]
    password: Option<String>,
    /// Connect over TLS, trusting the CA certificates of this PEM file.
    #[arg(long = "tls-ca", value_name = "PEM")]
    tls_ca: Option<String>,
}

impl ConnArgs {
    /// Connects with the client options as a Fluss-style string map, like every binding.
    fn connect(&self) -> Result<Connection> {
        let mut props = BTreeMap::new();
        props.insert("bootstrap.servers".to_string(), self.bootstrap.clone());
        let tls = self.tls_ca.is_some();
        if let Some(ca) = &self.tls_ca {
            props.insert("client.security.protocol".to_string(), "SSL".to_string());
            props.insert("client.security.ssl.ca-file".to_string(), ca.clone());
        }
        if let Some(user) = &self.username {
            let protocol = if tls { "SASL_SSL" } else { "SASL" };
            props.insert("client.security.protocol".to_string(), protocol.to_string());
            props.insert("client.security.sasl.username".to_string(), user.clone());
            props.insert(
                "client.security.sasl.password".to_string(),
                self.password.clone().unwrap_or_default(),
            );
        }
        Connection::connect(ClientConfig::from_properties(&props)?)
    }
}

fn main() {
    #[cfg(feature = "mimalloc")]
    allocator::tune();
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
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(cmd) => serve(&cmd),
        Command::Demo => demo::run(),
        Command::External(args) => external(&args),
        Command::Tables { conn, database } => tables(&conn, database.as_deref()),
        Command::Acl { cmd } => acl(cmd),
        Command::Config { cmd } => config(cmd),
        Command::CreateTable {
            table,
            schema,
            primary_key,
            partition_by,
            buckets,
            bucket_key,
            properties,
            conn,
        } => create_table(
            &conn,
            &table,
            &schema,
            primary_key,
            partition_by,
            buckets,
            bucket_key,
            &properties,
        ),
        Command::AddColumns {
            table,
            columns,
            conn,
        } => add_columns(&conn, &table, &columns),
        Command::Write { table, rows, conn } => write(&conn, &table, &rows),
        Command::Read {
            table,
            columns,
            filter,
            between,
            tz,
            limit,
            changelog,
            read_optimized,
            conn,
        } => read(
            &conn,
            &table,
            &columns,
            filter.as_deref(),
            &between,
            tz.as_deref(),
            limit,
            (changelog, read_optimized),
        ),
    };
    if let Err(e) = result {
        eprintln!("riverlet: {e}");
        std::process::exit(1);
    }
}

fn serve(cmd: &ServeCmd) -> Result<()> {
    let Some(port) = cmd.flight_port else {
        return riverlet_server::run_cli_serve(&cmd.serve);
    };
    // A self-signed certificate is its own CA; for others pass the gateway's CA yourself by
    // running riverlet flight --tls-ca separately.
    let tls_ca = cmd.serve.tls_cert.as_ref().map(|p| p.display().to_string());
    riverlet_server::run_cli_serve_with(&cmd.serve, |bootstrap| {
        companion::FlightGateway::start(bootstrap, &cmd.serve.host, port, tls_ca.as_deref())
    })
}

/// Runs `riverlet-<name>` (next to this executable, else on PATH) with the remaining arguments.
///
/// On Unix the companion replaces this process (`exec`): it keeps this pid, so a script or
/// supervisor that stops the `riverlet` it started (SIGTERM, SIGINT, SIGKILL to that pid) stops
/// the companion itself, and no orphan is left holding a port. Elsewhere it runs as a child
/// whose exit status becomes this process's, and Ctrl-C reaches both (same console group).
fn external(args: &[String]) -> Result<()> {
    let Some((name, rest)) = args.split_first() else {
        return Err(Error::invalid("no command given (see riverlet --help)"));
    };
    let (program, mut command) = companion::program(name);
    command.args(rest);
    let not_found = || {
        Error::invalid(format!(
            "'{name}' is not a riverlet command, and no program '{program}' was found next to \
             riverlet or on PATH (sql and flight come with `cargo build -p riverlet-sql`)"
        ))
    };
    let cannot_run = |e: std::io::Error| {
        Error::new(
            riverlet::ErrorKind::Io,
            format!("cannot run {program}: {e}"),
        )
    };
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // `exec` returns only when it failed.
        let e = command.exec();
        if e.kind() == std::io::ErrorKind::NotFound {
            Err(not_found())
        } else {
            Err(cannot_run(e))
        }
    }
    #[cfg(not(unix))]
    match command.status() {
        Ok(status) => std::process::exit(status.code().unwrap_or(1)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(not_found()),
        Err(e) => Err(cannot_run(e)),
    }
}

fn acl(cmd: AclCmd) -> Result<()> {
    let print = |bindings: &[riverlet::acl::AclBinding]| {
        for b in bindings {
            println!(
                "{}\t{}\t{}\thost={}\t{}",
                b.resource.text(),
                b.principal,
                b.operation,
                b.host,
                b.permission
            );
        }
    };
    match cmd {
        AclCmd::Add {
            resource,
            principal,
            operation,
            host,
            conn,
        } => {
            let b = riverlet::acl::AclBinding::parse(
                &resource,
                &principal,
                &operation,
                host.as_deref(),
            )?;
            conn.connect()?
                .admin()
                .create_acls(std::slice::from_ref(&b))?;
            println!("added {b}");
        }
        AclCmd::List { filter, conn } => {
            print(&conn.connect()?.admin().list_acls(&filter.filter()?)?);
        }
        AclCmd::Drop { filter, conn } => {
            let gone = conn.connect()?.admin().drop_acls(&[filter.filter()?])?;
            print(&gone);
            println!("dropped {} ACL(s)", gone.len());
        }
    }
    Ok(())
}

fn config(cmd: ConfigCmd) -> Result<()> {
    use riverlet::client::ConfigChange;
    match cmd {
        ConfigCmd::Describe { conn } => {
            for c in conn.connect()?.admin().describe_cluster_configs()? {
                println!(
                    "{}\t{}\t{}",
                    c.key,
                    c.value.as_deref().unwrap_or(""),
                    c.source
                );
            }
        }
        ConfigCmd::Alter { set, delete, conn } => {
            let mut changes = Vec::new();
            for kv in &set {
                let (k, v) = kv
                    .split_once('=')
                    .filter(|(k, _)| !k.trim().is_empty())
                    .ok_or_else(|| Error::invalid(format!("--set '{kv}': expected KEY=VALUE")))?;
                changes.push(ConfigChange::Set(
                    k.trim().to_string(),
                    v.trim().to_string(),
                ));
            }
            for k in &delete {
                changes.push(ConfigChange::Delete(k.trim().to_string()));
            }
            if changes.is_empty() {
                return Err(Error::invalid(
                    "config alter: nothing to change (give --set KEY=VALUE or --delete KEY)",
                ));
            }
            conn.connect()?.admin().alter_cluster_configs(&changes)?;
            println!("altered {} option(s)", changes.len());
        }
    }
    Ok(())
}

fn tables(conn: &ConnArgs, database: Option<&str>) -> Result<()> {
    let conn = conn.connect()?;
    let admin = conn.admin();
    let databases = match database {
        Some(d) => vec![d.to_string()],
        None => admin.list_databases()?,
    };
    for db in databases {
        println!("{db}");
        for t in admin.list_tables(&db)? {
            let info = admin.table_info(&TablePath::new(&db, &t))?;
            let d = &info.descriptor;
            let mut kind = if d.has_primary_key() {
                format!(
                    "primary key ({})",
                    d.schema.primary_key.clone().unwrap_or_default().join(", ")
                )
            } else {
                "log".to_string()
            };
            if d.is_partitioned() {
                kind.push_str(&format!(
                    ", partitioned by ({})",
                    d.partition_keys.join(", ")
                ));
            }
            println!("  {t}  [{kind}; {} buckets]", info.num_buckets());
            for c in &d.schema.columns {
                println!("    {} {}", c.name, c.data_type);
            }
        }
    }
    conn.close()
}

#[allow(clippy::too_many_arguments)]
fn create_table(
    conn: &ConnArgs,
    table: &str,
    schema_text: &str,
    primary_key: Vec<String>,
    partition_by: Vec<String>,
    buckets: Option<i32>,
    bucket_key: Vec<String>,
    properties: &[String],
) -> Result<()> {
    let path = TablePath::parse(table)?;
    let mut columns = parse_columns(schema_text)?;
    for c in &mut columns {
        if primary_key.contains(&c.name) {
            c.data_type = c.data_type.clone().not_null();
        }
    }
    let mut schema = Schema::builder().from_columns(columns);
    if !primary_key.is_empty() {
        schema = schema.primary_key(primary_key);
    }
    let mut builder = TableDescriptor::builder(schema.build()?)
        .partitioned_by(partition_by)
        .distributed_by(buckets, bucket_key);
    for p in properties {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| Error::invalid(format!("--property expects KEY=VALUE, got '{p}'")))?;
        builder = builder.property(k.trim(), v.trim());
    }
    let descriptor = builder.build()?;
    let conn = conn.connect()?;
    let admin = conn.admin();
    admin.create_database(&path.database, true)?;
    admin.create_table(&path, &descriptor, false)?;
    println!("created {path}");
    conn.close()
}

fn add_columns(conn: &ConnArgs, table: &str, columns: &str) -> Result<()> {
    let path = TablePath::parse(table)?;
    let columns = riverlet::metadata::AddColumn::from_sql(columns)?;
    let conn = conn.connect()?;
    conn.admin().add_columns(&path, &columns)?;
    let info = conn.admin().table_info(&path)?;
    println!(
        "{path}: schema id {}, columns {}",
        info.schema_id,
        info.schema().column_names().join(", ")
    );
    conn.close()
}

fn write(conn: &ConnArgs, table: &str, rows: &str) -> Result<()> {
    let text = if rows == "-" {
        std::io::read_to_string(std::io::stdin())?
    } else {
        rows.to_string()
    };
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::invalid(format!("rows are not valid JSON ({e}): {text}")))?;
    let list = value
        .as_array()
        .ok_or_else(|| Error::invalid(format!("rows must be a JSON list of rows, got: {text}")))?;
    let path = TablePath::parse(table)?;
    let conn = conn.connect()?;
    let t = conn.table(&path)?;
    let schema = t.info().schema();
    let names = schema.column_names();
    let rows = list
        .iter()
        .map(|row| match row {
            serde_json::Value::Array(values) => Ok(values.clone()),
            serde_json::Value::Object(fields) => {
                if let Some(unknown) = fields.keys().find(|k| !names.contains(&k.as_str())) {
                    return Err(Error::invalid(format!(
                        "table {path} has no column '{unknown}' (columns: {})",
                        names.join(", ")
                    )));
                }
                Ok(names
                    .iter()
                    .map(|n| fields.get(*n).cloned().unwrap_or(serde_json::Value::Null))
                    .collect())
            }
            other => Err(Error::invalid(format!(
                "each row must be a list or an object, got: {other}"
            ))),
        })
        .collect::<Result<Vec<_>>>()?;
    scenario::write_rows(&t, &rows)?;
    println!("wrote {} row(s) to {path}", rows.len());
    conn.close()
}

#[allow(clippy::too_many_arguments)]
fn read(
    conn: &ConnArgs,
    table: &str,
    columns: &[String],
    filter: Option<&str>,
    between: &[String],
    tz: Option<&str>,
    limit: Option<usize>,
    (changelog, read_optimized): (bool, bool),
) -> Result<()> {
    let path = TablePath::parse(table)?;
    let conn = conn.connect()?;
    let t = conn.table(&path)?;
    let request = ReadRequest {
        columns: (!columns.is_empty()).then(|| columns.to_vec()),
        filter: filter.map(Into::into),
        limit,
        start: between.first().map(TimePoint::from),
        end: between.get(1).map(TimePoint::from),
        time_zone: tz.map(str::to_string),
        changelog,
        read_optimized,
        ..ReadRequest::default()
    };
    let reader = t.read(&request)?;
    for w in reader.warnings() {
        eprintln!("riverlet: warning: {w}");
    }
    let batches = collect_with_progress(reader)?;
    print_batches(&batches)?;
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    eprintln!("{rows} row(s)");
    conn.close()
}

/// Reads every batch, printing a progress line on stderr (when it is a terminal) for reads
/// that take longer than a second.
fn collect_with_progress(mut reader: riverlet::blocking::BatchReader) -> Result<Vec<RecordBatch>> {
    let show = std::io::stderr().is_terminal();
    let started = Instant::now();
    let mut last = started;
    let mut rows = 0usize;
    let mut batches = Vec::new();
    while let Some(batch) = reader.next_batch() {
        let batch = batch?;
        rows += batch.num_rows();
        batches.push(batch);
        if show && last.elapsed() > Duration::from_secs(1) {
            last = Instant::now();
            eprint!(
                "\rread {rows} rows in {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
    }
    if show && started.elapsed() > Duration::from_secs(1) {
        eprintln!();
    }
    Ok(batches)
}

/// Prints batches as a readable table.
pub fn print_batches(batches: &[RecordBatch]) -> Result<()> {
    if batches.iter().all(|b| b.num_rows() == 0) {
        println!("(no rows)");
        return Ok(());
    }
    println!("{}", arrow_cast::pretty::pretty_format_batches(batches)?);
    Ok(())
}
