//! The OAuth 2.0 client-credentials grant (RFC 6749 §4.4): the gateway asks an authorization
//! server's token endpoint for its own bearer token for an HTTP upstream, the upstream's URL
//! as the token's audience (a resource indicator, RFC 8707).
//!
//! What the endpoint answers is outside input: read up to 64 KiB, checked field by field, and
//! whatever of it reaches an error's message (its `error` code, its `error_description`, an
//! unexpected `token_type`) is quoted, escaped and cut there, so no log line or envelope shows
//! it raw. Neither the client secret nor a token is ever written to a log, and both are left
//! out of `Debug`.

use std::fmt;
use std::time::Duration;

use mcp_fusion_wire::echo;
use serde_json::Value;

/// The most bytes of a token endpoint's answer that are read; a longer one is refused.
const MAX_RESPONSE_BYTES: usize = 64 * 1024;

/// How long one token request may take, connecting included.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A client registered at an authorization server, and what to ask it for: the
/// client-credentials grant, authenticated with HTTP Basic (`client_secret_basic`).
///
/// ```
/// use mcp_fusion_gateway::{ClientCredentials, Upstream};
///
/// let credentials = ClientCredentials::new("https://id.example.com/oauth/token", "gateway", "s3cret")
///     .scope("crm:read crm:write");
/// let upstream = Upstream::http("https://crm.example.com/mcp").client_credentials(credentials);
/// assert!(!format!("{upstream:?}").contains("s3cret"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ClientCredentials {
    token_url: String,
    client_id: String,
    client_secret: String,
    scope: Option<String>,
}

impl fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("token_url", &self.token_url)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .field("scope", &self.scope)
            .finish()
    }
}

impl ClientCredentials {
    /// The client `client_id` with `client_secret`, at the token endpoint `token_url`.
    pub fn new(
        token_url: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> ClientCredentials {
        ClientCredentials {
            token_url: token_url.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            scope: None,
        }
    }

    /// Asks for `scope`: space-separated scope tokens (`crm:read crm:write`).
    pub fn scope(mut self, scope: impl Into<String>) -> ClientCredentials {
        self.scope = Some(scope.into());
        self
    }

    /// The token endpoint.
    pub fn token_url(&self) -> &str {
        &self.token_url
    }

    /// The client id.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// The scope asked for, if any.
    pub fn requested_scope(&self) -> Option<&str> {
        self.scope.as_deref()
    }

    /// Asks the token endpoint once for a token whose audience is `resource` (the upstream's
    /// URL), with no cache: the gateway keeps its own, per mount, and refreshes it.
    pub async fn request_token(&self, resource: &str) -> Result<AccessToken, TokenError> {
        let http = http_client().map_err(|error| self.unreachable(error))?;
        self.fetch(&http, resource).await
    }

    /// `POST token_url` with `grant_type=client_credentials`, the scope and the resource, and
    /// the client id and secret in `Authorization: Basic`.
    pub(crate) async fn fetch(&self, http: &reqwest::Client, resource: &str) -> Result<AccessToken, TokenError> {
        let body = self.form(resource);
        // RFC 6749 §2.3.1: the id and the secret are form-urlencoded before they are joined
        // with a colon and base64-encoded, so a colon in the id cannot shift the split.
        let response = http
            .post(&self.token_url)
            .basic_auth(form_encoded(&self.client_id), Some(form_encoded(&self.client_secret)))
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(reqwest::header::ACCEPT, "application/json")
            .timeout(REQUEST_TIMEOUT)
            .body(body)
            .send()
            .await
            .map_err(|error| self.unreachable(error))?;
        let status = response.status().as_u16();
        let body = read_bounded(response).await.map_err(|error| match error {
            Read::TooLarge => TokenError::Malformed {
                token_url: self.token_url.clone(),
                status,
                problem: format!("an answer of more than {MAX_RESPONSE_BYTES} bytes"),
            },
            Read::Failed(error) => self.unreachable(error),
        })?;
        parse_response(&self.token_url, status, &body)
    }

    /// The request's body: `grant_type=client_credentials`, the scope if any, and `resource`.
    fn form(&self, resource: &str) -> String {
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", "client_credentials");
        if let Some(scope) = &self.scope {
            form.append_pair("scope", scope);
        }
        form.append_pair("resource", resource);
        form.finish()
    }

    fn unreachable(&self, error: reqwest::Error) -> TokenError {
        let reason = if error.is_timeout() {
            format!("it did not answer within {} s", REQUEST_TIMEOUT.as_secs())
        } else {
            // reqwest's own words, its causes included; nothing in them came from the endpoint.
            let error = error.without_url();
            let mut reason = error.to_string();
            let mut cause = std::error::Error::source(&error);
            while let Some(current) = cause {
                reason.push_str(": ");
                reason.push_str(&current.to_string());
                cause = current.source();
            }
            reason
        };
        TokenError::Unreachable { token_url: self.token_url.clone(), reason }
    }
}

/// The HTTP client token requests are sent with: no redirects followed, so the client's
/// credentials go to `token_url` and nowhere else.
pub(crate) fn http_client() -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build()
}

