//! The endpoint's checks as tower layers, each usable alone in an axum app.
//!
//! Each layer's service is a concrete generic type over the service it wraps: no boxed
//! service stacks. A check that answers at once or passes the request on costs no allocation;
//! one that must wait (a token's verdict, a body read) or see the response boxes one future.
//! The layers' state sits behind `Arc`, so cloning a stack clones pointers.
//!
//! A check that refuses answers itself; one that learns something about the request leaves it
//! in the request's extensions for the checks and the calls after it: the
//! [`ClientAddressLayer`] the client's address, the [`BearerAuthLayer`] the
//! [`Caller`](crate::auth::Caller), the [`SessionLayer`] the session a call counts as.

use std::convert::Infallible;
use std::future::{Ready, ready};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::Response;
use futures_util::future::{BoxFuture, Either};
use mcp_fusion_wire::echo;
use tokio_util::sync::CancellationToken;
use tower_layer::Layer;
use tower_service::Service;

use super::bearer::Gate;
use super::frames::Frames;
use super::sessions::Registry;
use super::{HttpConfig, McpService, bearer, frames, rebinding, refusal, request, service_with, sessions, strict};
use crate::auth::Authenticator;
use crate::in_flight::InFlight;
use crate::server::FusionServer;

/// An answer given at once, or the wrapped service's.
type AtOnce<F, E> = Either<Ready<Result<Response, E>>, F>;

fn at_once<F, E>(response: Response) -> AtOnce<F, E> {
    Either::Left(ready(Ok(response)))
}

/// The wrapped service, ready, taken out of `slot` for a future that outlives the call; a
/// clone takes its place.
fn take_ready<S: Clone>(slot: &mut S) -> S {
    let clone = slot.clone();
    std::mem::replace(slot, clone)
}

/// The endpoint [`router`](super::router) and [`service`](super::service) serve: rmcp behind
/// every check, in their order.
pub type CheckedEndpoint =
    CountResponses<StrictRequest<ResolveClientAddress<BearerAuth<SessionCheck<Framing<McpEndpoint>>>>>>;

/// Builds the checked endpoint, counting POST responses in `responses` when given.
pub(super) fn checked(
    server: FusionServer,
    config: &HttpConfig,
    sessions: CancellationToken,
    responses: Option<ResponsesInFlight>,
) -> CheckedEndpoint {
    let session_layer = SessionLayer::new(config);
    let framing = FramingLayer::new(&server, config);
    let mcp = session_layer.endpoint(server, config, sessions);
    let gate = config.authenticator.as_ref().map(|authenticator| Gate {
        authenticator: Arc::clone(authenticator),
        allow_anonymous: config.allow_anonymous,
    });
    let stack = framing.layer(mcp);
    let stack = session_layer.layer(stack);
    let stack = BearerAuthLayer { gate: gate.map(Arc::new) }.layer(stack);
    let stack = ClientAddressLayer::new(config).layer(stack);
    let stack = StrictRequestLayer::new(config).layer(stack);
    ResponseCountLayer { responses }.layer(stack)
}

/// rmcp's MCP endpoint as a tower service over axum bodies, reached through a shared reference.
///
/// rmcp's own service clones its configuration on every request when called as a tower
/// service; this one costs an `Arc` clone. It is the service the other layers wrap in
/// [`router`](super::router); build it with [`SessionLayer::endpoint`] when sessions are
/// checked, so that the layer knows the sessions rmcp holds.
#[derive(Clone)]
pub struct McpEndpoint(Arc<McpService>);

impl McpEndpoint {
    /// The endpoint for `server`, its sessions tracked for no [`SessionLayer`]; cancelling
    /// `sessions` ends every session and open stream.
    pub fn new(server: FusionServer, config: &HttpConfig, sessions: CancellationToken) -> McpEndpoint {
        SessionLayer::new(config).endpoint(server, config, sessions)
    }
}

