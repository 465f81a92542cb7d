//! The MCP endpoint with the framework's checks in front of rmcp, as one service.
//!
//! One service rather than a layer per check: each `from_fn` layer clones the boxed service
//! beneath it and boxes a future on every request, and rmcp's own service clones its
//! configuration per request when called as a tower service. Here a request costs one `Arc`
//! clone, and rmcp is reached through a shared reference.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::Response;
use futures_util::future::BoxFuture;
use mcp_fusion_wire::echo;

use super::auth::Gate;
use super::frames::{Frames, Release};
use super::sessions::Registry;
use super::{McpService, auth, frames, refusal, request, sessions, strict};
use crate::in_flight::{InFlight, InFlightGuard};

/// What every request to the endpoint is checked against, and rmcp's service behind it.
pub(super) struct Checks {
    pub mcp: McpService,
    /// The hosts a request's target may name; empty accepts any.
    pub hosts: Vec<String>,
    pub client_address_header: Option<http::HeaderName>,
    pub gate: Option<Gate>,
    /// Session owners and caps; `None` when the server is stateless.
    pub registry: Option<Arc<Registry>>,
    pub frames: Arc<Frames>,
    /// POST requests counted until their response has been sent, for a graceful shutdown.
    pub responding: Option<InFlight>,
}

/// The endpoint: a tower service whose clone is an `Arc` clone.
#[derive(Clone)]
pub(super) struct Endpoint(Arc<Checks>);

impl Endpoint {
    pub(super) fn new(checks: Checks) -> Endpoint {
        Endpoint(Arc::new(checks))
    }
}

impl tower_service::Service<Request> for Endpoint {
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let checks = Arc::clone(&self.0);
        Box::pin(async move { Ok(checks.answer(request).await) })
    }
}

impl Checks {
    /// For a request, in order: the strict reading of HTTP, the client's address, the bearer
    /// token, the session's owner and caps, the body read as JSON-RPC (and its id not already
    /// in flight), then MCP.
    async fn answer(&self, mut request: Request) -> Response {
        let responding = match &self.responding {
            Some(in_flight) if request.method() == http::Method::POST => Some(in_flight.enter()),
            _ => None,
        };
        if let Some(reason) = strict::ambiguity(&request, &self.hosts) {
            tracing::warn!(
                method = %echo(request.method().as_str()),
                uri = %echo(&request.uri().to_string()),
                "refused an HTTP request: {reason}"
            );
            return refusal::bad_request(reason);
        }
        request::resolve_client_address(self.client_address_header.as_ref(), &mut request);
        if let Some(gate) = &self.gate
            && let Err(refused) = auth::authenticate(gate, &mut request).await
        {
            return refused;
        }
        let opening = match &self.registry {
            Some(registry) => match sessions::admit(registry, &mut request) {
                Ok(opening) => opening,
                Err(refused) => return refused,
            },
            None => None,
        };
        let (request, framed) = match frames::read(&self.frames, request).await {
            Ok(read) => read,
            Err(refused) => return refused,
        };
        let delete = request.method() == http::Method::DELETE;
        let mut response = self.mcp.handle(request).await.map(Body::new);
        if let Some(opening) = opening {
            opening.settle(&response);
        }
        // rmcp answers a session `DELETE` with `202 Accepted`; the session is gone by then, and
        // some clients (the Python SDK) accept only `200`/`204` there and log a failure
        // otherwise.
        if delete && response.status() == http::StatusCode::ACCEPTED {
            *response.status_mut() = http::StatusCode::NO_CONTENT;
        }
        let (response, release) = match framed {
            Some(framed) => (framed.refuse_undecodable(response), framed.release),
            None => (response, None),
        };
        if responding.is_none() && release.is_none() {
            return response;
        }
        response.map(|body| Body::new(Holding { body, _held: (responding, release) }))
    }
}

/// A response body holding what must live until it has been sent (or dropped): the count of
/// responses in flight, the request's id in its session.
struct Holding {
    body: Body,
    _held: (Option<InFlightGuard>, Option<Release>),
}

impl http_body::Body for Holding {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
