//! An OAuth 2.1 resource server in one value: tokens checked for this server's resource URI
//! (as JWTs against the issuer's keys, or by introspection), its Protected Resource Metadata
//! served, every `401` naming it, and its host accepted.

use super::{HttpConfig, ProtectedResource, ProtectedResourceError};
use crate::auth::{Introspection, JwtAuthenticator, OAuthError};

/// How the HTTP transport checks OAuth access tokens, set up on an [`HttpConfig`] with
/// [`OAuth::configure`].
///
/// ```no_run
/// use mcp_fusion::http::{HttpConfig, OAuth};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let config = HttpConfig::new("0.0.0.0:8080");
/// let config = OAuth::new("https://id.example.com", "https://mcp.example.com/mcp")
///     .scopes(["billing:read", "billing:write"])
///     .configure(config)
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct OAuth {
    issuer: String,
    resource: String,
    scopes: Vec<String>,
    jwks_url: Option<String>,
    only_at_jwt: bool,
    introspection: Option<(String, String, String)>,
}

/// Why [`OAuth::configure`] could not set the transport up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthSetupError {
    /// The issuer, its keys or its endpoints.
    #[error(transparent)]
    Issuer(#[from] OAuthError),
    /// The resource's metadata.
    #[error(transparent)]
    Metadata(#[from] ProtectedResourceError),
}

impl OAuth {
    /// Tokens `issuer` issues for `resource`, this server's canonical URI (what clients
    /// connect to, and the audience its tokens must name).
    pub fn new(issuer: impl Into<String>, resource: impl Into<String>) -> OAuth {
        OAuth {
            issuer: issuer.into(),
            resource: resource.into(),
            scopes: Vec::new(),
            jwks_url: None,
            only_at_jwt: false,
            introspection: None,
        }
    }

    /// The scopes the server's entries ask for, published as `scopes_supported`.
    pub fn scopes<I, S>(mut self, scopes: I) -> OAuth
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Reads the issuer's keys from `url` instead of its metadata's `jwks_uri`.
    pub fn jwks_url(mut self, url: impl Into<String>) -> OAuth {
        self.jwks_url = Some(url.into());
        self
    }

    /// Takes only JWTs typed `at+jwt` (RFC 9068): see [`JwtBuilder::only_at_jwt`].
    ///
    /// [`JwtBuilder::only_at_jwt`]: crate::auth::JwtBuilder::only_at_jwt
    pub fn only_at_jwt(mut self, only: bool) -> OAuth {
        self.only_at_jwt = only;
        self
    }

    /// Checks opaque tokens at the issuer's introspection `endpoint` (RFC 7662), as the OAuth
    /// client `client_id` with `client_secret`, instead of reading them as JWTs.
    pub fn introspection(
        mut self,
        endpoint: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> OAuth {
        self.introspection = Some((endpoint.into(), client_id.into(), client_secret.into()));
        self
    }

    /// `config` with the authenticator (the issuer's keys fetched now, so a wrong issuer fails
    /// at start), the Protected Resource Metadata, and the resource's host accepted.
    pub async fn configure(self, config: HttpConfig) -> Result<HttpConfig, OAuthSetupError> {
        let resource = ProtectedResource::new(&self.resource)?
            .authorization_server(&self.issuer)?
            .scopes(self.scopes.iter().map(String::as_str))?;
        let host = http::Uri::try_from(resource.resource()).ok().and_then(|uri| uri.authority().map(|a| a.to_string()));
        let config = match self.introspection {
            Some((endpoint, client_id, secret)) => config
                .authenticator(Introspection::new(&endpoint, &self.resource, client_id, secret)?.issuer(&self.issuer)),
            None => {
                let mut tokens = JwtAuthenticator::builder(&self.issuer, &self.resource).only_at_jwt(self.only_at_jwt);
                if let Some(url) = self.jwks_url {
                    tokens = tokens.jwks_url(url);
                }
                config.authenticator(tokens.build().await?)
            }
        };
        let config = config.protected_resource(resource);
        Ok(match host {
            Some(host) => config.accept_host(host),
            None => config,
        })
    }
}
