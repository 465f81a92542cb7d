//! How the HTTP transport listens and what it accepts.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::StreamableHttpServerConfig;
use tokio_util::sync::CancellationToken;

use super::listen::IntoListenAddress;
use super::{ListenAddress, ListenAddressError, ProtectedResource};
use crate::auth::Authenticator;
use crate::auth::uri::LOOPBACK_HOSTS;

/// Browser origins of the loopback, over either scheme and on any port.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// How the HTTP transport listens and what it accepts.
#[derive(Clone)]
pub struct HttpConfig {
    /// Where to listen, or why the address given is none (told when binding).
    pub(super) listen: Result<ListenAddress, ListenAddressError>,
    pub(super) path: String,
    stateless: bool,
    allowed_hosts: Option<Vec<String>>,
    allowed_origins: Vec<String>,
    pub(super) max_body_bytes: usize,
    pub(super) shutdown_grace: Duration,
    pub(super) authenticator: Option<Arc<dyn Authenticator>>,
    pub(super) allow_anonymous: bool,
    pub(super) limits: Limits,
    pub(super) client_address_header: Option<http::HeaderName>,
    pub(super) metrics: Option<RenderMetrics>,
    pub(super) protected_resource: Option<Arc<ProtectedResource>>,
    pub(super) scope_refusal: ScopeRefusal,
    pub(super) lists_per_caller: bool,
    pub(super) direct_path: bool,
    #[cfg(feature = "redis")]
    pub(super) session_store: Option<crate::guard::RedisStore>,
    #[cfg(feature = "redis")]
    pub(super) session_store_failure: (crate::guard::FailurePolicy, Duration),
}

/// How a call whose token lacks a scope the entry needs is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ScopeRefusal {
    /// `403` with `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` before the
    /// call runs: the client can ask the user to grant the scope and retry by itself (MCP's
    /// step-up authorization). The default: the fix is the client's, not the model's.
    #[default]
    StepUp,
    /// A `FORBIDDEN` envelope in the call's result, naming the missing scope: the model hears
    /// of it and tells the user — for clients that do not re-authorize on a `403`.
    InBand,
}

/// What `GET /metrics` answers: the text a scraper reads.
pub(super) type RenderMetrics = Arc<dyn Fn() -> String + Send + Sync>;

/// The bounds on what clients may hold open: connections, sessions, and how long they may
/// idle. See [`HttpConfig`]'s setters for each default.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub max_sessions: usize,
    pub max_sessions_per_caller: usize,
    pub session_idle_timeout: Duration,
}

impl HttpConfig {
    /// Listens on `addr`, serving `/mcp`: stateful sessions, requests whose `Host` is the
    /// loopback (`localhost`, `127.0.0.1`, `::1`), browser `Origin`s of the loopback only, bodies
    /// up to 4 MiB, 10 seconds for calls in flight at shutdown.
    ///
    /// `addr` is a `SocketAddr` or `HOST:PORT` text, the host an IP address or a name; a name
    /// may resolve to several addresses, and [`HttpServer::bind`](super::HttpServer::bind)
    /// binds the first that binds (and says what is wrong with a text that is no address):
    ///
    /// ```
    /// use mcp_fusion::http::HttpConfig;
    ///
    /// let config = HttpConfig::new("localhost:8090");
    /// assert!(config.address().unwrap().addrs().iter().all(|addr| addr.ip().is_loopback()));
    /// assert!(HttpConfig::new("localhost").address().is_err()); // no port
    /// ```
    pub fn new(addr: impl IntoListenAddress) -> HttpConfig {
        HttpConfig {
            listen: addr.into_listen_address(),
            path: "/mcp".into(),
            stateless: false,
            allowed_hosts: None,
            allowed_origins: LOOPBACK_ORIGINS.map(String::from).to_vec(),
            max_body_bytes: 4 << 20,
            shutdown_grace: Duration::from_secs(10),
            authenticator: None,
            allow_anonymous: false,
            limits: Limits {
                max_connections: 512,
                header_timeout: Duration::from_secs(10),
                max_sessions: 10_000,
                max_sessions_per_caller: 1_000,
                session_idle_timeout: Duration::from_secs(300),
            },
            client_address_header: None,
            metrics: None,
            protected_resource: None,
            scope_refusal: ScopeRefusal::StepUp,
            lists_per_caller: true,
            direct_path: true,
            #[cfg(feature = "redis")]
            session_store: None,
            #[cfg(feature = "redis")]
            session_store_failure: (crate::guard::FailurePolicy::Open, Duration::from_millis(250)),
        }
    }

