//! The timeout guard: a deadline on the rest of the chain (user middleware and handler).

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use mcp_fusion_wire::ToolError;

use crate::middleware::{Call, Middleware, Next, Outcome};

/// Fails the call with `TIMEOUT` when the rest of the chain runs longer than `after`; the
/// rest of the chain is dropped then, which stops the handler at its next `.await`.
pub(crate) struct Timeout {
    after: Duration,
    /// Built once: every call that times out gets the same envelope.
    timed_out: Arc<ToolError>,
}

impl Timeout {
    /// The deadline of `action`; `idempotent` says whether the envelope may tell the model
    /// that retrying is safe.
    pub(crate) fn new(action: &str, after: Duration, idempotent: bool) -> Timeout {
        let recovery = if idempotent {
            "Retry the call; repeating this action is safe."
        } else {
            "The action may have partly run: check its effect with a read action before calling it again."
        };
        let timed_out =
            ToolError::timeout(format!("{action} did not finish within {} ms.", after.as_millis())).suggest(recovery);
        Timeout { after, timed_out: Arc::new(timed_out) }
    }
}

impl Middleware for Timeout {
    fn call(&self, call: Call, next: Next) -> BoxFuture<'static, Outcome> {
        let run = next.run(call);
        let after = self.after;
        let timed_out = Arc::clone(&self.timed_out);
        Box::pin(
            async move { tokio::time::timeout(after, run).await.unwrap_or_else(|_| Err(ToolError::clone(&timed_out))) },
        )
    }

    fn name(&self) -> String {
        format!("timeout ({} ms)", self.after.as_millis())
    }
}
