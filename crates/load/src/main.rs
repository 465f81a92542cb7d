//! `fusion-load`: N concurrent MCP sessions calling one tool in a closed loop over Streamable
//! HTTP; prints calls/s, latency percentiles and the count of every outcome.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use fusion_load::{Config, Stop};
use rmcp::model::JsonObject;

/// Load an MCP server over Streamable HTTP: each client its own session, calling in a closed loop.
#[derive(Debug, Parser)]
#[command(name = "fusion-load", version, about)]
struct Cli {
    /// The MCP endpoint, like http://127.0.0.1:8080/mcp.
    #[arg(long)]
    url: String,
    /// Concurrent clients, each with its own MCP session.
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    clients: u32,
    /// How long to call for, after the warm-up [default: 10].
    #[arg(long, value_name = "SECS", value_parser = seconds, conflicts_with = "calls")]
    duration: Option<Duration>,
    /// Stop after this many calls in all instead of after a duration.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    calls: Option<u64>,
    /// Call for this long first without counting.
    #[arg(long, value_name = "SECS", value_parser = seconds_or_zero, default_value = "0")]
    warmup: Duration,
    /// The tool to call.
    #[arg(long, value_name = "NAME", default_value = "billing")]
    tool: String,
    /// The tool's arguments, a JSON object.
    #[arg(
        long = "args",
        value_name = "JSON",
        value_parser = json_object,
        default_value = r#"{"action":"get_invoice","id":"inv_2026_0001"}"#
    )]
    arguments: JsonObject,
    /// A call (or a session's opening) with no answer by then counts as `client_timeout`.
    #[arg(long, value_name = "SECS", value_parser = seconds, default_value = "30")]
    call_timeout: Duration,
    /// Also count the outcomes per stretch of SECS, by when each call started: to see when
    /// they changed, e.g. while an upstream was restarted.
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    timeline: Option<Duration>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
}

fn seconds(text: &str) -> Result<Duration, String> {
    match seconds_or_zero(text)? {
        Duration::ZERO => Err("expected a number of seconds above zero".to_owned()),
        duration => Ok(duration),
    }
}

fn seconds_or_zero(text: &str) -> Result<Duration, String> {
    let value: f64 =
        text.trim().parse().map_err(|_| format!("expected a number of seconds, like 10 or 0.5, not {text:?}"))?;
    Duration::try_from_secs_f64(value)
        .map_err(|_| format!("expected a number of seconds of zero or more, not {text:?}"))
}

fn json_object(text: &str) -> Result<JsonObject, String> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(object)) => Ok(object),
        Ok(_) => Err("expected a JSON object, like {\"action\":\"list_invoices\"}".to_owned()),
        Err(error) => Err(format!("not JSON: {error}")),
    }
}

impl Cli {
    fn config(self) -> Config {
        let stop = match (self.calls, self.duration) {
            (Some(calls), _) => Stop::Calls(calls),
            (None, duration) => Stop::Duration(duration.unwrap_or(Duration::from_secs(10))),
        };
        Config {
            url: self.url,
            clients: self.clients as usize,
            stop,
            warmup: self.warmup,
            tool: self.tool,
            arguments: self.arguments,
            call_timeout: self.call_timeout,
            timeline: self.timeline,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = cli.json;
    match run(cli.config()) {
        Ok(report) => {
            if json {
                println!("{}", report.to_json());
            } else {
                println!("{report}");
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("fusion-load: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(config: Config) -> anyhow::Result<fusion_load::Report> {
    let runtime = tokio::runtime::Runtime::new()?;
    Ok(runtime.block_on(fusion_load::run(config))?)
}
