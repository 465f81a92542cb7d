//! Put any MCP server behind MCP Fusion.
//!
//! A [`Gateway`] mounts upstream MCP servers — a command spoken to over stdio, or a
//! Streamable HTTP endpoint — each under a namespace of a [`FusionServer`]. The upstream's tool
//! `search` is listed as `crm.search`, with its schema, description, annotations and output
//! schema; a call is checked against the upstream's schema with this framework's healing
//! sentences, passes the mount's guards (rate limit, concurrency, timeout), and is forwarded
//! with its progress and cancellation; the upstream's result comes back as it came. Local
//! groups and mounts live side by side in one server.
//!
//! While an upstream starts or reconnects its calls answer `HANDOFF_CONNECTING`, a warning
//! with `retry_after` 2; while it is down, `HANDOFF_UPSTREAM_UNAVAILABLE` with the seconds
//! until the next attempt; a namespace or tool that does not exist, `HANDOFF_NAMESPACE_MISMATCH`
//! with a did-you-mean. A crashed child is restarted and an HTTP upstream re-dialled with
//! exponential [`Backoff`]; each time an upstream's tools come, go or change, the server's
//! clients are told `notifications/tools/list_changed`. One slow upstream never holds up the
//! others: each mount has its own supervisor.
//!
//! What an upstream sends is bounded and checked like any outside input: a call waits at most
//! [`Mount::DEFAULT_TIMEOUT`] (60 s) unless the mount says otherwise; an upstream listing more
//! than [`Mount::max_tools`] tools (default 1000) is served none; an answer over rmcp's 16 MiB
//! frame cap answers its call at once with `HANDOFF_UPSTREAM_UNAVAILABLE`; tool names outside
//! MCP's `[A-Za-z0-9_.-]{1,128}` are not served; and what the upstream says reaches envelopes
//! and log lines quoted and escaped.
//!
//! A stdio upstream's stderr is read by the gateway, never shared with it: each line is a
//! `tracing` event at INFO on [`UPSTREAM_LOG_TARGET`] (`upstream`), with the mount's namespace
//! as `mount` and the line as `line` (at most 8 KiB of it; `cut_bytes` says how much more
//! there was). A child therefore never waits on a stderr nobody reads; give the subscriber a
//! writer that does not wait either (`mcp_fusion::logging::stderr()`, as `fusion-gateway` does),
//! and one that escapes values (`mcp_fusion::observe::EscapedFields`), as the line is the
//! upstream's text.
//!
//! ```no_run
//! use mcp_fusion::FusionServer;
//! use mcp_fusion::handoff::Mount;
//! use mcp_fusion_gateway::{Gateway, Upstream};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let gateway = Gateway::new()
//!     .mount(Mount::new("billing"), Upstream::stdio("billing-server", ["--db", "billing.db"]))
//!     .mount(Mount::new("crm"), Upstream::http("https://crm.example.com/mcp").token("secret"));
//! let server = gateway.declare(FusionServer::builder::<()>("gateway", "1.0")).build(())?;
//! let running = gateway.start(&server);
//! mcp_fusion::serve_stdio(server).await?;
//! running.shutdown().await; // ends the children
//! # Ok(()) }
//! ```
//!
//! An HTTP API described by an OpenAPI document mounts the same way
//! ([`Upstream::openapi`]; OpenAPI 3, or Swagger 2.0 converted by [`swagger::convert`], in JSON
//! or YAML): each operation a tool checked with the same sentences, each call one request,
//! and the API's status the envelope (404 `NOT_FOUND`, 429 `RATE_LIMITED` with its
//! `Retry-After`, …; the whole table is in [`Config`]'s documentation).
//!
//! An HTTP upstream is sent a fixed bearer token ([`Upstream::token`]), or one the gateway
//! gets itself with the OAuth 2.0 client-credentials grant ([`Upstream::client_credentials`]
//! with [`ClientCredentials`]): asked of the authorization server's token endpoint with HTTP
//! Basic and the upstream's URL as the resource (RFC 8707), kept per mount, renewed before it
//! expires on the connection it serves, and fetched again once when the upstream answers 401.
//! A token endpoint that refuses says why in a [`TokenError`], its words escaped.
//!
//! The `fusion-gateway` binary does the same from a TOML file ([`Config`]); `fusion-gateway
//! dev` runs a server under development behind it, restarted on each change to its sources
//! ([`dev`]).

mod backoff;
mod bearer;
mod build_log;
mod child;
mod config;
mod credentials;
pub mod dev;
mod forward;
mod handler;
pub mod openapi;
mod oversized;
mod progress;
mod rest;
mod stderr;
mod supervisor;
pub mod swagger;
mod upstream;
mod yaml;

use std::sync::Arc;
use std::time::Duration;

use mcp_fusion::FusionServer;
use mcp_fusion::ServerBuilder;
use mcp_fusion::handoff::Mount;
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

pub use backoff::Backoff;
pub use config::{Config, ConfigError, MountConfig};
pub use credentials::{AccessToken, ClientCredentials, TokenError};
pub use stderr::UPSTREAM_LOG_TARGET;
pub use upstream::Upstream;

use supervisor::{Settled, Supervisor};

/// Upstream MCP servers, each mounted under a namespace of a [`FusionServer`].
#[derive(Debug, Clone)]
pub struct Gateway {
    mounts: Vec<(Mount, Upstream)>,
    backoff: Backoff,
    connect_timeout: Duration,
    keepalive: Duration,
    /// Whether its stdio upstreams build themselves (`fusion-gateway dev`): their stderr read
    /// for the compiler's first error, and a start that fails waits for a restart instead of
    /// a backoff.
    rebuilds: bool,
}

