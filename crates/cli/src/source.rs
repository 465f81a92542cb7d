//! Where a server's tools come from: a live server (stdio or HTTP) or a saved `tools/list`.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{ArgGroup, Args};
use rmcp::model::Tool;
use serde_json::Value;

use crate::connect::{SERVER_GROUP, Server, Token};
use crate::input;

/// The server whose contracts to read, or a saved `tools/list` of it: exactly one of
/// `--stdio`, `--url`, `--tools`.
#[derive(Debug, Args)]
#[group(skip)]
// clap's derive cannot nest the server's group in another, so the three arguments form their
// own group, and the server's group no longer requires one of its two.
#[command(
    mut_group(SERVER_GROUP, |group| group.required(false)),
    group(ArgGroup::new("source").args(["stdio", "url", "tools"]).required(true).multiple(false)),
)]
pub struct ToolSource {
    #[command(flatten)]
    server: Server,
    /// Read a saved `tools/list` result: `{"tools": [...]}`.
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
}

impl ToolSource {
    /// The tools, from wherever they are; a saved `tools/list` of at most `max_input_bytes`.
    pub async fn read(&self, token: &Token, max_input_bytes: u64) -> anyhow::Result<Vec<Tool>> {
        if let Some(path) = &self.tools {
            let text = input::read_file(path, &format!("--tools {}", path.display()), max_input_bytes)?;
            return tools_from_json(&text).with_context(|| format!("reading the tools of {}", path.display()));
        }
        let client = self.server.connect(token).await?;
        let tools = client.tools();
        let _ = client.close().await;
        Ok(tools)
    }
}

/// The tools of a saved `tools/list` result.
fn tools_from_json(text: &str) -> anyhow::Result<Vec<Tool>> {
    let value: Value = serde_json::from_str(text).context("the file is not JSON")?;
    let tools = value
        .get("tools")
        .filter(|tools| tools.is_array())
        .context("expected a tools/list result: an object with a \"tools\" array")?;
    serde_json::from_value(tools.clone()).context("a tool does not match the MCP Tool shape (name, inputSchema, …)")
}
