//! What an HTTP request says about a call: its session, its caller and its client's address.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::{ConnectInfo, Request};
use tower_layer::Layer;
use tower_service::Service;

use super::HttpConfig;

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

/// Leaves the client's address in the request for what follows (session owners, calls): from
/// the configured header when it holds one, else the connection's peer. Refuses nothing.
///
/// ```
/// use axum::{Router, routing::get};
/// use mcp_fusion::http::{ClientAddressLayer, HttpConfig};
///
/// let config = HttpConfig::new("127.0.0.1:8080")
///     .client_address_header(http::HeaderName::from_static("x-forwarded-for"));
/// let app: Router = Router::new().route("/", get(|| async { "ok" })).layer(ClientAddressLayer::new(&config));
/// ```
#[derive(Debug, Clone)]
pub struct ClientAddressLayer {
    header: Option<Arc<http::HeaderName>>,
}

impl ClientAddressLayer {
    /// Reads the configured header, if any, else the connection's peer.
    pub fn new(config: &HttpConfig) -> ClientAddressLayer {
        ClientAddressLayer { header: config.client_address_header.clone().map(Arc::new) }
    }
}

impl<S> Layer<S> for ClientAddressLayer {
    type Service = ResolveClientAddress<S>;

    fn layer(&self, inner: S) -> ResolveClientAddress<S> {
        ResolveClientAddress { inner, header: self.header.clone() }
    }
}

/// The service of [`ClientAddressLayer`].
#[derive(Debug, Clone)]
pub struct ResolveClientAddress<S> {
    inner: S,
    header: Option<Arc<http::HeaderName>>,
}

impl<S: Service<Request>> Service<Request> for ResolveClientAddress<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> S::Future {
        resolve_client_address(self.header.as_deref(), &mut request);
        self.inner.call(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::testing::*;
    use axum::body::Body;

    #[tokio::test]
    async fn the_client_address_comes_from_the_header_or_the_peer() {
        let peer: SocketAddr = "192.0.2.9:4000".parse().unwrap();
        let forwarded = config().client_address_header(http::HeaderName::from_static("x-forwarded-for"));
        let request = || get("/mcp").extension(ConnectInfo(peer));
        let named = request().header("x-forwarded-for", "10.0.0.7, 10.0.0.1").body(Body::empty()).unwrap();
        let (_, body, _) = answer(app(ClientAddressLayer::new(&forwarded)), named).await;
        assert_eq!(body, "10.0.0.7 unchecked");
        let garbled = request().header("x-forwarded-for", "not an address").body(Body::empty()).unwrap();
        let (_, body, _) = answer(app(ClientAddressLayer::new(&forwarded)), garbled).await;
        assert_eq!(body, "192.0.2.9 unchecked");
        let unread = request().header("x-forwarded-for", "10.0.0.7").body(Body::empty()).unwrap();
        let (status, body, _) = answer(app(ClientAddressLayer::new(&config())), unread).await;
        assert_eq!((status, body.as_str()), (200, "192.0.2.9 unchecked"));
    }
}
