//! Actions: one operation of a tool, with its typed input, handler and annotations.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::Icon;

use crate::context::Ctx;
use crate::guard::{Layers, Placement};
use crate::guard::{RateLimit, Stage};
use crate::handler::{ErasedHandler, TypedHandler};
use crate::input::ActionInput;
use crate::middleware::{BoxError, Middleware};
use crate::output::IntoOutput;

/// Behaviour hints a client may show or act on (MCP tool annotations).
///
/// A flat tool carries its action's hints as they are. A grouped tool carries one merged set:
/// read-only and idempotent only if every action is, destructive and open-world if any is (see
/// [`Group`](crate::Group)); its description names the read-only and destructive actions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Annotations {
    /// Does not modify its environment.
    pub read_only: Option<bool>,
    /// May perform destructive updates.
    pub destructive: Option<bool>,
    /// Calling it again with the same arguments has no further effect.
    pub idempotent: Option<bool>,
    /// Interacts with an open world of external entities.
    pub open_world: Option<bool>,
}

/// One action of a group: `billing.get_invoice` is the action `get_invoice` of the group
/// `billing`.
///
/// Built here step by step, or from an async fn and its doc comment with
/// [`#[action]`](macro@crate::action), which expands to these same calls.
///
/// ```
/// use mcp_fusion::{Action, Ctx};
/// use mcp_fusion_wire::ToolError;
/// use rmcp::Json;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct GetInvoice {
///     /// The invoice id, like `inv_2026_0001`.
///     #[schemars(regex(pattern = r"^inv_[a-z0-9_]+$"))]
///     id: String,
/// }
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Invoice { id: String, amount_cents: u64 }
///
/// async fn get_invoice(_ctx: Ctx<()>, input: GetInvoice) -> Result<Json<Invoice>, ToolError> {
///     Err(ToolError::not_found(format!("No invoice {}", input.id)))
/// }
///
/// let action = Action::new("get_invoice", "Read one invoice by id.").read_only().handler(get_invoice);
/// # let _ = action;
/// ```
pub struct Action<S = ()> {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) title: Option<String>,
    pub(crate) icons: Vec<Icon>,
    pub(crate) annotations: Annotations,
    pub(crate) handler: Option<Arc<dyn ErasedHandler<S>>>,
    pub(crate) middleware: Layers,
    pub(crate) sensitive: Vec<String>,
    pub(crate) strict: bool,
    pub(crate) timeout: Option<Duration>,
    pub(crate) require_identity: bool,
    pub(crate) scopes: Vec<String>,
    pub(crate) rate_limits: Vec<RateLimit>,
    pub(crate) deprecated: Option<Option<String>>,
    pub(crate) deprecated_fields: Vec<(String, Option<String>)>,
    pub(crate) param_headers: Vec<(String, String)>,
    pub(crate) by_key: bool,
    pub(crate) check_with: Option<String>,
    pub(crate) task: Option<crate::task::TaskSupport>,
    pub(crate) questions_first: bool,
    pub(crate) forgiving_scalars: Option<bool>,
    pub(crate) app: Option<crate::apps::AppLink>,
}

