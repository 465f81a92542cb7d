//! The server: groups compiled into a catalog, answering `tools/list` and `tools/call`
//! through rmcp. One `tools/call` goes transport → routing (the catalog) → validation →
//! the chain of guards and middleware → the handler → an envelope or a result.

#[cfg(feature = "http")]
mod access;
mod awareness;
mod builder;
mod call;
mod call_record;
mod compile;
mod completion;
mod experimental_tasks;
mod gates;
mod mount;
mod mount_output;
mod param_headers;
mod peers;
mod prompts;
#[cfg(feature = "http")]
mod relay;
mod resources;
mod search;
mod service;
pub(crate) mod skills;
mod tasks;
mod upstream_failure;
mod upstream_names;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use mcp_fusion_wire::ErrorCode;
use rmcp::model::{Implementation, Prompt, Resource as ListedResource, ResourceTemplate as ListedTemplate, Tool};

use crate::subscriptions::Connection;
pub(crate) use crate::subscriptions::Subscriptions;
#[cfg(feature = "http")]
pub(crate) use access::Addressed;
pub use builder::ServerBuilder;
#[cfg(feature = "http")]
pub(crate) use relay::Relay;
#[cfg(all(feature = "redis", feature = "http"))]
pub(crate) use relay::Relayed;

use crate::catalog::Catalog;
use crate::catalog::{MountStatus, Mounts};
use crate::compiled::CompiledGroup;
use crate::error::BuildError;
use crate::group::Group;
use crate::guard::ConcurrencyGuard;
use crate::handoff::{Mount, MountState};
use crate::in_flight::InFlight;
use crate::resource::{Resource, ResourceTemplate, SubscriptionLimits};
use compile::{Settings, compile_group};
pub(crate) use peers::ListChanged;
use peers::Peers;
use resources::{Resources, compile_resource, compile_template};

/// A built MCP server: cheap to clone, shareable across sessions and transports.
///
/// Each clone is one connection to serve: the value a transport hands to rmcp for a session
/// (a stateful HTTP session, a stdio connection, a stateless HTTP request). When rmcp drops
/// it, at the connection's end, the resource subscriptions of its sessions are freed.
pub struct FusionServer {
    inner: Arc<Inner>,
    connection: Connection,
}

impl Clone for FusionServer {
    fn clone(&self) -> FusionServer {
        FusionServer::serving(Arc::clone(&self.inner))
    }
}

struct Inner {
    info: Implementation,
    instructions: Option<String>,
    settings: Settings,
    /// The cache hints of lists and reads.
    cache: crate::cache::CacheHints,
    /// The extensions the server advertises.
    extensions: rmcp::model::ExtensionCapabilities,
    /// Swapped whole when groups come or go; calls read the catalog of their moment.
    catalog: ArcSwap<Catalog>,
    /// Swapped whole when resources or templates come or go; reads keep the entry they found.
    resources: ArcSwap<Resources>,
    /// Whether `initialize` declares the resources capability: from the first resource or
    /// template on, and then for good, so a session never loses it while they come and go.
    resources_declared: AtomicBool,
    prompts: prompts::Prompts,
    /// The guards of the requests that run no action, prompt or read of their own.
    gates: gates::Gates,
    /// The skills it serves (their files are among `resources`).
    skills: Arc<crate::skill::Catalog>,
    /// Held while a new catalog or set of resources is made, so two changes never undo each
    /// other.
    editing: Mutex<()>,
    peers: Peers,
    in_flight: InFlight,
    /// Where its tasks are kept, and those this process runs.
    tasks: tasks::TaskRuntime,
    /// What it tells clients of other replicas goes through, when its sessions are shared.
    #[cfg(feature = "http")]
    relay: std::sync::OnceLock<Arc<dyn Relay>>,
}

impl std::fmt::Debug for FusionServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let catalog = self.inner.catalog.load();
        let tools: Vec<&str> = catalog.tools().iter().map(|tool| tool.name.as_ref()).collect();
        f.debug_struct("FusionServer").field("name", &self.inner.info.name).field("tools", &tools).finish()
    }
}