/// `text` in the `application/x-www-form-urlencoded` encoding (RFC 6749 Appendix B).
fn form_encoded(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

enum Read {
    TooLarge,
    Failed(reqwest::Error),
}

/// The response's body, refused past [`MAX_RESPONSE_BYTES`].
async fn read_bounded(mut response: reqwest::Response) -> Result<Vec<u8>, Read> {
    if response.content_length().is_some_and(|length| length > MAX_RESPONSE_BYTES as u64) {
        return Err(Read::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(Read::Failed)? {
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err(Read::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A bearer token from a token endpoint. `Debug` leaves the token out.
#[derive(Clone, PartialEq, Eq)]
pub struct AccessToken {
    secret: String,
    expires_in: Option<Duration>,
    scope: Option<String>,
}

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessToken")
            .field("secret", &"<redacted>")
            .field("expires_in", &self.expires_in)
            .field("scope", &self.scope)
            .finish()
    }
}

impl AccessToken {
    /// The token itself, as sent in `Authorization: Bearer …`.
    pub fn secret(&self) -> &str {
        &self.secret
    }

    /// How long it lasts from when the endpoint answered, if the endpoint said (`expires_in`).
    pub fn expires_in(&self) -> Option<Duration> {
        self.expires_in
    }

    /// The scope granted, if the endpoint said (it may differ from the one asked for).
    pub fn scope(&self) -> Option<&str> {
        self.scope.as_deref()
    }
}

/// Why no token could be had from a token endpoint. What the endpoint said is kept as it
/// came in the fields, and quoted, escaped and cut in the message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The endpoint could not be reached, or did not answer in time.
    #[error(
        "token endpoint {token_url} could not be reached: {reason}; check `token_url` and that the authorization server is up"
    )]
    Unreachable {
        /// The endpoint.
        token_url: String,
        /// What went wrong, in the HTTP client's words.
        reason: String,
    },
    /// The endpoint refused the request: an answer other than 2xx, with the OAuth error it
    /// gave (RFC 6749 §5.2), if it gave one.
    #[error("{}", refusal(.token_url, *.status, .error.as_deref(), .description.as_deref()))]
    Refused {
        /// The endpoint.
        token_url: String,
        /// The HTTP status it answered.
        status: u16,
        /// Its `error` code (`invalid_client`), as sent.
        error: Option<String>,
        /// Its `error_description`, as sent.
        description: Option<String>,
    },
    /// The endpoint answered 2xx with something other than a bearer token (RFC 6749 §5.1).
    #[error(
        "token endpoint {token_url} answered HTTP {status} with {problem}; expected JSON with an `access_token` and `token_type` Bearer: check that `token_url` is the authorization server's token endpoint"
    )]
    Malformed {
        /// The endpoint.
        token_url: String,
        /// The HTTP status it answered.
        status: u16,
        /// What was wrong with it, anything it sent escaped.
        problem: String,
    },
}

/// The message of [`TokenError::Refused`]: what the endpoint said, and what to do about it.
fn refusal(token_url: &str, status: u16, error: Option<&str>, description: Option<&str>) -> String {
    let said = match (error, description) {
        (Some(error), Some(description)) => format!("error {}: {}", echo(error), echo(description)),
        (Some(error), None) => format!("error {}", echo(error)),
        (None, Some(description)) => format!("no error code: {}", echo(description)),
        (None, None) => "no OAuth error in its answer".to_owned(),
    };
    let advice = match error {
        Some("invalid_client") => "check the client id and secret (`client_id_env`, `client_secret_env`)",
        Some("invalid_scope") => "check `scope`: the authorization server does not grant it to this client",
        Some("unauthorized_client") => {
            "the client may not use the client-credentials grant: allow it at the authorization server"
        }
        Some("unsupported_grant_type") => "the authorization server does not offer the client-credentials grant",
        Some("invalid_target") => {
            "the authorization server does not take the upstream's `url` as a resource (RFC 8707): register it there"
        }
        _ => "check `token_url`, the client id and secret, and `scope`",
    };
    format!("token endpoint {token_url} refused the grant: HTTP {status}, {said}; {advice}")
}

