//! What each check's service is made of: an answer given at once or the wrapped service's,
//! the wrapped service taken ready into a future, a response that holds something until it
//! has been sent.
//!
//! Each check's service is a concrete generic type over the service it wraps: no boxed
//! service stacks. A check that answers at once or passes the request on costs no allocation;
//! one that must wait (a token's verdict, a body read) or see the response boxes one future.
//! The layers' state sits behind `Arc`, so cloning a stack clones pointers.

use std::future::{Ready, ready};
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::response::Response;
use futures_util::future::Either;

/// An answer given at once, or the wrapped service's.
pub(super) type AtOnce<F, E> = Either<Ready<Result<Response, E>>, F>;

pub(super) fn at_once<F, E>(response: Response) -> AtOnce<F, E> {
    Either::Left(ready(Ok(response)))
}

/// The wrapped service, ready, taken out of `slot` for a future that outlives the call; a
/// clone takes its place.
pub(super) fn take_ready<S: Clone>(slot: &mut S) -> S {
    let clone = slot.clone();
    std::mem::replace(slot, clone)
}

/// `response` with `held` kept alive until its body has been sent (or dropped).
pub(super) fn hold<T: Send + Unpin + 'static>(response: Response, held: T) -> Response {
    response.map(|body| Body::new(Holding { body, _held: held }))
}

/// A response body holding what must live until it has been sent: a count of responses in
/// flight, a request's id in its session.
struct Holding<T> {
    body: Body,
    _held: T,
}

impl<T: Send + Unpin + 'static> http_body::Body for Holding<T> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
