//! POST bodies read as JSON-RPC: a body that is not a message MCP knows gets `400` with a
//! JSON-RPC error under its own id (found by a scan when the decoder fails), a request
//! whose id is already in flight in its session is refused rather than run twice and answered
//! once, and a `subscriptions/listen` request for more URIs than one listen may hold is
//! refused `-32602` from a scan, before rmcp decodes it and matches its URIs pairwise.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::Response;
use mcp_fusion_wire::echo;
use rmcp::model::{ClientJsonRpcMessage, RequestId};
use serde::de::IgnoredAny;

use crate::subscriptions::SubscriptionLimits;
use crate::transport::jsonrpc::{self, INVALID_PARAMS, INVALID_REQUEST, Id};

/// The request ids in flight per session, the largest body read, and the most URIs one
/// listen request may ask for.
#[derive(Debug)]
pub(super) struct Frames {
    max_body_bytes: usize,
    limits: SubscriptionLimits,
    ids_in_flight: Mutex<HashSet<(Box<str>, Box<str>)>>,
}

impl Frames {
    pub(super) fn new(max_body_bytes: usize, limits: SubscriptionLimits) -> Arc<Frames> {
        Arc::new(Frames { max_body_bytes, limits, ids_in_flight: Mutex::default() })
    }

    /// The refusal of a listen request for more URIs than one listen may hold: `200`, as for
    /// any JSON-RPC error of a request that was read.
    fn refuse_large_listen(&self, bytes: &[u8]) -> Option<Response> {
        let start = bytes.len() - bytes.trim_ascii_start().len();
        let object = bytes.get(start..).filter(|object| object.first() == Some(&b'{'))?;
        let head = jsonrpc::head(object);
        let found = jsonrpc::listen_uris(object, &head).filter(|&found| found > self.limits.uris_per_listen())?;
        let id = &object[head.id.echo()?];
        tracing::warn!(id = %String::from_utf8_lossy(id), found, "refused a listen request for too many URIs");
        let reply = jsonrpc::error_reply(Some(id), INVALID_PARAMS, &self.limits.too_many_for_one_listen(found));
        let mut response = json_error(reply);
        *response.status_mut() = http::StatusCode::OK;
        Some(response)
    }
}

/// Removes a request's id from the ids in flight when its response has been sent (or dropped).
pub(super) struct Release {
    frames: Arc<Frames>,
    key: (Box<str>, Box<str>),
}

impl Drop for Release {
    fn drop(&mut self) {
        self.frames.ids_in_flight.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.key);
    }
}

/// A POST body read as JSON-RPC, kept until its answer is known.
pub(super) struct Framed {
    bytes: Bytes,
    /// Holds the request's id in flight until the response has been sent.
    pub(super) release: Option<Release>,
}

/// Whether [`read`] reads `request`'s body: a JSON POST. Anything else rmcp answers itself
/// (405, 415 for a body that is not JSON).
pub(super) fn reads(request: &Request) -> bool {
    request.method() == http::Method::POST && is_json(request)
}

/// Reads a JSON POST body: `413` beyond the size limit, and a request whose id is already in
/// flight in its session refused with `400`. The body is not decoded whole here: rmcp does
/// that, and [`Framed::refuse_undecodable`] words its refusal.
pub(super) async fn read(frames: &Arc<Frames>, request: Request) -> Result<(Request, Framed), Response> {
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, frames.max_body_bytes).await else {
        let mut response = Response::new(Body::from("Payload Too Large: the body is larger than this server accepts"));
        *response.status_mut() = http::StatusCode::PAYLOAD_TOO_LARGE;
        return Err(response);
    };
    if let Some(refused) = frames.refuse_large_listen(&bytes) {
        return Err(refused);
    }
    let session = parts.headers.get("mcp-session-id").and_then(|value| value.to_str().ok());
    // Only a request in a session can collide with another in flight: the id is read then.
    let release = match session.and_then(|session| Some((session, id_as_json(&bytes)?))) {
        Some((session, id)) => {
            let key: (Box<str>, Box<str>) = (session.into(), id.as_str().into());
            let admitted = frames.ids_in_flight.lock().unwrap_or_else(PoisonError::into_inner).insert(key.clone());
            if !admitted {
                let message =
                    format!("Invalid request: id {id} is already in use by a request in flight; use a new id");
                return Err(json_error(jsonrpc::error_reply(Some(id.as_bytes()), INVALID_REQUEST, &message)));
            }
            Some(Release { frames: Arc::clone(frames), key })
        }
        None => None,
    };
    let framed = Framed { bytes: bytes.clone(), release };
    Ok((Request::from_parts(parts, Body::from(bytes)), framed))
}

/// The id of a request (a message with both a method and an id) as JSON — the number 5 and
/// the string "5" are two ids — read without decoding its params.
fn id_as_json(bytes: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Head {
        id: Option<RequestId>,
        method: Option<IgnoredAny>,
    }
    let head = serde_json::from_slice::<Head>(bytes).ok()?;
    head.method?;
    serde_json::to_string(&head.id?).ok()
}

impl Framed {
    /// rmcp answers a body it cannot decode with a bare `415`; this answers `400` with the
    /// JSON-RPC error instead, under the body's own id (found by a scan).
    pub(super) fn refuse_undecodable(&self, response: Response) -> Response {
        if response.status() != http::StatusCode::UNSUPPORTED_MEDIA_TYPE {
            return response;
        }
        match serde_json::from_slice::<ClientJsonRpcMessage>(&self.bytes) {
            Err(error) => refuse(&self.bytes, &error),
            Ok(_) => response,
        }
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
    tracing::warn!("refused an HTTP body that is not a JSON-RPC message: {}", echo(&message));
    json_error(jsonrpc::error_reply(id.echo().map(|range| &bytes[range]), code, &message))
}

fn json_error(body: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = http::StatusCode::BAD_REQUEST;
    response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    response
}
