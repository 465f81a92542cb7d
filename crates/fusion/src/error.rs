//! Why a server could not be built, and the error type handlers may return.

/// Any error a handler or a `from_fn` middleware may return besides a [`ToolError`](mcp_fusion_wire::ToolError).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What a handler returns: `Result<T>` is `Result<T, BoxError>`, so `?` takes any error.
///
/// `?` on any `std::error::Error` (a `rusqlite::Error`, an `io::Error`, …) ends the call with
/// a critical `INTERNAL_ERROR` naming the action; a [`ToolError`](mcp_fusion_wire::ToolError)
/// returned or `?`-ed through it reaches the model unchanged, whatever wraps it; an
/// `rmcp::ErrorData` returned or `?`-ed answers the request with that JSON-RPC error instead (a
/// task fails with it). Whether the model reads the error's text or only an incident id (the
/// text then goes to the log) is
/// [`ServerBuilder::mask_internal_errors`](crate::ServerBuilder::mask_internal_errors):
/// masked by default in release builds, shown in debug builds.
///
/// ```
/// use mcp_fusion::{Ctx, Json, Result, ToolError};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct ReadNote { id: u32 }
///
/// async fn read_note(_ctx: Ctx<()>, input: ReadNote) -> Result<Json<String>> {
///     if input.id == 0 {
///         return Err(ToolError::not_found("No note 0; ids start at 1.").into());
///     }
///     let text = std::fs::read_to_string(format!("notes/{}.txt", input.id))?; // io::Error: INTERNAL_ERROR
///     Ok(Json(text))
/// }
/// # let _ = read_note;
/// ```
pub type Result<T, E = BoxError> = std::result::Result<T, E>;

