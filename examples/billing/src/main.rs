//! `billing-server`: the MCP Fusion demo over stdio (default) or Streamable HTTP (`--http`).
//! stdout carries MCP messages only; every log line goes to stderr.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use billing_server::{Options, READ_SCOPE, Store, WRITE_SCOPE};
use clap::Parser;
use mcp_fusion::auth::{Identity, StaticTokens};
use mcp_fusion::contract::Lockfile;
use mcp_fusion::guard::{Concurrency, FailurePolicy, RateLimit, RedisStore};
use mcp_fusion::http::{HttpConfig, HttpServer, ListenAddress, OAuth, ScopeRefusal, shutdown_signal};
use mcp_fusion::observe;
use mcp_fusion::resource::SubscriptionLimits;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
use tracing_subscriber::filter::{FilterExt as _, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};

/// jemalloc, with its background thread, gives memory back to the system within seconds of
/// being freed, also when the threads that freed it go idle: the system allocator keeps what
/// 20,000 expired sessions once needed.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read before `main` (the `_RJEM_MALLOC_CONF` variable still overrides
/// them): no thread caches, freed pages handed back at once, unmapped address space not kept.
/// jemalloc never frees the descriptors of its busiest moment, so what stays after a burst of
/// sessions grows with that moment's size: 20,000 sessions peak at about 300 MB and leave about
/// 6 MB behind once they expire, against 950 MB and 14 MB with jemalloc's defaults. The price is
/// CPU per call on HTTP (an arena lock per allocation, pages unmapped as they are freed; see
/// docs/benchmarks.md); stdio changes them at start-up.
#[allow(unsafe_code)]
#[unsafe(export_name = "_rjem_malloc_conf")]
static MALLOC_CONF: &[u8; 43] = b"tcache:false,retain:false,dirty_decay_ms:0\0";

/// How long freed pages stay with the allocator on stdio before they go back to the system.
const STDIO_DIRTY_DECAY_MS: isize = 1_000;

/// The allocator's options for stdio, where one client holds one session and no burst of
/// sessions can come: a thread cache for the serving thread and freed pages kept for a second.
/// The options above cost a `get_invoice` about 36 µs of CPU there (an arena lock on every
/// allocation, pages unmapped on every call), two thirds of the call. Call it on the thread that
/// serves, before any other starts; a `_RJEM_MALLOC_CONF` of the operator's is left alone.
#[allow(unsafe_code)]
fn allocator_for_one_client() {
    use tikv_jemalloc_ctl::raw;
    if std::env::var_os("_RJEM_MALLOC_CONF").is_some() {
        return;
    }
    let tune = || -> tikv_jemalloc_ctl::Result<()> {
        // SAFETY: each value has the type jemalloc documents for its name: `unsigned` for
        // `arenas.narenas`, `ssize_t` for the decay times, `bool` for the thread cache.
        unsafe {
            // Arenas made from now on, then the ones that exist (reading fails for an index
            // not made yet).
            raw::write(b"arenas.dirty_decay_ms\0", STDIO_DIRTY_DECAY_MS)?;
            let arenas: u32 = raw::read(b"arenas.narenas\0")?;
            for index in 0..arenas {
                let name = format!("arena.{index}.dirty_decay_ms\0");
                if raw::read::<isize>(name.as_bytes()).is_ok() {
                    raw::write(name.as_bytes(), STDIO_DIRTY_DECAY_MS)?;
                }
            }
            raw::write(b"thread.tcache.enabled\0", true)
        }
    };
    if let Err(error) = tune() {
        tracing::warn!(%error, "keeping the allocator's options for many sessions");
    }
}

/// The log's filter when RUST_LOG is unset: `info`, with rmcp's own chatter at `warn`.
const DEFAULT_LOG_FILTER: &str = "info,rmcp=warn";

/// The target of the line that says where HTTP is served: logged whatever RUST_LOG says, as it
/// is what scripts wait for (with port 0, the only place the port shows).
const LISTENING_TARGET: &str = "billing-server";

