//! Sessions with owners and bounds: each session belongs to the caller that opened it, and
//! how many are alive — in all and per caller — is capped.
//!
//! rmcp's [`LocalSessionManager`] keeps the sessions; [`OwnedSessions`] wraps it to learn when
//! each one starts and ends, and [`admit`] checks every request that
//! names a session against its owner, and every `initialize` against the caps.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::extract::Request;
use axum::response::Response;
use futures_util::Stream;
use rmcp::model::GetExtensions as _;
#[cfg(feature = "redis")]
use rmcp::model::InitializeRequestParams;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, ServerJsonRpcMessage, ServerResult};
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionHandle, LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};
use rmcp::transport::streamable_http_server::session::{RestoreOutcome, SessionId, SessionManager};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, store::EventStore};
use tokio::sync::watch;
use tokio_stream::wrappers::ReceiverStream;

use super::config::Limits;
use super::refusal;
use super::request::ClientAddress;
use crate::auth::{Caller, CallerKey};
use crate::resumable::{CloseStream, Pending, ResumableStream};
use crate::task::experimental::{self, ExperimentalTasks};

const SESSION_HEADER: &str = "mcp-session-id";

/// Who a session belongs to: the identity that opened it, else the address it came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Owner {
    Identity(CallerKey),
    Address(IpAddr),
    Unknown,
}

impl Owner {
    fn of(request: &Request) -> Owner {
        Owner::of_extensions(request.extensions())
    }

    fn of_extensions(extensions: &http::Extensions) -> Owner {
        match extensions.get::<Caller>() {
            Some(Caller::Authenticated(identity)) => Owner::Identity(CallerKey::identity(identity)),
            _ => match extensions.get::<ClientAddress>() {
                Some(ClientAddress(address)) => Owner::Address(*address),
                None => Owner::Unknown,
            },
        }
    }

    /// The owner as a session store keeps it: `identity:…` (see [`CallerKey`]), `address:…`, or
    /// `unknown`.
    #[cfg(feature = "redis")]
    fn stored(&self) -> String {
        match self {
            Owner::Identity(key) => key.to_string(),
            Owner::Address(address) => CallerKey::Address(*address).to_string(),
            Owner::Unknown => "unknown".to_owned(),
        }
    }

    /// Whether a request from `self` may use a session whose owner a store keeps as `stored`:
    /// the rule of [`admits`](Self::admits).
    #[cfg(feature = "redis")]
    fn may_use_stored(&self, stored: &str) -> bool {
        !stored.starts_with("identity") || self.stored() == stored
    }

    /// Whether a request from `caller` may use a session this owner opened. Only sessions
    /// opened by an identity are closed to others: an address is not a credential.
    fn admits(&self, caller: &Owner) -> bool {
        match self {
            Owner::Identity(_) => self == caller,
            Owner::Address(_) | Owner::Unknown => true,
        }
    }
}

/// Where sessions are shared with other replicas (Redis, with the `redis` feature).
#[cfg(feature = "redis")]
pub(super) use super::shared_sessions::SharedSessions as SharedStore;
pub(crate) use crate::context::IssuedSession;
/// Where sessions are shared with other replicas: nowhere without the `redis` feature.
#[cfg(not(feature = "redis"))]
#[derive(Debug, Clone)]
pub(super) enum SharedStore {}
use std::task::{Context, Poll};

use futures_util::future::{BoxFuture, Either};
use tokio_util::sync::CancellationToken;
use tower_layer::Layer;
use tower_service::Service;

use super::check::{AtOnce, at_once};
use super::direct::Direct;
use super::{HttpConfig, McpEndpoint, service_with};
use crate::server::FusionServer;

/// The live sessions, their owners, and the slots reserved by `initialize` requests in flight.
#[derive(Debug)]
pub(super) struct Registry {
    limits: Limits,
    state: Mutex<Live>,
}

#[derive(Debug, Default)]
struct Live {
    /// Every session the manager holds; its owner once its `initialize` was answered.
    sessions: HashMap<SessionId, Option<Owner>>,
    /// Sessions held or being opened, per owner.
    per_owner: HashMap<Owner, usize>,
    /// The sessions whose client speaks the experimental tasks of MCP 2025-11-25.
    experimental_tasks: HashSet<SessionId>,
    /// `initialize` requests in flight.
    opening: usize,
}

