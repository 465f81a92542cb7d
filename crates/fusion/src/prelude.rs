//! What a server needs, in one import.
//!
//! ```
//! use mcp_fusion::prelude::*;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct AddNote {
//!     /// The note's text.
//!     text: String,
//! }
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Note {
//!     id: u64,
//!     text: String,
//! }
//!
//! /// Add a note.
//! #[action(destructive, rate_limit = RateLimit::new(30, std::time::Duration::from_secs(60)))]
//! async fn add_note(_ctx: Ctx<()>, input: AddNote) -> Result<Json<Note>> {
//!     if input.text.trim().is_empty() {
//!         return Err(ToolError::validation("The note's text is empty.").suggest("Send the text to keep.").into());
//!     }
//!     Ok(Json(Note { id: 1, text: input.text }))
//! }
//!
//! fn server() -> Result<FusionServer, BuildError> {
//!     FusionServer::builder("notes", "0.1.0").group(Group::new("notes", "Notes.").action(add_note())).build(())
//! }
//! # server().unwrap();
//! ```
//!
//! `Result` here is [`crate::Result`]: `Result<T>` takes any error with `?`, and
//! `Result<T, E>` is the standard one.

pub use crate::action;
pub use crate::guard::{Concurrency, RateLimit};
#[cfg(feature = "http")]
pub use crate::http::{HttpConfig, HttpServer, shutdown_signal};
pub use crate::prompt::Prompt;
pub use crate::resource::{Resource, ResourceTemplate};
pub use crate::wire::ErrorCode;
pub use crate::{
    Action, BoxError, BuildError, CallInfo, Ctx, Exposition, FieldIssue, FusionServer, Group, Icon, Json, NoInput,
    Result, Structured, ToolError, Validate, Validated, serve_stdio,
};
