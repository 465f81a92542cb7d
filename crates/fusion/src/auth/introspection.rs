//! Opaque access tokens, checked by asking the issuer (RFC 7662 token introspection), and the
//! answers kept by the token's digest: an accepted token's until it expires, a refused one's for
//! 30 s, so a token sent again and again costs the issuer one request.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use mcp_fusion_wire::echo;
use serde::Deserialize;
use sha2::Digest as _;
use tokio::time::Instant;

use super::fetch::Fetcher;
use super::jwt::MAX_TOKEN_BYTES;
use super::uri::split_uri;
use super::{AuthError, Authenticator, Identity, OAuthError};

/// The most answers kept; past it the expired ones go, then all of them.
const DEFAULT_CAPACITY: usize = 10_000;

/// How long a refusal is kept: long enough that repeating a made-up token does not reach the
/// issuer, short enough that a token the issuer just made active is soon taken.
const REFUSAL_KEPT: std::time::Duration = std::time::Duration::from_secs(30);

/// Checks opaque access tokens at the issuer's introspection endpoint, as this server's own
/// OAuth client; accepts only active tokens issued for this server's resource.
///
/// ```
/// use mcp_fusion::auth::Introspection;
///
/// let tokens = Introspection::new(
///     "https://id.example.com/token/introspection",
///     "https://mcp.example.com/mcp",
///     "mcp-server",
///     std::env::var("INTROSPECTION_SECRET").unwrap_or_default(),
/// )
/// .unwrap();
/// # let _ = tokens;
/// ```
#[derive(Clone)]
pub struct Introspection {
    inner: Arc<Inner>,
}

struct Inner {
    endpoint: String,
    audience: String,
    issuer: Option<String>,
    client_id: String,
    client_secret: String,
    fetcher: Fetcher,
    capacity: usize,
    refusal_kept: std::time::Duration,
    known: Mutex<Known>,
}

/// What the issuer said about each token, by the token's digest, and until when it holds.
type Known = HashMap<[u8; 32], (Result<Identity, AuthError>, Instant)>;

/// What the endpoint answers (RFC 7662 §2.2); `aud` is a string or an array.
#[derive(Deserialize)]
struct Answer {
    active: bool,
    scope: Option<String>,
    client_id: Option<String>,
    sub: Option<String>,
    exp: Option<u64>,
    nbf: Option<u64>,
    aud: Option<serde_json::Value>,
    iss: Option<String>,
}

impl Introspection {
    /// Asks `endpoint` about each token, authenticated as `client_id` with `client_secret`;
    /// only tokens whose `aud` holds `audience` (this server's resource URI) are accepted.
    pub fn new(
        endpoint: &str,
        audience: &str,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Result<Introspection, OAuthError> {
        let uri = |what, uri: &str, query| {
            split_uri(uri, query).map(drop).map_err(|reason| OAuthError::Uri { what, uri: echo(uri), reason })
        };
        uri("introspection endpoint", endpoint, true)?;
        uri("resource", audience, false)?;
        Ok(Introspection {
            inner: Arc::new(Inner {
                endpoint: endpoint.to_owned(),
                audience: audience.to_owned(),
                issuer: None,
                client_id: client_id.into(),
                client_secret: client_secret.into(),
                fetcher: Fetcher::new()?,
                capacity: DEFAULT_CAPACITY,
                refusal_kept: REFUSAL_KEPT,
                known: Mutex::default(),
            }),
        })
    }

    /// Also refuses answers whose `iss` is another issuer.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Introspection {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.issuer = Some(issuer.into());
        }
        self
    }

    /// How long a refused token is refused without asking the issuer again (default 30 s).
    pub fn refusals_kept_for(mut self, kept: std::time::Duration) -> Introspection {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.refusal_kept = kept;
        }
        self
    }

    /// How many answers are kept at most (default 10 000).
    pub fn cache_capacity(mut self, capacity: usize) -> Introspection {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.capacity = capacity;
        }
        self
    }
}