/// What `--help` ends with: the log, and what the limits left out mean.
const AFTER_HELP: &str = "\
Logging: every log line goes to stderr (stdout carries MCP messages only). RUST_LOG sets what
is logged, in tracing's EnvFilter syntax (`debug`, `warn`, `info,mcp_fusion::call=debug`);
when it is unset the filter is info,rmcp=warn. The start-up line
`listening on http://ADDR/mcp` is logged at INFO whatever RUST_LOG says.

Limits: leaving out --max-active means no limit on the calls running at once; leaving out
--rate-limit means no limit on how often a caller may call; leaving out --timeout-ms means no
time limit on an action. Each is unlimited unless given.";

/// The MCP Fusion demo: invoices in SQLite, every failure an envelope.
#[derive(Debug, Parser)]
#[command(name = "billing-server", version, about, after_help = AFTER_HELP)]
struct Cli {
    /// The SQLite file; created, migrated and seeded on first start.
    #[arg(long, value_name = "PATH", default_value = "./billing.db")]
    db: PathBuf,
    /// Send the model an incident id instead of the text of internal errors (the log keeps it);
    /// the default of release builds.
    #[arg(long)]
    mask_internal_errors: bool,
    /// One tool per action (`billing_list_invoices`, …) instead of the one `billing` tool
    /// whose `action` argument picks.
    #[arg(long)]
    flat: bool,
    /// Publish input schemas in the strict subset of OpenAI's and Anthropic's strict tool use:
    /// every field required, optional ones nullable (`null` leaves a field out), bounds and
    /// lengths in the description. Calls are still checked against the full schema.
    #[arg(long)]
    strict_schemas: bool,
    /// Errors never repeat a value the caller sent (only field names, declared constraints and
    /// allowed values), for data that must not be echoed.
    #[arg(long)]
    value_free_errors: bool,
    /// Refuse a string that spells a number or a boolean (`"200"` for an integer) instead of
    /// reading it with an `ARGUMENTS_CONVERTED` warning.
    #[arg(long)]
    no_forgiving_scalars: bool,
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio. ADDR is HOST:PORT, the host an
    /// IP address or a name (`localhost:8080`, `[::1]:8080`); it defaults to 127.0.0.1:8080, and
    /// port 0 picks a free one.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8080")]
    http: Option<ListenAddress>,
    /// HTTP without sessions: every request stands alone, so replicas can share a load balancer.
    #[arg(long, requires = "http")]
    stateless: bool,
    /// Also accept browser requests from this origin (repeatable; the loopback is always accepted).
    #[arg(long = "allowed-origin", value_name = "ORIGIN", requires = "http")]
    allowed_origins: Vec<String>,
    /// Also accept this Host header (repeatable; needed to serve on a public address).
    #[arg(long = "allowed-host", value_name = "HOST", requires = "http")]
    allowed_hosts: Vec<String>,
    /// The largest HTTP request body accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 4 << 20, requires = "http")]
    max_body_bytes: usize,
    /// The most HTTP connections open at once; more are closed as they arrive.
    #[arg(long, value_name = "N", default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..), requires = "http")]
    max_connections: u32,
    /// Seconds a connection may take to send a request's headers, or stay idle between requests.
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..), requires = "http")]
    header_timeout_secs: u64,
    /// The most HTTP sessions alive at once; an `initialize` beyond it gets 503.
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..), requires = "http")]
    max_sessions: u32,
    /// The most HTTP sessions one caller (a token's identity, else an address) holds at once.
    #[arg(long, value_name = "N", default_value_t = 1_000, value_parser = clap::value_parser!(u32).range(1..), requires = "http")]
    max_sessions_per_caller: u32,
    /// Seconds an HTTP session may go without a request before it ends.
    #[arg(long, value_name = "SECS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..), requires = "http")]
    session_idle_secs: u64,
    /// Take the client's address from this header (`x-forwarded-for`), for rate limits per
    /// caller; only behind a proxy that sets it, as any client can send it.
    #[arg(long, value_name = "HEADER", value_parser = parse_header_name, requires = "http")]
    client_address_header: Option<http::HeaderName>,
    /// Calls of the billing tool running at once; more wait in line (see --max-queue). Left
    /// out: no limit.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_active: Option<u32>,
    /// Calls waiting for a slot when --max-active are running; beyond that they are shed with
    /// SERVER_BUSY.
    #[arg(long, value_name = "N", default_value_t = 0, requires = "max_active")]
    max_queue: u32,
    /// At most N calls per SECS seconds per caller (`10/60`): its token's identity, else its
    /// session, else its address; more get RATE_LIMITED. Left out: no limit.
    #[arg(long, value_name = "N/SECS", value_parser = parse_rate_limit)]
    rate_limit: Option<RateLimit>,
    /// Fail an action that runs longer than this with TIMEOUT. Left out: no time limit.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: Option<u64>,
    /// Require `Authorization: Bearer TOKEN` on every HTTP request (others get 401 before any
    /// session exists); stdio is local and ignores it. Prefer the environment variable: a flag
    /// shows in `ps`.
    #[arg(long, env = "BILLING_TOKEN", value_name = "TOKEN", hide_env_values = true, conflicts_with = "oauth_issuer")]
    token: Option<String>,
    /// Check OAuth 2.1 access tokens issued by this authorization server (HTTP only): JWTs
    /// against its published keys (found from its metadata), or, with --oauth-introspect,
    /// opaque tokens. Reads need the scope billing:read, writes billing:write; each caller is
    /// listed only what its scopes allow, and a call its token does not cover is answered 403
    /// so the client can ask for the scope. The server's metadata for clients is served at
    /// /.well-known/oauth-protected-resource/mcp.
    #[arg(long, value_name = "URL", requires_all = ["http", "oauth_resource"])]
    oauth_issuer: Option<String>,
    /// This server's canonical URI, as clients reach it (`https://billing.example.com/mcp`):
    /// the audience its tokens must name. Its host is accepted in the Host header.
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    oauth_resource: Option<String>,
    /// Read the issuer's keys from this JWK set URL instead of its metadata's jwks_uri.
    #[arg(long, value_name = "URL", requires = "oauth_issuer", conflicts_with = "oauth_introspect")]
    oauth_jwks: Option<String>,
    /// Take only JWTs typed at+jwt (RFC 9068); by default a token typed JWT, or not typed, is
    /// taken too, as most issuers type their access tokens so. ID and logout tokens never are.
    #[arg(long, requires = "oauth_issuer", conflicts_with = "oauth_introspect")]
    oauth_only_at_jwt: bool,
    /// Check opaque tokens at this RFC 7662 introspection endpoint, as the OAuth client
    /// --oauth-client-id with the secret in BILLING_OAUTH_CLIENT_SECRET.
    #[arg(long, value_name = "URL", requires_all = ["oauth_issuer", "oauth_client_id"])]
    oauth_introspect: Option<String>,
    /// This server's own client id at the introspection endpoint.
    #[arg(long, value_name = "ID", requires = "oauth_introspect")]
    oauth_client_id: Option<String>,
    /// Its secret (prefer the environment variable: a flag shows in `ps`).
    #[arg(
        long,
        env = "BILLING_OAUTH_CLIENT_SECRET",
        value_name = "SECRET",
        hide_env_values = true,
        requires = "oauth_introspect"
    )]
    oauth_client_secret: Option<String>,
    /// How a call is refused whose token lacks the scope it needs: `step-up` answers 403 with
    /// the scope to ask for (the client re-authorizes), `in-band` a FORBIDDEN envelope the model
    /// reads (for clients that do not re-authorize).
    #[arg(long, value_name = "HOW", value_enum, default_value_t = Refusal::StepUp, requires = "oauth_issuer")]
    oauth_scope_refusal: Refusal,
    /// Count --rate-limit and keep idempotency keys, tasks and (with --http) sessions in this
    /// Redis (`redis://[:PASSWORD@]HOST:PORT[/DB]`), shared by every replica using it, instead
    /// of in this process: replicas behind a load balancer serve each other's sessions. Redis
    /// down (at start too) never blocks a call: --redis-failure decides for the rate limit, and
    /// a write with a key is answered SERVER_BUSY.
    #[arg(long, env = "BILLING_REDIS_URL", value_name = "URL", hide_env_values = true)]
    redis: Option<String>,
    /// Where HTTP sessions are kept: `redis` (the default with --redis) shares them with every
    /// replica on that Redis; `local` keeps them in this process (replicas then need a load
    /// balancer that sends each session's requests to the replica that opened it).
    #[arg(long, value_name = "WHERE", value_enum, requires = "http")]
    session_store: Option<SessionStore>,
    /// How many idempotency keys this process keeps in memory (without --redis). Each write
    /// also keeps its key in the database, bound to its caller and arguments: a key memory
    /// forgot (a restart, more keys than this) is still answered from there.
    #[arg(long, value_name = "N", default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    idempotency_keys: u64,
    /// The known-good contracts (`fusion lock`): what changed since is logged at start-up and
    /// told to the model in the validation errors of the changed actions.
    #[arg(long, value_name = "PATH")]
    lockfile: Option<PathBuf>,
    /// When Redis cannot answer: `open` admits the call, `closed` refuses it with RATE_LIMITED.
    #[arg(long, value_name = "POLICY", value_enum, default_value_t = RedisFailure::Open, requires = "redis")]
    redis_failure: RedisFailure,
    /// How long a call waits for Redis before --redis-failure applies.
    #[arg(long, value_name = "MS", default_value_t = 250, value_parser = clap::value_parser!(u64).range(1..), requires = "redis")]
    redis_timeout_ms: u64,
    /// The most resource URIs one subscriptions/listen request may ask for; more are refused.
    #[arg(long, value_name = "N", default_value_t = SubscriptionLimits::default().uris_per_listen(), value_parser = at_least_one)]
    max_uris_per_listen: usize,
    /// The most resource URIs one session (an HTTP session, the stdio connection) may hold,
    /// its subscriptions and open listens together.
    #[arg(long, value_name = "N", default_value_t = SubscriptionLimits::default().uris_per_session(), value_parser = at_least_one)]
    max_subscriptions_per_session: usize,
    /// The most resource URIs held across the server, every session together.
    #[arg(long, value_name = "N", default_value_t = SubscriptionLimits::default().uris_in_total(), value_parser = at_least_one)]
    max_subscriptions: usize,
    /// How long the user's answer to void_invoice's confirmation is taken, on MCP 2026-07-28
    /// (where the question travels with the call's sealed requestState). Default: 10 minutes.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    request_state_ttl_ms: Option<u64>,
    /// How long export_invoices takes at least, in milliseconds (a client that supports tasks
    /// gets a task to poll meanwhile).
    #[arg(long, value_name = "MS", default_value_t = 3000)]
    export_delay_ms: u64,
    /// How long this replica vouches for a task it runs before renewing: a task whose replica
    /// died (kill -9) reads `failed` once its lease lapsed. Default: 30 s.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(30..))]
    task_lease_ms: Option<u64>,
    /// Log a line of load figures every SECS seconds: the runtime's live tasks and the calls in
    /// flight (at `info`, on stderr).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    stats_secs: Option<u64>,
    /// Serve Prometheus metrics at http://ADDR/metrics: calls by action and outcome, their
    /// latency, calls in flight, the concurrency guard's line. Off by default; like /healthz
    /// (always served) it needs no token, so listen where only your network reaches.
    #[arg(long, requires = "http")]
    metrics: bool,
    /// Export each call's span over OpenTelemetry (OTLP/HTTP) to OTEL_EXPORTER_OTLP_ENDPOINT,
    /// http://localhost:4318 by default; the spans not yet sent are flushed on exit.
    #[cfg(feature = "otlp")]
    #[arg(long)]
    otlp: bool,
}

