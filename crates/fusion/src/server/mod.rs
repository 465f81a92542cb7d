//! The server: groups compiled into a catalog, answering `tools/list` and `tools/call`
//! through rmcp. One `tools/call` goes transport → routing (the catalog) → validation →
//! the chain of guards and middleware → the handler → an envelope or a result.

mod awareness;
mod builder;
mod call;
mod compile;
mod completion;
mod mount;
mod peers;
mod prompts;
mod resources;
mod service;
mod subscriptions;

use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use rmcp::model::{Implementation, Prompt, Resource, ResourceTemplate, Tool};

pub use builder::ServerBuilder;
pub(crate) use compile::{CompiledAction, CompiledGroup};
pub(crate) use completion::{StateCompleter, state_completer};
pub(crate) use mount::{mounted_guess, not_served};
pub(crate) use subscriptions::{Subscriptions, locked, same_session};

use crate::catalog::Catalog;
use crate::error::BuildError;
use crate::group::Group;
use crate::guard::ConcurrencyGuard;
use crate::handoff::{Mount, MountState};
use crate::in_flight::InFlight;
use compile::{MountStatus, Settings, compile_group};
use peers::Peers;

/// A built MCP server: cheap to clone, shareable across sessions and transports.
#[derive(Clone)]
pub struct FusionServer {
    inner: Arc<Inner>,
}

struct Inner {
    info: Implementation,
    instructions: Option<String>,
    settings: Settings,
    /// Swapped whole when groups come or go; calls read the catalog of their moment.
    catalog: ArcSwap<Catalog>,
    resources: resources::Resources,
    prompts: prompts::Prompts,
    /// Held while a new catalog is made, so two changes never undo each other.
    editing: Mutex<()>,
    peers: Peers,
    in_flight: InFlight,
}

impl std::fmt::Debug for FusionServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let catalog = self.inner.catalog.load();
        let tools: Vec<&str> = catalog.tools().iter().map(|tool| tool.name.as_ref()).collect();
        f.debug_struct("FusionServer").field("name", &self.inner.info.name).field("tools", &tools).finish()
    }
}

impl FusionServer {
    /// Starts a server named `name` at `version` (what `initialize` reports).
    pub fn builder<S: Send + Sync + 'static>(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder<S> {
        ServerBuilder::new(Implementation::new(name, version))
    }

    /// The tools `tools/list` returns now.
    pub fn tools(&self) -> Vec<Tool> {
        self.inner.catalog.load().tools().to_vec()
    }

    /// The resources `resources/list` returns.
    pub fn resources(&self) -> Vec<Resource> {
        self.inner.resources.listed().to_vec()
    }

    /// The resource templates `resources/templates/list` returns.
    pub fn resource_templates(&self) -> Vec<ResourceTemplate> {
        self.inner.resources.listed_templates().to_vec()
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
            None => self.inner.settings.concurrency.clone(),
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
        self.edit(|groups| {
            match groups.iter_mut().find(|known| known.name == group.name) {
                Some(known) => *known = group,
                None => groups.push(group),
            }
            true
        })
    }

    /// Removes the group named `name` from the running server, telling connected clients;
    /// `false` when there is no such group. Calls already running finish.
    pub fn remove_group(&self, name: &str) -> bool {
        let mut removed = false;
        let edited = self.edit(|groups| {
            let before = groups.len();
            groups.retain(|group| group.name != name);
            removed = groups.len() < before;
            removed
        });
        // Fewer groups cannot collide: removing never fails.
        debug_assert!(edited.is_ok());
        removed
    }

    /// Makes and swaps in a new catalog from the current groups as `change` leaves them, when
    /// it says it changed them.
    fn edit(&self, change: impl FnOnce(&mut Vec<Arc<CompiledGroup>>) -> bool) -> Result<(), BuildError> {
        let _editing = self.inner.editing.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut groups = self.inner.catalog.load().groups().to_vec();
        if !change(&mut groups) {
            return Ok(());
        }
        let catalog = Catalog::new(&self.inner.settings.exposition, groups)?;
        let changed = catalog.tools() != self.inner.catalog.load().tools();
        self.inner.catalog.store(Arc::new(catalog));
        if changed {
            self.inner.peers.tools_changed();
        }
        Ok(())
    }

    /// Sets where the upstream of `mount` stands: connecting, unavailable until a time, or
    /// ready with its tools (compiled with the server's settings and the mount's guards). The
    /// namespace's tools change with it, and connected clients are told when they do.
    pub fn set_mount(&self, mount: &Mount, state: MountState) -> Result<(), BuildError> {
        let mut group = mount::compile_mount(&self.inner.settings, mount, state)?;
        self.edit(|groups| {
            match groups.iter_mut().find(|known| known.name == group.name) {
                Some(known) => {
                    // Not ready, it lists nothing: what it listed last still tells which of
                    // its tools a client knows with an output schema.
                    if !matches!(group.mount, Some(MountStatus::Ready)) {
                        group.output_schemas = Arc::clone(&known.output_schemas);
                    }
                    *known = Arc::new(group);
                }
                None => groups.push(Arc::new(group)),
            }
            true
        })
    }

    /// Removes the mount (or group) `namespace`; `false` when there is none.
    pub fn remove_mount(&self, namespace: &str) -> bool {
        self.remove_group(namespace)
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
