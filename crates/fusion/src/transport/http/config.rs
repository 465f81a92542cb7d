//! How the HTTP transport listens and what it accepts.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::StreamableHttpServerConfig;
use tokio_util::sync::CancellationToken;

use crate::auth::Authenticator;

/// How the HTTP transport listens and what it accepts.
#[derive(Clone)]
pub struct HttpConfig {
    pub(super) addr: SocketAddr,
    pub(super) path: String,
    stateless: bool,
    allowed_hosts: Option<Vec<String>>,
    allowed_origins: Vec<String>,
    max_body_bytes: usize,
    pub(super) shutdown_grace: Duration,
    pub(super) authenticator: Option<Arc<dyn Authenticator>>,
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
    /// its [`Caller`](crate::auth::Caller). A header that is not a usable bearer token gets `401` with
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

    pub(super) fn rmcp_config(&self, sessions: CancellationToken) -> StreamableHttpServerConfig {
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
