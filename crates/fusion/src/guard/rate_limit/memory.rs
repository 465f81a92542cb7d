//! The in-memory store: counts in this process, with the same GCRA as the Redis store.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::time::Instant;

use super::store::{Decision, RateLimitStore, StoreError};

/// Beyond this many keys of one limit, idle ones are forgotten, so one-off sessions do not
/// pile up; the next sweep waits until the count has doubled, so a sweep costs each call O(1)
/// on average.
const PRUNE_ABOVE: usize = 10_000;

/// The most keys one limit keeps by default: beyond it, the keys nearest to idle are
/// forgotten (an eighth at once), so memory stays bounded whatever the callers do.
const DEFAULT_CAPACITY: usize = 100_000;

/// Counts in this process's memory. The default store.
pub struct MemoryStore {
    /// Per limit (`calls`, `window`), the counts of its keys.
    limits: Mutex<HashMap<(NonZeroU32, Duration), Tats>>,
    capacity: usize,
}

/// The theoretical arrival time (TAT) of each key of one limit — the moment the key is as
/// good as idle again — and the size at which idle keys are swept next.
#[derive(Default)]
struct Tats {
    by_key: HashMap<String, Instant>,
    sweep_at: usize,
}

impl Default for MemoryStore {
    fn default() -> MemoryStore {
        MemoryStore::with_capacity(DEFAULT_CAPACITY)
    }
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStore").field("capacity", &self.capacity).finish_non_exhaustive()
    }
}

impl MemoryStore {
    /// An empty store keeping up to 100,000 keys per limit.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// An empty store keeping up to `capacity` keys per limit (at least 8). Past it, the keys
    /// nearest to idle are forgotten first: they get a fresh budget, which is as much as they
    /// had left anyway, or nearly.
    pub fn with_capacity(capacity: usize) -> MemoryStore {
        MemoryStore { limits: Mutex::default(), capacity: capacity.max(8) }
    }

    /// Runs `update` on the TATs of the limit `calls` per `window`, under the lock: a check or
    /// a refund is atomic like the Redis script.
    fn with_tats<T>(&self, calls: NonZeroU32, window: Duration, update: impl FnOnce(&mut Tats) -> T) -> T {
        let mut limits = self.limits.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        update(limits.entry((calls, window)).or_default())
    }
}

impl Tats {
    /// Forgets idle keys once there are many, and the keys nearest to idle once there are
    /// more than `capacity`.
    fn bound(&mut self, now: Instant, capacity: usize) {
        if self.by_key.len() <= self.sweep_at.max(PRUNE_ABOVE).min(capacity) {
            return;
        }
        self.by_key.retain(|_, tat| *tat > now);
        if self.by_key.len() > capacity {
            let mut tats: Vec<Instant> = self.by_key.values().copied().collect();
            let excess = self.by_key.len() - capacity + capacity / 8;
            let (_, &mut cutoff, _) = tats.select_nth_unstable(excess - 1);
            self.by_key.retain(|_, tat| *tat > cutoff);
        }
        self.sweep_at = self.by_key.len() * 2;
    }
}

/// The emission interval `T = W / N` (at least 1 ns) and the tolerance `T * (N - 1)`: a burst
/// of `N`, then one call every `T`.
fn gcra_parameters(calls: NonZeroU32, window: Duration) -> (Duration, Duration) {
    let interval = (window / calls.get()).max(Duration::from_nanos(1));
    (interval, interval.saturating_mul(calls.get() - 1))
}