impl Service<Request> for McpEndpoint {
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let mcp = Arc::clone(&self.0);
        Box::pin(async move {
            let delete = request.method() == http::Method::DELETE;
            let mut response = mcp.handle(request).await.map(Body::new);
            // rmcp answers a session `DELETE` with `202 Accepted`; the session is gone by then,
            // and some clients (the Python SDK) accept only `200`/`204` there and log a failure
            // otherwise.
            if delete && response.status() == http::StatusCode::ACCEPTED {
                *response.status_mut() = http::StatusCode::NO_CONTENT;
            }
            Ok(response)
        })
    }
}

/// Refuses with `400` (and the connection closed) a request that proxies and this server
/// could read differently: both body framings, two `Host` headers, an absolute-form target
/// naming a host not served.
///
/// ```
/// use axum::{Router, routing::post};
/// use mcp_fusion::http::{HttpConfig, StrictRequestLayer};
///
/// let config = HttpConfig::new("127.0.0.1:8080".parse().unwrap());
/// let app: Router = Router::new().route("/hook", post(|| async { "ok" })).layer(StrictRequestLayer::new(&config));
/// ```
#[derive(Debug, Clone)]
pub struct StrictRequestLayer {
    hosts: Arc<[String]>,
}

impl StrictRequestLayer {
    /// Checks absolute-form targets against the configured hosts.
    pub fn new(config: &HttpConfig) -> StrictRequestLayer {
        StrictRequestLayer { hosts: config.hosts().into() }
    }
}

impl<S> Layer<S> for StrictRequestLayer {
    type Service = StrictRequest<S>;

    fn layer(&self, inner: S) -> StrictRequest<S> {
        StrictRequest { inner, hosts: Arc::clone(&self.hosts) }
    }
}

/// The service of [`StrictRequestLayer`].
#[derive(Debug, Clone)]
pub struct StrictRequest<S> {
    inner: S,
    hosts: Arc<[String]>,
}

impl<S: Service<Request, Response = Response>> Service<Request> for StrictRequest<S> {
    type Response = Response;
    type Error = S::Error;
    type Future = AtOnce<S::Future, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if let Some(reason) = strict::ambiguity(&request, &self.hosts) {
            tracing::warn!(
                method = %echo(request.method().as_str()),
                uri = %echo(&request.uri().to_string()),
                "refused an HTTP request: {reason}"
            );
            return at_once(refusal::bad_request(reason));
        }
        Either::Right(self.inner.call(request))
    }
}

/// Leaves the client's address in the request for what follows (session owners, calls): from
/// the configured header when it holds one, else the connection's peer. Refuses nothing.
///
/// ```
/// use axum::{Router, routing::get};
/// use mcp_fusion::http::{ClientAddressLayer, HttpConfig};
///
/// let config = HttpConfig::new("127.0.0.1:8080".parse().unwrap())
///     .client_address_header(http::HeaderName::from_static("x-forwarded-for"));
/// let app: Router = Router::new().route("/", get(|| async { "ok" })).layer(ClientAddressLayer::new(&config));
/// ```
#[derive(Debug, Clone)]
pub struct ClientAddressLayer {
    header: Option<Arc<http::HeaderName>>,
}

impl ClientAddressLayer {
    /// Reads the configured header, if any, else the connection's peer.
    pub fn new(config: &HttpConfig) -> ClientAddressLayer {
        ClientAddressLayer { header: config.client_address_header.clone().map(Arc::new) }
    }
}

impl<S> Layer<S> for ClientAddressLayer {
    type Service = ResolveClientAddress<S>;

    fn layer(&self, inner: S) -> ResolveClientAddress<S> {
        ResolveClientAddress { inner, header: self.header.clone() }
    }
}

/// The service of [`ClientAddressLayer`].
#[derive(Debug, Clone)]
pub struct ResolveClientAddress<S> {
    inner: S,
    header: Option<Arc<http::HeaderName>>,
}

impl<S: Service<Request>> Service<Request> for ResolveClientAddress<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> S::Future {
        request::resolve_client_address(self.header.as_deref(), &mut request);
        self.inner.call(request)
    }
}

