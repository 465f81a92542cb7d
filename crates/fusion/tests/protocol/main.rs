//! MCP end to end through real clients and raw JSON-RPC: tools, prompts, resources,
//! subscriptions, logging, what a handler sends its peer, and strict JSON-RPC on the line
//! transport. One test binary, one module per area.

#[path = "../support/mod.rs"]
mod support;

mod e2e;
mod icons;
mod logging;
mod peer;
mod prompts;
mod resources;
#[cfg(feature = "http")]
mod skills;
mod stdio_jsonrpc;
#[cfg(feature = "http")]
mod subscriptions;
mod tasks;