/// Why a new session was refused.
enum Full {
    Server(usize),
    Caller(usize),
}

impl Registry {
    pub(super) fn new(limits: Limits) -> Arc<Registry> {
        Arc::new(Registry { limits, state: Mutex::default() })
    }

    fn live(&self) -> MutexGuard<'_, Live> {
        // A panic while holding this lock leaves counts, not broken invariants: go on.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The number of sessions alive.
    pub(super) fn len(&self) -> usize {
        self.live().sessions.len()
    }

    /// The owner of the session `id` (once its `initialize` was answered), and whether its
    /// client speaks the experimental tasks; `None` when there is no such session.
    fn session(&self, id: &str) -> Option<(Option<Owner>, bool)> {
        let live = self.live();
        let owner = live.sessions.get(id).cloned()?;
        Some((owner, live.experimental_tasks.contains(id)))
    }

    /// Notes that the client of the session `id` speaks the experimental tasks.
    fn speaks_experimental_tasks(&self, id: &SessionId) {
        let mut live = self.live();
        if live.sessions.contains_key(id) {
            live.experimental_tasks.insert(id.clone());
        }
    }

    fn reserve(&self, owner: &Owner) -> Result<(), Full> {
        let mut live = self.live();
        if live.sessions.len() + live.opening >= self.limits.max_sessions {
            return Err(Full::Server(self.limits.max_sessions));
        }
        let held = live.per_owner.get(owner).copied().unwrap_or(0);
        if *owner != Owner::Unknown && held >= self.limits.max_sessions_per_caller {
            return Err(Full::Caller(self.limits.max_sessions_per_caller));
        }
        live.opening += 1;
        *live.per_owner.entry(owner.clone()).or_default() += 1;
        Ok(())
    }

    /// Ends a reservation: the session `opened` (if any, and still alive) keeps the owner's slot.
    fn settle(&self, owner: Owner, opened: Option<&str>) {
        let mut live = self.live();
        live.opening -= 1;
        if let Some(slot) = opened.and_then(|id| live.sessions.get_mut(id))
            && slot.is_none()
        {
            *slot = Some(owner);
            return;
        }
        release(&mut live, &owner);
    }

    fn opened(&self, id: &SessionId) {
        self.live().sessions.entry(id.clone()).or_insert(None);
    }

    /// Whether this process may take one more session, restored from a store.
    #[cfg(feature = "redis")]
    fn has_room(&self) -> bool {
        let live = self.live();
        live.sessions.len() + live.opening < self.limits.max_sessions
    }

    /// The sessions this process holds.
    #[cfg(feature = "redis")]
    pub(super) fn ids(&self) -> Vec<SessionId> {
        self.live().sessions.keys().cloned().collect()
    }

    /// Whether this process holds the session `id` (its owner known or not yet).
    #[cfg(feature = "redis")]
    fn holds(&self, id: &str) -> bool {
        self.live().sessions.contains_key(id)
    }

    /// Gives the session `id`, restored here, its owner.
    #[cfg(feature = "redis")]
    fn restored(&self, id: &str, owner: Owner) {
        let mut live = self.live();
        if let Some(slot) = live.sessions.get_mut(id)
            && slot.is_none()
        {
            *slot = Some(owner.clone());
            *live.per_owner.entry(owner).or_default() += 1;
        }
    }

    fn closed(&self, id: &SessionId) {
        let mut live = self.live();
        if let Some(Some(owner)) = live.sessions.remove(id) {
            release(&mut live, &owner);
        }
        live.experimental_tasks.remove(id);
        // Give back the room of the busiest moment (20,000 sessions, say) once mostly empty.
        let len = live.sessions.len();
        if live.sessions.capacity() > 64 && len < live.sessions.capacity() / 8 {
            live.sessions.shrink_to(len * 2);
            live.per_owner.shrink_to(len * 2);
            let speaking = live.experimental_tasks.len();
            live.experimental_tasks.shrink_to(speaking * 2);
        }
    }
}

