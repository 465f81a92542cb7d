//! Calls that become tasks, and the methods that read them: `tasks/get`, `tasks/update`,
//! `tasks/cancel`. A task's failures are the envelopes its call would have had; a task that
//! cannot be read is a JSON-RPC error that says why and what to do instead.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::future::BoxFuture;
use mcp_fusion_wire::{ErrorCode, Sent, ToolError, echo};
use rmcp::model::{
    CallToolResponse, ClientCapabilities, CustomNotification, DetailedTask, ErrorCode as RpcCode, GetTaskResult,
    JsonObject, ServerNotification, Task, TaskPayload, TaskStatus,
};
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::Value;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::FusionServer;
use super::call::Refusal;
use crate::auth::CallerKey;
use crate::compiled::CompiledAction;
use crate::context::RequestInfo;
use crate::launch::{Admission, Launch, LaunchControl, TaskInbox};
use crate::observe::{CALL_TARGET, TASKS_TOTAL};
use crate::output::{Output, envelope_result};
use crate::task::experimental::{self, STATUS_NOTIFICATION};
use crate::task::{FinishIf, Renewal, StoredTask, TaskCursor, TaskState, TaskStore, TaskSupport, Tasks, iso, now_ms};

/// A call's end, as the spawned call hands it back.
type Ended = (Result<Output, Refusal>, Vec<ToolError>);

/// The tasks of one server: how they are kept, and those this process runs.
pub(crate) struct TaskRuntime {
    pub(crate) config: Tasks,
    /// Whether the server was given a task configuration (it then advertises the extension
    /// even before an action runs as a task).
    pub(crate) configured: bool,
    running: Mutex<HashMap<String, Running>>,
}

/// A task this process runs: how to stop it, whether a client asked, and who waits for its end.
#[derive(Clone)]
struct Running {
    token: CancellationToken,
    cancel_asked: Arc<AtomicBool>,
    ended: Arc<Notify>,
    /// Woken when a client answers one of its questions through this process.
    answered: Arc<Notify>,
}

/// A task's questions in its store, as its work sees them once the task is kept.
struct StoreInbox {
    store: Arc<dyn TaskStore>,
    id: watch::Receiver<Option<String>>,
    answered: Arc<Notify>,
    /// How often an answer given through another replica is looked for.
    poll: Duration,
    token: CancellationToken,
}

impl std::fmt::Debug for StoreInbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreInbox").field("id", &*self.id.borrow()).field("poll", &self.poll).finish_non_exhaustive()
    }
}

impl StoreInbox {
    fn id(&self) -> Result<String, String> {
        self.id.borrow().clone().ok_or_else(|| "the task is not kept yet".to_owned())
    }
}

impl TaskInbox for StoreInbox {
    fn ask(&self, key: &str, question: Value) -> BoxFuture<'_, Result<(), String>> {
        let key = key.to_owned();
        Box::pin(async move {
            let id = self.id()?;
            let questions = JsonObject::from_iter([(key, question)]);
            match self.store.ask(&id, questions, now_ms()).await {
                Ok(true) => Ok(()),
                Ok(false) => Err("the task ended".to_owned()),
                Err(error) => Err(error.to_string()),
            }
        })
    }

    fn take(&self) -> BoxFuture<'_, Result<JsonObject, String>> {
        Box::pin(async move { self.store.take_answers(&self.id()?).await.map_err(|error| error.to_string()) })
    }

    fn changed(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            tokio::select! {
                () = self.answered.notified() => {}
                () = tokio::time::sleep(self.poll) => {}
                () = self.token.cancelled() => {}
            }
        })
    }

    fn stopped(&self) -> bool {
        self.token.is_cancelled()
    }
}

/// How a call was answered: at once (refused before its handler, or a plain call), or with a
/// task that was kept.
pub(super) enum Called {
    /// The call's own answer.
    Answered(CallToolResponse),
    /// The task the call became (or, for an idempotency key seen before, became earlier).
    Task(StoredTask),
}

/// Left on a request by a client of MCP 2025-11-25's experimental tasks that asked for a task
/// (the `task` parameter of `tools/call`), with the time to live it asked for.
#[derive(Debug, Clone, Copy)]
pub(super) struct TaskAsked {
    pub(super) ttl_ms: Option<u64>,
}

