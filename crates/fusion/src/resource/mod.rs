//! Resources: what a client reads by URI. A [`Resource`] has one fixed URI
//! (`billing://summary`); a [`ResourceTemplate`] has a URI template (`billing://invoices/{id}`)
//! whose parameters are the fields of a typed input, checked like an action's arguments.
//!
//! A read goes through the same guards as a call (authentication, rate limits, concurrency,
//! timeout) and the server's middleware. Its failures are JSON-RPC errors, as MCP wants them
//! for resources, written with the same care as envelopes: an unknown URI gets the
//! protocol's resource-not-found code with the closest URIs the server knows; parameters that
//! do not fit get `-32602` with one "You sent … Expected …" sentence per field; a handler's
//! [`ToolError`](crate::wire::ToolError) keeps its code, message and recovery in the error's
//! `data`.
//!
//! A client can subscribe to a resource (`resources/subscribe`, or the URIs of a
//! `subscriptions/listen` request): a URI it may read, its parameters checked as a read checks
//! them, counted by the server's rate limits, and held within [`SubscriptionLimits`] until the
//! client unsubscribes, the listen ends, or the session does. Errors echo at most a cut of what
//! was sent (as envelopes do), in their message and in their `data`.
//!
//! Resources and templates can also come and go while the server runs:
//! [`FusionServer::insert_resource`](crate::FusionServer::insert_resource) and its siblings
//! compile them as `build` does and tell connected clients with
//! `notifications/resources/list_changed`.
//!
//! ```
//! use mcp_fusion::resource::{Resource, ResourceTemplate};
//! use mcp_fusion::wire::ToolError;
//! use mcp_fusion::{Ctx, FusionServer, Json};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct InvoiceUri {
//!     /// The invoice id, like `inv_2026_0001`.
//!     id: String,
//! }
//!
//! async fn invoice(_ctx: Ctx<()>, uri: InvoiceUri) -> Result<Json<serde_json::Value>, ToolError> {
//!     Ok(Json(serde_json::json!({"id": uri.id, "amount_cents": 1200})))
//! }
//!
//! let server = FusionServer::builder("billing", "1.0.0")
//!     .resource(Resource::new("billing://summary", "summary").handler(|_ctx: Ctx<()>| async {
//!         Ok::<_, ToolError>("3 invoices, 1 paid")
//!     }))
//!     .resource_template(ResourceTemplate::new("billing://invoices/{id}", "invoice").handler(invoice))
//!     .build(())
//!     .unwrap();
//! assert_eq!(server.resources()[0].uri, "billing://summary");
//! assert_eq!(server.resource_templates()[0].uri_template, "billing://invoices/{id}");
//! ```

mod contents;
pub(crate) mod template;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

pub use crate::subscriptions::SubscriptionLimits;
pub(crate) use contents::complete;
pub use contents::{Blob, IntoContents};
pub use rmcp::model::ResourceContents;

use crate::cache::CacheHint;
use crate::completer::{StateCompleter, state_completer};
use crate::context::Ctx;
use crate::guard::RateLimit;
use crate::handler::{ErasedHandler, Returns, TypedHandler};
use crate::input::ActionInput;
use crate::middleware::BoxError;
use crate::output::Output;

/// A resource with one fixed URI, read by a handler `async fn(Ctx<S>) -> Result<T, E>`
/// (`T`: [`IntoContents`]).
pub struct Resource<S = ()> {
    pub(crate) about: About,
    pub(crate) handler: Option<Arc<dyn ErasedHandler<S>>>,
}

/// Resources whose URIs expand a template, read by a handler
/// `async fn(Ctx<S>, Params) -> Result<T, E>`: `Params` is a `Deserialize + JsonSchema` struct
/// with one field per `{parameter}`, each taken from the URI as text (and read as a number or
/// a boolean where the field's schema says so) and checked against the schema.
pub struct ResourceTemplate<S = ()> {
    pub(crate) about: About,
    pub(crate) handler: Option<Arc<dyn ErasedHandler<S>>>,
    pub(crate) completers: Vec<(String, StateCompleter<S>)>,
}

/// What a resource or a template says of itself, and what it asks of the guards.
#[derive(Debug, Clone, Default)]
pub(crate) struct About {
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub icons: Vec<rmcp::model::Icon>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    pub require_identity: bool,
    pub scopes: Vec<String>,
    pub rate_limits: Vec<RateLimit>,
    pub timeout: Option<Duration>,
    pub cache: Option<CacheHint>,
    pub annotations: Option<rmcp::model::Annotations>,
    /// `_meta` as listed (an app's `ui`).
    pub meta: Option<rmcp::model::MetaObject>,
}

