//! The builder: what a server serves and how it guards it, frozen by `build`.

use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use mcp_fusion_contract::{Lockfile, MAX_LOCKFILE_TOOLS};
use mcp_fusion_wire::ChangeSeverity;
use rmcp::model::{ExtensionCapabilities, Implementation, JsonObject, RequestStateCodec};

use super::awareness::Awareness;
use super::compile::{Settings, compile_group};
use super::mount::compile_mount;
use super::prompts::Prompts;
use super::resources::Resources;
use super::{FusionServer, Inner};
use crate::action::Action;
use crate::cache::{CacheHint, CacheHints, Listing};
use crate::catalog::{Catalog, Exposition, Mounts};
use crate::error::BuildError;
use crate::group::Group;
use crate::guard::{
    Concurrency, ConcurrencyGuard, FailurePolicy, Idempotency, MemoryStore, RateLimit, RateLimitStore, ServerGuards,
    Stage, StoreSettings,
};
use crate::guard::{Layers, Placement};
use crate::handoff::{Mount, MountState};
use crate::middleware::Middleware;
use crate::prompt::Prompt;
use crate::resource::{Resource, ResourceTemplate, SubscriptionLimits};
use crate::skill::{Skill, Skills};
use crate::subscriptions::Subscriptions;

/// Builds a [`FusionServer`]: name it, add groups, guards and middleware, choose the
/// exposition, then [`build`](ServerBuilder::build) it with the application state.
///
/// ```
/// use mcp_fusion::{Action, Ctx, FusionServer, Group};
/// use mcp_fusion_wire::ToolError;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Echo { text: String }
///
/// async fn echo(_ctx: Ctx<()>, input: Echo) -> Result<String, ToolError> {
///     Ok(input.text)
/// }
///
/// let server = FusionServer::builder("echo-server", "1.0.0")
///     .group(Group::new("echo", "Repeats what it is given.").action(Action::new("say", "Echo the text.").handler(echo)))
///     .build(())
///     .unwrap();
/// assert_eq!(server.tools()[0].name, "echo");
/// assert_eq!(server.chain("echo.say").unwrap(), ["auth", "handler"]);
/// ```
pub struct ServerBuilder<S> {
    info: Implementation,
    instructions: Option<String>,
    groups: Vec<Group<S>>,
    resources: Vec<Resource<S>>,
    apps: Vec<crate::apps::App>,
    templates: Vec<ResourceTemplate<S>>,
    prompts: Vec<Prompt<S>>,
    skill_sets: Vec<Skills>,
    skills: Vec<Skill>,
    mounts: Vec<Mount>,
    middleware: Layers,
    exposition: Exposition,
    mask_internal_errors: bool,
    forgiving_scalars: bool,
    strict_schemas: bool,
    value_free_errors: bool,
    envelope_budget: usize,
    tool_search: bool,
    concurrency: Option<Concurrency>,
    rate_limits: Vec<RateLimit>,
    store: Arc<dyn RateLimitStore>,
    failure_policy: FailurePolicy,
    store_timeout: Duration,
    timeout: Option<Duration>,
    idempotency: Idempotency,
    max_result_bytes: Option<usize>,
    require_identity: bool,
    lockfile: Option<Lockfile>,
    awareness_min: ChangeSeverity,
    awareness_cap: usize,
    subscription_limits: SubscriptionLimits,
    cache: CacheHints,
    extensions: Vec<(String, JsonObject)>,
    tasks: Option<crate::task::Tasks>,
    request_state: crate::rounds::Sealing,
}

