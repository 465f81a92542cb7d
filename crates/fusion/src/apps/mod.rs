//! MCP Apps (the `io.modelcontextprotocol/ui` extension): an action shows its result in an
//! interactive view the host renders. An [`App`] is a `ui://` resource holding an HTML page
//! (MIME type [`APP_MIME_TYPE`]) with the sandbox it asks for ([`Csp`], [`Permission`]); an
//! action or a group [links](crate::Action::app) to it, and its tool carries
//! `_meta.ui.resourceUri`. The host loads the page in a sandboxed frame and speaks JSON-RPC
//! with it over `postMessage`: it hands the view the call the model made and its result, and
//! forwards the view's own `tools/call`s to the server.
//!
//! A call from a view fails as any call does: with an envelope. [`FUSION_APP_JS`], a small
//! script with no dependencies, speaks the view's side of the bridge and parses envelopes
//! (`FusionApp.parseEnvelope`), so a view renders a refusal's message, recovery and next
//! actions whether the model's call failed or its own. A page written with the marker
//! [`FUSION_APP_JS_MARKER`] gets the script in its place when the server serves it.
//!
//! ```
//! use mcp_fusion::apps::{App, Csp, Permission};
//! use mcp_fusion::prelude::*;
//!
//! async fn get(_ctx: Ctx<()>, _input: NoInput) -> Result<String> { Ok("inv_1: 12.00 EUR".into()) }
//!
//! let page = "<!DOCTYPE html><html><body><div id=\"invoice\"></div>\
//!             <script>/*FUSION_APP_JS*/</script></body></html>";
//! let server = FusionServer::builder("billing", "1.0.0")
//!     .app(
//!         App::new("ui://billing/invoice-view", "invoice_view", page)
//!             .description("One invoice, with what is paid and what is open.")
//!             .csp(Csp::new().connect_domain("https://api.example.com"))
//!             .permission(Permission::ClipboardWrite)
//!             .prefers_border(true),
//!     )
//!     .action(Action::new("get_invoice", "Read one invoice.").read_only().app("ui://billing/invoice-view").handler(get))
//!     .build(())
//!     .unwrap();
//! let tool = &server.tools()[0];
//! assert_eq!(tool.meta.as_ref().unwrap()["ui"]["resourceUri"], "ui://billing/invoice-view");
//! ```

mod app;
mod link;

pub use app::{App, Csp, Permission};
pub use link::Visibility;
pub(crate) use link::{AppLink, model_sees, ui_meta};

/// The extension's identifier, under `capabilities.extensions`.
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an app's HTML page.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The view's side of the bridge and the envelope parser, as one browser script.
pub const FUSION_APP_JS: &str = include_str!("fusion-app.js");

/// Where a page wants [`FUSION_APP_JS`]: replaced by the script when the server serves it.
pub const FUSION_APP_JS_MARKER: &str = "/*FUSION_APP_JS*/";
