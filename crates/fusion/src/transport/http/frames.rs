//! POST bodies read as JSON-RPC: a body that is not a message MCP knows gets `400` with a
//! JSON-RPC error under its own id (found by a scan when the decoder fails), a request
//! whose id is already in flight in its session is refused rather than run twice and answered
//! once, a `subscriptions/listen` request for more URIs than one listen may hold is
//! refused `-32602` from a scan, before rmcp decodes it and matches its URIs pairwise, so are
//! (for a server that serves skills) a `skills/get` whose URI is no `SKILL.md`'s, which rmcp
//! would echo whole and unescaped, and a `skills/list` whose `cursor` is neither a string nor
//! `null`, which rmcp would read as none; and a request of MCP 2025-11-25's experimental
//! tasks, in a session the [`SessionLayer`] found speaking them, goes on under the method the
//! server serves it under.
//!
//! [`SessionLayer`]: super::SessionLayer

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::Response;
use futures_util::future::{BoxFuture, Either};
use mcp_fusion_wire::echo;
use rmcp::model::{ClientJsonRpcMessage, RequestId};
use serde::de::IgnoredAny;
use tower_layer::Layer;
use tower_service::Service;

use super::check::{hold, take_ready};
use super::step_up::StepUp;
use super::{HttpConfig, ScopeRefusal};
use crate::auth::Caller;
use crate::server::FusionServer;
use crate::server::skills::SkillsServed;
use crate::subscriptions::SubscriptionLimits;
use crate::task::experimental::ExperimentalTasks;
use crate::transport::jsonrpc::{self, INVALID_PARAMS, INVALID_REQUEST, Id};

/// The request ids in flight per session, the largest body read, the most URIs one listen
/// request may ask for, and the skills served.
#[derive(Debug)]
pub(super) struct Frames {
    max_body_bytes: usize,
    limits: SubscriptionLimits,
    /// The skills the server serves, if any: the skills requests rmcp would answer amiss are
    /// refused here.
    skills: Option<SkillsServed>,
    ids_in_flight: Mutex<HashSet<(Box<str>, Box<str>)>>,
    /// Asks for the scopes a request needs and its token lacks, when so configured.
    step_up: Option<StepUp>,
}

impl Frames {
    pub(super) fn new(
        max_body_bytes: usize,
        limits: SubscriptionLimits,
        skills: Option<SkillsServed>,
        step_up: Option<StepUp>,
    ) -> Arc<Frames> {
        Arc::new(Frames { max_body_bytes, limits, skills, ids_in_flight: Mutex::default(), step_up })
    }

