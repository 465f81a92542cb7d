//! Where an issuer keeps its keys and endpoints: its authorization server metadata (RFC 8414),
//! or its OpenID Connect discovery document when it publishes only that.

use mcp_fusion_wire::echo;
use serde::Deserialize;

use super::OAuthError;
use super::fetch::{Fetcher, parse};
use super::uri::split_uri;

/// What the server's checks need of an issuer's metadata.
///
/// ```
/// use mcp_fusion::auth::AuthorizationServer;
///
/// let urls = AuthorizationServer::metadata_urls("https://id.example.com/tenant").unwrap();
/// assert_eq!(urls[0], "https://id.example.com/.well-known/oauth-authorization-server/tenant");
/// assert_eq!(urls[1], "https://id.example.com/tenant/.well-known/openid-configuration");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthorizationServer {
    /// The issuer, as it names itself (and as tokens name it in `iss`).
    pub issuer: String,
    /// Where its signing keys are published.
    pub jwks_uri: Option<String>,
    /// Its RFC 7662 introspection endpoint.
    pub introspection_endpoint: Option<String>,
    /// Its token endpoint.
    pub token_endpoint: Option<String>,
}

#[derive(Deserialize)]
struct Document {
    issuer: String,
    jwks_uri: Option<String>,
    introspection_endpoint: Option<String>,
    token_endpoint: Option<String>,
}

const EXPECTED: &str = "authorization server metadata";

impl AuthorizationServer {
    /// Reads `issuer`'s metadata: RFC 8414's document first, OpenID Connect's if there is none.
    pub async fn discover(issuer: &str) -> Result<AuthorizationServer, OAuthError> {
        AuthorizationServer::discover_with(&Fetcher::new()?, issuer).await
    }

    pub(super) async fn discover_with(fetcher: &Fetcher, issuer: &str) -> Result<AuthorizationServer, OAuthError> {
        let [oauth, openid] = AuthorizationServer::metadata_urls(issuer)?;
        let first = match fetcher.get::<serde_json::Value>(&oauth, EXPECTED).await {
            Ok(document) => return AuthorizationServer::from_value(issuer, &oauth, document),
            Err(error) => error,
        };
        match fetcher.get::<serde_json::Value>(&openid, EXPECTED).await {
            Ok(document) => AuthorizationServer::from_value(issuer, &openid, document),
            // The RFC 8414 document's failure says more, unless it was only absent.
            Err(second) if matches!(first, OAuthError::Status { status: 404, .. }) => Err(second),
            Err(_) => Err(first),
        }
    }

    /// Where `issuer`'s metadata may be: RFC 8414's well-known URI (inserted before the
    /// issuer's path), then OpenID Connect's (appended to it).
    pub fn metadata_urls(issuer: &str) -> Result<[String; 2], OAuthError> {
        let (origin, path) =
            split_uri(issuer, false).map_err(|reason| OAuthError::Uri { what: "issuer", uri: echo(issuer), reason })?;
        let path = path.trim_end_matches('/');
        Ok([
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ])
    }

    /// The metadata document `body`, read at `url` for `issuer`: it must name that issuer, and
    /// every endpoint it gives must be a URI the server may call.
    pub fn from_document(issuer: &str, url: &str, body: &[u8]) -> Result<AuthorizationServer, OAuthError> {
        let value =
            parse(body).map_err(|reason| OAuthError::Document { url: url.to_owned(), expected: EXPECTED, reason })?;
        AuthorizationServer::from_value(issuer, url, value)
    }

    fn from_value(issuer: &str, url: &str, value: serde_json::Value) -> Result<AuthorizationServer, OAuthError> {
        let document: Document = serde_json::from_value(value).map_err(|error| OAuthError::Document {
            url: url.to_owned(),
            expected: EXPECTED,
            reason: echo(&error.to_string()),
        })?;
        if document.issuer != issuer {
            return Err(OAuthError::IssuerMismatch {
                url: url.to_owned(),
                expected: issuer.to_owned(),
                found: echo(&document.issuer),
            });
        }
        for (what, endpoint) in [
            ("jwks_uri", &document.jwks_uri),
            ("introspection_endpoint", &document.introspection_endpoint),
            ("token_endpoint", &document.token_endpoint),
        ] {
            if let Some(endpoint) = endpoint {
                split_uri(endpoint, true).map_err(|reason| OAuthError::Document {
                    url: url.to_owned(),
                    expected: EXPECTED,
                    reason: format!("its {what} {} cannot be used, because {reason}", echo(endpoint)),
                })?;
            }
        }
        Ok(AuthorizationServer {
            issuer: document.issuer,
            jwks_uri: document.jwks_uri,
            introspection_endpoint: document.introspection_endpoint,
            token_endpoint: document.token_endpoint,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issuer_without_a_path_has_both_documents_at_the_root() {
        let urls = AuthorizationServer::metadata_urls("http://127.0.0.1:4000").unwrap();
        assert_eq!(urls[0], "http://127.0.0.1:4000/.well-known/oauth-authorization-server");
        assert_eq!(urls[1], "http://127.0.0.1:4000/.well-known/openid-configuration");
        let err = AuthorizationServer::metadata_urls("http://id.example.com").unwrap_err();
        assert!(err.to_string().contains("loopback host only"), "{err}");
    }

    #[test]
    fn the_document_must_name_the_issuer_and_usable_endpoints() {
        let issuer = "https://id.example.com";
        let url = "https://id.example.com/.well-known/oauth-authorization-server";
        let good = br#"{"issuer":"https://id.example.com","jwks_uri":"https://id.example.com/jwks","extra":1}"#;
        let server = AuthorizationServer::from_document(issuer, url, good).unwrap();
        assert_eq!(server.jwks_uri.as_deref(), Some("https://id.example.com/jwks"));
        let other = br#"{"issuer":"https://evil.example.com\n"}"#;
        let err = AuthorizationServer::from_document(issuer, url, other).unwrap_err();
        assert!(matches!(err, OAuthError::IssuerMismatch { .. }) && !err.to_string().contains('\n'), "{err}");
        for garbage in [
            &b""[..],
            b"[]",
            b"{}",
            b"{\"issuer\":5}",
            b"\xff",
            br#"{"issuer":"https://id.example.com","jwks_uri":"http://a.example.com/k"}"#,
        ] {
            let err = AuthorizationServer::from_document(issuer, url, garbage).unwrap_err();
            assert!(matches!(err, OAuthError::Document { .. }), "{err}");
        }
    }
}
