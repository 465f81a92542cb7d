//! Middleware: async functions around an action's handler, in the spirit of axum's `from_fn`.
//!
//! Every call, once routed and validated, goes through one chain: the built-in guards
//! ([`guard`](crate::guard)), your middleware, then the handler. Each layer gets the [`Call`]
//! and the [`Next`] layers; it may answer itself (short-circuit with a `ToolError`, passed to
//! the model unchanged) or call `next.run(call)` and look at what comes back. One error type
//! flows through the whole chain: [`ToolError`]. A middleware written with [`from_fn`] may
//! return any other error too; it becomes a critical `INTERNAL_ERROR` naming the action, as a
//! handler's would.
//!
//! Where a middleware goes: [`ServerBuilder::middleware`](crate::ServerBuilder::middleware)
//! puts it after every guard, right around the handler (server first, then group, then
//! action); `middleware_before` / `middleware_after` put it around one [`Stage`] of the
//! guards, so it sees (or does not see) the calls that guard refuses.
//! [`FusionServer::chain`](crate::FusionServer::chain) lists the layers of an action in order.
//!
//! [`Stage`]: crate::guard::Stage

mod chain;
mod from_fn;

use std::any::Any;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use mcp_fusion_wire::ToolError;
use serde_json::Value;

use crate::context::CallInfo;
use crate::output::Output;

pub(crate) use chain::{Chain, Endpoint};
pub use from_fn::{FromFn, from_fn};

pub use crate::error::BoxError;

/// What a layer of the chain returns: the success, or the envelope of the failure.
pub type Outcome = Result<Output, ToolError>;

/// One call on its way through the chain to the handler.
pub struct Call {
    pub(crate) info: Arc<CallInfo>,
    pub(crate) arguments: Value,
    pub(crate) input: Option<Box<dyn Any + Send + Sync>>,
}

impl Call {
    /// The qualified action (`billing.get_invoice`), or what [`CallInfo::action`] names for
    /// a prompt, a resource read or a subscription.
    pub fn action(&self) -> &str {
        self.info.action()
    }

    /// The arguments as sent (without the discriminator of grouped exposition).
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// The validated, typed input, if it is a `T`.
    pub fn input<T: 'static>(&self) -> Option<&T> {
        self.input.as_ref()?.downcast_ref()
    }

    /// The typed input, to adjust before the handler sees it.
    pub fn input_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.input.as_mut()?.downcast_mut()
    }

    /// The facts of the call: session, client, caller, cancellation, transport extensions.
    pub fn info(&self) -> &CallInfo {
        &self.info
    }

    /// Adds a warning to a successful result.
    pub fn warn(&self, warning: ToolError) {
        self.info.warn(warning);
    }
}

/// The rest of the chain: the inner layers and, at the end, the handler.
pub struct Next {
    chain: Arc<Chain>,
    index: usize,
}

impl Next {
    pub(crate) fn start(chain: Arc<Chain>) -> Next {
        Next { chain, index: 0 }
    }

    /// Runs the rest of the chain.
    pub fn run(self, call: Call) -> BoxFuture<'static, Outcome> {
        let Next { chain, index } = self;
        match chain.layer(index) {
            Some(layer) => {
                let layer = Arc::clone(layer);
                layer.call(call, Next { chain, index: index + 1 })
            }
            None => chain.handle(call),
        }
    }
}

/// A layer of the chain around an action's handler. The built-in guards are written this way.
///
/// Most middleware is written with [`from_fn`]; implement this for a reusable type.
///
/// ```
/// use futures_util::future::BoxFuture;
/// use mcp_fusion::middleware::{Call, Middleware, Next, Outcome};
///
/// /// Counts the calls that reach it.
/// struct Count(std::sync::atomic::AtomicUsize);
///
/// impl Middleware for Count {
///     fn call(&self, call: Call, next: Next) -> BoxFuture<'static, Outcome> {
///         self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
///         next.run(call)
///     }
/// }
/// ```
pub trait Middleware: Send + Sync + 'static {
    /// Handles the call, usually by calling `next.run(call)` and looking at the outcome.
    /// Returning a `ToolError` short-circuits with it unchanged.
    fn call(&self, call: Call, next: Next) -> BoxFuture<'static, Outcome>;

    /// How [`FusionServer::chain`](crate::FusionServer::chain) names this layer (default: the
    /// type's name).
    fn name(&self) -> String {
        let full = std::any::type_name::<Self>();
        let path = full.split('<').next().unwrap_or(full);
        path.rsplit("::").next().unwrap_or(path).to_owned()
    }
}