/// What `--oauth-scope-refusal` chooses.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Refusal {
    /// 403 insufficient_scope, naming the scope: the client asks the user and retries.
    StepUp,
    /// A FORBIDDEN envelope naming the scope: the model tells the user.
    InBand,
}

/// What `--session-store` chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SessionStore {
    Local,
    Redis,
}

/// What `--redis-failure` chooses.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum RedisFailure {
    /// Admit the call unchecked: availability first.
    Open,
    /// Refuse the call with RATE_LIMITED: the limit first.
    Closed,
}

/// An HTTP header's name, like `x-forwarded-for`.
fn parse_header_name(text: &str) -> Result<http::HeaderName, String> {
    http::HeaderName::from_bytes(text.as_bytes())
        .map_err(|_| format!("expected an HTTP header name, like x-forwarded-for, not {text:?}"))
}

/// A count of at least one.
fn at_least_one(text: &str) -> Result<usize, String> {
    text.parse().ok().filter(|&n| n > 0).ok_or_else(|| format!("expected a whole number above zero, not {text:?}"))
}

/// `N/SECS`, like `10/60`.
fn parse_rate_limit(text: &str) -> Result<RateLimit, String> {
    let expected = || format!("expected N/SECS with whole numbers above zero, like 10/60, not {text:?}");
    let (calls, seconds) = text.split_once('/').ok_or_else(expected)?;
    let calls: u32 = calls.trim().parse().map_err(|_| expected())?;
    let seconds: u64 = seconds.trim().parse().map_err(|_| expected())?;
    if calls == 0 || seconds == 0 {
        return Err(expected());
    }
    Ok(RateLimit::new(calls, Duration::from_secs(seconds)))
}

