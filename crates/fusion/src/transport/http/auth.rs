//! Bearer tokens: the `Authorization` header read, checked by the configured
//! [`Authenticator`], and its verdict attached to the request as a [`Caller`].

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware;
use axum::response::Response;

use crate::auth::{Authenticator, Caller};

/// Reads the bearer token and attaches the caller it stands for to the request.
pub(super) async fn authenticate(
    State(authenticator): State<Arc<dyn Authenticator>>,
    mut request: Request,
    next: middleware::Next,
) -> Response {
    let caller = match request.headers().get(http::header::AUTHORIZATION) {
        None => Caller::Anonymous,
        Some(value) => match bearer_token(value) {
            Some(token) => match authenticator.authenticate(token).await {
                Ok(identity) => Caller::Authenticated(identity),
                Err(reason) => Caller::Refused(reason),
            },
            None => return unusable_credentials(),
        },
    };
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// The token of `Bearer <token>` (RFC 6750 syntax), if that is what the header holds.
fn bearer_token(value: &http::HeaderValue) -> Option<&str> {
    let value = value.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    let token_char = |c: char| c.is_ascii_alphanumeric() || "-._~+/=".contains(c);
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() && token.chars().all(token_char)).then_some(token)
}

fn unusable_credentials() -> Response {
    let mut response =
        Response::new(Body::from("401 Unauthorized: the Authorization header must be `Bearer <token>`."));
    *response.status_mut() = http::StatusCode::UNAUTHORIZED;
    response.headers_mut().insert(
        http::header::WWW_AUTHENTICATE,
        http::HeaderValue::from_static(
            r#"Bearer error="invalid_request", error_description="expected a bearer token""#,
        ),
    );
    response
}
