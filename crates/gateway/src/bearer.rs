//! A token fetched with the client-credentials grant, kept for one mount and fetched again
//! before it expires, and the HTTP client that sends it with every request to the upstream.
//!
//! Why a client of our own rather than a reconnect. rmcp's Streamable HTTP transport hands
//! the bearer token to its [`StreamableHttpClient`] with each request (POST, the SSE GET and
//! its resumptions, the session's DELETE), so a client that puts the current token in place
//! of the transport's keeps one connection alive across any number of tokens: the token is
//! renewed when a request finds it near its end, and nothing else notices. Reconnecting before
//! each expiry instead would withdraw the mount's tools, tell every client the list changed,
//! and fail the calls in flight, once per token lifetime. rmcp's own `AuthClient` (its `auth`
//! feature) works the same way, but brings an OAuth library and metadata discovery, and
//! authenticates with `client_secret_post`; this is the grant alone, with HTTP Basic.
//!
//! - A token is renewed once less than a minute or a tenth of its lifetime is left, whichever
//!   is longer, but at most half of it ([`refresh_margin`]); one without `expires_in` is kept
//!   until the upstream refuses it.
//! - A request the upstream answers 401 is sent once more with a new token; a second 401 is
//!   the upstream refusing the gateway's credentials, and is reported as such.
//! - Concurrent requests share one fetch: an async mutex is held while the endpoint is
//!   asked, and those that wait for it find the new token when they get it. While a token
//!   that still holds is being renewed, the others send it instead of waiting.
//! - A renewal that fails while the token still has time left keeps the token, says so in
//!   the log, and tries again later; only a token that has expired, or was refused, fails
//!   requests (the mount then reconnects, and says why: the [`TokenError`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use tokio::time::Instant;

use crate::credentials::{AccessToken, ClientCredentials, TokenError, http_client};

/// The shortest margin before expiry at which a token is renewed.
const MIN_MARGIN: Duration = Duration::from_secs(60);
/// The longest wait before a failed renewal is tried again, while the token still holds.
const RETRY: Duration = Duration::from_secs(30);

/// How long before its expiry a token of `lifetime` is renewed: a minute or a tenth of its
/// lifetime, whichever is longer, and at most half its lifetime (a token of 2 s is renewed
/// after 1 s, one of an hour 6 minutes before its end).
pub(crate) fn refresh_margin(lifetime: Duration) -> Duration {
    MIN_MARGIN.max(lifetime / 10).min(lifetime / 2)
}

/// How a token is fetched: the grant, or a stand-in in tests.
type Fetch = Box<dyn Fn() -> BoxFuture<'static, Result<AccessToken, TokenError>> + Send + Sync>;

/// One mount's fetched token, shared by its connections for as long as its supervisor runs.
pub(crate) struct Tokens {
    token_url: String,
    fetch: Fetch,
    /// The token in use, read without waiting.
    cached: std::sync::Mutex<Option<Cached>>,
    /// Held while the endpoint is asked: one fetch at a time, whoever needs it.
    fetching: tokio::sync::Mutex<()>,
}

/// The token in use.
#[derive(Clone)]
struct Cached {
    secret: String,
    /// When to fetch the next one; without `expires_in`, only once this one is refused.
    refresh_at: Option<Instant>,
    /// When it stops being valid, if the endpoint said.
    expires_at: Option<Instant>,
}

impl Cached {
    /// Not yet due for renewal.
    fn fresh(&self, now: Instant) -> bool {
        self.refresh_at.is_none_or(|at| now < at)
    }

    /// Not yet expired.
    fn holds(&self, now: Instant) -> bool {
        self.expires_at.is_none_or(|at| now < at)
    }
}

impl Tokens {
    /// Tokens for the upstream at `resource` (their audience), from `credentials`.
    pub(crate) fn new(credentials: ClientCredentials, resource: String) -> Tokens {
        let http = http_client().map_err(|error| error.to_string());
        let token_url = credentials.token_url().to_owned();
        let credentials = Arc::new(credentials);
        let resource: Arc<str> = resource.into();
        let fetch: Fetch = Box::new(move || {
            let (credentials, resource, http) = (Arc::clone(&credentials), Arc::clone(&resource), http.clone());
            Box::pin(async move {
                match http {
                    Ok(http) => credentials.fetch(&http, &resource).await,
                    Err(reason) => {
                        Err(TokenError::Unreachable { token_url: credentials.token_url().to_owned(), reason })
                    }
                }
            })
        });
        Tokens::with_fetch(token_url, fetch)
    }

