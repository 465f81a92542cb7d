//! Runs a wire-vectors file through this crate and prints one JSON line per case:
//! `{"id": ..., "text": ..., "is_error": ...}` (`is_error` omitted for the escape kinds).
//!
//! ```text
//! cargo run -q -p mcp-fusion-wire --example conformance -- PATH/TO/vectors.jsonl
//! ```
//!
//! A line that is not a valid case is reported on stderr with its line number; the other
//! cases still run, and the exit status is 1.

use std::io::{self, BufRead, BufReader, Write};
use std::process::ExitCode;
use std::{env, fs};

use mcp_fusion_wire::conformance::run_line;

fn main() -> ExitCode {
    let mut args = env::args_os().skip(1);
    let (Some(path), None) = (args.next(), args.next()) else {
        eprintln!("usage: conformance FILE\n  FILE: a wire-vectors file, one JSON case per line (`-` reads stdin)");
        return ExitCode::from(2);
    };
    let input: Box<dyn BufRead> = if path == "-" {
        Box::new(io::stdin().lock())
    } else {
        match fs::File::open(&path) {
            Ok(file) => Box::new(BufReader::new(file)),
            Err(e) => {
                eprintln!("error: cannot open {}: {e}", path.to_string_lossy());
                return ExitCode::from(2);
            }
        }
    };
    let mut out = io::BufWriter::new(io::stdout().lock());
    let mut failed = 0usize;
    for (number, line) in input.lines().enumerate() {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                eprintln!("error: line {}: cannot read: {e}", number + 1);
                failed += 1;
                break;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        match run_line(&line) {
            Ok(outcome) => {
                let json = serde_json::to_string(&outcome).expect("an outcome is plain strings and booleans");
                if writeln!(out, "{json}").is_err() {
                    // stdout closed (e.g. piped into `head`): nothing more to say.
                    return ExitCode::SUCCESS;
                }
            }
            Err(e) => {
                eprintln!("error: line {}: {e}", number + 1);
                failed += 1;
            }
        }
    }
    if out.flush().is_err() {
        return ExitCode::SUCCESS;
    }
    if failed > 0 {
        eprintln!("{failed} line(s) could not be run");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