impl FusionServer {
    /// The server, as a connection of its own.
    fn serving(inner: Arc<Inner>) -> FusionServer {
        let connection = inner.settings.subscriptions.connection();
        FusionServer { inner, connection }
    }

    /// The open session a transport issued `id` for, once it finished `initialize`, when no
    /// message can be sent to its client in the middle of a call there: the client declared
    /// neither sampling, elicitation nor roots, and set no logging level.
    #[cfg(feature = "http")]
    pub(crate) fn quiet_session(&self, id: &str) -> Option<rmcp::Peer<rmcp::RoleServer>> {
        let peer = self.inner.peers.issued(id)?;
        let capabilities = &peer.peer_info()?.capabilities;
        let may_ask =
            capabilities.sampling.is_some() || capabilities.elicitation.is_some() || capabilities.roots.is_some();
        (!may_ask && self.inner.settings.log_levels.of(&peer).is_none()).then_some(peer)
    }

    /// Starts a server named `name` at `version` (what `initialize` reports).
    pub fn builder<S: Send + Sync + 'static>(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder<S> {
        ServerBuilder::new(Implementation::new(name, version))
    }

    /// The tools `tools/list` returns now.
    pub fn tools(&self) -> Vec<Tool> {
        let catalog = self.inner.catalog.load();
        catalog.listed(catalog.tools().to_vec())
    }

    /// The resources `resources/list` returns now.
    pub fn resources(&self) -> Vec<ListedResource> {
        self.inner.resources.load().listed().to_vec()
    }

    /// The resource templates `resources/templates/list` returns now.
    pub fn resource_templates(&self) -> Vec<ListedTemplate> {
        self.inner.resources.load().listed_templates().to_vec()
    }

    /// The prompts `prompts/list` returns.
    pub fn prompts(&self) -> Vec<Prompt> {
        self.inner.prompts.listed().to_vec()
    }

    /// Tells the clients subscribed to `uri` that it changed (`notifications/resources/updated`),
    /// without waiting for them. Handlers reach the same through
    /// [`CallInfo::resource_updated`](crate::CallInfo::resource_updated).
    pub fn resource_updated(&self, uri: &str) {
        self.inner.settings.subscriptions.updated(uri);
    }

    /// Tells the clients that a listing changed: those of every replica when sessions are
    /// shared.
    fn listing_changed(&self, which: ListChanged) {
        #[cfg(feature = "http")]
        if let Some(relay) = self.relay() {
            return relay.list_changed(which);
        }
        self.inner.peers.list_changed(which, &self.inner.settings.subscriptions);
    }

    /// The bounds on the resource subscriptions clients may hold (see
    /// [`ServerBuilder::subscription_limits`]).
    pub fn subscription_limits(&self) -> SubscriptionLimits {
        self.inner.settings.subscriptions.limits()
    }

    /// How many resource URIs clients are subscribed to right now: one per subscription of a
    /// session, one per URI of an open `subscriptions/listen` request.
    pub fn subscription_count(&self) -> usize {
        self.inner.settings.subscriptions.held()
    }

    /// The layers a call of `action` (`billing.pay_invoice`) goes through, outermost first,
    /// the handler last: the guards it has and the middleware placed around them.
    pub fn chain(&self, action: &str) -> Option<Vec<String>> {
        Some(self.inner.catalog.load().action(action)?.chain.names())
    }

    /// The concurrency guard of a group (`Some("billing")`) or of the whole server (`None`),
    /// if one is configured: how many calls run and wait right now.
    pub fn concurrency_guard(&self, group: Option<&str>) -> Option<Arc<ConcurrencyGuard>> {
        match group {
            Some(group) => self.inner.catalog.load().group(group)?.concurrency.clone(),
            None => self.inner.settings.guards.concurrency.clone(),
        }
    }

    /// Adds `group` to the running server, or replaces the group of the same name, compiled
    /// with the server's settings (exposition, guards, middleware, lockfile); its handlers get
    /// `state`. Connected clients are told with `notifications/tools/list_changed`. Calls
    /// already running finish on the actions they started with.
    pub fn insert_group<S: Send + Sync + 'static>(
        &self,
        group: Group<S>,
        state: impl Into<Arc<S>>,
    ) -> Result<(), BuildError> {
        let group = Arc::new(compile_group(&self.inner.settings, group, &state.into())?);
        self.edit(|groups, mounts| {
            // A group of a mount's name takes the namespace over: it is no longer mounted.
            mounts.remove(&group.name);
            replace_or_add(groups, group);
            true
        })
    }

    /// Removes the group named `name` from the running server, telling connected clients;
    /// `false` when there is no such group. Calls already running finish.
    pub fn remove_group(&self, name: &str) -> bool {
        let mut removed = false;
        let edited = self.edit(|groups, mounts| {
            let before = groups.len();
            groups.retain(|group| group.name != name);
            mounts.remove(name);
            removed = groups.len() < before;
            removed
        });
        // Fewer groups cannot collide: removing never fails.
        debug_assert!(edited.is_ok());
        removed
    }

    /// Makes and swaps in a new catalog from the current groups and mounts as `change` leaves
    /// them, when it says it changed them.
    fn edit(&self, change: impl FnOnce(&mut Vec<Arc<CompiledGroup>>, &mut Mounts) -> bool) -> Result<(), BuildError> {
        let _editing = self.inner.editing.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let current = self.inner.catalog.load();
        let (mut groups, mut mounts) = (current.groups().to_vec(), current.mounts().clone());
        if !change(&mut groups, &mut mounts) {
            return Ok(());
        }
        let settings = &self.inner.settings;
        let catalog = Catalog::new(groups, mounts)?
            .value_free(settings.guards.value_free_errors)
            .tool_search(settings.tool_search)?;
        let changed = catalog.tools() != current.tools();
        self.inner.settings.names.store(Arc::clone(catalog.names()));
        self.inner.catalog.store(Arc::new(catalog));
        if changed {
            self.listing_changed(ListChanged::Tools);
        }
        Ok(())
    }

    /// Adds `resource` to the running server, or replaces the resource at the same URI,
    /// compiled with the server's settings and checked as at build time; its handler gets
    /// `state`. Clients are told with `notifications/resources/list_changed` when the listing
    /// changes (sessions that initialized, and `subscriptions/listen` requests that asked for
    /// it). The resources capability (with `listChanged`) is declared by a server built with a
    /// resource or a template, else from the first one inserted on, so build with one when
    /// every session must hear of later changes. Reads already running finish on the handler
    /// they started with.
    pub fn insert_resource<S: Send + Sync + 'static>(
        &self,
        resource: Resource<S>,
        state: impl Into<Arc<S>>,
    ) -> Result<(), BuildError> {
        let entry = compile_resource(&self.inner.settings, resource, &state.into())?;
        self.edit_resources(|resources| {
            resources.insert(entry);
            true
        });
        Ok(())
    }

    /// Removes the resource at `uri` (`false` when there is none); clients are told with
    /// `notifications/resources/list_changed`. Its subscribers stay subscribed and hear
    /// nothing until a resource at that URI comes back; reads already running finish.
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.edit_resources(|resources| resources.remove(uri)).is_some()
    }

    /// Adds `template` to the running server (tried after the templates it already has), or
    /// replaces the one of the same URI template in its place, compiled and checked as at
    /// build time; clients are told with `notifications/resources/list_changed`.
    pub fn insert_resource_template<S: Send + Sync + 'static>(
        &self,
        template: ResourceTemplate<S>,
        state: impl Into<Arc<S>>,
    ) -> Result<(), BuildError> {
        let entry = compile_template(&self.inner.settings, template, &state.into())?;
        self.edit_resources(|resources| {
            resources.insert_template(entry);
            true
        });
        Ok(())
    }

    /// Removes the template `uri_template` (`false` when there is none); clients are told with
    /// `notifications/resources/list_changed`.
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        self.edit_resources(|resources| resources.remove_template(uri_template)).is_some()
    }

    /// Makes and swaps in a new set of resources from the current one as `change` leaves it,
    /// when it says it changed it. `None` when it did not; else whether clients were told,
    /// which they are only when what they list differs.
    fn edit_resources(&self, change: impl FnOnce(&mut Resources) -> bool) -> Option<bool> {
        let _editing = self.inner.editing.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let current = self.inner.resources.load_full();
        let mut resources = Resources::clone(&current);
        if !change(&mut resources) {
            return None;
        }
        let changed = !resources.lists_as(&current);
        if resources.any() {
            self.inner.resources_declared.store(true, Ordering::Relaxed);
        }
        self.inner.resources.store(Arc::new(resources));
        if changed {
            self.listing_changed(ListChanged::Resources);
        }
        Some(changed)
    }

    /// Sets where the upstream of `mount` stands: connecting, unavailable until a time, or
    /// ready with its tools (compiled with the server's settings and the mount's guards). The
    /// namespace's tools change with it, and connected clients are told when they do.
    pub fn set_mount(&self, mount: &Mount, state: MountState) -> Result<(), BuildError> {
        let (group, mut upstream) = mount::compile_mount(&self.inner.settings, mount, state)?;
        self.edit(|groups, mounts| {
            // Not ready, it lists nothing: what it listed last still tells which of its tools
            // a client knows with an output schema.
            if let Some(before) = mounts.get(&group.name)
                && !matches!(upstream.status, MountStatus::Ready)
            {
                upstream.output_schemas = Arc::clone(&before.output_schemas);
            }
            mounts.insert(group.name.clone(), Arc::new(upstream));
            replace_or_add(groups, Arc::new(group));
            true
        })
    }

    /// Removes the mount (or group) `namespace`; `false` when there is none.
    pub fn remove_mount(&self, namespace: &str) -> bool {
        self.remove_group(namespace)
    }

    /// Sets the gauges a scrape reads, through the `metrics` facade: the calls and tasks running, and
    /// each concurrency guard's calls holding a slot and waiting (the server's as `server`, a
    /// group's by its name). Every known action's call counter exists from the first scrape,
    /// at 0 for `ok` and each canonical error code until it counts, so a rate or an alert on
    /// an outcome works before that outcome first happens (actions added later get theirs at
    /// the next scrape). Cheap, and meant to run just before each scrape rather than on every
    /// call.
    pub fn record_gauges(&self) {
        use crate::observe::{CALLS_IN_FLIGHT, CALLS_TOTAL, CONCURRENCY_ACTIVE, CONCURRENCY_QUEUED, TASKS_RUNNING};
        metrics::gauge!(CALLS_IN_FLIGHT).set(self.in_flight() as f64);
        metrics::gauge!(TASKS_RUNNING).set(self.inner.tasks.running_count() as f64);
        let catalog = self.inner.catalog.load();
        let outcomes = || std::iter::once(call_record::OK).chain(ErrorCode::CANONICAL.iter().map(ErrorCode::as_str));
        for action in catalog.groups().iter().flat_map(|group| group.actions.iter()) {
            let label = metrics::SharedString::from(Arc::clone(&action.qualified));
            for outcome in outcomes() {
                metrics::counter!(CALLS_TOTAL, "action" => label.clone(), "outcome" => outcome).increment(0);
            }
        }
        let groups = catalog.groups().iter().filter_map(|g| Some((g.name.clone(), g.concurrency.as_ref()?)));
        let server = self.inner.settings.guards.concurrency.as_ref().map(|guard| ("server".to_owned(), guard));
        for (name, guard) in server.into_iter().chain(groups) {
            metrics::gauge!(CONCURRENCY_ACTIVE, "guard" => name.clone()).set(guard.active() as f64);
            metrics::gauge!(CONCURRENCY_QUEUED, "guard" => name).set(guard.queued() as f64);
        }
    }

    /// How many calls are running right now.
    pub fn in_flight(&self) -> usize {
        self.inner.in_flight.count()
    }

    /// Completes when no call is running (at once if none is).
    pub async fn idle(&self) {
        self.inner.in_flight.idle().await;
    }
}

