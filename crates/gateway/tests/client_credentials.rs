//! The gateway gets its own bearer token for an HTTP upstream with the OAuth 2.0
//! client-credentials grant, from a token endpoint run in the test: a small axum server that
//! implements the grant as RFC 6749 §4.4 and RFC 8707 have it (HTTP Basic client
//! authentication of the form-encoded id and secret, `grant_type`, `resource`, tokens with
//! `expires_in`, §5.2 errors). The upstream, a server of this framework behind a resource
//! server's check (RFC 6750: `401` with `WWW-Authenticate: Bearer error="invalid_token"`),
//! accepts the tokens that endpoint issued, until they expire or are revoked.
//!
//! Time is tokio's paused clock where it matters: a token of five minutes is renewed within
//! what the test waits, with no sleep. The upstream is rmcp's Streamable HTTP service with
//! SSE keep-alive comments off: their timer is set from the system clock, and spins while the
//! paused clock runs ahead of it.

mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use mcp_fusion::auth::{Caller, Identity};
use mcp_fusion::handoff::Mount;
use mcp_fusion::wire::{ErrorCode, ToolError};
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use mcp_fusion_gateway::{Backoff, ClientCredentials, Gateway, TokenError, Upstream};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use support::*;
use tokio::time::Instant;

const CLIENT_ID: &str = "gateway client";
const CLIENT_SECRET: &str = "s3cr:t/€";
/// What the endpoint says of a wrong secret: a line of its own and a terminal escape, were
/// it written raw.
const WRONG_SECRET: &str = "Bad secret.\nERROR forged \u{1b}[31m line";

/// A token the endpoint issued.
#[derive(Debug, Clone)]
struct Issued {
    token: String,
    at: Instant,
    expires_at: Option<Instant>,
}

/// One request to the token endpoint, as it came.
#[derive(Debug, Clone)]
struct TokenRequest {
    authorization: Option<String>,
    content_type: Option<String>,
    form: Vec<(String, String)>,
}

/// The authorization server: its one client, the resource it issues tokens for, what it
/// issued and what it was asked.
struct Authority {
    resource: Mutex<String>,
    expires_in: Option<u64>,
    issued: tokio::sync::watch::Sender<Vec<Issued>>,
    requests: Mutex<Vec<TokenRequest>>,
    /// Tokens the upstream no longer takes, and whether it takes none.
    revoked: Mutex<Vec<String>>,
    refuse_all: std::sync::atomic::AtomicBool,
    /// What the upstream was shown: each token, and whether it was taken.
    presented: Mutex<Vec<(String, bool)>>,
}

impl Authority {
    fn issued(&self) -> Vec<Issued> {
        self.issued.borrow().clone()
    }

    /// The first `count` tokens, once that many are issued (within ten minutes of the clock).
    async fn wait_issued(&self, count: usize) -> Vec<Issued> {
        let mut issued = self.issued.subscribe();
        let waited = tokio::time::timeout(Duration::from_secs(600), issued.wait_for(|issued| issued.len() >= count));
        waited.await.expect("waited ten minutes for a token").unwrap().clone()
    }

    fn presented(&self) -> Vec<(String, bool)> {
        self.presented.lock().unwrap().clone()
    }
}

