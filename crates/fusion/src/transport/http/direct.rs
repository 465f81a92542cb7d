//! The direct path: a JSON-RPC request whose answer is one JSON body — no stream to open, no
//! session to route it through — answered on the connection's own task: its body decoded once,
//! the server's handler awaited in place, the answer serialized as rmcp serializes it.
//!
//! rmcp serves each such request through a service loop of its own: a loop task spawned per
//! request, a task for the handler, channels between them and the HTTP response. That machinery
//! is for what a stream carries — progress, log messages, requests to the client — and costs
//! more than a short call itself; under load the hand-offs between threads cost most. A request
//! that can need none of it is answered here.
//!
//! The rule that keeps both paths in step: this path answers only a request rmcp would accept
//! as it is, with what rmcp would send — the same handler, a request context made as rmcp makes
//! it (the request's `_meta`, its HTTP parts, a peer that tells the protocol version the request
//! names), the same JSON-RPC serialization and HTTP status. Whatever is in doubt goes on to
//! rmcp untouched: a request in a session, `initialize`, subscriptions, tasks, a request that
//! asks for progress or log messages, a browser's (with an `Origin`), a body that does not
//! decode, headers rmcp would refuse.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::Response;
use futures_util::FutureExt as _;
use http_body::Body as _;
use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientJsonRpcMessage, ClientNotification, ClientRequest,
    ErrorCode, ErrorData, Extensions, GetExtensions as _, GetMeta as _, InitializeRequestParams, JsonRpcMessage,
    JsonRpcRequest, ProtocolVersion, RequestId, RequestMetaObject, ServerJsonRpcMessage,
};
use rmcp::service::{RequestContext, RunningService, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager as _};

use super::HttpConfig;
use super::sessions::{IssuedSession, OwnedSessions};
use super::strict::names_allowed_host;
use crate::run_to_end::RunToEnd;
use crate::server::FusionServer;
use crate::transport::jsonrpc;

const PROTOCOL_VERSION: &str = "mcp-protocol-version";
const MCP_METHOD: &str = "mcp-method";
const MCP_NAME: &str = "mcp-name";
const JSON: &str = "application/json";
/// Sessions kept alive past which the record of them is swept of those long idle.
const KEPT_ALIVE_SWEEP: usize = 1024;

/// What the direct path needs: the server, the rules rmcp applies before a request, and one
/// detached peer per protocol version for the handlers' request contexts.
pub(super) struct Direct {
    server: FusionServer,
    /// Whether requests without a protocol version in their `_meta` are answered here: only
    /// without sessions, since with them rmcp routes such a request through its session.
    stateless: bool,
    hosts: Vec<String>,
    /// Cancelled when the server stops serving: calls in flight are cancelled, as rmcp does.
    sessions: CancellationToken,
    /// One per known protocol version, made on first use (it spawns its loop, which needs the
    /// runtime).
    peers: Box<[OnceLock<RunningService<RoleServer, FusionServer>>]>,
    /// The sessions rmcp holds: a session whose requests are answered here is kept alive there.
    manager: Arc<OwnedSessions>,
    /// How long a session lives without a message, and when each was last kept alive.
    idle: Duration,
    kept_alive: Mutex<HashMap<Arc<str>, Instant>>,
}

impl std::fmt::Debug for Direct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Direct").field("stateless", &self.stateless).finish_non_exhaustive()
    }
}

/// A request the direct path answers: what the checks found, kept for the answer.
struct Admitted {
    id: RequestId,
    request: ClientRequest,
    /// The protocol version the peer of the request's context tells (the header's, else 2025-03-26).
    version: usize,
    /// Whether the request names its protocol version itself (`_meta`), or is `server/discover`:
    /// its error answers carry an HTTP status of their own.
    negotiated: bool,
    /// Whether its `_meta` lacks what MCP 2026-07-28 requires of every request.
    meta_incomplete: bool,
    /// The session the request belongs to, and its peer, when it is in one.
    session: Option<(Arc<str>, Peer<RoleServer>)>,
}

