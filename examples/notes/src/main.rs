//! `notes-server [--db PATH] [--http HOST:PORT]`: the notes server on stdio, or on Streamable
//! HTTP at `http://HOST:PORT/mcp`.

use std::path::PathBuf;
use std::process::ExitCode;

use mcp_fusion::prelude::*;
use notes_server::Notes;

const USAGE: &str = "usage: notes-server [--db PATH] [--http HOST:PORT]

  --db PATH         the SQLite file (default ./notes.db), created on first start
  --http HOST:PORT  serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio
                    (localhost:8090, 127.0.0.1:0 for a free port)

Logs go to stderr; RUST_LOG filters them (default: info).";

/// What the command line asked for.
struct Args {
    db: PathBuf,
    http: Option<String>,
}

impl Args {
    /// Reads the flags, or says which one is wrong.
    fn parse(mut args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
        let mut parsed = Args { db: PathBuf::from("notes.db"), http: None };
        while let Some(flag) = args.next() {
            let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
            match flag.as_str() {
                "--db" => parsed.db = PathBuf::from(value()?),
                "--http" => parsed.http = Some(value()?),
                "-h" | "--help" => return Ok(None),
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        Ok(Some(parsed))
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let _log = mcp_fusion::logging::init();
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("notes-server: error: {error}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("notes-server: error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<()> {
    let server = notes_server::server(Notes::open(&args.db)?)?;
    match args.http {
        Some(address) => {
            let http = HttpServer::bind(server, HttpConfig::new(address.as_str())).await?;
            eprintln!("notes-server: MCP at http://{}/mcp (Ctrl-C stops it)", http.local_addr());
            http.serve(shutdown_signal()).await?;
        }
        None => {
            eprintln!("notes-server: MCP on stdio; an MCP client starts this binary as its command");
            serve_stdio(server).await?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Args>, String> {
        Args::parse(args.iter().map(|arg| arg.to_string()))
    }

    #[test]
    fn flags_parse_and_garbage_is_named() {
        let args = parse(&["--db", "x.db", "--http", "localhost:0"]).unwrap().unwrap();
        assert_eq!((args.db, args.http.as_deref()), (PathBuf::from("x.db"), Some("localhost:0")));
        assert!(parse(&["--help"]).unwrap().is_none());
        assert_eq!(parse(&["--http"]).err().unwrap(), "--http needs a value");
        assert_eq!(parse(&["--port", "1"]).err().unwrap(), "unknown argument \"--port\"");
    }
}
