//! `fusion`: call actions of an MCP server and read their envelopes, parse envelopes, and
//! lock, check and diff the contracts of tools, prompts and resource templates.

mod call;
mod connect;
mod dev;
mod governance;
mod input;
mod out;
mod parse;
mod report;
mod source;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// What `fusion --help` ends with: the environment it reads, and where logs go.
const AFTER_HELP: &str = "\
Environment:
  FUSION_TOKEN  the bearer token for --url, as --token gives it.
  FUSION_GATEWAY  the fusion-gateway `fusion dev` runs (else the one next to fusion, else PATH's).
  RUST_LOG      fusion itself logs nothing; a server started with --stdio inherits RUST_LOG, which
                sets what that server logs to its stderr (MCP Fusion servers default to
                info,rmcp=warn when it is unset). That stderr is discarded unless --verbose is given.

Output: a reader of stdout that goes away (`fusion parse big.json | head -c 10`) ends the
output quietly; the exit code still tells the outcome.";

/// MCP Fusion's command line.
#[derive(Debug, Parser)]
#[command(name = "fusion", version, about, after_help = AFTER_HELP)]
struct Cli {
    /// The largest file or stdin read (a saved `tools/list`, a lockfile, an envelope), in bytes.
    #[arg(long, global = true, value_name = "BYTES", default_value_t = input::DEFAULT_MAX_INPUT_BYTES)]
    max_input_bytes: u64,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Call an action (`billing.get_invoice`) and print its result, or its error envelope
    /// read back (exit 1).
    Call(call::CallArgs),
    /// Parse an envelope (or an MCP CallToolResult JSON) and print it as `fusion call` reports
    /// one (`--json`: as one JSON object); exit 1 when it is an error, 0 for a warning or a
    /// success, as `fusion call`.
    Parse(parse::ParseArgs),
    /// Write the contracts of the server's tools, prompts and resource templates to the
    /// lockfile (`fusion.lock`).
    Lock(governance::LockArgs),
    /// Compare the server's contracts with the lockfile: exit 0 up to date, 1 on drift.
    Check(governance::CheckArgs),
    /// Show the changes between the lockfile and the server, field by field.
    Diff(governance::DiffArgs),
    /// Run a server under development, restarted on each change to its sources while the
    /// client keeps its connection: `fusion dev -- cargo run -p my-server` runs `fusion-gateway
    /// dev` with the same arguments (FUSION_GATEWAY names the binary; else the one next to
    /// `fusion`, else PATH's).
    Dev(dev::DevArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Call(args) => call::run(args),
        Command::Parse(args) => parse::run(args, cli.max_input_bytes),
        Command::Lock(args) => governance::lock(args, cli.max_input_bytes),
        Command::Check(args) => governance::check(args, cli.max_input_bytes),
        Command::Diff(args) => governance::diff(args, cli.max_input_bytes),
        Command::Dev(args) => dev::run(args),
    };
    match outcome {
        Ok(code) => code,
        Err(error) => {
            out::eprint(&format!("fusion: error: {error:#}\n"));
            ExitCode::from(2)
        }
    }
}
