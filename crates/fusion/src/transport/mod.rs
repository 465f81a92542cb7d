//! Transports: how MCP messages reach the server, and what a transport knows about each request.
//!
//! - [`stdio`]: newline-delimited JSON-RPC on stdin and stdout ([`serve_stdio`](crate::serve_stdio)),
//!   or any pair of byte streams ([`LineTransport`](stdio::LineTransport)).
//! - [`http`] (cargo feature `http`, on by default): Streamable HTTP, rmcp's service mounted
//!   in axum, with sessions or stateless, bearer-token authentication, Host and Origin checks.
//!
//! Whatever the transport, a call reaches the server as a tool name, its arguments and a
//! [`RequestInfo`]: the session, the client, the caller, the cancellation token.
#![doc = include_str!("../../docs/transports.md")]

#[cfg(feature = "http")]
pub mod http;
pub(crate) mod jsonrpc;
mod std_streams;
pub mod stdio;
mod writer;

use std::net::IpAddr;
use std::sync::Arc;

use rmcp::model::{Extensions, Implementation, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use crate::auth::Caller;

/// What the transport knows about a request, before routing.
#[derive(Debug, Clone)]
pub struct RequestInfo {
    /// The session, when the transport has one.
    pub session_id: Option<Arc<str>>,
    /// The client, as it introduced itself.
    pub client: Option<Implementation>,
    /// Fires when the client cancels the request.
    pub cancellation: CancellationToken,
    /// What the transport attached to the request.
    pub extensions: Extensions,
    /// The client connection.
    pub peer: Option<Peer<RoleServer>>,
    /// Whether requests sent to the peer can reach the client (not over stateless HTTP).
    pub peer_accepts_requests: bool,
    /// The `progressToken` of the request's `_meta`, if the client wants progress.
    pub progress_token: Option<ProgressToken>,
    /// Who is calling, as the transport's authenticator found.
    pub caller: Caller,
    /// The client's network address, when the transport knows it.
    pub client_address: Option<IpAddr>,
    /// The `fusion/idempotency_key` of the request's `_meta`, as sent.
    pub idempotency_key: Option<serde_json::Value>,
}

impl Default for RequestInfo {
    fn default() -> RequestInfo {
        RequestInfo {
            session_id: None,
            client: None,
            cancellation: CancellationToken::new(),
            extensions: Extensions::default(),
            peer: None,
            peer_accepts_requests: false,
            progress_token: None,
            caller: Caller::Anonymous,
            client_address: None,
            idempotency_key: None,
        }
    }
}

impl RequestInfo {
    /// What rmcp's request context says about the request, and, over HTTP, what the request's
    /// headers say (its session, its caller).
    pub(crate) fn from_context(context: RequestContext<RoleServer>) -> RequestInfo {
        #[allow(unused_mut)]
        let mut info = RequestInfo {
            session_id: None,
            client: context.client_info(),
            cancellation: context.ct.clone(),
            extensions: Extensions::default(),
            peer: Some(context.peer.clone()),
            peer_accepts_requests: true,
            progress_token: context.meta.get_progress_token(),
            caller: Caller::Anonymous,
            client_address: None,
            idempotency_key: context.meta.get(crate::guard::IDEMPOTENCY_KEY_META).cloned(),
        };
        #[cfg(feature = "http")]
        if let Some(request) = http::request::HttpRequest::read(&context.extensions) {
            // Over HTTP without a session (stateless), nothing carries a request to the client.
            info.peer_accepts_requests = request.session_id.is_some();
            info.session_id = request.session_id;
            info.caller = request.caller;
            info.client_address = request.client_address;
        }
        info.extensions = context.extensions;
        info
    }
}
