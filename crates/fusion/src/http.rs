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

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware;
use axum::response::Response;
use axum::serve::ListenerExt as _;
use futures_util::StreamExt as _;
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::auth::{Authenticator, Caller};
use crate::in_flight::InFlight;
use crate::server::FusionServer;

/// The MCP endpoint as rmcp serves it, ready to mount in an axum app.
pub type McpService = StreamableHttpService<FusionServer, LocalSessionManager>;

/// How the HTTP transport listens and what it accepts.
#[derive(Clone)]
pub struct HttpConfig {
    addr: SocketAddr,
    path: String,
    stateless: bool,
    allowed_hosts: Option<Vec<String>>,
    allowed_origins: Vec<String>,
    max_body_bytes: usize,
    shutdown_grace: Duration,
    authenticator: Option<Arc<dyn Authenticator>>,
}

impl HttpConfig {
    /// Listens on `addr`, serving `/mcp`: stateful sessions, requests whose `Host` is the
    /// loopback (`localhost`, `127.0.0.1`, `::1`), browser `Origin`s of the loopback only, bodies
    /// up to 4 MiB, 10 seconds for calls in flight at shutdown.
    pub fn new(addr: SocketAddr) -> HttpConfig {
        HttpConfig {
            addr,
            path: "/mcp".into(),
            stateless: false,
            allowed_hosts: None,
            allowed_origins: ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"].map(String::from).to_vec(),
            max_body_bytes: 4 << 20,
            shutdown_grace: Duration::from_secs(10),
            authenticator: None,
        }
    }

    /// The address to listen on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint path (default `/mcp`).
    pub fn path(mut self, path: impl Into<String>) -> HttpConfig {
        self.path = path.into();
        self
    }

    /// Stateless mode: no sessions, plain JSON responses, any replica can answer any request
    /// (for several replicas behind a load balancer).
    pub fn stateless(mut self, stateless: bool) -> HttpConfig {
        self.stateless = stateless;
        self
    }

    /// Accepts this `Host` (`api.example.com`, `api.example.com:8443`) besides the loopback
    /// names. Needed when serving on a public address.
    pub fn allowed_host(mut self, host: impl Into<String>) -> HttpConfig {
        let hosts =
            self.allowed_hosts.get_or_insert_with(|| ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec());
        hosts.push(host.into());
        self
    }

    /// Accepts any `Host` (behind a proxy that checks it).
    pub fn allow_any_host(mut self) -> HttpConfig {
        self.allowed_hosts = Some(Vec::new());
        self
    }

    /// Accepts browser requests from this origin (`https://app.example.com`,
    /// `http://localhost:*`) besides the loopback. Requests without `Origin` (every non-browser
    /// client) are always accepted; a present `Origin` not listed gets `403`.
    pub fn allowed_origin(mut self, origin: impl Into<String>) -> HttpConfig {
        self.allowed_origins.push(origin.into());
        self
    }

    /// Checks `Authorization: Bearer …` with `authenticator`; the verdict reaches each call as
    /// its [`Caller`]. A header that is not a usable bearer token gets `401` with
    /// `WWW-Authenticate`; a token the authenticator refuses gets `UNAUTHORIZED` envelopes.
    pub fn authenticator(mut self, authenticator: impl Authenticator) -> HttpConfig {
        self.authenticator = Some(Arc::new(authenticator));
        self
    }

    /// The largest request body accepted; larger ones get `413`.
    pub fn max_body_bytes(mut self, bytes: usize) -> HttpConfig {
        self.max_body_bytes = bytes;
        self
    }

    /// How long calls in flight may take to finish after a shutdown signal.
    pub fn shutdown_grace(mut self, grace: Duration) -> HttpConfig {
        self.shutdown_grace = grace;
        self
    }

    fn rmcp_config(&self, sessions: CancellationToken) -> StreamableHttpServerConfig {
        let mut config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(!self.stateless)
            .with_json_response(self.stateless)
            .with_allowed_origins(self.allowed_origins.clone())
            .enforce_origin_validation()
            .with_max_request_body_bytes(self.max_body_bytes)
            .with_cancellation_token(sessions);
        match &self.allowed_hosts {
            None => {}
            Some(hosts) if hosts.is_empty() => config = config.disable_allowed_hosts(),
            Some(hosts) => config = config.with_allowed_hosts(hosts.clone()),
        }
        config
    }
}

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
        Some(authenticator) => router.layer(middleware::from_fn_with_state(Arc::clone(authenticator), authenticate)),
        None => router,
    }
}

