//! `billing-server`: the MCP Fusion demo over stdio. stdout carries MCP messages only; every
//! log line goes to stderr.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use billing_server::{Options, Store};
use clap::Parser;
use tracing_subscriber::EnvFilter;

/// The MCP Fusion demo: invoices in SQLite, every failure an envelope.
#[derive(Debug, Parser)]
#[command(name = "billing-server", version, about)]
struct Cli {
    /// The SQLite file; created, migrated and seeded on first start.
    #[arg(long, value_name = "PATH", default_value = "./billing.db")]
    db: PathBuf,
    /// Send the model an incident id instead of the text of internal errors (the log keeps it).
    #[arg(long)]
    mask_internal_errors: bool,
}

impl Cli {
    fn options(&self) -> Options {
        Options { mask_internal_errors: self.mask_internal_errors }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // One line with the whole cause chain: what an operator needs, and no backtrace
            // even when RUST_BACKTRACE is set.
            eprintln!("billing-server: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<()> {
    let store = Store::open(&cli.db)?;
    let server = billing_server::server(store, &cli.options()).context("building the billing server")?;
    tracing::info!(db = %cli.db.display(), "billing-server serving MCP on stdio");

    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(mcp_fusion::serve_stdio(server)).context("serving MCP on stdio")?;
    tracing::info!("client closed stdin; shutting down");
    Ok(())
}
