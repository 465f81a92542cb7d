//! The operator's paths beside the MCP endpoint: `GET /healthz`, always, and `GET /metrics`,
//! when the configuration gives it something to render. Neither needs a token nor touches a
//! session: a load balancer's probe and a scraper come without one.

use axum::body::Body;
use axum::response::Response;

use super::config::RenderMetrics;
use super::refusal;
use crate::server::FusionServer;

/// What the paths beside the endpoint need.
#[derive(Clone)]
pub(super) struct Probes {
    pub server: FusionServer,
    pub metrics: Option<RenderMetrics>,
}

impl Probes {
    /// The answer for a request outside the endpoint's path: a probe's, or `404`.
    pub(super) fn answer(&self, method: &http::Method, path: &str) -> Response {
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
