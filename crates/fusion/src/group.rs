//! Groups: a tool made of actions.

use crate::action::Action;
use crate::guard::{Concurrency, RateLimit, Stage};
use crate::guard::{Layers, Placement};
use crate::middleware::Middleware;
use mcp_fusion_contract::Exposition;

/// A group of actions, exposed as one MCP tool (grouped exposition) or as one tool per
/// action (flat exposition).
///
/// A grouped tool's input schema holds every action's fields; a field its actions describe
/// differently says each action's words (`create_invoice: The invoice total… pay_invoice: The
/// payment…`), then which actions require or accept it.
///
/// A grouped tool has one set of [`Annotations`](crate::Annotations) for all its actions,
/// merged so that no hint promises more than its least safe action: read-only and idempotent
/// only if every action is, destructive and open-world if any action is (a hint no action sets
/// stays unset). One destructive action thus makes the whole tool `destructiveHint: true`, its
/// read-only actions included, for clients that gate on it; so the tool's description names
/// the read-only and the destructive actions for the model (`Read-only: list_invoices,
/// get_invoice.` / `Destructive: void_invoice.`). For per-action hints in `tools/list`, use
/// flat exposition ([`Exposition::flat()`](crate::Exposition::flat)).
///
/// ```
/// use mcp_fusion::prelude::*;
///
/// async fn read(_ctx: Ctx<()>, _input: NoInput) -> Result<String> { Ok("a note".into()) }
/// async fn wipe(_ctx: Ctx<()>, _input: NoInput) -> Result<String> { Ok("wiped".into()) }
///
/// let notes = || Group::new("notes", "Notes.")
///     .action(Action::new("read", "Read the note.").read_only().handler(read))
///     .action(Action::new("wipe", "Delete every note.").destructive().handler(wipe));
///
/// // Grouped: one tool, whose hints fit its least safe action.
/// let grouped = FusionServer::builder("notes", "1.0.0").group(notes()).build(()).unwrap();
/// let hints = grouped.tools()[0].annotations.clone().unwrap();
/// assert_eq!((hints.read_only_hint, hints.destructive_hint), (Some(false), Some(true)));
///
/// // Flat: a tool per action, each with its own hints.
/// let flat = FusionServer::builder("notes", "1.0.0").exposition(Exposition::flat()).group(notes()).build(()).unwrap();
/// let read = flat.tools().into_iter().find(|tool| tool.name == "notes_read").unwrap();
/// assert_eq!(read.annotations.unwrap().read_only_hint, Some(true));
/// ```
pub struct Group<S = ()> {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) title: Option<String>,
    pub(crate) icons: Vec<rmcp::model::Icon>,
    pub(crate) actions: Vec<Action<S>>,
    pub(crate) middleware: Layers,
    pub(crate) concurrency: Option<Concurrency>,
    pub(crate) rate_limits: Vec<RateLimit>,
    /// Whether the author accepted a grouped tool without an output schema.
    pub(crate) without_output_schema: bool,
    /// How this group's actions become tools, when not as the server's exposition says.
    pub(crate) exposition: Option<Exposition>,
    /// A group of one action that stands alone: its tool is the action, named as it is.
    pub(crate) standalone: bool,
    /// Whether input schemas are published in the strict subset, when not as the server says.
    pub(crate) strict_schemas: Option<bool>,
    /// The app the group's tool shows its results in.
    pub(crate) app: Option<crate::apps::AppLink>,
}

