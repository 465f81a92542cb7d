//! `fusion-conformance-server`: the conformance fixtures over Streamable HTTP.
//!
//! Prints `fusion-conformance-server: listening on http://ADDR/mcp` to stderr once the socket is
//! bound (with `--http 127.0.0.1:0`, the default, ADDR has the port the OS picked), then serves
//! until SIGTERM or Ctrl-C. `--protocol-versions` prints the protocol versions it negotiates.

use std::io::IsTerminal as _;
use std::net::SocketAddr;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser;
use mcp_fusion::http::{HttpConfig, HttpServer};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};

/// Test-only MCP server with the fixture tools of the official MCP conformance suite.
#[derive(Debug, Parser)]
#[command(name = "fusion-conformance-server", version, about)]
struct Cli {
    /// Address to serve Streamable HTTP on (port 0: any free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    http: SocketAddr,
    /// Serve without sessions (plain JSON responses).
    #[arg(long)]
    stateless: bool,
    /// Print the protocol versions the server negotiates, one a line, and exit.
    #[arg(long)]
    protocol_versions: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The log's filter is the fmt layer's own, so that the events of a call still reach a client
    // that set a logging level (`mcp_fusion::logging`).
    let log = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn")));
    tracing_subscriber::registry().with(log).with(mcp_fusion::logging::layer()).init();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("fusion-conformance-server: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<()> {
    let server = fusion_conformance_server::server().context("building the fixture server")?;
    if cli.protocol_versions {
        for version in rmcp::ServerHandler::supported_protocol_versions(&server).iter() {
            println!("{}", version.as_str());
        }
        return Ok(());
    }
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        let config = HttpConfig::new(cli.http).stateless(cli.stateless);
        let http = HttpServer::bind(server, config).await.with_context(|| format!("binding {}", cli.http))?;
        eprintln!("fusion-conformance-server: listening on http://{}/mcp", http.local_addr());
        http.serve(shutdown()).await.context("serving HTTP")
    })
}

/// Completes on SIGTERM (run.sh stops the server with it) or Ctrl-C.
async fn shutdown() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = terminate.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(error) => {
                tracing::warn!("cannot listen for SIGTERM: {error}");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}
