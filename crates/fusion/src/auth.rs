//! Who is calling: identities from bearer tokens, checked by a pluggable authenticator.
//!
//! The HTTP transport reads `Authorization: Bearer …` and asks the
//! [`Authenticator`] configured with
//! [`HttpConfig::authenticator`](crate::http::HttpConfig::authenticator); the verdict reaches
//! each call as its [`Caller`], and the auth guard ([`Stage::Auth`](crate::guard::Stage::Auth))
//! refuses what the action does not allow.

use std::collections::BTreeSet;
use std::sync::Arc;

use subtle::ConstantTimeEq as _;

use futures_util::future::BoxFuture;

/// An authenticated caller: a subject and the scopes it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// Who it is (a user id, a client id).
    pub subject: String,
    /// What it may do (`invoices:write`).
    pub scopes: BTreeSet<String>,
}

impl Identity {
    /// An identity with no scopes.
    pub fn new(subject: impl Into<String>) -> Identity {
        Identity { subject: subject.into(), scopes: BTreeSet::new() }
    }

    /// Adds scopes.
    pub fn scopes<I, S>(mut self, scopes: I) -> Identity
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Whether it holds `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }
}

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// No such token.
    #[error("the bearer token is not valid")]
    Invalid,
    /// The token was valid once.
    #[error("the bearer token has expired")]
    Expired,
}

/// Checks bearer tokens. Implement it for your identity provider.
pub trait Authenticator: Send + Sync + 'static {
    /// The identity `token` stands for.
    fn authenticate(&self, token: &str) -> BoxFuture<'static, Result<Identity, AuthError>>;
}

/// A fixed set of tokens, compared in constant time (for demos, tests and service accounts).
#[derive(Debug, Clone, Default)]
pub struct StaticTokens {
    tokens: Arc<Vec<(Vec<u8>, Identity)>>,
}

impl StaticTokens {
    /// No tokens yet.
    pub fn new() -> StaticTokens {
        StaticTokens::default()
    }

    /// Accepts `token` as `identity`.
    pub fn token(mut self, token: impl Into<String>, identity: Identity) -> StaticTokens {
        Arc::make_mut(&mut self.tokens).push((token.into().into_bytes(), identity));
        self
    }
}

impl Authenticator for StaticTokens {
    fn authenticate(&self, token: &str) -> BoxFuture<'static, Result<Identity, AuthError>> {
        // Every configured token is compared, in constant time, so the time taken says nothing
        // about which one (or how much of one) matched.
        let mut found = None;
        for (known, identity) in self.tokens.iter() {
            if bool::from(known.as_slice().ct_eq(token.as_bytes())) {
                found = Some(identity.clone());
            }
        }
        Box::pin(std::future::ready(found.ok_or(AuthError::Invalid)))
    }
}

/// What the transport learned about the caller, attached to the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// No credentials.
    Anonymous,
    /// Credentials that were checked and accepted.
    Authenticated(Identity),
    /// Credentials that were checked and refused.
    Refused(AuthError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn static_tokens_match_exactly() {
        let tokens = StaticTokens::new()
            .token("s3cret", Identity::new("alice").scopes(["invoices:write"]))
            .token("other", Identity::new("bob"));
        let alice = tokens.authenticate("s3cret").await.unwrap();
        assert_eq!(alice.subject, "alice");
        assert!(alice.has_scope("invoices:write"));
        assert_eq!(tokens.authenticate("s3cre").await, Err(AuthError::Invalid));
        assert_eq!(tokens.authenticate("s3crets").await, Err(AuthError::Invalid));
        assert_eq!(tokens.authenticate("").await, Err(AuthError::Invalid));
        assert_eq!(tokens.authenticate("other").await.unwrap().subject, "bob");
    }
}