impl Inner {
    async fn check(&self, token: &str) -> Result<Identity, AuthError> {
        let refused = |why: &str| {
            tracing::debug!(target: "mcp_fusion::auth", "refused an access token: {why}");
            AuthError::Invalid
        };
        if token.len() > MAX_TOKEN_BYTES {
            return Err(refused("it is longer than 16 KiB"));
        }
        let digest: [u8; 32] = sha2::Sha256::digest(token.as_bytes()).into();
        let now = Instant::now();
        if let Some((answer, until)) = self.known().get(&digest)
            && *until > now
        {
            return answer.clone();
        }
        let form = [("token", token), ("token_type_hint", "access_token")];
        let client = (self.client_id.as_str(), self.client_secret.as_str());
        let answer: Answer =
            match self.fetcher.post_form(&self.endpoint, &form, client, "an introspection answer").await {
                Ok(answer) => answer,
                Err(error) => {
                    tracing::warn!("cannot check an access token at the introspection endpoint: {error}");
                    return Err(AuthError::Unavailable);
                }
            };
        let (identity, expires) = match self.accept(answer) {
            Ok(accepted) => accepted,
            Err(why) => return self.keep(digest, Err(refused(why)), now + self.refusal_kept),
        };
        let Some(left) = expires.checked_sub(unix_now()) else {
            tracing::debug!(target: "mcp_fusion::auth", "refused an access token: it has expired");
            return self.keep(digest, Err(AuthError::Expired), now + self.refusal_kept);
        };
        self.keep(digest, Ok(identity), now + std::time::Duration::from_secs(left))
    }

    /// Keeps the answer about the token of `digest` until `until`, and returns it.
    fn keep(
        &self,
        digest: [u8; 32],
        answer: Result<Identity, AuthError>,
        until: Instant,
    ) -> Result<Identity, AuthError> {
        let mut known = self.known();
        if known.len() >= self.capacity {
            let now = Instant::now();
            known.retain(|_, (_, until)| *until > now);
            if known.len() >= self.capacity {
                known.clear();
            }
        }
        known.insert(digest, (answer.clone(), until));
        answer
    }

    /// The identity of an answer, and when it expires; why not, if it is not accepted.
    fn accept(&self, answer: Answer) -> Result<(Identity, u64), &'static str> {
        if !answer.active {
            return Err("the issuer says it is not active");
        }
        let audiences: Vec<&str> = match &answer.aud {
            Some(serde_json::Value::String(aud)) => vec![aud.as_str()],
            Some(serde_json::Value::Array(auds)) => auds.iter().filter_map(serde_json::Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !audiences.contains(&self.audience.as_str()) {
            return Err("it was not issued for this resource (aud)");
        }
        if let (Some(expected), Some(found)) = (&self.issuer, &answer.iss)
            && expected != found
        {
            return Err("another issuer issued it (iss)");
        }
        if answer.nbf.is_some_and(|nbf| nbf > unix_now() + 30) {
            return Err("it is not valid yet (nbf)");
        }
        // Without `exp` the answer cannot be kept: it holds for this request only.
        let expires = answer.exp.unwrap_or_else(unix_now);
        let client_id = answer.client_id;
        let subject =
            answer.sub.or_else(|| client_id.clone()).filter(|s| !s.is_empty()).ok_or("it names no subject")?;
        let scopes: BTreeSet<String> =
            answer.scope.iter().flat_map(|s| s.split_ascii_whitespace()).map(str::to_owned).collect();
        Ok((Identity { subject, client_id, scopes }, expires))
    }

    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        self.known.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |since| since.as_secs())
}

impl Authenticator for Introspection {
    fn authenticate(&self, token: &str) -> BoxFuture<'static, Result<Identity, AuthError>> {
        let inner = Arc::clone(&self.inner);
        let token = token.to_owned();
        Box::pin(async move { inner.check(&token).await })
    }
}

