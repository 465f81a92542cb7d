//! Bearer tokens: the `Authorization` header read on every request, checked by the configured
//! [`Authenticator`], and its verdict attached to the request as a [`Caller`].

use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::Response;
use futures_util::future::{BoxFuture, Either};
use tower_layer::Layer;
use tower_service::Service;

use super::ProtectedResource;
use super::check::take_ready;
use super::refusal;
use crate::auth::{AuthError, Authenticator, Caller};
use crate::context::ListsPerCaller;

/// The authenticator and whether requests it does not accept may still go on.
#[derive(Clone)]
pub(super) struct Gate {
    pub authenticator: Arc<dyn Authenticator>,
    pub allow_anonymous: bool,
    /// Where the protected resource's metadata is served, named in every `401`.
    pub resource_metadata: Option<Arc<str>>,
    /// Whether lists show each caller what it may use.
    pub lists_per_caller: bool,
}

/// Reads the bearer token and attaches the caller to the request, or answers `401` unless
/// the token stands for an identity (or anonymous callers are allowed).
pub(super) async fn authenticate(gate: &Gate, request: &mut Request) -> Result<(), Response> {
    let unauthorized =
        |error, description| refusal::unauthorized(error, description, gate.resource_metadata.as_deref());
    let caller = match request.headers().get(http::header::AUTHORIZATION) {
        None => Caller::Anonymous,
        Some(value) => match bearer_token(value) {
            Some(token) => match gate.authenticator.authenticate(token).await {
                Ok(identity) => Caller::Authenticated(identity),
                Err(reason) => Caller::Refused(reason),
            },
            None => {
                return Err(unauthorized(Some("invalid_request"), "expected a bearer token"));
            }
        },
    };
    if !gate.allow_anonymous {
        match &caller {
            Caller::Authenticated(_) => {}
            Caller::Anonymous => return Err(unauthorized(None, "this server needs a bearer token")),
            Caller::Refused(AuthError::Unavailable) => {
                // Not the token's fault: a 401 would send the client to sign in again for nothing.
                return Err(refusal::busy(
                    http::StatusCode::SERVICE_UNAVAILABLE,
                    "Service Unavailable: the bearer token could not be checked, because the identity provider did not answer; retry in a while",
                ));
            }
            Caller::Refused(reason) => {
                let description = match reason {
                    AuthError::Expired => "the bearer token has expired",
                    _ => "the bearer token is not valid",
                };
                return Err(unauthorized(Some("invalid_token"), description));
            }
        }
    }
    request.extensions_mut().insert(caller);
    if gate.lists_per_caller {
        request.extensions_mut().insert(ListsPerCaller);
    }
    Ok(())
}

/// The token of `Bearer <token>` (RFC 6750 syntax), if that is what the header holds.
pub(crate) fn bearer_token(value: &http::HeaderValue) -> Option<&str> {
    let value = value.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    let token_char = |c: char| c.is_ascii_alphanumeric() || "-._~+/=".contains(c);
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() && token.chars().all(token_char)).then_some(token)
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
    pub(super) gate: Option<Arc<Gate>>,
}

impl BearerAuthLayer {
    /// Checks every request's token with `authenticator`; only accepted tokens pass.
    pub fn new(authenticator: impl Authenticator) -> BearerAuthLayer {
        let gate = Gate {
            authenticator: Arc::new(authenticator),
            allow_anonymous: false,
            resource_metadata: None,
            lists_per_caller: true,
        };
        BearerAuthLayer { gate: Some(Arc::new(gate)) }
    }

    /// Names `resource`'s metadata URL in every `401`, so that a client finds where to get a
    /// token (serve the document itself at [`ProtectedResource::metadata_url`]).
    pub fn protected_resource(mut self, resource: &ProtectedResource) -> BearerAuthLayer {
        if let Some(gate) = &mut self.gate {
            Arc::make_mut(gate).resource_metadata = Some(resource.metadata_url().into());
        }
        self
    }

    /// Whether the lists of an MCP endpoint behind it show each caller only what its scopes
    /// let it use (default: on).
    pub fn lists_per_caller(mut self, per_caller: bool) -> BearerAuthLayer {
        if let Some(gate) = &mut self.gate {
            Arc::make_mut(gate).lists_per_caller = per_caller;
        }
        self
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
            if let Err(refused) = authenticate(&gate, &mut request).await {
                return Ok(refused);
            }
            inner.call(request).await
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::{Identity, StaticTokens};
    use crate::transport::http::testing::*;
    use axum::body::Body;

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
    async fn every_refusal_names_the_protected_resource_metadata() {
        let resource = ProtectedResource::new("https://mcp.example.com/mcp").unwrap();
        let auth = BearerAuthLayer::new(StaticTokens::new()).protected_resource(&resource);
        let metadata = r#"resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp""#;
        let bare = get("/mcp").body(Body::empty()).unwrap();
        let (_, _, headers) = answer(app(auth.clone()), bare).await;
        assert_eq!(headers[http::header::WWW_AUTHENTICATE], format!(r#"Bearer realm="mcp", {metadata}"#));
        for header in ["Bearer nope", "Basic eDp5"] {
            let sent = get("/mcp").header(http::header::AUTHORIZATION, header).body(Body::empty()).unwrap();
            let (status, _, headers) = answer(app(auth.clone()), sent).await;
            assert_eq!(status, 401);
            assert!(headers[http::header::WWW_AUTHENTICATE].to_str().unwrap().ends_with(&format!(", {metadata}")));
        }
    }
}
