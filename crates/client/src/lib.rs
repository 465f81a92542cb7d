//! The typed client of MCP Fusion: calls actions by their qualified names, whether the
//! server exposes groups or flat tools (routed as the server publishes in each tool's
//! `_meta`, or read off the tools' schemas when it publishes nothing), and turns every
//! envelope back into a typed error an agent runtime can branch on (code, recovery, available
//! actions, field problems, contract changes) — ours and the TypeScript implementation's
//! shapes alike.
//!
//! [`contract`] is the crate of tool contracts and of the [`Exposition`] server and client
//! share; [`wire`] the crate of the envelopes.
//!
//! A failed call comes back as a [`ToolFailure`] to branch on, not as text to scrape:
//!
//! ```
//! use mcp_fusion_client::CallOutcome;
//! use mcp_fusion_client::wire::{ErrorCode, ToolError};
//! use rmcp::model::{CallToolResult, ContentBlock};
//!
//! // What a server sends when the invoice does not exist.
//! let envelope = ToolError::not_found("No invoice with id \"inv_9\".")
//!     .suggest("List invoices first, then retry with a real ID.")
//!     .actions(["billing.list_invoices"]);
//! let result = CallToolResult::error(vec![ContentBlock::text(envelope.render())]);
//!
//! let failure = CallOutcome::from_result(result).into_result().unwrap_err();
//! assert_eq!(failure.code(), &ErrorCode::NotFound);
//! assert_eq!(failure.recovery(), Some("List invoices first, then retry with a real ID."));
//! assert_eq!(failure.available_actions(), ["billing.list_invoices"]);
//! ```
//!
//! [`FusionClient`] makes the calls: over stdio to a spawned server or over Streamable HTTP,
//! by qualified action name, with an optional [`RetryPolicy`] for the failures (and the
//! standalone warnings) that say nothing was run and when to come back.

mod client;
mod error;
mod outcome;
mod reason;
mod retry;
mod routing;

pub use client::FusionClient;
pub use error::{FusionClientError, ToolFailure};
pub use mcp_fusion_contract::Exposition;
pub use outcome::{CallOutcome, Reply};
pub use retry::RetryPolicy;

pub use mcp_fusion_contract as contract;
pub use mcp_fusion_wire as wire;

/// The crate README's examples (its crates.io page), compiled as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct CrateReadme;
