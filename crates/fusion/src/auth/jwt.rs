//! OAuth 2.1 access tokens that are JWTs (RFC 9068), checked against the issuer's published
//! keys: the signature, the issuer, the audience (this server's resource URI, RFC 8707), the
//! validity window, the token's type (an access token, not an ID or logout token signed by the
//! same keys), and the scopes they grant.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use mcp_fusion_wire::echo;
use serde::Deserialize;

use super::discovery::AuthorizationServer;
use super::fetch::Fetcher;
use super::jwks::{Key, KeyCache, KeySet};
use super::uri::split_uri;
use super::{AuthError, Authenticator, Identity, OAuthError};

/// The longest token read: a JWT access token is a few hundred bytes to a few kilobytes.
pub(super) const MAX_TOKEN_BYTES: usize = 16 << 10;

/// Checks JWT access tokens issued by one issuer for one resource.
///
/// ```no_run
/// use mcp_fusion::auth::JwtAuthenticator;
/// use mcp_fusion::http::HttpConfig;
///
/// # async fn run() -> Result<(), mcp_fusion::auth::OAuthError> {
/// let tokens = JwtAuthenticator::builder("https://id.example.com", "https://mcp.example.com/mcp")
///     .build() // reads the issuer's metadata, then its keys
///     .await?;
/// let config = HttpConfig::new("0.0.0.0:8080").authenticator(tokens);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct JwtAuthenticator {
    inner: Arc<Inner>,
}

struct Inner {
    issuer: String,
    audience: String,
    leeway: Duration,
    only_at_jwt: bool,
    keys: Keys,
}

enum Keys {
    /// Given, never fetched.
    Fixed(KeySet),
    /// Fetched from the issuer, and again for a key id not seen before.
    Fetched(KeyCache),
}

/// How a [`JwtAuthenticator`] is set up: the issuer and audience, and optionally where the
/// keys are, the clock leeway and how often an unknown key may cause a fetch.
#[derive(Debug, Clone)]
#[must_use]
pub struct JwtBuilder {
    issuer: String,
    audience: String,
    jwks_url: Option<String>,
    leeway: Duration,
    refetch_interval: Duration,
    only_at_jwt: bool,
}

impl JwtAuthenticator {
    /// Tokens `issuer` issued for `audience` (this server's canonical resource URI).
    pub fn builder(issuer: impl Into<String>, audience: impl Into<String>) -> JwtBuilder {
        JwtBuilder {
            issuer: issuer.into(),
            audience: audience.into(),
            jwks_url: None,
            leeway: Duration::from_secs(30),
            refetch_interval: Duration::from_secs(30),
            only_at_jwt: false,
        }
    }

    /// The issuer tokens must name in `iss`.
    pub fn issuer(&self) -> &str {
        &self.inner.issuer
    }

    /// The audience tokens must name in `aud`.
    pub fn audience(&self) -> &str {
        &self.inner.audience
    }
}

impl JwtBuilder {
    /// Reads the keys from `url` instead of discovering it from the issuer's metadata.
    pub fn jwks_url(mut self, url: impl Into<String>) -> JwtBuilder {
        self.jwks_url = Some(url.into());
        self
    }