fn release(live: &mut Live, owner: &Owner) {
    if let Some(held) = live.per_owner.get_mut(owner) {
        *held -= 1;
        if *held == 0 {
            live.per_owner.remove(owner);
        }
    }
}

/// A slot reserved for the session an `initialize` may open; given back unless
/// [`Opening::settle`] names the session that was opened.
pub(super) struct Opening {
    registry: Arc<Registry>,
    owner: Option<Owner>,
}

impl Opening {
    /// Ends the reservation with the session the response named, if any.
    pub(super) fn settle(mut self, response: &Response) {
        let opened = response.headers().get(SESSION_HEADER).and_then(|id| id.to_str().ok());
        if let Some(owner) = self.owner.take() {
            self.registry.settle(owner, opened);
        }
    }
}

impl Drop for Opening {
    fn drop(&mut self) {
        // The request was dropped before its answer (the client left): no session came of it.
        if let Some(owner) = self.owner.take() {
            self.registry.settle(owner, None);
        }
    }
}

/// What [`admit`] decided for a request it did not refuse.
enum Admitted {
    /// On to the endpoint as it is.
    Pass,
    /// An `initialize`, holding its slot until answered.
    Opening(Opening),
    /// Names a session this process does not hold: the session store decides.
    #[cfg(feature = "redis")]
    Elsewhere { id: String, caller: Owner },
}

/// Checks a request naming a session against the session's owner (`404` for anyone else, as
/// for a session that does not exist), and a request opening one against the caps (`503` when
/// the server is full, `429` when the caller is); an admitted `initialize` holds an
/// [`Opening`].
///
/// A request that names a live session it may use carries it on as an [`IssuedSession`]: the
/// only session a call counts as (a header naming no live session is no session).
#[expect(clippy::result_large_err, reason = "a refusal is the rare path, and answered at once")]
fn admit(registry: &Arc<Registry>, shared: Option<&SharedStore>, request: &mut Request) -> Result<Admitted, Response> {
    #[cfg(not(feature = "redis"))]
    let _ = shared;
    let caller = Owner::of(request);
    if let Some(id) = request.headers().get(SESSION_HEADER) {
        let Some(id) = id.to_str().ok() else { return Ok(Admitted::Pass) };
        let known = registry.session(id);
        // A session held here without its owner yet is being restored from the store (its
        // replayed `initialize` has not reached it): its owner is the store's to tell, so a
        // request naming it is checked there, as one naming a session held elsewhere.
        #[cfg(feature = "redis")]
        if shared.is_some() && matches!(known, Some((None, _))) && super::shared_sessions::issued_form(id) {
            return Ok(Admitted::Elsewhere { id: id.to_owned(), caller });
        }
        let Some((known, experimental_tasks)) = known else {
            // Only an id of the form this server issues (a UUID) is looked up in the store: any
            // other string a client sends never names a key there.
            #[cfg(feature = "redis")]
            if shared.is_some() && super::shared_sessions::issued_form(id) {
                return Ok(Admitted::Elsewhere { id: id.to_owned(), caller });
            }
            return Ok(Admitted::Pass);
        };
        if let Some(owner) = &known
            && !owner.admits(&caller)
        {
            tracing::warn!(?caller, "refused a request naming another caller's session");
            return Err(refusal::session_not_found());
        }
        #[cfg(feature = "redis")]
        if let (Some(shared), Some(owner)) = (shared, &known) {
            shared.touch(id, || owner.stored());
        }
        let issued = IssuedSession(Arc::from(id));
        request.extensions_mut().insert(issued);
        if experimental_tasks {
            request.extensions_mut().insert(ExperimentalTasks);
        }
        return Ok(Admitted::Pass);
    }
    // Only a POST without a session can open one (`initialize`); anything else rmcp refuses.
    if request.method() != http::Method::POST {
        return Ok(Admitted::Pass);
    }
    match registry.reserve(&caller) {
        Ok(()) => Ok(Admitted::Opening(Opening { registry: Arc::clone(registry), owner: Some(caller) })),
        Err(Full::Server(max)) => {
            tracing::warn!(max, "refused a new session: the server holds as many as it may");
            Err(refusal::busy(
                http::StatusCode::SERVICE_UNAVAILABLE,
                &format!("The server holds its maximum of {max} sessions; try again later."),
            ))
        }
        Err(Full::Caller(max)) => {
            tracing::warn!(?caller, max, "refused a new session: the caller holds as many as it may");
            Err(caller_full(max))
        }
    }
}

