//! `fusion parse`: the envelope parser, exposed.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use mcp_fusion_wire::{parse, parse_call_result};
use serde_json::Value;

use crate::report;

/// Arguments of `fusion parse`.
#[derive(Debug, Args)]
pub struct ParseArgs {
    /// The envelope text, or an MCP CallToolResult JSON object; `-` (the default) reads stdin.
    #[arg(value_name = "FILE", default_value = "-")]
    input: PathBuf,
    /// Print the envelope as one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Reads, parses, prints the envelope: as `fusion call` reports an error, or with `--json` as
/// the JSON object `fusion call --json` prints for one.
pub fn run(args: ParseArgs) -> anyhow::Result<ExitCode> {
    let text = if args.input.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).context("reading stdin")?;
        text
    } else {
        std::fs::read_to_string(&args.input).with_context(|| format!("reading {}", args.input.display()))?
    };
    let (envelope, is_error) = match serde_json::from_str::<Value>(&text) {
        // A JSON object is a result; anything else (JSON or not) is envelope text.
        Ok(result @ Value::Object(_)) => {
            let parsed = parse_call_result(&result)?;
            (parsed.envelope, Some(parsed.is_error))
        }
        _ => (parse(&text), None),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&envelope.to_json(is_error))?);
    } else {
        print!("{}", report::labelled(&envelope));
    }
    Ok(ExitCode::SUCCESS)
}
