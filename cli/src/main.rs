//! The `riverlet` command line: serve an embedded server, run the demo, and poke at any Fluss
//! server (list tables, create a table, read with projection, filter, time range and limit).

use clap::{Parser, Subcommand};

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
    Serve(riverlet_server::ServeArgs),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(args) => riverlet_server::run_cli_serve(&args),
    };
    if let Err(e) = result {
        eprintln!("riverlet: {e}");
        std::process::exit(1);
    }
}
