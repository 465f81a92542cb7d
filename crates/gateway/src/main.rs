//! `fusion-gateway`: MCP servers mounted under namespaces, served over stdio (default) or
//! Streamable HTTP (`--http`), every failure an envelope. stdout carries MCP messages only;
//! every log line goes to stderr.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use mcp_fusion::FusionServer;
use mcp_fusion::auth::{Identity, StaticTokens};
use mcp_fusion::contract::Lockfile;
use mcp_fusion::http::{HttpConfig, HttpServer, ListenAddress, OAuth, shutdown_signal};
use mcp_fusion_gateway::Config;
use mcp_fusion_gateway::dev::Dev;
use tracing_subscriber::filter::{FilterExt as _, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};

/// The log's filter when RUST_LOG is unset. rmcp's HTTP client logs an expected loss of an
/// upstream at ERROR ("fail to delete session", "worker quit with fatal"); the gateway logs it
/// once, with what it does next.
const DEFAULT_LOG_FILTER: &str =
    "info,rmcp=warn,rmcp::transport::streamable_http_client=off,rmcp::transport::worker=off";

/// The target of the line that says where HTTP is served: logged whatever RUST_LOG says, as it
/// is what scripts wait for (with port 0, the only place the port shows).
const LISTENING_TARGET: &str = "fusion-gateway";

/// What `--help` ends with: the log, and where the limits are set.
const AFTER_HELP: &str = "\
Logging: every log line goes to stderr (stdout carries MCP messages only). RUST_LOG sets what
is logged, in tracing's EnvFilter syntax (`debug`, `warn`, `info,mcp_fusion::call=debug`);
when it is unset the filter is
info,rmcp=warn,rmcp::transport::streamable_http_client=off,rmcp::transport::worker=off.
The start-up line `listening on http://ADDR/mcp` is logged at INFO whatever RUST_LOG says.
A stdio upstream inherits the gateway's environment, RUST_LOG included, unless its mount's
`env` sets it. What it writes on stderr is logged line by line at INFO on the target
`upstream`, tagged with its mount (`mount=\"crm\" line=\"...\"`); RUST_LOG=info,upstream=off
leaves it out. Lines stderr does not take in time are dropped and counted, never waited for.

Limits: each mount's are set in the --config file. A mount that leaves out timeout_ms fails
a call its upstream has not answered in 60 s with TIMEOUT; one that leaves out max_tools takes
an upstream of at most 1000 tools (one that lists more is served none, and its calls say why);
one that leaves out max_active or rate_limit has no limit on the calls running at once or on
how often a caller may call. An upstream's message may take at most 16 MiB: a call whose
answer is larger gets HANDOFF_UPSTREAM_UNAVAILABLE saying so.";

/// Put MCP servers behind MCP Fusion: each mounted under a namespace, its calls validated
/// with healing sentences, guarded, and failing in envelopes.
#[derive(Debug, Parser)]
#[command(
    name = "fusion-gateway",
    version,
    about,
    after_help = AFTER_HELP,
    subcommand_negates_reqs = true,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// The gateway file: `[[mount]]` tables with `namespace`, `command`+`args`+`env` or
    /// `url` with `token_env` or `token_url`+`client_id_env`+`client_secret_env`(+`scope`),
    /// or `openapi` (an HTTP API's document) with `base_url`, `token_env`, `headers_env`; and
    /// per-mount guards.
    #[arg(long, value_name = "PATH", required = true)]
    config: Option<PathBuf>,
    /// Send the model an incident id instead of the text of internal errors (the log keeps it);
    /// the default of release builds.
    #[arg(long)]
    mask_internal_errors: bool,
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
    /// Require `Authorization: Bearer TOKEN` on every HTTP request (others get 401 before any
    /// session exists); stdio is local and ignores it. Prefer the environment variable: a flag
    /// shows in `ps`.
    #[arg(
        long,
        env = "FUSION_GATEWAY_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true,
        conflicts_with = "oauth_issuer"
    )]
    token: Option<String>,
    /// Check OAuth 2.1 access tokens issued by this authorization server (HTTP only): JWTs
    /// against its published keys (found from its metadata), or, with --oauth-introspect,
    /// opaque tokens; only tokens for --oauth-resource pass. The gateway's metadata for
    /// clients is served at /.well-known/oauth-protected-resource/mcp. Rate limits per caller
    /// and sessions are keyed by the token's subject.
    #[arg(long, value_name = "URL", requires_all = ["http", "oauth_resource"])]
    oauth_issuer: Option<String>,
    /// The gateway's canonical URI, as clients reach it (`https://tools.example.com/mcp`): the
    /// audience its tokens must name. Its host is accepted in the Host header.
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
    /// --oauth-client-id with the secret in FUSION_GATEWAY_OAUTH_CLIENT_SECRET.
    #[arg(long, value_name = "URL", requires_all = ["oauth_issuer", "oauth_client_id"])]
    oauth_introspect: Option<String>,
    /// The gateway's own client id at the introspection endpoint.
    #[arg(long, value_name = "ID", requires = "oauth_introspect")]
    oauth_client_id: Option<String>,
    /// Its secret (prefer the environment variable: a flag shows in `ps`).
    #[arg(
        long,
        env = "FUSION_GATEWAY_OAUTH_CLIENT_SECRET",
        value_name = "SECRET",
        hide_env_values = true,
        requires = "oauth_introspect"
    )]
    oauth_client_secret: Option<String>,
    /// The known-good contracts (`fusion lock`): an upstream whose tools changed since is
    /// logged when it connects, and the changes are told to the model in their validation
    /// errors.
    #[arg(long, value_name = "PATH")]
    lockfile: Option<PathBuf>,
    /// Serve only once every upstream is ready or has failed its first attempt (at most the
    /// connect timeout), so the first `tools/list` already has their tools: for `fusion lock`
    /// and `fusion check`. Without it, calls answer HANDOFF_CONNECTING until then.
    #[arg(long)]
    wait_for_upstreams: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a server under development behind the gateway: `fusion-gateway dev -- cargo run -p
    /// my-server`. Its tools are listed as `dev.{tool}` (see --namespace); each change to the
    /// watched sources stops it and runs the command again, while the client keeps its
    /// connection: calls during a build answer HANDOFF_CONNECTING, a failed build answers
    /// HANDOFF_UPSTREAM_UNAVAILABLE with the compiler's first error until the next change.
    Dev(DevArgs),
}

