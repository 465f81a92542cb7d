//! Counting work in flight, so a shutdown can wait for it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;

/// A count of running units of work, and a way to wait until there are none.
#[derive(Debug, Clone, Default)]
pub(crate) struct InFlight {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    count: AtomicUsize,
    drained: Notify,
}

impl InFlight {
    /// Counts one unit until the returned guard is dropped.
    pub(crate) fn enter(&self) -> InFlightGuard {
        self.shared.count.fetch_add(1, Ordering::AcqRel);
        InFlightGuard(Arc::clone(&self.shared))
    }

    /// How many units are running.
    pub(crate) fn count(&self) -> usize {
        self.shared.count.load(Ordering::Acquire)
    }

    /// Completes when none is running (at once if none is).
    pub(crate) async fn idle(&self) {
        loop {
            let drained = self.shared.drained.notified();
            if self.count() == 0 {
                return;
            }
            drained.await;
        }
    }
}

/// Leaves the count when dropped, however the work ended.
#[derive(Debug)]
pub(crate) struct InFlightGuard(Arc<Shared>);

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.drained.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn idle_waits_for_the_last_guard() {
        let in_flight = InFlight::default();
        in_flight.idle().await;
        let (a, b) = (in_flight.enter(), in_flight.enter());
        assert_eq!(in_flight.count(), 2);
        let waiter = tokio::spawn({
            let in_flight = in_flight.clone();
            async move { in_flight.idle().await }
        });
        drop(a);
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        drop(b);
        waiter.await.unwrap();
        assert_eq!(in_flight.count(), 0);
    }
}
