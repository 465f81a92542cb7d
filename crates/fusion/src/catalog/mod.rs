//! The catalog: the tools a server lists and where each tool name leads, as one value. The
//! server holds it behind an atomic pointer, so groups can come and go while calls run: a
//! call routes in the catalog of the moment it arrived and keeps its action to the end.

mod candidate;
mod index;
mod mounted;
mod offer;
mod routing;
mod search;
mod strict;
mod tools;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rmcp::model::Tool;

pub(crate) use crate::context::CalledNames;
pub(crate) use candidate::Candidate;
pub use mcp_fusion_contract::Exposition;
pub(crate) use mounted::{
    MAX_TOOL_NAME, MountStatus, Mounted, in_seconds, is_tool_name, mounted_guess, not_served, whole_seconds,
};
pub use search::{GET_TOOL_DETAILS, SEARCH_TOOLS};
pub(crate) use search::{MATCHES, details, search_tools};
pub(crate) use strict::{published, strict_tool};
pub(crate) use tools::{ActionSpec, GroupSpec, Layout, group_tools, listed_icons};

use crate::compiled::{CompiledAction, CompiledGroup};
use crate::error::BuildError;
use crate::task::TaskSupport;

/// The tools of a server and how their names route.
pub(crate) struct Catalog {
    tools: Vec<Tool>,
    routes: HashMap<String, Route>,
    groups: Vec<Arc<CompiledGroup>>,
    mounts: Mounts,
    /// Each local action as a call names it.
    names: Arc<CalledNames>,
    /// What callers are shown, when some actions ask for an identity or scopes.
    offers: Option<offer::Offers>,
    /// Whether routing errors leave out the names a call sent (a tool, an action).
    value_free: bool,
    /// Whether `tools/list` shows, instead of the mounted tools, the tools that find them.
    tool_search: bool,
    /// The index `search_tools` looks in, made at the first search of this catalog: a list
    /// that changes is a new catalog, with an index of its own.
    search_index: std::sync::OnceLock<index::SearchIndex>,
}

/// The mounted namespaces' upstreams, by namespace: each namespace is also a group's name.
pub(crate) type Mounts = HashMap<String, Arc<Mounted>>;

/// Where a tool name leads.
#[derive(Debug, Clone, Copy)]
enum Route {
    /// A grouped tool: the discriminator picks among the group's actions.
    Group { tool: usize, group: usize },
    /// A flat tool: one action.
    Action { tool: usize, group: usize, action: usize },
}

impl Catalog {
    /// The catalog of `groups`, each already compiled with its tools, of which those named in
    /// `mounts` are mounted namespaces; group and tool names must be unique.
    pub(crate) fn new(groups: Vec<Arc<CompiledGroup>>, mounts: Mounts) -> Result<Catalog, BuildError> {
        let mut tools = Vec::new();
        let mut routes = HashMap::new();
        let mut group_names = HashSet::new();
        for (g, group) in groups.iter().enumerate() {
            if !group_names.insert(group.name.as_str()) {
                return Err(BuildError::Duplicate { what: "group", name: group.name.clone() });
            }
            for (t, tool) in group.tools.iter().enumerate() {
                // A mount lists one tool per upstream tool, whatever the server's exposition.
                let route = match group.discriminator {
                    Some(_) => Route::Group { tool: tools.len(), group: g },
                    None => Route::Action { tool: tools.len(), group: g, action: t },
                };
                if routes.insert(tool.name.to_string(), route).is_some() {
                    return Err(BuildError::Duplicate { what: "tool", name: tool.name.to_string() });
                }
                tools.push(tool.clone());
            }
        }
        debug_assert!(mounts.keys().all(|namespace| group_names.contains(namespace.as_str())));
        let offers = offer::Offers::of(&groups);
        let names = Arc::new(called_names(&groups));
        for action in groups.iter().flat_map(|group| &group.actions) {
            for (what, named) in &action.names_written {
                if names.called(named, &action.qualified).is_none() {
                    let (action, named) = (action.qualified.to_string(), named.clone());
                    return Err(BuildError::NamesNoAction { action, what, named });
                }
            }
        }
        Ok(Catalog {
            tools,
            routes,
            groups,
            mounts,
            names,
            offers,
            value_free: false,
            tool_search: false,
            search_index: std::sync::OnceLock::new(),
        })
    }