/// Why a server could not be built. Each message names what was found and what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two groups or actions, or two exposed tools, share a name.
    #[error("duplicate {what} {name:?}: names must be unique; rename one of them")]
    Duplicate {
        /// `group`, `action`, `tool` or `extension`.
        what: &'static str,
        /// The repeated name.
        name: String,
    },
    /// A group has no action.
    #[error("group {group:?} has no action: add one with `.action(..)` or drop the group")]
    EmptyGroup {
        /// The group.
        group: String,
    },
    /// A name is empty, too long, or holds characters it may not hold (MCP clients reject
    /// tool names outside `A-Z a-z 0-9 _ -`).
    #[error("invalid {what} name {name:?}: use 1 to 64 characters from {allowed}")]
    InvalidName {
        /// `group`, `action` or `rate limit`.
        what: &'static str,
        /// The name.
        name: String,
        /// The characters allowed.
        allowed: &'static str,
    },
    /// An action or a prompt was declared without a handler.
    #[error("{what} {action:?} has no handler: call `.handler(..)` on it")]
    MissingHandler {
        /// `action` or `prompt`.
        what: &'static str,
        /// The qualified action, or the prompt's name.
        action: String,
    },
    /// Some actions of a grouped tool return objects and another returns `Json` of a list, a
    /// string or a number, so the tool would declare no output schema at all.
    #[error(
        "group {group:?} would lose its outputSchema: {with_schema} return JSON objects, but {found}; a grouped tool declares an output schema only when every action returns an object. Return a struct instead (a list as one of its fields: `Json<Notes>` with `notes: Vec<Note>`), expose the actions flat (`.exposition(Exposition::flat())` on the server builder: each action its own tool and schema), or accept a tool without one: `Group::without_output_schema()`"
    )]
    OutputSchemaDropped {
        /// The group.
        group: String,
        /// The actions that return objects, quoted and joined (`"get", "add"`).
        with_schema: String,
        /// The others and what they return (`"ids" returns array`).
        found: String,
    },
    /// An app that cannot be served as MCP Apps ask.
    #[error("the app {uri:?} cannot be served: {reason}")]
    App {
        /// The app's URI.
        uri: String,
        /// What is wrong and what to do.
        reason: String,
    },
    /// A tool links to an app the server does not declare.
    #[error(
        "the tool {tool:?} shows its results in the app {uri:?}, which the server does not declare: add it with `.app(App::new({uri:?}, ..))`{known}"
    )]
    UnknownApp {
        /// The tool whose `_meta.ui.resourceUri` names it.
        tool: String,
        /// The URI it names.
        uri: String,
        /// `; the server declares "ui://…"`, or nothing.
        known: String,
    },
    /// An icon's `src` is neither an `https:` URL nor a `data:` URI.
    #[error(
        "the icon of {of} has the src {src:?}: an icon's src must be an https: URL (https://example.com/icon.png) or a data: URI (data:image/png;base64,...), which clients accept; serve it over https or embed it"
    )]
    Icon {
        /// What the icon is on (`the action "billing.get_invoice"`).
        of: String,
        /// The src given, cut to 80 characters.
        src: String,
    },
    /// An action's input does not describe a JSON object.
    #[error("the input of {action:?} must be a struct (a JSON object schema), but its schema is {schema}")]
    InputNotObject {
        /// The qualified action.
        action: String,
        /// The generated schema.
        schema: String,
    },
    /// An action's input has a field named like the discriminator of grouped exposition.
    #[error(
        "the input of {action:?} has a field {field:?}, which is the discriminator of grouped exposition: rename the field or set another discriminator"
    )]
    FieldIsDiscriminator {
        /// The qualified action.
        action: String,
        /// The field.
        field: String,
    },
    /// Two rate limits of one scope share a name, so they would share one counter.
    #[error(
        "two rate limits of {scope} are both named {name:?}, so they would count in one counter: give one of them its own name with `RateLimit::named(..)`"
    )]
    DuplicateRateLimit {
        /// The qualified action, the group, or `the server`.
        scope: String,
        /// The shared name.
        name: String,
    },
    /// The lockfile given to [`contract_lockfile`](crate::ServerBuilder::contract_lockfile)
    /// holds more tools than a lockfile may.
    #[error(
        "the lockfile has {tools} tools, more than the {max} a lockfile may hold; lock a server of fewer tools with `fusion lock`"
    )]
    LockfileTooLarge {
        /// The tools it holds.
        tools: usize,
        /// The most a lockfile may hold.
        max: usize,
    },
    /// An action names, where its author wrote a name at build time (a deprecation's
    /// replacement, the `check_with` of an action that stands alone), an action the server
    /// does not have.
    #[error(
        "{action:?} names {named:?} as its {what}, which is no action of this server: name an action it serves (`group.action`, or a standalone action's name)"
    )]
    NamesNoAction {
        /// The qualified action.
        action: String,
        /// What the name is for (`replacement`, `check_with`).
        what: &'static str,
        /// The name as written.
        named: String,
    },
    /// An action's [`check_with`](crate::Action::check_with) names no read-only action of its
    /// group.
    #[error(
        "{action:?} checks its effect with {check:?}, {}: name a read-only action of the same group",
        if *found { "which is not read-only" } else { "which the group does not have" }
    )]
    CheckWith {
        /// The qualified action.
        action: String,
        /// The action it names.
        check: String,
        /// Whether the group has that action (it is then not read-only).
        found: bool,
    },
    /// A cache hint says a freshness longer than [`MAX_TTL`](crate::cache::MAX_TTL).
    #[error(
        "the cache hint of {what} says {ttl:?}, longer than the {max:?} a client reads back exactly: give a shorter ttl"
    )]
    CacheHint {
        /// Where it was set: `the server's default`, a list's method, or a resource's URI.
        what: String,
        /// The freshness it says.
        ttl: std::time::Duration,
        /// The longest a hint may say.
        max: std::time::Duration,
    },
    /// An extension's name is not `{vendor-prefix}/{extension-name}`.
    #[error(
        "invalid extension name {name:?}: use `vendor-prefix/extension-name`, such as `com.example/receipts`, each part 1 to 64 characters from A-Z a-z 0-9 . _ -"
    )]
    InvalidExtension {
        /// The name.
        name: String,
    },
    /// A resource's URI or a template cannot be served as written.
    #[error("the resource {uri:?} cannot be served: {reason}")]
    ResourceUri {
        /// The URI or template as declared.
        uri: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A template's parameters and its handler's parameter struct do not agree.
    #[error(
        "the template {template:?} and the fields of its handler's parameters differ: {reason}; give the struct one field per {{parameter}}"
    )]
    TemplateParameters {
        /// The template.
        template: String,
        /// Which names are missing on which side.
        reason: String,
    },
    /// A completer was given for an argument the prompt or template does not have.
    #[error("{of} has no argument {argument:?} to complete: name one of the fields of its input")]
    Completion {
        /// The prompt or template.
        of: String,
        /// The argument named.
        argument: String,
    },
    /// The generated JSON Schema could not be compiled.
    #[error("the input schema of {action:?} does not compile: {reason}")]
    Schema {
        /// The qualified action.
        action: String,
        /// What the validator said.
        reason: String,
    },
    /// An argument mirrored into an `Mcp-Param-*` header
    /// ([`Action::param_header`](crate::Action::param_header), or an `x-mcp-header` in the input's
    /// schema) breaks a rule a client holds the tool to.
    #[error("{action:?} cannot mirror an argument into an HTTP header: {reason}")]
    ParamHeader {
        /// The qualified action.
        action: String,
        /// Which rule, and what to write instead.
        reason: String,
    },
    /// A skill cannot be served: its `SKILL.md`, a path, a limit (see [`skill`](crate::skill)).
    #[error("{0}")]
    Skill(Box<crate::skill::SkillError>),
    /// A mount was set ready with more tools than it takes ([`Mount::max_tools`]).
    ///
    /// [`Mount::max_tools`]: crate::handoff::Mount::max_tools
    #[error(
        "upstream {mount:?} lists {tools} tools, more than the {max} its mount takes: raise the mount's max_tools if it really serves that many"
    )]
    TooManyTools {
        /// The mount's namespace.
        mount: String,
        /// The tools the upstream listed.
        tools: usize,
        /// The most the mount takes.
        max: usize,
    },
}

impl From<crate::skill::SkillError> for BuildError {
    fn from(error: crate::skill::SkillError) -> BuildError {
        BuildError::Skill(Box::new(error))
    }
}
