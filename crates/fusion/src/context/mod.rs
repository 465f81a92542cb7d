//! What a handler and a middleware know about the call they serve, and what a transport knows
//! about a request.

mod called;
mod request;

pub(crate) use called::{CalledNames, map_whole_names};

#[cfg(feature = "http")]
pub(crate) use request::LOG_LEVEL_META;
pub use request::RequestInfo;
#[cfg(feature = "http")]
pub(crate) use request::{ClientAddress, IssuedSession, ListsPerCaller, issued_session};
pub(crate) use request::{checked_log_level, list_caller, sessionless};

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mcp_fusion_wire::ToolError;
use rmcp::model::{
    ClientCapabilities, Extensions, Implementation, JsonObject, ProgressNotificationParam, ProgressToken,
};
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use crate::auth::{Caller, CallerKey, Identity};
use crate::commit::CommitGate;
use crate::error::BoxError;
use crate::failure::Failure;
use crate::idempotency_key::IdempotencyKey;
use crate::resumable::ResumableStream;
use crate::rounds::Rounds;
use crate::subscriptions::Subscriptions;

/// What a call runs: an action, a prompt, a resource read, a subscription passing the
/// server's guards, or another request passing them. Prompts and reads go through the same chain as an action, so a
/// middleware tells them apart here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Entry<'a> {
    /// A tool call of the qualified action (`billing.get_invoice`).
    Action(&'a str),
    /// A `prompts/get` of the prompt named so.
    Prompt(&'a str),
    /// A `resources/read` of this URI.
    Resource {
        /// The URI read, as sent.
        uri: &'a str,
    },
    /// A `resources/subscribe` or a `subscriptions/listen`, by its method.
    Subscription(&'a str),
    /// Another request that runs no action, prompt or read of its own, by its method:
    /// `completion/complete`, `skills/list`, `skills/get`, `resources/directory/read`, and the
    /// task methods (`tasks/get`, `tasks/update`, `tasks/cancel`, `tasks/result`,
    /// `tasks/list`).
    Request(&'a str),
}

/// Whether the client of a connection is still there: set by a transport that knows when
/// its client went away, and carried in each request's extensions.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClientPresence(Arc<AtomicBool>);

impl ClientPresence {
    /// Notes that the client went away: set before the transport cancels what it left.
    pub(crate) fn leave(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether the client went away.
    pub(crate) fn left(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// Which kind of entry a compiled chain serves, to answer [`CallInfo::entry`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum EntryKind {
    /// A tool call.
    #[default]
    Action,
    /// A `prompts/get`.
    Prompt,
    /// A `resources/read`.
    Resource,
    /// A subscription's gate.
    Subscription,
    /// Another request's gate.
    Request,
}

/// Facts about one tool call: which action, from which session and client, with what
/// transport extensions, and the warnings collected on the way.
#[derive(Debug)]
pub struct CallInfo {
    pub(crate) action: Arc<str>,
    kind: EntryKind,
    pub(crate) session_id: Option<Arc<str>>,
    pub(crate) client: Option<Implementation>,
    pub(crate) client_capabilities: Option<ClientCapabilities>,
    pub(crate) cancellation: CancellationToken,
    pub(crate) extensions: Extensions,
    pub(crate) peer: Option<Peer<RoleServer>>,
    pub(crate) peer_accepts_requests: bool,
    pub(crate) progress_token: Option<ProgressToken>,
    pub(crate) caller: Caller,
    pub(crate) client_address: Option<IpAddr>,
    pub(crate) warnings: Mutex<Vec<ToolError>>,
    /// Whether the call's writes stand or it was answered without them.
    pub(crate) commit: CommitGate,
    /// Whether the call reached another server, whose outcome it now is.
    handed_off: AtomicBool,
    /// The `fusion/idempotency_key` of the request's `_meta`, as sent.
    pub(crate) meta_idempotency_key: Option<serde_json::Value>,
    /// The idempotency key the call runs under, once the idempotency guard claimed it.
    pub(crate) idempotency: OnceLock<IdempotencyKey>,
    mask_internal_errors: bool,
    /// Whether the tool called declares an output schema, so a success must carry
    /// structured content.
    pub(crate) output_schema: bool,
    /// The server's resource subscribers.
    pub(crate) subscriptions: Option<Arc<Subscriptions>>,
    /// What the chain's guards keep for this call while it runs, one value per guard's type
    /// (the rate limits' admission between their gates).
    pub(crate) guard_state: Mutex<Extensions>,
    /// The call's questions to the client and their answers.
    pub(crate) rounds: Rounds,
    /// The hand-over of a call that becomes a task, taken when it reaches its handler.
    pub(crate) launch: Mutex<Option<crate::launch::Launch>>,
    /// Whether the handler, not the chain, makes the call a task (`Ctx::become_task`).
    pub(crate) questions_first: bool,
    /// For a call that may become a task: the id of its task, once kept.
    pub(crate) task_started: Option<tokio::sync::watch::Receiver<Option<String>>>,
    /// Each local action as a call names it.
    names: Option<Arc<arc_swap::ArcSwap<CalledNames>>>,
}

impl CallInfo {
    pub(crate) fn new(
        action: Arc<str>,
        request: RequestInfo,
        mask_internal_errors: bool,
        output_schema: bool,
        subscriptions: Option<Arc<Subscriptions>>,
    ) -> CallInfo {
        CallInfo {
            action,
            kind: EntryKind::Action,
            session_id: request.session_id,
            client: request.client,
            client_capabilities: request.client_capabilities,
            cancellation: request.cancellation,
            extensions: request.extensions,
            peer_accepts_requests: request.peer_accepts_requests,
            peer: request.peer,
            progress_token: request.progress_token,
            caller: request.caller,
            client_address: request.client_address,
            warnings: Mutex::new(Vec::new()),
            commit: CommitGate::new(),
            handed_off: AtomicBool::new(false),
            meta_idempotency_key: request.idempotency_key,
            idempotency: OnceLock::new(),
            mask_internal_errors,
            output_schema,
            subscriptions,
            guard_state: Mutex::new(Extensions::default()),
            rounds: Rounds::over(None),
            launch: Mutex::new(None),
            questions_first: false,
            task_started: None,
            names: None,
        }
    }

    /// The call with its questions going through `rounds`.
    pub(crate) fn with_rounds(mut self, rounds: Rounds) -> CallInfo {
        self.rounds = rounds;
        self
    }

    /// The call as one that becomes a task when it reaches its handler.
    pub(crate) fn launching(mut self, mut launch: Option<crate::launch::Launch>) -> CallInfo {
        self.task_started = launch.as_mut().and_then(crate::launch::Launch::watcher);
        *self.launch.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner) = launch;
        self
    }

    /// The call as one whose handler becomes a task itself, after its questions.
    pub(crate) fn questions_first(mut self, questions_first: bool) -> CallInfo {
        self.questions_first = questions_first;
        self
    }

    /// Takes the hand-over of a call that may become a task (once).
    pub(crate) fn take_launch(&self) -> Option<crate::launch::Launch> {
        // Every handler asks; a call that is no task has no watcher and takes no lock.
        self.task_started.as_ref()?;
        self.launch.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
    }

    /// The call as one of the entry `kind`.
    pub(crate) fn of_kind(mut self, kind: EntryKind) -> CallInfo {
        self.kind = kind;
        self
    }

    /// The name a model calls the action named `name` by under this server's tools (see
    /// [`Ctx::action_name`]): `name` qualified (`tasks.list_tasks`), or bare (`list_tasks`, an
    /// action of this call's group first). A name no action has comes back as it is, and is
    /// logged once.
    pub fn called_name(&self, name: &str) -> String {
        let Some(names) = &self.names else { return name.to_owned() };
        let names = names.load();
        match names.called(name, &self.action) {
            Some(called) => called.to_owned(),
            None => {
                names.unknown(name, &self.action);
                name.to_owned()
            }
        }
    }

    /// The call naming actions with the server's names.
    pub(crate) fn naming(mut self, names: Arc<arc_swap::ArcSwap<CalledNames>>) -> CallInfo {
        self.names = Some(names);
        self
    }

    /// The qualified action (`billing.get_invoice`); for a prompt its name, for a resource
    /// read the URI read, for a subscription or another request its method (see
    /// [`entry`](Self::entry)).
    pub fn action(&self) -> &str {
        &self.action
    }

    /// What the call runs: an action, a prompt, a resource read or a subscription, by name.
    pub fn entry(&self) -> Entry<'_> {
        match self.kind {
            EntryKind::Action => Entry::Action(&self.action),
            EntryKind::Prompt => Entry::Prompt(&self.action),
            EntryKind::Resource => Entry::Resource { uri: &self.action },
            EntryKind::Subscription => Entry::Subscription(&self.action),
            EntryKind::Request => Entry::Request(&self.action),
        }
    }

    /// The session, when the transport issued one and still holds it (a live session of
    /// stateful HTTP); never a session header the request merely carries.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// Who the call counts as for per-caller keys: the identity, else the session the
    /// transport issued, else the client's address, else the local client (see
    /// [`CallerKey`]).
    pub fn caller_key(&self) -> CallerKey {
        CallerKey::of(self.identity(), self.session_id.as_ref(), self.client_address)
    }

    /// The client's network address, when the transport knows it (HTTP: the connection's
    /// peer, or the trusted proxy header).
    pub fn client_address(&self) -> Option<IpAddr> {
        self.client_address
    }

    /// The client, as it introduced itself at `initialize`.
    pub fn client(&self) -> Option<&Implementation> {
        self.client.as_ref()
    }

    /// What the client can do, as it declared: at `initialize` before MCP 2026-07-28, in the
    /// request's own `_meta` from then on.
    pub fn client_capabilities(&self) -> Option<&ClientCapabilities> {
        self.client_capabilities.as_ref()
    }

    /// The settings of the extension `name` when the client declared it (`None`: it did not).
    ///
    /// ```
    /// # fn receipts(info: &mcp_fusion::CallInfo) -> bool {
    /// info.client_extension("com.example/receipts").is_some()
    /// # }
    /// ```
    pub fn client_extension(&self, name: &str) -> Option<&JsonObject> {
        self.client_capabilities.as_ref()?.extensions.as_ref()?.get(name)
    }

    /// Fires when the client cancels the call.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// Says the call reached another server (a mount's upstream), which may act on it
    /// whatever happens next: its outcome is that server's from now on.
    ///
    /// A cancellation then no longer ends the call with `CANCELLED`, which says nothing was
    /// done; the call runs on and the forwarder decides what the cancellation means. A
    /// forwarder that hands off must watch [`cancellation`](Self::cancellation) itself: pass
    /// it on to the upstream when the client asked ([`client_left`](Self::client_left) is
    /// false), and end the call with the upstream's answer or with a failure that says the
    /// call may have taken effect.
    pub fn hand_off(&self) {
        self.handed_off.store(true, Ordering::Release);
    }

    /// Whether [`hand_off`](Self::hand_off) was called.
    pub(crate) fn is_handed_off(&self) -> bool {
        self.handed_off.load(Ordering::Acquire)
    }

    /// Whether the call was cancelled because its client went away (its stdio input ended,
    /// its output broke) rather than because the client asked. Nobody reads the answer of
    /// such a call; a forwarder lets it finish, so its outcome is known and logged.
    pub fn client_left(&self) -> bool {
        self.extensions.get::<ClientPresence>().is_some_and(ClientPresence::left)
    }

    /// The gate to pass to work that writes: it commits only if
    /// [`CommitGate::try_commit`] says so, which it no longer does once the call was answered
    /// with `TIMEOUT` or cancelled.
    pub fn commit_gate(&self) -> CommitGate {
        self.commit.clone()
    }

    /// The idempotency key the call runs under, for an action declared
    /// [`idempotent_by_key`](crate::Action::idempotent_by_key) called with one.
    pub fn idempotency_key(&self) -> Option<&str> {
        self.idempotency.get().map(IdempotencyKey::key)
    }

    /// The idempotency key the call runs under and what it is bound to (its caller and its
    /// arguments), to keep with a write and check a repeat against (see [`IdempotencyKey`]).
    pub fn idempotency(&self) -> Option<&IdempotencyKey> {
        self.idempotency.get()
    }

    /// What the transport attached to the request (over HTTP: `http::request::Parts`).
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// The authenticated caller, if credentials came with the call and were accepted.
    pub fn identity(&self) -> Option<&Identity> {
        self.caller.identity()
    }

    /// The client connection, to send it requests of its own (sampling, elicitation, roots) or
    /// notifications. Absent when the call did not come through a transport, and over
    /// stateless HTTP, where a request to the client has no way to reach it (it would wait
    /// forever). Check the client's capabilities before asking it for something. Over HTTP, a
    /// call in a session whose client declared none of them may be answered on the direct path
    /// ([`HttpConfig::direct_path`](crate::http::HttpConfig::direct_path)): a notification sent
    /// here then reaches the client on the session's standalone stream, not the call's.
    pub fn peer(&self) -> Option<&Peer<RoleServer>> {
        self.peer.as_ref().filter(|_| self.peer_accepts_requests)
    }

    /// Closes the stream this call's answer travels on, while the call goes on: the client is
    /// told to reconnect after `retry`, and does so with the last event it read
    /// (`Last-Event-ID`), and the events sent meanwhile, the answer among them, reach it on the
    /// resumed stream. A server does this to hold no connection through long work (a proxy
    /// that cuts idle streams, a replica about to drain). Returns whether a stream was closed:
    /// only a call over Streamable HTTP in a session has one; over stdio, without a session,
    /// or once the call was answered, nothing happens and it returns `false`.
    pub async fn close_sse_stream(&self, retry: Duration) -> bool {
        match self.extensions.get::<ResumableStream>() {
            Some(stream) => stream.close(retry).await,
            None => false,
        }
    }

    /// The `progressToken` the client sent with the call, if it wants progress reports.
    pub fn progress_token(&self) -> Option<&ProgressToken> {
        self.progress_token.as_ref()
    }

    /// Reports progress, when the client asked for it (a `progressToken` in the request's
    /// `_meta`); otherwise does nothing. Progress should grow from one report to the next.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let (Some(peer), Some(token)) = (&self.peer, &self.progress_token) else { return };
        let mut param = ProgressNotificationParam::new(token.clone(), progress);
        param.total = total;
        param.message = message;
        if let Err(error) = peer.notify_progress(param).await {
            tracing::debug!(action = %self.action, "progress not delivered: {error}");
        }
    }

    /// Tells the clients subscribed to the resource at `uri` that it changed
    /// (`notifications/resources/updated`), without waiting for them: call it once the change
    /// is committed.
    pub fn resource_updated(&self, uri: &str) {
        if let Some(subscriptions) = &self.subscriptions {
            subscriptions.updated(uri);
        }
    }

    /// Adds a warning to the result: it travels as a further text block of a successful
    /// result (`isError: false`), or after the envelope in the one block of a failed one.
    pub fn warn(&self, warning: ToolError) {
        self.warnings.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(warning.warning());
    }

    /// The envelope of a failure of this call: a `ToolError` unchanged, anything else a
    /// critical `INTERNAL_ERROR` naming the action. An `rmcp::ErrorData` is the handler's
    /// choice of a JSON-RPC error: the request is answered with it (a task fails with it), and
    /// the middleware sees the internal error its message makes.
    pub(crate) fn failure<E: Into<BoxError> + 'static>(&self, error: E) -> ToolError {
        let mut slot = Some(error);
        if let Some(rpc) = json_rpc_error(&mut slot) {
            self.rounds.refuse(rpc.clone());
            return Failure::from_error(rpc).into_tool_error(&self.action, self.mask_internal_errors);
        }
        let Some(error) = slot else { unreachable!("the slot is emptied only when it held a JSON-RPC error") };
        Failure::from_error(error).into_tool_error(&self.action, self.mask_internal_errors)
    }

    pub(crate) fn warnings_snapshot(&self) -> Vec<ToolError> {
        self.warnings.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    pub(crate) fn take_warnings(&self) -> Vec<ToolError> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }
}

/// The `rmcp::ErrorData` in `slot`, returned as it is or boxed (`?` in a handler returning
/// `Result<T>`), taken out; anything else stays.
fn json_rpc_error<E: 'static>(slot: &mut Option<E>) -> Option<rmcp::ErrorData> {
    let any: &mut dyn std::any::Any = slot;
    if let Some(rpc) = any.downcast_mut::<Option<rmcp::ErrorData>>() {
        return rpc.take();
    }
    let boxed = any.downcast_mut::<Option<BoxError>>()?;
    if !boxed.as_ref().is_some_and(|error| error.is::<rmcp::ErrorData>()) {
        return None;
    }
    boxed.take().and_then(|error| error.downcast::<rmcp::ErrorData>().ok()).map(|rpc| *rpc)
}

