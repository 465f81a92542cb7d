//! Middleware: async functions around an action's handler, in the spirit of axum's
//! `from_fn`. They run after routing and validation, outermost first (server, then group,
//! then action), and follow the handler's rule: a `ToolError` passes unchanged, any other
//! error or a panic becomes `INTERNAL_ERROR`.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::FutureExt as _;
use mcp_fusion_wire::ToolError;
use serde_json::Value;

use crate::context::CallInfo;
use crate::error::{BoxError, Failure};
use crate::response::Output;

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What an action's handler is to the pipeline: a function of the call.
pub(crate) type Endpoint = Arc<dyn Fn(Call) -> BoxFuture<Result<Output, BoxError>> + Send + Sync>;

/// One call on its way through the middleware to the handler.
pub struct Call {
    pub(crate) info: Arc<CallInfo>,
    pub(crate) arguments: Value,
    pub(crate) input: Option<Box<dyn Any + Send + Sync>>,
}

impl Call {
    /// The qualified action (`billing.get_invoice`).
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

    /// The facts of the call: session, client, cancellation, transport extensions.
    pub fn info(&self) -> &CallInfo {
        &self.info
    }

    /// Adds a warning to a successful result.
    pub fn warn(&self, warning: ToolError) {
        self.info.warn(warning);
    }
}

/// The rest of the pipeline: the inner middleware and, at the end, the handler.
pub struct Next {
    pub(crate) chain: Arc<[Arc<dyn Middleware>]>,
    pub(crate) index: usize,
    pub(crate) endpoint: Endpoint,
    pub(crate) mask_internal_errors: bool,
}

impl Next {
    /// Runs the rest of the pipeline. Failures come back as envelopes: a `ToolError` as the
    /// inner layer returned it, anything else already wrapped as `INTERNAL_ERROR`.
    pub fn run(self, call: Call) -> BoxFuture<Result<Output, ToolError>> {
        let action = Arc::clone(&call.info.action);
        let mask = self.mask_internal_errors;
        let future = std::panic::catch_unwind(AssertUnwindSafe(|| match self.chain.get(self.index) {
            Some(middleware) => {
                let middleware = Arc::clone(middleware);
                let next = Next { index: self.index + 1, ..self };
                middleware.call(call, next)
            }
            None => (self.endpoint)(call),
        }));
        Box::pin(async move {
            let outcome = match future {
                Ok(future) => AssertUnwindSafe(future).catch_unwind().await,
                Err(panic) => Err(panic),
            };
            match outcome {
                Ok(Ok(output)) => Ok(output),
                Ok(Err(error)) => Err(Failure::from_error(error).into_tool_error(&action, mask)),
                Err(panic) => Err(Failure::from_panic(panic).into_tool_error(&action, mask)),
            }
        })
    }
}

/// A layer around an action's handler.
///
/// Most middleware is written with [`from_fn`]; implement this for a reusable type.
pub trait Middleware: Send + Sync + 'static {
    /// Handles the call, usually by calling `next.run(call)` and looking at the outcome.
    /// Returning a `ToolError` (boxed) short-circuits with it unchanged.
    fn call(&self, call: Call, next: Next) -> BoxFuture<Result<Output, BoxError>>;
}

/// Middleware from an async function `(Call, Next) -> Result<Output, E>`.
///
/// ```
/// use mcp_fusion::{from_fn, Call, Next, Output};
/// use mcp_fusion_wire::ToolError;
///
/// let require_tenant = from_fn(|call: Call, next: Next| async move {
///     if call.arguments().get("tenant").is_none() {
///         return Err(ToolError::forbidden("No tenant given.").suggest("Send \"tenant\" and retry."));
///     }
///     next.run(call).await
/// });
/// # let _ = require_tenant;
/// ```
pub fn from_fn<F, Fut, E>(f: F) -> FromFn<F>
where
    F: Fn(Call, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Output, E>> + Send + 'static,
    E: Into<BoxError> + 'static,
{
    FromFn(f)
}

/// The middleware made by [`from_fn`].
#[derive(Clone)]
pub struct FromFn<F>(F);

impl<F, Fut, E> Middleware for FromFn<F>
where
    F: Fn(Call, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Output, E>> + Send + 'static,
    E: Into<BoxError> + 'static,
{
    fn call(&self, call: Call, next: Next) -> BoxFuture<Result<Output, BoxError>> {
        let future = (self.0)(call, next);
        Box::pin(async move { future.await.map_err(brand_preserving_box) })
    }
}

/// Boxes an error so that a `ToolError` inside it (also inside an `anyhow::Error`) stays
/// recognisable after boxing.
pub(crate) fn brand_preserving_box<E: Into<BoxError> + 'static>(error: E) -> BoxError {
    match Failure::from_error(error) {
        Failure::Tool(tool) => Box::new(tool),
        Failure::Internal(error) => error,
        Failure::Panic(message) => message.into(),
    }
}
