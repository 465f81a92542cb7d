//! `bench-drive`: starts a server, drives one tool call at a fixed concurrency over raw
//! JSON-RPC, and prints what it measured as one line of JSON.
//!
//! ```text
//! bench-drive --transport stdio --concurrency 16 -- target/release/bench-fusion
//! bench-drive --transport http-stateless -- target/release/bench-raw --http 127.0.0.1:{port}
//! ```

use std::time::Duration;

use clap::Parser;
use fusion_bench::drive::{self, Call, Plan, Server, Transport};

/// Drives a server with one repeated `tools/call` of `billing.get_invoice`.
#[derive(Debug, Parser)]
#[command(name = "bench-drive", version, about)]
struct Cli {
    /// How the server is reached; for HTTP, `{port}` in its command is replaced by a free port.
    #[arg(long, value_enum, default_value = "stdio")]
    transport: Transport,
    /// Which call is repeated.
    #[arg(long, value_enum, default_value = "valid")]
    call: Call,
    /// Requests in flight at once.
    #[arg(long, short = 'c', default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    concurrency: u16,
    /// Seconds of calls before the measured window, not counted.
    #[arg(long, default_value_t = 1.0, value_parser = seconds)]
    warmup: f64,
    /// Seconds of calls counted.
    #[arg(long, default_value_t = 5.0, value_parser = seconds)]
    seconds: f64,
    /// The server's command line.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && (0.0..=3600.0).contains(&s) => Ok(s),
        _ => Err(format!("expected seconds between 0 and 3600, found {text:?}")),
    }
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let plan = Plan {
        transport: cli.transport,
        call: cli.call,
        concurrency: usize::from(cli.concurrency),
        warmup: Duration::from_secs_f64(cli.warmup),
        window: Duration::from_secs_f64(cli.seconds),
    };
    // One thread: the driver should take as little of the machine from the server as it can.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let report = runtime.block_on(async {
        let server = match plan.transport {
            Transport::Stdio => Server::stdio(&cli.command)?,
            Transport::HttpStateless | Transport::HttpStateful => Server::http(&cli.command).await?,
        };
        drive::run(&plan, server).await
    })?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}
