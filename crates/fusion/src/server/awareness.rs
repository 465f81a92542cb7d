//! Contract awareness: how the server heals a model calibrated on an older contract. The
//! server compares its tools with a known-good lockfile, logs what drifted, and embeds the
//! changes of an action in that action's validation errors, so the model learns what changed
//! in the same turn its old-style call was rejected.

use mcp_fusion_contract::{ContractDiff, Contracts, Lockfile, contracts_of, diff_contracts};
use mcp_fusion_wire::{ChangeSeverity, ContractAwareness, echo};
use rmcp::model::Tool;

use crate::catalog::GroupSpec;

/// The most tool names the drift summary names.
const NAMED_IN_SUMMARY: usize = 5;

/// Logs the drift from `locked` to `current` as one warning: how many tools changed, were
/// removed and were added, the worst severity, and the first few names. One line whatever the
/// size of the drift: a line per change flooded the log with a large or foreign lockfile, and
/// `fusion diff` tells each change.
fn log_summary(locked: &Contracts, current: &Contracts) {
    let diff = diff_contracts(locked, current);
    let Some(max) = diff.max_severity() else { return };
    let (mut changed, mut removed, mut added) = (0usize, 0usize, 0usize);
    for tool in &diff.tools {
        match (locked.contains_key(&tool.tool), current.contains_key(&tool.tool)) {
            (true, false) => removed += 1,
            (false, true) => added += 1,
            _ => changed += 1,
        }
    }
    // A mounted upstream names its own tools: echoed.
    let mut names: Vec<String> = diff.tools.iter().take(NAMED_IN_SUMMARY).map(|tool| echo(&tool.tool)).collect();
    if diff.tools.len() > NAMED_IN_SUMMARY {
        names.push("…".to_owned());
    }
    tracing::warn!(
        changed,
        removed,
        added,
        max_severity = %max,
        "contract changed since the lockfile: {changed} tool(s) changed, {removed} removed, {added} added (max severity {max}): {}; `fusion diff` shows each change",
        names.join(", ")
    );
}

/// The lockfile, and which of its changes the validation errors tell.
pub(crate) struct Awareness {
    pub lockfile: Lockfile,
    /// The least severe change told.
    pub min: ChangeSeverity,
    /// The most changes told per action.
    pub cap: usize,
}

impl Awareness {
    /// Logs the changes between the lockfile and `tools` as one summary line, once, when the
    /// server starts.
    pub(crate) fn log_drift(&self, tools: &[Tool], mounts: &[&str]) {
        // A mount's tools are compared when it connects (`log_drift_of`), not missed now.
        let mounted =
            |name: &str| mounts.iter().any(|ns| name.strip_prefix(ns).is_some_and(|rest| rest.starts_with('.')));
        let locked: Contracts = self
            .lockfile
            .contracts
            .iter()
            .filter(|(name, _)| !mounted(name))
            .map(|(n, c)| (n.clone(), c.clone()))
            .collect();
        log_summary(&locked, &contracts_of(tools));
    }

    /// Logs the changes of `tools` since the lockfile as one summary line (a mount that just
    /// connected).
    pub(crate) fn log_drift_of(&self, tools: &[Tool]) {
        log_summary(&self.locked(tools), &contracts_of(tools));
    }

    /// The block each tool carries when every tool is one action (a mount, flat exposition).
    pub(crate) fn of_tools(&self, tools: &[Tool]) -> Vec<Option<ContractAwareness>> {
        let diff = diff_contracts(&self.locked(tools), &contracts_of(tools));
        tools.iter().map(|tool| self.block(&diff, tool.name.to_string(), None, &tool.name)).collect()
    }

    /// The lockfile's contracts of the tools named in `tools`.
    fn locked(&self, tools: &[Tool]) -> Contracts {
        self.lockfile
            .contracts
            .iter()
            .filter(|(name, _)| tools.iter().any(|tool| tool.name == name.as_str()))
            .map(|(name, contract)| (name.clone(), contract.clone()))
            .collect()
    }

    /// The block of one action, when its changes are severe enough to tell.
    fn block(
        &self,
        diff: &ContractDiff,
        tool: String,
        action: Option<&str>,
        qualified: &str,
    ) -> Option<ContractAwareness> {
        let mut changes: Vec<_> =
            diff.action_changes(&tool, action).into_iter().filter(|c| c.severity >= self.min).collect();
        changes.sort_by_key(|change| std::cmp::Reverse(change.severity));
        changes.truncate(self.cap);
        (!changes.is_empty()).then(|| ContractAwareness { tool, action: qualified.to_owned(), changes })
    }

    /// The block each action of a group carries (in the group's order), `None` for an action
    /// whose contract did not change enough to tell.
    pub(crate) fn of_group(
        &self,
        discriminator: Option<&str>,
        group: &GroupSpec<'_>,
        tools: &[Tool],
    ) -> Vec<Option<ContractAwareness>> {
        let diff = diff_contracts(&self.locked(tools), &contracts_of(tools));
        group
            .actions
            .iter()
            .enumerate()
            .map(|(index, action)| match discriminator {
                Some(_) => self.block(&diff, group.name.to_owned(), Some(action.name.as_str()), &action.qualified),
                None => self.block(&diff, tools[index].name.to_string(), None, &action.qualified),
            })
            .collect()
    }
}