    /// How far `exp` and `nbf` may be off this server's clock (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> JwtBuilder {
        self.leeway = leeway;
        self
    }

    /// The least time between two fetches of the keys caused by tokens naming a key not held
    /// (default 30 s): the issuer's rotation is seen within it, a flood of made-up key ids
    /// costs the issuer one request per interval.
    pub fn refetch_interval(mut self, interval: Duration) -> JwtBuilder {
        self.refetch_interval = interval;
        self
    }

    /// Accepts only tokens typed `at+jwt` (RFC 9068). By default a token typed `JWT`, or not
    /// typed, is accepted too, as most issuers type their access tokens so; a token of any
    /// other type (`logout+jwt`, `id_token+jwt`, …) or one carrying ID-token claims (`nonce`,
    /// `at_hash`, `c_hash`, `s_hash`) is refused either way.
    pub fn only_at_jwt(mut self, only: bool) -> JwtBuilder {
        self.only_at_jwt = only;
        self
    }

    /// Reads the issuer's metadata (unless the keys' URL is given), then its keys.
    pub async fn build(self) -> Result<JwtAuthenticator, OAuthError> {
        self.check()?;
        let fetcher = Fetcher::new()?;
        let url = match &self.jwks_url {
            Some(url) => url.clone(),
            None => {
                let server = AuthorizationServer::discover_with(&fetcher, &self.issuer).await?;
                server.jwks_uri.ok_or_else(|| OAuthError::Missing { issuer: self.issuer.clone(), what: "jwks_uri" })?
            }
        };
        let keys = KeyCache::load(url, fetcher, self.refetch_interval).await?;
        Ok(self.with(Keys::Fetched(keys)))
    }

    /// With the keys of the JWK set `jwks`, never fetched (a test, a fixed deployment).
    pub fn build_with_keys(self, jwks: &[u8]) -> Result<JwtAuthenticator, OAuthError> {
        self.check()?;
        let document = |reason| OAuthError::Document { url: "(given)".to_owned(), expected: "a JWK set", reason };
        let keys = KeySet::parse(jwks).map_err(document)?;
        if keys.len() == 0 {
            return Err(OAuthError::NoUsableKey { url: "(given)".to_owned() });
        }
        Ok(self.with(Keys::Fixed(keys)))
    }

    fn check(&self) -> Result<(), OAuthError> {
        let uri = |what, uri: &str, query| {
            split_uri(uri, query).map(drop).map_err(|reason| OAuthError::Uri { what, uri: echo(uri), reason })
        };
        uri("issuer", &self.issuer, false)?;
        uri("resource", &self.audience, false)?;
        self.jwks_url.as_deref().map_or(Ok(()), |url| uri("JWKS URL", url, true))
    }

    fn with(self, keys: Keys) -> JwtAuthenticator {
        let JwtBuilder { issuer, audience, leeway, only_at_jwt, .. } = self;
        JwtAuthenticator { inner: Arc::new(Inner { issuer, audience, leeway, only_at_jwt, keys }) }
    }
}

/// The claims an access token's identity is read from; `exp`, `nbf`, `iss` and `aud` are
/// checked by the validation.
#[derive(Deserialize)]
pub(super) struct Claims {
    sub: Option<String>,
    client_id: Option<String>,
    azp: Option<String>,
    scope: Option<String>,
    /// A string or an array of strings, as issuers write it.
    scp: Option<serde_json::Value>,
    /// Claims only an ID token carries (OpenID Connect Core §2, §3.3.2.11): present, the token
    /// is one, whatever its header says.
    nonce: Option<serde::de::IgnoredAny>,
    at_hash: Option<serde::de::IgnoredAny>,
    c_hash: Option<serde::de::IgnoredAny>,
    s_hash: Option<serde::de::IgnoredAny>,
}

impl Claims {
    /// Whether the token carries a claim only ID tokens carry.
    fn of_an_id_token(&self) -> bool {
        self.nonce.is_some() || self.at_hash.is_some() || self.c_hash.is_some() || self.s_hash.is_some()
    }

    /// The identity the claims stand for: the subject (the client's id when there is no `sub`)
    /// with its client and scopes; none without either.
    pub(super) fn identity(self) -> Option<Identity> {
        let client_id = self.client_id.or(self.azp);
        let subject = self.sub.or_else(|| client_id.clone()).filter(|subject| !subject.is_empty())?;
        let mut scopes: BTreeSet<String> =
            self.scope.iter().flat_map(|s| s.split_ascii_whitespace()).map(str::to_owned).collect();
        match self.scp {
            Some(serde_json::Value::String(scp)) => scopes.extend(scp.split_ascii_whitespace().map(str::to_owned)),
            Some(serde_json::Value::Array(scp)) => scopes.extend(scp.into_iter().filter_map(|s| match s {
                serde_json::Value::String(s) => Some(s),
                _ => None,
            })),
            _ => {}
        }
        Some(Identity { subject, client_id, scopes })
    }
}

