//! `riverlet-server`: runs the embedded Fluss-compatible server in the foreground.
// No unwrap/expect/panic outside tests.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

use clap::Parser;

// mimalloc (feature `mimalloc`, on by default), as `riverlet serve` has it.
#[cfg(feature = "mimalloc")]
mod allocator;

/// Embedded single-node Apache Fluss-compatible server.
#[derive(Parser)]
#[command(name = "riverlet-server", version)]
struct Cli {
    #[command(flatten)]
    serve: riverlet_server::ServeArgs,
}

fn main() {
    #[cfg(feature = "mimalloc")]
    allocator::tune();
    let mut filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    for d in riverlet::logging::SECRET_SAFE_DIRECTIVES {
        if let Ok(d) = d.parse() {
            filter = filter.add_directive(d);
        }
    }
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
    let cli = Cli::parse();
    if let Err(e) = riverlet_server::run_cli_serve(&cli.serve) {
        eprintln!("riverlet-server: {e}");
        std::process::exit(1);
    }
}
