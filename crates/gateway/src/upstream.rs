//! Where an upstream MCP server is, and how to reach it.

use process_wrap::tokio::CommandWrap;
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt as _};

use crate::child::ChildTransport;
use crate::handler::UpstreamHandler;
use crate::oversized::Dropped;
use crate::progress::{InOrder, ProgressRoutes};

/// An upstream MCP server: a command spoken to over stdio, or a Streamable HTTP endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Upstream {
    /// A child process: started by the gateway, restarted when it exits, ended with it.
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
    },
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
        Upstream::Http { url: url.into(), token: None }
    }

    /// Adds an environment variable to a stdio upstream (ignored for HTTP).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Upstream {
        if let Upstream::Stdio { env, .. } = &mut self {
            env.push((key.into(), value.into()));
        }
        self
    }

    /// Sends `Authorization: Bearer {token}` to an HTTP upstream (ignored for stdio).
    pub fn token(mut self, token: impl Into<String>) -> Upstream {
        if let Upstream::Http { token: slot, .. } = &mut self {
            *slot = Some(token.into());
        }
        self
    }

    /// What the upstream is, for logs and envelopes: the command, or the URL.
    pub fn describe(&self) -> String {
        match self {
            Upstream::Stdio { command, .. } => command.clone(),
            Upstream::Http { url, .. } => url.clone(),
        }
    }

    /// Starts (stdio) or dials (HTTP) the upstream and completes its `initialize`. Keep the
    /// [`ChildGroup`] for as long as the connection: dropping it ends what is left of a stdio
    /// child's process group.
    pub(crate) async fn connect(
        &self,
        handler: UpstreamHandler,
        routes: ProgressRoutes,
        dropped: Dropped,
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
                let transport = ChildTransport::spawn(child, dropped.clone())
                    .map_err(|error| format!("cannot start {command}: {error}"))?;
                let group = ChildGroup(transport.id());
                let service = handler
                    .serve(InOrder { inner: transport, routes, dropped })
                    .await
                    .map_err(|error| refused(command, &error))?;
                Ok((service, group))
            }
            Upstream::Http { url, token } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone());
                if let Some(token) = token {
                    config = config.auth_header(token.clone());
                }
                let transport = StreamableHttpClientTransport::from_config(config);
                let service = handler
                    .serve(InOrder { inner: transport, routes, dropped })
                    .await
                    .map_err(|error| refused(url, &error))?;
                Ok((service, ChildGroup(None)))
            }
        }
    }
}

/// Why the handshake with `upstream` failed, in words a model can act on; the log has
/// rmcp's own error, which names transport types.
fn refused(upstream: &str, error: &ClientInitializeError) -> String {
    // rmcp's error may carry what the upstream sent: escaped and cut like any echo.
    tracing::debug!(upstream, "the handshake failed: {}", mcp_fusion::wire::echo(&error.to_string()));
    let why = match error {
        ClientInitializeError::ConnectionClosed(_) => "closed the connection during its handshake".to_owned(),
        ClientInitializeError::TransportError { .. } if credentials_refused(error) => {
            "refused the gateway's credentials (HTTP 401/403): check the mount's token".to_owned()
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
    use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};
    let ClientInitializeError::TransportError { error, .. } = error else { return false };
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error.error.as_ref());
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