impl Cli {
    fn options(&self) -> Options {
        Options {
            mask_internal_errors: self.mask_internal_errors.then_some(true),
            flat: self.flat,
            strict_schemas: self.strict_schemas,
            value_free_errors: self.value_free_errors,
            no_forgiving_scalars: self.no_forgiving_scalars,
            concurrency: self.max_active.map(|active| Concurrency::new(active as usize, self.max_queue as usize)),
            rate_limit: self.rate_limit.clone(),
            timeout: self.timeout_ms.map(Duration::from_millis),
            request_state_ttl: self.request_state_ttl_ms.map(Duration::from_millis),
            export_delay: Some(Duration::from_millis(self.export_delay_ms)),
            task_lease: self.task_lease_ms.map(Duration::from_millis),
            require_identity: (self.token.is_some() || self.oauth_issuer.is_some()) && self.http.is_some(),
            scopes: self.oauth_issuer.is_some() && self.http.is_some(),
            idempotency_keys: usize::try_from(self.idempotency_keys).unwrap_or(usize::MAX),
            // The store is connected and the lockfile read in `run`.
            redis: None,
            lockfile: None,
            subscription_limits: SubscriptionLimits::default()
                .per_listen(self.max_uris_per_listen)
                .per_session(self.max_subscriptions_per_session)
                .total(self.max_subscriptions),
            rate_limit_failure: self.redis.as_ref().map(|_| {
                let policy = match self.redis_failure {
                    RedisFailure::Open => FailurePolicy::Open,
                    RedisFailure::Closed => FailurePolicy::Closed,
                };
                (policy, Duration::from_millis(self.redis_timeout_ms))
            }),
        }
    }

