//! What an HTTP request says about a call: its session, its caller and its client's address.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, Request};

pub(crate) use crate::context::ClientAddress;

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
