//! What the two servers share: their flags.

use std::net::SocketAddr;

use clap::{Parser, ValueEnum};

/// How a benchmark server is reached.
#[derive(Debug, Parser)]
pub struct ServeArgs {
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// HTTP with sessions (answers as event streams); without, every request stands alone and
    /// is answered with JSON.
    #[arg(long, requires = "http")]
    pub stateful: bool,
    /// The tokio runtime the server runs on.
    #[arg(long, value_enum, default_value_t = Runtime::MultiThread)]
    pub runtime: Runtime,
}

/// A tokio runtime flavour.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Runtime {
    /// One thread for every task (`#[tokio::main(flavor = "current_thread")]`).
    CurrentThread,
    /// A worker per core (`#[tokio::main]`).
    MultiThread,
}

impl ServeArgs {
    /// Builds the runtime the flags ask for.
    pub fn runtime(&self) -> std::io::Result<tokio::runtime::Runtime> {
        match self.runtime {
            Runtime::CurrentThread => tokio::runtime::Builder::new_current_thread().enable_all().build(),
            Runtime::MultiThread => tokio::runtime::Builder::new_multi_thread().enable_all().build(),
        }
    }
}