impl<S: Send + Sync + 'static> ServerBuilder<S> {
    pub(super) fn new(info: Implementation) -> ServerBuilder<S> {
        ServerBuilder {
            info,
            instructions: None,
            groups: Vec::new(),
            resources: Vec::new(),
            apps: Vec::new(),
            templates: Vec::new(),
            prompts: Vec::new(),
            skill_sets: Vec::new(),
            skills: Vec::new(),
            mounts: Vec::new(),
            middleware: Layers::default(),
            exposition: Exposition::default(),
            mask_internal_errors: !cfg!(debug_assertions),
            forgiving_scalars: true,
            strict_schemas: false,
            value_free_errors: false,
            envelope_budget: mcp_fusion_wire::DEFAULT_ENVELOPE_BUDGET,
            tool_search: false,
            concurrency: None,
            rate_limits: Vec::new(),
            store: Arc::new(MemoryStore::new()),
            failure_policy: FailurePolicy::Open,
            store_timeout: Duration::from_millis(250),
            timeout: None,
            idempotency: Idempotency::new(),
            max_result_bytes: None,
            require_identity: false,
            lockfile: None,
            awareness_min: ChangeSeverity::Risky,
            awareness_cap: 5,
            subscription_limits: SubscriptionLimits::default(),
            cache: CacheHints::default(),
            extensions: Vec::new(),
            tasks: None,
            request_state: crate::rounds::Sealing::random(),
        }
    }

    /// Seals the `requestState` of multi round-trip requests (MCP 2026-07-28) with `codec`
    /// instead of a random key made at build: replicas behind one address need the same key
    /// (or keyring, to rotate keys), or a round answered by another replica is refused.
    ///
    /// ```
    /// use mcp_fusion::FusionServer;
    /// use mcp_fusion::rmcp::model::RequestStateCodec;
    ///
    /// let codec = RequestStateCodec::try_new(*b"a key of at least thirty-two bytes!").unwrap();
    /// let server = FusionServer::builder("billing", "1").request_state(codec).build(()).unwrap();
    /// # let _ = server;
    /// ```
    pub fn request_state(mut self, codec: RequestStateCodec) -> ServerBuilder<S> {
        self.request_state.codec = Arc::new(codec);
        self
    }

    /// How long the answers to a call's questions are taken after the question (default 10
    /// minutes): a later answer gets the envelope `INPUT_EXPIRED` and the call is asked again.
    /// Zero expires every state at once.
    pub fn request_state_ttl(mut self, ttl: Duration) -> ServerBuilder<S> {
        self.request_state.ttl = ttl;
        self
    }

    /// The cache hint of every list and read that says none of its own (MCP 2026-07-28's
    /// `ttlMs` and `cacheScope`; see [`crate::cache`]). Without one: stale at once, private.
    pub fn cache_hint(mut self, hint: CacheHint) -> ServerBuilder<S> {
        self.cache.set_default(hint);
        self
    }

    /// The cache hint of one list, the same on each of its pages.
    pub fn list_cache_hint(mut self, listing: Listing, hint: CacheHint) -> ServerBuilder<S> {
        self.cache.set_list(listing, hint);
        self
    }

    /// Advertises the extension `name` (`vendor-prefix/extension-name`) with its `settings`
    /// in the server's capabilities; a call tells which extensions its client declared
    /// ([`CallInfo::client_extension`](crate::CallInfo::client_extension)).
    ///
    /// ```
    /// use mcp_fusion::FusionServer;
    ///
    /// let settings = serde_json::json!({"formats": ["pdf"]}).as_object().cloned().unwrap();
    /// let server = FusionServer::builder("billing", "1").extension("com.example/receipts", settings).build(()).unwrap();
    /// # let _ = server;
    /// ```
    pub fn extension(mut self, name: impl Into<String>, settings: JsonObject) -> ServerBuilder<S> {
        self.extensions.push((name.into(), settings));
        self
    }

    /// Adds a group of actions.
    pub fn group(mut self, group: Group<S>) -> ServerBuilder<S> {
        self.groups.push(group);
        self
    }

    /// Adds an action that stands alone: its own tool, named as the action (`create_task`),
    /// with its own annotations and output schema, whatever the server's exposition. What a
    /// server ported from rmcp's `#[tool]`s keeps: every tool's name and hints. Standalone
    /// actions and groups mix in one server; a standalone action's qualified name (in logs,
    /// rate limits, `available_actions`) is its own name.
    ///
    /// ```
    /// use mcp_fusion::prelude::*;
    ///
    /// async fn list(_ctx: Ctx<()>, _input: NoInput) -> Result<String> { Ok("no tasks".into()) }
    /// async fn wipe(_ctx: Ctx<()>, _input: NoInput) -> Result<String> { Ok("wiped".into()) }
    ///
    /// let server = FusionServer::builder("tasks", "1.0.0")
    ///     .action(Action::new("list_tasks", "List the tasks.").read_only().handler(list))
    ///     .action(Action::new("delete_all", "Delete every task.").destructive().handler(wipe))
    ///     .build(()).unwrap();
    /// let tools = server.tools();
    /// assert_eq!((tools[0].name.as_ref(), tools[1].name.as_ref()), ("list_tasks", "delete_all"));
    /// assert_eq!(tools[0].annotations.as_ref().unwrap().read_only_hint, Some(true));
    /// ```
    pub fn action(mut self, action: Action<S>) -> ServerBuilder<S> {
        self.groups.push(Group::standalone(action));
        self
    }

    /// Adds a resource with a fixed URI (see [`resource`](crate::resource)).
    pub fn resource(mut self, resource: Resource<S>) -> ServerBuilder<S> {
        self.resources.push(resource);
        self
    }

    /// Adds an app (MCP Apps): its page is served as a `ui://` resource and the server
    /// advertises the `io.modelcontextprotocol/ui` extension; actions and groups link to it
    /// with `.app(uri)` (see [`apps`](crate::apps)).
    pub fn app(mut self, app: crate::apps::App) -> ServerBuilder<S> {
        self.apps.push(app);
        self
    }

    /// Adds a resource template: resources whose URIs expand it, read with typed parameters.
    pub fn resource_template(mut self, template: ResourceTemplate<S>) -> ServerBuilder<S> {
        self.templates.push(template);
        self
    }

    /// Adds a prompt (see [`prompt`](crate::prompt)).
    pub fn prompt(mut self, prompt: Prompt<S>) -> ServerBuilder<S> {
        self.prompts.push(prompt);
        self
    }

    /// Serves `skills` (see [`skill`](crate::skill)): each file a resource read through the
    /// server's guards, and the skills extension declared with `skills/list`, `skills/get` and
    /// `resources/directory/read`. Sets given here and skills given to
    /// [`skill`](Self::skill) are checked together at build: two skills at one path stop it.
    pub fn skills(mut self, skills: Skills) -> ServerBuilder<S> {
        self.skill_sets.push(skills);
        self
    }

    /// Serves one skill declared in Rust, checked at build: a malformed one (its frontmatter,
    /// a path, a limit) makes [`build`](Self::build) return [`BuildError::Skill`].
    ///
    /// ```
    /// use mcp_fusion::FusionServer;
    /// use mcp_fusion::skill::Skill;
    ///
    /// let text = "---\nname: git-workflow\ndescription: Follow the team's branching and commit rules.\n---\n# Git\n";
    /// let server = FusionServer::builder("docs", "1").skill(Skill::new("git-workflow", text)).build(()).unwrap();
    /// assert_eq!(server.skills()[0].uri, "skill://git-workflow/SKILL.md");
    /// ```
    pub fn skill(mut self, skill: Skill) -> ServerBuilder<S> {
        self.skills.push(skill);
        self
    }

    /// Chooses how actions appear as tools (default: grouped, discriminator `action`).
    pub fn exposition(mut self, exposition: Exposition) -> ServerBuilder<S> {
        self.exposition = exposition;
        self
    }

    /// Adds an icon of the server, sent to the client at `initialize` (MCP 2025-11-25): `src`
    /// an `https:` URL or a `data:` URI (anything else fails the build).
    pub fn icon(mut self, icon: rmcp::model::Icon) -> ServerBuilder<S> {
        self.info.icons.get_or_insert_with(Vec::new).push(icon);
        self
    }

    /// Instructions sent to the client at `initialize`.
    pub fn instructions(mut self, instructions: impl Into<String>) -> ServerBuilder<S> {
        self.instructions = Some(instructions.into());
        self
    }

    /// Adds a middleware around every action, after every guard (outside the groups' and the
    /// actions' own).
    pub fn middleware(mut self, middleware: impl Middleware) -> ServerBuilder<S> {
        self.middleware.push(Placement::Inner, middleware);
        self
    }

    /// Adds a middleware around every action just outside a guard stage: it sees every call
    /// that reaches the stage, including those the stage refuses.
    pub fn middleware_before(mut self, stage: Stage, middleware: impl Middleware) -> ServerBuilder<S> {
        self.middleware.push(Placement::Before(stage), middleware);
        self
    }

    /// Adds a middleware around every action just inside a guard stage: it sees only the
    /// calls the stage lets through.
    pub fn middleware_after(mut self, stage: Stage, middleware: impl Middleware) -> ServerBuilder<S> {
        self.middleware.push(Placement::After(stage), middleware);
        self
    }

    /// Refuses anonymous calls to every action with `AUTH_REQUIRED`.
    pub fn requires_identity(mut self, require: bool) -> ServerBuilder<S> {
        self.require_identity = require;
        self
    }

    /// Limits the calls of every action, counted together under `*` and the limit's name.
    pub fn rate_limit(mut self, limit: RateLimit) -> ServerBuilder<S> {
        self.rate_limits.push(limit);
        self
    }

    /// Where rate limits count (default: this process's memory). A Redis store shares the
    /// counts between replicas.
    pub fn rate_limit_store(mut self, store: impl RateLimitStore) -> ServerBuilder<S> {
        self.store = Arc::new(store);
        self
    }

    /// What to do when the store cannot answer (default: admit the call), and how long to
    /// wait for it (default: 250 ms) — a call never hangs on the store.
    pub fn rate_limit_failure(mut self, policy: FailurePolicy, timeout: Duration) -> ServerBuilder<S> {
        self.failure_policy = policy;
        self.store_timeout = timeout;
        self
    }

    /// Limits the calls running at once across the whole server (each group's own limit
    /// applies first).
    pub fn concurrency(mut self, limits: Concurrency) -> ServerBuilder<S> {
        self.concurrency = Some(limits);
        self
    }

    /// Fails calls that run longer than `timeout` with `TIMEOUT`, unless the action sets its own.
    pub fn timeout(mut self, timeout: Duration) -> ServerBuilder<S> {
        self.timeout = Some(timeout);
        self
    }

    /// Where the keys of actions declared [`idempotent_by_key`](crate::Action::idempotent_by_key)
    /// are kept, and for how long (default: [`Idempotency::new`], in this process's memory).
    pub fn idempotency(mut self, keys: Idempotency) -> ServerBuilder<S> {
        self.idempotency = keys;
        self
    }

    /// Cuts the text of results longer than `bytes` and adds a `RESULT_TRUNCATED` warning; a
    /// tool with an output schema keeps its structured content whole, or fails with
    /// `RESULT_TRUNCATED` when that does not fit.
    pub fn max_result_bytes(mut self, bytes: usize) -> ServerBuilder<S> {
        self.max_result_bytes = Some(bytes);
        self
    }

    /// Replaces the message of wrapped internal errors by an incident id; the full error
    /// chain goes to the log under that id only.
    ///
    /// On by default in release builds (without `debug_assertions`), so a database's error, a
    /// query or a path never reaches a model in production; off by default in debug builds, so
    /// the model (and the developer reading along) sees what failed while the server is
    /// written. Set it to choose either way.
    pub fn mask_internal_errors(mut self, mask: bool) -> ServerBuilder<S> {
        self.mask_internal_errors = mask;
        self
    }

    /// Whether a string that spells a number or a boolean (`"200"`, `"false"`), sent where the
    /// schema expects that number or boolean, is read as what it spells (default: yes). The
    /// call then runs with the value read — the handler, idempotency keys and the log see it —
    /// and its result carries an `ARGUMENTS_CONVERTED` warning saying what was read and how to
    /// send it next time. Only exact spellings a 64-bit number holds without loss are read, and
    /// only when every other argument is valid; anything else is refused as before.
    /// [`Action::forgiving_scalars`](crate::Action::forgiving_scalars) and
    /// [`Mount::forgiving_scalars`](crate::handoff::Mount::forgiving_scalars) decide for one action or
    /// mount.
    pub fn forgiving_scalars(mut self, forgive: bool) -> ServerBuilder<S> {
        self.forgiving_scalars = forgive;
        self
    }

    /// Publishes every tool's input schema in the strict subset that OpenAI's strict function
    /// calling and Anthropic's strict tool use accept (default: no): every object closed with
    /// `additionalProperties: false`, every field required and the optional ones nullable,
    /// and what the subset cannot say (bounds, lengths, most formats, defaults) moved into the
    /// field's description. Calls are still checked against the full schema, so its refusals
    /// say what the strict schema could not; `null` for a field that is optional in the full
    /// schema means the field is left out. A tool whose schema the subset cannot hold (a map,
    /// a field that takes any value, a recursive type) is published as written, with a
    /// warning in the log. [`Group::strict_schemas`](crate::Group::strict_schemas) and
    /// [`Mount::strict_schemas`](crate::handoff::Mount::strict_schemas) decide for one group
    /// or mount. See `docs/strict-schemas.md`.
    pub fn strict_schemas(mut self, strict: bool) -> ServerBuilder<S> {
        self.strict_schemas = strict;
        self
    }

    /// The most characters an error or warning envelope of a call takes (default
    /// [`DEFAULT_ENVELOPE_BUDGET`](mcp_fusion_wire::DEFAULT_ENVELOPE_BUDGET), 8,000; at least
    /// [`MIN_ENVELOPE_BUDGET`](mcp_fusion_wire::MIN_ENVELOPE_BUDGET)). Hosts cut long tool
    /// results (Claude Code near 11,000 characters, Copilot CLI at 10 KB): an envelope over its
    /// budget keeps its message and recovery, which come first, and cuts the lists after
    /// them — the actions it names, its details, its field lines — saying how many more there
    /// are and that `tools/list` lists them all.
    pub fn envelope_budget(mut self, chars: usize) -> ServerBuilder<S> {
        self.envelope_budget = chars.max(mcp_fusion_wire::MIN_ENVELOPE_BUDGET);
        self
    }

    /// Tool search (default: no): `tools/list` shows, instead of the mounted upstreams' tools,
    /// two tools that find them — `search_tools`, by name and by the words of their
    /// descriptions, and `get_tool_details`, one tool whole — as MCP's progressive discovery
    /// describes; the server's own tools stay listed. Every mounted tool is still called by its
    /// name, and an unknown name is answered with the closest ones. For a gateway whose mounts
    /// serve more tools than a model should read up front. A tool of the server named
    /// `search_tools` or `get_tool_details` stops the build.
    pub fn tool_search(mut self, search: bool) -> ServerBuilder<S> {
        self.tool_search = search;
        self
    }

    /// Errors that never repeat a value the caller sent (default: no): the sentences, details
    /// and did-you-mean hints say field names, declared constraints and allowed values only.
    /// For data that must not come back in a tool result or reach a host's transcript
    /// (medical, financial, personal).
    pub fn value_free_errors(mut self, value_free: bool) -> ServerBuilder<S> {
        self.value_free_errors = value_free;
        self
    }

    /// Self-healing: compares the server's contracts with this known-good lockfile when it is
    /// built, logs the changes, and embeds the changes of an action (BREAKING and RISKY, at
    /// most five, by default) in the validation errors of that action, so a model calibrated
    /// on the old contract learns what changed in the same turn. The drift is logged as one
    /// summary line; a lockfile of more than
    /// [`MAX_LOCKFILE_TOOLS`](mcp_fusion_contract::MAX_LOCKFILE_TOOLS) tools fails the build.
    pub fn contract_lockfile(mut self, lockfile: Lockfile) -> ServerBuilder<S> {
        self.lockfile = Some(lockfile);
        self
    }

    /// Which changes the validation errors tell (`min` and more severe), and how many at most.
    pub fn contract_awareness(mut self, min: ChangeSeverity, cap: usize) -> ServerBuilder<S> {
        self.awareness_min = min;
        self.awareness_cap = cap;
        self
    }

    /// Where tasks are kept and the times they are given (default: [`Tasks::new`], in
    /// memory). Set, the server advertises the tasks extension even before an action marked
    /// [`Action::task`](crate::Action::task) is added.
    ///
    /// [`Tasks::new`]: crate::task::Tasks::new
    pub fn tasks(mut self, tasks: crate::task::Tasks) -> ServerBuilder<S> {
        self.tasks = Some(tasks);
        self
    }

    /// Bounds the resource subscriptions clients may hold: URIs per `subscriptions/listen`
    /// request, per session, across the server, and the length of one URI (default:
    /// [`SubscriptionLimits::default`]). The HTTP and stdio transports of this crate refuse a
    /// listen request past its bound before rmcp decodes it.
    pub fn subscription_limits(mut self, limits: SubscriptionLimits) -> ServerBuilder<S> {
        self.subscription_limits = limits;
        self
    }

    /// Declares a mount: the namespace of tools an upstream MCP server serves, connecting
    /// until whoever reaches the upstream calls [`FusionServer::set_mount`] (see
    /// [`handoff`](crate::handoff)). Declared, its calls answer `HANDOFF_CONNECTING` from the
    /// first, and a lockfile's contracts of its tools are compared when it connects, not at
    /// start-up.
    pub fn mount(mut self, mount: Mount) -> ServerBuilder<S> {
        self.mounts.push(mount);
        self
    }

    /// Freezes the server: every group compiled (names checked, schemas generated and
    /// compiled, each action's chain assembled in the order of [`Stage`]), then the catalog
    /// of tools and routes laid out — once. `state` is what handlers reach with
    /// [`Ctx::state`](crate::Ctx::state): a value, or an `Arc` of one you share.
    pub fn build(mut self, state: impl Into<Arc<S>>) -> Result<FusionServer, BuildError> {
        // Checked before anything is compared: a lockfile built in code skips `Lockfile::parse`.
        if let Some(lockfile) = &self.lockfile
            && lockfile.contracts.len() > MAX_LOCKFILE_TOOLS
        {
            return Err(BuildError::LockfileTooLarge { tools: lockfile.contracts.len(), max: MAX_LOCKFILE_TOOLS });
        }
        let cache = self.cache.checked()?;
        super::compile::check_icons(|| "the server".to_owned(), self.info.icons.as_deref().unwrap_or_default())?;
        let apps = std::mem::take(&mut self.apps);
        let app_uris = served_apps(&apps)?;
        if !apps.is_empty() && !self.extensions.iter().any(|(name, _)| name == crate::apps::UI_EXTENSION) {
            let settings = serde_json::json!({"mimeTypes": [crate::apps::APP_MIME_TYPE]});
            self.extensions
                .push((crate::apps::UI_EXTENSION.to_owned(), settings.as_object().cloned().unwrap_or_default()));
        }
        self.resources.extend(apps.iter().map(app_resource));
        let skills = Skills::merged(std::mem::take(&mut self.skill_sets), std::mem::take(&mut self.skills))?;
        let skills = Arc::clone(skills.catalog());
        if !skills.is_empty() {
            self.extensions.push(super::skills::extension());
        }
        let extensions = extensions(std::mem::take(&mut self.extensions))?;
        let state = state.into();
        let mounts = std::mem::take(&mut self.mounts);
        let (mut resources, templates) = (std::mem::take(&mut self.resources), std::mem::take(&mut self.templates));
        resources.extend(super::skills::resources(&skills));
        let prompts = std::mem::take(&mut self.prompts);
        let tasks = self.tasks.take();
        let (info, instructions, groups, mut settings) = self.into_parts();
        if settings.tool_search {
            settings.search = Some(super::search::SearchTools::compile(&settings)?);
        }
        let resources = Resources::compile(&settings, resources, templates, &state)?;
        let gates = super::gates::Gates::compile(&settings)?;
        let prompts = Prompts::compile(&settings, prompts, &state)?;
        let mut compiled = groups
            .into_iter()
            .map(|group| compile_group(&settings, group, &state).map(Arc::new))
            .collect::<Result<Vec<_>, BuildError>>()?;
        let mut mounted = Mounts::new();
        for mount in &mounts {
            let (group, upstream) = compile_mount(&settings, mount, MountState::Connecting)?;
            mounted.insert(group.name.clone(), Arc::new(upstream));
            compiled.push(Arc::new(group));
        }
        let catalog = Catalog::new(compiled, mounted)?
            .value_free(settings.guards.value_free_errors)
            .tool_search(settings.tool_search)?;
        check_app_links(catalog.tools(), &app_uris)?;
        settings.names.store(Arc::clone(catalog.names()));
        if let Some(awareness) = &settings.awareness {
            let namespaces: Vec<&str> = mounts.iter().map(Mount::namespace).collect();
            awareness.log_drift(catalog.tools(), &namespaces);
        }
        Ok(FusionServer::serving(Arc::new(Inner {
            info,
            instructions,
            settings,
            cache,
            extensions,
            catalog: ArcSwap::from_pointee(catalog),
            resources_declared: resources.any().into(),
            resources: ArcSwap::from_pointee(resources),
            prompts,
            gates,
            skills,
            editing: Default::default(),
            peers: Default::default(),
            in_flight: Default::default(),
            tasks: super::tasks::TaskRuntime::new(tasks),
            #[cfg(feature = "http")]
            relay: Default::default(),
        })))
    }

    fn into_parts(self) -> (Implementation, Option<String>, Vec<Group<S>>, Settings) {
        let concurrency = self.concurrency.map(|limits| Arc::new(ConcurrencyGuard::new("The server", limits)));
        let awareness =
            self.lockfile.map(|lockfile| Awareness { lockfile, min: self.awareness_min, cap: self.awareness_cap });
        let settings = Settings {
            exposition: self.exposition,
            mask_internal_errors: self.mask_internal_errors,
            forgiving_scalars: self.forgiving_scalars,
            strict_schemas: self.strict_schemas,
            envelope_budget: self.envelope_budget,
            tool_search: self.tool_search,
            search: None,
            guards: ServerGuards {
                require_identity: self.require_identity,
                rate_limits: self.rate_limits,
                concurrency,
                store: StoreSettings {
                    store: self.store,
                    failure_policy: self.failure_policy,
                    timeout: self.store_timeout,
                },
                timeout: self.timeout,
                idempotency: self.idempotency,
                max_result_bytes: self.max_result_bytes,
                value_free_errors: self.value_free_errors,
            },
            middleware: self.middleware,
            awareness,
            subscriptions: Arc::new(Subscriptions::new(self.subscription_limits)),
            log_levels: Default::default(),
            request_state: self.request_state,
            names: Default::default(),
        };
        (self.info, self.instructions, self.groups, settings)
    }
}

