//! Governance: a tool's contract is a promise to every agent calibrated on it. Contracts are
//! read from `tools/list`, locked in `fusion.lock`, compared field by field, and — when a
//! changed contract breaks a call — explained to the model in the same turn.

mod contract;
mod diff;
mod lockfile;
mod schema_diff;

pub use contract::{ActionContract, Contracts, ToolContract, contracts_of};
pub use diff::{ContractDiff, ToolDiff, diff_contracts};
pub use lockfile::{LOCKFILE_VERSION, Lockfile, LockfileError};

/// Assertions shared by the governance tests.
#[cfg(test)]
pub(crate) mod testing {
    use mcp_fusion_wire::{ChangeSeverity, ContractChange};

    /// Asserts one change: its severity, field, and before/after values.
    #[track_caller]
    pub(crate) fn check(
        change: &ContractChange,
        severity: ChangeSeverity,
        field: &str,
        before: Option<&str>,
        after: Option<&str>,
    ) {
        assert_eq!(change.severity, severity, "{change:#?}");
        assert_eq!(change.field, field, "{change:#?}");
        assert_eq!(change.before.as_deref(), before, "{change:#?}");
        assert_eq!(change.after.as_deref(), after, "{change:#?}");
    }
}
