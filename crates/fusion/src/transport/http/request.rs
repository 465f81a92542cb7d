//! What an HTTP request says about a call: its session and its caller.

use std::sync::Arc;

use rmcp::model::Extensions;

use crate::auth::Caller;

/// The facts of an HTTP request that reach a call.
pub(crate) struct HttpRequest {
    /// The `mcp-session-id` header, when the request belongs to a session.
    pub session_id: Option<Arc<str>>,
    /// The verdict of the authenticator, left in the request's extensions; anonymous when
    /// none is configured.
    pub caller: Caller,
}

impl HttpRequest {
    /// The facts of the HTTP request rmcp attached to a request context (`None` when the
    /// request did not come over HTTP).
    pub(crate) fn read(extensions: &Extensions) -> Option<HttpRequest> {
        let parts = extensions.get::<http::request::Parts>()?;
        let session_id = parts.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(Arc::from);
        let caller = parts.extensions.get::<Caller>().cloned().unwrap_or(Caller::Anonymous);
        Some(HttpRequest { session_id, caller })
    }
}
