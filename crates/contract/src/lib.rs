//! Tool contracts for MCP: what a tool promises, locked, and compared.
//!
//! A tool's contract — its description, input and output schemas, behaviour hints and, for a
//! grouped tool, each action's own — is a promise to every agent calibrated on it: an agent
//! that learnt to call `billing.get_invoice` with an `id` fails the day the tool also
//! requires a `customer_id`. This crate makes those promises explicit:
//!
//! - [`contracts_of`] reads the contracts a `tools/list` states, so it works for any MCP
//!   server, built with this framework or not; [`prompt_contracts_of`] and
//!   [`resource_template_contracts_of`] read those of its prompts and URI templates;
//! - [`Lockfile`] writes them to `fusion.lock` in canonical JSON with a digest per entry, and
//!   reads them back, refusing a file edited by hand;
//! - [`diff_contracts`] (tools) and [`diff_lockfiles`] (everything locked) compare two sets
//!   field by field, each change rated
//!   [`BREAKING`](ChangeSeverity::Breaking) (old calls may now fail),
//!   [`RISKY`](ChangeSeverity::Risky) (old calls work, results or guarantees may differ),
//!   [`SAFE`](ChangeSeverity::Safe) (additions, loosened constraints) or
//!   [`COSMETIC`](ChangeSeverity::Cosmetic) (words only), with a sentence the model can read.
//!
//! It also holds what server and client must agree on to route a qualified action
//! (`billing.get_invoice`) to a tool: the [`Exposition`], and the `_meta` keys a server
//! publishes on each tool ([`published_route`]).
//!
//! The [`governance`] page tells the lockfile format, the severity rules, how `fusion lock`,
//! `fusion check` and `fusion diff` use them, and what the `_meta` keys are for.
//!
//! # A breaking change, found
//!
//! ```
//! use std::sync::Arc;
//!
//! use mcp_fusion_contract::{ChangeSeverity, Lockfile, contracts_of, diff_contracts};
//! use rmcp::model::Tool;
//! use serde_json::json;
//!
//! fn search(schema: serde_json::Value) -> Tool {
//!     Tool::new("search", "Search the catalog.", Arc::new(schema.as_object().cloned().unwrap()))
//! }
//!
//! let query = json!({"q": {"type": "string"}, "limit": {"type": "integer"}});
//! let locked = contracts_of(&[search(json!({"type": "object", "properties": query}))]);
//! let now = contracts_of(&[search(json!({"type": "object", "properties": query, "required": ["q"]}))]);
//!
//! // The lockfile holds exactly what was locked.
//! let text = Lockfile::new(locked.clone()).to_canonical_json();
//! assert_eq!(Lockfile::parse(&text).unwrap().contracts, locked);
//!
//! let diff = diff_contracts(&locked, &now);
//! assert_eq!(diff.max_severity(), Some(ChangeSeverity::Breaking));
//! let change = &diff.tools[0].deltas[0];
//! assert_eq!(change.field, "inputSchema.required");
//! assert_eq!(change.description, r#"Tool "search" now requires new fields: [q]"#);
//! assert_eq!((change.before.as_deref(), change.after.as_deref()), (None, Some(r#"["q"]"#)));
//! ```

mod contract;
mod diff;
mod exposition;
mod lockfile;
mod meta;

pub use contract::{
    ActionContract, ArgumentContract, Contracts, PromptContract, PromptContracts, ResourceTemplateContract,
    ResourceTemplateContracts, ToolContract, contracts_of, prompt_contracts_of, resource_template_contracts_of,
};
pub use diff::{ContractDiff, PromptDiff, ResourceTemplateDiff, ToolDiff, diff_contracts, diff_lockfiles};
pub use exposition::{Exposition, qualified_name, split_qualified};
pub use lockfile::{LOCKFILE_VERSION, Lockfile, LockfileError, MAX_LOCKFILE_BYTES, MAX_LOCKFILE_TOOLS};
pub use mcp_fusion_wire::{ChangeSeverity, ContractChange};
pub use meta::{
    ACTION_META_KEY, ACTIONS_META_KEY, DISCRIMINATOR_META_KEY, INPUT_SCHEMA_META_KEY, MOUNTS_CAPABILITY,
    PublishedRoute, published_route,
};

#[doc = include_str!("../docs/governance.md")]
pub mod governance {}

/// Assertions shared by the diff tests.
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

/// The crate README's examples (its crates.io page), compiled as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct CrateReadme;
