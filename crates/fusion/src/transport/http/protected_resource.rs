//! The server as an OAuth 2.0 protected resource (RFC 9728): the metadata document a client
//! reads to learn which authorization servers issue its tokens and which scopes it knows, and
//! where that document is served, so that a `401` can point at it.
//!
//! The resource URI is the server's canonical URI: the audience (RFC 8707) its tokens must
//! name. The document is served at the path-aware well-known URI (the resource's path after
//! `/.well-known/oauth-protected-resource`) and at the bare well-known path, and every `401`
//! names the former in `WWW-Authenticate: Bearer resource_metadata="…"`.

use serde_json::json;

use crate::auth::uri::{self, is_scope_token};

/// The well-known path prefix of RFC 9728.
pub(super) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// This server as an OAuth protected resource: its canonical URI, the authorization servers
/// that issue its tokens, the scopes it knows.
///
/// ```
/// use mcp_fusion::http::ProtectedResource;
///
/// # fn main() -> Result<(), mcp_fusion::http::ProtectedResourceError> {
/// let resource = ProtectedResource::new("https://mcp.example.com/mcp")?
///     .authorization_server("https://auth.example.com")?
///     .scopes(["billing:read", "billing:write"])?;
/// assert_eq!(resource.metadata_url(), "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedResource {
    resource: String,
    /// Where the metadata is served: scheme and authority of the resource, then the
    /// well-known path and the resource's path.
    metadata_url: String,
    authorization_servers: Vec<String>,
    scopes: Vec<String>,
}

/// Why a URI or a scope cannot describe a protected resource.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtectedResourceError {
    /// The URI is not an absolute `https` URI (or `http` on a loopback host), or has a query,
    /// a fragment or characters a header cannot quote.
    #[error("{what} {uri:?} is not usable: {reason}")]
    Uri {
        /// `the resource URI` or `the authorization server`.
        what: &'static str,
        /// The URI as given.
        uri: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The scope is not a scope token of RFC 6749 (printable ASCII, no space, `"` or `\`).
    #[error("the scope {scope:?} is not a scope token: printable ASCII without spaces, quotes or backslashes")]
    Scope {
        /// The scope as given.
        scope: String,
    },
}

impl ProtectedResource {
    /// The resource whose canonical URI is `resource` (`https://mcp.example.com/mcp`), the
    /// audience its tokens name; no authorization server and no scopes yet.
    pub fn new(resource: &str) -> Result<ProtectedResource, ProtectedResourceError> {
        let (origin, path) = split_uri("the resource URI", resource)?;
        let path = path.trim_end_matches('/');
        Ok(ProtectedResource {
            resource: resource.to_owned(),
            metadata_url: format!("{origin}{WELL_KNOWN}{path}"),
            authorization_servers: Vec::new(),
            scopes: Vec::new(),
        })
    }

    /// Adds `issuer`, the issuer URI of an authorization server whose tokens this resource
    /// accepts.
    pub fn authorization_server(mut self, issuer: &str) -> Result<ProtectedResource, ProtectedResourceError> {
        split_uri("the authorization server", issuer)?;
        if !self.authorization_servers.iter().any(|known| known == issuer) {
            self.authorization_servers.push(issuer.to_owned());
        }
        Ok(self)
    }

    /// Adds the scopes the resource knows, as listed in `scopes_supported`.
    pub fn scopes<I, S>(mut self, scopes: I) -> Result<ProtectedResource, ProtectedResourceError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        for scope in scopes {
            let scope = scope.into();
            if !is_scope_token(&scope) {
                return Err(ProtectedResourceError::Scope { scope });
            }
            if !self.scopes.contains(&scope) {
                self.scopes.push(scope);
            }
        }
        Ok(self)
    }

    /// The canonical URI: the audience a token for this resource names.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Where the metadata document is served (the path-aware well-known URI).
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// The authorization servers' issuer URIs.
    pub fn authorization_servers(&self) -> &[String] {
        &self.authorization_servers
    }

    /// The scopes the resource knows.
    pub fn scopes_supported(&self) -> &[String] {
        &self.scopes
    }

    /// The metadata document (RFC 9728 §2), as JSON.
    pub fn metadata(&self) -> serde_json::Value {
        let mut document = json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "scopes_supported": self.scopes,
            "bearer_methods_supported": ["header"],
        });
        // No scopes known: the field is left out rather than saying there are none.
        if self.scopes.is_empty() {
            document.as_object_mut().map(|fields| fields.shift_remove("scopes_supported"));
        }
        document
    }

    /// The paths the document is served at on this server: the path-aware one, and the bare
    /// well-known path (the same when the resource has no path).
    pub(super) fn metadata_paths(&self) -> [&str; 2] {
        let path_aware = self.metadata_url.find(WELL_KNOWN).map_or(WELL_KNOWN, |at| &self.metadata_url[at..]);
        [path_aware, WELL_KNOWN]
    }
}