/// The context a handler receives: the application state and the facts of the call.
///
/// Cheap to clone (two reference counts).
#[derive(Debug)]
pub struct Ctx<S> {
    state: Arc<S>,
    call: Arc<CallInfo>,
}

impl<S> Clone for Ctx<S> {
    fn clone(&self) -> Self {
        Ctx { state: Arc::clone(&self.state), call: Arc::clone(&self.call) }
    }
}

impl<S> Ctx<S> {
    pub(crate) fn new(state: Arc<S>, call: Arc<CallInfo>) -> Ctx<S> {
        Ctx { state, call }
    }

    /// The application state given to the server builder.
    pub fn state(&self) -> &S {
        &self.state
    }

    /// The facts of the call.
    pub fn call(&self) -> &CallInfo {
        &self.call
    }

    /// The qualified action (`billing.get_invoice`).
    pub fn action(&self) -> &str {
        self.call.action()
    }

    /// Reports progress (see [`CallInfo::progress`]).
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.call.progress(progress, total, message).await;
    }

    /// Adds a warning to the successful result (see [`CallInfo::warn`]).
    pub fn warn(&self, warning: ToolError) {
        self.call.warn(warning);
    }

    /// Closes the call's stream for the client to resume (see [`CallInfo::close_sse_stream`]).
    pub async fn close_sse_stream(&self, retry: Duration) -> bool {
        self.call.close_sse_stream(retry).await
    }

    /// Makes the call a task now, for an action that asks its questions first
    /// ([`Action::questions_before_task`](crate::Action::questions_before_task)): the client
    /// is answered with the task's handle, and the handler goes on as the task's work (its
    /// further questions wait in the task). A call that does not run as a task (its client did
    /// not declare the extension) goes on as it is.
    ///
    /// # Errors
    ///
    /// The envelope to return when the task could not be kept: the work must not run, as
    /// nobody could read what it did.
    pub async fn become_task(&self) -> Result<(), ToolError> {
        let Some(launch) = self.call.take_launch() else { return Ok(()) };
        let inbox = launch.inbox();
        launch.admitted().await?;
        if let Some(inbox) = inbox {
            self.call.rounds.enter_task(inbox);
        }
        Ok(())
    }
}
