//! Middleware from an async function.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::{BoxError, Call, Middleware, Next, Outcome};
use crate::output::Output;

/// Middleware from an async function `(Call, Next) -> Result<Output, E>`.
///
/// `E` is a [`ToolError`](mcp_fusion_wire::ToolError), passed to the model unchanged, or any
/// other error, which becomes a critical `INTERNAL_ERROR` naming the action.
///
/// ```
/// use mcp_fusion::from_fn;
/// use mcp_fusion::middleware::{Call, Next};
/// use mcp_fusion_wire::ToolError;
///
/// let require_tenant = from_fn(|call: Call, next: Next| async move {
///     if call.arguments().get("tenant").is_none() {
///         return Err(ToolError::forbidden("No tenant given.").suggest("Send \"tenant\" and retry."));
///     }
///     next.run(call).await
/// })
/// .named("tenant gate");
/// # let _ = require_tenant;
/// ```
pub fn from_fn<F, Fut, E>(f: F) -> FromFn<F>
where
    F: Fn(Call, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Output, E>> + Send + 'static,
    E: Into<BoxError> + 'static,
{
    FromFn { f: Arc::new(f), name: Cow::Borrowed("from_fn") }
}

/// The middleware made by [`from_fn`].
pub struct FromFn<F> {
    f: Arc<F>,
    name: Cow<'static, str>,
}

impl<F> Clone for FromFn<F> {
    fn clone(&self) -> Self {
        FromFn { f: Arc::clone(&self.f), name: self.name.clone() }
    }
}

impl<F> FromFn<F> {
    /// Names the layer in [`FusionServer::chain`](crate::FusionServer::chain) (default `from_fn`).
    pub fn named(mut self, name: impl Into<Cow<'static, str>>) -> FromFn<F> {
        self.name = name.into();
        self
    }
}

impl<F, Fut, E> Middleware for FromFn<F>
where
    F: Fn(Call, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Output, E>> + Send + 'static,
    E: Into<BoxError> + 'static,
{
    fn call(&self, call: Call, next: Next) -> BoxFuture<'static, Outcome> {
        let info = Arc::clone(&call.info);
        let future = (self.f)(call, next);
        Box::pin(async move { future.await.map_err(|error| info.failure(error)) })
    }

    fn name(&self) -> String {
        self.name.clone().into_owned()
    }
}
