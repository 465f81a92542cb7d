//! The concurrency guard: at most `max_active` calls run, at most `max_queue` wait in line
//! (first in, first out), and the rest are shed at once with `SERVER_BUSY`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::future::BoxFuture;
use mcp_fusion_wire::ToolError;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::entry::GuardedEntry;
use super::rate_limit::admission;
use crate::error::BuildError;
use crate::middleware::{Call, Middleware, Next, Outcome};

/// Limits of a concurrency guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Concurrency {
    /// Calls running at once (at least one).
    pub max_active: usize,
    /// Calls waiting for a slot; beyond that, calls are shed.
    pub max_queue: usize,
}

impl Concurrency {
    /// `max_active` running, `max_queue` waiting.
    pub fn new(max_active: usize, max_queue: usize) -> Concurrency {
        Concurrency { max_active: max_active.max(1), max_queue }
    }
}

/// The slots and the line of waiting calls shared by the calls it limits (one per group, and
/// optionally one for the server); [`FusionServer::concurrency_guard`](crate::FusionServer::concurrency_guard)
/// shows how full it is.
#[derive(Debug)]
pub struct ConcurrencyGuard {
    scope: String,
    limits: Concurrency,
    slots: Arc<Semaphore>,
    queued: AtomicUsize,
}

/// A running call's slot; freed when dropped, however the call ends.
#[derive(Debug)]
pub(crate) struct Slot {
    _permit: OwnedSemaphorePermit,
}

impl ConcurrencyGuard {
    /// A guard for `scope` (`Tool "billing"`, `The server`), named in its errors.
    pub(crate) fn new(scope: impl Into<String>, limits: Concurrency) -> ConcurrencyGuard {
        ConcurrencyGuard {
            scope: scope.into(),
            limits,
            slots: Arc::new(Semaphore::new(limits.max_active)),
            queued: AtomicUsize::new(0),
        }
    }

    /// Calls running now.
    pub fn active(&self) -> usize {
        self.limits.max_active - self.slots.available_permits()
    }

    /// Calls waiting now.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }

    /// A slot: at once if one is free, after the calls queued before this one otherwise, or
    /// `SERVER_BUSY` at once when the queue is full. Dropping the future leaves the queue.
    pub(crate) async fn acquire(&self) -> Result<Slot, ToolError> {
        if let Ok(permit) = Arc::clone(&self.slots).try_acquire_owned() {
            return Ok(Slot { _permit: permit });
        }
        let ahead = self.queued.fetch_add(1, Ordering::AcqRel);
        let _in_line = InLine(&self.queued);
        if ahead >= self.limits.max_queue {
            // Others may be counted in passing on their own way out; the line holds max_queue.
            return Err(self.busy(self.limits.max_queue));
        }
        // The semaphore is fair: waiters are served in arrival order.
        match Arc::clone(&self.slots).acquire_owned().await {
            Ok(permit) => Ok(Slot { _permit: permit }),
            Err(_) => Err(self.busy(ahead)),
        }
    }

    fn busy(&self, queued: usize) -> ToolError {
        ToolError::server_busy(format!(
            "{} is at capacity ({} active, {} queued). Retry after a short delay.",
            self.scope,
            self.active(),
            queued
        ))
        .suggest("Send fewer calls at once: wait for your pending calls to finish, then retry one at a time.")
        .retry_after(1)
    }
}

/// The concurrency stage of the chain: a slot of one guard held while the rest of the chain runs.
pub(crate) struct ConcurrencyLimit {
    guard: Arc<ConcurrencyGuard>,
    /// Whether this is the call's last gate: taking its slot commits what the rate limits
    /// counted, while a call shed here (or dropped while it waits) gives it back.
    last_gate: bool,
}

impl ConcurrencyLimit {
    /// A slot of `guard` for each call; `last_gate` when no other concurrency guard follows it.
    pub(crate) fn new(guard: Arc<ConcurrencyGuard>, last_gate: bool) -> ConcurrencyLimit {
        ConcurrencyLimit { guard, last_gate }
    }
}

impl Middleware for ConcurrencyLimit {
    fn call(&self, call: Call, next: Next) -> BoxFuture<'static, Outcome> {
        let (guard, last_gate) = (Arc::clone(&self.guard), self.last_gate);
        Box::pin(async move {
            let _slot = guard.acquire().await?;
            if last_gate {
                admission::commit(&call.info);
            }
            next.run(call).await
        })
    }

    fn name(&self) -> String {
        format!("concurrency ({})", self.guard.scope)
    }
}

/// Leaves the queue count when the waiting ends (admitted, shed or cancelled).
struct InLine<'a>(&'a AtomicUsize);

impl Drop for InLine<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The concurrency stage of `entry`: the group's slot, then the server's, the last of them
/// the call's last gate.
pub(super) fn compile(entry: &GuardedEntry<'_>, layers: &mut Vec<Arc<dyn Middleware>>) -> Result<(), BuildError> {
    let mut gates = entry.slots().count();
    for guard in entry.slots() {
        gates -= 1;
        layers.push(Arc::new(ConcurrencyLimit::new(Arc::clone(guard), gates == 0)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn sheds_when_running_and_waiting_are_full() {
        let guard = Arc::new(ConcurrencyGuard::new("Tool \"t\"", Concurrency::new(1, 1)));
        let running = guard.acquire().await.unwrap();
        let waiting = tokio::spawn({
            let guard = Arc::clone(&guard);
            async move { guard.acquire().await.map(|_| ()) }
        });
        while guard.queued() == 0 {
            tokio::task::yield_now().await;
        }
        let shed = guard.acquire().await.unwrap_err();
        assert_eq!(
            shed.render(),
            "<tool_error code=\"SERVER_BUSY\" severity=\"error\">\n\
             <message>Tool \"t\" is at capacity (1 active, 1 queued). Retry after a short delay.</message>\n\
             <recovery>Send fewer calls at once: wait for your pending calls to finish, then retry one at a time.</recovery>\n\
             <retry_after>1 seconds</retry_after>\n</tool_error>"
        );
        drop(running);
        waiting.await.unwrap().unwrap();
        assert_eq!((guard.active(), guard.queued()), (0, 0));
    }

    #[tokio::test]
    async fn a_cancelled_wait_leaves_the_queue() {
        let guard = ConcurrencyGuard::new("t", Concurrency::new(1, 4));
        let _running = guard.acquire().await.unwrap();
        let waited = tokio::time::timeout(Duration::from_millis(20), guard.acquire()).await;
        assert!(waited.is_err());
        assert_eq!(guard.queued(), 0);
    }
}
