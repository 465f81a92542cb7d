//! The `Host` and `Origin` rules against DNS rebinding, for every path the server answers:
//! the MCP endpoint (where rmcp applies the same lists) and the probes beside it, so a page
//! that rebinds a name to the loopback reads neither calls nor `/healthz` and `/metrics`.
//!
//! A `Host` must be one of the allowed hosts (`name`, or `name:port` for that port only; an
//! empty list accepts any). An `Origin`, when present, must be one of the allowed origins
//! (`scheme://host`, any port; `scheme://host:port`, that port, the scheme's default when the
//! origin names none; `scheme://host:*`, any port; `null`). Requests without `Origin` are not
//! browsers', and pass.

use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use futures_util::future::Either;
use tower_layer::Layer;
use tower_service::Service;

use super::HttpConfig;
use super::check::{AtOnce, at_once};
use super::strict::names_allowed_host;

/// Why a request is refused with `403`, if it is.
pub(super) fn refusal(
    headers: &http::HeaderMap,
    uri: &http::Uri,
    hosts: &[String],
    origins: &[String],
) -> Option<Response> {
    if !names_allowed_host(headers, uri, hosts) {
        return Some(forbidden("Forbidden: Host header is not allowed"));
    }
    let origin = headers.get(http::header::ORIGIN)?;
    let allowed = origin.to_str().ok().and_then(Origin::parse).is_some_and(|origin| origin.allowed(origins));
    (!allowed).then(|| forbidden("Forbidden: Origin header is not allowed"))
}

fn forbidden(message: &'static str) -> Response {
    let mut response = Response::new(Body::from(message));
    *response.status_mut() = http::StatusCode::FORBIDDEN;
    response
}

/// A browser origin, or an allowed-origin entry.
#[derive(Debug, PartialEq, Eq)]
enum Origin {
    Null,
    Site { scheme: String, host: String, port: Port },
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Port {
    /// No port written: the scheme's default for an origin, any port for an entry.
    Unwritten,
    /// `:*`, in an entry: any port.
    Any,
    Exact(u16),
}

impl Origin {
    fn parse(text: &str) -> Option<Origin> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("null") {
            return Some(Origin::Null);
        }
        let (text, any_port) = match text.strip_suffix(":*") {
            Some(base) => (base, true),
            None => (text, false),
        };
        let uri: http::Uri = text.parse().ok()?;
        let authority = uri.authority()?;
        let port = match (any_port, authority.port_u16()) {
            (true, None) => Port::Any,
            (true, Some(_)) => return None,
            (false, Some(port)) => Port::Exact(port),
            (false, None) => Port::Unwritten,
        };
        let host = authority.host().trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        Some(Origin::Site { scheme: uri.scheme_str()?.to_ascii_lowercase(), host, port })
    }

    /// Whether this origin (as a browser sent it) is one of `allowed`.
    fn allowed(&self, allowed: &[String]) -> bool {
        allowed.iter().filter_map(|entry| Origin::parse(entry)).any(|entry| entry.admits(self))
    }

    fn admits(&self, origin: &Origin) -> bool {
        match (self, origin) {
            (Origin::Null, Origin::Null) => true,
            (Origin::Site { scheme, host, port }, Origin::Site { scheme: s, host: h, port: p }) => {
                scheme == s
                    && host == h
                    && match port {
                        Port::Any | Port::Unwritten => true,
                        Port::Exact(port) => effective(s, *p) == Some(*port),
                    }
            }
            _ => false,
        }
    }
}

/// The port an origin means: the one written, else the scheme's default.
fn effective(scheme: &str, port: Port) -> Option<u16> {
    match (port, scheme) {
        (Port::Exact(port), _) => Some(port),
        (_, "http") => Some(80),
        (_, "https") => Some(443),
        _ => None,
    }
}

