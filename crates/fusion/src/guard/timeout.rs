//! The timeout guard: a deadline on the rest of the chain (user middleware and handler).

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use mcp_fusion_wire::ToolError;

use super::entry::GuardedEntry;
use crate::error::BuildError;
use crate::middleware::{Call, Middleware, Next, Outcome};

/// What a model may rely on when a call of the action timed out: the recovery its `TIMEOUT`
/// envelope gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Retry {
    /// Idempotent by key: the same key cannot make it take effect twice; a call without a
    /// key may have taken effect, as with `CheckFirst`.
    ByKey(Option<String>),
    /// Read-only: nothing to take effect.
    ReadOnly,
    /// Declared idempotent: repeating it changes nothing more.
    Idempotent,
    /// It may have taken effect: read first, with this action when it names one.
    CheckFirst(Option<String>),
}

/// Fails the call with `TIMEOUT` when the rest of the chain runs longer than `after`, and
/// closes the call's commit gate; the rest of the chain is dropped then, which stops the
/// handler at its next `.await`. A handler that already committed when the deadline passed
/// is waited for, and its result sent: a `TIMEOUT` never hides a write.
pub(crate) struct Timeout {
    after: Duration,
    /// Built once: every call that times out gets one of these.
    timed_out: Arc<ToolError>,
    /// For a call of an action idempotent by key that came without a key.
    timed_out_without_key: Option<Arc<ToolError>>,
}

impl Timeout {
    pub(crate) fn new(action: &str, after: Duration, retry: Retry) -> Timeout {
        let message = format!("{action} did not finish within {} ms.", after.as_millis());
        let envelope = |recovery: String, check: Option<&str>| {
            Arc::new(ToolError::timeout(message.clone()).suggest(recovery).actions(check))
        };
        let may_have_run = |check: Option<&str>| match check {
            Some(check) => format!("It may have run: call {check} to see whether it took effect before calling again."),
            None => "It may have run: check its effect with a read action before calling it again.".to_owned(),
        };
        match retry {
            Retry::ByKey(check) => Timeout {
                after,
                timed_out: envelope(
                    format!(
                        "Call {action} again with the same arguments and the same idempotency_key: it takes effect at most once per key, and the retry returns its result."
                    ),
                    None,
                ),
                timed_out_without_key: Some(envelope(
                    format!(
                        "{} Send an idempotency_key with each call, the same one when you retry, so a retry cannot run it twice.",
                        may_have_run(check.as_deref())
                    ),
                    check.as_deref(),
                )),
            },
            Retry::ReadOnly => Timeout {
                after,
                timed_out: envelope("Retry the call: it only reads, so repeating it is safe.".into(), None),
                timed_out_without_key: None,
            },
            Retry::Idempotent => Timeout {
                after,
                timed_out: envelope("Retry the call: repeating this action is safe.".into(), None),
                timed_out_without_key: None,
            },
            Retry::CheckFirst(check) => Timeout {
                after,
                timed_out: envelope(may_have_run(check.as_deref()), check.as_deref()),
                timed_out_without_key: None,
            },
        }
    }
}

impl Middleware for Timeout {
    fn call(&self, call: Call, next: Next) -> BoxFuture<'static, Outcome> {
        let gate = call.info().commit_gate();
        let timed_out = match &self.timed_out_without_key {
            Some(without) if call.info().idempotency_key().is_none() => Arc::clone(without),
            _ => Arc::clone(&self.timed_out),
        };
        let run = next.run(call);
        let after = self.after;
        Box::pin(async move {
            tokio::pin!(run);
            tokio::select! {
                outcome = &mut run => outcome,
                () = tokio::time::sleep(after) => {
                    if gate.abandon() {
                        Err(ToolError::clone(&timed_out))
                    } else {
                        // The handler committed before the deadline: its result is the answer.
                        run.await
                    }
                }
            }
        })
    }

    fn name(&self) -> String {
        format!("timeout ({} ms)", self.after.as_millis())
    }
}

/// The timeout stage of `entry`: its own deadline, else the server's, with the retry advice
/// its kind allows.
pub(super) fn compile(entry: &GuardedEntry<'_>, layers: &mut Vec<Arc<dyn Middleware>>) -> Result<(), BuildError> {
    let asks = entry.asks;
    let Some(after) = asks.timeout.or(entry.server.timeout) else { return Ok(()) };
    let retry = if asks.by_key {
        Retry::ByKey(entry.check_with())
    } else if asks.read_only {
        Retry::ReadOnly
    } else if asks.idempotent {
        Retry::Idempotent
    } else {
        Retry::CheckFirst(entry.check_with())
    };
    layers.push(Arc::new(Timeout::new(entry.qualified, after, retry)));
    Ok(())
}