/// What a token's `typ` header says it is, compared as RFC 7515 §4.1.9 asks: without case, with
/// or without the `application/` prefix.
#[derive(Debug, PartialEq)]
enum TokenType {
    /// `at+jwt`: an access token by RFC 9068.
    AccessToken,
    /// `JWT`, or no `typ`: what most issuers write on their access tokens, and on ID tokens.
    Generic,
    /// Anything else: an ID token, a logout token, a token of another protocol.
    Other,
}

impl TokenType {
    fn of(typ: Option<&str>) -> TokenType {
        let Some(typ) = typ else { return TokenType::Generic };
        let lower = typ.to_ascii_lowercase();
        match lower.strip_prefix("application/").unwrap_or(&lower) {
            "at+jwt" => TokenType::AccessToken,
            "jwt" => TokenType::Generic,
            _ => TokenType::Other,
        }
    }
}

/// The algorithms a token may be signed with: public-key ones only, so a key set's public
/// key can never be used as a shared secret.
pub(super) fn asymmetric(algorithm: Algorithm) -> bool {
    !matches!(algorithm, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512)
}

impl Inner {
    async fn verify(&self, token: &str) -> Result<Identity, AuthError> {
        let refused = |why: &str| {
            tracing::debug!(target: "mcp_fusion::auth", "refused an access token: {why}");
            AuthError::Invalid
        };
        if token.len() > MAX_TOKEN_BYTES {
            return Err(refused("it is longer than 16 KiB"));
        }
        let header = jsonwebtoken::decode_header(token).map_err(|_| refused("it is not a JWT"))?;
        if !asymmetric(header.alg) {
            return Err(refused("it is signed with a shared secret, not the issuer's key"));
        }
        match TokenType::of(header.typ.as_deref()) {
            TokenType::AccessToken => {}
            TokenType::Generic if !self.only_at_jwt => {}
            TokenType::Generic => {
                return Err(refused("its type is not at+jwt, and only access tokens typed so are taken"));
            }
            TokenType::Other => {
                return Err(refused(&format!(
                    "its type is {}, not an access token's",
                    echo(header.typ.as_deref().unwrap_or_default())
                )));
            }
        }
        let key: Arc<Key> = match &self.keys {
            Keys::Fixed(keys) => keys.find(header.kid.as_deref(), header.alg).cloned(),
            Keys::Fetched(cache) => cache.key(header.kid.as_deref(), header.alg).await,
        }
        .ok_or_else(|| {
            refused(&format!("no key of the issuer has the id {}", echo(header.kid.as_deref().unwrap_or("(none)"))))
        })?;
        let mut validation = Validation::new(header.alg);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        let claims =
            jsonwebtoken::decode::<Claims>(token, &key.key, &validation).map_err(|error| match error.kind() {
                ErrorKind::ExpiredSignature => {
                    tracing::debug!(target: "mcp_fusion::auth", "refused an access token: it has expired");
                    AuthError::Expired
                }
                ErrorKind::InvalidAudience => refused("it was issued for another resource (aud)"),
                ErrorKind::InvalidIssuer => refused("another issuer issued it (iss)"),
                ErrorKind::InvalidSignature => refused("its signature does not verify"),
                ErrorKind::ImmatureSignature => refused("it is not valid yet (nbf)"),
                other => refused(&echo(&format!("{other:?}"))),
            })?;
        if claims.claims.of_an_id_token() {
            return Err(refused(
                "it carries ID-token claims (nonce, at_hash, c_hash or s_hash): an ID token is not an access token",
            ));
        }
        claims.claims.identity().ok_or_else(|| refused("it names no subject (sub) nor client (client_id)"))
    }
}