/// The origin and path of `uri`, when it may name a protected resource or an authorization
/// server (see [`uri::split_uri`]).
fn split_uri<'u>(what: &'static str, uri: &'u str) -> Result<(&'u str, &'u str), ProtectedResourceError> {
    uri::split_uri(uri, false).map_err(|reason| ProtectedResourceError::Uri { what, uri: uri.to_owned(), reason })
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use tokio_util::sync::CancellationToken;
    use tower::ServiceExt as _;

    use super::*;
    use crate::FusionServer;
    use crate::transport::http::{HttpConfig, router};

    #[test]
    fn the_metadata_url_puts_the_well_known_path_before_the_resource_path() {
        let at = |uri: &str| ProtectedResource::new(uri).unwrap().metadata_url().to_owned();
        assert_eq!(
            at("https://mcp.example.com/mcp"),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(at("https://mcp.example.com"), "https://mcp.example.com/.well-known/oauth-protected-resource");
        assert_eq!(at("https://mcp.example.com/"), "https://mcp.example.com/.well-known/oauth-protected-resource");
        assert_eq!(
            at("http://127.0.0.1:8080/a/mcp/"),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource/a/mcp"
        );
        let resource = ProtectedResource::new("https://h.example/mcp").unwrap();
        assert_eq!(resource.metadata_paths(), ["/.well-known/oauth-protected-resource/mcp", WELL_KNOWN]);
        let bare = ProtectedResource::new("https://h.example").unwrap();
        assert_eq!(bare.metadata_paths(), [WELL_KNOWN, WELL_KNOWN]);
    }

    #[test]
    fn the_document_lists_servers_and_scopes_once() {
        let resource = ProtectedResource::new("https://mcp.example.com/mcp")
            .and_then(|r| r.authorization_server("https://auth.example.com"))
            .and_then(|r| r.authorization_server("https://auth.example.com"))
            .and_then(|r| r.scopes(["billing:read", "billing:write", "billing:read"]))
            .unwrap();
        assert_eq!(
            resource.metadata(),
            json!({
                "resource": "https://mcp.example.com/mcp",
                "authorization_servers": ["https://auth.example.com"],
                "scopes_supported": ["billing:read", "billing:write"],
                "bearer_methods_supported": ["header"],
            })
        );
    }

    #[test]
    fn garbage_uris_and_scopes_are_refused_with_the_reason() {
        for (uri, reason) in [
            ("", "it is not an absolute URI"),
            ("/mcp", "it is not an absolute URI"),
            ("mcp.example.com/mcp", "it is not an absolute URI"),
            ("http://mcp.example.com/mcp", "plain http is accepted for a loopback host only"),
            ("ftp://mcp.example.com/mcp", "its scheme is neither"),
            ("https://mcp.example.com/mcp#top", "it has a fragment"),
            ("https://mcp.example.com/mcp?tenant=a", "it has a query"),
            ("https://mcp.example.com/m\"cp", "a quote"),
            ("https://mcp.example.com/m cp", "a space"),
            ("https://mcp.example.com/mcp\r\nX-Evil: 1", "not printable ASCII"),
            ("https://mcp.example.com/é", "not printable ASCII"),
            ("https://user:pw@mcp.example.com/mcp", "user information"),
            ("https://[::1/mcp", "it is not an absolute URI"),
        ] {
            let error = ProtectedResource::new(uri).unwrap_err().to_string();
            assert!(error.starts_with(&format!("the resource URI {uri:?} is not usable: ")), "{error}");
            assert!(error.contains(reason), "{uri:?}: {error}");
        }
        let resource = ProtectedResource::new("http://localhost:3000/mcp").unwrap();
        let error = resource.clone().authorization_server("auth.example.com").unwrap_err();
        assert!(error.to_string().starts_with("the authorization server \"auth.example.com\""), "{error}");
        for scope in ["", "two words", "quo\"te", "back\\slash", "tab\t", "é"] {
            let error = resource.clone().scopes([scope]).unwrap_err();
            assert_eq!(error, ProtectedResourceError::Scope { scope: scope.to_owned() });
        }
    }

    #[tokio::test]
    async fn the_router_serves_the_document_at_both_paths_for_any_caller() {
        let server = FusionServer::builder::<()>("s", "1").build(()).unwrap();
        let resource = ProtectedResource::new("http://localhost/mcp").unwrap();
        let config = HttpConfig::new("127.0.0.1:8080")
            .authenticator(crate::auth::StaticTokens::new())
            .protected_resource(resource.clone());
        let app = router(server, &config, CancellationToken::new());
        let read = |path: &str, host: &str| {
            let request = http::Request::get(path).header(http::header::HOST, host).body(Body::empty()).unwrap();
            let app = app.clone();
            async move {
                let response = app.oneshot(request).await.unwrap();
                let status = response.status().as_u16();
                let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
                (status, serde_json::from_slice::<serde_json::Value>(&body).ok())
            }
        };
        for path in ["/.well-known/oauth-protected-resource/mcp", WELL_KNOWN] {
            assert_eq!(read(path, "localhost").await, (200, Some(resource.metadata())), "{path}");
        }
        assert_eq!(read("/.well-known/oauth-protected-resource/mcp", "evil.example").await.0, 403);
    }
}