/// A token endpoint's answer, read as RFC 6749 §5.1 (2xx) or §5.2 (anything else) says.
pub(crate) fn parse_response(token_url: &str, status: u16, body: &[u8]) -> Result<AccessToken, TokenError> {
    let json: Option<serde_json::Map<String, Value>> = serde_json::from_slice(body).ok();
    if !(200..300).contains(&status) {
        let field = |name: &str| json.as_ref()?.get(name)?.as_str().map(str::to_owned);
        return Err(TokenError::Refused {
            token_url: token_url.to_owned(),
            status,
            error: field("error"),
            description: field("error_description"),
        });
    }
    let malformed = |problem: String| TokenError::Malformed { token_url: token_url.to_owned(), status, problem };
    let Some(json) = json else {
        return Err(malformed(format!("a body that is not a JSON object: {}", echo(&String::from_utf8_lossy(body)))));
    };
    let secret = match json.get("access_token") {
        Some(Value::String(token)) if !token.is_empty() => token,
        Some(Value::String(_)) => return Err(malformed("an empty `access_token`".to_owned())),
        Some(_) => return Err(malformed("an `access_token` that is not a string".to_owned())),
        None => return Err(malformed("no `access_token`".to_owned())),
    };
    // It goes into a header: printable ASCII only (RFC 6750's b64token is narrower still).
    if !secret.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(malformed("an `access_token` with characters a header cannot carry".to_owned()));
    }
    match json.get("token_type") {
        Some(Value::String(kind)) if kind.eq_ignore_ascii_case("bearer") => {}
        Some(Value::String(kind)) => {
            return Err(malformed(format!("`token_type` {}, which the gateway cannot send", echo(kind))));
        }
        Some(other) => return Err(malformed(format!("`token_type` {}", echo(&other.to_string())))),
        None => return Err(malformed("no `token_type`".to_owned())),
    }
    let expires_in = match json.get("expires_in") {
        None | Some(Value::Null) => None,
        Some(Value::Number(seconds)) if seconds.as_u64().is_some() => seconds.as_u64().map(Duration::from_secs),
        // Some servers send the number as a string.
        Some(Value::String(seconds)) if seconds.parse::<u64>().is_ok() => seconds.parse().ok().map(Duration::from_secs),
        Some(other) => {
            return Err(malformed(format!("`expires_in` {}, not whole seconds", echo(&other.to_string()))));
        }
    };
    let scope = json.get("scope").and_then(Value::as_str).map(str::to_owned);
    Ok(AccessToken { secret: secret.clone(), expires_in, scope })
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "https://id.example.com/oauth/token";

    fn parsed(status: u16, body: &str) -> Result<AccessToken, TokenError> {
        parse_response(URL, status, body.as_bytes())
    }

    fn problem(status: u16, body: &str) -> String {
        parsed(status, body).unwrap_err().to_string()
    }

    #[test]
    fn a_bearer_token_response_is_read() {
        let token =
            parsed(200, r#"{"access_token":"abc.def","token_type":"Bearer","expires_in":3600,"scope":"crm:read"}"#)
                .unwrap();
        assert_eq!(
            (token.secret(), token.expires_in(), token.scope()),
            ("abc.def", Some(Duration::from_secs(3600)), Some("crm:read"))
        );
        let lower = parsed(200, r#"{"access_token":"t","token_type":"bearer"}"#).unwrap();
        assert_eq!((lower.expires_in(), lower.scope()), (None, None));
        let as_text = parsed(200, r#"{"access_token":"t","token_type":"BEARER","expires_in":"60"}"#).unwrap();
        assert_eq!(as_text.expires_in(), Some(Duration::from_secs(60)));
        assert!(!format!("{token:?}").contains("abc.def"), "Debug shows the token");
    }

    #[test]
    fn garbage_answers_are_refused_saying_what_was_found() {
        assert!(problem(200, "").contains("not a JSON object"));
        assert!(problem(200, "<html>\n<h1>Login</h1>").contains(r"'<html>\n<h1>Login</h1>'"));
        assert!(problem(200, "[1, 2]").contains("not a JSON object"));
        assert!(problem(200, r#"{"token_type":"Bearer"}"#).contains("no `access_token`"));
        assert!(problem(200, r#"{"access_token":"","token_type":"Bearer"}"#).contains("empty `access_token`"));
        assert!(problem(200, r#"{"access_token":7,"token_type":"Bearer"}"#).contains("not a string"));
        assert!(problem(200, r#"{"access_token":"a\nb","token_type":"Bearer"}"#).contains("cannot carry"));
        assert!(problem(200, r#"{"access_token":"t"}"#).contains("no `token_type`"));
        assert!(problem(200, r#"{"access_token":"t","token_type":"mac"}"#).contains("`token_type` 'mac'"));
        assert!(problem(200, r#"{"access_token":"t","token_type":["Bearer"]}"#).contains("`token_type`"));
        assert!(
            problem(200, r#"{"access_token":"t","token_type":"Bearer","expires_in":-5}"#).contains("`expires_in` '-5'")
        );
        assert!(
            problem(200, r#"{"access_token":"t","token_type":"Bearer","expires_in":1.5}"#).contains("whole seconds")
        );
        assert!(
            problem(200, r#"{"access_token":"t","token_type":"Bearer","expires_in":"soon"}"#).contains("'\"soon\"'")
        );
        let hostile = problem(200, r#"{"access_token":"t","token_type":"x\u001b[31m\nERROR forged"}"#);
        assert!(hostile.contains(r"'x\u{1b}[31m\nERROR forged'"), "{hostile}");
        assert!(!hostile.contains('\n') && !hostile.contains('\u{1b}'));
        let message = problem(200, "{}");
        assert!(message.starts_with(&format!("token endpoint {URL} answered HTTP 200 with")), "{message}");
        assert!(message.ends_with("check that `token_url` is the authorization server's token endpoint"));
    }

    #[test]
    fn an_oauth_error_is_kept_as_sent_and_told_escaped_with_what_to_do() {
        let body =
            r#"{"error":"invalid_client","error_description":"Client authentication failed.\nINFO forged line"}"#;
        let error = parsed(401, body).unwrap_err();
        let TokenError::Refused { status, error: code, description, .. } = &error else { panic!("{error:?}") };
        assert_eq!((*status, code.as_deref()), (401, Some("invalid_client")));
        assert_eq!(description.as_deref(), Some("Client authentication failed.\nINFO forged line"));
        assert_eq!(
            error.to_string(),
            format!(
                "token endpoint {URL} refused the grant: HTTP 401, error 'invalid_client': \
                 'Client authentication failed.\\nINFO forged line'; check the client id and secret \
                 (`client_id_env`, `client_secret_env`)"
            )
        );
        assert!(problem(400, r#"{"error":"invalid_scope"}"#).ends_with(
            "error 'invalid_scope'; check `scope`: the authorization server does not grant it to this client"
        ));
        assert!(problem(400, r#"{"error":"invalid_target"}"#).contains("RFC 8707"));
        assert!(
            problem(400, r#"{"error":"unauthorized_client"}"#).contains("may not use the client-credentials grant")
        );
        assert!(problem(400, r#"{"error":"unsupported_grant_type"}"#).contains("does not offer"));
        assert!(
            problem(503, "<html>busy</html>").contains("HTTP 503, no OAuth error in its answer; check `token_url`")
        );
        assert!(problem(302, "").contains("HTTP 302"));
        assert!(problem(400, r#"{"error_description":"nope"}"#).contains("no error code: 'nope'"));
        let long = problem(400, &format!(r#"{{"error":"x","error_description":"{}"}}"#, "a".repeat(10_000)));
        assert!(long.len() < 400, "an endless description is cut: {long}");
    }

    #[test]
    fn the_client_id_and_secret_are_form_encoded_before_basic() {
        assert_eq!(form_encoded("my client:1"), "my+client%3A1");
        assert_eq!(form_encoded("s3cr€t/+="), "s3cr%E2%82%ACt%2F%2B%3D");
        let debug = format!("{:?}", ClientCredentials::new(URL, "id", "hunter2"));
        assert!(!debug.contains("hunter2") && debug.contains("<redacted>"), "{debug}");
    }
}