impl Direct {
    pub(super) fn new(
        server: FusionServer,
        config: &HttpConfig,
        sessions: CancellationToken,
        manager: Arc<OwnedSessions>,
    ) -> Direct {
        let peers = ProtocolVersion::KNOWN_VERSIONS.iter().map(|_| OnceLock::new()).collect();
        Direct {
            server,
            stateless: config.is_stateless(),
            hosts: config.hosts(),
            sessions,
            peers,
            manager,
            idle: config.limits.session_idle_timeout,
            kept_alive: Mutex::default(),
        }
    }

    /// Answers `request` when it is one the direct path serves; otherwise gives it back as it came.
    pub(super) async fn answer(&self, request: Request) -> Result<Response, Request> {
        if !self.takes_head(&request) {
            return Err(request);
        }
        let (parts, body) = request.into_parts();
        let bytes = match axum::body::to_bytes(body, usize::MAX).await {
            Ok(bytes) => bytes,
            Err(error) => {
                tracing::debug!("cannot read a request's body: {error}");
                let mut response = Response::new(Body::from("Bad Request: the body could not be read"));
                *response.status_mut() = http::StatusCode::BAD_REQUEST;
                return Ok(response);
            }
        };
        let Some(admitted) = self.admit(&parts, &bytes) else {
            return Err(Request::from_parts(parts, Body::from(bytes)));
        };
        if let Some((id, _)) = &admitted.session {
            self.keep_alive(id).await;
        }
        Ok(self.respond(admitted, parts).await)
    }

    /// Whether the request's head is one the direct path may take: a JSON POST that accepts
    /// both answers, from no browser, naming an allowed host, with a body of a known size.
    fn takes_head(&self, request: &Request) -> bool {
        let headers = request.headers();
        super::frames::reads(request)
            && accepts_json_and_events(headers)
            && !headers.contains_key(http::header::ORIGIN)
            && names_allowed_host(headers, request.uri(), &self.hosts)
            && request.body().size_hint().exact().is_some()
    }

    /// The request in `bytes`, when the direct path answers it: a request (not a notification)
    /// of a method whose answer needs no stream, with headers rmcp would accept.
    fn admit(&self, parts: &http::request::Parts, bytes: &Bytes) -> Option<Admitted> {
        let headers = &parts.headers;
        // rmcp reads a message's shape from its keys before it decodes it as that shape; a
        // scan of the keys does the same at a fraction of the cost of its buffered decode.
        let object = super::frames::object_in(bytes)?;
        let head = jsonrpc::head(object);
        if !head.is_request() {
            return None;
        }
        let message = decode(bytes, &object[head.method?])?;
        let request = message.request;
        if !answers_in_one_body(&request) {
            return None;
        }
        let meta = request.get_meta();
        // A request that asks for progress, or (2026-07-28) for log messages, may hear more
        // than its answer: rmcp opens a stream for it.
        if meta.get_progress_token().is_some() || meta.get(crate::context::LOG_LEVEL_META).is_some() {
            return None;
        }
        let header = match headers.get(PROTOCOL_VERSION) {
            None => None,
            Some(value) => Some(value.to_str().ok()?),
        };
        let version = match header {
            None => ProtocolVersion::KNOWN_VERSIONS.iter().position(|known| *known == ProtocolVersion::V_2025_03_26),
            Some(header) => ProtocolVersion::KNOWN_VERSIONS.iter().position(|known| known.as_str() == header),
        }?;
        let meta_incomplete = !meta.missing_required_keys(&ProtocolVersion::V_2026_07_28).is_empty();
        let discover = matches!(request, ClientRequest::DiscoverRequest(_));
        let named = meta.protocol_version();
        let admitted = match &named {
            // rmcp requires the header, and the same version in both.
            Some(named) => header == Some(named.as_str()),
            // Without a version of its own, a request of 2026-07-28 or later is refused.
            None => !discover && header.is_none_or(before_2026),
        };
        if !admitted {
            return None;
        }
        let negotiated = discover || named.is_some();
        // With sessions, a request whose `_meta` has all 2026-07-28 asks is served without one;
        // any other must name a session the endpoint found live, whose client cannot be sent
        // anything in the middle of a call (rmcp would route that through the session).
        let session = if self.stateless || !meta_incomplete { None } else { Some(self.quiet_session(parts)?) };
        if header.is_some_and(|header| !before_2026(header)) && !standard_headers_agree(headers, &request, &self.server)
        {
            return None;
        }
        Some(Admitted { id: message.id, request, version, negotiated, meta_incomplete, session })
    }