    /// The `-32602` refusal of what the server would refuse and rmcp would answer amiss, from
    /// a scan of the body: a listen request for more URIs than one listen may hold, a skills
    /// request [`jsonrpc::skills_refusal`] refuses. `200`, as for any JSON-RPC error of a
    /// request that was read.
    fn refuse_before_rmcp(&self, bytes: &[u8]) -> Option<Response> {
        let object = object_in(bytes)?;
        let head = jsonrpc::head(object);
        let id = &object[head.id.echo()?];
        let message = if let Some(found) =
            jsonrpc::listen_uris(object, &head).filter(|&found| found > self.limits.uris_per_listen())
        {
            tracing::warn!(id = %String::from_utf8_lossy(id), found, "refused a listen request for too many URIs");
            self.limits.too_many_for_one_listen(found)
        } else {
            let message = jsonrpc::skills_refusal(object, &head, self.skills?)?;
            tracing::warn!(id = %echo(&String::from_utf8_lossy(id)), "refused a skills request: {message}");
            message
        };
        let mut response = json_error(jsonrpc::error_reply(Some(id), INVALID_PARAMS, &message));
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
    if let Some(refused) = frames.refuse_before_rmcp(&bytes) {
        return Err(refused);
    }
    if let Some(step_up) = &frames.step_up
        && let Some(refused) = step_up.refuse(parts.extensions.get::<Caller>(), &bytes)
    {
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
    // A session of MCP 2025-11-25's experimental tasks: its requests of that form are served
    // under methods of their own (after the checks above, which read them as sent).
    let bytes = match experimental_tasks(&parts, &bytes) {
        Some(renamed) => Bytes::from(renamed),
        None => bytes,
    };
    let framed = Framed { bytes: bytes.clone(), release };
    Ok((Request::from_parts(parts, Body::from(bytes)), framed))
}

/// The body of a request in a session whose client speaks the experimental tasks, renamed to
/// the method it is served under when it is one of that form's.
fn experimental_tasks(parts: &http::request::Parts, bytes: &[u8]) -> Option<Vec<u8>> {
    parts.extensions.get::<ExperimentalTasks>()?;
    let object = object_in(bytes)?;
    jsonrpc::served_experimental(object, &jsonrpc::head(object))
}

/// The JSON object a body holds, from its first byte past any whitespace.
pub(super) fn object_in(bytes: &[u8]) -> Option<&[u8]> {
    let start = bytes.len() - bytes.trim_ascii_start().len();
    bytes.get(start..).filter(|object| object.first() == Some(&b'{'))
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

/// Reads a JSON POST body as JSON-RPC before MCP does: `413` beyond the size limit, `-32602`
/// for a `subscriptions/listen` over the server's URIs per listen and for a `skills/get` or
/// `skills/list` rmcp would answer amiss (a URI that is no `SKILL.md`'s, a cursor that is no
/// string; for a server that serves skills), `403 insufficient_scope`
/// for a request whose token lacks a scope its entry needs (with an authenticator and
/// [`ScopeRefusal::StepUp`]), `400` for an id already in flight in its session, and `400` with
/// the JSON-RPC error (under the body's own id) for a body that is no message MCP knows.
/// Other requests pass as they are.
///
/// ```
/// use axum::Router;
/// use mcp_fusion::http::{FramingLayer, HttpConfig, McpEndpoint};
/// use tokio_util::sync::CancellationToken;
/// # fn app(server: mcp_fusion::FusionServer) -> Router {
/// let config = HttpConfig::new("127.0.0.1:8080").max_body_bytes(64 << 10);
/// let framing = FramingLayer::new(&server, &config);
/// let mcp = McpEndpoint::new(server, &config, CancellationToken::new());
/// Router::new().nest_service("/mcp", tower::Layer::layer(&framing, mcp))
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct FramingLayer {
    frames: Arc<Frames>,
}

impl FramingLayer {
    /// Bodies up to the configured size, listens up to `server`'s subscription limits, skills
    /// requests checked against the skills it serves.
    pub fn new(server: &FusionServer, config: &HttpConfig) -> FramingLayer {
        let step_up =
            (config.authenticator.is_some() && config.scope_refusal == ScopeRefusal::StepUp).then(|| StepUp {
                server: server.clone(),
                resource_metadata: config.protected_resource.as_ref().map(|resource| resource.metadata_url().into()),
            });
        FramingLayer {
            frames: Frames::new(config.max_body_bytes, server.subscription_limits(), server.served_skills(), step_up),
        }
    }
}

impl<S> Layer<S> for FramingLayer {
    type Service = Framing<S>;

    fn layer(&self, inner: S) -> Framing<S> {
        Framing { inner, frames: Arc::clone(&self.frames) }
    }
}

/// The service of [`FramingLayer`].
#[derive(Debug, Clone)]
pub struct Framing<S> {
    inner: S,
    frames: Arc<Frames>,
}

impl<S> Service<Request> for Framing<S>
where
    S: Service<Request, Response = Response> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Either<BoxFuture<'static, Result<Response, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if !reads(&request) {
            return Either::Right(self.inner.call(request));
        }
        let mut inner = take_ready(&mut self.inner);
        let frames = Arc::clone(&self.frames);
        Either::Left(Box::pin(async move {
            let (request, framed) = match read(&frames, request).await {
                Ok(read) => read,
                Err(refused) => return Ok(refused),
            };
            let response = framed.refuse_undecodable(inner.call(request).await?);
            Ok(match framed.release {
                Some(release) => hold(response, release),
                None => response,
            })
        }))
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use tower::ServiceExt as _;

    use super::*;
    use crate::subscriptions::SubscriptionLimits;
    use crate::transport::http::testing::*;

    #[tokio::test]
    async fn the_framing_layer_refuses_bodies_it_cannot_read() {
        // What rmcp answers a body it cannot decode.
        let inner = tower::service_fn(|_request: Request| async {
            let mut response = Response::new(Body::empty());
            *response.status_mut() = http::StatusCode::UNSUPPORTED_MEDIA_TYPE;
            Ok::<_, Infallible>(response)
        });
        let framing = FramingLayer { frames: Frames::new(64, SubscriptionLimits::default(), None, None) };
        let large = post("[]").body(Body::from(vec![b' '; 65])).unwrap();
        let response = framing.layer(inner).oneshot(large).await.unwrap();
        assert_eq!(response.status(), http::StatusCode::PAYLOAD_TOO_LARGE);
        let garbled = r#"{"jsonrpc":"2.0","id":7,"method":5}"#;
        let response = framing.layer(inner).oneshot(post(garbled).body(Body::from(garbled)).unwrap()).await.unwrap();
        assert_eq!(response.status(), http::StatusCode::BAD_REQUEST);
        let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        let reply: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(reply["id"], 7, "{reply}");
        // A request that is not a JSON POST reaches the service as it is.
        let response = framing.layer(inner).oneshot(get("/mcp").body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(response.status(), http::StatusCode::UNSUPPORTED_MEDIA_TYPE);
    }

    #[tokio::test]
    async fn the_framing_layer_refuses_an_id_in_flight_in_its_session() {
        let ok = tower::service_fn(|_request: Request| async { Ok::<_, Infallible>(Response::new(Body::from("ok"))) });
        let mut framing =
            FramingLayer { frames: Frames::new(1024, SubscriptionLimits::default(), None, None) }.layer(ok);
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        let in_session = || post(call).header("mcp-session-id", "s1").body(Body::from(call)).unwrap();
        let first = framing.call(in_session()).await.unwrap();
        let again = framing.call(in_session()).await.unwrap();
        assert_eq!(again.status(), http::StatusCode::BAD_REQUEST);
        // The id is free again once the first response has been sent.
        drop(first);
        assert_eq!(framing.call(in_session()).await.unwrap().status(), http::StatusCode::OK);
    }
}