/// rmcp's [`LocalSessionManager`], telling the session registry when sessions start and end,
/// and keeping each new session in the session store when there is one.
pub struct OwnedSessions {
    inner: LocalSessionManager,
    registry: Arc<Registry>,
    #[cfg_attr(not(feature = "redis"), expect(dead_code, reason = "no store can be configured"))]
    shared: Option<SharedStore>,
    closed: Arc<ClosedStreams>,
}

impl OwnedSessions {
    /// The sessions this process holds.
    #[cfg(feature = "redis")]
    pub(super) fn held(&self) -> Vec<SessionId> {
        self.registry.ids()
    }

    pub(super) fn new(limits: Limits, registry: Arc<Registry>, shared: Option<SharedStore>) -> OwnedSessions {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(limits.session_idle_timeout);
        OwnedSessions { inner, registry, shared, closed: Arc::default() }
    }

    /// With a session store: keeps the session that just answered `initialize` there (or, when
    /// rmcp restored it from there, gives it its owner here), and tells the server it is
    /// initialized at once, as rmcp does on a restore: the client's `notifications/initialized`
    /// may reach another replica.
    #[cfg(feature = "redis")]
    async fn share(&self, shared: &SharedStore, id: &SessionId, initialize: &InitializeRequestParams, parts: Parts) {
        use rmcp::model::{ClientNotification, InitializedNotification};
        let (mut parts, restored) = parts;
        let owner = Owner::of_extensions(&parts.extensions);
        if restored {
            return self.registry.restored(id, owner);
        }
        shared.create(id, initialize, &owner.stored()).await;
        parts.extensions.insert(IssuedSession(Arc::from(id.as_ref())));
        let mut initialized = ClientJsonRpcMessage::notification(ClientNotification::InitializedNotification(
            InitializedNotification::default(),
        ));
        initialized.insert_extension(parts);
        if let Err(error) = self.inner.accept_message(id, initialized).await {
            tracing::debug!(session = %id, "a new session was not told it is initialized: {error}");
        }
    }
}

/// The HTTP request an `initialize` came in, and whether rmcp replays it to restore a session.
#[cfg(feature = "redis")]
type Parts = (http::request::Parts, bool);

/// What a session store needs of an `initialize` message: its parameters and its request.
#[cfg(feature = "redis")]
fn sharing(message: &ClientJsonRpcMessage) -> Option<(InitializeRequestParams, Parts)> {
    use rmcp::transport::streamable_http_server::session::SessionRestoreMarker;
    let JsonRpcMessage::Request(request) = message else { return None };
    let ClientRequest::InitializeRequest(initialize) = &request.request else { return None };
    let extensions = request.request.extensions();
    let parts = extensions.get::<http::request::Parts>()?.clone();
    Some((initialize.params.clone(), (parts, extensions.get::<SessionRestoreMarker>().is_some())))
}

impl std::fmt::Debug for OwnedSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnedSessions").field("live", &self.registry.len()).finish_non_exhaustive()
    }
}

