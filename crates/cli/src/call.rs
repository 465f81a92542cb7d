//! `fusion call`: one action, its result or its error.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use serde_json::{Value, json};

use crate::connect::{Server, Token, Verbose};
use crate::{out, report};

/// Arguments of `fusion call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    #[command(flatten)]
    server: Server,
    #[command(flatten)]
    token: Token,
    #[command(flatten)]
    verbose: Verbose,
    /// The action: `group.action` (`billing.get_invoice`) or a tool name.
    action: String,
    /// The arguments, a JSON object (default `{}`).
    #[arg(value_name = "JSON")]
    arguments: Option<String>,
    /// Print machine-readable JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// Connects, calls, prints; exit 1 when the call failed.
pub fn run(args: CallArgs) -> anyhow::Result<ExitCode> {
    let arguments: Value = match &args.arguments {
        None => json!({}),
        Some(text) => serde_json::from_str(text).with_context(|| format!("the arguments are not JSON: {text}"))?,
    };
    anyhow::ensure!(
        arguments.is_object(),
        "the arguments must be a JSON object, like {{\"id\": \"inv_1\"}}; got {arguments}"
    );
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        let client = args.server.connect(&args.token, &args.verbose).await?;
        let outcome =
            client.call_raw(&args.action, arguments).await.with_context(|| format!("calling {}", args.action))?;
        let _ = client.close().await;
        let code = if outcome.is_error() { ExitCode::from(1) } else { ExitCode::SUCCESS };
        if args.json {
            let printed = match &outcome.error {
                Some(error) => error.to_json(Some(true)),
                None => json!({
                    "is_error": false,
                    "value": outcome.value(),
                    "warnings": outcome.warnings.iter().map(|w| w.to_json(Some(false))).collect::<Vec<_>>(),
                }),
            };
            out::println(&serde_json::to_string_pretty(&printed)?)?;
            return Ok(code);
        }
        match &outcome.error {
            Some(error) => out::print(&format!("error: {}", report::envelope(error)))?,
            None => {
                match outcome.value() {
                    Some(Value::String(text)) => out::println(&text)?,
                    Some(value) => out::println(&serde_json::to_string_pretty(&value)?)?,
                    None => {}
                }
                for warning in &outcome.warnings {
                    out::eprint(&format!("warning: {}", report::envelope(warning)));
                }
            }
        }
        Ok(code)
    })
}
