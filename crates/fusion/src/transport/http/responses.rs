//! Responses counted until sent, for a graceful shutdown to wait on.

use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::Response;
use futures_util::future::{BoxFuture, Either};
use tower_layer::Layer;
use tower_service::Service;

use super::check::hold;
use crate::in_flight::InFlight;

/// A count of the POST responses not yet sent, for a graceful shutdown to wait on.
#[derive(Debug, Clone, Default)]
pub struct ResponsesInFlight(InFlight);

impl ResponsesInFlight {
    /// How many responses are being answered or sent.
    pub fn count(&self) -> usize {
        self.0.count()
    }

    /// Completes when none is (at once if none is).
    pub async fn idle(&self) {
        self.0.idle().await;
    }
}

/// Counts each POST request in a [`ResponsesInFlight`] until its response has been sent (or
/// dropped): in stateful mode a call's answer leaves on an SSE stream after its handler
/// returned. Refuses nothing.
///
/// ```
/// use axum::{Router, routing::post};
/// use mcp_fusion::http::{ResponseCountLayer, ResponsesInFlight};
///
/// let responses = ResponsesInFlight::default();
/// let app: Router = Router::new().route("/hook", post(|| async { "ok" })).layer(ResponseCountLayer::new(&responses));
/// # async fn drain(responses: ResponsesInFlight) {
/// // At shutdown, once no new connection is accepted:
/// responses.idle().await;
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ResponseCountLayer {
    pub(super) responses: Option<ResponsesInFlight>,
}

impl ResponseCountLayer {
    /// Counts in `responses`.
    pub fn new(responses: &ResponsesInFlight) -> ResponseCountLayer {
        ResponseCountLayer { responses: Some(responses.clone()) }
    }
}

impl<S> Layer<S> for ResponseCountLayer {
    type Service = CountResponses<S>;

    fn layer(&self, inner: S) -> CountResponses<S> {
        CountResponses { inner, responses: self.responses.clone() }
    }
}

/// The service of [`ResponseCountLayer`].
#[derive(Debug, Clone)]
pub struct CountResponses<S> {
    inner: S,
    responses: Option<ResponsesInFlight>,
}

impl<S> Service<Request> for CountResponses<S>
where
    S: Service<Request, Response = Response>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Either<BoxFuture<'static, Result<Response, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let guard = match &self.responses {
            Some(responses) if request.method() == http::Method::POST => responses.0.enter(),
            _ => return Either::Right(self.inner.call(request)),
        };
        let answer = self.inner.call(request);
        Either::Left(Box::pin(async move { Ok(hold(answer.await?, guard)) }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::ServiceExt as _;

    use crate::transport::http::testing::*;
    use axum::body::Body;

    #[tokio::test]
    async fn the_response_count_layer_counts_posts_until_their_body_is_gone() {
        let responses = ResponsesInFlight::default();
        let counting = ResponseCountLayer::new(&responses);
        let response = app(counting.clone()).oneshot(post("{}").body(Body::from("{}")).unwrap()).await.unwrap();
        assert_eq!(responses.count(), 1);
        drop(response);
        assert_eq!(responses.count(), 0);
        let response = app(counting).oneshot(get("/mcp").body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(responses.count(), 0, "only POST responses are counted");
        drop(response);
        responses.idle().await;
    }
}