    /// Runs the request's handler and answers with its result, as rmcp would.
    async fn respond(&self, admitted: Admitted, parts: http::request::Parts) -> Response {
        let Admitted { id, mut request, version, negotiated, meta_incomplete, session } = admitted;
        let peer = match session {
            Some((_, peer)) => peer,
            None => self.peer(version),
        };
        let mut context = RequestContext::new(id.clone(), peer);
        // As rmcp's service loop: the request's `_meta` and extensions move to its context.
        context.meta = std::mem::replace(request.get_meta_mut(), RequestMetaObject::new());
        context.extensions = std::mem::replace(request.extensions_mut(), Extensions::new());
        context.extensions.insert(parts);
        // A token of its own, not a child of the server's: children of one token share its
        // lock, which every call in flight would take twice. The server stopping ends the call
        // below, and dropping it cancels this token.
        context.ct = CancellationToken::new();
        // A client that goes away cancels its call, as with rmcp: this future is dropped then,
        // and the handler's runs on to its end on a task of its own, so that it either stops
        // before its commit point or finishes (and logs) what it committed.
        let cancel_on_drop = context.ct.clone().drop_guard();
        // Boxed where it is made: the handler's future is large, and moving it up through the
        // futures that await it would copy it at each step.
        let server = self.server.clone();
        let handled = AssertUnwindSafe(RunToEnd::new(Box::pin(async move {
            rmcp::service::Service::handle_request(&server, request, context).await
        })));
        let message: ServerJsonRpcMessage = tokio::select! {
            // The call first: one that completes when first polled never waits on the server's
            // token.
            biased;
            result = handled.catch_unwind() => match result {
                Ok(Ok(result)) => JsonRpcMessage::response(result, id),
                Ok(Err(error)) => JsonRpcMessage::error(error, Some(id)),
                Err(_) => {
                    tracing::error!(%id, "a request's handler panicked");
                    let error = ErrorData::internal_error("Internal error: the request's handler failed; try again", None);
                    JsonRpcMessage::error(error, Some(id))
                }
            },
            () = self.sessions.cancelled() => {
                let mut response = Response::new(Body::from("Service Unavailable: the server is shutting down"));
                *response.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
                return response;
            }
        };
        // rmcp cancels a request's token once its answer is out; so does this path.
        drop(cancel_on_drop);
        let status = if negotiated { status_of(&message, meta_incomplete) } else { http::StatusCode::OK };
        json_response(&message, status)
    }

    /// The session a request names, when the endpoint found it live and issued to its caller
    /// (the session check leaves it on the request), and no message can reach its client in
    /// the middle of a call. (A request of MCP 2025-11-25's experimental tasks reaches this path
    /// under the method it is served under, one this path leaves to rmcp.)
    fn quiet_session(&self, parts: &http::request::Parts) -> Option<(Arc<str>, Peer<RoleServer>)> {
        let IssuedSession(id) = parts.extensions.get::<IssuedSession>()?;
        Some((Arc::clone(id), self.server.quiet_session(id)?))
    }

