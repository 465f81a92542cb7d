//! The hand-over between a call that becomes a task and the runtime that keeps it: the call
//! runs its guards, and stops at the handler until the task is kept.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use mcp_fusion_wire::ToolError;
use serde_json::{Map, Value};
use tokio::sync::{oneshot, watch};

/// Where the questions of a task's work wait for their answers (`tasks/update`): the task's
/// store, as its work sees it once the task is kept.
pub(crate) trait TaskInbox: Send + Sync + std::fmt::Debug {
    /// Puts `question` (an `InputRequest` as JSON) under `key` among those the task waits on.
    fn ask(&self, key: &str, question: Value) -> BoxFuture<'_, Result<(), String>>;
    /// The answers its client gave since the last take, each taken once.
    fn take(&self) -> BoxFuture<'_, Result<Map<String, Value>, String>>;
    /// Resolves when an answer may have come: an update through this process at once, one
    /// through another replica within a poll interval.
    fn changed(&self) -> BoxFuture<'_, ()>;
    /// Whether the task is to stop (its client cancelled it, or its time to live ended).
    fn stopped(&self) -> bool;
}

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
    inbox: Option<Arc<dyn TaskInbox>>,
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
        let launch = Launch { admitted, kept, started, watcher: Some(watcher), inbox: None };
        (launch, LaunchControl { admitted: admitted_rx, kept: kept_tx })
    }

    /// The hand-over whose task's questions wait in `inbox`.
    pub(crate) fn with_inbox(mut self, inbox: Arc<dyn TaskInbox>) -> Launch {
        self.inbox = Some(inbox);
        self
    }

    /// Where the task's questions wait, when its store keeps them.
    pub(crate) fn inbox(&self) -> Option<Arc<dyn TaskInbox>> {
        self.inbox.clone()
    }

    /// The id of the task once it is kept, for whoever needs it after the guards.
    pub(crate) fn task_id(&self) -> watch::Receiver<Option<String>> {
        self.started.subscribe()
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
