//! The stages of the chain, and where user middleware goes among them: the chain of an action
//! is assembled here, guards and middleware in their documented order.

use std::sync::Arc;

use crate::middleware::{Chain, Endpoint, Middleware};

/// The stages of the chain, in the order a call meets them. User middleware can be placed
/// before or after any of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Credentials refused (`UNAUTHORIZED`), missing (`AUTH_REQUIRED`), or short of a scope
    /// (`FORBIDDEN`). First, so nothing is counted for a caller who may not call at all.
    Auth,
    /// Idempotency keys: a repeat of a finished call gets its result without counting
    /// against any limit; the first call goes on through the rest of the chain.
    Idempotency,
    /// Rate limits: the action's, then its group's, then the server's. Before concurrency,
    /// so a limited call never waits in line for a slot. A call refused by a later limit or
    /// shed by a concurrency guard gives back what the earlier limits counted.
    RateLimit,
    /// Concurrency slots: the group's, then the server's, so a call waits in one line only.
    Concurrency,
    /// `DEPRECATED` warnings for a deprecated action or a deprecated field that was sent.
    Deprecation,
    /// The deadline on everything inside it: user middleware and the handler (`TIMEOUT`).
    /// Time spent waiting for a slot does not count.
    Timeout,
    /// Cuts an oversized result's text and adds a `RESULT_TRUNCATED` warning.
    ResultCap,
}

impl Stage {
    /// Every stage, outermost first.
    pub const ORDER: [Stage; 7] = [
        Stage::Auth,
        Stage::Idempotency,
        Stage::RateLimit,
        Stage::Concurrency,
        Stage::Deprecation,
        Stage::Timeout,
        Stage::ResultCap,
    ];

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// Where a user middleware goes in the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// Just outside a guard stage: it sees every call that reaches that stage.
    Before(Stage),
    /// Just inside a guard stage: it sees only the calls that stage lets through.
    After(Stage),
    /// After every guard, around the handler.
    Inner,
}

/// The user middleware of one level (the server, a group or an action), with where each goes.
#[derive(Clone, Default)]
pub(crate) struct Layers(Vec<(Placement, Arc<dyn Middleware>)>);

impl Layers {
    pub(crate) fn push(&mut self, placement: Placement, middleware: impl Middleware) {
        self.0.push((placement, Arc::new(middleware)));
    }

    fn at(&self, placement: Placement) -> impl Iterator<Item = Arc<dyn Middleware>> + '_ {
        self.0.iter().filter(move |(at, _)| *at == placement).map(|(_, layer)| Arc::clone(layer))
    }
}

/// The built-in guards of one action, by stage.
#[derive(Default)]
pub(crate) struct StageLayers([Vec<Arc<dyn Middleware>>; Stage::ORDER.len()]);

impl StageLayers {
    pub(crate) fn add(&mut self, stage: Stage, guard: impl Middleware) {
        self.0[stage.index()].push(Arc::new(guard));
    }
}

/// The chain in the documented order: for each stage, the user middleware placed before
/// it, its guards, the user middleware placed after it; then the rest of the user
/// middleware; then the handler. `levels` go from outer to inner (server, group, action).
pub(crate) fn assemble(guards: StageLayers, levels: &[&Layers], handler: Endpoint) -> Chain {
    let mut layers = Vec::new();
    let StageLayers(mut by_stage) = guards;
    for stage in Stage::ORDER {
        layers.extend(levels.iter().flat_map(|level| level.at(Placement::Before(stage))));
        layers.append(&mut by_stage[stage.index()]);
        layers.extend(levels.iter().flat_map(|level| level.at(Placement::After(stage))));
    }
    layers.extend(levels.iter().flat_map(|level| level.at(Placement::Inner)));
    Chain::new(layers, handler)
}
