//! Streamable HTTP: rmcp's service mounted in axum, with the defaults a production server
//! wants — loopback, `TCP_NODELAY`, Host and Origin checks against DNS rebinding, a body
//! limit, requests read one way only, a bearer token on every request when an authenticator
//! is set, sessions owned by their caller and capped, bounded connections and slow clients,
//! and a graceful shutdown that lets calls in flight finish.
//!
//! ```no_run
//! use mcp_fusion::http::{HttpConfig, HttpServer, shutdown_signal};
//! # async fn run(server: mcp_fusion::FusionServer) -> std::io::Result<()> {
//! let http = HttpServer::bind(server, HttpConfig::new("127.0.0.1:8080")).await?;
//! eprintln!("listening on http://{}/mcp", http.local_addr());
//! http.serve(shutdown_signal()).await
//! # }
//! ```
//!
//! The checks in front of rmcp are tower layers, each usable alone in an axum app:
//! [`StrictRequestLayer`], [`ClientAddressLayer`], [`BearerAuthLayer`], [`SessionLayer`],
//! [`FramingLayer`], [`ResponseCountLayer`], and [`HostOriginLayer`] for routes beside the
//! endpoint. [`router`] composes them in their order around [`McpEndpoint`], which answers a
//! request whose answer is one JSON body itself, on the connection's task
//! ([`HttpConfig::direct_path`]), and hands everything else to rmcp.

mod bearer;
mod check;
mod config;
mod deadlines;
mod direct;
mod endpoint;
mod frames;
mod listen;
#[cfg(feature = "oauth")]
mod oauth;
mod probes;
mod protected_resource;
mod rebinding;
mod refusal;
pub(crate) mod request;
mod responses;
mod serve;
mod sessions;
#[cfg(feature = "redis")]
mod shared_sessions;
mod step_up;
mod strict;
#[cfg(test)]
mod testing;

use std::sync::Arc;

use axum::Router;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use tokio_util::sync::CancellationToken;

pub(crate) use bearer::bearer_token;
pub use bearer::{BearerAuth, BearerAuthLayer};
pub use config::{HttpConfig, ScopeRefusal};
pub use endpoint::{CheckedEndpoint, McpEndpoint};
pub use frames::{Framing, FramingLayer};
pub use listen::{IntoListenAddress, ListenAddress, ListenAddressError};
#[cfg(feature = "oauth")]
pub use oauth::{OAuth, OAuthSetupError};
pub use protected_resource::{ProtectedResource, ProtectedResourceError};
pub use rebinding::{HostOrigin, HostOriginLayer};
pub use request::{ClientAddressLayer, ResolveClientAddress};
pub use responses::{CountResponses, ResponseCountLayer, ResponsesInFlight};
pub use serve::{HttpServer, shutdown_signal};
pub use sessions::{OwnedSessions, SessionCheck, SessionLayer};
pub use strict::{StrictRequest, StrictRequestLayer};

use crate::server::FusionServer;

/// rmcp's MCP service, with none of the checks: what [`McpEndpoint`] serves.
pub type McpService = StreamableHttpService<FusionServer, OwnedSessions>;

/// The MCP endpoint for `server` with every check of [`router`] in front of rmcp, to mount in
/// your own axum app at a path of your choice. Cancelling `sessions` ends every session and
/// open stream. To compose the checks otherwise, build the layers themselves around an
/// [`McpEndpoint`] (see [`SessionLayer::endpoint`]).
pub fn service(server: FusionServer, config: &HttpConfig, sessions: CancellationToken) -> CheckedEndpoint {
    endpoint::checked(server, config, sessions, None)
}

fn service_with(
    server: FusionServer,
    config: rmcp::transport::StreamableHttpServerConfig,
    manager: Arc<OwnedSessions>,
) -> McpService {
    StreamableHttpService::new(move || Ok(server.clone()), manager, config)
}

/// A router serving `server` at the configured path (`/mcp`), behind the checks, outermost
/// first: [`ResponseCountLayer`] (for [`HttpServer`]'s graceful shutdown), [`StrictRequestLayer`],
/// [`ClientAddressLayer`], [`BearerAuthLayer`] (when an authenticator is configured),
/// [`SessionLayer`] (unless stateless), [`FramingLayer`], then rmcp ([`McpEndpoint`], which
/// applies the `Host` and `Origin` rules of [`HostOriginLayer`] itself). With
/// [`axum::serve()`], serve it `into_make_service_with_connect_info` so that the client's
/// address is known; [`HttpServer`] does that itself.
///
/// With a [`ProtectedResource`] configured, the router also serves its metadata document at
/// its well-known paths.
pub fn router(server: FusionServer, config: &HttpConfig, sessions: CancellationToken) -> Router {
    let mut router = Router::new().nest_service(&config.path, service(server, config, sessions));
    if let Some(resource) = &config.protected_resource {
        let [path_aware, bare] = resource.metadata_paths();
        let paths = if path_aware == bare { vec![bare] } else { vec![path_aware, bare] };
        for path in paths {
            let resource = Arc::clone(resource);
            let document = axum::routing::get(move || std::future::ready(probes::metadata_document(&resource)));
            router = router.route(path, document.layer(HostOriginLayer::new(config)));
        }
    }
    router
}
