//! The typed client of MCP Fusion: calls actions by their qualified names, whether the
//! server exposes groups or flat tools, and turns every envelope back into a typed error an
//! agent runtime can branch on (code, recovery, available actions, field problems, contract
//! changes) — ours and the TypeScript implementation's shapes alike.

mod client;
mod error;
mod outcome;
mod retry;
mod routing;

pub use client::FusionClient;
pub use error::{FusionClientError, ToolFailure};
pub use outcome::{CallOutcome, Reply};
pub use retry::RetryPolicy;
pub use routing::Exposition;

pub use mcp_fusion_wire as wire;
