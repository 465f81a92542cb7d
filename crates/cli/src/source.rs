//! Where a server's contracts come from: a live server (stdio or HTTP) or a saved listing.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{ArgGroup, Args};
use rmcp::model::{Prompt, ResourceTemplate, Tool};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::connect::{SERVER_GROUP, Server, Token, Verbose};
use crate::input;

/// The server whose contracts to read, or a saved listing of it: exactly one of `--stdio`,
/// `--url`, `--tools`.
#[derive(Debug, Args)]
#[group(skip)]
// clap's derive cannot nest the server's group in another, so the three arguments form their
// own group, and the server's group, which requires one of its two, is made optional here.
#[command(
    mut_group(SERVER_GROUP, |group| group.required(false)),
    group(ArgGroup::new("source").args(["stdio", "url", "tools"]).required(true).multiple(false)),
)]
pub struct ToolSource {
    #[command(flatten)]
    server: Server,
    /// Read a saved `tools/list` result, `{"tools": [...]}`, with optionally the `prompts`
    /// of a `prompts/list` and the `resourceTemplates` of a `resources/templates/list` beside
    /// it.
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
}

/// What a server lists that its contracts are read from.
#[derive(Debug, Default)]
pub struct Listing {
    /// `tools/list`.
    pub tools: Vec<Tool>,
    /// `prompts/list`.
    pub prompts: Vec<Prompt>,
    /// `resources/templates/list`.
    pub resource_templates: Vec<ResourceTemplate>,
}

impl ToolSource {
    /// The listing, from wherever it is; a saved one of at most `max_input_bytes`.
    pub async fn read(&self, token: &Token, verbose: &Verbose, max_input_bytes: u64) -> anyhow::Result<Listing> {
        if let Some(path) = &self.tools {
            let text = input::read_file(path, &format!("--tools {}", path.display()), max_input_bytes)?;
            return listing_from_json(&text).with_context(|| format!("reading the listing of {}", path.display()));
        }
        let client = self.server.connect(token, verbose).await?;
        let listing = async {
            let prompts = client.prompts().await.context("listing the server's prompts")?;
            let resource_templates =
                client.resource_templates().await.context("listing the server's resource templates")?;
            anyhow::Ok(Listing { tools: client.tools(), prompts, resource_templates })
        }
        .await;
        let _ = client.close().await;
        listing
    }
}

/// The listing of a saved `tools/list` result, with the optional `prompts` and
/// `resourceTemplates` arrays.
fn listing_from_json(text: &str) -> anyhow::Result<Listing> {
    let value: Value = serde_json::from_str(text).context("the file is not JSON")?;
    let Some(file) = value.as_object().filter(|file| matches!(file.get("tools"), Some(Value::Array(_)))) else {
        anyhow::bail!("expected a tools/list result: an object with a \"tools\" array");
    };
    Ok(Listing {
        tools: items(file, "tools", "a tool does not match the MCP Tool shape (name, inputSchema, …)")?,
        prompts: items(file, "prompts", "a prompt does not match the MCP Prompt shape (name, arguments, …)")?,
        resource_templates: items(
            file,
            "resourceTemplates",
            "a resource template does not match the MCP ResourceTemplate shape (uriTemplate, name, …)",
        )?,
    })
}

/// The array under `key` (none when absent), each item read as a `T`.
fn items<T: DeserializeOwned>(file: &Map<String, Value>, key: &str, shape: &'static str) -> anyhow::Result<Vec<T>> {
    match file.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => serde_json::from_value(Value::Array(items.clone())).context(shape),
        Some(_) => anyhow::bail!("\"{key}\" must be an array"),
    }
}
