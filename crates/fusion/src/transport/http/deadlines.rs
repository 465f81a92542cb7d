//! hyper's deadlines (the header read timeout) on a coarse clock of their own.
//!
//! hyper arms its header timer for every request a connection reads. On tokio's timer each
//! arming and disarming takes the timer driver's lock, which the runtime's other workers
//! hold while they process their timers: on two cores the profile of a trivial call showed
//! four futex calls per request, most of them on that lock, and ~10 µs of CPU. These
//! deadlines take a lock of their own, held only to insert or remove one entry, and are
//! checked by one task a few times a second: a deadline fires up to one tick late, which for
//! a timeout of seconds does not matter.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// A [`hyper::rt::Timer`] whose sleeps are checked every `tick`.
#[derive(Clone, Debug)]
pub(super) struct CoarseTimer(Arc<Deadlines>);

#[derive(Debug, Default)]
struct Deadlines {
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, (Instant, Waker)>>,
}

impl Deadlines {
    fn waiting(&self) -> MutexGuard<'_, HashMap<u64, (Instant, Waker)>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl CoarseTimer {
    /// Starts the task that checks the deadlines every `tick`; it ends with the last clone.
    pub(super) fn start(tick: Duration) -> CoarseTimer {
        let deadlines = Arc::new(Deadlines::default());
        tokio::spawn(check_every(tick, Arc::downgrade(&deadlines)));
        CoarseTimer(deadlines)
    }
}

async fn check_every(tick: Duration, deadlines: Weak<Deadlines>) {
    let mut ticks = tokio::time::interval(tick);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(deadlines) = deadlines.upgrade() else { return };
        let now = Instant::now();
        // Woken after the lock is released: a woken task may poll its sleep at once.
        let due: Vec<Waker> =
            deadlines.waiting().extract_if(|_, (at, _)| *at <= now).map(|(_, (_, waker))| waker).collect();
        due.into_iter().for_each(Waker::wake);
    }
}

impl hyper::rt::Timer for CoarseTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        self.sleep_until(Instant::now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        let id = self.0.next.fetch_add(1, Ordering::Relaxed);
        Box::pin(CoarseSleep { deadline, id, deadlines: Arc::clone(&self.0), registered: false })
    }
}

/// One deadline: ready once it has passed, as seen when polled or at a tick.
struct CoarseSleep {
    deadline: Instant,
    id: u64,
    deadlines: Arc<Deadlines>,
    registered: bool,
}

impl Future for CoarseSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.deadline {
            if std::mem::take(&mut self.registered) {
                self.deadlines.waiting().remove(&self.id);
            }
            return Poll::Ready(());
        }
        let (id, deadline) = (self.id, self.deadline);
        let mut waiting = self.deadlines.waiting();
        match waiting.get_mut(&id) {
            Some((_, waker)) => waker.clone_from(context.waker()),
            None => {
                waiting.insert(id, (deadline, context.waker().clone()));
            }
        }
        drop(waiting);
        self.registered = true;
        Poll::Pending
    }
}

impl Drop for CoarseSleep {
    fn drop(&mut self) {
        if self.registered {
            self.deadlines.waiting().remove(&self.id);
        }
    }
}

impl hyper::rt::Sleep for CoarseSleep {}

#[cfg(test)]
mod tests {
    use hyper::rt::Timer as _;

    use super::*;

    #[tokio::test]
    async fn a_deadline_fires_within_a_tick_and_a_dropped_one_is_forgotten() {
        let timer = CoarseTimer::start(Duration::from_millis(10));
        let started = Instant::now();
        timer.sleep(Duration::from_millis(50)).await;
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(50) && took < Duration::from_millis(500), "{took:?}");
        let dropped = timer.sleep(Duration::from_secs(60));
        assert!(tokio::time::timeout(Duration::from_millis(20), dropped).await.is_err());
        assert!(timer.0.waiting().is_empty(), "a dropped sleep leaves nothing behind");
    }
}