/// The URIs of the apps a server declares, each app checked.
fn served_apps(apps: &[crate::apps::App]) -> Result<Vec<String>, BuildError> {
    apps.iter()
        .map(|app| match app.problem() {
            Some(reason) => Err(BuildError::App { uri: app.uri.clone(), reason }),
            None => Ok(app.uri.clone()),
        })
        .collect()
}

/// The resource that serves an app's page, with its `_meta.ui` listed and read.
fn app_resource<S: Send + Sync + 'static>(app: &crate::apps::App) -> Resource<S> {
    use rmcp::model::ResourceContents;

    let (page, meta) = (app.html(), app.meta());
    let mut resource = Resource::new(app.uri.clone(), app.name()).mime_type(crate::apps::APP_MIME_TYPE);
    if let (Some(title), _) = app.about() {
        resource = resource.title(title);
    }
    if let (_, Some(description)) = app.about() {
        resource = resource.description(description);
    }
    resource.about.meta = Some(meta.clone());
    resource.handler(move |_ctx: crate::Ctx<S>| {
        let contents = ResourceContents::TextResourceContents {
            uri: String::new(),
            mime_type: Some(crate::apps::APP_MIME_TYPE.to_owned()),
            text: page.clone(),
            meta: Some(meta.clone()),
        };
        async move { Ok::<_, crate::wire::ToolError>(contents) }
    })
}