/// Puts `group` in the place of the group of its name, or last when there is none.
fn replace_or_add(groups: &mut Vec<Arc<CompiledGroup>>, group: Arc<CompiledGroup>) {
    match groups.iter_mut().find(|known| known.name == group.name) {
        Some(known) => *known = group,
        None => groups.push(group),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ctx;
    use mcp_fusion_wire::ToolError;

    fn summary(text: &'static str) -> Resource<()> {
        Resource::new("billing://summary", "summary")
            .handler(move |_ctx: Ctx<()>| async move { Ok::<_, ToolError>(text) })
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Page {
        page: u32,
    }

    fn pages() -> ResourceTemplate<()> {
        ResourceTemplate::new("docs://pages/{page}", "page")
            .handler(|_ctx: Ctx<()>, uri: Page| async move { Ok::<_, ToolError>(format!("page {}", uri.page)) })
    }

    /// Inserts through the same edit as `insert_resource`; whether clients were told.
    fn insert(server: &FusionServer, resource: Resource<()>) -> Option<bool> {
        let entry = compile_resource(&server.inner.settings, resource, &Arc::new(())).unwrap();
        server.edit_resources(|resources| {
            resources.insert(entry);
            true
        })
    }

    fn insert_template(server: &FusionServer, template: ResourceTemplate<()>) -> Option<bool> {
        let entry = compile_template(&server.inner.settings, template, &Arc::new(())).unwrap();
        server.edit_resources(|resources| {
            resources.insert_template(entry);
            true
        })
    }

    #[test]
    fn only_a_changed_listing_tells_clients() {
        let server =
            FusionServer::builder("s", "1").resource(summary("a")).resource_template(pages()).build(()).unwrap();
        assert_eq!(insert(&server, summary("b")), Some(false), "the same listing with another handler");
        assert_eq!(insert(&server, summary("b").description("Totals.")), Some(true));
        assert_eq!(insert(&server, summary("c").description("Totals.")), Some(false));
        assert_eq!(insert_template(&server, pages()), Some(false));
        assert_eq!(insert_template(&server, pages().title("Pages")), Some(true));
        assert_eq!(server.edit_resources(|resources| resources.remove("billing://elsewhere")), None);
        assert_eq!(server.edit_resources(|resources| resources.remove("billing://summary")), Some(true));
        assert_eq!(server.edit_resources(|resources| resources.remove_template("docs://pages/{page}")), Some(true));
        assert!(server.resources().is_empty() && server.resource_templates().is_empty());
    }

    #[test]
    fn a_replaced_resource_keeps_its_place_and_a_removed_one_its_neighbours_reachable() {
        let other = |uri: &str| Resource::new(uri, uri).handler(|_ctx: Ctx<()>| async { Ok::<_, ToolError>("x") });
        let server = FusionServer::builder("s", "1")
            .resource(other("a://1"))
            .resource(other("a://2"))
            .resource(other("a://3"))
            .build(())
            .unwrap();
        insert(&server, other("a://1").description("First."));
        let uris = |server: &FusionServer| server.resources().into_iter().map(|r| r.uri).collect::<Vec<_>>();
        assert_eq!(uris(&server), ["a://1", "a://2", "a://3"]);
        assert!(server.remove_resource("a://2"));
        assert!(!server.remove_resource("a://2"));
        assert_eq!(uris(&server), ["a://1", "a://3"]);
        let resources = server.inner.resources.load();
        assert!(resources.serves("a://1") && resources.serves("a://3") && !resources.serves("a://2"));
    }
}
