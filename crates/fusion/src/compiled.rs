//! The compiled entry: a group, an action, a mounted tool, a resource or a prompt once its
//! names are checked, its schemas compiled and its chain assembled — what routing finds and a
//! call runs.

use std::collections::HashMap;
use std::sync::Arc;

use mcp_fusion_wire::ContractAwareness;
use rmcp::model::Tool;

use crate::context::EntryKind;
use crate::guard::{ConcurrencyGuard, RequireCaller};
use crate::handler::Decoder;
use crate::middleware::Chain;
use crate::validation::Checker;

/// A group ready to serve: its tools as listed, and its actions.
pub(crate) struct CompiledGroup {
    pub name: String,
    pub tools: Vec<Tool>,
    pub actions: Vec<Arc<CompiledAction>>,
    by_action: HashMap<String, usize>,
    pub concurrency: Option<Arc<ConcurrencyGuard>>,
    /// The argument that picks an action when the group is one tool; `None` for a group whose
    /// actions are tools of their own (flat, standalone, a mount).
    pub discriminator: Option<String>,
    /// Its tools as listed to a caller offered only some of its actions (named by the
    /// predicate); `None` for a mount, whose tools are listed as its upstream lists them.
    pub(crate) relist: Option<Relist>,
}

/// The tools of a group for the actions a predicate admits.
pub(crate) type Relist = Arc<dyn Fn(&dyn Fn(&str) -> bool) -> Vec<Tool> + Send + Sync>;

impl CompiledGroup {
    /// The group `name`, listed as `tools`, serving `actions` (their names unique).
    pub(crate) fn new(
        name: String,
        tools: Vec<Tool>,
        actions: Vec<CompiledAction>,
        concurrency: Option<Arc<ConcurrencyGuard>>,
    ) -> CompiledGroup {
        let by_action = actions.iter().enumerate().map(|(index, action)| (action.name().to_owned(), index)).collect();
        let actions = actions.into_iter().map(Arc::new).collect();
        CompiledGroup { name, tools, actions, by_action, concurrency, discriminator: None, relist: None }
    }

    /// The action named `name` (without the group's prefix).
    pub(crate) fn action(&self, name: &str) -> Option<&Arc<CompiledAction>> {
        self.by_action.get(name).map(|&index| &self.actions[index])
    }

    /// The action names, in order.
    pub(crate) fn action_names(&self) -> impl Iterator<Item = &str> {
        self.actions.iter().map(|action| action.name())
    }

    /// The qualified action names (`billing.get_invoice`), in order.
    pub(crate) fn qualified_names(&self) -> impl Iterator<Item = &str> {
        self.actions.iter().map(|action| &*action.qualified)
    }
}

/// An action ready to serve: its checks, its decoder, its chain.
pub(crate) struct CompiledAction {
    pub qualified: Arc<str>,
    /// Where the action's own name starts in `qualified`.
    pub(crate) name_at: usize,
    /// `None` for a mounted tool whose arguments go to the upstream unchecked.
    pub(crate) checker: Option<Checker>,
    pub(crate) decode: Decoder,
    pub(crate) chain: Arc<Chain>,
    /// What changed since the lockfile, told in this action's validation errors.
    pub(crate) awareness: Option<ContractAwareness>,
    pub(crate) mask_internal_errors: bool,
    /// Whether a string that spells the number or boolean the schema expects is read as it,
    /// with a warning.
    pub(crate) forgiving_scalars: bool,
    /// Whether the call's envelopes and warnings repeat no value it sent.
    pub(crate) value_free: bool,
    /// Whether a `null` sent for a field the full schema leaves optional means the field is
    /// left out: the schema was published in the strict subset, where such a field is
    /// required and nullable.
    pub(crate) nulls_left_out: bool,
    /// Whether the tool this action is called through declares an output schema.
    pub(crate) output_schema: bool,
    /// What its calls run, as [`CallInfo::entry`](crate::CallInfo::entry) tells a middleware.
    pub(crate) kind: EntryKind,
    /// Who may call it: an identity, scopes. Its auth guard refuses the others; lists shown
    /// per caller leave it out for them, and HTTP asks for the scopes it lacks.
    pub(crate) access: RequireCaller,
    /// Whether its calls run as tasks for a client that declared the extension.
    pub(crate) task: Option<crate::task::TaskSupport>,
    /// Whether its handler asks in the call and becomes a task itself (`Ctx::become_task`).
    pub(crate) questions_first: bool,
    /// Whether it only reads (a lost task of it may simply run again).
    pub(crate) read_only: bool,
    /// The names of other actions its author wrote (what for, the name), checked against the
    /// catalog it joins.
    pub(crate) names_written: Vec<(&'static str, String)>,
    /// Whether the actions its envelopes name are this server's, to be said as called; a
    /// mounted tool's name its upstream's, said the mount's way where they are made.
    pub(crate) names_local_actions: bool,
    /// For a mounted tool that groups its upstream's actions: how a call names one, so its
    /// validation errors name the action called, not only the tool.
    pub(crate) upstream_actions: Option<Arc<UpstreamActions>>,
}

/// The actions a mounted grouped tool serves, and the argument that picks one.
#[derive(Debug)]
pub(crate) struct UpstreamActions {
    /// The argument that names the action (`action`).
    pub(crate) discriminator: String,
    /// The action names the upstream publishes for the tool.
    pub(crate) actions: Vec<String>,
    /// The fields each action takes, where the upstream publishes its input schema.
    pub(crate) fields: std::collections::HashMap<String, std::collections::HashSet<String>>,
}

impl CompiledAction {
    /// The entry `qualified` (whose own name starts at `name_at`), checked by `checker`,
    /// decoded by `decode`, served by `chain`; told of no drift, and with no output schema
    /// until the tool it is listed in says otherwise.
    pub(crate) fn new(
        qualified: Arc<str>,
        name_at: usize,
        checker: Option<Checker>,
        decode: Decoder,
        chain: Chain,
        mask_internal_errors: bool,
    ) -> CompiledAction {
        let access = RequireCaller::open(Arc::clone(&qualified));
        CompiledAction {
            qualified,
            name_at,
            checker,
            decode,
            chain: Arc::new(chain),
            awareness: None,
            mask_internal_errors,
            forgiving_scalars: false,
            value_free: false,
            nulls_left_out: false,
            output_schema: false,
            kind: EntryKind::Action,
            access,
            task: None,
            questions_first: false,
            read_only: false,
            upstream_actions: None,
            names_written: Vec::new(),
            names_local_actions: true,
        }
    }

    /// The action's own name (`get_invoice`).
    pub(crate) fn name(&self) -> &str {
        &self.qualified[self.name_at..]
    }
}