impl std::fmt::Debug for Introspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Introspection")
            .field("endpoint", &self.inner.endpoint)
            .field("audience", &self.inner.audience)
            .field("client_id", &self.inner.client_id)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const RESOURCE: &str = "https://mcp.example.com/mcp";

    fn introspection() -> Introspection {
        Introspection::new("https://id.example.com/introspect", RESOURCE, "mcp", "secret")
            .unwrap()
            .issuer("https://id.example.com")
    }

    fn answer(json: serde_json::Value) -> Result<(Identity, u64), &'static str> {
        introspection().inner.accept(serde_json::from_value(json).unwrap())
    }

    #[test]
    fn only_an_active_answer_for_this_resource_is_an_identity() {
        let exp = unix_now() + 600;
        let (identity, expires) = answer(serde_json::json!({
            "active": true, "aud": RESOURCE, "client_id": "crm", "scope": "billing:read", "exp": exp,
        }))
        .unwrap();
        assert_eq!(identity, Identity::new("crm").client("crm").scopes(["billing:read"]), "no sub: the client");
        assert_eq!(expires, exp);
        let (identity, _) = answer(serde_json::json!({"active": true, "aud": ["x", RESOURCE], "sub": "ana"})).unwrap();
        assert_eq!(identity.subject, "ana");
        for (refused, why) in [
            (serde_json::json!({"active": false, "aud": RESOURCE, "sub": "ana"}), "not active"),
            (serde_json::json!({"active": true, "sub": "ana"}), "aud"),
            (serde_json::json!({"active": true, "aud": "https://other.example.com/mcp", "sub": "ana"}), "aud"),
            (serde_json::json!({"active": true, "aud": [5], "sub": "ana"}), "aud"),
            (
                serde_json::json!({"active": true, "aud": RESOURCE, "iss": "https://evil.example.com", "sub": "ana"}),
                "iss",
            ),
            (serde_json::json!({"active": true, "aud": RESOURCE, "nbf": unix_now() + 3600, "sub": "ana"}), "nbf"),
            (serde_json::json!({"active": true, "aud": RESOURCE, "sub": ""}), "subject"),
        ] {
            assert!(answer(refused.clone()).unwrap_err().contains(why), "{refused}");
        }
        // What does not decode as an answer at all is refused before: the endpoint is at fault.
        for garbage in ["{}", "[]", r#"{"active":"yes"}"#, r#"{"active":true,"exp":-1}"#] {
            assert!(serde_json::from_str::<Answer>(garbage).is_err(), "{garbage}");
        }
    }

    /// An introspection endpoint on loopback that counts its requests and calls every token
    /// active but `made-up*`.
    async fn endpoint(asked: Arc<std::sync::atomic::AtomicUsize>) -> String {
        let app = axum::Router::new().route(
            "/introspect",
            axum::routing::post(move |body: String| {
                asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let active = !body.contains("token=made-up");
                let exp = unix_now() + 600;
                let answer = serde_json::json!({"active": active, "aud": RESOURCE, "sub": "ana", "exp": exp});
                async move { ([(http::header::CONTENT_TYPE, "application/json")], answer.to_string()) }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{address}/introspect")
    }

    #[tokio::test]
    async fn a_refused_token_sent_again_is_refused_without_asking_the_issuer_until_its_refusal_lapses() {
        let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let url = endpoint(Arc::clone(&asked)).await;
        let tokens = Introspection::new(&url, RESOURCE, "mcp", "s").unwrap();
        let asked = || asked.load(std::sync::atomic::Ordering::SeqCst);
        for _ in 0..100 {
            assert_eq!(tokens.authenticate("made-up-1").await, Err(AuthError::Invalid));
        }
        assert_eq!(asked(), 1, "one request for a hundred tries of the same made-up token");
        assert_eq!(tokens.authenticate("made-up-2").await, Err(AuthError::Invalid));
        assert_eq!(asked(), 2, "another token is another request");
        assert!(tokens.authenticate("real").await.is_ok());
        assert!(tokens.authenticate("real").await.is_ok());
        assert_eq!(asked(), 3);
        // Refusals kept for no time: each try asks again, and an accepted token is still kept.
        let forgetful = Introspection::new(&url, RESOURCE, "mcp", "s").unwrap().refusals_kept_for(Duration::ZERO);
        for n in 1..=3 {
            assert_eq!(forgetful.authenticate("made-up-1").await, Err(AuthError::Invalid));
            assert_eq!(asked(), 3 + n);
        }
        assert!(forgetful.authenticate("real").await.is_ok());
        assert!(forgetful.authenticate("real").await.is_ok());
        assert_eq!(asked(), 7);
    }

    #[test]
    fn set_up_refuses_endpoints_a_token_must_not_travel_to() {
        let err = Introspection::new("http://id.example.com/introspect", RESOURCE, "mcp", "s").unwrap_err();
        assert!(err.to_string().contains("loopback host only"), "{err}");
        assert!(Introspection::new("https://id.example.com/introspect", "not a uri", "mcp", "s").is_err());
    }
}