    /// The same catalog, listing the tools that find the mounted ones instead of them when
    /// `tool_search`.
    pub(crate) fn tool_search(mut self, tool_search: bool) -> Result<Catalog, BuildError> {
        for name in [search::SEARCH_TOOLS, search::GET_TOOL_DETAILS] {
            if tool_search && self.routes.contains_key(name) {
                return Err(BuildError::Duplicate { what: "tool", name: name.to_owned() });
            }
        }
        self.tool_search = tool_search;
        Ok(self)
    }

    /// The same catalog, whose routing errors repeat no name a call sent when `value_free`.
    pub(crate) fn value_free(mut self, value_free: bool) -> Catalog {
        self.value_free = value_free;
        self
    }

    /// Each local action as a call names it.
    pub(crate) fn names(&self) -> &Arc<CalledNames> {
        &self.names
    }

    /// The tools `tools/list` returns.
    pub(crate) fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool named `name`.
    pub(crate) fn tool(&self, name: &str) -> Option<&Tool> {
        let (Route::Group { tool, .. } | Route::Action { tool, .. }) = self.routes.get(name)?;
        self.tools.get(*tool)
    }

    /// The groups, in the order they were added.
    pub(crate) fn groups(&self) -> &[Arc<CompiledGroup>] {
        &self.groups
    }

    /// The group named `name`.
    pub(crate) fn group(&self, name: &str) -> Option<&Arc<CompiledGroup>> {
        self.groups.iter().find(|group| group.name == name)
    }

    /// Whether a client may know `tool` with an output schema: listed with one now, or a
    /// mounted tool its upstream listed with one before it began reconnecting.
    pub(crate) fn declares_output_schema(&self, tool: &str) -> bool {
        if let Some(listed) = self.tools().iter().find(|listed| listed.name == tool) {
            return listed.output_schema.is_some();
        }
        tool.split_once('.')
            .and_then(|(namespace, rest)| Some(self.mounts.get(namespace)?.output_schemas.contains(rest)))
            .unwrap_or(false)
    }

    /// The action with the qualified name `qualified` (`billing.get_invoice`, or the name of
    /// an action that stands alone).
    pub(crate) fn action(&self, qualified: &str) -> Option<&Arc<CompiledAction>> {
        match qualified.split_once('.') {
            Some((group, action)) => self.group(group)?.action(action),
            None => self.group(qualified)?.action(qualified),
        }
    }

    /// The mounted namespaces' upstreams.
    pub(crate) fn mounts(&self) -> &Mounts {
        &self.mounts
    }

    /// Whether an action of the catalog runs as a task for a client that asks.
    pub(crate) fn runs_tasks(&self) -> bool {
        self.groups.iter().any(|group| group.actions.iter().any(|action| action.task.is_some()))
    }

    /// Whether the tool `name` runs as a task when a client asks: a flat tool as its action
    /// does; a grouped tool when any of its actions does, and only as a task when all of them
    /// do. `None`: it never does (or there is no such tool).
    pub(crate) fn task_support(&self, name: &str) -> Option<TaskSupport> {
        match *self.routes.get(name)? {
            Route::Action { group, action, .. } => self.groups[group].actions[action].task,
            Route::Group { group, .. } => {
                let supports = self.groups[group].actions.iter().map(|action| action.task);
                supports.reduce(|all, one| match (all, one) {
                    (Some(TaskSupport::Required), Some(TaskSupport::Required)) => Some(TaskSupport::Required),
                    (None, None) => None,
                    _ => Some(TaskSupport::Optional),
                })?
            }
        }
    }

    /// The namespaces that are mounts, in the order of the groups.
    pub(crate) fn mounted_namespaces(&self) -> impl Iterator<Item = &str> {
        self.mounted_groups().map(|group| group.name.as_str())
    }

    /// The groups that are mounted namespaces, in order.
    fn mounted_groups(&self) -> impl Iterator<Item = &Arc<CompiledGroup>> {
        self.groups.iter().filter(|group| self.mounts.contains_key(&group.name))
    }

    fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|tool| tool.name.as_ref())
    }
}

/// The actions' names as calls say them: qualified for an action of a grouped tool, the tool's
/// name for one that is a tool of its own (flat, standalone, mounted).
fn called_names(groups: &[Arc<CompiledGroup>]) -> CalledNames {
    CalledNames::new(groups.iter().flat_map(|group| {
        group.actions.iter().enumerate().map(|(index, action)| {
            let called = match (&group.discriminator, group.tools.get(index)) {
                (None, Some(tool)) => tool.name.to_string(),
                _ => action.qualified.to_string(),
            };
            (&*action.qualified, action.name(), called)
        })
    }))
}