/// Refuses with `403` a request whose `Host` or `Origin` the configuration does not allow,
/// against DNS rebinding. rmcp applies the same rules inside the MCP endpoint, so
/// [`router`](super::router) needs no such layer; this one guards other routes.
///
/// ```
/// use axum::{Router, routing::get};
/// use mcp_fusion::http::{HostOriginLayer, HttpConfig};
///
/// let config = HttpConfig::new("127.0.0.1:8080".parse().unwrap());
/// let app: Router = Router::new().route("/status", get(|| async { "ok" })).layer(HostOriginLayer::new(&config));
/// ```
#[derive(Debug, Clone)]
pub struct HostOriginLayer {
    lists: Arc<(Vec<String>, Vec<String>)>,
}

impl HostOriginLayer {
    /// Allows the configured hosts and origins.
    pub fn new(config: &HttpConfig) -> HostOriginLayer {
        HostOriginLayer { lists: Arc::new((config.hosts(), config.origins().to_vec())) }
    }
}

impl<S> Layer<S> for HostOriginLayer {
    type Service = HostOrigin<S>;

    fn layer(&self, inner: S) -> HostOrigin<S> {
        HostOrigin { inner, lists: Arc::clone(&self.lists) }
    }
}

/// The service of [`HostOriginLayer`].
#[derive(Debug, Clone)]
pub struct HostOrigin<S> {
    inner: S,
    lists: Arc<(Vec<String>, Vec<String>)>,
}

impl<S: Service<Request, Response = Response>> Service<Request> for HostOrigin<S> {
    type Response = Response;
    type Error = S::Error;
    type Future = AtOnce<S::Future, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let (hosts, origins) = &*self.lists;
        match rebinding::refusal(request.headers(), request.uri(), hosts, origins) {
            Some(refused) => at_once(refused),
            None => Either::Right(self.inner.call(request)),
        }
    }
}

/// Reads `Authorization: Bearer …` with an [`Authenticator`] and leaves its verdict in the
/// request as a [`Caller`](crate::auth::Caller); refuses with `401` and `WWW-Authenticate` a
/// header that is no bearer token and, unless anonymous callers are allowed, a request
/// without an accepted token.
///
/// ```
/// use axum::{Router, routing::post};
/// use mcp_fusion::auth::{Identity, StaticTokens};
/// use mcp_fusion::http::BearerAuthLayer;
///
/// let tokens = StaticTokens::new().token("s3cret", Identity::new("ci"));
/// let app: Router = Router::new().route("/hook", post(|| async { "ok" })).layer(BearerAuthLayer::new(tokens));
/// ```
#[derive(Clone)]
pub struct BearerAuthLayer {
    /// `None` checks nothing: the endpoint of a server without an authenticator.
    gate: Option<Arc<Gate>>,
}

impl BearerAuthLayer {
    /// Checks every request's token with `authenticator`; only accepted tokens pass.
    pub fn new(authenticator: impl Authenticator) -> BearerAuthLayer {
        let gate = Gate { authenticator: Arc::new(authenticator), allow_anonymous: false };
        BearerAuthLayer { gate: Some(Arc::new(gate)) }
    }

    /// Also lets requests without a token, or with a refused one, pass as such callers.
    pub fn allow_anonymous(mut self, allow: bool) -> BearerAuthLayer {
        if let Some(gate) = &mut self.gate {
            Arc::make_mut(gate).allow_anonymous = allow;
        }
        self
    }
}

impl std::fmt::Debug for BearerAuthLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerAuthLayer").field("checks", &self.gate.is_some()).finish_non_exhaustive()
    }
}

impl<S> Layer<S> for BearerAuthLayer {
    type Service = BearerAuth<S>;

    fn layer(&self, inner: S) -> BearerAuth<S> {
        BearerAuth { inner, gate: self.gate.clone() }
    }
}

