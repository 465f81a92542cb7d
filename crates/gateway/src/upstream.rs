//! Where an upstream MCP server is, and how to reach it.

use std::sync::Arc;

use process_wrap::tokio::CommandWrap;
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt as _};

use crate::bearer::{Authorized, Tokens, token_error, upstream_client};
use crate::build_log::BuildLog;
use crate::child::ChildTransport;
use crate::credentials::ClientCredentials;
use crate::handler::UpstreamHandler;
use crate::oversized::Dropped;
use crate::progress::{InOrder, ProgressRoutes};
use crate::rest::ApiSource;

/// An upstream MCP server: a command spoken to over stdio, or a Streamable HTTP endpoint.
///
/// `Debug` leaves out an HTTP upstream's token and client secret.
#[derive(Clone, PartialEq, Eq)]
pub enum Upstream {
    /// A child process: started by the gateway, restarted when it exits, ended with it. What
    /// it writes on stderr is logged line by line, on
    /// [`UPSTREAM_LOG_TARGET`](crate::UPSTREAM_LOG_TARGET) with the mount's namespace.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment variables added to the gateway's.
        env: Vec<(String, String)>,
    },
    /// A server already running somewhere.
    Http {
        /// The endpoint (`https://crm.example.com/mcp`).
        url: String,
        /// A bearer token sent with every request.
        token: Option<String>,
        /// Where the gateway gets its bearer token itself, and renews it before it expires
        /// (the OAuth 2.0 client-credentials grant), instead of a fixed `token`.
        credentials: Option<ClientCredentials>,
    },
    /// An HTTP API an OpenAPI document describes: each operation a tool, each call one request.
    OpenApi {
        /// Where the document is: a file's path, or an `http(s)://` URL.
        document: String,
        /// Where the operations' paths are joined; by default the document's first server
        /// (relative to the document's URL), else the origin the document came from.
        base_url: Option<String>,
        /// Headers sent with every request, and with the document's (its credentials).
        headers: Vec<(String, String)>,
    },
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Upstream::Stdio { command, args, env } => {
                f.debug_struct("Stdio").field("command", command).field("args", args).field("env", env).finish()
            }
            Upstream::Http { url, token, credentials } => f
                .debug_struct("Http")
                .field("url", url)
                .field("token", &token.as_ref().map(|_| "<redacted>"))
                .field("credentials", credentials)
                .finish(),
            Upstream::OpenApi { document, base_url, headers } => f
                .debug_struct("OpenApi")
                .field("document", document)
                .field("base_url", base_url)
                .field("headers", &headers.iter().map(|(name, _)| (name, "<redacted>")).collect::<Vec<_>>())
                .finish(),
        }
    }
}

