//! The hand-over between a call that becomes a task and the runtime that keeps it: the call
//! runs its guards, and stops at the handler until the task is kept.

use mcp_fusion_wire::ToolError;
use tokio::sync::{oneshot, watch};

/// How a call that may become a task reached the runtime.
#[derive(Debug)]
pub(crate) enum Admission {
    /// Its guards let it through to its handler: a new task is to be kept.
    New,
    /// Its idempotency key is that of the earlier call that became this task.
    Existing(String),
}

/// Held by a call that becomes a task once its guards let it through.
#[derive(Debug)]
pub(crate) struct Launch {
    admitted: oneshot::Sender<Admission>,
    kept: oneshot::Receiver<Result<String, ToolError>>,
    started: watch::Sender<Option<String>>,
    watcher: Option<watch::Receiver<Option<String>>>,
}

/// Held by the runtime: told when the call reached its handler, and telling it whether the
/// task was kept (and under which id).
pub(crate) struct LaunchControl {
    /// Fires when the call reached its handler (or replayed a task); dropped (an error) when
    /// the call ended before.
    pub admitted: oneshot::Receiver<Admission>,
    /// The id of the task kept, so the handler may run; or why none was.
    pub kept: oneshot::Sender<Result<String, ToolError>>,
}

impl Launch {
    /// The two ends of one hand-over.
    pub(crate) fn pair() -> (Launch, LaunchControl) {
        let (admitted, admitted_rx) = oneshot::channel();
        let (kept_tx, kept) = oneshot::channel();
        let (started, watcher) = watch::channel(None);
        let launch = Launch { admitted, kept, started, watcher: Some(watcher) };
        (launch, LaunchControl { admitted: admitted_rx, kept: kept_tx })
    }

    /// What tells the call's guards the id of its task once it is kept (taken once).
    pub(crate) fn watcher(&mut self) -> Option<watch::Receiver<Option<String>>> {
        self.watcher.take()
    }

    /// Says the call reached its handler, and waits until the task is kept; an error when it
    /// could not be (the handler must not run: nobody could read what it did).
    pub(crate) async fn admitted(self) -> Result<(), ToolError> {
        let _ = self.admitted.send(Admission::New);
        let kept = self.kept.await.unwrap_or_else(|_| {
            Err(ToolError::internal("The task was not created, so its work did not start.")
                .suggest("Call the action again."))
        })?;
        let _ = self.started.send(Some(kept));
        Ok(())
    }

    /// Says the call's idempotency key belongs to the task `id`, which the runtime answers with.
    pub(crate) fn existing(self, id: String) {
        let _ = self.admitted.send(Admission::Existing(id));
    }
}
