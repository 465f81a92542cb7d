//! The HTTP answers given before a request reaches MCP: what was wrong, in the status and in
//! a body a client can show (a JSON-RPC error where a JSON-RPC client waits for one).

use axum::body::Body;
use axum::response::Response;
use serde_json::{Value, json};

/// A JSON-RPC error answered with an HTTP status (`id` null when the request's is unknown).
pub(super) fn jsonrpc_error(status: http::StatusCode, id: Value, code: i64, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    response
}

/// The server or the caller holds as many sessions as it may: try again in a while.
pub(super) fn busy(status: http::StatusCode, message: &str) -> Response {
    let mut response = jsonrpc_error(status, Value::Null, -32000, message);
    response.headers_mut().insert(http::header::RETRY_AFTER, http::HeaderValue::from_static("30"));
    response
}

/// What rmcp answers for a session it does not hold, so that another caller's session and a
/// session that does not exist cannot be told apart.
pub(super) fn session_not_found() -> Response {
    let mut response = Response::new(Body::from("Not Found: Session not found"));
    *response.status_mut() = http::StatusCode::NOT_FOUND;
    response
}

/// A path where nothing is served.
pub(super) fn not_found() -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = http::StatusCode::NOT_FOUND;
    response
}

/// A request this server will not read: `400`, and the connection closed after it.
pub(super) fn bad_request(reason: &str) -> Response {
    let mut response = Response::new(Body::from(format!("Bad Request: {reason}")));
    *response.status_mut() = http::StatusCode::BAD_REQUEST;
    response.headers_mut().insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
    response
}

/// `401` with the `WWW-Authenticate` challenge of RFC 6750; `error` is its error code, absent
/// when no credentials were sent; `metadata` the URL of the protected resource's metadata
/// (RFC 9728), when the server publishes it.
pub(super) fn unauthorized(error: Option<&str>, description: &str, metadata: Option<&str>) -> Response {
    let mut response = Response::new(Body::from(format!("401 Unauthorized: {description}.")));
    *response.status_mut() = http::StatusCode::UNAUTHORIZED;
    let mut challenge = match error {
        Some(error) => format!(r#"Bearer error="{error}", error_description="{description}""#),
        None => r#"Bearer realm="mcp""#.to_owned(),
    };
    if let Some(metadata) = metadata {
        challenge.push_str(&format!(r#", resource_metadata="{metadata}""#));
    }
    if let Ok(challenge) = http::HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(http::header::WWW_AUTHENTICATE, challenge);
    }
    response
}

/// `403` with the step-up challenge of RFC 6750 §3.1: `scopes` are those the request needs, so
/// the client can have the user grant them and retry; `metadata` as for [`unauthorized`].
pub(super) fn insufficient_scope(scopes: &[String], description: &str, metadata: Option<&str>) -> Response {
    let mut response = Response::new(Body::from(format!("403 Forbidden: {description}.")));
    *response.status_mut() = http::StatusCode::FORBIDDEN;
    let scope = scopes.join(" ");
    let mut challenge =
        format!(r#"Bearer error="insufficient_scope", scope="{scope}", error_description="{description}""#);
    if let Some(metadata) = metadata {
        challenge.push_str(&format!(r#", resource_metadata="{metadata}""#));
    }
    if let Ok(challenge) = http::HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(http::header::WWW_AUTHENTICATE, challenge);
    }
    response
}
