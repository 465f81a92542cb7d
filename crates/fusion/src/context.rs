//! What a handler and a middleware know about the call they serve.

use std::sync::{Arc, Mutex};

use mcp_fusion_wire::ToolError;
use rmcp::model::{Extensions, Implementation};
use tokio_util::sync::CancellationToken;

/// Facts about one tool call: which action, from which session and client, with what
/// transport extensions, and the warnings collected on the way.
#[derive(Debug)]
pub struct CallInfo {
    pub(crate) action: Arc<str>,
    pub(crate) session_id: Option<Arc<str>>,
    pub(crate) client: Option<Implementation>,
    pub(crate) cancellation: CancellationToken,
    pub(crate) extensions: Extensions,
    pub(crate) warnings: Mutex<Vec<ToolError>>,
}

impl CallInfo {
    pub(crate) fn new(action: Arc<str>, request: RequestInfo) -> CallInfo {
        CallInfo {
            action,
            session_id: request.session_id,
            client: request.client,
            cancellation: request.cancellation,
            extensions: request.extensions,
            warnings: Mutex::new(Vec::new()),
        }
    }

    /// The qualified action (`billing.get_invoice`).
    pub fn action(&self) -> &str {
        &self.action
    }

    /// The session, when the transport has one (the `mcp-session-id` of stateful HTTP).
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The client, as it introduced itself at `initialize`.
    pub fn client(&self) -> Option<&Implementation> {
        self.client.as_ref()
    }

    /// Fires when the client cancels the call.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// What the transport attached to the request (over HTTP: `http::request::Parts`).
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// Adds a warning to the result: it travels as a further text block of a successful
    /// result (`isError: false`).
    pub fn warn(&self, warning: ToolError) {
        self.warnings.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(warning.warning());
    }

    pub(crate) fn take_warnings(&self) -> Vec<ToolError> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }
}

/// What the transport knows about a request, before routing.
#[derive(Debug, Default, Clone)]
pub struct RequestInfo {
    /// The session, when the transport has one.
    pub session_id: Option<Arc<str>>,
    /// The client, as it introduced itself.
    pub client: Option<Implementation>,
    /// Fires when the client cancels the request.
    pub cancellation: CancellationToken,
    /// What the transport attached to the request.
    pub extensions: Extensions,
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

    /// Adds a warning to the successful result (see [`CallInfo::warn`]).
    pub fn warn(&self, warning: ToolError) {
        self.call.warn(warning);
    }
}
