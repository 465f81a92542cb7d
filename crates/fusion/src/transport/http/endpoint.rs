//! The MCP endpoint: rmcp's service as a tower service, and the stack of checks in front of it
//! that [`router`](super::router) serves.
//!
//! A check that refuses answers itself; one that learns something about the request leaves it
//! in the request's extensions for the checks and the calls after it: the
//! [`ClientAddressLayer`] the client's address, the [`BearerAuthLayer`] the
//! [`Caller`](crate::auth::Caller), the [`SessionLayer`] the session a call counts as.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;
use tower_layer::Layer;
use tower_service::Service;

use super::bearer::Gate;
use super::direct::Direct;
use super::{
    BearerAuth, BearerAuthLayer, ClientAddressLayer, CountResponses, Framing, FramingLayer, HttpConfig, McpService,
    ResolveClientAddress, ResponseCountLayer, ResponsesInFlight, SessionCheck, SessionLayer, StrictRequest,
    StrictRequestLayer,
};
use crate::server::FusionServer;

/// The endpoint [`router`](super::router) and [`service`](super::service) serve: rmcp behind
/// every check, in their order.
pub type CheckedEndpoint =
    CountResponses<StrictRequest<ResolveClientAddress<BearerAuth<SessionCheck<Framing<McpEndpoint>>>>>>;

/// Builds the checked endpoint, counting POST responses in `responses` when given.
pub(super) fn checked(
    server: FusionServer,
    config: &HttpConfig,
    sessions: CancellationToken,
    responses: Option<ResponsesInFlight>,
) -> CheckedEndpoint {
    let session_layer = SessionLayer::new(config);
    let framing = FramingLayer::new(&server, config);
    let mcp = session_layer.endpoint(server, config, sessions);
    let gate = config.authenticator.as_ref().map(|authenticator| Gate {
        authenticator: Arc::clone(authenticator),
        allow_anonymous: config.allow_anonymous,
        resource_metadata: config.protected_resource.as_ref().map(|resource| resource.metadata_url().into()),
        lists_per_caller: config.lists_per_caller,
    });
    let stack = framing.layer(mcp);
    let stack = session_layer.layer(stack);
    let stack = BearerAuthLayer { gate: gate.map(Arc::new) }.layer(stack);
    let stack = ClientAddressLayer::new(config).layer(stack);
    let stack = StrictRequestLayer::new(config).layer(stack);
    ResponseCountLayer { responses }.layer(stack)
}

/// The MCP endpoint as a tower service over axum bodies, reached through shared references:
/// a request whose answer is one JSON body (see [`HttpConfig::direct_path`]) is answered on the
/// connection's task, everything else by rmcp's service.
///
/// rmcp's own service clones its configuration on every request when called as a tower
/// service; this one costs an `Arc` clone. It is the service the other layers wrap in
/// [`router`](super::router); build it with [`SessionLayer::endpoint`] when sessions are
/// checked, so that the layer knows the sessions rmcp holds.
#[derive(Clone)]
pub struct McpEndpoint {
    pub(super) rmcp: Arc<McpService>,
    pub(super) direct: Option<Arc<Direct>>,
}

impl McpEndpoint {
    /// The endpoint for `server`, its sessions tracked for no [`SessionLayer`]; cancelling
    /// `sessions` ends every session and open stream.
    pub fn new(server: FusionServer, config: &HttpConfig, sessions: CancellationToken) -> McpEndpoint {
        SessionLayer::new(config).endpoint(server, config, sessions)
    }
}

impl Service<Request> for McpEndpoint {
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let mcp = Arc::clone(&self.rmcp);
        let Some(direct) = self.direct.clone() else {
            return Box::pin(rmcp_answer(mcp, request));
        };
        Box::pin(async move {
            match direct.answer(request).await {
                Ok(answered) => Ok(answered),
                // Boxed apart: rmcp's future is large, and most requests never make it.
                Err(passed) => Box::pin(rmcp_answer(mcp, passed)).await,
            }
        })
    }
}

/// rmcp's answer to `request`.
async fn rmcp_answer(mcp: Arc<McpService>, request: Request) -> Result<Response, Infallible> {
    let delete = request.method() == http::Method::DELETE;
    let mut response = mcp.handle(request).await.map(Body::new);
    // rmcp answers a session `DELETE` with `202 Accepted`; the session is gone by then, and
    // some clients (the Python SDK) accept only `200`/`204` there and log a failure otherwise.
    if delete && response.status() == http::StatusCode::ACCEPTED {
        *response.status_mut() = http::StatusCode::NO_CONTENT;
    }
    Ok(response)
}
