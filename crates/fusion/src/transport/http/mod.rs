//! Streamable HTTP: rmcp's service mounted in axum, with the defaults a production server
//! wants — loopback, `TCP_NODELAY`, Host and Origin checks against DNS rebinding, a body
//! limit, requests read one way only, a bearer token on every request when an authenticator
//! is set, sessions owned by their caller and capped, bounded connections and slow clients,
//! and a graceful shutdown that lets calls in flight finish.
//!
//! ```no_run
//! use mcp_fusion::http::{HttpConfig, HttpServer, shutdown_signal};
//! # async fn run(server: mcp_fusion::FusionServer) -> std::io::Result<()> {
//! let http = HttpServer::bind(server, HttpConfig::new("127.0.0.1:8080".parse().unwrap())).await?;
//! eprintln!("listening on http://{}/mcp", http.local_addr());
//! http.serve(shutdown_signal()).await
//! # }
//! ```

mod auth;
mod config;
mod deadlines;
mod endpoint;
mod frames;
mod listen;
mod probes;
mod rebinding;
mod refusal;
pub(crate) mod request;
mod serve;
mod sessions;
mod strict;

use std::sync::Arc;

use axum::Router;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use tokio_util::sync::CancellationToken;

pub use config::HttpConfig;
pub use listen::{ListenAddress, ListenAddressError};
pub use serve::{HttpServer, shutdown_signal};
pub use sessions::OwnedSessions;

use crate::in_flight::InFlight;
use crate::server::FusionServer;
use sessions::Registry;

/// The MCP endpoint as rmcp serves it, ready to mount in an axum app.
pub type McpService = StreamableHttpService<FusionServer, OwnedSessions>;

/// The MCP endpoint for `server`, to mount in your own axum app at a path of your choice.
/// Cancelling `sessions` ends every session and open stream. Authentication, session owners
/// and caps, and the strict reading of requests are layers of [`router`]: mount that unless
/// you bring your own. Behind this service alone, calls see no session (nothing checks that a
/// request's session header names a live session, so none counts), and so no
/// [`peer`](crate::CallInfo::peer).
pub fn service(server: FusionServer, config: &HttpConfig, sessions: CancellationToken) -> McpService {
    service_with(server, config, sessions, Registry::new(config.limits))
}

fn service_with(
    server: FusionServer,
    config: &HttpConfig,
    sessions: CancellationToken,
    registry: Arc<Registry>,
) -> McpService {
    StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(OwnedSessions::new(config.limits, registry)),
        config.rmcp_config(sessions),
    )
}

/// A router serving `server` at the configured path (`/mcp`). For a request, in order: the
/// strict reading of HTTP, the client's address, the bearer token, the session's owner and
/// caps, the body read as JSON-RPC (and its id not already in flight), then MCP. With
/// [`axum::serve()`], serve it `into_make_service_with_connect_info` so that the client's
/// address is known; [`HttpServer`] does that itself.
pub fn router(server: FusionServer, config: &HttpConfig, sessions: CancellationToken) -> Router {
    Router::new().nest_service(&config.path, endpoint(server, config, sessions, None))
}

/// The endpoint of [`router`], counting POST requests in `responding` until their response
/// has been sent.
fn endpoint(
    server: FusionServer,
    config: &HttpConfig,
    sessions: CancellationToken,
    responding: Option<InFlight>,
) -> endpoint::Endpoint {
    let registry = Registry::new(config.limits);
    let subscription_limits = server.subscription_limits();
    let gate = config.authenticator.as_ref().map(|authenticator| auth::Gate {
        authenticator: Arc::clone(authenticator),
        allow_anonymous: config.allow_anonymous,
    });
    let checks = endpoint::Checks {
        mcp: service_with(server, config, sessions, Arc::clone(&registry)),
        hosts: config.hosts(),
        client_address_header: config.client_address_header.clone(),
        gate,
        registry: (!config.is_stateless()).then_some(registry),
        frames: frames::Frames::new(config.max_body_bytes, subscription_limits),
        responding,
    };
    endpoint::Endpoint::new(checks)
}