/// Every tool's app is one the server declares: a host reads it when it renders the result.
fn check_app_links(tools: &[rmcp::model::Tool], apps: &[String]) -> Result<(), BuildError> {
    for tool in tools {
        let linked = tool.meta.as_ref().and_then(|meta| meta.get("ui")).and_then(|ui| ui.get("resourceUri"));
        let Some(uri) = linked.and_then(serde_json::Value::as_str) else { continue };
        if !apps.iter().any(|app| app == uri) {
            let known = match crate::similarity::closest(uri, apps.iter().map(String::as_str)) {
                Some(close) => format!("; the server declares {close:?}"),
                None => String::new(),
            };
            return Err(BuildError::UnknownApp { tool: tool.name.to_string(), uri: uri.to_owned(), known });
        }
    }
    Ok(())
}

/// The extensions a server advertises, each name checked and given once.
fn extensions(declared: Vec<(String, JsonObject)>) -> Result<ExtensionCapabilities, BuildError> {
    let part = |part: &str| {
        (1..=64).contains(&part.len())
            && part.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    };
    let mut extensions = ExtensionCapabilities::new();
    for (name, settings) in declared {
        if !name.split_once('/').is_some_and(|(vendor, extension)| part(vendor) && part(extension)) {
            return Err(BuildError::InvalidExtension { name });
        }
        if extensions.contains_key(&name) {
            return Err(BuildError::Duplicate { what: "extension", name });
        }
        extensions.insert(name, settings);
    }
    Ok(extensions)
}
