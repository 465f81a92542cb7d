//! POST bodies read as JSON-RPC before rmcp sees them: a body that is not a message MCP knows
//! gets `400` with a JSON-RPC error under its own id (found by a scan when the decoder fails),
//! and a request whose id is already in flight in its session is refused rather than run twice
//! and answered once.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use futures_util::StreamExt as _;
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage};

use crate::transport::jsonrpc::{self, INVALID_REQUEST, Id};

/// The request ids in flight per session, and the largest body read.
#[derive(Debug)]
pub(super) struct Frames {
    max_body_bytes: usize,
    in_flight: Mutex<HashSet<(Box<str>, Box<str>)>>,
}

impl Frames {
    pub(super) fn new(max_body_bytes: usize) -> Arc<Frames> {
        Arc::new(Frames { max_body_bytes, in_flight: Mutex::default() })
    }
}

/// Removes a request's id from the ids in flight when its response has been sent (or dropped).
struct Release {
    frames: Arc<Frames>,
    key: (Box<str>, Box<str>),
}

impl Drop for Release {
    fn drop(&mut self) {
        self.frames.in_flight.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.key);
    }
}

/// Checks a JSON POST body as JSON-RPC; see the module's documentation.
pub(super) async fn check(State(frames): State<Arc<Frames>>, request: Request, next: Next) -> Response {
    if request.method() != http::Method::POST || !is_json(&request) {
        // Anything else rmcp answers itself (405, 415 for a body that is not JSON).
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, frames.max_body_bytes).await else {
        let mut response = Response::new(Body::from("Payload Too Large: the body is larger than this server accepts"));
        *response.status_mut() = http::StatusCode::PAYLOAD_TOO_LARGE;
        return response;
    };
    let message = match serde_json::from_slice::<ClientJsonRpcMessage>(&bytes) {
        Ok(message) => message,
        Err(error) => return refuse(&bytes, &error),
    };
    let session = parts.headers.get("mcp-session-id").and_then(|value| value.to_str().ok());
    let release = match (session, &message) {
        (Some(session), JsonRpcMessage::Request(request)) => {
            // The id as JSON: the number 5 and the string "5" are two ids.
            let id = serde_json::to_string(&request.id).unwrap_or_default();
            let key: (Box<str>, Box<str>) = (session.into(), id.as_str().into());
            let admitted = frames.in_flight.lock().unwrap_or_else(PoisonError::into_inner).insert(key.clone());
            if !admitted {
                let message =
                    format!("Invalid request: id {id} is already in use by a request in flight; use a new id");
                return json_error(jsonrpc::error_reply(Some(id.as_bytes()), INVALID_REQUEST, &message));
            }
            Some(Release { frames: Arc::clone(&frames), key })
        }
        _ => None,
    };
    let response = next.run(Request::from_parts(parts, Body::from(bytes))).await;
    match release {
        None => response,
        Some(release) => response.map(|body| {
            Body::from_stream(body.into_data_stream().map(move |chunk| {
                let _held_until_the_body_ends = &release;
                chunk
            }))
        }),
    }
}

fn is_json(request: &Request) -> bool {
    let Some(value) = request.headers().get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    value.split(';').next().is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// `400` with the JSON-RPC error for a body the decoder refused, under the id the scan finds.
fn refuse(bytes: &[u8], error: &serde_json::Error) -> Response {
    let id = jsonrpc::request_id(bytes);
    let (code, message) = match &id {
        Id::Number(range) if !jsonrpc::is_plain_i64(&bytes[range.clone()]) => (
            INVALID_REQUEST,
            format!(
                "Invalid request: the id {} is not an integer of 64 bits; use a string or a smaller integer",
                String::from_utf8_lossy(&bytes[range.clone()])
            ),
        ),
        _ => jsonrpc::refusal(error),
    };
    tracing::warn!("refused an HTTP body that is not a JSON-RPC message: {message}");
    json_error(jsonrpc::error_reply(id.echo().map(|range| &bytes[range]), code, &message))
}

fn json_error(body: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = http::StatusCode::BAD_REQUEST;
    response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    response
}