impl<S: Send + Sync + 'static> Action<S> {
    /// An action with a name (`get_invoice`) and a description the model reads.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Action<S> {
        Action {
            name: name.into(),
            description: description.into(),
            title: None,
            icons: Vec::new(),
            annotations: Annotations::default(),
            handler: None,
            middleware: Layers::default(),
            sensitive: Vec::new(),
            strict: true,
            timeout: None,
            require_identity: false,
            scopes: Vec::new(),
            rate_limits: Vec::new(),
            deprecated: None,
            deprecated_fields: Vec::new(),
            param_headers: Vec::new(),
            by_key: false,
            check_with: None,
            task: None,
            questions_first: false,
            forgiving_scalars: None,
            app: None,
        }
    }

    /// The handler: `async fn(Ctx<S>, Input) -> Result<Output, E>`.
    ///
    /// `Input` is any `Deserialize + JsonSchema` type (or [`Validated<T>`](crate::Validated));
    /// `Output` anything [`IntoOutput`] (`Json<T>` declares an output schema); `E` a
    /// [`ToolError`](mcp_fusion_wire::ToolError), passed unchanged, or any other error,
    /// wrapped as `INTERNAL_ERROR`.
    pub fn handler<F, Fut, I, O, E>(mut self, handler: F) -> Action<S>
    where
        F: Fn(Ctx<S>, I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, E>> + Send + 'static,
        I: ActionInput,
        O: IntoOutput,
        E: Into<BoxError> + 'static,
    {
        self.handler = Some(Arc::new(TypedHandler::<F, I, O, E>::new(handler)));
        self
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Action<S> {
        self.title = Some(title.into());
        self
    }

    /// Adds an icon a client may show beside it (MCP 2025-11-25): `src` an `https:` URL or a
    /// `data:` URI (anything else fails the build), with an optional MIME type, sizes and theme.
    /// Shown on the action's own tool in flat exposition; a grouped tool shows its group's.
    pub fn icon(mut self, icon: Icon) -> Action<S> {
        self.icons.push(icon);
        self
    }

    /// Shows the action's result in the app at `uri` (an [`App`](crate::apps::App) the server
    /// declares): its tool carries `_meta.ui.resourceUri`. In grouped exposition the group's
    /// tool carries the group's app, or the one app its actions name.
    pub fn app(mut self, uri: impl Into<String>) -> Action<S> {
        let visibility = self.app.take().and_then(|link| link.visibility);
        self.app = Some(crate::apps::AppLink { uri: uri.into(), visibility });
        self
    }

    /// Who may call the action's tool, said after its [`app`](Action::app):
    /// `[Visibility::App]` keeps it from the model (a view's refresh button). A client that
    /// renders no apps is not shown a tool only an app may call.
    pub fn app_visibility(mut self, who: &[crate::apps::Visibility]) -> Action<S> {
        if let Some(link) = &mut self.app {
            link.visibility = Some(who.to_vec());
        }
        self
    }

    /// Marks the action read-only (it changes nothing), which also makes it idempotent and
    /// not destructive. A grouped tool is read-only only if every action is; its description
    /// lists this action as read-only either way.
    pub fn read_only(mut self) -> Action<S> {
        self.annotations.read_only = Some(true);
        self.annotations.destructive = Some(false);
        self.annotations.idempotent = Some(true);
        self
    }

    /// Marks the action destructive (it may delete or overwrite). This makes its whole grouped
    /// tool destructive (and not read-only) in `tools/list`, which lists this action as the
    /// destructive one in its description; flat exposition keeps the hint on this action alone.
    pub fn destructive(mut self) -> Action<S> {
        self.annotations.read_only = Some(false);
        self.annotations.destructive = Some(true);
        self
    }

    /// Marks the action as one that writes without deleting or overwriting (MCP's "additive"
    /// update: `readOnlyHint: false`, `destructiveHint: false`). Unmarked, a writing tool is
    /// destructive by MCP's default, and hosts ask before each call.
    pub fn additive(mut self) -> Action<S> {
        self.annotations.read_only = Some(false);
        self.annotations.destructive = Some(false);
        self
    }

    /// Marks the action idempotent (repeating a call has no further effect).
    pub fn idempotent(mut self) -> Action<S> {
        self.annotations.idempotent = Some(true);
        self
    }

    /// Marks whether the action reaches an open world of external systems.
    pub fn open_world(mut self, open_world: bool) -> Action<S> {
        self.annotations.open_world = Some(open_world);
        self
    }

    /// Sets every annotation at once.
    pub fn annotations(mut self, annotations: Annotations) -> Action<S> {
        self.annotations = annotations;
        self
    }

    /// Adds a middleware that wraps this action only, after every guard (inside the server's
    /// and the group's).
    pub fn middleware(mut self, middleware: impl Middleware) -> Action<S> {
        self.middleware.push(Placement::Inner, middleware);
        self
    }

    /// Adds a middleware of this action just outside a guard stage: it sees every call that
    /// reaches the stage, including those the stage refuses.
    pub fn middleware_before(mut self, stage: Stage, middleware: impl Middleware) -> Action<S> {
        self.middleware.push(Placement::Before(stage), middleware);
        self
    }

    /// Adds a middleware of this action just inside a guard stage: it sees only the calls
    /// the stage lets through.
    pub fn middleware_after(mut self, stage: Stage, middleware: impl Middleware) -> Action<S> {
        self.middleware.push(Placement::After(stage), middleware);
        self
    }

    /// Mirrors the top-level input field `field` into the HTTP header `Mcp-Param-{header}`
    /// (SEP-2243, MCP 2026-07-28): the tool's schema says so (`x-mcp-header`), a client sends
    /// the field's value in that header too, so that a gateway or load balancer can route on
    /// it, and the HTTP transport refuses a call whose header and argument disagree (`-32020`,
    /// HTTP 400, naming both) before the handler runs.
    ///
    /// The field must be one string, integer or boolean (not an `Option`), and the action its
    /// own tool (standalone, or in a flat group); anything a client would drop the tool for
    /// fails the build ([`BuildError::ParamHeader`](crate::BuildError::ParamHeader)).
    ///
    /// ```
    /// use mcp_fusion::{Action, Ctx, FusionServer, ToolError};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Deploy {
    ///     /// Where to deploy: `eu` or `us`.
    ///     region: String,
    /// }
    ///
    /// async fn deploy(_ctx: Ctx<()>, input: Deploy) -> Result<String, ToolError> {
    ///     Ok(format!("deployed to {}", input.region))
    /// }
    ///
    /// let server = FusionServer::builder("deployer", "1.0.0")
    ///     .action(Action::new("deploy", "Deploy the service.").param_header("region", "Region").handler(deploy))
    ///     .build(())
    ///     .unwrap();
    /// let tool = &server.tools()[0];
    /// assert_eq!(tool.input_schema["properties"]["region"]["x-mcp-header"], "Region");
    /// ```
    pub fn param_header(mut self, field: impl Into<String>, header: impl Into<String>) -> Action<S> {
        self.param_headers.push((field.into(), header.into()));
        self
    }

    /// Marks a field (`card.number`) whose value validation errors never echo; fields with
    /// `writeOnly: true` in the schema are sensitive already.
    pub fn sensitive(mut self, path: impl Into<String>) -> Action<S> {
        self.sensitive.push(path.into());
        self
    }

    /// Fails a call that runs longer than `timeout` with `TIMEOUT` (overrides the server's).
    pub fn timeout(mut self, timeout: Duration) -> Action<S> {
        self.timeout = Some(timeout);
        self
    }

    /// Makes the action idempotent by key: a call repeated with the `idempotency_key` of an
    /// earlier one gets that call's result without running again (see
    /// [`Idempotency`](crate::guard::Idempotency) for where keys are kept and how). Declare
    /// `idempotency_key: Option<String>` in the input to take the key as an argument; the
    /// request's `_meta` (`fusion/idempotency_key`) works either way.
    ///
    /// Pass [`CallInfo::commit_gate`](crate::CallInfo::commit_gate) to the work that writes,
    /// and commit only when it says so: a call answered with `TIMEOUT` must not commit later,
    /// or its retry, which runs again, writes twice.
    pub fn idempotent_by_key(mut self) -> Action<S> {
        self.by_key = true;
        self
    }

    /// Runs the action as a task (the MCP tasks extension) for a client that declared the
    /// extension: the call is answered at once with the task's handle, and the client reads its
    /// status and result later (see [`task`](crate::task)). Guards run when the task is created,
    /// so a refused call costs nothing and is answered as a plain call is.
    pub fn task(mut self, support: crate::task::TaskSupport) -> Action<S> {
        self.task = Some(support);
        self
    }

    /// Lets the handler of a task action ask its questions in the call itself (on MCP
    /// 2026-07-28, rounds of input-required results) before its work becomes a task at
    /// [`Ctx::become_task`](crate::Ctx::become_task): the client gets the questions first and
    /// the task's handle once they are answered. Without it, the call becomes a task when it
    /// reaches its handler, and its questions wait in the task. A handler that ends without
    /// calling `become_task` answers as a plain call.
    pub fn questions_before_task(mut self) -> Action<S> {
        self.questions_first = true;
        self
    }

    /// Names the read-only action (of the same group, like `get_invoice`) that tells whether
    /// a call of this one took effect: its `TIMEOUT` envelope tells the model to check with
    /// it before calling again.
    pub fn check_with(mut self, action: impl Into<String>) -> Action<S> {
        self.check_with = Some(action.into());
        self
    }

    /// Refuses anonymous calls with `AUTH_REQUIRED`.
    pub fn requires_identity(mut self) -> Action<S> {
        self.require_identity = true;
        self
    }

    /// Requires the caller to hold `scope` (`FORBIDDEN` otherwise); implies an identity.
    pub fn scope(mut self, scope: impl Into<String>) -> Action<S> {
        self.scopes.push(scope.into());
        self
    }

    /// Limits the calls of this action (besides its group's and the server's limits), counted
    /// under the action's qualified name and the limit's name.
    pub fn rate_limit(mut self, limit: RateLimit) -> Action<S> {
        self.rate_limits.push(limit);
        self
    }

    /// Marks the action deprecated: it still runs, and its result carries a `DEPRECATED`
    /// warning naming `replacement` (a qualified action, like `billing.list_invoices`).
    pub fn deprecated(mut self, replacement: Option<&str>) -> Action<S> {
        self.deprecated = Some(replacement.map(str::to_owned));
        self
    }

    /// Marks an input field deprecated: a call that sends it succeeds with a `DEPRECATED`
    /// warning naming `replacement`. Fields whose schema says `deprecated: true` (Rust's
    /// `#[deprecated]`) are deprecated already, without a named replacement.
    pub fn deprecated_field(mut self, field: impl Into<String>, replacement: Option<&str>) -> Action<S> {
        self.deprecated_fields.push((field.into(), replacement.map(str::to_owned)));
        self
    }

    /// Whether this action reads a string that spells a number or a boolean as what it spells,
    /// with an `ARGUMENTS_CONVERTED` warning (default: the server's
    /// [`forgiving_scalars`](crate::ServerBuilder::forgiving_scalars), on unless turned off).
    pub fn forgiving_scalars(mut self, forgive: bool) -> Action<S> {
        self.forgiving_scalars = Some(forgive);
        self
    }

    /// Accepts argument keys the input type does not know instead of rejecting them.
    pub fn allow_unknown_fields(mut self) -> Action<S> {
        self.strict = false;
        self
    }
}

impl<S: Send + Sync + 'static> Ctx<S> {
    /// The name a model calls `action` by (an `#[action]` fn, or any fn that builds the
    /// action) under this server's tools: `tasks.list_tasks` for an action of a grouped tool,
    /// `tasks_list_tasks` flat, `list_tasks` standalone. A typed reference for an envelope's
    /// `available_actions` and recovery: renaming the fn breaks the build, not the advice.
    ///
    /// ```
    /// use mcp_fusion::prelude::*;
    ///
    /// /// List the tasks.
    /// #[action(read_only)]
    /// async fn list_tasks() -> Result<String> { Ok("no tasks".into()) }
    ///
    /// /// Read one task.
    /// #[action(read_only)]
    /// async fn get_task(ctx: Ctx<()>) -> Result<String, ToolError> {
    ///     let list = ctx.action_name(list_tasks);
    ///     Err(ToolError::not_found("No task 3.").suggest(format!("Call {list} for the ids.")).actions([list]))
    /// }
    /// # let _ = get_task;
    /// ```
    pub fn action_name(&self, action: impl FnOnce() -> Action<S>) -> String {
        self.call().called_name(&action().name)
    }
}
