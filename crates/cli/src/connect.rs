//! Where the server is: a command to spawn over stdio, or a Streamable HTTP URL.

use anyhow::Context as _;
use clap::Args;
use mcp_fusion_client::FusionClient;

/// The argument group of `--stdio` and `--url`.
pub const SERVER_GROUP: &str = "server";

/// How to reach the server: the one declaration of `--stdio` and `--url`, required here and
/// made optional where another source may stand in (`--tools`).
#[derive(Debug, Args)]
#[group(id = SERVER_GROUP, required = true, multiple = false)]
pub struct Server {
    /// Spawn this command and talk MCP over its stdio (run by `sh -c`, so quote it whole).
    #[arg(long, value_name = "CMD")]
    pub stdio: Option<String>,
    /// Connect to this Streamable HTTP endpoint (`http://127.0.0.1:8080/mcp`).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
}

/// A bearer token for `--url` (or the FUSION_TOKEN environment variable).
#[derive(Debug, Args)]
pub struct Token {
    /// Send `Authorization: Bearer TOKEN` (HTTP only).
    #[arg(long, env = "FUSION_TOKEN", value_name = "TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

impl Server {
    /// Connects and reads the server's tools.
    pub async fn connect(&self, token: &Token) -> anyhow::Result<FusionClient> {
        match (&self.stdio, &self.url) {
            (Some(command), _) => {
                let mut child = tokio::process::Command::new("sh");
                // `exec` so the server is the child itself and ends with the connection.
                child.arg("-c").arg(format!("exec {command}"));
                FusionClient::spawn(child).await.with_context(|| format!("starting and initializing `{command}`"))
            }
            (None, Some(url)) => FusionClient::connect_http(url, token.token.as_deref())
                .await
                .with_context(|| format!("connecting to {url}")),
            (None, None) => anyhow::bail!("give the server with --stdio CMD or --url URL"),
        }
    }
}
