//! MCP Fusion: an MCP server framework on [rmcp] whose every failure is an envelope the model
//! can act on.
//!
//! Tools are groups of actions with typed inputs; arguments are validated against the
//! schema generated from the input type and every problem is written as a sentence that heals
//! the call; handlers return `Result<Output, E>` where a [`ToolError`](mcp_fusion_wire::ToolError)
//! reaches the model unchanged and anything else (a panic included) becomes a critical
//! `INTERNAL_ERROR`.

mod action;
mod auth;
mod concurrency;
mod context;
mod error;
mod exposition;
pub mod governance;
mod group;
mod guards;
mod handler;
#[cfg(feature = "http")]
pub mod http;
mod in_flight;
mod input;
mod middleware;
pub mod rate_limit;
#[cfg(feature = "redis")]
pub mod redis_store;
mod response;
mod routing;
mod schema;
mod server;
mod suggest;
pub mod transport;
mod validation;

pub use action::{Action, Annotations};
pub use auth::{AuthError, Authenticator, Caller, Identity, StaticTokens};
pub use concurrency::{Concurrency, ConcurrencyGuard, Slot};
pub use context::{CallInfo, Ctx, RequestInfo};
pub use error::{BoxError, BuildError};
pub use exposition::{ACTIONS_META_KEY, Exposition};
pub use group::Group;
pub use input::{ActionInput, DecodeError, FieldIssue, Validate, Validated};
pub use middleware::{BoxFuture, Call, FromFn, Middleware, Next, from_fn};
pub use rate_limit::{FailurePolicy, RateLimit};
#[cfg(feature = "redis")]
pub use redis_store::{RedisStore, RedisStoreBuilder};
pub use response::{IntoOutput, Output};
pub use server::{FusionServer, ServerBuilder, serve_stdio};

pub use mcp_fusion_wire as wire;
pub use rmcp::Json;

/// The README's examples, compiled and run as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