impl SessionManager for OwnedSessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        self.registry.opened(&id);
        Ok((id, transport))
    }

    /// Opens the session, and for a client of the experimental tasks of MCP 2025-11-25 notes
    /// so (its later requests are served in that form) and says in its answer that tasks are
    /// served that way.
    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let experimental_tasks = matches!(&message, JsonRpcMessage::Request(request)
            if matches!(&request.request, ClientRequest::InitializeRequest(initialize) if experimental::spoken_by(&initialize.params)));
        #[cfg(feature = "redis")]
        let sharing = self.shared.as_ref().and_then(|shared| Some((shared.clone(), sharing(&message)?)));
        let mut answer = self.inner.initialize_session(id, message).await?;
        #[cfg(feature = "redis")]
        if let Some((shared, (params, parts))) = sharing
            && matches!(&answer, JsonRpcMessage::Response(response) if matches!(response.result, ServerResult::InitializeResult(_)))
        {
            self.share(&shared, id, &params, parts).await;
        }
        if experimental_tasks
            && let JsonRpcMessage::Response(response) = &mut answer
            && let ServerResult::InitializeResult(result) = &response.result
        {
            self.registry.speaks_experimental_tasks(id);
            response.result = experimental::initialize_result(result);
        }
        Ok(answer)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    /// Ends the session here; in the session store it lives on (other replicas may use it)
    /// until it idles out there or the client ends it (`DELETE`).
    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = self.inner.close_session(id).await;
        self.registry.closed(id);
        #[cfg(feature = "redis")]
        if let Some(shared) = &self.shared {
            shared.let_go(id);
        }
        // rmcp's map keeps the room of its busiest moment: give it back once mostly empty.
        let mut sessions = self.inner.sessions.write().await;
        let len = sessions.len();
        if sessions.capacity() > 64 && len < sessions.capacity() / 8 {
            sessions.shrink_to(len * 2);
        }
        closed
    }

    /// As rmcp's, and a request learns how to close its stream for the client to resume.
    async fn create_stream(
        &self,
        id: &SessionId,
        mut message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let session = self.inner.sessions.read().await.get(id).cloned();
        let session = session.ok_or_else(|| LocalSessionManagerError::SessionNotFound(id.clone()))?;
        let receiver = session.establish_request_wise_channel().await?;
        if let (Some(http_request_id), JsonRpcMessage::Request(request)) = (receiver.http_request_id, &mut message) {
            let phase = Arc::new(watch::channel(Phase::Open).0);
            let closed = Arc::clone(&self.closed);
            let stream = RequestStream { session: session.clone(), http_request_id, phase, closed };
            request.request.extensions_mut().insert(ResumableStream::new(stream));
        }
        session.push_message(message, receiver.http_request_id).await?;
        Ok(ReceiverStream::new(receiver.inner))
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.inner.resume(id, last_event_id.clone()).await?;
        self.closed.resumed(id, &last_event_id);
        Ok(stream)
    }

    async fn restore_session(&self, id: SessionId) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        let outcome = self.inner.restore_session(id.clone()).await?;
        if matches!(outcome, RestoreOutcome::Restored(_)) {
            self.registry.opened(&id);
        }
        Ok(outcome)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}

/// How long past the `retry` it was told a closed stream's answer waits for its client to come
/// back: then it is sent to nobody, as an answer to a client that is gone.
const RESUME_GRACE: Duration = Duration::from_secs(30);

/// Where a closed request stream stands: open, or closed until its client resumes it (or the
/// instant past which nobody waits for that).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Open,
    Closed { until: tokio::time::Instant },
}

/// The request streams of this process's sessions that a call closed and no client resumed
/// yet, by session and rmcp's number of the HTTP request.
#[derive(Debug, Default)]
struct ClosedStreams(Mutex<HashMap<StreamKey, Arc<watch::Sender<Phase>>>>);

/// A request stream: its session and rmcp's number of the HTTP request.
type StreamKey = (SessionId, u64);

impl ClosedStreams {
    fn lock(&self) -> MutexGuard<'_, HashMap<StreamKey, Arc<watch::Sender<Phase>>>> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The client reconnected to the stream an event of `last_event_id` was on (rmcp's
    /// `<index>/<http request>`): its call may answer.
    fn resumed(&self, session: &SessionId, last_event_id: &str) {
        let Some(http_request_id) = last_event_id.split_once('/').and_then(|(_, id)| id.parse::<u64>().ok()) else {
            return;
        };
        if let Some(phase) = self.lock().remove(&(session.clone(), http_request_id)) {
            phase.send_replace(Phase::Open);
        }
    }
}

/// The stream one request of a session is answered on, as its call closes it.
struct RequestStream {
    session: LocalSessionHandle,
    http_request_id: u64,
    phase: Arc<watch::Sender<Phase>>,
    closed: Arc<ClosedStreams>,
}