/// The builder methods both kinds share.
macro_rules! about_methods {
    () => {
        /// A human-readable title.
        pub fn title(mut self, title: impl Into<String>) -> Self {
            self.about.title = Some(title.into());
            self
        }

        /// Adds an icon a client may show beside it (MCP 2025-11-25): `src` an `https:` URL or a
        /// `data:` URI (anything else fails the build), with an optional MIME type, sizes and theme.
        pub fn icon(mut self, icon: rmcp::model::Icon) -> Self {
            self.about.icons.push(icon);
            self
        }

        /// What it holds, for the model and the user.
        pub fn description(mut self, description: impl Into<String>) -> Self {
            self.about.description = Some(description.into());
            self
        }

        /// The MIME type of its contents (`text/plain` for text and `application/octet-stream`
        /// for a [`Blob`] when unset; `Json` contents are `application/json`).
        pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
            self.about.mime_type = Some(mime_type.into());
            self
        }

        /// How a client should use it (MCP annotations, listed with it): who it is for
        /// (`audience`), how much it matters from 0.0 to 1.0 (`priority`), when it last
        /// changed (`last_modified`, RFC 3339). A priority outside 0.0–1.0 or a time that is
        /// not RFC 3339 fails the build.
        ///
        /// ```
        /// use mcp_fusion::resource::Resource;
        /// use rmcp::model::{Annotations, Role};
        ///
        /// let annotations = Annotations::default()
        ///     .with_audience(vec![Role::Assistant])
        ///     .with_priority(0.8)
        ///     .with_timestamp_now();
        /// let tasks: Resource<()> = Resource::new("tasks://all", "tasks").annotations(annotations);
        /// # let _ = tasks;
        /// ```
        pub fn annotations(mut self, annotations: rmcp::model::Annotations) -> Self {
            self.about.annotations = Some(annotations);
            self
        }

        /// Refuses anonymous reads with `AUTH_REQUIRED`.
        pub fn requires_identity(mut self) -> Self {
            self.about.require_identity = true;
            self
        }

        /// Requires the caller to hold `scope` (`FORBIDDEN` otherwise); implies an identity.
        pub fn scope(mut self, scope: impl Into<String>) -> Self {
            self.about.scopes.push(scope.into());
            self
        }

        /// Limits its reads (besides the server's limits), counted under its URI (or
        /// template) and the limit's name.
        pub fn rate_limit(mut self, limit: RateLimit) -> Self {
            self.about.rate_limits.push(limit);
            self
        }

        /// The cache hint of its reads, instead of the server's (see [`crate::cache`]).
        /// A resource that asks for an identity or a scope is read `private`, whatever the
        /// hint says.
        pub fn cache_hint(mut self, hint: CacheHint) -> Self {
            self.about.cache = Some(hint);
            self
        }

        /// A deadline for one read, instead of the server's.
        pub fn timeout(mut self, after: Duration) -> Self {
            self.about.timeout = Some(after);
            self
        }
    };
}

impl<S: Send + Sync + 'static> Resource<S> {
    /// A resource at `uri`, listed under `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Resource<S> {
        Resource { about: About { uri: uri.into(), name: name.into(), ..About::default() }, handler: None }
    }

    /// The handler: `async fn(Ctx<S>) -> Result<T, E>`, `T` anything [`IntoContents`], `E` a
    /// `ToolError` (kept) or any other error (an `INTERNAL_ERROR` naming the resource).
    pub fn handler<F, Fut, T, E>(mut self, handler: F) -> Resource<S>
    where
        F: Fn(Ctx<S>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, E>> + Send + 'static,
        T: IntoContents,
        E: Into<BoxError> + 'static,
    {
        let handler = move |ctx: Ctx<S>, _: NoParams| handler(ctx);
        self.handler = Some(Arc::new(TypedHandler::<_, NoParams, T, E, AsContents>::new(handler)));
        self
    }

    about_methods!();
}

impl<S: Send + Sync + 'static> ResourceTemplate<S> {
    /// Resources at the expansions of `uri_template` (`billing://invoices/{id}`), listed under
    /// `name`.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> ResourceTemplate<S> {
        ResourceTemplate {
            about: About { uri: uri_template.into(), name: name.into(), ..About::default() },
            handler: None,
            completers: Vec::new(),
        }
    }

    /// The handler: `async fn(Ctx<S>, Params) -> Result<T, E>`, `Params` a struct with one
    /// field per parameter of the template.
    pub fn handler<F, Fut, P, T, E>(mut self, handler: F) -> ResourceTemplate<S>
    where
        F: Fn(Ctx<S>, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, E>> + Send + 'static,
        P: ActionInput,
        T: IntoContents,
        E: Into<BoxError> + 'static,
    {
        self.handler = Some(Arc::new(TypedHandler::<F, P, T, E, AsContents>::new(handler)));
        self
    }

    /// Completes the parameter `name` (`completion/complete`) with `completer`:
    /// `async fn(Arc<S>, prefix) -> Vec<String>`; the values that start with the prefix are
    /// kept. Without one, a parameter whose type is an enum completes from its values.
    pub fn complete<F, Fut>(mut self, name: impl Into<String>, completer: F) -> ResourceTemplate<S>
    where
        F: Fn(Arc<S>, String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.completers.push((name.into(), state_completer(completer)));
        self
    }

    about_methods!();
}

/// The input of a fixed resource: nothing.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoParams {}

/// A resource's handler: its contents, carried to `resources/read` as they are, through the
/// same chain as a call.
struct AsContents;

impl<T: IntoContents> Returns<T> for AsContents {
    fn into_output(value: T) -> Result<Output, BoxError> {
        Ok(Output::contents(value.into_contents()?))
    }

    fn lost_input(_input: &'static str) -> String {
        "a middleware removed the resource's parameters or replaced them with another type".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contents_travel_typed_and_a_lost_input_is_named_a_resources_parameters() {
        let output = <AsContents as Returns<Blob>>::into_output(Blob(vec![1])).unwrap();
        let Some(crate::output::Payload::Contents(contents)) = output.payload() else { panic!("{output:?}") };
        assert!(matches!(&contents[..], [ResourceContents::BlobResourceContents { blob, .. }] if blob == "AQ=="));
        assert_eq!(
            <AsContents as Returns<Blob>>::lost_input("P"),
            "a middleware removed the resource's parameters or replaced them with another type"
        );
    }
}
