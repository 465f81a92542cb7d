//! The stages of the chain, and where user middleware goes among them: the chain of an action
//! is assembled here, guards and middleware in their documented order.

use std::sync::Arc;

use super::Stage;
use crate::middleware::{Chain, Endpoint, Middleware};

/// Declares the stages of the chain in their order, each with the module of its guard (whose
/// `compile` makes the stage's layers for an entry): the modules, `Stage`, `Stage::ORDER`, and
/// `built_in`, which compiles an entry's guards stage by stage.
macro_rules! stages {
    ($( $(#[$doc:meta])* $stage:ident => $module:ident, )*) => {
        $( mod $module; )*

        /// The stages of the chain, in the order a call meets them. User middleware can be
        /// placed before or after any of them.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Stage {
            $( $(#[$doc])* $stage, )*
        }

        impl Stage {
            /// Every stage, outermost first.
            pub const ORDER: &'static [Stage] = &[$( Stage::$stage, )*];
        }

        /// The built-in guards of `entry`, stage by stage in the chain's order.
        pub(crate) fn built_in(
            entry: &$crate::guard::entry::GuardedEntry<'_>,
        ) -> Result<$crate::guard::StageLayers, $crate::error::BuildError> {
            let mut guards = $crate::guard::StageLayers::default();
            $( $module::compile(entry, guards.at(Stage::$stage))?; )*
            Ok(guards)
        }
    };
}

pub(super) use stages;

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

impl Stage {
    fn index(self) -> usize {
        self as usize
    }
}

impl StageLayers {
    /// The guards of `stage`, to add to.
    pub(crate) fn at(&mut self, stage: Stage) -> &mut Vec<Arc<dyn Middleware>> {
        &mut self.0[stage.index()]
    }
}

/// The chain in the documented order: for each stage, the user middleware placed before
/// it, its guards, the user middleware placed after it; then the rest of the user
/// middleware; then the handler. `levels` go from outer to inner (server, group, action).
pub(crate) fn assemble(guards: StageLayers, levels: &[&Layers], handler: Endpoint) -> Chain {
    let mut layers = Vec::new();
    let StageLayers(mut by_stage) = guards;
    for &stage in Stage::ORDER {
        layers.extend(levels.iter().flat_map(|level| level.at(Placement::Before(stage))));
        layers.append(&mut by_stage[stage.index()]);
        layers.extend(levels.iter().flat_map(|level| level.at(Placement::After(stage))));
    }
    layers.extend(levels.iter().flat_map(|level| level.at(Placement::Inner)));
    Chain::new(layers, handler)
}