impl RequestStream {
    fn key(&self) -> StreamKey {
        (self.session.id().clone(), self.http_request_id)
    }
}

impl CloseStream for RequestStream {
    fn close(&self, retry: Duration) -> Pending<'_, bool> {
        Box::pin(async move {
            // Marked before the event leaves: a client quick to reconnect finds it closed.
            let until = tokio::time::Instant::now() + retry + RESUME_GRACE;
            self.phase.send_replace(Phase::Closed { until });
            self.closed.lock().insert(self.key(), Arc::clone(&self.phase));
            match self.session.close_sse_stream(self.http_request_id, Some(retry)).await {
                Ok(()) => true,
                Err(error) => {
                    self.closed.lock().remove(&self.key());
                    self.phase.send_replace(Phase::Open);
                    tracing::debug!(session = %self.session.id(), "a call's stream was not closed: {error}");
                    false
                }
            }
        })
    }

    fn reopened(&self) -> Pending<'_, ()> {
        Box::pin(async move {
            let mut phase = self.phase.subscribe();
            let Phase::Closed { until } = *phase.borrow_and_update() else { return };
            if tokio::time::timeout_at(until, phase.wait_for(|phase| *phase == Phase::Open)).await.is_err() {
                self.closed.lock().remove(&self.key());
                tracing::debug!(session = %self.session.id(), "a call's closed stream was not resumed in time");
            }
        })
    }
}

/// Checks sessions against their owners and caps: a request naming another caller's session
/// gets `404` (as for a session that does not exist), an `initialize` beyond the caps `503`
/// (the server's) or `429` (the caller's). A request naming a live session it may use carries
/// it on, the only session a call counts as. Its sessions are those of the endpoint
/// [`SessionLayer::endpoint`] builds; a stateless configuration checks none.
///
/// Owners come from what the layers before it leave: the
/// [`BearerAuthLayer`](super::BearerAuthLayer)'s identity, else the
/// [`ClientAddressLayer`](super::ClientAddressLayer)'s address.
///
/// ```
/// use axum::Router;
/// use mcp_fusion::http::{ClientAddressLayer, HttpConfig, SessionLayer};
/// use tokio_util::sync::CancellationToken;
/// # fn app(server: mcp_fusion::FusionServer) -> Router {
/// let config = HttpConfig::new("127.0.0.1:8080");
/// let sessions = SessionLayer::new(&config);
/// let mcp = sessions.endpoint(server, &config, CancellationToken::new());
/// let checked = tower::ServiceBuilder::new().layer(ClientAddressLayer::new(&config)).layer(sessions).service(mcp);
/// Router::new().nest_service("/mcp", checked)
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct SessionLayer {
    registry: Arc<Registry>,
    checks: bool,
    shared: Option<SharedStore>,
}

impl SessionLayer {
    /// Sessions capped as configured; none checked when the configuration is stateless. With a
    /// session store (`HttpConfig::session_store`, cargo feature `redis`), sessions are kept there too, and a request
    /// naming one this process does not hold is checked against what the store keeps.
    pub fn new(config: &HttpConfig) -> SessionLayer {
        let checks = !config.is_stateless();
        #[cfg(feature = "redis")]
        let shared = config
            .session_store
            .clone()
            .filter(|_| checks)
            .map(|store| SharedStore::new(store, config.limits.session_idle_timeout, config.session_store_failure));
        #[cfg(not(feature = "redis"))]
        let shared = None;
        SessionLayer { registry: Registry::new(config.limits), checks, shared }
    }

