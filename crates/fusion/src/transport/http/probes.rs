//! The paths beside the MCP endpoint: `GET /healthz`, always; `GET /metrics`, when the
//! configuration gives it something to render; and the protected resource's metadata, when
//! the server is one. None needs a token nor touches a session: a load balancer's probe, a
//! scraper and a client looking for where to get a token come without one. All obey the
//! endpoint's `Host` and `Origin` rules, so a page that rebinds a name to the server reads none.

use axum::body::Body;
use axum::response::Response;

use std::sync::Arc;

use super::config::RenderMetrics;
use super::{ProtectedResource, rebinding, refusal};
use crate::server::FusionServer;

/// What the paths beside the endpoint need.
#[derive(Clone)]
pub(super) struct Probes {
    pub server: FusionServer,
    pub metrics: Option<RenderMetrics>,
    /// The hosts a request may name, as for the endpoint; empty accepts any.
    pub hosts: Arc<[String]>,
    /// The browser origins accepted, as for the endpoint.
    pub origins: Arc<[String]>,
    /// The protected resource whose metadata is served, if the server is one.
    pub protected_resource: Option<Arc<ProtectedResource>>,
}

impl Probes {
    /// The answer for a request outside the endpoint's path: a probe's, `403` for a host or
    /// origin the endpoint would refuse, or `404`.
    pub(super) fn answer<B>(&self, request: &http::Request<B>) -> Response {
        let (method, path) = (request.method(), request.uri().path());
        if let Some(refused) = rebinding::refusal(request.headers(), request.uri(), &self.hosts, &self.origins) {
            return refused;
        }
        let metadata = self.protected_resource.as_deref().filter(|resource| resource.metadata_paths().contains(&path));
        let wanted = match path {
            "/healthz" => Probe::Health,
            "/metrics" if self.metrics.is_some() => Probe::Metrics,
            _ if metadata.is_some() => Probe::Metadata,
            _ => return refusal::not_found(),
        };
        if method != http::Method::GET && method != http::Method::HEAD {
            let mut response = with_status(http::StatusCode::METHOD_NOT_ALLOWED, Body::empty());
            response.headers_mut().insert(http::header::ALLOW, http::HeaderValue::from_static("GET, HEAD"));
            return response;
        }
        let (body, content_type) = match (wanted, &self.metrics, metadata) {
            (Probe::Metrics, Some(render), _) => {
                self.server.record_gauges();
                (render(), "text/plain; version=0.0.4; charset=utf-8")
            }
            (Probe::Metadata, _, Some(resource)) => return metadata_document(resource),
            _ => (format!("{{\"status\":\"ok\",\"in_flight\":{}}}", self.server.in_flight()), "application/json"),
        };
        let mut response = with_status(http::StatusCode::OK, Body::from(body));
        response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static(content_type));
        response
    }
}

enum Probe {
    Health,
    Metrics,
    Metadata,
}

/// The protected resource's metadata document: JSON any origin may read (it is public, and
/// browser clients fetch it from their own origin).
pub(super) fn metadata_document(resource: &ProtectedResource) -> Response {
    let mut response = with_status(http::StatusCode::OK, Body::from(resource.metadata().to_string()));
    let headers = response.headers_mut();
    headers.insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    headers.insert(http::header::ACCESS_CONTROL_ALLOW_ORIGIN, http::HeaderValue::from_static("*"));
    response
}

fn with_status(status: http::StatusCode, body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
}
