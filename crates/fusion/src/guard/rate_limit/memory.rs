//! The in-memory store: counts in this process, with `governor`.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use governor::clock::{Clock, DefaultClock};
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use super::store::{Decision, RateLimitStore, StoreError};

type Keyed = RateLimiter<String, DefaultKeyedStateStore<String>, DefaultClock>;

/// Counts in this process's memory. The default store.
#[derive(Default)]
pub struct MemoryStore {
    limiters: Mutex<HashMap<(NonZeroU32, Duration), Arc<Keyed>>>,
    clock: DefaultClock,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStore").finish_non_exhaustive()
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    fn limiter(&self, calls: NonZeroU32, window: Duration) -> Arc<Keyed> {
        let mut limiters = self.limiters.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let limiter = limiters.entry((calls, window)).or_insert_with(|| {
            let period = (window / calls.get()).max(Duration::from_nanos(1));
            let quota = Quota::with_period(period).expect("a positive period").allow_burst(calls);
            Arc::new(RateLimiter::keyed(quota))
        });
        Arc::clone(limiter)
    }
}

impl RateLimitStore for MemoryStore {
    fn check(
        &self,
        key: &str,
        calls: NonZeroU32,
        window: Duration,
    ) -> BoxFuture<'static, Result<Decision, StoreError>> {
        let limiter = self.limiter(calls, window);
        let decision = match limiter.check_key(&key.to_owned()) {
            Ok(()) => Decision::Allowed,
            Err(not_until) => Decision::Limited { retry_after: not_until.wait_time_from(self.clock.now()) },
        };
        // Forget keys whose state is back to idle, so one-off sessions do not pile up.
        if limiter.len() > 10_000 {
            limiter.retain_recent();
        }
        Box::pin(std::future::ready(Ok(decision)))
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
}
