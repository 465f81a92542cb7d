//! The operator's paths beside the MCP endpoint: `GET /healthz`, always, and `GET /metrics`,
//! when the configuration gives it something to render. Neither needs a token nor touches a
//! session: a load balancer's probe and a scraper come without one. Both obey the endpoint's
//! `Host` and `Origin` rules, so a page that rebinds a name to the server reads neither.

use axum::body::Body;
use axum::response::Response;

use std::sync::Arc;

use super::config::RenderMetrics;
use super::{rebinding, refusal};
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
}

impl Probes {
    /// The answer for a request outside the endpoint's path: a probe's, `403` for a host or
    /// origin the endpoint would refuse, or `404`.
    pub(super) fn answer<B>(&self, request: &http::Request<B>) -> Response {
        let (method, path) = (request.method(), request.uri().path());
        if let Some(refused) = rebinding::refusal(request.headers(), request.uri(), &self.hosts, &self.origins) {
            return refused;
        }
        let wanted = match path {
            "/healthz" => Probe::Health,
            "/metrics" if self.metrics.is_some() => Probe::Metrics,
            _ => return refusal::not_found(),
        };
        if method != http::Method::GET && method != http::Method::HEAD {
            let mut response = with_status(http::StatusCode::METHOD_NOT_ALLOWED, Body::empty());
            response.headers_mut().insert(http::header::ALLOW, http::HeaderValue::from_static("GET, HEAD"));
            return response;
        }
        let (body, content_type) = match (wanted, &self.metrics) {
            (Probe::Metrics, Some(render)) => {
                self.server.record_gauges();
                (render(), "text/plain; version=0.0.4; charset=utf-8")
            }
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
}

fn with_status(status: http::StatusCode, body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
}
