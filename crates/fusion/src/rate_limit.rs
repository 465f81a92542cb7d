//! Rate limits: how many calls a key may make in a window, checked against a shared store.
//!
//! The algorithm is GCRA (the generic cell rate algorithm): a limit of `N` calls per `W`
//! admits a burst of `N`, then one call every `W / N`. A rejected call is not counted, and
//! the rejection says exactly when the next call would be admitted. The in-memory store uses
//! `governor`; the Redis store runs the same algorithm in one atomic server-side script, so
//! every replica sharing the Redis counts against one limit.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use crate::context::CallInfo;
use crate::middleware::BoxFuture;

/// A limit: `calls` per `window`, counted per key.
#[derive(Clone)]
pub struct RateLimit {
    pub(crate) calls: NonZeroU32,
    pub(crate) window: Duration,
    pub(crate) key: RateLimitKey,
}

impl std::fmt::Debug for RateLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimit").field("calls", &self.calls).field("window", &self.window).finish_non_exhaustive()
    }
}

impl RateLimit {
    /// `calls` per `window` for each session (the default key). A zero `calls` is read as one.
    pub fn new(calls: u32, window: Duration) -> RateLimit {
        RateLimit {
            calls: NonZeroU32::new(calls).unwrap_or(NonZeroU32::MIN),
            window: window.max(Duration::from_millis(1)),
            key: RateLimitKey::Session,
        }
    }

    /// Counts per session (stdio is one session).
    pub fn per_session(mut self) -> RateLimit {
        self.key = RateLimitKey::Session;
        self
    }

    /// Counts per authenticated identity (anonymous callers share one count).
    pub fn per_identity(mut self) -> RateLimit {
        self.key = RateLimitKey::Identity;
        self
    }

    /// One count for everyone.
    pub fn global(mut self) -> RateLimit {
        self.key = RateLimitKey::Global;
        self
    }

    /// Counts per the key `key` computes from the call.
    pub fn keyed_by(mut self, key: impl Fn(&CallInfo) -> String + Send + Sync + 'static) -> RateLimit {
        self.key = RateLimitKey::Custom(Arc::new(key));
        self
    }

    /// The limit as text: `10 calls per 60s`.
    pub fn describe(&self) -> String {
        let unit = if self.calls.get() == 1 { "call" } else { "calls" };
        format!("{} {unit} per {}", self.calls, describe_window(self.window))
    }

    /// The counted key of a call.
    pub(crate) fn key_of(&self, call: &CallInfo) -> String {
        match &self.key {
            RateLimitKey::Session => format!("session:{}", call.session_id().unwrap_or("local")),
            RateLimitKey::Identity => match call.identity() {
                Some(identity) => format!("identity:{}", identity.subject),
                None => "identity:anonymous".to_owned(),
            },
            RateLimitKey::Global => "global".to_owned(),
            RateLimitKey::Custom(key) => format!("custom:{}", key(call)),
        }
    }

    /// The time between two calls once the burst is spent.
    pub fn emission_interval(&self) -> Duration {
        self.window / self.calls.get()
    }
}

fn describe_window(window: Duration) -> String {
    if window.subsec_nanos() == 0 { format!("{}s", window.as_secs()) } else { format!("{}ms", window.as_millis()) }
}

/// What a limit counts by.
#[derive(Clone)]
pub(crate) enum RateLimitKey {
    Session,
    Identity,
    Global,
    Custom(Arc<dyn Fn(&CallInfo) -> String + Send + Sync>),
}

/// The answer of a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Admitted, and counted.
    Allowed,
    /// Rejected, not counted; a call would be admitted after this long.
    Limited {
        /// Until the next call would be admitted.
        retry_after: Duration,
    },
}

/// Why a store could not decide.
#[derive(Debug, thiserror::Error)]
#[error("rate-limit store unavailable: {0}")]
pub struct StoreError(pub String);

/// Where the counts live. `key` is unique per limit and per counted key; `calls` and
/// `window` are the limit.
pub trait RateLimitStore: Send + Sync + 'static {
    /// Checks one call and, if it is admitted, counts it — atomically.
    fn check(&self, key: &str, calls: NonZeroU32, window: Duration) -> BoxFuture<Result<Decision, StoreError>>;
}

/// What to do with a call when the store cannot decide (Redis down, or too slow).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailurePolicy {
    /// Admit the call (availability first). The default.
    #[default]
    Open,
    /// Reject the call (the limit first).
    Closed,
}

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
    fn check(&self, key: &str, calls: NonZeroU32, window: Duration) -> BoxFuture<Result<Decision, StoreError>> {
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

/// Whole seconds until `retry_after` has passed: rounded up, at least one.
pub(crate) fn whole_seconds(retry_after: Duration) -> u64 {
    let seconds = retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0);
    seconds.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn whole_seconds_round_up_to_at_least_one() {
        assert_eq!(whole_seconds(Duration::ZERO), 1);
        assert_eq!(whole_seconds(Duration::from_millis(1)), 1);
        assert_eq!(whole_seconds(Duration::from_millis(1001)), 2);
        assert_eq!(whole_seconds(Duration::from_secs(3)), 3);
    }

    #[test]
    fn describes_itself() {
        assert_eq!(RateLimit::new(10, Duration::from_secs(60)).describe(), "10 calls per 60s");
        assert_eq!(RateLimit::new(0, Duration::from_millis(1500)).describe(), "1 call per 1500ms");
    }
}
