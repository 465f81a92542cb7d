//! A request's answer on a stream the server may close while the call goes on: the client
//! reconnects with `Last-Event-ID` and reads the rest, the answer included, where it left off.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// A future the transport returns, boxed: the trait is used as an object.
pub(crate) type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How the transport closes the stream one request is answered on, and learns that the client
/// came back for it.
pub(crate) trait CloseStream: Send + Sync + 'static {
    /// Tells the client to reconnect after `retry`, then closes the stream; `false` when the
    /// stream is gone already (the call was answered, or the session closed).
    fn close(&self, retry: Duration) -> Pending<'_, bool>;

    /// Completes once the answer has a stream to go on: at once when the stream is open, else
    /// when the client resumed it, or when the transport gave up waiting for that.
    fn reopened(&self) -> Pending<'_, ()>;
}

/// Left in a request's extensions by a transport that answers it on a stream it can close and
/// the client can resume (Streamable HTTP in a session); absent everywhere else.
#[derive(Clone)]
pub(crate) struct ResumableStream(Arc<dyn CloseStream>);

impl ResumableStream {
    #[cfg(feature = "http")]
    pub(crate) fn new(stream: impl CloseStream) -> ResumableStream {
        ResumableStream(Arc::new(stream))
    }

    /// See [`CloseStream::close`].
    pub(crate) async fn close(&self, retry: Duration) -> bool {
        self.0.close(retry).await
    }

    /// See [`CloseStream::reopened`]: an answer sent before it would be lost, as the transport
    /// keeps no answer of a stream nobody reads.
    pub(crate) async fn reopened(&self) {
        self.0.reopened().await;
    }
}

impl fmt::Debug for ResumableStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ResumableStream")
    }
}