    /// Tells rmcp's session `id` it is in use, at most every quarter of its idle timeout: it
    /// sees none of the requests answered here, and would end the session as idle.
    async fn keep_alive(&self, id: &Arc<str>) {
        let now = Instant::now();
        {
            let mut kept_alive = self.kept_alive.lock().unwrap_or_else(PoisonError::into_inner);
            if kept_alive.get(id).is_some_and(|at| now.duration_since(*at) < self.idle / 4) {
                return;
            }
            if kept_alive.len() >= KEPT_ALIVE_SWEEP {
                kept_alive.retain(|_, at| now.duration_since(*at) < self.idle);
            }
            kept_alive.insert(Arc::clone(id), now);
        }
        // A cancellation that names no request: the session's loop takes it as activity, and
        // nothing else happens.
        let nothing = CancelledNotificationParam::new(None, Some("the session is in use".into()));
        let message = ClientJsonRpcMessage::notification(ClientNotification::from(CancelledNotification::new(nothing)));
        if let Err(error) = self.manager.accept_message(&SessionId::from(id.as_ref()), message).await {
            tracing::debug!(session = %id, "cannot keep a session alive: {error}");
        }
    }

    /// The detached peer that tells the protocol version at `version` in rmcp's list.
    fn peer(&self, version: usize) -> Peer<RoleServer> {
        let running = self.peers[version].get_or_init(|| {
            let info = InitializeRequestParams::new(
                rmcp::model::ClientCapabilities::default(),
                rmcp::model::Implementation::default(),
            )
            .with_protocol_version(ProtocolVersion::KNOWN_VERSIONS[version].clone());
            rmcp::service::serve_directly_with_ct(
                self.server.clone(),
                Detached,
                Some(info),
                self.sessions.child_token(),
            )
        });
        running.peer().clone()
    }
}

/// The request in `bytes`, whose `method` member's text is `method`, as rmcp decodes it.
///
/// rmcp decodes a request as the first of its twenty-odd kinds that reads it, each kind tried in
/// turn on a buffered copy of the message; only one kind reads a given method, the custom kind
/// aside. A request of the methods called most is decoded as its kind at once; one that kind
/// cannot read would be a custom request to rmcp, and is left to it.
fn decode(bytes: &[u8], method: &[u8]) -> Option<JsonRpcRequest<ClientRequest>> {
    fn as_kind<R: serde::de::DeserializeOwned>(
        bytes: &[u8],
        kind: fn(R) -> ClientRequest,
    ) -> Option<JsonRpcRequest<ClientRequest>> {
        let JsonRpcRequest { jsonrpc, id, request } = serde_json::from_slice::<JsonRpcRequest<R>>(bytes).ok()?;
        Some(JsonRpcRequest { jsonrpc, id, request: kind(request) })
    }
    match method {
        br#""tools/call""# => as_kind(bytes, ClientRequest::CallToolRequest),
        br#""tools/list""# => as_kind(bytes, ClientRequest::ListToolsRequest),
        br#""resources/read""# => as_kind(bytes, ClientRequest::ReadResourceRequest),
        br#""prompts/get""# => as_kind(bytes, ClientRequest::GetPromptRequest),
        _ => serde_json::from_slice(bytes).ok(),
    }
}

/// Whether the answer to `request` is one JSON-RPC message the direct path can give: methods
/// that return a result and hold nothing open. `initialize`, the logging level, subscriptions,
/// tasks' own methods and custom methods go to rmcp.
fn answers_in_one_body(request: &ClientRequest) -> bool {
    matches!(
        request,
        ClientRequest::CallToolRequest(_)
            | ClientRequest::ListToolsRequest(_)
            | ClientRequest::ListResourcesRequest(_)
            | ClientRequest::ListResourceTemplatesRequest(_)
            | ClientRequest::ReadResourceRequest(_)
            | ClientRequest::ListPromptsRequest(_)
            | ClientRequest::GetPromptRequest(_)
            | ClientRequest::CompleteRequest(_)
            | ClientRequest::PingRequest(_)
            | ClientRequest::DiscoverRequest(_)
    )
}

/// Whether a protocol version, as a header names it, is older than 2026-07-28 (dates compare
/// as text).
fn before_2026(version: &str) -> bool {
    version < ProtocolVersion::V_2026_07_28.as_str()
}

