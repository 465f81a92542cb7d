//! `fusion parse`: the envelope parser, exposed.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use mcp_fusion_wire::{parse, parse_call_result};
use serde_json::Value;

use crate::{input, out, report};

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
/// the JSON object `fusion call --json` prints for one. Exits as `fusion call` does: 1 when it
/// is an error (a result's `isError`, else the envelope's severity), 0 for a warning or a
/// success; input that cannot be read is the caller's error (2).
pub fn run(args: ParseArgs, max_input_bytes: u64) -> anyhow::Result<ExitCode> {
    let text = if args.input.as_os_str() == "-" {
        input::read_capped(std::io::stdin().lock(), "stdin", max_input_bytes)?
    } else {
        input::read_file(&args.input, &args.input.display().to_string(), max_input_bytes)?
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
        out::println(&serde_json::to_string_pretty(&envelope.to_json(is_error))?)?;
    } else {
        out::print(&report::labelled(&envelope))?;
    }
    let failed = is_error.unwrap_or_else(|| envelope.is_error());
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
