//! The chain of one action: its layers in order, then its handler.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::{Call, Middleware, Outcome};

/// What an action's handler is to the chain: a function of the call.
pub(crate) type Endpoint = Box<dyn Fn(Call) -> BoxFuture<'static, Outcome> + Send + Sync>;

/// The layers of one action, outermost first, and its handler.
pub(crate) struct Chain {
    layers: Box<[Arc<dyn Middleware>]>,
    handler: Endpoint,
}

impl Chain {
    /// The chain of `layers`, outermost first, around `handler`.
    pub(crate) fn new(layers: Vec<Arc<dyn Middleware>>, handler: Endpoint) -> Chain {
        Chain { layers: layers.into(), handler }
    }

    pub(crate) fn layer(&self, index: usize) -> Option<&Arc<dyn Middleware>> {
        self.layers.get(index)
    }

    pub(crate) fn handle(&self, call: Call) -> BoxFuture<'static, Outcome> {
        // A handler that asks first makes the call a task itself (`Ctx::become_task`).
        let launch = if call.info.questions_first { None } else { call.info.take_launch() };
        let run = (self.handler)(call);
        match launch {
            None => run,
            // A call that becomes a task got through every guard: the handler runs once the
            // task is kept, so that whatever it does can be read.
            Some(launch) => Box::pin(async move {
                launch.admitted().await?;
                run.await
            }),
        }
    }

    /// The names of the layers in order, the handler last.
    pub(crate) fn names(&self) -> Vec<String> {
        self.layers.iter().map(|layer| layer.name()).chain(["handler".to_owned()]).collect()
    }
}