    /// The MCP endpoint for `server`, whose sessions this layer checks; cancelling `sessions`
    /// ends every session and open stream.
    pub fn endpoint(&self, server: FusionServer, config: &HttpConfig, sessions: CancellationToken) -> McpEndpoint {
        let manager = Arc::new(OwnedSessions::new(config.limits, Arc::clone(&self.registry), self.shared.clone()));
        let direct = config
            .direct_path
            .then(|| Arc::new(Direct::new(server.clone(), config, sessions.clone(), Arc::clone(&manager))));
        #[cfg_attr(not(feature = "redis"), expect(unused_mut, reason = "only a session store changes it"))]
        let mut rmcp = config.rmcp_config(sessions.clone());
        #[cfg(feature = "redis")]
        if let Some(shared) = &self.shared {
            rmcp.session_store = Some(Arc::new(shared.clone()));
            server.relay_through(Arc::new(shared.clone()));
            shared.clone().listen(server.clone(), Arc::clone(&manager), sessions);
        }
        #[cfg(not(feature = "redis"))]
        drop(sessions);
        McpEndpoint { rmcp: Arc::new(service_with(server, rmcp, manager)), direct }
    }
}

impl<S> Layer<S> for SessionLayer {
    type Service = SessionCheck<S>;

    fn layer(&self, inner: S) -> SessionCheck<S> {
        SessionCheck { inner, registry: self.checks.then(|| Arc::clone(&self.registry)), shared: self.shared.clone() }
    }
}

/// The service of [`SessionLayer`].
#[derive(Debug, Clone)]
pub struct SessionCheck<S> {
    inner: S,
    registry: Option<Arc<Registry>>,
    shared: Option<SharedStore>,
}

impl<S> Service<Request> for SessionCheck<S>
where
    S: Service<Request, Response = Response> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = AtOnce<Either<S::Future, BoxFuture<'static, Result<Response, S::Error>>>, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let Some(registry) = &self.registry else {
            return Either::Right(Either::Left(self.inner.call(request)));
        };
        match admit(registry, self.shared.as_ref(), &mut request) {
            Err(refused) => at_once(refused),
            Ok(Admitted::Pass) => Either::Right(Either::Left(self.inner.call(request))),
            #[cfg(feature = "redis")]
            Ok(Admitted::Opening(opening)) if self.shared.is_some() => {
                let (shared, max) = (self.shared.clone(), registry.limits.max_sessions_per_caller);
                let mut inner = self.inner.clone();
                std::mem::swap(&mut inner, &mut self.inner);
                Either::Right(Either::Right(Box::pin(async move {
                    let mut reserved = None;
                    if let Some(shared) = &shared
                        && let Some(owner) = &opening.owner
                    {
                        let max = (*owner != Owner::Unknown).then_some(max);
                        match shared.may_open(&owner.stored(), max).await {
                            Ok(reservation) => reserved = reservation,
                            Err(not) => return Ok(not_opened(not, owner)),
                        }
                    }
                    // The service's error (none, for axum's) leaves the reservation to lapse.
                    let response = inner.call(request).await?;
                    // Answered: the session opened holds its own place among its owner's now.
                    if let (Some(shared), Some(reservation)) = (&shared, reserved) {
                        shared.release(reservation).await;
                    }
                    opening.settle(&response);
                    Ok(response)
                })))
            }
            Ok(Admitted::Opening(opening)) => {
                let answer = self.inner.call(request);
                Either::Right(Either::Right(Box::pin(async move {
                    let response = answer.await?;
                    opening.settle(&response);
                    Ok(response)
                })))
            }
            #[cfg(feature = "redis")]
            Ok(Admitted::Elsewhere { id, caller }) => {
                let (registry, shared) = (Arc::clone(registry), self.shared.clone());
                // The service that was made ready goes with the request; a clone stays.
                let mut inner = self.inner.clone();
                std::mem::swap(&mut inner, &mut self.inner);
                Either::Right(Either::Right(Box::pin(async move {
                    let Some(shared) = shared else { return Ok(refusal::session_not_found()) };
                    match restorable(&registry, &shared, id, &caller, &mut request).await {
                        Ok(()) => inner.call(request).await,
                        Err(refused) => Ok(refused),
                    }
                })))
            }
        }
    }
}

/// The answer to an `initialize` the session store refused.
#[cfg(feature = "redis")]
fn not_opened(not: super::shared_sessions::NotOpened, caller: &Owner) -> Response {
    use super::shared_sessions::NotOpened;
    match not {
        NotOpened::CallerFull(max) => {
            tracing::warn!(
                ?caller,
                max,
                "refused a new session: the caller holds as many as it may across the replicas"
            );
            caller_full(max)
        }
        NotOpened::StoreDown => refusal::busy(
            http::StatusCode::SERVICE_UNAVAILABLE,
            "No session can be opened right now (the session store did not answer); try again shortly.",
        ),
    }
}

