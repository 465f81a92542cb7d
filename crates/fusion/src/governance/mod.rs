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