    fn http_config(&self, address: &ListenAddress) -> HttpConfig {
        let mut config = HttpConfig::new(address)
            .stateless(self.stateless)
            .max_body_bytes(self.max_body_bytes)
            .max_connections(self.max_connections as usize)
            .header_timeout(Duration::from_secs(self.header_timeout_secs))
            .max_sessions(self.max_sessions as usize)
            .max_sessions_per_caller(self.max_sessions_per_caller as usize)
            .session_idle_timeout(Duration::from_secs(self.session_idle_secs));
        if let Some(header) = &self.client_address_header {
            config = config.client_address_header(header.clone());
        }
        if let Some(token) = &self.token {
            config = config.authenticator(StaticTokens::new().token(token, Identity::new("billing-client")));
        }
        for origin in &self.allowed_origins {
            config = config.allowed_origin(origin);
        }
        for host in &self.allowed_hosts {
            config = config.allowed_host(host);
        }
        config.scope_refusal(match self.oauth_scope_refusal {
            Refusal::StepUp => ScopeRefusal::StepUp,
            Refusal::InBand => ScopeRefusal::InBand,
        })
    }

    /// `config` checking OAuth access tokens, when `--oauth-issuer` is given: the issuer's
    /// metadata and keys are read now, so a wrong URL fails at start.
    async fn oauth(&self, config: HttpConfig) -> anyhow::Result<HttpConfig> {
        let (Some(issuer), Some(resource)) = (&self.oauth_issuer, &self.oauth_resource) else { return Ok(config) };
        let mut oauth = OAuth::new(issuer, resource).scopes([READ_SCOPE, WRITE_SCOPE]);
        if let Some(url) = &self.oauth_jwks {
            oauth = oauth.jwks_url(url);
        }
        oauth = oauth.only_at_jwt(self.oauth_only_at_jwt);
        if let Some(endpoint) = &self.oauth_introspect {
            let client_id = self.oauth_client_id.clone().unwrap_or_default();
            let secret = self.oauth_client_secret.clone().context(
                "--oauth-introspect needs this server's client secret in BILLING_OAUTH_CLIENT_SECRET (or --oauth-client-secret)",
            )?;
            oauth = oauth.introspection(endpoint, client_id, secret);
        }
        let config = oauth.configure(config).await.context("--oauth-issuer")?;
        tracing::info!(%issuer, %resource, "checking OAuth access tokens");
        Ok(config)
    }

