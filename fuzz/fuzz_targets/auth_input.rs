//! What the server reads of untrusted authorization input: an `Authorization` header's value,
//! a bearer token as a JWT (its header, and claims the issuer's key really signed), a JWK set
//! and an authorization server's metadata. None may panic; a token is an identity only when
//! signed by the key held, issued by the issuer, for the resource, and unexpired.

#![no_main]

use std::sync::OnceLock;

use arbitrary::Arbitrary;
use base64::Engine as _;
use jsonwebtoken::{Algorithm, EncodingKey};
use libfuzzer_sys::fuzz_target;
use mcp_fusion::auth::{Authenticator as _, AuthorizationServer, JwtAuthenticator};

const ISSUER: &str = "https://id.example.com";
const RESOURCE: &str = "https://mcp.example.com/mcp";
/// An Ed25519 key made for this target (PKCS#8), and its public half as a JWK set.
const KEY: &str = "MC4CAQAwBQYDK2VwBCIEIP9u7BqWB1SJFhtZ6FWIewPATp6tsFSsWQ7Zd6IIea3S";
const JWKS: &str = r#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k","x":"FzqN01YAlOi5ljNGDsmOSOJEus3e_5VOJLL9xwKYKn8"}]}"#;

#[derive(Arbitrary, Debug)]
enum Input {
    /// The bytes of an `Authorization` header.
    Header(Vec<u8>),
    /// A bearer token as sent.
    Token(String),
    /// A JWT header and claims, signed with the key the server holds.
    Signed { header: Vec<u8>, claims: Vec<u8> },
    /// A JWK set, as an issuer publishes it.
    Jwks(Vec<u8>),
    /// An authorization server's metadata document.
    Metadata(Vec<u8>),
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap())
}

fn tokens() -> &'static JwtAuthenticator {
    static TOKENS: OnceLock<JwtAuthenticator> = OnceLock::new();
    TOKENS.get_or_init(|| JwtAuthenticator::builder(ISSUER, RESOURCE).build_with_keys(JWKS.as_bytes()).unwrap())
}

fn signed(header: &[u8], claims: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let message = format!("{}.{}", b64.encode(header), b64.encode(claims));
    let key = EncodingKey::from_ed_der(&base64::engine::general_purpose::STANDARD.decode(KEY).unwrap());
    let signature = jsonwebtoken::crypto::sign(message.as_bytes(), &key, Algorithm::EdDSA).unwrap();
    format!("{message}.{signature}")
}

fuzz_target!(|input: Input| {
    match input {
        Input::Header(value) => {
            if let Some(token) = mcp_fusion::__fuzz::bearer_token(&value) {
                assert!(!token.is_empty() && token.bytes().all(|b| b.is_ascii_graphic()), "{token:?}");
                assert!(runtime().block_on(tokens().authenticate(&token)).is_err(), "an unsigned token: {token:?}");
            }
        }
        Input::Token(token) => {
            assert!(runtime().block_on(tokens().authenticate(&token)).is_err(), "an unsigned token: {token:?}");
        }
        Input::Signed { header, claims } => {
            let token = signed(&header, &claims);
            if let Ok(identity) = runtime().block_on(tokens().authenticate(&token)) {
                // Accepted: then the claims name the issuer and the resource, and a subject.
                let claims: serde_json::Value = serde_json::from_slice(&claims).unwrap();
                assert_eq!(claims["iss"], ISSUER);
                let aud = &claims["aud"];
                assert!(aud == RESOURCE || aud.as_array().is_some_and(|all| all.iter().any(|a| a == RESOURCE)), "{aud}");
                assert!(!identity.subject.is_empty());
            }
        }
        Input::Jwks(document) => {
            let _ = JwtAuthenticator::builder(ISSUER, RESOURCE).build_with_keys(&document);
        }
        Input::Metadata(document) => {
            let url = "https://id.example.com/.well-known/oauth-authorization-server";
            if let Ok(server) = AuthorizationServer::from_document(ISSUER, url, &document) {
                assert_eq!(server.issuer, ISSUER);
            }
        }
    }
});