/// A §5.2 error answer.
fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    let body = json!({"error": error, "error_description": description}).to_string();
    let mut response =
        (status, [(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store")], body)
            .into_response();
    if status == StatusCode::UNAUTHORIZED {
        // RFC 6749 §5.2: a 401 for invalid_client names the scheme the client should use.
        response.headers_mut().insert(header::WWW_AUTHENTICATE, "Basic realm=\"test\"".parse().unwrap());
    }
    response
}

/// One form-urlencoded value, decoded.
fn form_decoded(text: &str) -> String {
    form_urlencoded::parse(format!("v={text}").as_bytes())
        .next()
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default()
}

/// The client id and secret of `Authorization: Basic`, each form-decoded (RFC 6749 §2.3.1).
fn basic_credentials(headers: &HeaderMap) -> Option<(String, String)> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = String::from_utf8(BASE64.decode(encoded.trim()).ok()?).ok()?;
    let (id, secret) = decoded.split_once(':')?;
    Some((form_decoded(id), form_decoded(secret)))
}

/// `POST /token`: the client-credentials grant.
async fn token_endpoint(State(authority): State<Arc<Authority>>, headers: HeaderMap, body: String) -> Response {
    let form: Vec<(String, String)> = form_urlencoded::parse(body.as_bytes()).into_owned().collect();
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).map(str::to_owned);
    let authorization = headers.get(header::AUTHORIZATION).and_then(|value| value.to_str().ok()).map(str::to_owned);
    authority.requests.lock().unwrap().push(TokenRequest {
        authorization,
        content_type: content_type.clone(),
        form: form.clone(),
    });
    if content_type.as_deref() != Some("application/x-www-form-urlencoded") {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "expected a form body");
    }
    let mut params: HashMap<&str, &str> = HashMap::new();
    for (name, value) in &form {
        if params.insert(name, value).is_some() {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "a parameter came twice");
        }
    }
    match basic_credentials(&headers) {
        Some((id, secret)) if id == CLIENT_ID && secret == CLIENT_SECRET => {}
        _ => return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", WRONG_SECRET),
    }
    if params.get("grant_type") != Some(&"client_credentials") {
        return oauth_error(StatusCode::BAD_REQUEST, "unsupported_grant_type", "only client_credentials");
    }
    if params.get("resource").copied() != Some(authority.resource.lock().unwrap().as_str()) {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_target", "no such resource here");
    }
    let now = Instant::now();
    let mut token = String::new();
    authority.issued.send_modify(|issued| {
        token = format!("at-{}-x7Qm", issued.len() + 1);
        let expires_at = authority.expires_in.map(|seconds| now + Duration::from_secs(seconds));
        issued.push(Issued { token: token.clone(), at: now, expires_at });
    });
    let mut answer = json!({"access_token": token, "token_type": "Bearer"});
    if let Some(seconds) = authority.expires_in {
        answer["expires_in"] = json!(seconds);
    }
    if let Some(scope) = params.get("scope") {
        answer["scope"] = json!(scope);
    }
    ([(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store")], answer.to_string())
        .into_response()
}

/// The upstream's resource server: a request passes with a token the authority issued and
/// has not revoked, before it expires; the caller reaches the call as its identity, as this
/// framework's own bearer layer leaves it.
async fn resource_server(
    State(authority): State<Arc<Authority>>,
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let challenge = |error: &str| {
        let mut response = StatusCode::UNAUTHORIZED.into_response();
        let value = format!("Bearer realm=\"crm\", error=\"{error}\"");
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value.parse().unwrap());
        response
    };
    let header = request.headers().get(header::AUTHORIZATION).and_then(|value| value.to_str().ok());
    let Some(token) = header.and_then(|value| value.strip_prefix("Bearer ")).map(str::to_owned) else {
        return challenge("invalid_request");
    };
    let issued = authority.issued();
    let verdict = match issued.iter().position(|issued| issued.token == token) {
        None => None,
        Some(_) if authority.refuse_all.load(std::sync::atomic::Ordering::SeqCst) => None,
        Some(_) if authority.revoked.lock().unwrap().contains(&token) => None,
        Some(index) if issued[index].expires_at.is_some_and(|at| at <= Instant::now()) => None,
        Some(index) => Some(Identity::new(format!("client#{}", index + 1))),
    };
    authority.presented.lock().unwrap().push((token, verdict.is_some()));
    match verdict {
        Some(identity) => {
            request.extensions_mut().insert(Caller::Authenticated(identity));
            next.run(request).await
        }
        None => challenge("invalid_token"),
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

/// Who the upstream took the call to be.
async fn whoami(ctx: Ctx<()>, _input: Nothing) -> Result<String, ToolError> {
    Ok(ctx.call().identity().map(|identity| identity.subject.clone()).unwrap_or_else(|| "anonymous".into()))
}

/// The token endpoint and the upstream, on the loopback: the authority, the endpoint's URL,
/// the upstream's URL.
async fn start(expires_in: Option<u64>) -> (Arc<Authority>, String, String) {
    let authority = Arc::new(Authority {
        resource: Mutex::new(String::new()),
        expires_in,
        issued: tokio::sync::watch::Sender::new(Vec::new()),
        requests: Mutex::default(),
        revoked: Mutex::default(),
        refuse_all: Default::default(),
        presented: Mutex::default(),
    });
    let router = axum::Router::new()
        .route("/oauth/token", axum::routing::post(token_endpoint))
        .with_state(Arc::clone(&authority));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let token_url = format!("http://{}/oauth/token", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });

    let upstream = FusionServer::builder("crm-upstream", "1")
        .group(Group::new("work", "Work.").action(Action::new("whoami", "Who the caller is.").handler(whoami)))
        .build(())
        .unwrap();
    let service = StreamableHttpService::new(
        move || Ok(upstream.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default().with_sse_keep_alive(None),
    );
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(Arc::clone(&authority), resource_server));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    *authority.resource.lock().unwrap() = url.clone();
    (authority, token_url, url)
}

fn gateway() -> FusionServer {
    FusionServer::builder::<()>("gateway-test", "1").build(()).unwrap()
}

/// Neither the secret nor a token, in any form the gateway had them, is in the log.
fn assert_no_secrets(logs: &Logs, issued: &[Issued]) {
    let text = logs.text();
    assert!(!text.is_empty(), "nothing was logged: the check would pass for nothing");
    for secret in [CLIENT_SECRET, "s3cr%3At%2F%E2%82%AC", &BASE64.encode("gateway+client:s3cr%3At%2F%E2%82%AC")] {
        assert!(!text.contains(secret), "the client secret is in the log as {secret:?}");
    }
    for issued in issued {
        assert!(!text.contains(&issued.token), "the token {} is in the log", issued.token);
    }
}

#[tokio::test(start_paused = true)]
async fn the_gateway_fetches_its_token_sends_it_and_renews_it_before_it_expires() {
    let (logs, _logging) = Logs::capture();
    let (authority, token_url, url) = start(Some(300)).await;
    let credentials = ClientCredentials::new(&token_url, CLIENT_ID, CLIENT_SECRET).scope("crm:read crm:write");
    let server = gateway();
    let running =
        Gateway::new().mount(Mount::new("crm"), Upstream::http(&url).client_credentials(credentials)).start(&server);
    let seen = Seen::default();
    let client = connect(&server, seen.clone()).await;
    listed(&client, "crm.work").await;

    // One token request, as RFC 6749 §4.4.2 writes it: the id and the secret form-encoded,
    // then joined and base64-encoded for Basic; the upstream's URL as the resource (RFC 8707).
    let requests = authority.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let request = &requests[0];
    assert_eq!(request.content_type.as_deref(), Some("application/x-www-form-urlencoded"));
    assert_eq!(
        request.authorization.as_deref(),
        Some(format!("Basic {}", BASE64.encode("gateway+client:s3cr%3At%2F%E2%82%AC")).as_str())
    );
    let form: Vec<(&str, &str)> = request.form.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
    assert_eq!(
        form,
        [("grant_type", "client_credentials"), ("scope", "crm:read crm:write"), ("resource", url.as_str())]
    );

    // The upstream is sent it as `Authorization: Bearer`, and takes the call as its client.
    let first = call(&client, "crm.work", json!({"action": "whoami"})).await;
    assert_eq!((first.is_error, text(&first)), (Some(false), "client#1".to_owned()));
    assert!(authority.presented().iter().all(|(token, taken)| token == "at-1-x7Qm" && *taken));

    // Five minutes of the clock go by, the keepalive pinging every 15 s: the token is renewed
    // on the connection it serves, a minute before its end, and never sent expired.
    let announced = seen.tools_changed.load(std::sync::atomic::Ordering::SeqCst);
    let issued = authority.wait_issued(2).await;
    let renewed_after = issued[1].at - issued[0].at;
    assert!(
        (Duration::from_secs(240)..Duration::from_secs(300)).contains(&renewed_after),
        "renewed {renewed_after:?} after it was issued, for a token of 300 s"
    );
    let second = call(&client, "crm.work", json!({"action": "whoami"})).await;
    assert_eq!(text(&second), "client#2");
    let presented = authority.presented();
    assert!(presented.iter().all(|(_, taken)| *taken), "the upstream refused a token: {presented:?}");
    assert_eq!(presented.last().map(|(token, _)| token.as_str()), Some("at-2-x7Qm"));
    assert_eq!(authority.requests.lock().unwrap().len(), 2, "one request per token");
    assert_eq!(
        seen.tools_changed.load(std::sync::atomic::Ordering::SeqCst),
        announced,
        "the renewal reconnected the upstream"
    );
    running.shutdown().await;
    assert_no_secrets(&logs, &authority.issued());
}

#[tokio::test]
async fn a_refused_token_is_replaced_once_and_a_second_refusal_is_the_upstream_refusing_the_credentials() {
    let (logs, _logging) = Logs::capture();
    // Tokens without `expires_in`: kept until the upstream refuses one.
    let (authority, token_url, url) = start(None).await;
    let server = gateway();
    let soon = Backoff { initial: Duration::from_millis(100), max: Duration::from_secs(1), jitter: 0.0 };
    let running = Gateway::new()
        .backoff(soon)
        .mount(
            Mount::new("crm"),
            Upstream::http(&url).client_credentials(ClientCredentials::new(&token_url, CLIENT_ID, CLIENT_SECRET)),
        )
        .start(&server);
    let seen = Seen::default();
    let client = connect(&server, seen.clone()).await;
    listed(&client, "crm.work").await;
    assert_eq!(text(&call(&client, "crm.work", json!({"action": "whoami"})).await), "client#1");
    let announced = seen.tools_changed.load(std::sync::atomic::Ordering::SeqCst);

    // Revoked: the call that finds it refused (401) is sent again with a new token, and the
    // model never knows.
    authority.revoked.lock().unwrap().push("at-1-x7Qm".into());
    let again = call(&client, "crm.work", json!({"action": "whoami"})).await;
    assert_eq!((again.is_error, text(&again)), (Some(false), "client#2".to_owned()));
    assert_eq!(authority.issued().len(), 2);
    assert_eq!(
        authority.presented().iter().filter(|(_, taken)| !*taken).map(|(token, _)| token.as_str()).collect::<Vec<_>>(),
        ["at-1-x7Qm"]
    );
    assert_eq!(seen.tools_changed.load(std::sync::atomic::Ordering::SeqCst), announced, "it reconnected");

    // Refused whatever the token: a fresh one is tried, and refused too, so the upstream
    // refuses the gateway's credentials, and the model is told what to check.
    let before = authority.issued().len();
    authority.refuse_all.store(true, std::sync::atomic::Ordering::SeqCst);
    let failed = envelope(&call(&client, "crm.work", json!({"action": "whoami"})).await);
    assert_eq!(failed.error.code, ErrorCode::HandoffUpstreamUnavailable);
    assert!(failed.error.message.contains(r"'it refused the gateway\'s credentials'"), "{failed:?}");
    // The mount is unavailable until the next attempt to dial it, which tries a fresh token
    // too, and says what to check.
    let told = format!(
        "Upstream \"crm\" is unavailable: {url} refused the gateway's credentials (HTTP 401/403): check the \
         client's access at the authorization server ({token_url}), and its `scope`."
    );
    eventually("the refusal of the next attempt told", Duration::from_secs(20), || async {
        let envelope = envelope(&call(&client, "crm.work", json!({"action": "whoami"})).await);
        (envelope.error.message == told).then_some(())
    })
    .await;
    let fresh: Vec<_> = authority.issued()[before..].iter().map(|issued| issued.token.clone()).collect();
    assert!(!fresh.is_empty(), "no fresh token was tried before the refusal was reported");
    assert!(
        authority.presented().iter().any(|(token, taken)| fresh.contains(token) && !*taken),
        "the fresh token never reached the upstream"
    );
    running.shutdown().await;
    assert_no_secrets(&logs, &authority.issued());
}

#[tokio::test]
async fn a_wrong_secret_is_told_with_the_token_endpoints_words_escaped() {
    let (logs, _logging) = Logs::capture();
    let (authority, token_url, url) = start(Some(3600)).await;
    let wrong = ClientCredentials::new(&token_url, CLIENT_ID, "not the secret");

    // The typed error keeps what the endpoint said as it came…
    let error = wrong.request_token(&url).await.unwrap_err();
    let TokenError::Refused { status, error: code, description, .. } = &error else { panic!("{error:?}") };
    assert_eq!((*status, code.as_deref(), description.as_deref()), (401, Some("invalid_client"), Some(WRONG_SECRET)));
    // …and its message shows it escaped, with what to do.
    let message = error.to_string();
    assert_eq!(
        message,
        format!(
            "token endpoint {token_url} refused the grant: HTTP 401, error 'invalid_client': \
             'Bad secret.\\nERROR forged \\u{{1b}}[31m line'; check the client id and secret \
             (`client_id_env`, `client_secret_env`)"
        )
    );

    // Through the gateway: the mount is unavailable, saying so.
    let server = gateway();
    let running =
        Gateway::new().mount(Mount::new("crm"), Upstream::http(&url).client_credentials(wrong)).start(&server);
    running.settled().await;
    let client = connect(&server, Seen::default()).await;
    let down = envelope(&call(&client, "crm.work", json!({"action": "whoami"})).await);
    assert_eq!(down.error.code, ErrorCode::HandoffUpstreamUnavailable);
    assert!(
        down.error.message.starts_with(&format!(
            "Upstream \"crm\" is unavailable: the gateway got no token for it: token endpoint {token_url} refused \
             the grant: HTTP 401, error 'invalid_client': 'Bad secret.\\nERROR forged \\u{{1b}}[31m line'"
        )),
        "{down:?}"
    );
    assert!(authority.presented().is_empty(), "the upstream was dialled without a token");
    running.shutdown().await;
    let logged = logs.text();
    assert!(logged.contains("Bad secret.\\nERROR forged"), "the refusal is not in the log: {logged}");
    assert!(
        !logged.contains("\nERROR forged") && !logged.contains('\u{1b}'),
        "the endpoint's words reached the log raw"
    );
    assert!(!logged.contains("not the secret"), "the secret is in the log");

    // A resource the endpoint does not know, and an endpoint that is not there.
    let right = ClientCredentials::new(&token_url, CLIENT_ID, CLIENT_SECRET);
    let elsewhere = right.request_token("http://127.0.0.1:9/mcp").await.unwrap_err().to_string();
    assert!(elsewhere.contains("error 'invalid_target'") && elsewhere.contains("RFC 8707"), "{elsewhere}");
    let token = right.request_token(&url).await.unwrap();
    assert_eq!((token.secret(), token.expires_in()), ("at-1-x7Qm", Some(Duration::from_secs(3600))));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = format!("http://{}/oauth/token", listener.local_addr().unwrap());
    drop(listener);
    let nowhere = ClientCredentials::new(&closed, CLIENT_ID, CLIENT_SECRET).request_token(&url).await.unwrap_err();
    assert!(matches!(nowhere, TokenError::Unreachable { .. }), "{nowhere:?}");
    assert!(nowhere.to_string().contains("could not be reached"), "{nowhere}");
    // An https endpoint is reached over TLS (rustls): nothing listens there either.
    let https = closed.replace("http://", "https://");
    let no_tls = ClientCredentials::new(&https, CLIENT_ID, CLIENT_SECRET).request_token(&url).await.unwrap_err();
    assert!(no_tls.to_string().contains("could not be reached"), "{no_tls}");
}