    /// The address to listen on, or why the one given is none.
    pub fn address(&self) -> Result<&ListenAddress, &ListenAddressError> {
        self.listen.as_ref()
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

    /// Whether a request whose answer is one JSON body is answered on the connection's own
    /// task (default `true`): a tool call, a list, a read, a prompt, a completion, a ping or
    /// `server/discover`, asking for no progress and no log messages, sent without a session
    /// (stateless, or MCP 2026-07-28 with its version in its `_meta`) or in one whose client
    /// declared neither sampling, elicitation nor roots and set no logging level. The answer
    /// is the one rmcp's service gives, byte for byte, without the tasks and the channels that
    /// service runs for each request; in a session, as JSON rather than a one-message event
    /// stream. `false` sends every request through rmcp's service.
    ///
    /// A handler that sends its own messages through [`CallInfo::peer`](crate::CallInfo::peer) (rather
    /// than the framework's progress, logs and questions) should turn it off: without a stream,
    /// a message sent in the middle of a call has nowhere to go. So should a server whose
    /// handlers close their stream ([`CallInfo::close_sse_stream`](crate::CallInfo::close_sse_stream)):
    /// on this path there is none to close, and the connection stays open through the call.
    pub fn direct_path(mut self, direct: bool) -> HttpConfig {
        self.direct_path = direct;
        self
    }

    /// Accepts this `Host` (`api.example.com`, `api.example.com:8443`) besides the loopback
    /// names. Needed when serving on a public address.
    pub fn allowed_host(mut self, host: impl Into<String>) -> HttpConfig {
        let hosts = self.allowed_hosts.get_or_insert_with(|| LOOPBACK_HOSTS.map(String::from).to_vec());
        hosts.push(host.into());
        self
    }

    /// Accepts `host` too, unless every host is accepted already.
    #[cfg(feature = "oauth")]
    pub(super) fn accept_host(self, host: String) -> HttpConfig {
        match &self.allowed_hosts {
            Some(hosts) if hosts.is_empty() => self,
            _ => self.allowed_host(host),
        }
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

    /// Checks `Authorization: Bearer …` with `authenticator` on every request (`initialize`,
    /// every method, `GET` streams, `DELETE`): a request without a token, with a header that is
    /// not a bearer token, or with a token the authenticator refuses gets `401` with
    /// `WWW-Authenticate` before any session exists. The identity reaches each call as its
    /// [`Caller`](crate::auth::Caller), and a session belongs to the identity that opened it.
    pub fn authenticator(mut self, authenticator: impl Authenticator) -> HttpConfig {
        self.authenticator = Some(Arc::new(authenticator));
        self
    }

    /// With an authenticator, also lets requests without credentials through, as anonymous
    /// callers, and lets refused tokens reach the calls as refused callers: actions then answer
    /// `AUTH_REQUIRED` or `UNAUTHORIZED` envelopes themselves (for servers with public tools).
    /// Off by default: every request must carry an accepted token.
    pub fn allow_anonymous(mut self, allow: bool) -> HttpConfig {
        self.allow_anonymous = allow;
        self
    }

    /// The most connections open at once (default 512); more are closed as they arrive.
    pub fn max_connections(mut self, connections: usize) -> HttpConfig {
        self.limits.max_connections = connections.max(1);
        self
    }

    /// How long a connection may take to send a request's headers, and how long an idle
    /// keep-alive connection is kept (default 10 seconds). Bounds what slow clients can hold.
    pub fn header_timeout(mut self, timeout: Duration) -> HttpConfig {
        self.limits.header_timeout = timeout;
        self
    }

    /// The most sessions alive at once (default 10,000); an `initialize` beyond it gets `503`
    /// with a JSON-RPC error saying so.
    pub fn max_sessions(mut self, sessions: usize) -> HttpConfig {
        self.limits.max_sessions = sessions.max(1);
        self
    }

    /// The most sessions one caller holds at once (default 1,000): one identity when
    /// authenticated, else one client address.
    pub fn max_sessions_per_caller(mut self, sessions: usize) -> HttpConfig {
        self.limits.max_sessions_per_caller = sessions.max(1);
        self
    }

    /// How long a session may go without a request before it ends (default 5 minutes).
    pub fn session_idle_timeout(mut self, timeout: Duration) -> HttpConfig {
        self.limits.session_idle_timeout = timeout;
        self
    }

    /// Serves `GET /metrics` (off by default) with what `render` returns, in the Prometheus
    /// text format: the server sets its gauges
    /// ([`FusionServer::record_gauges`](crate::FusionServer::record_gauges)) just before. It
    /// needs no token, as `/healthz` (always served) does not: scrapers and probes come from
    /// the operator's network, so listen where only that network reaches, or put a proxy in
    /// front. The counts name actions and outcomes, never arguments.
    ///
    /// ```
    /// # fn exporter() -> String { String::new() }
    /// use mcp_fusion::http::HttpConfig;
    ///
    /// let config = HttpConfig::new("127.0.0.1:8080").metrics(exporter);
    /// ```
    pub fn metrics(mut self, render: impl Fn() -> String + Send + Sync + 'static) -> HttpConfig {
        self.metrics = Some(Arc::new(render));
        self
    }

    /// Describes the server as the OAuth protected resource `resource`: its metadata document
    /// is served at the path-aware well-known URI and at `/.well-known/oauth-protected-resource`
    /// (no token needed, the endpoint's `Host` and `Origin` rules apply), and every `401`
    /// names it in `WWW-Authenticate: Bearer resource_metadata="…"`, so that a client can find
    /// where to get a token.
    ///
    /// ```
    /// use mcp_fusion::http::{HttpConfig, ProtectedResource};
    ///
    /// # fn main() -> Result<(), mcp_fusion::http::ProtectedResourceError> {
    /// let resource = ProtectedResource::new("https://mcp.example.com/mcp")?
    ///     .authorization_server("https://auth.example.com")?
    ///     .scopes(["billing:read"])?;
    /// let config = HttpConfig::new("127.0.0.1:8080").protected_resource(resource);
    /// # Ok(())
    /// # }
    /// ```
    pub fn protected_resource(mut self, resource: ProtectedResource) -> HttpConfig {
        self.protected_resource = Some(Arc::new(resource));
        self
    }

    /// How a call whose token lacks a needed scope is refused (default
    /// [`ScopeRefusal::StepUp`]: a `403` the client can re-authorize on).
    pub fn scope_refusal(mut self, refusal: ScopeRefusal) -> HttpConfig {
        self.scope_refusal = refusal;
        self
    }

    /// With an authenticator, whether `tools/list`, `prompts/list`, `resources/list` and the
    /// templates show each caller only what its scopes let it use (default: on). A model that
    /// is shown an action it may not call wastes a turn on it. Contracts and lockfiles still
    /// describe the whole server: they are made from the builder, or by a full-scope caller.
    pub fn lists_per_caller(mut self, per_caller: bool) -> HttpConfig {
        self.lists_per_caller = per_caller;
        self
    }

    /// Takes the client's address from this header (`x-forwarded-for`: its first address)
    /// instead of the connection, for a server behind a proxy that sets it. Off by default:
    /// any client can write the header, so trust it only behind such a proxy.
    pub fn client_address_header(mut self, header: http::HeaderName) -> HttpConfig {
        self.client_address_header = Some(header);
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

    /// Keeps sessions in `store` as well as in this process, so that replicas of this server
    /// behind a load balancer serve each other's sessions (no sticky routing needed): a request
    /// naming a session this process does not hold restores it from there — its owner, protocol
    /// version and client capabilities, logging level and resource subscriptions — and
    /// `resources/updated`, `list_changed` and task notifications reach a session's client
    /// through whichever replica its stream is open on. A session lives in the store until it
    /// idles out there ([`session_idle_timeout`](Self::session_idle_timeout), counted from its
    /// last use through any replica) or its client ends it; a replica that stops takes none
    /// with it. Stateless configurations have no sessions to keep.
    ///
    /// The caps hold across replicas: a caller's open sessions are counted in the store
    /// ([`max_sessions_per_caller`](Self::max_sessions_per_caller)), while
    /// [`max_sessions`](Self::max_sessions) bounds what each process holds in memory.
    ///
    /// When Redis does not answer (see [`session_store_failure`](Self::session_store_failure)),
    /// a request naming a session held elsewhere is answered `503` with `Retry-After`.
    #[cfg(feature = "redis")]
    pub fn session_store(mut self, store: crate::guard::RedisStore) -> HttpConfig {
        self.session_store = Some(store);
        self
    }

    /// How long an `initialize` or a request naming a session held elsewhere waits for the
    /// session store, and what an `initialize` gets when it does not answer in time:
    /// [`FailurePolicy::Open`](crate::guard::FailurePolicy::Open) (the default, with 250 ms)
    /// opens the session all the same, served by this replica only;
    /// [`Closed`](crate::guard::FailurePolicy::Closed) answers `503` with `Retry-After`.
    #[cfg(feature = "redis")]
    pub fn session_store_failure(mut self, policy: crate::guard::FailurePolicy, timeout: Duration) -> HttpConfig {
        self.session_store_failure = (policy, timeout);
        self
    }

    pub(super) fn is_stateless(&self) -> bool {
        self.stateless
    }

    /// The hosts a request may name (the loopback unless configured); empty accepts any.
    pub(super) fn hosts(&self) -> Vec<String> {
        self.allowed_hosts.clone().unwrap_or_else(|| LOOPBACK_HOSTS.map(String::from).to_vec())
    }

    /// The browser origins a request may come from.
    pub(super) fn origins(&self) -> &[String] {
        &self.allowed_origins
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
            .field("listen", &self.listen)
            .field("path", &self.path)
            .field("stateless", &self.stateless)
            .field("authenticated", &self.authenticator.is_some())
            .field("metrics", &self.metrics.is_some())
            .finish_non_exhaustive()
    }
}