impl Upstream {
    /// The program `command` with `args`, over stdio.
    pub fn stdio<I, S>(command: impl Into<String>, args: I) -> Upstream
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Upstream::Stdio { command: command.into(), args: args.into_iter().map(Into::into).collect(), env: Vec::new() }
    }

    /// The Streamable HTTP endpoint `url`.
    pub fn http(url: impl Into<String>) -> Upstream {
        Upstream::Http { url: url.into(), token: None, credentials: None }
    }

    /// The HTTP API the OpenAPI document at `document` (a file's path, or an `http(s)://` URL;
    /// JSON or YAML, OpenAPI 3 or Swagger 2.0) describes: each operation a tool, each call one
    /// request.
    pub fn openapi(document: impl Into<String>) -> Upstream {
        Upstream::OpenApi { document: document.into(), base_url: None, headers: Vec::new() }
    }

    /// Where an OpenAPI upstream's operations are served (ignored for the others), instead of
    /// the document's first server.
    pub fn base_url(mut self, url: impl Into<String>) -> Upstream {
        if let Upstream::OpenApi { base_url, .. } = &mut self {
            *base_url = Some(url.into());
        }
        self
    }

    /// Sends the header `name: value` with every request to an OpenAPI upstream (ignored for
    /// the others): an API key, say. A call's own header parameters never replace it.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Upstream {
        if let Upstream::OpenApi { headers, .. } = &mut self {
            headers.push((name.into(), value.into()));
        }
        self
    }

    /// Adds an environment variable to a stdio upstream (ignored for HTTP).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Upstream {
        if let Upstream::Stdio { env, .. } = &mut self {
            env.push((key.into(), value.into()));
        }
        self
    }

    /// Sends `Authorization: Bearer {token}` to an HTTP or OpenAPI upstream (ignored for
    /// stdio), in place of any [`client_credentials`](Upstream::client_credentials).
    pub fn token(mut self, token: impl Into<String>) -> Upstream {
        match &mut self {
            Upstream::Http { token: slot, credentials, .. } => {
                *slot = Some(token.into());
                *credentials = None;
            }
            Upstream::OpenApi { .. } => return self.header("Authorization", format!("Bearer {}", token.into())),
            Upstream::Stdio { .. } => {}
        }
        self
    }

    /// Gets the bearer token of an HTTP upstream from `credentials`' token endpoint, the
    /// upstream's URL as its resource, and renews it before it expires (ignored for stdio);
    /// in place of any [`token`](Upstream::token).
    pub fn client_credentials(mut self, credentials: ClientCredentials) -> Upstream {
        if let Upstream::Http { token, credentials: slot, .. } = &mut self {
            *slot = Some(credentials);
            *token = None;
        }
        self
    }

    /// The token cache of an upstream dialled with client credentials: one per mount, kept
    /// across its reconnections.
    pub(crate) fn tokens(&self) -> Option<Arc<Tokens>> {
        match self {
            Upstream::Http { url, credentials: Some(credentials), .. } => {
                Some(Arc::new(Tokens::new(credentials.clone(), url.clone())))
            }
            _ => None,
        }
    }

    /// Where an OpenAPI upstream's document is and what its requests carry; `None` for an MCP
    /// server.
    pub(crate) fn api(&self) -> Option<ApiSource<'_>> {
        match self {
            Upstream::OpenApi { document, base_url, headers } => {
                Some(ApiSource { document, base_url: base_url.as_deref(), headers })
            }
            _ => None,
        }
    }

    /// What the upstream is, for logs and envelopes: the command, the URL, or the document.
    pub fn describe(&self) -> String {
        match self {
            Upstream::Stdio { command, .. } => command.clone(),
            Upstream::Http { url, .. } => url.clone(),
            Upstream::OpenApi { document, .. } => document.clone(),
        }
    }

    /// Starts (stdio) or dials (HTTP) the upstream and completes its `initialize`, with the
    /// mount's `tokens` if it has client credentials; a stdio child's stderr logged under
    /// `mount`, and read through `build_log` when one is given. Keep the [`ChildGroup`] for as
    /// long as the connection: dropping it ends what is left of a stdio child's process group.
    pub(crate) async fn connect(
        &self,
        tokens: Option<&Arc<Tokens>>,
        handler: UpstreamHandler,
        routes: ProgressRoutes,
        dropped: Dropped,
        mount: &str,
        build_log: Option<&BuildLog>,
    ) -> Result<(RunningService<RoleClient, UpstreamHandler>, ChildGroup), String> {
        match self {
            Upstream::Stdio { command, args, env } => {
                let mut child = CommandWrap::with_new(command, |child| {
                    child.args(args).envs(env.iter().map(|(k, v)| (k, v)));
                });
                // Signals and kills reach the whole group: a launcher's own children too.
                #[cfg(unix)]
                child.wrap(process_wrap::tokio::ProcessGroup::leader());
                // The child's logs go where the gateway's go; its stdout is the MCP channel,
                // measured so that an answer too large to read still answers its call.
                let transport = ChildTransport::spawn(child, dropped.clone(), mount, build_log)
                    .map_err(|error| format!("cannot start {command}: {error}"))?;
                let group = ChildGroup(transport.id());
                let service = handler
                    .serve(InOrder { inner: transport, routes, dropped })
                    .await
                    .map_err(|error| refused(command, &error, "its credentials"))?;
                Ok((service, group))
            }
            Upstream::Http { url, token, credentials } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone());
                let service = match tokens.cloned().or_else(|| self.tokens()) {
                    None => {
                        if let Some(token) = token {
                            config = config.auth_header(token.clone());
                        }
                        let transport = StreamableHttpClientTransport::from_config(config);
                        handler.serve(InOrder { inner: transport, routes, dropped }).await
                    }
                    // The token goes with each request, from the mount's cache: see `bearer`.
                    Some(tokens) => {
                        let http = upstream_client().map_err(|error| format!("cannot make an HTTP client: {error}"))?;
                        let transport = StreamableHttpClientTransport::with_client(Authorized { http, tokens }, config);
                        handler.serve(InOrder { inner: transport, routes, dropped }).await
                    }
                };
                let check = match credentials {
                    Some(credentials) => format!(
                        "the client's access at the authorization server ({}), and its `scope`",
                        credentials.token_url()
                    ),
                    None => "the mount's token".to_owned(),
                };
                let service = service.map_err(|error| refused(url, &error, &check))?;
                Ok((service, ChildGroup(None)))
            }
            // The supervisor serves an API without a connection.
            Upstream::OpenApi { document, .. } => Err(format!("{document} describes an HTTP API, not an MCP server")),
        }
    }
}

