//! The chain of one action: its layers in order, then its handler, assembled once when the
//! action is compiled.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::{Call, Middleware, Outcome};
use crate::guard::Stage;

/// What an action's handler is to the chain: a function of the call.
pub(crate) type Endpoint = Box<dyn Fn(Call) -> BoxFuture<'static, Outcome> + Send + Sync>;

/// The layers of one action, outermost first, and its handler.
pub(crate) struct Chain {
    layers: Box<[Arc<dyn Middleware>]>,
    handler: Endpoint,
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

impl Chain {
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
        Chain { layers: layers.into(), handler }
    }

    pub(crate) fn layer(&self, index: usize) -> Option<&Arc<dyn Middleware>> {
        self.layers.get(index)
    }

    pub(crate) fn handle(&self, call: Call) -> BoxFuture<'static, Outcome> {
        (self.handler)(call)
    }

    /// The names of the layers in order, the handler last.
    pub(crate) fn names(&self) -> Vec<String> {
        self.layers.iter().map(|layer| layer.name()).chain(["handler".to_owned()]).collect()
    }
}