impl Running {
    fn cancel(&self) {
        self.cancel_asked.store(true, Ordering::Release);
        self.token.cancel();
    }
}

impl TaskRuntime {
    pub(crate) fn new(config: Option<Tasks>) -> TaskRuntime {
        TaskRuntime { configured: config.is_some(), config: config.unwrap_or_default(), running: Mutex::default() }
    }

    /// How many tasks this process runs now.
    pub(crate) fn running_count(&self) -> usize {
        self.running().len()
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, Running>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl FusionServer {
    /// Whether this call of `action` (through the tool `tool`) runs as a task. With the
    /// extension: the action can, and the client declared the extension; an action that only
    /// runs as tasks refuses a client that did not. In 2025-11-25's experimental form: the
    /// client asked (a tool that cannot run as one refuses), and an action that only runs as
    /// tasks refuses a call that did not ask.
    pub(super) fn as_task(
        &self,
        action: &CompiledAction,
        tool: &str,
        request: &RequestInfo,
    ) -> Result<bool, ErrorData> {
        let asked = request.extensions.get::<TaskAsked>().is_some();
        // Most calls: an action that is no task, and nobody asked for one.
        if action.task.is_none() && !asked {
            return Ok(false);
        }
        if experimental::marked(&request.extensions) {
            let tool_runs_tasks = self.inner.catalog.load().task_support(tool).is_some();
            return match (asked, action.task) {
                (true, _) if tool_runs_tasks => Ok(true),
                (true, _) => Err(not_a_task(tool)),
                (false, Some(TaskSupport::Required)) => Err(asks_task(&action.qualified)),
                (false, _) => Ok(false),
            };
        }
        match action.task {
            None => Ok(false),
            Some(_) if declares_tasks(request) => Ok(true),
            Some(TaskSupport::Optional) => Ok(false),
            Some(TaskSupport::Required) => Err(needs_tasks(&action.qualified)),
        }
    }

    /// Runs the call as a task: its guards now, then, once it reached its handler, the task
    /// is kept and its handle answered while the handler runs on. A call refused before (by
    /// validation or a guard) is answered as the plain call: a refused task costs nothing.
    pub(super) async fn launch(
        &self,
        action: Arc<CompiledAction>,
        arguments: JsonObject,
        mut request: RequestInfo,
    ) -> Result<Called, ErrorData> {
        let owner = caller_key(&request).to_string();
        let asked_ttl = request.extensions.get::<TaskAsked>().and_then(|asked| asked.ttl_ms);
        // In the experimental form of 2025-11-25, the session hears when the task ends.
        let notify = request.peer.clone().filter(|_| experimental::marked(&request.extensions));
        // The task outlives the request: its own token stops it, and the request's only
        // until the task is kept.
        let token = CancellationToken::new();
        let client_cancel = std::mem::replace(&mut request.cancellation, token.clone());
        // A task tells its client only its status: no progress, no log messages (and no
        // questions: a call handed over as a task runs with rounds that cannot ask).
        request.peer = None;
        request.peer_accepts_requests = false;
        request.progress_token = None;
        request.log_level = None;
        let (launch, LaunchControl { mut admitted, kept }) = Launch::pair();
        let answered = Arc::new(Notify::new());
        let inbox = StoreInbox {
            store: Arc::clone(&self.inner.tasks.config.store),
            id: launch.task_id(),
            answered: Arc::clone(&answered),
            poll: self.inner.tasks.config.poll_interval.clamp(Duration::from_millis(10), Duration::from_millis(250)),
            token: token.clone(),
        };
        // The experimental form of 2025-11-25 has no way to show a question: its tasks cannot ask.
        let launch =
            if experimental::marked(&request.extensions) { launch } else { launch.with_inbox(Arc::new(inbox)) };
        let mut work = self.spawn_call(Arc::clone(&action), arguments, request, launch);
        let admission = tokio::select! {
            biased;
            admission = &mut admitted => admission.ok(),
            ended = &mut work => return action.answer_ended(ended).map(Called::Answered),
            () = client_cancel.cancelled() => {
                token.cancel();
                None
            }
        };
        match admission {
            None => return action.answer_ended(work.await).map(Called::Answered),
            Some(Admission::Existing(id)) => return self.owned_task(&id, &owner).await.map(Called::Task),
            Some(Admission::New) => {}
        }
        let config = &self.inner.tasks.config;
        let now = now_ms();
        let mut stored = StoredTask::working(new_task_id(), owner, action.qualified.as_ref(), now);
        stored.read_only = action.read_only;
        // A client may ask for a shorter time to live than the server's, not a longer one; a
        // second at least, so that its handle can be read.
        stored.ttl_ms = asked_ttl.map_or(millis(config.ttl), |asked| asked.clamp(1_000, millis(config.ttl)));
        stored.poll_interval_ms = millis(config.poll_interval);
        stored.lease_until_ms = now.saturating_add(millis(config.lease));
        let id = stored.id.clone();
        if let Err(error) = config.store.create(stored.clone()).await {
            tracing::warn!(action = %action.qualified, %error, "a task could not be kept; its call was refused");
            let refusal = not_kept(&action.qualified);
            let _ = kept.send(Err(refusal.clone()));
            return Ok(Called::Answered(envelope_result(refusal.to_call_result(), &[], action.output_schema).into()));
        }
        let running = Running { token, cancel_asked: Arc::default(), ended: Arc::default(), answered };
        self.inner.tasks.running().insert(id.clone(), running.clone());
        let _ = kept.send(Ok(id.clone()));
        counted(&action.qualified, "created");
        tracing::info!(target: CALL_TARGET, action = %action.qualified, task = %id, "task created");
        tokio::spawn(self.clone().watch(action, stored.clone(), work, running, notify));
        Ok(Called::Task(stored))
    }

    fn spawn_call(
        &self,
        action: Arc<CompiledAction>,
        arguments: JsonObject,
        request: RequestInfo,
        launch: Launch,
    ) -> JoinHandle<Ended> {
        let server = self.clone();
        tokio::spawn(async move {
            action.outcome_of(Value::Object(arguments), request, &server.inner.settings, Some(launch)).await
        })
    }

    /// Keeps the task's lease while it runs, stops it when a client asks or its time to live
    /// ends, and keeps how it ended (unless that time ended: the store forgets it then). A
    /// session of the experimental form hears of the end on `notify`.
    async fn watch(
        self,
        action: Arc<CompiledAction>,
        mut task: StoredTask,
        mut work: JoinHandle<Ended>,
        running: Running,
        mut notify: Option<Peer<RoleServer>>,
    ) {
        let config = self.inner.tasks.config.clone();
        let id = task.id.clone();
        let mut renewals = tokio::time::interval((config.lease / 3).max(Duration::from_millis(10)));
        renewals.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let deadline = tokio::time::sleep(Duration::from_millis(task.ttl_ms));
        tokio::pin!(deadline);
        let mut expired = false;
        let ended = loop {
            tokio::select! {
                ended = &mut work => break ended,
                _ = renewals.tick() => {
                    let until = now_ms().saturating_add(millis(config.lease));
                    match config.store.renew(&id, until).await {
                        Ok(Renewal::Working { cancel_requested: false }) => {}
                        // Asked to stop through another replica, or ended there (cancelled in the
                        // experimental form, or declared lost): its work stops here too.
                        Ok(_) => running.cancel(),
                        Err(error) => tracing::warn!(task = %id, %error, "the lease of a running task could not be renewed"),
                    }
                }
                () = &mut deadline, if !expired => {
                    expired = true;
                    running.token.cancel();
                }
            }
        };
        if expired {
            // Its time to live is over, and the store forgets it now: a poll reads it as unknown,
            // whose answer says that tasks are kept that long and to call the action again.
            counted(&action.qualified, "failed");
            tracing::warn!(target: CALL_TARGET, action = %action.qualified, task = %id, "task expired: stopped at the end of its time to live");
        } else {
            let state = action.task_state(ended, running.cancel_asked.load(Ordering::Acquire));
            let status = status_of(&state);
            let now = now_ms();
            task.state = state.clone();
            task.updated_at_ms = now;
            match config.store.finish(&id, state, now, FinishIf::Working).await {
                // Ended before its work did: cancelled by its client in the experimental form,
                // which counted it then, or declared lost.
                Ok(false) => notify = None,
                kept => {
                    counted(&action.qualified, status);
                    tracing::info!(target: CALL_TARGET, action = %action.qualified, task = %id, status, "task ended");
                    if let Err(error) = kept {
                        tracing::error!(task = %id, %error, "how a task ended could not be kept; it will read as lost once its lease lapses");
                        notify = None;
                    }
                }
            }
        }
        self.inner.tasks.running().remove(&id);
        // Those waiting for its end first; then its session, whose notification may wait for
        // room on its connection.
        running.ended.notify_waiters();
        if let Some(peer) = notify.filter(|_| !expired) {
            self.notify_status(&peer, &task).await;
        }
    }

    /// `tasks/get`: the task as it stands, the caller's own only.
    pub(super) async fn get_task_state(&self, id: &str, request: &RequestInfo) -> Result<GetTaskResult, ErrorData> {
        self.current_task(id, request).await.map(|task| GetTaskResult::new(detailed_task(&task)))
    }

    /// The caller's task `id` as it stands: a working task whose replica stopped renewing its
    /// lease is declared lost first.
    pub(super) async fn current_task(&self, id: &str, request: &RequestInfo) -> Result<StoredTask, ErrorData> {
        let task = self.owned_task(id, &caller_key(request).to_string()).await?;
        self.settled(task).await
    }

    /// `task`, or, when it works and its replica stopped renewing its lease (and it does not
    /// run here), the task as it reads once declared lost.
    pub(super) async fn settled(&self, task: StoredTask) -> Result<StoredTask, ErrorData> {
        let now = now_ms();
        let runs_here = self.inner.tasks.running().contains_key(&task.id);
        if task.state != TaskState::Working || task.lease_until_ms >= now || runs_here {
            return Ok(task);
        }
        let lost =
            TaskState::Failed { error: error_object(&ErrorData::internal_error(lost_task(&task).render(), None)) };
        let store = &self.inner.tasks.config.store;
        if store.finish(&task.id, lost, now, FinishIf::LeaseLapsed).await.map_err(store_unavailable)? {
            counted(&task.action, "failed");
            tracing::warn!(target: CALL_TARGET, action = %echo(&task.action), task = %echo(&task.id), "task lost: the replica running it stopped renewing its lease");
        }
        self.owned_task(&task.id, &task.owner).await
    }

    /// Waits until the caller's task `id` ended (or `cancelled` fires: `None`), and answers it
    /// as it ended. Woken at once by a task this process runs; one another replica runs is read
    /// again every poll interval.
    pub(super) async fn ended_task(
        &self,
        id: &str,
        request: &RequestInfo,
        cancelled: &CancellationToken,
    ) -> Result<Option<StoredTask>, ErrorData> {
        loop {
            // Listening before the read: an end between the two is not missed.
            let running = self.inner.tasks.running().get(id).cloned();
            let ended = running.as_ref().map(|running| running.ended.notified());
            let task = self.current_task(id, request).await?;
            if task.state.is_terminal() {
                return Ok(Some(task));
            }
            let poll = Duration::from_millis(task.poll_interval_ms.max(10));
            tokio::select! {
                () = async { if let Some(ended) = ended { ended.await } else { std::future::pending().await } } => {}
                () = tokio::time::sleep(poll) => {}
                () = cancelled.cancelled() => return Ok(None),
            }
        }
    }

    /// `tasks/cancel` in the experimental form: the caller's working task ends `cancelled`
    /// before the answer (its work is stopped, here or by its replica at its next renewal), and
    /// stays so whatever its work does after. A task that already ended is refused.
    pub(super) async fn cancel_now(&self, id: &str, request: &RequestInfo) -> Result<StoredTask, ErrorData> {
        let task = self.current_task(id, request).await?;
        if task.state.is_terminal() {
            return Err(already_ended(id, experimental::status(&task)));
        }
        let store = &self.inner.tasks.config.store;
        if !store.finish(id, TaskState::Cancelled, now_ms(), FinishIf::Working).await.map_err(store_unavailable)? {
            // It ended between the read and the cancel.
            let task = self.current_task(id, request).await?;
            return Err(already_ended(id, experimental::status(&task)));
        }
        if let Some(running) = self.inner.tasks.running().get(id) {
            running.cancel();
        }
        counted(&task.action, "cancelled");
        tracing::info!(target: CALL_TARGET, action = %echo(&task.action), task = %echo(id), status = "cancelled", "task ended");
        self.owned_task(id, &task.owner).await
    }

    /// The caller's tasks, a page of them after `after`.
    pub(super) async fn tasks_of(
        &self,
        request: &RequestInfo,
        after: Option<TaskCursor>,
        limit: usize,
    ) -> Result<(Vec<StoredTask>, Option<TaskCursor>), ErrorData> {
        let owner = caller_key(request).to_string();
        let store = &self.inner.tasks.config.store;
        let page = store.list(&owner, after, limit).await.map_err(store_unavailable)?;
        let mut tasks = Vec::with_capacity(page.tasks.len());
        for task in page.tasks {
            tasks.push(self.settled(task).await?);
        }
        Ok((tasks, page.next))
    }

    /// `tasks/cancel`: asks the caller's own task to stop. Acknowledged at once; the task reads
    /// `cancelled` once its work stopped (a handler past its commit point runs to its end).
    pub(super) async fn cancel_task_of(&self, id: &str, request: &RequestInfo) -> Result<(), ErrorData> {
        let task = self.owned_task(id, &caller_key(request).to_string()).await?;
        if task.state.is_terminal() {
            return Ok(());
        }
        let running = self.inner.tasks.running().get(id).cloned();
        match running {
            Some(running) => running.cancel(),
            None => {
                self.inner.tasks.config.store.request_cancel(id).await.map_err(store_unavailable)?;
            }
        }
        Ok(())
    }

    /// `tasks/update`: the caller's own task only. Each response to a question the task waits
    /// on is handed to its work (here, or on the replica that runs it); a response to no such
    /// question is acknowledged and ignored, as the extension says.
    pub(super) async fn update_task_of(
        &self,
        id: &str,
        responses: JsonObject,
        request: &RequestInfo,
    ) -> Result<(), ErrorData> {
        let task = self.owned_task(id, &caller_key(request).to_string()).await?;
        if task.state.is_terminal() || responses.is_empty() {
            return Ok(());
        }
        let store = &self.inner.tasks.config.store;
        if store.answer(&task.id, responses, now_ms()).await.map_err(store_unavailable)?
            && let Some(running) = self.inner.tasks.running().get(&task.id)
        {
            running.answered.notify_waiters();
        }
        Ok(())
    }

    /// The task `id`, if `owner` (a caller key) started it. Someone else's task reads as
    /// unknown: its id tells nobody else that it exists.
    async fn owned_task(&self, id: &str, owner: &str) -> Result<StoredTask, ErrorData> {
        let found = self.inner.tasks.config.store.get(id).await.map_err(store_unavailable)?;
        match found {
            Some(task) if task.owner == owner => Ok(task),
            _ => Err(unknown_task(id, &self.inner.tasks.config, self.inner.settings.guards.value_free_errors)),
        }
    }
}

impl CompiledAction {
    /// The answer to a call that ended before it became a task.
    fn answer_ended(&self, ended: Result<Ended, tokio::task::JoinError>) -> Result<CallToolResponse, ErrorData> {
        let (outcome, warnings) = self.ended(ended);
        self.answer(outcome, &warnings)
    }

    /// How the spawned call ended; one that did not end (it panicked past the catch, or the
    /// runtime shut down) is this action's internal error.
    fn ended(&self, ended: Result<Ended, tokio::task::JoinError>) -> Ended {
        ended.unwrap_or_else(|error| {
            let failure = crate::failure::Failure::from_error(format!("the task's work did not end: {error}"));
            (Err(Refusal::Failed(failure.into_tool_error(&self.qualified, self.mask_internal_errors))), Vec::new())
        })
    }

    /// What a task of this action keeps of how its call ended: the tool result (an envelope
    /// included), `cancelled` when it failed after its client asked it to stop, or the
    /// JSON-RPC error.
    fn task_state(&self, ended: Result<Ended, tokio::task::JoinError>, cancel_asked: bool) -> TaskState {
        let (outcome, warnings) = self.ended(ended);
        // Stopped on its client's word: however the work answered its token (the framework's
        // CANCELLED, or a handler's own error), the task was cancelled. Work that finished
        // first keeps its result.
        if cancel_asked && outcome.is_err() {
            return TaskState::Cancelled;
        }
        match self.answer(outcome, &warnings) {
            Ok(CallToolResponse::Complete(result)) => TaskState::Completed { result: json_object(&result) },
            Ok(_) => {
                // A task cannot ask its client anything, and a call never becomes a second task.
                let error = ToolError::internal(format!(
                    "{} ended its task with an answer a task cannot give.",
                    self.qualified
                ))
                .suggest("Nothing to do but report it.");
                TaskState::Completed {
                    result: json_object(&envelope_result(error.to_call_result(), &[], self.output_schema)),
                }
            }
            Err(error) => TaskState::Failed { error: error_object(&error) },
        }
    }
}

/// Counts a task of `action` reaching `status`.
fn counted(action: &str, status: &'static str) {
    metrics::counter!(TASKS_TOTAL, "action" => action.to_owned(), "status" => status).increment(1);
}

/// The `status` label of how a task ended.
fn status_of(state: &TaskState) -> &'static str {
    match state {
        TaskState::Working => "working",
        TaskState::Completed { .. } => "completed",
        TaskState::Failed { .. } => "failed",
        TaskState::Cancelled => "cancelled",
    }
}

/// Whether the request's client declared the tasks extension (in the request's `_meta`, or at
/// `initialize`).
fn declares_tasks(request: &RequestInfo) -> bool {
    request.client_capabilities.as_ref().is_some_and(ClientCapabilities::supports_tasks)
}

/// Who owns what a request starts: the verified identity, else the session, else the client's
/// address.
fn caller_key(request: &RequestInfo) -> CallerKey {
    CallerKey::of(request.caller.identity(), request.session_id.as_ref(), request.client_address)
}

/// An id nobody can guess: 122 random bits.
fn new_task_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The task's metadata as MCP shows it.
pub(super) fn wire_task(task: &StoredTask) -> Task {
    let status = match &task.state {
        TaskState::Working if !task.asked.is_empty() => TaskStatus::InputRequired,
        TaskState::Working => TaskStatus::Working,
        TaskState::Completed { .. } => TaskStatus::Completed,
        TaskState::Failed { .. } => TaskStatus::Failed,
        TaskState::Cancelled => TaskStatus::Cancelled,
    };
    let mut wire = Task::new(&task.id, status, iso(task.created_at_ms), iso(task.updated_at_ms))
        .with_ttl_ms(task.ttl_ms)
        .with_poll_interval_ms(task.poll_interval_ms);
    wire.status_message = task.status_message();
    wire
}

impl FusionServer {
    /// Tells a session of the experimental form that its task ended (a notification it may
    /// miss: it polls all the same), through whichever replica holds its stream when sessions
    /// are shared.
    async fn notify_status(&self, peer: &Peer<RoleServer>, task: &StoredTask) {
        let params = experimental::task(task);
        let notification =
            ServerNotification::CustomNotification(CustomNotification::new(STATUS_NOTIFICATION, Some(params)));
        #[cfg(feature = "http")]
        if let Some(relay) = self.relay()
            && let Some(session) = self.inner.peers.session_of(peer)
        {
            return relay.to_session(&session, &notification);
        }
        if let Err(error) = peer.send_notification(notification).await {
            tracing::debug!(task = %task.id, %error, "the status of an ended task did not reach its session");
        }
    }
}

/// The task with its result or error, as `tasks/get` answers it.
fn detailed_task(task: &StoredTask) -> DetailedTask {
    let payload = match &task.state {
        TaskState::Working if !task.asked.is_empty() => {
            match serde_json::from_value(Value::Object(task.asked.clone())) {
                Ok(input_requests) => TaskPayload::InputRequired { input_requests },
                Err(error) => {
                    tracing::warn!(task = %echo(&task.id), %error, "a task's questions do not read as input requests");
                    TaskPayload::Working
                }
            }
        }
        TaskState::Working => TaskPayload::Working,
        TaskState::Completed { result } => TaskPayload::Completed { result: result.clone() },
        TaskState::Failed { error } => TaskPayload::Failed { error: error.clone() },
        TaskState::Cancelled => TaskPayload::Cancelled,
    };
    DetailedTask::new(wire_task(task), payload)
}

fn json_object(value: &impl serde::Serialize) -> JsonObject {
    match serde_json::to_value(value) {
        Ok(Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}

fn error_object(error: &ErrorData) -> JsonObject {
    json_object(error)
}

/// `-32021` for a client that did not declare the extension, calling an action that only
/// runs as a task.
fn needs_tasks(action: &str) -> ErrorData {
    let mut error = ErrorData::missing_required_client_capability(ClientCapabilities::builder().enable_tasks().build());
    error.message = format!(
        "{action} runs only as a task, and this request's client does not declare the tasks extension: declare \"{}\" in the extensions of its client capabilities (in the request's _meta, or at initialize), then poll the task it returns with tasks/get",
        rmcp::model::TASKS_EXTENSION_ID
    )
    .into();
    error
}

/// `-32601` for a call that asks for a task of a tool that runs none (2025-11-25's
/// experimental form).
fn not_a_task(tool: &str) -> ErrorData {
    ErrorData::new(
        RpcCode::METHOD_NOT_FOUND,
        format!(
            "Method not found: {} does not run as a task (its tools/list entry has no execution.taskSupport). Call it again without the \"task\" parameter.",
            Sent::text(tool)
        ),
        None,
    )
}

/// `-32601` for a call that does not ask for a task of an action that only runs as one
/// (2025-11-25's experimental form).
fn asks_task(action: &str) -> ErrorData {
    ErrorData::new(
        RpcCode::METHOD_NOT_FOUND,
        format!(
            "Method not found: {action} runs only as a task (execution.taskSupport \"required\"). Call it again with \"task\": {{}} in the params of tools/call, then read the task it returns with tasks/get and its result with tasks/result."
        ),
        None,
    )
}

/// `-32602` for cancelling a task that already ended.
fn already_ended(id: &str, status: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "Cannot cancel task {}: it already ended ({status}), and an ended task keeps its status. Nothing was done: read its outcome with tasks/result.",
            Sent::text(id)
        ),
        Some(serde_json::json!({ "taskId": Sent::text(id).to_string(), "status": status })),
    )
}

/// A task id that is not the caller's (unknown, expired, or someone else's): one answer for
/// all three, so an id tells nobody but its owner that it exists. A value-free server does not
/// repeat the id sent.
fn unknown_task(id: &str, config: &Tasks, value_free: bool) -> ErrorData {
    let (task, data) = match value_free {
        true => ("of that id".to_owned(), None),
        false => (Sent::text(id).to_string(), Some(serde_json::json!({ "taskId": Sent::text(id).to_string() }))),
    };
    ErrorData::invalid_params(
        format!(
            "Invalid params: no task {task} of yours is known here. A task is kept {} after it starts and only its creator can read it. Nothing was done: call the action that started it again (with the same idempotency key, if it took one, so a write is not made twice) and poll the id that call returns.",
            human(config.ttl),
        ),
        data,
    )
}

fn store_unavailable(error: crate::task::StoreError) -> ErrorData {
    tracing::warn!(%error, "the task store did not answer");
    ErrorData::internal_error(
        "Internal error: the store that keeps tasks did not answer, so the task could not be read. Its state is unchanged: poll it again in a few seconds.",
        None,
    )
}

/// The envelope of a call whose task could not be kept: nothing ran.
fn not_kept(action: &str) -> ToolError {
    ToolError::server_busy(format!("{action} did not start: its task could not be kept, so nothing ran."))
        .suggest(format!("Call {action} again in a few seconds."))
        .retry_after(5)
}

/// The envelope of a task whose replica stopped renewing its lease: it died with its work.
fn lost_task(task: &StoredTask) -> ToolError {
    let action = &task.action;
    let error = ToolError::new(
        ErrorCode::Custom("TASK_LOST".to_owned()),
        format!("{action} stopped without finishing: the server running its task went away, and its result is lost."),
    );
    if task.read_only {
        error.suggest(format!("Call {action} again: it only reads, so running it again is safe."))
    } else {
        error.suggest(format!(
            "Check whether {action} took effect before calling it again (it may have written part of its work), or call it again with the same idempotency key."
        ))
    }
    .actions([action.clone()])
}

/// `90 s`, `15 min`, `2 h`: a duration as a reader says it.
fn human(duration: Duration) -> String {
    let seconds = duration.as_secs();
    match seconds {
        0 => format!("{} ms", duration.as_millis()),
        s if s % 3600 == 0 => format!("{} h", s / 3600),
        s if s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}