/// Whether the `Mcp-Method` and `Mcp-Name` headers (MCP 2026-07-28) are each sent once, in
/// plain text, and say what the body says, and no argument of the called tool is to be
/// repeated in an `Mcp-Param-*` header: only then does rmcp accept them without a closer look.
fn standard_headers_agree(headers: &http::HeaderMap, request: &ClientRequest, server: &FusionServer) -> bool {
    let single = |name: &str| {
        let mut values = headers.get_all(name).iter();
        let first = values.next().and_then(|value| value.to_str().ok());
        if values.next().is_some() { None } else { first }
    };
    if single(MCP_METHOD) != Some(request.method()) {
        return false;
    }
    let name = match request {
        ClientRequest::CallToolRequest(call) => {
            let tool = rmcp::ServerHandler::get_tool(server, &call.params.name);
            if tool.is_some_and(|tool| names_headers(&tool.input_schema)) {
                return false;
            }
            Some(call.params.name.as_ref())
        }
        ClientRequest::GetPromptRequest(get) => Some(get.params.name.as_str()),
        ClientRequest::ReadResourceRequest(read) => Some(read.params.uri.as_str()),
        _ => None,
    };
    // A value rmcp would decode (Base64) or refuse passes to rmcp.
    name.is_none_or(|name| single(MCP_NAME) == Some(name) && !name.starts_with("=?"))
}

/// Whether an input schema asks for any property in an `Mcp-Param-*` header (`x-mcp-header`).
fn names_headers(schema: &serde_json::Map<String, serde_json::Value>) -> bool {
    let Some(serde_json::Value::Object(properties)) = schema.get("properties") else {
        return false;
    };
    properties.values().any(|property| match property {
        serde_json::Value::Object(property) => property.contains_key("x-mcp-header") || names_headers(property),
        _ => false,
    })
}

/// The HTTP status rmcp gives an answer to a request that names its version itself: a
/// protocol error is a `400`, an unknown method a `404`.
fn status_of(message: &ServerJsonRpcMessage, meta_incomplete: bool) -> http::StatusCode {
    let ServerJsonRpcMessage::Error(error) = message else {
        return http::StatusCode::OK;
    };
    match error.error.code {
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::HEADER_MISMATCH => http::StatusCode::BAD_REQUEST,
        ErrorCode::INVALID_PARAMS if meta_incomplete => http::StatusCode::BAD_REQUEST,
        ErrorCode::METHOD_NOT_FOUND => http::StatusCode::NOT_FOUND,
        _ => http::StatusCode::OK,
    }
}

fn json_response(message: &ServerJsonRpcMessage, status: http::StatusCode) -> Response {
    let (status, body) = match serde_json::to_vec(message) {
        Ok(body) => (status, body),
        Err(error) => {
            tracing::error!("cannot serialize an answer: {error}");
            let error = ErrorData::internal_error("Internal error: the answer could not be serialized", None);
            let message: ServerJsonRpcMessage = JsonRpcMessage::error(error, None);
            (http::StatusCode::INTERNAL_SERVER_ERROR, serde_json::to_vec(&message).unwrap_or_default())
        }
    };
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static(JSON));
    response
}

/// Whether `Accept` names both JSON and event streams, plainly: an `Accept` with quoted
/// parameters or weights is left to rmcp's reading.
fn accepts_json_and_events(headers: &http::HeaderMap) -> bool {
    let (mut json, mut events) = (false, false);
    for value in headers.get_all(http::header::ACCEPT) {
        let Ok(value) = value.to_str() else { return false };
        if value.contains('"') || value.contains('=') {
            return false;
        }
        for entry in value.split(',') {
            let essence = entry.split(';').next().unwrap_or_default().trim();
            json |= essence.eq_ignore_ascii_case(JSON);
            events |= essence.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && events
}

/// The transport of the detached peers: nothing arrives on it, and what a handler would send
/// on it has nowhere to go (the requests that could send anything are not taken).
struct Detached;

impl rmcp::transport::Transport<RoleServer> for Detached {
    type Error = std::io::Error;

    fn send(
        &mut self,
        message: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        tracing::debug!(?message, "a message for a request answered on the direct path was dropped");
        std::future::ready(Ok(()))
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        std::future::pending()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}