    /// The Prometheus recorder of `--metrics`, installed, and what renders its text; `None`
    /// without the flag.
    fn metrics(&self) -> anyhow::Result<Option<impl Fn() -> String + Send + Sync + 'static>> {
        if !self.metrics {
            return Ok(None);
        }
        let latency = Matcher::Full(observe::CALL_DURATION_SECONDS.to_owned());
        let handle = PrometheusBuilder::new()
            .set_buckets_for_metric(latency, observe::DURATION_BUCKETS)?
            .install_recorder()
            .context("installing the metrics recorder")?;
        Ok(Some(move || {
            // What a scrape reads is kept current here rather than by a task of its own.
            handle.run_upkeep();
            handle.render()
        }))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The log's filter is the fmt layer's own, so that the events of a call still reach a client
    // that set a logging level (`mcp_fusion::logging`).
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_LOG_FILTER));
    let listening = Targets::new().with_target(LISTENING_TARGET, tracing::Level::INFO);
    // Every value escaped and cut: a client's JSON-RPC id or tool name is data in the log,
    // never a line of its own or a terminal escape.
    // Lines are dropped, never waited on, when stderr is a pipe nobody reads (a stdio client
    // may ignore it): a blocked log would stop the calls that log.
    let (stderr, log_guard) = mcp_fusion::logging::stderr();
    let log = tracing_subscriber::fmt::layer()
        .with_writer(stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .fmt_fields(mcp_fusion::observe::EscapedFields::new())
        .with_filter(filter.or(listening));
    let subscriber = tracing_subscriber::registry().with(log).with(mcp_fusion::logging::layer());
    #[cfg(feature = "otlp")]
    let (subscriber, otlp) = {
        let (layer, guard) = match cli.otlp.then(|| mcp_fusion::observe::otlp::layer("billing-server")).transpose() {
            Ok(exporting) => exporting.unzip(),
            Err(error) => {
                eprintln!("billing-server: error: --otlp: {error}");
                return ExitCode::FAILURE;
            }
        };
        (subscriber.with(layer), guard)
    };
    subscriber.init();
    let ran = run(&cli);
    // The log's last lines before the error's, which is written straight to stderr.
    drop(log_guard);
    let code = match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // One line with the whole cause chain: what an operator needs, and no backtrace
            // even when RUST_BACKTRACE is set.
            eprintln!("billing-server: error: {error:#}");
            ExitCode::FAILURE
        }
    };
    // The last spans go out before the process ends; a collector gone by then costs a line.
    #[cfg(feature = "otlp")]
    if let Some(Err(error)) = otlp.map(mcp_fusion::observe::otlp::OtlpGuard::shutdown) {
        eprintln!("billing-server: warning: --otlp: {error}");
    }
    code
}