impl RateLimitStore for MemoryStore {
    fn check(
        &self,
        key: &str,
        calls: NonZeroU32,
        window: Duration,
    ) -> BoxFuture<'static, Result<Decision, StoreError>> {
        let (interval, tolerance) = gcra_parameters(calls, window);
        let now = Instant::now();
        let capacity = self.capacity;
        let decision = self.with_tats(calls, window, |tats| {
            let tat = tats.by_key.get(key).copied().filter(|&tat| tat > now).unwrap_or(now);
            let ahead = tat - now;
            if ahead > tolerance {
                return Decision::Limited { retry_after: ahead - tolerance };
            }
            tats.by_key.insert(key.to_owned(), tat + interval);
            tats.bound(now, capacity);
            Decision::Allowed
        });
        Box::pin(std::future::ready(Ok(decision)))
    }

    fn refund(&self, key: &str, calls: NonZeroU32, window: Duration) -> BoxFuture<'static, Result<(), StoreError>> {
        let (interval, _) = gcra_parameters(calls, window);
        let now = Instant::now();
        self.with_tats(calls, window, |tats| {
            let Some(tat) = tats.by_key.get_mut(key) else { return };
            // Never before now: a key that went idle meanwhile has nothing left to give back.
            match tat.checked_sub(interval).filter(|&earlier| earlier > now) {
                Some(earlier) => *tat = earlier,
                None => {
                    tats.by_key.remove(key);
                }
            }
        });
        Box::pin(std::future::ready(Ok(())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::rate_limit::store::whole_seconds;

    fn n(calls: u32) -> NonZeroU32 {
        NonZeroU32::new(calls).unwrap()
    }

    #[tokio::test]
    async fn admits_the_burst_then_says_when() {
        let store = MemoryStore::new();
        for _ in 0..3 {
            assert_eq!(store.check("k", n(3), Duration::from_secs(60)).await.unwrap(), Decision::Allowed);
        }
        let Decision::Limited { retry_after } = store.check("k", n(3), Duration::from_secs(60)).await.unwrap() else {
            panic!("the fourth call is limited")
        };
        // One call every 20 s once the burst is spent.
        assert!(retry_after > Duration::from_secs(19) && retry_after <= Duration::from_secs(20), "{retry_after:?}");
        assert_eq!(whole_seconds(retry_after), 20);
        // Other keys have their own count.
        assert_eq!(store.check("other", n(3), Duration::from_secs(60)).await.unwrap(), Decision::Allowed);
    }

    #[tokio::test]
    async fn a_refund_gives_back_one_call_and_never_more_than_the_burst() {
        let store = MemoryStore::new();
        let window = Duration::from_secs(60);
        for _ in 0..2 {
            assert_eq!(store.check("k", n(2), window).await.unwrap(), Decision::Allowed);
        }
        assert!(matches!(store.check("k", n(2), window).await.unwrap(), Decision::Limited { .. }));
        store.refund("k", n(2), window).await.unwrap();
        assert_eq!(store.check("k", n(2), window).await.unwrap(), Decision::Allowed);
        assert!(matches!(store.check("k", n(2), window).await.unwrap(), Decision::Limited { .. }));
        // Refunds beyond what was taken leave an idle key, whose burst is still two.
        for _ in 0..5 {
            store.refund("k", n(2), window).await.unwrap();
        }
        for _ in 0..2 {
            assert_eq!(store.check("k", n(2), window).await.unwrap(), Decision::Allowed);
        }
        assert!(matches!(store.check("k", n(2), window).await.unwrap(), Decision::Limited { .. }));
        // A refund after the key went idle gives nothing extra either: the key is forgotten.
        let brief = Duration::from_millis(200);
        assert_eq!(store.check("brief", n(1), brief).await.unwrap(), Decision::Allowed);
        tokio::time::sleep(Duration::from_millis(250)).await;
        store.refund("brief", n(1), brief).await.unwrap();
        assert!(store.with_tats(n(1), brief, |tats| tats.by_key.is_empty()));
        assert_eq!(store.check("brief", n(1), brief).await.unwrap(), Decision::Allowed);
        assert!(matches!(store.check("brief", n(1), brief).await.unwrap(), Decision::Limited { .. }));
    }

    #[tokio::test]
    async fn keys_past_the_capacity_are_forgotten_nearest_to_idle_first() {
        let store = MemoryStore::with_capacity(64);
        let window = Duration::from_secs(3600);
        // A caller that spent its whole burst, then many callers with one call each.
        for _ in 0..3 {
            assert_eq!(store.check("heavy", n(3), window).await.unwrap(), Decision::Allowed);
        }
        for caller in 0..10_000 {
            store.check(&format!("one-off-{caller}"), n(3), window).await.unwrap();
        }
        let held = store.with_tats(n(3), window, |tats| tats.by_key.len());
        assert!(held <= 64, "{held} keys held past a capacity of 64");
        assert!(
            matches!(store.check("heavy", n(3), window).await.unwrap(), Decision::Limited { .. }),
            "the key furthest from idle is kept"
        );
    }
}
