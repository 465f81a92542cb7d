//! The typed client of MCP Fusion: calls actions by their qualified names, whether the
//! server exposes groups or flat tools (routed as the server publishes in each tool's
//! `_meta`, or read off the tools' schemas when it publishes nothing), and turns every
//! envelope back into a typed error an agent runtime can branch on (code, recovery, available
//! actions, field problems, contract changes) — ours and the TypeScript implementation's
//! shapes alike.
//!
//! [`contract`] is the crate of tool contracts and of the [`Exposition`] server and client
//! share; [`wire`] the crate of the envelopes.

mod client;
mod error;
mod outcome;
mod retry;
mod routing;

pub use client::FusionClient;
pub use error::{FusionClientError, ToolFailure};
pub use mcp_fusion_contract::Exposition;
pub use outcome::{CallOutcome, Reply};
pub use retry::RetryPolicy;

pub use mcp_fusion_contract as contract;
pub use mcp_fusion_wire as wire;