fn run(cli: &Cli) -> anyhow::Result<()> {
    let store = Store::open(&cli.db)?;
    // One thread serves stdio best: one client's short calls gain nothing from a second
    // worker, and no task crosses threads (about half the CPU per call, docs/benchmarks.md).
    // SQLite writes still go to the blocking pool.
    let runtime = match cli.http {
        Some(_) => tokio::runtime::Runtime::new(),
        None => {
            allocator_for_one_client();
            tokio::runtime::Builder::new_current_thread().enable_all().build()
        }
    }
    .context("starting the async runtime")?;
    let mut options = cli.options();
    if let Some(path) = &cli.lockfile {
        options.lockfile = Some(Lockfile::read(path).with_context(|| format!("--lockfile {}", path.display()))?);
    }
    if let Some(url) = &cli.redis {
        // Fails only on a malformed URL; an unreachable Redis is logged and --redis-failure applies.
        options.redis = Some(runtime.block_on(RedisStore::connect(url.as_str())).context("--redis")?);
    }
    let server = billing_server::server(store, &options).context("building the billing server")?;
    if let Some(every) = cli.stats_secs {
        runtime.spawn(log_stats(server.clone(), Duration::from_secs(every)));
    }
    match &cli.http {
        Some(address) => {
            let sessions = match (cli.session_store, &options.redis) {
                (Some(SessionStore::Redis), None) => anyhow::bail!("--session-store redis needs --redis URL"),
                (Some(SessionStore::Local), _) | (None, None) => None,
                (_, Some(store)) => Some((store.clone(), options.rate_limit_failure.unwrap_or_default())),
            };
            runtime.block_on(serve_http(server, cli, address, sessions))
        }
        None => {
            if cli.token.is_some() {
                tracing::info!("--token / BILLING_TOKEN applies to HTTP only; stdio is local and needs none");
            }
            tracing::info!(db = %cli.db.display(), "billing-server serving MCP on stdio");
            if std::io::stdin().is_terminal() {
                // Started by hand rather than by a client: say how to reach it.
                tracing::info!(
                    "waiting for an MCP client on stdin: add this binary to a client's configuration as its command, \
                     try one call with `fusion call --stdio \"billing-server --db PATH\" billing.list_invoices '{{}}'`, \
                     or serve HTTP with --http 127.0.0.1:8080; Ctrl-D stops it"
                );
            }
            runtime.block_on(mcp_fusion::serve_stdio(server)).context("serving MCP on stdio")?;
            tracing::info!("the client closed the connection; shutting down");
            Ok(())
        }
    }
}

/// Every `every`, one line of what an operator watches for leaks: live tasks, calls in flight.
async fn log_stats(server: mcp_fusion::FusionServer, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    loop {
        ticks.tick().await;
        let tasks = tokio::runtime::Handle::current().metrics().num_alive_tasks();
        tracing::info!(tasks, calls_in_flight = server.in_flight(), "stats");
    }
}

/// Serves HTTP on the first of `address`'s addresses that binds, until a shutdown signal.
async fn serve_http(
    server: mcp_fusion::FusionServer,
    cli: &Cli,
    address: &ListenAddress,
    sessions: Option<(RedisStore, (FailurePolicy, Duration))>,
) -> anyhow::Result<()> {
    let mut config = cli.oauth(cli.http_config(address)).await?;
    if let Some((store, (policy, timeout))) = sessions {
        // As for the rate limit: --redis-failure and --redis-timeout-ms.
        config = config.session_store(store).session_store_failure(policy, timeout);
    }
    if let Some(render) = cli.metrics()? {
        config = config.metrics(render);
    }
    let http = HttpServer::bind(server, config).await.with_context(|| format!("--http {address}"))?;
    // A fixed line scripts can wait for (with port 0 it is the only place the port shows), logged
    // whatever RUST_LOG says: `… INFO billing-server: listening on http://ADDR/mcp addr=ADDR`.
    let addr = http.local_addr();
    tracing::info!(target: LISTENING_TARGET, %addr, "listening on http://{addr}/mcp");
    http.serve(shutdown_signal()).await.context("serving MCP over HTTP")?;
    tracing::info!("shut down");
    Ok(())
}
