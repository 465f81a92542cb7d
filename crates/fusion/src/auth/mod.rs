//! Who is calling: identities from bearer tokens, checked by a pluggable authenticator.
//!
//! The HTTP transport reads `Authorization: Bearer …` and asks the
//! [`Authenticator`] configured with
//! [`HttpConfig::authenticator`](crate::http::HttpConfig::authenticator); the verdict reaches
//! each call as its [`Caller`], and the auth guard ([`Stage::Auth`](crate::guard::Stage::Auth))
//! refuses what the action does not allow.
//!
//! With the `oauth` feature, `JwtAuthenticator` checks OAuth 2.1 access tokens that are JWTs
//! against the issuer's published keys, and `Introspection` asks the issuer about opaque
//! ones (RFC 7662); both accept only tokens issued for this server (its resource URI in `aud`).

use std::collections::BTreeSet;
use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;

use subtle::ConstantTimeEq as _;

use futures_util::future::BoxFuture;

#[cfg(feature = "oauth")]
mod discovery;
#[cfg(feature = "oauth")]
mod fetch;
#[cfg(feature = "oauth")]
mod introspection;
#[cfg(feature = "oauth")]
mod jwks;
#[cfg(feature = "oauth")]
mod jwt;
#[cfg(feature = "oauth")]
mod oauth_error;
#[cfg(feature = "http")]
pub(crate) mod uri;

#[cfg(feature = "oauth")]
pub use discovery::AuthorizationServer;
#[cfg(feature = "oauth")]
pub use introspection::Introspection;
#[cfg(feature = "oauth")]
pub use jwt::{JwtAuthenticator, JwtBuilder};
#[cfg(feature = "oauth")]
pub use oauth_error::OAuthError;

/// An authenticated caller: a subject and the scopes it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Identity {
    /// Who it is (a user id, a client id).
    pub subject: String,
    /// The OAuth client the token was issued to, when the token says (`client_id`, `azp`).
    pub client_id: Option<String>,
    /// What it may do (`invoices:write`).
    pub scopes: BTreeSet<String>,
}

impl Identity {
    /// An identity with no scopes.
    pub fn new(subject: impl Into<String>) -> Identity {
        Identity { subject: subject.into(), client_id: None, scopes: BTreeSet::new() }
    }