    fn with_fetch(token_url: String, fetch: Fetch) -> Tokens {
        Tokens { token_url, fetch, cached: std::sync::Mutex::new(None), fetching: tokio::sync::Mutex::new(()) }
    }

    fn cached(&self) -> std::sync::MutexGuard<'_, Option<Cached>> {
        self.cached.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn kept(&self) -> Option<Cached> {
        self.cached().clone()
    }

    /// The token to send: the one kept while it is fresh, else a new one. While another
    /// request renews it, one that still holds is sent meanwhile, so a slow token endpoint
    /// holds up only the request that asks it.
    pub(crate) async fn current(&self) -> Result<String, TokenError> {
        let now = Instant::now();
        if let Some(token) = self.kept()
            && token.fresh(now)
        {
            return Ok(token.secret);
        }
        let _fetching = match self.fetching.try_lock() {
            Ok(fetching) => fetching,
            Err(_) => {
                if let Some(token) = self.kept()
                    && token.holds(now)
                {
                    return Ok(token.secret);
                }
                self.fetching.lock().await
            }
        };
        // Renewed while this one waited?
        let asked = Instant::now();
        if let Some(token) = self.kept()
            && token.fresh(asked)
        {
            return Ok(token.secret);
        }
        match (self.fetch)().await {
            Ok(token) => Ok(self.keep(token, asked)),
            Err(error) => {
                let now = Instant::now();
                let mut cached = self.cached();
                let Some(token) = cached.as_mut() else { return Err(error) };
                let Some(left) =
                    token.expires_at.and_then(|at| at.checked_duration_since(now)).filter(|left| !left.is_zero())
                else {
                    return Err(error);
                };
                token.refresh_at = Some(now + (left / 2).min(RETRY));
                tracing::warn!(
                    token_url = %self.token_url,
                    "the token was not renewed: {error}; the current one holds for {} s more, and is used meanwhile",
                    left.as_secs()
                );
                Ok(token.secret.clone())
            }
        }
    }

    /// A token other than `refused`, which the upstream refused: one that another request
    /// fetched meanwhile, or a new one.
    pub(crate) async fn replace(&self, refused: &str) -> Result<String, TokenError> {
        let _fetching = self.fetching.lock().await;
        let asked = Instant::now();
        {
            let mut cached = self.cached();
            if let Some(token) = cached.as_ref()
                && token.secret != refused
                && token.fresh(asked)
            {
                return Ok(token.secret.clone());
            }
            *cached = None;
        }
        let token = (self.fetch)().await?;
        Ok(self.keep(token, asked))
    }

    /// Keeps `token`, asked for at `asked`: its lifetime counts from then, to be safe.
    fn keep(&self, token: AccessToken, asked: Instant) -> String {
        let lifetime = token.expires_in();
        tracing::debug!(
            token_url = %self.token_url,
            expires_in_s = lifetime.map(|lifetime| lifetime.as_secs()),
            "fetched a token for the upstream"
        );
        let secret = token.secret().to_owned();
        *self.cached() = Some(Cached {
            secret: secret.clone(),
            refresh_at: lifetime.and_then(|lifetime| asked.checked_add(lifetime - refresh_margin(lifetime))),
            expires_at: lifetime.and_then(|lifetime| asked.checked_add(lifetime)),
        });
        secret
    }
}

/// The reqwest client of an upstream dialled with fetched tokens, as rmcp builds its own: no
/// idle connections kept (they stall on delayed ACKs), and only same-origin 307 and 308
/// redirects followed, at most 10, so neither a body nor a token goes anywhere else.
pub(crate) fn upstream_client() -> Result<reqwest::Client, reqwest::Error> {
    let same_origin = reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt.previous().first().is_some_and(|first| first.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > 10 {
            attempt.error("more than 10 redirects")
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder().pool_max_idle_per_host(0).redirect(same_origin).build()
}

/// rmcp's reqwest client, sending the mount's current token instead of the transport's.
#[derive(Clone)]
pub(crate) struct Authorized {
    pub(crate) http: reqwest::Client,
    pub(crate) tokens: Arc<Tokens>,
}

type HttpError = StreamableHttpError<reqwest::Error>;

impl Authorized {
    /// `request` with the current token; once more with a new one if the upstream answers 401.
    async fn send<T, F, Fut>(&self, request: F) -> Result<T, HttpError>
    where
        F: Fn(String) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let token = self.tokens.current().await.map_err(no_token)?;
        match request(token.clone()).await {
            Err(error) if unauthorized(&error) => {
                tracing::debug!(token_url = %self.tokens.token_url, "the upstream refused the token (HTTP 401); fetching another");
                let fresh = self.tokens.replace(&token).await.map_err(no_token)?;
                request(fresh).await
            }
            other => other,
        }
    }
}

/// A token error as the transport's: an I/O error around the [`TokenError`], which
/// [`token_error`] finds again.
fn no_token(error: TokenError) -> HttpError {
    StreamableHttpError::Io(std::io::Error::other(error))
}

/// The [`TokenError`] among `error`'s causes, if a missing token is why it failed.
pub(crate) fn token_error<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a TokenError> {
    let mut cause = Some(error);
    while let Some(current) = cause {
        if let Some(found) = current.downcast_ref::<TokenError>() {
            return Some(found);
        }
        if let Some(found) = current
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<TokenError>())
        {
            return Some(found);
        }
        cause = current.source();
    }
    None
}

