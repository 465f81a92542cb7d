//! Streamable HTTP: rmcp's service mounted in axum, with the defaults a production server
//! wants — loopback, `TCP_NODELAY`, Host and Origin checks against DNS rebinding, a body
//! limit, and a graceful shutdown that lets calls in flight finish.
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
pub(crate) mod request;
mod serve;

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::middleware;
use axum::response::Response;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio_util::sync::CancellationToken;

pub use config::HttpConfig;
pub use serve::{HttpServer, shutdown_signal};

use crate::server::FusionServer;

/// The MCP endpoint as rmcp serves it, ready to mount in an axum app.
pub type McpService = StreamableHttpService<FusionServer, LocalSessionManager>;

/// The MCP endpoint for `server`, to mount in your own axum app at a path of your choice.
/// Cancelling `sessions` ends every session and open stream.
pub fn service(server: FusionServer, config: &HttpConfig, sessions: CancellationToken) -> McpService {
    StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config.rmcp_config(sessions),
    )
}

/// A router serving `server` at the configured path (`/mcp`).
pub fn router(server: FusionServer, config: &HttpConfig, sessions: CancellationToken) -> Router {
    let router = Router::new()
        .nest_service(&config.path, service(server, config, sessions))
        .layer(middleware::from_fn(deleted_is_no_content));
    match &config.authenticator {
        Some(authenticator) => {
            router.layer(middleware::from_fn_with_state(Arc::clone(authenticator), auth::authenticate))
        }
        None => router,
    }
}

/// rmcp answers a session `DELETE` with `202 Accepted`; the session is gone by then, and some
/// clients (the Python SDK) accept only `200`/`204` there and log a failure otherwise.
async fn deleted_is_no_content(request: Request, next: middleware::Next) -> Response {
    let delete = request.method() == http::Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == http::StatusCode::ACCEPTED {
        *response.status_mut() = http::StatusCode::NO_CONTENT;
    }
    response
}