    /// The OAuth client acting for the subject.
    pub fn client(mut self, client_id: impl Into<String>) -> Identity {
        self.client_id = Some(client_id.into());
        self
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
#[non_exhaustive]
pub enum AuthError {
    /// No such token.
    #[error("the bearer token is not valid")]
    Invalid,
    /// The token was valid once.
    #[error("the bearer token has expired")]
    Expired,
    /// The token could not be checked now: the identity provider did not answer.
    #[error("the bearer token could not be checked: the identity provider did not answer")]
    Unavailable,
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
#[non_exhaustive]
pub enum Caller {
    /// No credentials.
    Anonymous,
    /// Credentials that were checked and accepted.
    Authenticated(Identity),
    /// Credentials that were checked and refused.
    Refused(AuthError),
}

impl Caller {
    /// The identity, when the credentials were accepted.
    pub fn identity(&self) -> Option<&Identity> {
        match self {
            Caller::Authenticated(identity) => Some(identity),
            _ => None,
        }
    }
}

/// Who a call counts as, for every per-caller key (rate limits, idempotency scopes): the
/// verified identity; else the session the transport issued and still holds; else the
/// client's address; else (stdio, in-process) the one local client. Never a value the client
/// merely sends: a session header on a request outside a live session is not a session.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallerKey {
    /// An authenticated identity, by its subject and the client acting for it (see
    /// [`CallerKey::identity`]).
    Identity(String),
    /// A session the transport issued.
    Session(Arc<str>),
    /// The client's network address.
    Address(IpAddr),
    /// The one client of a stdio server, or a call made in process.
    Local,
}

/// Longest subject written into a key as it is; longer ones are written as their digest, so
/// a key stays short whatever the identity provider puts in a subject.
const MAX_KEY_SUBJECT: usize = 64;

impl CallerKey {
    /// The key of a call from `identity`, in `session`, from `address`, in that order of
    /// precedence.
    pub fn of(identity: Option<&Identity>, session: Option<&Arc<str>>, address: Option<IpAddr>) -> CallerKey {
        match (identity, session, address) {
            (Some(identity), _, _) => CallerKey::identity(identity),
            (None, Some(session), _) => CallerKey::Session(Arc::clone(session)),
            (None, None, Some(address)) => CallerKey::Address(address),
            (None, None, None) => CallerKey::Local,
        }
    }

    /// The key of `identity`: its subject, and the client acting for it when that is another
    /// party — so every token of one subject through one client counts as one caller.
    pub fn identity(identity: &Identity) -> CallerKey {
        let client = identity.client_id.as_deref().filter(|client| *client != identity.subject);
        let plain = plain_subject(&identity.subject) && client.is_none_or(plain_subject);
        CallerKey::Identity(match client {
            _ if !plain => {
                use sha2::Digest as _;
                let mut digest = sha2::Sha256::new();
                // Lengths first: no subject and client can be cut another way into the same bytes.
                for part in [identity.subject.as_str(), client.unwrap_or("")] {
                    digest.update((part.len() as u64).to_be_bytes());
                    digest.update(part.as_bytes());
                }
                let mut key = String::from("#");
                for byte in digest.finalize() {
                    key.push_str(&format!("{byte:02x}"));
                }
                key
            }
            Some(client) => format!("{};client:{client}", identity.subject),
            None => identity.subject.clone(),
        })
    }

    /// Whether the key is an authenticated identity.
    pub fn is_identity(&self) -> bool {
        matches!(self, CallerKey::Identity(_))
    }
}

impl fmt::Display for CallerKey {
    /// `identity:alice`, `identity:alice;client:crm`, `session:…`, `address:127.0.0.1`,
    /// `local`; a subject or client longer than 64 bytes or holding anything but
    /// `A-Z a-z 0-9 _ - . @ |` is written as `identity#` and the SHA-256 digest of both.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallerKey::Identity(key) if key.starts_with('#') => write!(f, "identity{key}"),
            CallerKey::Identity(key) if plain_key(key) => write!(f, "identity:{key}"),
            // Not built by `CallerKey::identity`: digested like any odd subject.
            CallerKey::Identity(subject) => CallerKey::identity(&Identity::new(subject.as_str())).fmt(f),
            CallerKey::Session(session) => write!(f, "session:{session}"),
            CallerKey::Address(address) => write!(f, "address:{address}"),
            CallerKey::Local => f.write_str("local"),
        }
    }
}

/// Whether `key` is what [`CallerKey::identity`] writes for plain parts.
fn plain_key(key: &str) -> bool {
    match key.split_once(";client:") {
        Some((subject, client)) => plain_subject(subject) && plain_subject(client),
        None => plain_subject(key),
    }
}

fn plain_subject(subject: &str) -> bool {
    subject.len() <= MAX_KEY_SUBJECT
        && subject.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'@' | b'|'))
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

    #[test]
    fn a_caller_key_prefers_the_identity_then_the_session_then_the_address() {
        let alice = Identity::new("alice");
        let session: Arc<str> = Arc::from("3f2a");
        let address: IpAddr = "192.0.2.7".parse().unwrap();
        assert_eq!(CallerKey::of(Some(&alice), Some(&session), Some(address)).to_string(), "identity:alice");
        assert_eq!(CallerKey::of(None, Some(&session), Some(address)).to_string(), "session:3f2a");
        assert_eq!(CallerKey::of(None, None, Some(address)).to_string(), "address:192.0.2.7");
        assert_eq!(CallerKey::of(None, None, None).to_string(), "local");
        let odd = CallerKey::of(Some(&Identity::new("a:b\nforged")), None, None).to_string();
        let long = CallerKey::of(Some(&Identity::new("x".repeat(16_384))), None, None).to_string();
        let odd_client = CallerKey::of(Some(&Identity::new("alice").client("c;lient:x")), None, None).to_string();
        for key in [odd, long, odd_client] {
            assert!(key.starts_with("identity#") && key.len() == "identity#".len() + 64, "{key}");
        }
        let through = |client: &str| CallerKey::of(Some(&Identity::new("alice").client(client)), None, None);
        assert_eq!(through("crm").to_string(), "identity:alice;client:crm");
        assert_eq!(through("alice").to_string(), "identity:alice", "a client acting for itself is its subject");
        assert_ne!(through("crm"), through("erp"));
        let by_hand = CallerKey::Identity("alice;client:c\nrm".into()).to_string();
        assert!(by_hand.starts_with("identity#"), "{by_hand}");
    }
}
