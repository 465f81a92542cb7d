//! What an HTTP request says about a call: its session, its caller and its client's address.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request};
use rmcp::model::Extensions;

use super::sessions::IssuedSession;
use crate::auth::Caller;

/// The address of the client that sent a request: the connection's peer, or what the
/// configured proxy header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClientAddress(pub IpAddr);

/// The facts of an HTTP request that reach a call.
pub(crate) struct HttpRequest {
    /// The session the request belongs to, when the transport issued it and holds it.
    pub session_id: Option<Arc<str>>,
    /// The verdict of the authenticator, left in the request's extensions; anonymous when
    /// none is configured.
    pub caller: Caller,
    /// The client's address, when the server knows it.
    pub client_address: Option<IpAddr>,
}

impl HttpRequest {
    /// The facts of the HTTP request rmcp attached to a request context (`None` when the
    /// request did not come over HTTP).
    pub(crate) fn read(extensions: &Extensions) -> Option<HttpRequest> {
        let parts = extensions.get::<http::request::Parts>()?;
        // The session the endpoint found live, never the header as sent: on a request outside
        // a session (stateless, or 2026-07-28's session-less requests) any client can write it.
        let session_id = parts.extensions.get::<IssuedSession>().map(|session| Arc::clone(&session.0));
        let caller = parts.extensions.get::<Caller>().cloned().unwrap_or(Caller::Anonymous);
        let client_address = parts.extensions.get::<ClientAddress>().map(|address| address.0);
        Some(HttpRequest { session_id, caller, client_address })
    }
}

/// Attaches the client's address to the request: from `header` when one is configured and
/// holds an address (its first, for `x-forwarded-for`), else the connection's peer.
pub(super) fn resolve_client_address(header: Option<&http::HeaderName>, request: &mut Request) {
    let forwarded = header.and_then(|header| {
        let value = request.headers().get(header)?.to_str().ok()?;
        value.split(',').next()?.trim().parse::<IpAddr>().ok()
    });
    let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|info| info.0.ip());
    if let Some(address) = forwarded.or(peer) {
        request.extensions_mut().insert(ClientAddress(address));
    }
}