impl Authenticator for JwtAuthenticator {
    fn authenticate(&self, token: &str) -> BoxFuture<'static, Result<Identity, AuthError>> {
        let inner = Arc::clone(&self.inner);
        let token = token.to_owned();
        Box::pin(async move { inner.verify(&token).await })
    }
}

impl std::fmt::Debug for JwtAuthenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtAuthenticator")
            .field("issuer", &self.inner.issuer)
            .field("audience", &self.inner.audience)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use jsonwebtoken::{EncodingKey, Header};
    use serde_json::json;

    use super::*;

    const ISSUER: &str = "http://127.0.0.1:4000";
    const RESOURCE: &str = "http://127.0.0.1:8080/mcp";
    // Two Ed25519 keys made for these tests (PKCS#8, and the public key as JWK `x`).
    const KEY_A: &str = "MC4CAQAwBQYDK2VwBCIEIP9u7BqWB1SJFhtZ6FWIewPATp6tsFSsWQ7Zd6IIea3S";
    const X_A: &str = "FzqN01YAlOi5ljNGDsmOSOJEus3e_5VOJLL9xwKYKn8";
    const KEY_B: &str = "MC4CAQAwBQYDK2VwBCIEIFPMlhgGTlLbN9hYOt5dXZjpV7Wf23DdKlJMBAR4aCYH";
    const X_B: &str = "zKqXjcfpL3X-Ec_S71G_cEgwUb-HXuhbCC-eFjIUcN4";

    fn now() -> u64 {
        jsonwebtoken::get_current_timestamp()
    }

    fn sign(key: &str, kid: &str, claims: serde_json::Value) -> String {
        sign_typed(key, kid, Some("JWT"), claims)
    }

    fn sign_typed(key: &str, kid: &str, typ: Option<&str>, claims: serde_json::Value) -> String {
        use base64::Engine as _;
        let der = base64::engine::general_purpose::STANDARD.decode(key).unwrap();
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(kid.to_owned());
        header.typ = typ.map(str::to_owned);
        jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ed_der(&der)).unwrap()
    }

    fn claims() -> serde_json::Value {
        json!({"iss": ISSUER, "aud": RESOURCE, "sub": "alice", "client_id": "crm", "exp": now() + 300, "scope": "billing:read billing:write"})
    }

    fn with(changes: serde_json::Value) -> serde_json::Value {
        let mut claims = claims();
        for (key, value) in changes.as_object().unwrap() {
            match value {
                serde_json::Value::Null => claims.as_object_mut().unwrap().shift_remove(key),
                value => claims.as_object_mut().unwrap().insert(key.clone(), value.clone()),
            };
        }
        claims
    }

    fn jwks(keys: &[(&str, &str)]) -> Vec<u8> {
        let keys: Vec<_> =
            keys.iter().map(|(kid, x)| json!({"kty": "OKP", "crv": "Ed25519", "kid": kid, "x": x})).collect();
        serde_json::to_vec(&json!({ "keys": keys })).unwrap()
    }

    fn fixed() -> JwtAuthenticator {
        JwtAuthenticator::builder(ISSUER, RESOURCE).build_with_keys(&jwks(&[("a", X_A)])).unwrap()
    }

    #[tokio::test]
    async fn a_token_for_this_resource_from_the_issuer_is_an_identity_with_its_scopes() {
        let identity = fixed().authenticate(&sign(KEY_A, "a", claims())).await.unwrap();
        assert_eq!(identity, Identity::new("alice").client("crm").scopes(["billing:read", "billing:write"]));
        // `aud` as an array holding the resource, scopes as `scp`, no `sub`: the client is the subject.
        let token = sign(
            KEY_A,
            "a",
            with(json!({"aud": ["other", RESOURCE], "sub": null, "scope": null, "scp": ["billing:read"]})),
        );
        assert_eq!(
            fixed().authenticate(&token).await.unwrap(),
            Identity::new("crm").client("crm").scopes(["billing:read"])
        );
        let token = sign(KEY_A, "a", with(json!({"exp": now() - 10, "nbf": now() + 10})));
        assert!(fixed().authenticate(&token).await.is_ok(), "within the 30 s leeway");
    }

    #[tokio::test]
    async fn every_other_token_is_refused() {
        let expired = sign(KEY_A, "a", with(json!({"exp": now() - 120})));
        assert_eq!(fixed().authenticate(&expired).await, Err(AuthError::Expired));
        let good = sign(KEY_A, "a", claims());
        let mut bad_signature = good.clone();
        let last = bad_signature.pop().unwrap();
        bad_signature.push(if last == 'A' { 'B' } else { 'A' });
        let hs256 = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims(),
            &EncodingKey::from_secret(X_A.as_bytes()).unwrap(),
        )
        .unwrap();
        let refused = [
            sign(KEY_A, "a", with(json!({"aud": "http://127.0.0.1:8080/other"}))),
            sign(KEY_A, "a", with(json!({"aud": null}))),
            sign(KEY_A, "a", with(json!({"iss": "http://127.0.0.1:4001"}))),
            sign(KEY_A, "a", with(json!({"iss": null}))),
            sign(KEY_A, "a", with(json!({"exp": null}))),
            sign(KEY_A, "a", with(json!({"nbf": now() + 600}))),
            sign(KEY_A, "a", with(json!({"sub": null, "client_id": null}))),
            sign(KEY_A, "a", with(json!({"sub": 5}))),
            sign(KEY_B, "a", claims()),
            sign(KEY_B, "b", claims()),
            bad_signature,
            hs256,
            "garbage".to_owned(),
            "a.b.c".to_owned(),
            "e30.e30.".to_owned(),
            format!("{}.{}", "e".repeat(MAX_TOKEN_BYTES), "x"),
            String::new(),
        ];
        for token in refused {
            assert_eq!(fixed().authenticate(&token).await, Err(AuthError::Invalid), "{token:.80}");
        }
    }

    #[tokio::test]
    async fn only_access_tokens_are_taken_whatever_else_the_issuer_signs() {
        let strict = JwtAuthenticator::builder(ISSUER, RESOURCE)
            .only_at_jwt(true)
            .build_with_keys(&jwks(&[("a", X_A)]))
            .unwrap();
        for typ in [Some("at+jwt"), Some("AT+JWT"), Some("application/at+jwt")] {
            let token = sign_typed(KEY_A, "a", typ, claims());
            assert!(fixed().authenticate(&token).await.is_ok(), "{typ:?}");
            assert!(strict.authenticate(&token).await.is_ok(), "{typ:?}, strict");
        }
        // Most issuers type access tokens `JWT` or not at all: taken, unless strict.
        for typ in [Some("JWT"), Some("jwt"), None] {
            let token = sign_typed(KEY_A, "a", typ, claims());
            assert!(fixed().authenticate(&token).await.is_ok(), "{typ:?}");
            assert_eq!(strict.authenticate(&token).await, Err(AuthError::Invalid), "{typ:?}, strict");
        }
        // Signed by the issuer for this audience, unexpired, and still not access tokens.
        let id_token = with(json!({"nonce": "n-0S6_WzA2Mj", "at_hash": "77QmUPtjPfzWtF2AnpK9RQ", "auth_time": now()}));
        for (typ, claims) in [
            (Some("logout+jwt"), with(json!({"events": {"http://schemas.openid.net/event/backchannel-logout": {}}}))),
            (Some("application/logout+jwt"), claims()),
            (Some("id_token+jwt"), claims()),
            (Some("secevent+jwt"), claims()),
            (Some("JOSE"), claims()),
            (Some(""), claims()),
            (Some("JWT"), id_token.clone()),
            (None, id_token.clone()),
            (Some("at+jwt"), with(json!({"nonce": "n"}))),
            (Some("JWT"), with(json!({"c_hash": "x"}))),
            (Some("JWT"), with(json!({"s_hash": "x"}))),
        ] {
            let token = sign_typed(KEY_A, "a", typ, claims.clone());
            assert_eq!(fixed().authenticate(&token).await, Err(AuthError::Invalid), "{typ:?} {claims}");
        }
        // `auth_time` alone is an access token's claim too (RFC 9068 §2.2.1).
        assert!(fixed().authenticate(&sign(KEY_A, "a", with(json!({"auth_time": now()})))).await.is_ok());
    }

    /// A JWK set served over HTTP, counting its fetches; `keys` can change while it runs.
    async fn serve(keys: Arc<std::sync::Mutex<Vec<u8>>>, fetches: Arc<AtomicUsize>) -> String {
        let app = axum::Router::new().route(
            "/jwks",
            axum::routing::get(move || {
                fetches.fetch_add(1, Ordering::SeqCst);
                let body = keys.lock().unwrap().clone();
                async move { ([(http::header::CONTENT_TYPE, "application/json")], body) }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{address}/jwks")
    }

    #[tokio::test]
    async fn a_rotated_key_is_fetched_once_and_made_up_key_ids_cost_one_fetch_per_interval() {
        let keys = Arc::new(std::sync::Mutex::new(jwks(&[("a", X_A)])));
        let fetches = Arc::new(AtomicUsize::new(0));
        let url = serve(Arc::clone(&keys), Arc::clone(&fetches)).await;
        let tokens = JwtAuthenticator::builder(ISSUER, RESOURCE)
            .jwks_url(&url)
            .refetch_interval(Duration::ZERO)
            .build()
            .await
            .unwrap();
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
        assert!(tokens.authenticate(&sign(KEY_A, "a", claims())).await.is_ok());
        // The issuer rotates: key b signs from now on, key a is still published.
        *keys.lock().unwrap() = jwks(&[("b", X_B), ("a", X_A)]);
        assert!(tokens.authenticate(&sign(KEY_B, "b", claims())).await.is_ok());
        assert_eq!(fetches.load(Ordering::SeqCst), 2, "one fetch for the new key id");
        assert!(tokens.authenticate(&sign(KEY_B, "b", claims())).await.is_ok());
        assert_eq!(fetches.load(Ordering::SeqCst), 2, "held from then on");

        let bounded = JwtAuthenticator::builder(ISSUER, RESOURCE).jwks_url(&url).build().await.unwrap();
        let before = fetches.load(Ordering::SeqCst);
        let made_up: Vec<_> = (0..200).map(|n| sign(KEY_B, &format!("made-up-{n}"), claims())).collect();
        let results = futures_util::future::join_all(made_up.iter().map(|token| bounded.authenticate(token))).await;
        assert!(results.iter().all(|result| *result == Err(AuthError::Invalid)));
        assert_eq!(fetches.load(Ordering::SeqCst), before, "fetched at start; the next fetch waits 30 s");
    }

    #[tokio::test]
    async fn set_up_refuses_what_cannot_be_used() {
        let err = JwtAuthenticator::builder("http://id.example.com", RESOURCE).build().await.unwrap_err();
        assert!(matches!(err, OAuthError::Uri { what: "issuer", .. }), "{err}");
        let err = JwtAuthenticator::builder(ISSUER, "https://mcp.example.com/mcp#x")
            .build_with_keys(&jwks(&[("a", X_A)]))
            .unwrap_err();
        assert!(matches!(err, OAuthError::Uri { what: "resource", .. }), "{err}");
        let err = JwtAuthenticator::builder(ISSUER, RESOURCE)
            .build_with_keys(br#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#)
            .unwrap_err();
        assert!(matches!(err, OAuthError::NoUsableKey { .. }), "{err}");
        // Nothing listens there: the error names the URL and says what to check.
        let err = JwtAuthenticator::builder("http://127.0.0.1:9", RESOURCE).build().await.unwrap_err();
        assert!(matches!(err, OAuthError::Unreachable { .. }), "{err}");
    }
}