impl Default for Gateway {
    fn default() -> Gateway {
        Gateway::new()
    }
}

impl Gateway {
    /// No mounts; reconnects with [`Backoff::default`]; an upstream that has not finished its
    /// handshake (or its `tools/list`, or a ping) within 10 s counts as failed; each upstream
    /// is pinged every 15 s.
    pub fn new() -> Gateway {
        Gateway {
            mounts: Vec::new(),
            backoff: Backoff::default(),
            connect_timeout: Duration::from_secs(10),
            keepalive: Duration::from_secs(15),
            rebuilds: false,
        }
    }

    /// Mounts `upstream` under `mount`'s namespace.
    pub fn mount(mut self, mount: Mount, upstream: Upstream) -> Gateway {
        self.mounts.push((mount, upstream));
        self
    }

    /// How long to wait between attempts to reach an upstream.
    pub fn backoff(mut self, backoff: Backoff) -> Gateway {
        self.backoff = backoff;
        self
    }

    /// How long an upstream may take to start, complete its handshake and list its tools.
    pub fn connect_timeout(mut self, timeout: Duration) -> Gateway {
        self.connect_timeout = timeout;
        self
    }

    /// How often a connected upstream is pinged: an HTTP upstream that went away is otherwise
    /// found out only by the next call to it (a stdio child's exit is seen at once).
    pub fn keepalive(mut self, interval: Duration) -> Gateway {
        self.keepalive = interval.max(Duration::from_millis(10));
        self
    }

    /// Makes its stdio upstreams ones that build themselves before they serve (`cargo run`):
    /// see [`dev`].
    pub(crate) fn rebuilding(mut self) -> Gateway {
        self.rebuilds = true;
        self
    }

    /// The mounts, in the order they were added.
    pub fn mounts(&self) -> impl Iterator<Item = (&Mount, &Upstream)> {
        self.mounts.iter().map(|(mount, upstream)| (mount, upstream))
    }

    /// Declares every mount on `builder`, so the built server answers `HANDOFF_CONNECTING`
    /// for them from the first call and compares a lockfile's contracts of their tools when
    /// they connect.
    pub fn declare<S: Send + Sync + 'static>(&self, builder: ServerBuilder<S>) -> ServerBuilder<S> {
        self.mounts.iter().fold(builder, |builder, (mount, _)| builder.mount(mount.clone()))
    }

    /// Starts one supervisor per mount on the current Tokio runtime: each connects its
    /// upstream, keeps `server`'s namespace in step with it, and reconnects when it drops.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime.
    pub fn start(self, server: &FusionServer) -> Running {
        let stop = CancellationToken::new();
        let mut supervisors = JoinSet::new();
        let mounts = self.mounts.len();
        let (settled, settling) = tokio::sync::watch::channel(0);
        let mut restarts = Vec::with_capacity(mounts);
        for (mount, upstream) in self.mounts {
            let restart = Arc::new(Notify::new());
            restarts.push((mount.namespace().to_owned(), Arc::clone(&restart)));
            let supervisor = Supervisor {
                restart,
                rebuilds: self.rebuilds,
                server: server.clone(),
                mount,
                tokens: upstream.tokens(),
                upstream,
                backoff: self.backoff,
                connect_timeout: self.connect_timeout,
                keepalive: self.keepalive,
                stop: stop.clone(),
                settled: Settled::new(settled.clone()),
            };
            supervisors.spawn(supervisor.run());
        }
        Running { stop, supervisors, mounts, settling, restarts }
    }
}

/// The supervisors of a started [`Gateway`]. Dropping it stops them too, without waiting for
/// the children to end: call [`Running::shutdown`] for that.
#[derive(Debug)]
pub struct Running {
    stop: CancellationToken,
    supervisors: JoinSet<()>,
    mounts: usize,
    settling: tokio::sync::watch::Receiver<usize>,
    restarts: Vec<(String, Arc<Notify>)>,
}

impl Running {
    /// Ends the connection of the mount `namespace` and connects again at once, with no
    /// backoff: a stdio child is stopped and started anew (a start in progress too), an HTTP
    /// upstream dialled again, an API's document read again. `false` when no mount has that
    /// namespace.
    pub fn restart(&self, namespace: &str) -> bool {
        let Some(restart) = self.restarter(namespace) else { return false };
        restart.notify_one();
        true
    }

    /// What restarts the mount `namespace`, for a task of its own to hold.
    pub(crate) fn restarter(&self, namespace: &str) -> Option<Arc<Notify>> {
        self.restarts.iter().find(|(mounted, _)| mounted == namespace).map(|(_, restart)| Arc::clone(restart))
    }

    /// Completes when every mount's first attempt has ended — its upstream ready, or failed
    /// once — so a `tools/list` answered after it lists every tool that could be reached.
    pub async fn settled(&self) {
        let mut settling = self.settling.clone();
        // The sender lives as long as a supervisor does; once they are all gone nothing is
        // left to wait for.
        let _ = settling.wait_for(|settled| *settled >= self.mounts).await;
    }

    /// Disconnects every upstream and waits until each stdio child has exited (asked to close
    /// its stdin first, then `SIGTERM`, then killed).
    pub async fn shutdown(mut self) {
        self.stop.cancel();
        while let Some(ended) = self.supervisors.join_next().await {
            if let Err(error) = ended {
                tracing::error!("a mount's supervisor failed: {error}");
            }
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