/// Why the handshake with `upstream` failed, in words a model can act on; the log has
/// rmcp's own error, which names transport types. `check` is what to check when the
/// upstream refuses the credentials.
fn refused(upstream: &str, error: &ClientInitializeError, check: &str) -> String {
    // rmcp's error may carry what the upstream sent: escaped and cut like any echo.
    tracing::debug!(upstream, "the handshake failed: {}", mcp_fusion::wire::echo(&error.to_string()));
    let why = match error {
        ClientInitializeError::ConnectionClosed(_) => "closed the connection during its handshake".to_owned(),
        // The token endpoint's URL says more than the upstream's here, and an envelope keeps
        // only the first 240 characters of a reason: the upstream's is left out.
        ClientInitializeError::TransportError { error, .. } if let Some(token) = token_error(error.error.as_ref()) => {
            return format!("the gateway got no token for it: {token}");
        }
        ClientInitializeError::TransportError { .. } if credentials_refused(error) => {
            format!("refused the gateway's credentials (HTTP 401/403): check {check}")
        }
        ClientInitializeError::TransportError { .. } => "could not be reached".to_owned(),
        ClientInitializeError::JsonRpcError(data) => {
            format!("refused the handshake: {}", mcp_fusion::wire::Sent::text(&data.message))
        }
        ClientInitializeError::NoCompatibleProtocolVersion { .. } => {
            "speaks no MCP protocol version this gateway speaks".to_owned()
        }
        _ => "answered its handshake with something unexpected".to_owned(),
    };
    format!("{upstream} {why}")
}

/// Whether the handshake failed on the upstream's refusal of our credentials.
fn credentials_refused(error: &ClientInitializeError) -> bool {
    let ClientInitializeError::TransportError { error, .. } = error else { return false };
    refuses_credentials(error.error.as_ref())
}

/// Whether a transport's `error` is the upstream refusing our credentials (401 or 403 with
/// a challenge).
pub(crate) fn refuses_credentials(error: &(dyn std::error::Error + 'static)) -> bool {
    use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};
    let mut cause = Some(error);
    while let Some(current) = cause {
        if current.is::<AuthRequiredError>() || current.is::<InsufficientScopeError>() {
            return true;
        }
        cause = current.source();
    }
    false
}

/// The process group a stdio child leads. When it drops — the child has exited, or been
/// stopped — whatever the child started and left behind is killed, so nothing outlives its
/// connection.
#[derive(Debug)]
pub(crate) struct ChildGroup(Option<u32>);

impl Drop for ChildGroup {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(leader) = self.0.and_then(|pid| i32::try_from(pid).ok()) {
            use nix::sys::signal::{Signal, killpg};
            // ESRCH: the group is already empty, which is the usual case.
            let _ = killpg(nix::unistd::Pid::from_raw(leader), Signal::SIGKILL);
        }
    }
}
