//! An issuer's signing keys (a JWK set, RFC 7517): read one key at a time, so a key of a kind
//! this server does not verify with leaves the others usable, and kept fresh by fetching the
//! set again when a token names a key the server has not seen — at most once per interval, so
//! a flood of made-up key ids cannot hammer the issuer.

use std::str::FromStr as _;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use tokio::time::Instant;

use super::OAuthError;
use super::fetch::{Fetcher, parse};

/// The most keys kept of one set: issuers publish a handful.
const MAX_KEYS: usize = 64;

/// One verification key and the algorithms it verifies.
pub(super) struct Key {
    kid: Option<String>,
    algorithms: Vec<Algorithm>,
    pub(super) key: DecodingKey,
}

/// The usable keys of a JWK set.
#[derive(Default)]
pub(super) struct KeySet {
    keys: Vec<Arc<Key>>,
}

#[derive(serde::Deserialize)]
struct Document {
    keys: Vec<serde_json::Value>,
}

impl KeySet {
    /// The signature keys of the JWK set `body` (RSA, P-256, P-384, Ed25519); keys of other
    /// kinds, for encryption, or that do not decode are left out.
    pub(super) fn parse(body: &[u8]) -> Result<KeySet, String> {
        Ok(KeySet::of(parse(body)?))
    }

    fn of(document: Document) -> KeySet {
        KeySet { keys: document.keys.into_iter().filter_map(usable).take(MAX_KEYS).map(Arc::new).collect() }
    }

    /// How many keys it holds.
    pub(super) fn len(&self) -> usize {
        self.keys.len()
    }

    /// The key a token signed with `algorithm` names by `kid`; without a `kid`, the one key
    /// that verifies `algorithm`, if there is only one (trying each would let one token cost
    /// as many verifications as the set has keys).
    pub(super) fn find(&self, kid: Option<&str>, algorithm: Algorithm) -> Option<&Arc<Key>> {
        let mut candidates = self.keys.iter().filter(|key| key.algorithms.contains(&algorithm));
        match kid {
            Some(kid) => candidates.find(|key| key.kid.as_deref() == Some(kid)),
            None => {
                let first = candidates.next()?;
                candidates.next().is_none().then_some(first)
            }
        }
    }
}

/// The key `value` holds, if it is a signature key this server verifies with.
fn usable(value: serde_json::Value) -> Option<Key> {
    let jwk: Jwk = serde_json::from_value(value).ok()?;
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))) {
        return None;
    }
    let by_kind: &[Algorithm] = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => &[
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
        ],
        AlgorithmParameters::EllipticCurve(params) => match params.curve {
            EllipticCurve::P256 => &[Algorithm::ES256],
            EllipticCurve::P384 => &[Algorithm::ES384],
            _ => return None,
        },
        AlgorithmParameters::OctetKeyPair(params) if params.curve == EllipticCurve::Ed25519 => &[Algorithm::EdDSA],
        // Shared secrets (`oct`) never verify a token from a public key set.
        _ => return None,
    };
    let algorithms = match &jwk.common.key_algorithm {
        // A key that names its algorithm verifies that one only, if it fits the key.
        Some(named) => {
            let named = Algorithm::from_str(&named.to_string()).ok()?;
            vec![named].into_iter().filter(|named| by_kind.contains(named)).collect()
        }
        None => by_kind.to_vec(),
    };
    if algorithms.is_empty() {
        return None;
    }
    let key = DecodingKey::from_jwk(&jwk).ok()?;
    Some(Key { kid: jwk.common.key_id.clone(), algorithms, key })
}

/// The keys of one JWK set URL, fetched again when a token names a key they lack.
pub(super) struct KeyCache {
    url: String,
    fetcher: Fetcher,
    keys: ArcSwap<KeySet>,
    /// When the set was last fetched; held while fetching, so one fetch serves every waiter.
    fetched: tokio::sync::Mutex<Instant>,
    refetch_interval: Duration,
}

impl KeyCache {
    /// Fetches the set at `url`, which must hold a usable key.
    pub(super) async fn load(
        url: String,
        fetcher: Fetcher,
        refetch_interval: Duration,
    ) -> Result<KeyCache, OAuthError> {
        let keys = fetch(&fetcher, &url).await?;
        if keys.len() == 0 {
            return Err(OAuthError::NoUsableKey { url });
        }
        Ok(KeyCache {
            url,
            fetcher,
            keys: ArcSwap::from_pointee(keys),
            fetched: tokio::sync::Mutex::new(Instant::now()),
            refetch_interval,
        })
    }

    /// The key `kid` names for `algorithm`: from the set held, else from the set fetched again
    /// if the last fetch is older than the refetch interval.
    pub(super) async fn key(&self, kid: Option<&str>, algorithm: Algorithm) -> Option<Arc<Key>> {
        if let Some(key) = self.keys.load().find(kid, algorithm) {
            return Some(Arc::clone(key));
        }
        let mut fetched = self.fetched.lock().await;
        // Another call may have fetched the set while this one waited.
        if let Some(key) = self.keys.load().find(kid, algorithm) {
            return Some(Arc::clone(key));
        }
        if fetched.elapsed() < self.refetch_interval {
            return None;
        }
        *fetched = Instant::now();
        match fetch(&self.fetcher, &self.url).await {
            Ok(keys) if keys.len() > 0 => {
                tracing::info!(url = %self.url, keys = keys.len(), "fetched the issuer's keys again: a token named a key not seen before");
                self.keys.store(Arc::new(keys));
            }
            Ok(_) => {
                tracing::warn!(url = %self.url, "the issuer's key set holds no usable key now; keeping the keys held")
            }
            Err(error) => tracing::warn!("cannot fetch the issuer's keys again, keeping the keys held: {error}"),
        }
        self.keys.load().find(kid, algorithm).cloned()
    }
}

async fn fetch(fetcher: &Fetcher, url: &str) -> Result<KeySet, OAuthError> {
    Ok(KeySet::of(fetcher.get::<Document>(url, "a JWK set").await?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_signature_keys_of_known_kinds_are_kept() {
        let set = br#"{"keys":[
            {"kty":"OKP","crv":"Ed25519","kid":"ed","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},
            {"kty":"oct","kid":"secret","k":"c2VjcmV0"},
            {"kty":"OKP","crv":"Ed25519","kid":"enc","use":"enc","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},
            {"kty":"OKP","crv":"Ed25519","kid":"mislabelled","alg":"RS256","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},
            {"kty":"XYZ","kid":"unknown"},
            "not a key",
            {"kty":"RSA","kid":"bad-rsa","n":"!!","e":"AQAB"}
        ]}"#;
        let keys = KeySet::parse(set).unwrap();
        assert_eq!(keys.len(), 1, "only the Ed25519 signature key is usable");
        assert!(keys.find(Some("ed"), Algorithm::EdDSA).is_some());
        assert!(keys.find(None, Algorithm::EdDSA).is_some(), "the one key for its algorithm");
        assert!(keys.find(Some("ed"), Algorithm::RS256).is_none());
        assert!(keys.find(Some("secret"), Algorithm::HS256).is_none());
        for garbage in [&b""[..], b"{}", b"{\"keys\":5}", b"[]", b"\xff\xfe"] {
            assert!(KeySet::parse(garbage).is_err());
        }
    }
}
