//! A call that runs to its end even when whoever awaits it goes away.
//!
//! A connection's future is dropped when its client goes away, and with it every future it
//! awaits: a handler dropped at an arbitrary await may have committed a write and not yet
//! recorded it (its idempotency key, its log line). Wrapped here, the handler's future is handed
//! to a task of its own at that moment instead, where it runs to its end: the client's
//! cancellation, which comes with the same drop, lets it stop before its commit point, or it
//! finishes what it committed. A future that completes where it was awaited costs nothing more.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A boxed future that is spawned to run to its end if dropped before it completes.
pub(crate) struct RunToEnd<T: Send + 'static> {
    future: Option<Pin<Box<dyn Future<Output = T> + Send>>>,
}

impl<T: Send + 'static> RunToEnd<T> {
    /// Wraps `future`, boxed where it is made so that dropping it moves only the box.
    pub(crate) fn new(future: Pin<Box<dyn Future<Output = T> + Send>>) -> RunToEnd<T> {
        RunToEnd { future: Some(future) }
    }
}

impl<T: Send + 'static> Future for RunToEnd<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<T> {
        let this = self.get_mut();
        let Some(future) = this.future.as_mut() else { panic!("RunToEnd polled after it completed") };
        let output = std::task::ready!(future.as_mut().poll(context));
        this.future = None;
        Poll::Ready(output)
    }
}

impl<T: Send + 'static> Drop for RunToEnd<T> {
    fn drop(&mut self) {
        // Without a runtime (the process is ending) there is nothing left to run it on.
        if let (Some(future), Ok(runtime)) = (self.future.take(), tokio::runtime::Handle::try_current()) {
            runtime.spawn(future);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    #[tokio::test]
    async fn dropped_before_its_end_it_runs_on_to_its_end() {
        let ended = Arc::new(AtomicBool::new(false));
        let (go, gone) = tokio::sync::oneshot::channel::<()>();
        let (done, finished) = tokio::sync::oneshot::channel();
        let flag = Arc::clone(&ended);
        let mut call = Box::pin(RunToEnd::new(Box::pin(async move {
            let _ = gone.await;
            flag.store(true, Ordering::SeqCst);
            let _ = done.send(());
        })));
        // Polled once, then dropped, as a connection's future is when its client goes away.
        assert!(futures_util::poll!(call.as_mut()).is_pending());
        drop(call);
        assert!(!ended.load(Ordering::SeqCst));
        go.send(()).unwrap();
        finished.await.unwrap();
        assert!(ended.load(Ordering::SeqCst));
    }

    #[tokio::test]
    async fn awaited_to_its_end_it_is_its_output() {
        assert_eq!(RunToEnd::new(Box::pin(async { 7 })).await, 7);
    }
}
