//! Transports: how MCP messages reach the server, and what a transport knows about each request.
//!
//! - [`stdio`]: newline-delimited JSON-RPC on stdin and stdout ([`serve_stdio`](crate::serve_stdio)),
//!   or any pair of byte streams ([`LineTransport`](stdio::LineTransport)).
//! - [`http`] (cargo feature `http`): Streamable HTTP, rmcp's service mounted
//!   in axum, with sessions or stateless, bearer-token authentication, Host and Origin checks.
//!
//! Whatever the transport, a call reaches the server as a tool name, its arguments and a
//! [`RequestInfo`]: the session, the client, the caller, the cancellation token.
#![cfg_attr(feature = "http", doc = include_str!("../../docs/transports.md"))]

#[cfg(feature = "http")]
pub mod http;
pub(crate) mod jsonrpc;
mod std_streams;
pub mod stdio;
mod writer;

pub use crate::context::RequestInfo;

/// Says on stderr, once, where a server is served when nothing would log it: a server started
/// without a `tracing` subscriber otherwise prints nothing at all and looks dead.
pub(crate) fn announce_when_unlogged(serving: std::fmt::Arguments<'_>) {
    if !tracing::dispatcher::has_been_set() {
        eprintln!(
            "mcp-fusion: serving MCP {serving}; no log is installed: call mcp_fusion::logging::init() to see the server's events on stderr"
        );
    }
}
