//! MCP Fusion: an MCP server framework on [rmcp] whose every failure is an envelope the model
//! can act on.
//!
//! Tools are [`Group`]s of [`Action`]s with typed inputs. Arguments are validated against the
//! JSON Schema generated from the input type, and every problem is written as a sentence that
//! heals the call. Handlers return `Result<Output, E>`: a [`ToolError`]
//! reaches the model unchanged, anything else (a panic included) becomes a critical
//! `INTERNAL_ERROR` naming the action.
//!
//! ```
//! use mcp_fusion::wire::{ToolError, parse};
//! use mcp_fusion::{Action, Ctx, FusionServer, Group, Json};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct GetInvoice {
//!     /// The invoice id, like `inv_2026_0001`.
//!     #[schemars(regex(pattern = r"^inv_[a-z0-9_]+$"))]
//!     id: String,
//! }
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Invoice { id: String, amount_cents: u64 }
//!
//! async fn get_invoice(_ctx: Ctx<()>, input: GetInvoice) -> Result<Json<Invoice>, ToolError> {
//!     Err(ToolError::not_found(format!("No invoice with id \"{}\".", input.id))
//!         .suggest("List invoices first, then retry with a real ID.")
//!         .actions(["billing.list_invoices"]))
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let server = FusionServer::builder("billing-server", "1.0.0")
//!     .group(Group::new("billing", "Invoices.").action(
//!         Action::new("get_invoice", "Read one invoice by id.").read_only().handler(get_invoice),
//!     ))
//!     .build(())
//!     .unwrap();
//!
//! // One tool, `billing`, whose `action` field picks the action. A bad id heals:
//! let args = serde_json::json!({"action": "get_invoice", "id": "INV-1"});
//! let result = server.call("billing", args.as_object().cloned(), Default::default()).await;
//! let text = &result.content[0].as_text().unwrap().text;
//! assert!(text.contains("You sent: 'INV-1'. Expected a string matching the pattern /^inv_[a-z0-9_]+$/."));
//!
//! // A handler's error reaches the model as it was written.
//! let args = serde_json::json!({"action": "get_invoice", "id": "inv_9"});
//! let result = server.call("billing", args.as_object().cloned(), Default::default()).await;
//! let envelope = parse(&result.content[0].as_text().unwrap().text);
//! assert_eq!(envelope.error.available_actions, ["billing.list_invoices"]);
//! # });
//! // `mcp_fusion::serve_stdio(server).await` serves it over stdio.
//! ```
//!
//! # Where things are
//!
//! | you want | look at |
//! |---|---|
//! | everything a server needs, in one import | [`prelude`] |
//! | `?` on any error in a handler | [`Result`], [`BoxError`] |
//! | a log on stderr in one line | [`logging::init`] |
//! | a server called in process from tests (feature `testing`) | `testing` |
//! | a server, its groups and actions | [`FusionServer`], [`ServerBuilder`], [`Group`], [`Action`] |
//! | an action written as an async fn, its doc comment the description | [`action`](macro@action) |
//! | a handler's context, input and output | [`Ctx`], [`CallInfo`], [`Validated`], [`IntoOutput`], [`input`] |
//! | the order a call goes through, and your own layers | [`guard`] (auth, rate limits, concurrency, deprecation, timeout, result cap), [`middleware`] |
//! | resources a client reads by URI, fixed or from a template | [`resource`] |
//! | prompts with typed arguments | [`prompt`] |
//! | an interactive view of an action's result (MCP Apps) | [`apps`] |
//! | Agent Skills (`SKILL.md` and its files) served as the skills extension prescribes | [`skill`] |
//! | `tracing` events of a call sent to its client as MCP log messages | [`logging`] |
//! | who is calling | [`auth`] |
//! | stdio and Streamable HTTP | [`transport`], [`http`] |
//! | tools that come and go while the server runs | [`FusionServer::insert_group`], [`FusionServer::remove_group`] |
//! | another MCP server's tools under a namespace | [`handoff`], [`FusionServer::set_mount`] |
//! | the envelopes themselves | [`wire`] |
//! | contracts, `fusion.lock`, self-healing from a lockfile | [`contract`], [`ServerBuilder::contract_lockfile`] |
//!
//! How one `tools/call` travels, file by file, is in the repository's `docs/architecture.md`.