/// The service of [`BearerAuthLayer`].
#[derive(Clone)]
pub struct BearerAuth<S> {
    inner: S,
    gate: Option<Arc<Gate>>,
}

impl<S> Service<Request> for BearerAuth<S>
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

    fn call(&mut self, mut request: Request) -> Self::Future {
        let Some(gate) = self.gate.clone() else {
            return Either::Right(self.inner.call(request));
        };
        let mut inner = take_ready(&mut self.inner);
        Either::Left(Box::pin(async move {
            if let Err(refused) = bearer::authenticate(&gate, &mut request).await {
                return Ok(refused);
            }
            inner.call(request).await
        }))
    }
}

/// Checks sessions against their owners and caps: a request naming another caller's session
/// gets `404` (as for a session that does not exist), an `initialize` beyond the caps `503`
/// (the server's) or `429` (the caller's). A request naming a live session it may use carries
/// it on, the only session a call counts as. Its sessions are those of the endpoint
/// [`SessionLayer::endpoint`] builds; a stateless configuration checks none.
///
/// Owners come from what the layers before it leave: the [`BearerAuthLayer`]'s identity, else
/// the [`ClientAddressLayer`]'s address.
///
/// ```
/// use axum::Router;
/// use mcp_fusion::http::{ClientAddressLayer, HttpConfig, SessionLayer};
/// use tokio_util::sync::CancellationToken;
/// # fn app(server: mcp_fusion::FusionServer) -> Router {
/// let config = HttpConfig::new("127.0.0.1:8080".parse().unwrap());
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
}

impl SessionLayer {
    /// Sessions capped as configured; none checked when the configuration is stateless.
    pub fn new(config: &HttpConfig) -> SessionLayer {
        SessionLayer { registry: Registry::new(config.limits), checks: !config.is_stateless() }
    }

    /// The MCP endpoint for `server`, whose sessions this layer checks; cancelling `sessions`
    /// ends every session and open stream.
    pub fn endpoint(&self, server: FusionServer, config: &HttpConfig, sessions: CancellationToken) -> McpEndpoint {
        McpEndpoint(Arc::new(service_with(server, config, sessions, Arc::clone(&self.registry))))
    }
}

impl<S> Layer<S> for SessionLayer {
    type Service = SessionCheck<S>;

    fn layer(&self, inner: S) -> SessionCheck<S> {
        SessionCheck { inner, registry: self.checks.then(|| Arc::clone(&self.registry)) }
    }
}

/// The service of [`SessionLayer`].
#[derive(Debug, Clone)]
pub struct SessionCheck<S> {
    inner: S,
    registry: Option<Arc<Registry>>,
}

impl<S> Service<Request> for SessionCheck<S>
where
    S: Service<Request, Response = Response>,
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
        match sessions::admit(registry, &mut request) {
            Err(refused) => at_once(refused),
            Ok(None) => Either::Right(Either::Left(self.inner.call(request))),
            Ok(Some(opening)) => {
                let answer = self.inner.call(request);
                Either::Right(Either::Right(Box::pin(async move {
                    let response = answer.await?;
                    opening.settle(&response);
                    Ok(response)
                })))
            }
        }
    }
}