impl<S: Send + Sync + 'static> Group<S> {
    /// A group with a name (`billing`) and a description the model reads.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Group<S> {
        Group {
            name: name.into(),
            description: description.into(),
            title: None,
            icons: Vec::new(),
            actions: Vec::new(),
            middleware: Layers::default(),
            concurrency: None,
            rate_limits: Vec::new(),
            without_output_schema: false,
            exposition: None,
            standalone: false,
            strict_schemas: None,
            app: None,
        }
    }

    /// The group of one action that stands alone (see
    /// [`ServerBuilder::action`](crate::ServerBuilder::action)).
    pub(crate) fn standalone(action: Action<S>) -> Group<S> {
        let mut group = Group::new(action.name.clone(), action.description.clone());
        group.standalone = true;
        group.actions.push(action);
        group
    }

    /// Lays this group's actions out as `exposition` says, whatever the server's: a server
    /// can keep one group as one tool and expose another's actions flat
    /// (`notes_read`, `notes_wipe`), each with its own hints and output schema.
    ///
    /// ```
    /// use mcp_fusion::prelude::*;
    ///
    /// async fn read(_ctx: Ctx<()>, _input: NoInput) -> Result<String> { Ok("a note".into()) }
    ///
    /// let server = FusionServer::builder("notes", "1.0.0")
    ///     .group(Group::new("notes", "Notes.").exposition(Exposition::flat())
    ///         .action(Action::new("read", "Read the note.").read_only().handler(read)))
    ///     .group(Group::new("drafts", "Drafts.")
    ///         .action(Action::new("read", "Read a draft.").read_only().handler(read)))
    ///     .build(()).unwrap();
    /// let names: Vec<_> = server.tools().into_iter().map(|tool| tool.name.to_string()).collect();
    /// assert_eq!(names, ["notes_read", "drafts"]);
    /// ```
    pub fn exposition(mut self, exposition: Exposition) -> Group<S> {
        self.exposition = Some(exposition);
        self
    }

    /// Publishes this group's input schemas in the strict subset of OpenAI's and Anthropic's
    /// strict tool use, or as written, whatever the server's
    /// [`strict_schemas`](crate::ServerBuilder::strict_schemas) says.
    pub fn strict_schemas(mut self, strict: bool) -> Group<S> {
        self.strict_schemas = Some(strict);
        self
    }

    /// Accepts that the group's tool declares no `outputSchema` although some of its actions
    /// return objects, because others return something else (`Json` of a list, a text).
    ///
    /// A grouped tool declares an output schema only when every action returns a JSON object:
    /// a client that reads the schema expects `structuredContent` from every call. Without
    /// this, a group where one action returns `Json` of a list, a string or a number stops
    /// the build ([`BuildError::OutputSchemaDropped`](crate::BuildError::OutputSchemaDropped)) instead of losing the schema silently,
    /// and one with text beside objects logs a warning. The other ways out: return a struct (a list as one of its
    /// fields), or expose the actions flat (`ServerBuilder::exposition(Exposition::flat())`),
    /// each with its own schema.
    ///
    /// ```
    /// use mcp_fusion::prelude::*;
    ///
    /// #[derive(serde::Serialize, schemars::JsonSchema)]
    /// struct Note { id: u64 }
    ///
    /// async fn get(_ctx: Ctx<()>, _input: NoInput) -> Result<Json<Note>> { Ok(Json(Note { id: 1 })) }
    /// async fn ids(_ctx: Ctx<()>, _input: NoInput) -> Result<Json<Vec<u64>>> { Ok(Json(vec![1])) }
    ///
    /// let group = || Group::new("notes", "Notes.")
    ///     .action(Action::new("get", "Read the note.").handler(get))
    ///     .action(Action::new("ids", "List the ids.").handler(ids));
    /// let refused = FusionServer::builder("notes", "1.0.0").group(group()).build(());
    /// assert!(matches!(refused, Err(BuildError::OutputSchemaDropped { .. })));
    ///
    /// let accepted = FusionServer::builder("notes", "1.0.0").group(group().without_output_schema()).build(());
    /// assert!(accepted.unwrap().tools()[0].output_schema.is_none());
    /// ```
    pub fn without_output_schema(mut self) -> Group<S> {
        self.without_output_schema = true;
        self
    }

    /// Adds an action.
    pub fn action(mut self, action: Action<S>) -> Group<S> {
        self.actions.push(action);
        self
    }

    /// A human-readable title for the tool.
    pub fn title(mut self, title: impl Into<String>) -> Group<S> {
        self.title = Some(title.into());
        self
    }

    /// Adds an icon a client may show beside it (MCP 2025-11-25): `src` an `https:` URL or a
    /// `data:` URI (anything else fails the build), with an optional MIME type, sizes and theme.
    /// Shown on the group's tool, and in flat exposition on each action's tool that has none
    /// of its own.
    pub fn icon(mut self, icon: rmcp::model::Icon) -> Group<S> {
        self.icons.push(icon);
        self
    }

    /// Shows the group's results in the app at `uri`: the grouped tool carries
    /// `_meta.ui.resourceUri`, and in flat exposition so does each action's tool that names no
    /// app of its own.
    pub fn app(mut self, uri: impl Into<String>) -> Group<S> {
        self.app = Some(crate::apps::AppLink { uri: uri.into(), visibility: None });
        self
    }

    /// Limits the calls of this tool running at once, with a line of waiting calls; the rest
    /// are shed with `SERVER_BUSY`.
    pub fn concurrency(mut self, limits: Concurrency) -> Group<S> {
        self.concurrency = Some(limits);
        self
    }

    /// Limits the calls of every action of this group, counted together under the group's name
    /// and the limit's name.
    pub fn rate_limit(mut self, limit: RateLimit) -> Group<S> {
        self.rate_limits.push(limit);
        self
    }

    /// Adds a middleware around every action of the group, after every guard (inside the
    /// server's, outside the action's).
    pub fn middleware(mut self, middleware: impl Middleware) -> Group<S> {
        self.middleware.push(Placement::Inner, middleware);
        self
    }

    /// Adds a middleware of every action of the group just outside a guard stage.
    pub fn middleware_before(mut self, stage: Stage, middleware: impl Middleware) -> Group<S> {
        self.middleware.push(Placement::Before(stage), middleware);
        self
    }

    /// Adds a middleware of every action of the group just inside a guard stage.
    pub fn middleware_after(mut self, stage: Stage, middleware: impl Middleware) -> Group<S> {
        self.middleware.push(Placement::After(stage), middleware);
        self
    }
}
