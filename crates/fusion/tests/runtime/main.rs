//! The runtime in process: the chain of guards and middleware, the guards' envelopes, healing,
//! listing, lockfiles, `#[action]`, garbage input, idempotency keys, handoff mounts, skills (the
//! SEP's examples and trees others published) and what an operator sees of each call. One test
//! binary, one module per area.

#[path = "../support/mod.rs"]
mod support;

mod action_macro;
mod apps;
mod bad_input;
mod budget;
mod chain;
mod guards;
mod handoff;
mod healing;
mod idempotency;
mod listing;
mod lockfile;
mod observability;
mod pipeline;
mod scalars;
mod search_recall;
mod shapes;
mod skill_trees;
mod skills;
mod strict_schemas;
mod wide_integers;