/// The answer to an `initialize` of a caller holding `max` sessions already.
fn caller_full(max: usize) -> Response {
    refusal::busy(
        http::StatusCode::TOO_MANY_REQUESTS,
        &format!(
            "This caller holds its maximum of {max} open sessions; end one (DELETE) or reuse it, or wait for idle ones to expire."
        ),
    )
}

/// Whether a request naming session `id`, which this process does not hold, may have it
/// restored from the session store: the session is there, `caller` may use it, and this process
/// has room. The request then carries the session on as its [`IssuedSession`].
#[cfg(feature = "redis")]
async fn restorable(
    registry: &Registry,
    shared: &SharedStore,
    id: String,
    caller: &Owner,
    request: &mut Request,
) -> Result<(), Response> {
    let record = match shared.record(&id).await {
        Ok(Some(record)) => record,
        Ok(None) => return Err(refusal::session_not_found()),
        Err(error) => {
            tracing::warn!("a session held by another replica cannot be restored: the session store failed ({error})");
            return Err(refusal::busy(
                http::StatusCode::SERVICE_UNAVAILABLE,
                "This session cannot be resumed right now (the session store did not answer); try again shortly.",
            ));
        }
    };
    if !caller.may_use_stored(&record.owner) {
        tracing::warn!(?caller, "refused a request naming another caller's session");
        return Err(refusal::session_not_found());
    }
    // One being restored here already holds its room.
    if !registry.holds(&id) && !registry.has_room() {
        let max = registry.limits.max_sessions;
        tracing::warn!(max, "refused to restore a session: this replica holds as many as it may");
        return Err(refusal::busy(
            http::StatusCode::SERVICE_UNAVAILABLE,
            &format!("The server holds its maximum of {max} sessions; try again later."),
        ));
    }
    if record.experimental_tasks {
        request.extensions_mut().insert(ExperimentalTasks);
    }
    request.extensions_mut().insert(IssuedSession(Arc::from(id)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use tower_service::Service;

    use super::*;
    use crate::context::{ClientAddress, IssuedSession};
    use crate::transport::http::testing::*;
    use axum::body::Body;

    #[tokio::test]
    async fn the_session_layer_caps_openings_and_passes_unknown_sessions_without_one() {
        let inner = tower::service_fn(|request: Request| async move {
            let issued = request.extensions().get::<IssuedSession>().is_some();
            Ok::<_, Infallible>(Response::new(Body::from(format!("issued: {issued}"))))
        });
        let mut checked = SessionLayer::new(&config().max_sessions(1)).layer(inner);
        let open = |address: &str| {
            let address = ClientAddress(address.parse::<IpAddr>().unwrap());
            post("{}").extension(address).body(Body::from("{}")).unwrap()
        };
        // The first `initialize` holds the one slot until it is answered.
        let first = checked.call(open("10.0.0.1"));
        let full = checked.call(open("10.0.0.2")).await.unwrap();
        assert_eq!(full.status(), http::StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(full.headers()[http::header::RETRY_AFTER], "30");
        // Answered without a session, it gives the slot back.
        assert_eq!(first.await.unwrap().status(), http::StatusCode::OK);
        assert_eq!(checked.call(open("10.0.0.2")).await.unwrap().status(), http::StatusCode::OK);
        let unknown = get("/mcp").header("mcp-session-id", "gone").body(Body::empty()).unwrap();
        let response = checked.call(unknown).await.unwrap();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        assert_eq!(&body[..], b"issued: false");
        // Stateless, nothing is capped.
        let mut stateless = SessionLayer::new(&config().stateless(true).max_sessions(1)).layer(inner);
        let _held = stateless.call(open("10.0.0.1"));
        assert_eq!(stateless.call(open("10.0.0.1")).await.unwrap().status(), http::StatusCode::OK);
    }
}
