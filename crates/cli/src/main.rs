//! `fusion`: call actions of an MCP server and read their envelopes, parse envelopes, and
//! (soon) lock and check tool contracts.

mod call;
mod connect;
mod parse;
mod report;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// MCP Fusion's command line.
#[derive(Debug, Parser)]
#[command(name = "fusion", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Call an action (`billing.get_invoice`) and print its result, or its error envelope
    /// read back (exit 1).
    Call(call::CallArgs),
    /// Parse an envelope (or an MCP CallToolResult JSON) and print it as JSON.
    Parse(parse::ParseArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Call(args) => call::run(args),
        Command::Parse(args) => parse::run(args),
    };
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("fusion: error: {error:#}");
            ExitCode::from(2)
        }
    }
}