#[derive(Debug, clap::Args)]
struct DevArgs {
    /// The namespace the server's tools are listed under (`dev.{tool}`).
    #[arg(long, value_name = "NAME", default_value = Dev::DEFAULT_NAMESPACE)]
    namespace: String,
    /// A file or directory whose changes restart the server (repeatable; default: the current
    /// directory). `target/` and hidden files and directories are never watched.
    #[arg(long, value_name = "PATH")]
    watch: Vec<PathBuf>,
    /// Leave out what this pattern matches, written as a line of a .gitignore (`*.db`, `logs/`;
    /// repeatable). What a watched directory's own .gitignore leaves out is left out too.
    #[arg(long, value_name = "GLOB")]
    ignore: Vec<String>,
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio (default 127.0.0.1:8080).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8080")]
    http: Option<ListenAddress>,
    /// Seconds a start, the build included, may take before it counts as failed.
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    connect_timeout_secs: u64,
    /// The command that builds and runs the server, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
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
    tracing_subscriber::registry().with(log).init();
    let ran = match &cli.command {
        Some(Command::Dev(args)) => run_dev(args),
        None => run(&cli),
    };
    // The log's last lines before the error's, which is written straight to stderr.
    drop(log_guard);
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("fusion-gateway: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<()> {
    let path = cli.config.as_ref().context("--config is required")?;
    let config = Config::read(path).with_context(|| format!("--config {}", path.display()))?;
    let gateway = config
        .gateway(|variable| std::env::var(variable).ok())
        .with_context(|| format!("--config {}", path.display()))?;
    let mut builder = FusionServer::builder::<()>("fusion-gateway", env!("CARGO_PKG_VERSION"))
        .requires_identity((cli.token.is_some() || cli.oauth_issuer.is_some()) && cli.http.is_some());
    if cli.mask_internal_errors {
        builder = builder.mask_internal_errors(true);
    }
    if let Some(value_free) = config.value_free_errors {
        builder = builder.value_free_errors(value_free);
    }
    if let Some(search) = config.tool_search {
        builder = builder.tool_search(search);
    }
    if let Some(path) = &cli.lockfile {
        let lockfile = Lockfile::read(path).with_context(|| format!("--lockfile {}", path.display()))?;
        builder = builder.contract_lockfile(lockfile);
    }
    let server = gateway.declare(builder).build(()).context("building the gateway")?;
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        let running = gateway.start(&server);
        if cli.wait_for_upstreams {
            running.settled().await;
        }
        let served = match &cli.http {
            Some(address) => serve_http(server, cli, address).await,
            None => {
                if cli.token.is_some() {
                    tracing::info!(
                        "--token / FUSION_GATEWAY_TOKEN applies to HTTP only; stdio is local and needs none"
                    );
                }
                tracing::info!("fusion-gateway serving MCP on stdio");
                let served = mcp_fusion::serve_stdio(server).await.context("serving MCP on stdio");
                tracing::info!("the client closed the connection; shutting down");
                served
            }
        };
        // The upstreams end with the gateway, whether it served well or not.
        running.shutdown().await;
        served
    })
}