/// Whether the upstream answered 401: with a challenge (rmcp's `AuthRequired`), or without.
fn unauthorized(error: &HttpError) -> bool {
    match error {
        StreamableHttpError::AuthRequired(_) => true,
        StreamableHttpError::Client(error) => error.status() == Some(reqwest::StatusCode::UNAUTHORIZED),
        StreamableHttpError::UnexpectedServerResponse(text) => text.starts_with("HTTP 401"),
        _ => false,
    }
}

impl StreamableHttpClient for Authorized {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.send(|token| {
            let (uri, message, session_id, headers) =
                (uri.clone(), message.clone(), session_id.clone(), custom_headers.clone());
            async move { self.http.post_message(uri, message, session_id, Some(token), headers).await }
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.send(|token| {
            let (uri, message, session_id, headers) =
                (uri.clone(), message.clone(), session_id.clone(), custom_headers.clone());
            async move {
                self.http
                    .post_message_with_max_sse_event_size(
                        uri,
                        message,
                        session_id,
                        Some(token),
                        headers,
                        max_sse_event_size,
                    )
                    .await
            }
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.send(|token| {
            let (uri, message, session_id, headers) =
                (uri.clone(), message.clone(), session_id.clone(), custom_headers.clone());
            async move {
                self.http
                    .post_message_with_response_limits(uri, message, session_id, Some(token), headers, limits)
                    .await
            }
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.send(|token| {
            let (uri, session_id, headers) = (uri.clone(), session_id.clone(), custom_headers.clone());
            async move { self.http.delete_session(uri, session_id, Some(token), headers).await }
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxedSseResponse, HttpError> {
        self.send(|token| {
            let (uri, session_id, last_event_id, headers) =
                (uri.clone(), session_id.clone(), last_event_id.clone(), custom_headers.clone());
            async move { self.http.get_stream(uri, session_id, last_event_id, Some(token), headers).await }
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxedSseResponse, HttpError> {
        self.send(|token| {
            let (uri, session_id, last_event_id, headers) =
                (uri.clone(), session_id.clone(), last_event_id.clone(), custom_headers.clone());
            async move {
                self.http
                    .get_stream_with_max_sse_event_size(
                        uri,
                        session_id,
                        last_event_id,
                        Some(token),
                        headers,
                        max_sse_event_size,
                    )
                    .await
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::credentials::parse_response;

    /// Tokens whose fetch answers with `next()` and counts its calls; each fetch takes a
    /// second of the (paused) clock, so concurrent callers overlap.
    fn counting(
        next: impl Fn(usize) -> Result<AccessToken, TokenError> + Send + Sync + 'static,
    ) -> (Tokens, Arc<AtomicUsize>) {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        let next = Arc::new(next);
        let fetch: Fetch = Box::new(move || {
            let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
            let next = Arc::clone(&next);
            Box::pin(async move {
                tokio::time::sleep(Duration::from_secs(1)).await;
                next(n)
            })
        });
        (Tokens::with_fetch("https://id.example.com/token".into(), fetch), calls)
    }

    fn token(secret: &str, expires_in: Option<u64>) -> Result<AccessToken, TokenError> {
        let expires = expires_in.map(|s| format!(r#","expires_in":{s}"#)).unwrap_or_default();
        parse_response("u", 200, format!(r#"{{"access_token":"{secret}","token_type":"Bearer"{expires}}}"#).as_bytes())
    }

    fn refused() -> Result<AccessToken, TokenError> {
        parse_response("u", 503, b"{}")
    }

    #[test]
    fn the_margin_is_a_minute_or_a_tenth_and_at_most_half() {
        let secs = Duration::from_secs;
        assert_eq!(refresh_margin(secs(3600)), secs(360));
        assert_eq!(refresh_margin(secs(300)), secs(60));
        assert_eq!(refresh_margin(secs(100)), secs(50));
        assert_eq!(refresh_margin(secs(2)), secs(1));
        assert_eq!(refresh_margin(secs(0)), secs(0));
        assert_eq!(refresh_margin(Duration::MAX), Duration::MAX / 10);
    }

    #[tokio::test(start_paused = true)]
    async fn concurrent_callers_share_one_fetch_and_the_token_is_renewed_before_it_expires() {
        let (tokens, calls) = counting(|n| token(&format!("t{n}"), Some(300)));
        let tokens = Arc::new(tokens);
        let callers: Vec<_> = (0..8)
            .map(|_| {
                tokio::spawn({
                    let tokens = Arc::clone(&tokens);
                    async move { tokens.current().await.unwrap() }
                })
            })
            .collect();
        for caller in callers {
            assert_eq!(caller.await.unwrap(), "t1");
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1, "eight callers, one fetch");
        // Fetched at 0 s for 300 s: kept until 240 s, renewed from then on.
        tokio::time::advance(Duration::from_secs(238)).await;
        assert_eq!(tokens.current().await.unwrap(), "t1");
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(tokens.current().await.unwrap(), "t2");
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn while_a_token_that_still_holds_is_renewed_the_others_send_it_without_waiting() {
        let (tokens, calls) = counting(|n| token(&format!("t{n}"), Some(300)));
        let tokens = Arc::new(tokens);
        assert_eq!(tokens.current().await.unwrap(), "t1");
        tokio::time::advance(Duration::from_secs(250)).await;
        let renewing = tokio::spawn({
            let tokens = Arc::clone(&tokens);
            async move { tokens.current().await.unwrap() }
        });
        tokio::task::yield_now().await;
        assert_eq!(calls.load(Ordering::SeqCst), 2, "the renewal is under way");
        let asked = Instant::now();
        assert_eq!(tokens.current().await.unwrap(), "t1");
        assert_eq!(Instant::now(), asked, "it waited for the renewal");
        assert_eq!(renewing.await.unwrap(), "t2");
        assert_eq!(tokens.current().await.unwrap(), "t2");
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_renewal_keeps_a_token_that_still_holds_and_an_expired_one_fails() {
        let (tokens, calls) = counting(|n| if n == 1 { token("t1", Some(300)) } else { refused() });
        assert_eq!(tokens.current().await.unwrap(), "t1");
        // Renewal due at 240 s fails: t1 holds until 300 s, and is tried again 30 s later.
        tokio::time::advance(Duration::from_secs(240)).await;
        assert_eq!(tokens.current().await.unwrap(), "t1");
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(tokens.current().await.unwrap(), "t1");
        assert_eq!(calls.load(Ordering::SeqCst), 2, "not asked again at once");
        tokio::time::advance(Duration::from_secs(60)).await;
        let error = tokens.current().await.unwrap_err();
        assert!(matches!(error, TokenError::Refused { status: 503, .. }), "{error:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_token_without_expiry_is_kept_until_refused_and_then_replaced_once() {
        let (tokens, calls) = counting(|n| token(&format!("t{n}"), None));
        assert_eq!(tokens.current().await.unwrap(), "t1");
        tokio::time::advance(Duration::from_secs(365 * 24 * 3600)).await;
        assert_eq!(tokens.current().await.unwrap(), "t1");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        // Two requests refused with t1 at once: one fetch, and both get t2.
        let tokens = Arc::new(tokens);
        let (a, b) = tokio::join!(tokens.replace("t1"), tokens.replace("t1"));
        assert_eq!((a.unwrap(), b.unwrap()), ("t2".to_owned(), "t2".to_owned()));
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(tokens.current().await.unwrap(), "t2");
    }

    #[test]
    fn a_token_error_is_found_again_through_the_transport_error() {
        let error = no_token(refused().unwrap_err());
        assert!(matches!(token_error(&error), Some(TokenError::Refused { status: 503, .. })));
        let other: HttpError = StreamableHttpError::TransportChannelClosed;
        assert!(token_error(&other).is_none());
    }
}
