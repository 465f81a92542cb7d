//! MCP Fusion: an MCP server framework on [rmcp] whose every failure is an envelope the model
//! can act on.
//!
//! Tools are groups of actions with typed inputs; arguments are validated against the
//! schema generated from the input type and every problem is written as a sentence that heals
//! the call; handlers return `Result<Output, E>` where a [`ToolError`](mcp_fusion_wire::ToolError)
//! reaches the model unchanged and anything else (a panic included) becomes a critical
//! `INTERNAL_ERROR`.

mod action;
pub mod auth;
mod catalog;
mod context;
mod error;
mod failure;
pub mod governance;
mod group;
pub mod guard;
mod handler;
mod in_flight;
pub mod input;
pub mod middleware;
mod output;
mod server;
pub mod transport;
mod validation;

pub use action::{Action, Annotations};
pub use catalog::Exposition;
pub use context::{CallInfo, Ctx};
pub use error::BuildError;
pub use group::Group;
pub use input::{FieldIssue, Validate, Validated};
pub use middleware::from_fn;
pub use output::{IntoOutput, Output};
pub use server::{FusionServer, ServerBuilder};
#[cfg(feature = "http")]
pub use transport::http;
pub use transport::stdio::serve_stdio;

pub use mcp_fusion_wire as wire;
pub use rmcp::Json;

/// The README's examples, compiled and run as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
