//! `riverlet sql`: SQL (DataFusion) over a Fluss cluster or an embedded server. One statement
//! from the command line, or an interactive prompt reading statements ended by `;` from stdin.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use clap::Parser;
use datafusion::prelude::SessionContext;
use riverlet::{Error, ErrorKind, Result};
use riverlet_sql::cli::{init_logging, runtime, write_batches, ConnArgs, Format};
use riverlet_sql::SqlOptions;

#[derive(Parser)]
#[command(
    name = "riverlet sql",
    version,
    about = "SQL over Fluss tables (DataFusion): SELECT with the time-range function \
             fluss_incremental_between_timestamp, <table>$changelog, INSERT INTO"
)]
struct Args {
    /// The statement; without one, statements ending in ';' are read from stdin.
    statement: Option<String>,
    #[command(flatten)]
    conn: ConnArgs,
    /// The default database (unqualified table names).
    #[arg(long, default_value = "fluss")]
    database: String,
    /// The session time zone of datetime texts (IANA name, UTC or +08:00; default: local).
    #[arg(long)]
    tz: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Write the result to this file instead of stdout.
    #[arg(long)]
    output: Option<PathBuf>,
}

fn main() {
    init_logging();
    let args = Args::parse();
    if let Err(e) = run(&args) {
        eprintln!("riverlet sql: {e}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<()> {
    // A bad zone fails here, naming it, not at the first datetime text of a statement.
    if let Some(tz) = &args.tz {
        riverlet::scan::time::TimeZoneSpec::parse(tz)?;
    }
    let target = args.conn.target()?;
    let rt = runtime()?;
    rt.block_on(async {
        let conn = args.conn.connect(&target.bootstrap, None).await?;
        let options = SqlOptions {
            database: args.database.clone(),
            time_zone: args.tz.clone(),
            ..SqlOptions::default()
        };
        let ctx = riverlet_sql::session(conn.clone(), &options);
        let result = match &args.statement {
            Some(sql) => execute(&ctx, sql, args).await,
            None => prompt(&ctx, args).await,
        };
        conn.close().await;
        result
    })
}

/// Runs one statement and writes its result.
async fn execute(ctx: &SessionContext, sql: &str, args: &Args) -> Result<()> {
    let df = ctx.sql(sql).await.map_err(to_core)?;
    let schema = df.schema().inner().clone();
    let batches = df.collect().await.map_err(to_core)?;
    match &args.output {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|e| {
                Error::new(
                    ErrorKind::Io,
                    format!("cannot create {}: {e}", path.display()),
                )
            })?;
            write_batches(
                args.format,
                &schema,
                &batches,
                std::io::BufWriter::new(file),
            )
        }
        None => write_batches(args.format, &schema, &batches, std::io::stdout()),
    }
}

/// Reads statements (ending in ';') from stdin until it ends; an error is printed and the
/// next statement runs.
async fn prompt(ctx: &SessionContext, args: &Args) -> Result<()> {
    let interactive = std::io::stdin().is_terminal();
    let mut pending = String::new();
    let mut failed = false;
    let show = |continuation: bool| {
        if interactive {
            print!(
                "{}",
                if continuation {
                    "      -> "
                } else {
                    "riverlet> "
                }
            );
            let _ = std::io::stdout().flush();
        }
    };
    show(false);
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| Error::new(ErrorKind::Io, e.to_string()))?;
        pending.push_str(&line);
        pending.push('\n');
        if line.trim_end().ends_with(';') {
            let sql = pending.trim().trim_end_matches(';').trim().to_string();
            pending.clear();
            if !sql.is_empty() {
                if let Err(e) = execute(ctx, &sql, args).await {
                    eprintln!("riverlet sql: {e}");
                    failed = true;
                }
            }
        }
        show(!pending.trim().is_empty());
    }
    if !pending.trim().is_empty() {
        return Err(Error::invalid(format!(
            "the input ended inside a statement (a statement ends with ';'): {}",
            pending.trim()
        )));
    }
    if interactive {
        println!();
    }
    if failed {
        return Err(Error::invalid("some statements failed (see above)"));
    }
    Ok(())
}

/// A DataFusion error as the core error inside it, or as an invalid-argument error (SQL the
/// planner rejected).
fn to_core(e: datafusion::error::DataFusionError) -> Error {
    match riverlet_sql::core_error(&e) {
        Some(core) => core.clone(),
        None => Error::invalid(e.to_string()),
    }
}
