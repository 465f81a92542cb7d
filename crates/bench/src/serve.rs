//! What the two servers share: their flags.

use std::net::SocketAddr;

use clap::Parser;

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
}