/// Reads a JSON POST body as JSON-RPC before MCP does: `413` beyond the size limit, `-32602`
/// for a `subscriptions/listen` over the server's URIs per listen, `400` for an id already in
/// flight in its session, and `400` with the JSON-RPC error (under the body's own id) for a
/// body that is no message MCP knows. Other requests pass as they are.
///
/// ```
/// use axum::Router;
/// use mcp_fusion::http::{FramingLayer, HttpConfig, McpEndpoint};
/// use tokio_util::sync::CancellationToken;
/// # fn app(server: mcp_fusion::FusionServer) -> Router {
/// let config = HttpConfig::new("127.0.0.1:8080".parse().unwrap()).max_body_bytes(64 << 10);
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
    /// Bodies up to the configured size, listens up to `server`'s subscription limits.
    pub fn new(server: &FusionServer, config: &HttpConfig) -> FramingLayer {
        FramingLayer { frames: Frames::new(config.max_body_bytes, server.subscription_limits()) }
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
        if !frames::reads(&request) {
            return Either::Right(self.inner.call(request));
        }
        let mut inner = take_ready(&mut self.inner);
        let frames = Arc::clone(&self.frames);
        Either::Left(Box::pin(async move {
            let (request, framed) = match frames::read(&frames, request).await {
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

/// A count of the POST responses not yet sent, for a graceful shutdown to wait on.
#[derive(Debug, Clone, Default)]
pub struct ResponsesInFlight(InFlight);

impl ResponsesInFlight {
    /// How many responses are being answered or sent.
    pub fn count(&self) -> usize {
        self.0.count()
    }

    /// Completes when none is (at once if none is).
    pub async fn idle(&self) {
        self.0.idle().await;
    }
}

/// Counts each POST request in a [`ResponsesInFlight`] until its response has been sent (or
/// dropped): in stateful mode a call's answer leaves on an SSE stream after its handler
/// returned. Refuses nothing.
///
/// ```
/// use axum::{Router, routing::post};
/// use mcp_fusion::http::{ResponseCountLayer, ResponsesInFlight};
///
/// let responses = ResponsesInFlight::default();
/// let app: Router = Router::new().route("/hook", post(|| async { "ok" })).layer(ResponseCountLayer::new(&responses));
/// # async fn drain(responses: ResponsesInFlight) {
/// // At shutdown, once no new connection is accepted:
/// responses.idle().await;
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ResponseCountLayer {
    responses: Option<ResponsesInFlight>,
}

impl ResponseCountLayer {
    /// Counts in `responses`.
    pub fn new(responses: &ResponsesInFlight) -> ResponseCountLayer {
        ResponseCountLayer { responses: Some(responses.clone()) }
    }
}

impl<S> Layer<S> for ResponseCountLayer {
    type Service = CountResponses<S>;

    fn layer(&self, inner: S) -> CountResponses<S> {
        CountResponses { inner, responses: self.responses.clone() }
    }
}

/// The service of [`ResponseCountLayer`].
#[derive(Debug, Clone)]
pub struct CountResponses<S> {
    inner: S,
    responses: Option<ResponsesInFlight>,
}

impl<S> Service<Request> for CountResponses<S>
where
    S: Service<Request, Response = Response>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Either<BoxFuture<'static, Result<Response, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let guard = match &self.responses {
            Some(responses) if request.method() == http::Method::POST => responses.0.enter(),
            _ => return Either::Right(self.inner.call(request)),
        };
        let answer = self.inner.call(request);
        Either::Left(Box::pin(async move { Ok(hold(answer.await?, guard)) }))
    }
}

/// `response` with `held` kept alive until its body has been sent (or dropped).
fn hold<T: Send + Unpin + 'static>(response: Response, held: T) -> Response {
    response.map(|body| Body::new(Holding { body, _held: held }))
}

/// A response body holding what must live until it has been sent: a count of responses in
/// flight, a request's id in its session.
struct Holding<T> {
    body: Body,
    _held: T,
}

impl<T: Send + Unpin + 'static> http_body::Body for Holding<T> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, SocketAddr};

    use axum::Router;
    use axum::extract::ConnectInfo;
    use axum::routing::{Route, any};
    use tower::ServiceExt as _;

    use super::*;
    use crate::auth::{Caller, Identity, StaticTokens};
    use crate::context::{ClientAddress, IssuedSession};
    use crate::subscriptions::SubscriptionLimits;

    fn config() -> HttpConfig {
        HttpConfig::new("127.0.0.1:8080".parse().unwrap())
    }

    fn get(uri: &str) -> http::request::Builder {
        Request::builder().method(http::Method::GET).uri(uri).header(http::header::HOST, "localhost")
    }

    fn post(body: &'static str) -> http::request::Builder {
        Request::builder()
            .method(http::Method::POST)
            .uri("/mcp")
            .header(http::header::HOST, "localhost")
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::CONTENT_LENGTH, body.len())
    }

    /// An app whose only route answers `200` with what the checks before it left in the request.
    fn app<L>(layer: L) -> Router
    where
        L: Layer<Route> + Clone + Send + Sync + 'static,
        L::Service: Service<Request, Response = Response, Error = Infallible> + Clone + Send + Sync + 'static,
        <L::Service as Service<Request>>::Future: Send + 'static,
    {
        let handler = |request: Request| async move {
            let extensions = request.extensions();
            let address = extensions.get::<ClientAddress>().map(|address| address.0.to_string());
            let caller = match extensions.get::<Caller>() {
                Some(Caller::Authenticated(identity)) => identity.subject.clone(),
                Some(Caller::Anonymous) => "anonymous".into(),
                Some(Caller::Refused(_)) => "refused".into(),
                None => "unchecked".into(),
            };
            format!("{} {caller}", address.unwrap_or_default())
        };
        Router::new().route("/mcp", any(handler)).layer(layer)
    }

    async fn answer(app: Router, request: http::Request<Body>) -> (u16, String, http::HeaderMap) {
        let response = app.oneshot(request).await.unwrap();
        let (parts, body) = response.into_parts();
        let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
        (parts.status.as_u16(), String::from_utf8(body.to_vec()).unwrap(), parts.headers)
    }

    #[tokio::test]
    async fn the_strict_layer_refuses_two_hosts_and_passes_one() {
        let strict = StrictRequestLayer::new(&config());
        let twice = get("/mcp").header(http::header::HOST, "127.0.0.1").body(Body::empty()).unwrap();
        let (status, body, headers) = answer(app(strict.clone()), twice).await;
        assert_eq!((status, body.as_str()), (400, "Bad Request: a request carries one Host header"));
        assert_eq!(headers[http::header::CONNECTION], "close");
        let foreign = Request::get("http://evil.example/mcp").body(Body::empty()).unwrap();
        assert_eq!(answer(app(strict.clone()), foreign).await.0, 400);
        let once = get("/mcp").body(Body::empty()).unwrap();
        assert_eq!(answer(app(strict), once).await.0, 200);
    }

    #[tokio::test]
    async fn the_client_address_comes_from_the_header_or_the_peer() {
        let peer: SocketAddr = "192.0.2.9:4000".parse().unwrap();
        let forwarded = config().client_address_header(http::HeaderName::from_static("x-forwarded-for"));
        let request = || get("/mcp").extension(ConnectInfo(peer));
        let named = request().header("x-forwarded-for", "10.0.0.7, 10.0.0.1").body(Body::empty()).unwrap();
        let (_, body, _) = answer(app(ClientAddressLayer::new(&forwarded)), named).await;
        assert_eq!(body, "10.0.0.7 unchecked");
        let garbled = request().header("x-forwarded-for", "not an address").body(Body::empty()).unwrap();
        let (_, body, _) = answer(app(ClientAddressLayer::new(&forwarded)), garbled).await;
        assert_eq!(body, "192.0.2.9 unchecked");
        let unread = request().header("x-forwarded-for", "10.0.0.7").body(Body::empty()).unwrap();
        let (status, body, _) = answer(app(ClientAddressLayer::new(&config())), unread).await;
        assert_eq!((status, body.as_str()), (200, "192.0.2.9 unchecked"));
    }

    #[tokio::test]
    async fn the_host_origin_layer_refuses_foreign_hosts_and_origins() {
        let layer = HostOriginLayer::new(&config());
        let foreign = Request::get("/mcp").header(http::header::HOST, "evil.example").body(Body::empty()).unwrap();
        let (status, body, _) = answer(app(layer.clone()), foreign).await;
        assert_eq!((status, body.as_str()), (403, "Forbidden: Host header is not allowed"));
        let page = get("/mcp").header(http::header::ORIGIN, "https://evil.example").body(Body::empty()).unwrap();
        let (status, body, _) = answer(app(layer.clone()), page).await;
        assert_eq!((status, body.as_str()), (403, "Forbidden: Origin header is not allowed"));
        let local = get("/mcp").header(http::header::ORIGIN, "http://localhost:3000").body(Body::empty()).unwrap();
        assert_eq!(answer(app(layer), local).await.0, 200);
    }

    #[tokio::test]
    async fn the_bearer_layer_refuses_what_it_cannot_accept() {
        let tokens = || StaticTokens::new().token("s3cret", Identity::new("ci"));
        let auth = BearerAuthLayer::new(tokens());
        let bare = get("/mcp").body(Body::empty()).unwrap();
        let (status, body, headers) = answer(app(auth.clone()), bare).await;
        assert_eq!((status, body.as_str()), (401, "401 Unauthorized: this server needs a bearer token."));
        assert_eq!(headers[http::header::WWW_AUTHENTICATE], r#"Bearer realm="mcp""#);
        let basic = get("/mcp").header(http::header::AUTHORIZATION, "Basic eDp5").body(Body::empty()).unwrap();
        let (status, _, headers) = answer(app(auth.clone()), basic).await;
        assert_eq!(status, 401);
        assert!(headers[http::header::WWW_AUTHENTICATE].to_str().unwrap().contains(r#"error="invalid_request""#));
        let wrong = get("/mcp").header(http::header::AUTHORIZATION, "Bearer nope").body(Body::empty()).unwrap();
        assert_eq!(answer(app(auth.clone()), wrong).await.0, 401);
        let right = get("/mcp").header(http::header::AUTHORIZATION, "Bearer s3cret").body(Body::empty()).unwrap();
        assert_eq!(answer(app(auth), right).await.1, " ci");
        let open = BearerAuthLayer::new(tokens()).allow_anonymous(true);
        let bare = get("/mcp").body(Body::empty()).unwrap();
        assert_eq!(answer(app(open.clone()), bare).await.1, " anonymous");
        let wrong = get("/mcp").header(http::header::AUTHORIZATION, "Bearer nope").body(Body::empty()).unwrap();
        assert_eq!(answer(app(open), wrong).await.1, " refused");
    }

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

    #[tokio::test]
    async fn the_framing_layer_refuses_bodies_it_cannot_read() {
        // What rmcp answers a body it cannot decode.
        let inner = tower::service_fn(|_request: Request| async {
            let mut response = Response::new(Body::empty());
            *response.status_mut() = http::StatusCode::UNSUPPORTED_MEDIA_TYPE;
            Ok::<_, Infallible>(response)
        });
        let framing = FramingLayer { frames: Frames::new(64, SubscriptionLimits::default()) };
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
        let mut framing = FramingLayer { frames: Frames::new(1024, SubscriptionLimits::default()) }.layer(ok);
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        let in_session = || post(call).header("mcp-session-id", "s1").body(Body::from(call)).unwrap();
        let first = framing.call(in_session()).await.unwrap();
        let again = framing.call(in_session()).await.unwrap();
        assert_eq!(again.status(), http::StatusCode::BAD_REQUEST);
        // The id is free again once the first response has been sent.
        drop(first);
        assert_eq!(framing.call(in_session()).await.unwrap().status(), http::StatusCode::OK);
    }

    #[tokio::test]
    async fn the_response_count_layer_counts_posts_until_their_body_is_gone() {
        let responses = ResponsesInFlight::default();
        let counting = ResponseCountLayer::new(&responses);
        let response = app(counting.clone()).oneshot(post("{}").body(Body::from("{}")).unwrap()).await.unwrap();
        assert_eq!(responses.count(), 1);
        drop(response);
        assert_eq!(responses.count(), 0);
        let response = app(counting).oneshot(get("/mcp").body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(responses.count(), 0, "only POST responses are counted");
        drop(response);
        responses.idle().await;
    }
}