/// Reads the bearer token and attaches the caller it stands for to the request.
async fn authenticate(
    State(authenticator): State<Arc<dyn Authenticator>>,
    mut request: Request,
    next: middleware::Next,
) -> Response {
    let caller = match request.headers().get(http::header::AUTHORIZATION) {
        None => Caller::Anonymous,
        Some(value) => match bearer_token(value) {
            Some(token) => match authenticator.authenticate(token).await {
                Ok(identity) => Caller::Authenticated(identity),
                Err(reason) => Caller::Refused(reason),
            },
            None => return unusable_credentials(),
        },
    };
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// The token of `Bearer <token>` (RFC 6750 syntax), if that is what the header holds.
fn bearer_token(value: &http::HeaderValue) -> Option<&str> {
    let value = value.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    let token_char = |c: char| c.is_ascii_alphanumeric() || "-._~+/=".contains(c);
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() && token.chars().all(token_char)).then_some(token)
}

fn unusable_credentials() -> Response {
    let mut response =
        Response::new(Body::from("401 Unauthorized: the Authorization header must be `Bearer <token>`."));
    *response.status_mut() = http::StatusCode::UNAUTHORIZED;
    response.headers_mut().insert(
        http::header::WWW_AUTHENTICATE,
        http::HeaderValue::from_static(
            r#"Bearer error="invalid_request", error_description="expected a bearer token""#,
        ),
    );
    response
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

/// Counts POST requests until their response body is fully sent (or dropped). A call is done
/// for the client only when its response has left, which in stateful mode is on an SSE stream
/// after the handler returned; standalone GET streams are not counted: they never end by
/// themselves.
async fn count_posts(State(in_flight): State<InFlight>, request: Request, next: middleware::Next) -> Response {
    if request.method() != http::Method::POST {
        return next.run(request).await;
    }
    let guard = in_flight.enter();
    let response = next.run(request).await;
    response.map(|body| {
        let stream = body.into_data_stream().map(move |chunk| {
            let _held_until_the_body_ends = &guard;
            chunk
        });
        Body::from_stream(stream)
    })
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConfig")
            .field("addr", &self.addr)
            .field("path", &self.path)
            .field("stateless", &self.stateless)
            .field("authenticated", &self.authenticator.is_some())
            .finish_non_exhaustive()
    }
}

/// A bound HTTP server, ready to serve.
#[derive(Debug)]
pub struct HttpServer {
    listener: TcpListener,
    server: FusionServer,
    config: HttpConfig,
}

impl HttpServer {
    /// Binds the configured address (port 0 picks a free one; see [`HttpServer::local_addr`]).
    pub async fn bind(server: FusionServer, config: HttpConfig) -> std::io::Result<HttpServer> {
        let listener = TcpListener::bind(config.addr).await?;
        Ok(HttpServer { listener, server, config })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().unwrap_or(self.config.addr)
    }

    /// Serves until `shutdown` completes, then stops accepting connections, lets the calls in
    /// flight finish (up to the grace period), closes sessions and returns.
    pub async fn serve(self, shutdown: impl Future<Output = ()> + Send + 'static) -> std::io::Result<()> {
        let HttpServer { listener, server, config } = self;
        let sessions = CancellationToken::new();
        let stopping = CancellationToken::new();
        let responding = InFlight::default();
        let app = router(server.clone(), &config, sessions.clone())
            .layer(middleware::from_fn_with_state(responding.clone(), count_posts));
        let grace = config.shutdown_grace;

        let drain = {
            let (sessions, stopping) = (sessions.clone(), stopping.clone());
            tokio::spawn(async move {
                shutdown.await;
                tracing::info!(
                    in_flight = server.in_flight(),
                    "shutting down: no new connections, finishing calls in flight"
                );
                stopping.cancel();
                if tokio::time::timeout(grace, responding.idle()).await.is_err() {
                    tracing::warn!(in_flight = server.in_flight(), "grace period over with calls still running");
                }
                // Ends open SSE streams and sessions, so their connections can close.
                sessions.cancel();
            })
        };

        // Nagle plus delayed ACKs cost ~40 ms a request on small JSON-RPC messages.
        let listener = listener.tap_io(|tcp| {
            if let Err(error) = tcp.set_nodelay(true) {
                tracing::warn!("cannot set TCP_NODELAY: {error}");
            }
        });
        let serving = axum::serve(listener, app).with_graceful_shutdown(stopping.clone().cancelled_owned());
        let deadline = async {
            stopping.cancelled().await;
            tokio::time::sleep(grace + Duration::from_secs(2)).await;
        };
        let result = tokio::select! {
            result = serving => result,
            () = deadline => {
                tracing::warn!("connections still open after the grace period; closing them");
                Ok(())
            }
        };
        drain.abort();
        result
    }
}

/// Completes on SIGTERM or Ctrl-C (SIGINT).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!("cannot listen for Ctrl-C: {error}");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::error!("cannot listen for SIGTERM: {error}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}