mod action;
pub mod apps;
pub mod auth;
pub mod cache;
mod catalog;
mod commit;
mod compiled;
mod completer;
mod context;
pub mod elicitation;
mod error;
mod failure;
mod group;
pub mod guard;
mod handler;
pub mod handoff;
mod idempotency_key;
mod in_flight;
pub mod input;
mod launch;
#[cfg(test)]
mod layers;
mod lock;
pub mod logging;
pub mod middleware;
pub mod observe;
mod output;
pub mod prelude;
pub mod prompt;
pub mod resource;
mod resumable;
mod rounds;
#[cfg(feature = "http")]
mod run_to_end;
mod server;
mod session;
mod similarity;
pub mod skill;
mod subscriptions;
pub mod task;
#[cfg(feature = "testing")]
pub mod testing;
pub mod transport;
mod validation;

pub use action::{Action, Annotations};
pub use catalog::{Exposition, GET_TOOL_DETAILS, SEARCH_TOOLS};
pub use commit::CommitGate;
pub use context::{CallInfo, Ctx, Entry};
pub use elicitation::Elicited;
pub use error::{BoxError, BuildError, Result};
pub use group::Group;
pub use input::{FieldIssue, NoInput, Validate, Validated};
pub use middleware::from_fn;
pub use output::{IntoOutput, Output, Payload, Structured};
pub use server::{FusionServer, ServerBuilder};
#[cfg(feature = "http")]
pub use transport::http;
pub use transport::stdio::serve_stdio;

#[doc = include_str!("../docs/action.md")]
pub use mcp_fusion_macros::action;

/// What the fuzz targets reach that is not public; not an API.
#[cfg(feature = "http")]
#[doc(hidden)]
pub mod __fuzz {
    /// The token of an `Authorization` header's value, as the bearer check reads it.
    pub fn bearer_token(value: &[u8]) -> Option<String> {
        let value = http::HeaderValue::from_bytes(value).ok()?;
        crate::transport::http::bearer_token(&value).map(str::to_owned)
    }
}

/// What `#[action]`'s expansion names; not an API.
#[doc(hidden)]
pub mod __macro {
    /// The state of a context type, for a handler whose context is written as an alias.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not a context: an action's first argument is its `Ctx<S>`",
        label = "not a `Ctx<S>`",
        note = "write `(ctx: Ctx<S>, input: Input)`, or leave the context out: `(input: Input)`"
    )]
    pub trait ContextState {
        /// `S` of `Ctx<S>`.
        type State;
    }

    impl<S> ContextState for crate::Ctx<S> {
        type State = S;
    }
}

pub use mcp_fusion_contract as contract;
pub use mcp_fusion_wire as wire;
/// The envelope a handler returns to tell the model what went wrong and what to do; the same
/// type as [`wire::ToolError`].
pub use mcp_fusion_wire::ToolError;
/// The rmcp this framework is built on: its types appear in the API (`rmcp::model::Tool`,
/// `CallToolResult`, `Peer`), and using them through this re-export keeps one version of it.
pub use rmcp;
pub use rmcp::Json;
/// An icon a client may show beside a tool, a resource, a template, a prompt or the server.
pub use rmcp::model::{Icon, IconTheme};
/// The `schemars` the framework derives input and output schemas with. Deriving through it
/// needs `#[schemars(crate = "mcp_fusion::schemars")]` on the type.
pub use schemars;
/// The `serde` the framework decodes inputs with. Deriving through it needs
/// `#[serde(crate = "mcp_fusion::serde")]` on the type.
pub use serde;

/// The README's examples, compiled and run as doctests so they stay true (one of them is a test
/// of its own, on `testing`).
#[cfg(all(doctest, feature = "testing", feature = "http"))]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

/// The crate README's examples (its crates.io page), compiled as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct CrateReadme;
