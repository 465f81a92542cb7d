//! What can go wrong setting up an OAuth authenticator: a URI that cannot be used, an issuer
//! that cannot be reached or answers something else than its metadata.

/// Why an OAuth authenticator could not be set up, or its issuer not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// A configured URI that is not absolute `https` (or `http` on the loopback).
    #[error("the {what} {uri} cannot be used, because {reason}")]
    Uri {
        /// What it was meant to be (`issuer`, `resource`, `JWKS URL`).
        what: &'static str,
        /// The URI, quoted and cut (see [`mcp_fusion_wire::echo`]).
        uri: String,
        /// Why it cannot be used.
        reason: &'static str,
    },
    /// The issuer (or an endpoint of its) did not answer.
    #[error("cannot reach {url}: {reason}; check that the issuer is up and the URL is right")]
    Unreachable {
        /// What was asked for.
        url: String,
        /// What the HTTP client said.
        reason: String,
    },
    /// It answered with another status than 200.
    #[error("{url} answered HTTP {status}; expected 200 with a JSON document")]
    Status {
        /// What was asked for.
        url: String,
        /// The status it answered.
        status: u16,
    },
    /// It answered with something else than the document expected.
    #[error("{url} did not answer with {expected}: {reason}")]
    Document {
        /// What was asked for.
        url: String,
        /// What it should have been (`authorization server metadata`, `a JWK set`).
        expected: &'static str,
        /// What is wrong with it (quoted where it repeats the document).
        reason: String,
    },
    /// The metadata describes another issuer (RFC 8414 §3.3: it must be the one asked about).
    #[error(
        "the metadata at {url} is for the issuer {found}, not {expected}; configure the issuer exactly as it names itself"
    )]
    IssuerMismatch {
        /// Where the metadata was read.
        url: String,
        /// The issuer configured.
        expected: String,
        /// The issuer the document names, quoted and cut.
        found: String,
    },
    /// The metadata leaves out an endpoint the authenticator needs.
    #[error("the metadata of {issuer} names no {what}; give it explicitly")]
    Missing {
        /// The issuer.
        issuer: String,
        /// What is missing (`jwks_uri`, `introspection_endpoint`).
        what: &'static str,
    },
    /// The HTTP client could not start (its TLS back end, most likely).
    #[error("the HTTP client for OAuth cannot start: {reason}")]
    HttpClient {
        /// What the client said.
        reason: String,
    },
    /// The key set has no key of a kind tokens can be verified with.
    #[error(
        "the key set at {url} holds no key this server can verify a token with (RSA, P-256, P-384 or Ed25519 for signatures)"
    )]
    NoUsableKey {
        /// Where it was read.
        url: String,
    },
}
