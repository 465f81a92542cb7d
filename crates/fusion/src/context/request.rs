//! What a transport knows about a request before routing: its session, its client, its caller,
//! and, over HTTP, the facts the endpoint's checks left on the request.

#![allow(
    deprecated,
    reason = "rmcp marks MCP logging deprecated (SEP-2577); 2026-07-28 keeps it, with the level per request"
)]

use std::net::IpAddr;
use std::sync::Arc;

use rmcp::model::{ClientCapabilities, Extensions, Implementation, InputResponses, LoggingLevel, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use crate::auth::Caller;
use crate::idempotency_key::IDEMPOTENCY_KEY_META;
use crate::observe::TraceContext;

/// What the transport knows about a request, before routing.
#[derive(Debug, Clone)]
pub struct RequestInfo {
    /// The session, when the transport has one.
    pub session_id: Option<Arc<str>>,
    /// The client, as it introduced itself.
    pub client: Option<Implementation>,
    /// What the client declared it can do (at `initialize`, or in the request's `_meta`).
    pub client_capabilities: Option<ClientCapabilities>,
    /// Fires when the client cancels the request.
    pub cancellation: CancellationToken,
    /// What the transport attached to the request.
    pub extensions: Extensions,
    /// The client connection.
    pub peer: Option<Peer<RoleServer>>,
    /// Whether requests sent to the peer can reach the client (not over stateless HTTP).
    pub peer_accepts_requests: bool,
    /// The `progressToken` of the request's `_meta`, if the client wants progress.
    pub progress_token: Option<ProgressToken>,
    /// Who is calling, as the transport's authenticator found.
    pub caller: Caller,
    /// The client's network address, when the transport knows it.
    pub client_address: Option<IpAddr>,
    /// The `fusion/idempotency_key` of the request's `_meta`, as sent.
    pub idempotency_key: Option<serde_json::Value>,
    /// The logging level the request's own `_meta` asks for (`io.modelcontextprotocol/logLevel`,
    /// MCP 2026-07-28): the call's messages at it and above go on the request's stream.
    pub log_level: Option<LoggingLevel>,
    /// The W3C trace context of the request's `_meta` (`traceparent`, `tracestate`,
    /// `baggage`), when it is well-formed: the call's span continues that trace.
    pub trace_context: Option<TraceContext>,
    /// Whether the request is of MCP 2026-07-28 or later, where a question to the user (or the
    /// client's model, or its roots) ends the request with an input-required result and the
    /// client sends it again with the answers, instead of a request on the connection.
    pub multi_round_trip: bool,
    /// The answers the client sent with the request (`inputResponses`), by the key of the
    /// question each answers.
    pub input_responses: Option<InputResponses>,
    /// The `requestState` the server sealed in the round before, echoed by the client.
    pub request_state: Option<String>,
}

impl Default for RequestInfo {
    fn default() -> RequestInfo {
        RequestInfo {
            session_id: None,
            client: None,
            client_capabilities: None,
            cancellation: CancellationToken::new(),
            extensions: Extensions::default(),
            peer: None,
            peer_accepts_requests: false,
            progress_token: None,
            caller: Caller::Anonymous,
            client_address: None,
            idempotency_key: None,
            log_level: None,
            trace_context: None,
            multi_round_trip: false,
            input_responses: None,
            request_state: None,
        }
    }
}

impl RequestInfo {
    /// What rmcp's request context says about the request, and, over HTTP, what the request's
    /// headers say (its session, its caller).
    pub(crate) fn from_context(context: RequestContext<RoleServer>) -> RequestInfo {
        #[allow(unused_mut)]
        let mut info = RequestInfo {
            session_id: None,
            client: context.client_info(),
            client_capabilities: context.client_capabilities(),
            cancellation: context.ct.clone(),
            extensions: Extensions::default(),
            peer: Some(context.peer.clone()),
            peer_accepts_requests: true,
            progress_token: context.meta.get_progress_token(),
            caller: Caller::Anonymous,
            client_address: None,
            idempotency_key: context.meta.get(IDEMPOTENCY_KEY_META).cloned(),
            // Before 2026-07-28 the session's level counts (`logging/setLevel`), not the key.
            log_level: if sessionless(&context) { context.meta.log_level() } else { None },
            trace_context: context.meta.get_traceparent().and_then(|traceparent| {
                let baggage = context.meta.get("baggage").and_then(serde_json::Value::as_str);
                TraceContext::parse(traceparent, context.meta.get_tracestate(), baggage)
            }),
            multi_round_trip: sessionless(&context),
            input_responses: None,
            request_state: None,
        };
        #[cfg(feature = "http")]
        if let Some(request) = HttpRequest::read(&context.extensions) {
            // Over HTTP without a session (stateless), nothing carries a request to the client.
            info.peer_accepts_requests = request.session_id.is_some();
            info.session_id = request.session_id;
            info.caller = request.caller;
            info.client_address = request.client_address;
        }
        info.extensions = context.extensions;
        info
    }

    /// The request with the answers and the state of a multi round-trip request, as sent; a
    /// request before 2026-07-28 has none (those versions ask over the connection).
    pub(crate) fn answering(mut self, input_responses: Option<InputResponses>, request_state: Option<String>) -> Self {
        if self.multi_round_trip {
            self.input_responses = input_responses;
            self.request_state = request_state;
        }
        self
    }
}

/// Whether the request is of MCP 2026-07-28 or later: no handshake, each request naming its
/// version, capabilities and logging level in its own `_meta`.
pub(crate) fn sessionless(context: &RequestContext<RoleServer>) -> bool {
    context.meta.protocol_version().is_some_and(|version| !version.has_initialize())
}

/// The `_meta` key of a request's logging level (MCP 2026-07-28).
pub(crate) const LOG_LEVEL_META: &str = "io.modelcontextprotocol/logLevel";

/// Refuses a request whose `_meta` logging level is not one of MCP's eight, as the protocol
/// asks (invalid params), saying which are.
pub(crate) fn checked_log_level(context: &RequestContext<RoleServer>) -> Result<(), rmcp::ErrorData> {
    match context.meta.get(LOG_LEVEL_META) {
        Some(sent) if sessionless(context) && context.meta.log_level().is_none() => {
            Err(rmcp::ErrorData::invalid_params(
                format!(
                    "Invalid params: _meta[\"{LOG_LEVEL_META}\"] is {}, not a logging level; send one of debug, info, notice, warning, error, critical, alert, emergency",
                    mcp_fusion_wire::Sent::value(sent)
                ),
                None,
            ))
        }
        _ => Ok(()),
    }
}

/// A session the transport issued and holds, named by the request: what a call sees as its
/// session.
#[derive(Debug, Clone)]
#[cfg(feature = "http")]
pub(crate) struct IssuedSession(pub Arc<str>);

#[cfg(feature = "http")]
/// The address of the client that sent a request: the connection's peer, or what the
/// configured proxy header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClientAddress(pub IpAddr);

/// Left on an HTTP request by the bearer check when lists are shown per caller: `tools/list`,
/// `prompts/list`, `resources/list` and the templates then show what the caller may use.
#[derive(Debug, Clone, Copy)]
#[cfg(feature = "http")]
pub(crate) struct ListsPerCaller;

/// The caller a list is made for, when the transport shows lists per caller (`None`: the
/// whole list).
pub(crate) fn list_caller(context: &RequestContext<RoleServer>) -> Option<Caller> {
    #[cfg(feature = "http")]
    if let Some(parts) = context.extensions.get::<http::request::Parts>()
        && parts.extensions.get::<ListsPerCaller>().is_some()
    {
        return Some(parts.extensions.get::<Caller>().cloned().unwrap_or(Caller::Anonymous));
    }
    let _ = context;
    None
}

#[cfg(feature = "http")]
/// The facts of an HTTP request that reach a call.
pub(crate) struct HttpRequest {
    /// The session the request belongs to, when the transport issued it and holds it.
    pub session_id: Option<Arc<str>>,
    /// The verdict of the authenticator, left in the request's extensions; anonymous when
    /// none is configured.
    pub caller: Caller,
    /// The client's address, when the server knows it.
    pub client_address: Option<IpAddr>,
}

#[cfg(feature = "http")]
impl HttpRequest {
    /// The facts of the HTTP request rmcp attached to a request context (`None` when the
    /// request did not come over HTTP).
    pub(crate) fn read(extensions: &Extensions) -> Option<HttpRequest> {
        let parts = extensions.get::<http::request::Parts>()?;
        // The session the endpoint found live, never the header as sent: on a request outside
        // a session (stateless, or 2026-07-28's session-less requests) any client can write it.
        let session_id = issued_session(extensions);
        let caller = parts.extensions.get::<Caller>().cloned().unwrap_or(Caller::Anonymous);
        let client_address = parts.extensions.get::<ClientAddress>().map(|address| address.0);
        Some(HttpRequest { session_id, caller, client_address })
    }
}

/// The session the endpoint issued and found live for the HTTP request rmcp attached to
/// `extensions`, never the header as sent.
#[cfg(feature = "http")]
pub(crate) fn issued_session(extensions: &Extensions) -> Option<Arc<str>> {
    let parts = extensions.get::<http::request::Parts>()?;
    parts.extensions.get::<IssuedSession>().map(|session| Arc::clone(&session.0))
}