/// Refuses with `403` a request whose `Host` or `Origin` the configuration does not allow,
/// against DNS rebinding. rmcp applies the same rules inside the MCP endpoint, so
/// [`router`](super::router) needs no such layer; this one guards other routes.
///
/// ```
/// use axum::{Router, routing::get};
/// use mcp_fusion::http::{HostOriginLayer, HttpConfig};
///
/// let config = HttpConfig::new("127.0.0.1:8080");
/// let app: Router = Router::new().route("/status", get(|| async { "ok" })).layer(HostOriginLayer::new(&config));
/// ```
#[derive(Debug, Clone)]
pub struct HostOriginLayer {
    lists: Arc<(Vec<String>, Vec<String>)>,
}

impl HostOriginLayer {
    /// Allows the configured hosts and origins.
    pub fn new(config: &HttpConfig) -> HostOriginLayer {
        HostOriginLayer { lists: Arc::new((config.hosts(), config.origins().to_vec())) }
    }
}

impl<S> Layer<S> for HostOriginLayer {
    type Service = HostOrigin<S>;

    fn layer(&self, inner: S) -> HostOrigin<S> {
        HostOrigin { inner, lists: Arc::clone(&self.lists) }
    }
}

/// The service of [`HostOriginLayer`].
#[derive(Debug, Clone)]
pub struct HostOrigin<S> {
    inner: S,
    lists: Arc<(Vec<String>, Vec<String>)>,
}

impl<S: Service<Request, Response = Response>> Service<Request> for HostOrigin<S> {
    type Response = Response;
    type Error = S::Error;
    type Future = AtOnce<S::Future, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let (hosts, origins) = &*self.lists;
        match refusal(request.headers(), request.uri(), hosts, origins) {
            Some(refused) => at_once(refused),
            None => Either::Right(self.inner.call(request)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::testing::*;
    use axum::body::Body;

    fn check(host: &str, origin: Option<&str>) -> Option<u16> {
        let mut headers = http::HeaderMap::new();
        headers.insert(http::header::HOST, host.parse().unwrap());
        if let Some(origin) = origin {
            headers.insert(http::header::ORIGIN, origin.parse().unwrap());
        }
        let hosts = ["localhost", "127.0.0.1", "::1", "api.example.com:8443"].map(String::from);
        let origins = ["http://localhost:*", "https://app.example.com", "https://pinned.example.com:9000", "null"]
            .map(String::from);
        refusal(&headers, &"/healthz".parse().unwrap(), &hosts, &origins).map(|r| r.status().as_u16())
    }

    #[test]
    fn hosts_and_origins_follow_the_lists() {
        assert_eq!(check("127.0.0.1:8080", None), None);
        assert_eq!(check("[::1]:8080", None), None);
        assert_eq!(check("LOCALHOST", Some("http://localhost:3000")), None);
        assert_eq!(check("api.example.com:8443", Some("https://app.example.com:4430")), None);
        assert_eq!(check("localhost", Some("https://pinned.example.com:9000")), None);
        assert_eq!(check("localhost", Some("null")), None);
        assert_eq!(check("evil.example", None), Some(403));
        assert_eq!(check("api.example.com:8080", None), Some(403));
        assert_eq!(check("localhost", Some("http://evil.example")), Some(403));
        assert_eq!(check("localhost", Some("https://localhost:3000")), Some(403), "another scheme");
        assert_eq!(check("localhost", Some("https://pinned.example.com")), Some(403), "443 is not 9000");
        assert_eq!(check("localhost", Some("not an origin")), Some(403));
    }

    #[tokio::test]
    async fn the_host_origin_layer_refuses_foreign_hosts_and_origins() {
        let layer = HostOriginLayer::new(&config());
        let foreign = Request::get("/mcp").header(http::header::HOST, "evil.example").body(Body::empty()).unwrap();
        let (status, body, _) = answer(app(layer.clone()), foreign).await;
        assert_eq!((status, body.as_str()), (403, "Forbidden: Host header is not allowed"));
        let page = get("/mcp").header(http::header::ORIGIN, "https://evil.example").body(Body::empty()).unwrap();
        let (status, body, _) = answer(app(layer.clone()), page).await;
        assert_eq!((status, body.as_str()), (403, "Forbidden: Origin header is not allowed"));
        let local = get("/mcp").header(http::header::ORIGIN, "http://localhost:3000").body(Body::empty()).unwrap();
        assert_eq!(answer(app(layer), local).await.0, 200);
    }
}
