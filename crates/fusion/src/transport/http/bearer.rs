//! Bearer tokens: the `Authorization` header read on every request, checked by the configured
//! [`Authenticator`], and its verdict attached to the request as a [`Caller`].

use std::sync::Arc;

use axum::extract::Request;
use axum::response::Response;

use super::refusal;
use crate::auth::{AuthError, Authenticator, Caller};

/// The authenticator and whether requests it does not accept may still go on.
#[derive(Clone)]
pub(super) struct Gate {
    pub authenticator: Arc<dyn Authenticator>,
    pub allow_anonymous: bool,
}

/// Reads the bearer token and attaches the caller to the request, or answers `401` unless
/// the token stands for an identity (or anonymous callers are allowed).
pub(super) async fn authenticate(gate: &Gate, request: &mut Request) -> Result<(), Response> {
    let caller = match request.headers().get(http::header::AUTHORIZATION) {
        None => Caller::Anonymous,
        Some(value) => match bearer_token(value) {
            Some(token) => match gate.authenticator.authenticate(token).await {
                Ok(identity) => Caller::Authenticated(identity),
                Err(reason) => Caller::Refused(reason),
            },
            None => {
                return Err(refusal::unauthorized(Some("invalid_request"), "expected a bearer token"));
            }
        },
    };
    if !gate.allow_anonymous {
        match &caller {
            Caller::Authenticated(_) => {}
            Caller::Anonymous => return Err(refusal::unauthorized(None, "this server needs a bearer token")),
            Caller::Refused(reason) => {
                let description = match reason {
                    AuthError::Invalid => "the bearer token is not valid",
                    AuthError::Expired => "the bearer token has expired",
                };
                return Err(refusal::unauthorized(Some("invalid_token"), description));
            }
        }
    }
    request.extensions_mut().insert(caller);
    Ok(())
}

/// The token of `Bearer <token>` (RFC 6750 syntax), if that is what the header holds.
fn bearer_token(value: &http::HeaderValue) -> Option<&str> {
    let value = value.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    let token_char = |c: char| c.is_ascii_alphanumeric() || "-._~+/=".contains(c);
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() && token.chars().all(token_char)).then_some(token)
}
