//! Documents read from an authorization server: JSON, bounded in size and in time, never
//! following more than a few redirects.

use std::time::Duration;

use mcp_fusion_wire::echo;
use serde::de::DeserializeOwned;

use super::OAuthError;

/// The largest document read: metadata and key sets are a few kilobytes.
const MAX_DOCUMENT_BYTES: usize = 256 << 10;

/// How long one request may take, connecting included.
const TIMEOUT: Duration = Duration::from_secs(10);

/// An HTTP client for an authorization server's documents and endpoints.
#[derive(Debug, Clone)]
pub(super) struct Fetcher {
    client: reqwest::Client,
}

impl Fetcher {
    pub(super) fn new() -> Result<Fetcher, OAuthError> {
        let client = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .connect_timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::limited(3))
            .build()
            .map_err(|error| OAuthError::HttpClient { reason: error.to_string() })?;
        Ok(Fetcher { client })
    }

    /// `GET url` as JSON of type `T`, named `expected` in errors.
    pub(super) async fn get<T: DeserializeOwned>(&self, url: &str, expected: &'static str) -> Result<T, OAuthError> {
        let request = self.client.get(url).header(http::header::ACCEPT, "application/json");
        self.json(url, expected, request).await
    }

    /// `POST url` with a form body, the client authenticated with HTTP Basic (RFC 6749 §2.3.1:
    /// its id and secret form-encoded first), answered as JSON of type `T`.
    pub(super) async fn post_form<T: DeserializeOwned>(
        &self,
        url: &str,
        form: &[(&str, &str)],
        client: (&str, &str),
        expected: &'static str,
    ) -> Result<T, OAuthError> {
        let request = self
            .client
            .post(url)
            .header(http::header::ACCEPT, "application/json")
            .basic_auth(form_encode(client.0), Some(form_encode(client.1)))
            .form(form);
        self.json(url, expected, request).await
    }

    async fn json<T: DeserializeOwned>(
        &self,
        url: &str,
        expected: &'static str,
        request: reqwest::RequestBuilder,
    ) -> Result<T, OAuthError> {
        let unreachable =
            |error: reqwest::Error| OAuthError::Unreachable { url: url.to_owned(), reason: error.to_string() };
        let mut response = request.send().await.map_err(unreachable)?;
        let status = response.status();
        if !status.is_success() {
            return Err(OAuthError::Status { url: url.to_owned(), status: status.as_u16() });
        }
        let document = |reason: String| OAuthError::Document { url: url.to_owned(), expected, reason };
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(unreachable)? {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(document(format!("it is larger than {} KiB", MAX_DOCUMENT_BYTES >> 10)));
            }
            body.extend_from_slice(&chunk);
        }
        parse(&body).map_err(document)
    }
}

/// `body` as JSON of type `T`; the error quotes what it repeats of the document.
pub(super) fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, String> {
    serde_json::from_slice(body).map_err(|error| echo(&error.to_string()))
}

/// `application/x-www-form-urlencoded` of `text`: unreserved characters as they are, a space
/// as `+`, every other byte as `%XX`.
fn form_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => out.push(char::from(byte)),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_credentials_are_form_encoded_before_basic() {
        assert_eq!(form_encode("billing-introspector"), "billing-introspector");
        assert_eq!(form_encode("s3:cr t/%é"), "s3%3Acr+t%2F%25%C3%A9");
    }
}
