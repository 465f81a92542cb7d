//! What the checks' tests share: a configuration, requests, an app behind one layer.

use std::convert::Infallible;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use axum::routing::{Route, any};
use tower::ServiceExt as _;
use tower_layer::Layer;
use tower_service::Service;

use super::HttpConfig;
use crate::auth::Caller;
use crate::context::ClientAddress;

pub(super) fn config() -> HttpConfig {
    HttpConfig::new("127.0.0.1:8080")
}

pub(super) fn get(uri: &str) -> http::request::Builder {
    Request::builder().method(http::Method::GET).uri(uri).header(http::header::HOST, "localhost")
}

pub(super) fn post(body: &'static str) -> http::request::Builder {
    Request::builder()
        .method(http::Method::POST)
        .uri("/mcp")
        .header(http::header::HOST, "localhost")
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::CONTENT_LENGTH, body.len())
}

/// An app whose only route answers `200` with what the checks before it left in the request.
pub(super) fn app<L>(layer: L) -> Router
where
    L: Layer<Route> + Clone + Send + Sync + 'static,
    L::Service: Service<Request, Response = Response, Error = Infallible> + Clone + Send + Sync + 'static,
    <L::Service as Service<Request>>::Future: Send + 'static,
{
    let handler = |request: Request| async move {
        let extensions = request.extensions();
        let address = extensions.get::<ClientAddress>().map(|address| address.0.to_string());
        let caller = match extensions.get::<Caller>() {
            Some(Caller::Authenticated(identity)) => identity.subject.clone(),
            Some(Caller::Anonymous) => "anonymous".into(),
            Some(Caller::Refused(_)) => "refused".into(),
            None => "unchecked".into(),
        };
        format!("{} {caller}", address.unwrap_or_default())
    };
    Router::new().route("/mcp", any(handler)).layer(layer)
}

pub(super) async fn answer(app: Router, request: http::Request<Body>) -> (u16, String, http::HeaderMap) {
    let response = app.oneshot(request).await.unwrap();
    let (parts, body) = response.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    (parts.status.as_u16(), String::from_utf8(body.to_vec()).unwrap(), parts.headers)
}