/// `fusion-gateway dev`: the command behind the gateway, restarted on each change.
fn run_dev(args: &DevArgs) -> anyhow::Result<()> {
    let (command, rest) = args.command.split_first().context("no command after `--`")?;
    let mut dev = Dev::new(command, rest)
        .namespace(&args.namespace)
        .connect_timeout(Duration::from_secs(args.connect_timeout_secs));
    for path in &args.watch {
        dev = dev.watch(path);
    }
    for pattern in &args.ignore {
        dev = dev.ignore(pattern);
    }
    let builder = FusionServer::builder::<()>("fusion-gateway dev", env!("CARGO_PKG_VERSION"));
    let server = dev.declare(builder).build(()).context("building the gateway")?;
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        let watching = dev.start(&server)?;
        let served = match &args.http {
            Some(address) => listen(server, HttpConfig::new(address), address).await,
            None => {
                tracing::info!("fusion-gateway dev serving MCP on stdio; the server's tools as {}.*", args.namespace);
                mcp_fusion::serve_stdio(server).await.context("serving MCP on stdio")
            }
        };
        watching.shutdown().await;
        served
    })
}

impl Cli {
    fn http_config(&self, address: &ListenAddress) -> HttpConfig {
        let mut config = HttpConfig::new(address)
            .stateless(self.stateless)
            .max_body_bytes(self.max_body_bytes)
            .max_connections(self.max_connections as usize)
            .header_timeout(Duration::from_secs(self.header_timeout_secs))
            .max_sessions(self.max_sessions as usize)
            .max_sessions_per_caller(self.max_sessions_per_caller as usize)
            .session_idle_timeout(Duration::from_secs(self.session_idle_secs));
        if let Some(token) = &self.token {
            config = config.authenticator(StaticTokens::new().token(token, Identity::new("gateway-client")));
        }
        for origin in &self.allowed_origins {
            config = config.allowed_origin(origin);
        }
        for host in &self.allowed_hosts {
            config = config.allowed_host(host);
        }
        config
    }

    /// `config` checking OAuth access tokens, when `--oauth-issuer` is given: the issuer's
    /// metadata and keys are read now, so a wrong URL fails at start.
    async fn oauth(&self, config: HttpConfig) -> anyhow::Result<HttpConfig> {
        let (Some(issuer), Some(resource)) = (&self.oauth_issuer, &self.oauth_resource) else { return Ok(config) };
        let mut oauth = OAuth::new(issuer, resource);
        if let Some(url) = &self.oauth_jwks {
            oauth = oauth.jwks_url(url);
        }
        oauth = oauth.only_at_jwt(self.oauth_only_at_jwt);
        if let (Some(endpoint), Some(client_id)) = (&self.oauth_introspect, &self.oauth_client_id) {
            let secret = self.oauth_client_secret.clone().context(
                "--oauth-introspect needs the gateway's client secret in FUSION_GATEWAY_OAUTH_CLIENT_SECRET",
            )?;
            oauth = oauth.introspection(endpoint, client_id, secret);
        }
        let config = oauth.configure(config).await.context("--oauth-issuer")?;
        tracing::info!(%issuer, %resource, "checking OAuth access tokens");
        Ok(config)
    }
}

/// Serves HTTP on the first of `address`'s addresses that binds, until a shutdown signal.
async fn serve_http(server: FusionServer, cli: &Cli, address: &ListenAddress) -> anyhow::Result<()> {
    let config = cli.oauth(cli.http_config(address)).await?;
    listen(server, config, address).await
}

/// Serves `server` with `config` until a shutdown signal, saying where.
async fn listen(server: FusionServer, config: HttpConfig, address: &ListenAddress) -> anyhow::Result<()> {
    let http = HttpServer::bind(server, config).await.with_context(|| format!("--http {address}"))?;
    // A fixed line scripts can wait for (with port 0 it is the only place the port shows), logged
    // whatever RUST_LOG says: `… INFO fusion-gateway: listening on http://ADDR/mcp addr=ADDR`.
    let addr = http.local_addr();
    tracing::info!(target: LISTENING_TARGET, %addr, "listening on http://{addr}/mcp");
    http.serve(shutdown_signal()).await.context("serving MCP over HTTP")?;
    tracing::info!("shut down");
    Ok(())
}
