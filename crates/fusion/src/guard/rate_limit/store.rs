//! Where rate limits count: the store's contract.

use std::num::NonZeroU32;
use std::time::Duration;

use futures_util::future::BoxFuture;

/// The answer of a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// Admitted, and counted.
    Allowed,
    /// Rejected, not counted; a call would be admitted after this long.
    Limited {
        /// Until the next call would be admitted.
        retry_after: Duration,
    },
}

/// Why a store (of rate limits or idempotency keys) could not answer.
#[derive(Debug, thiserror::Error)]
#[error("store unavailable: {0}")]
pub struct StoreError(pub String);

/// Where the counts live. `key` is unique per limit and per counted key; `calls` and
/// `window` are the limit.
///
/// A call counted by one limit and then refused by a later one, or shed by a concurrency
/// guard, is given back with [`refund`](RateLimitStore::refund), so only calls that go on to
/// run are counted.
pub trait RateLimitStore: Send + Sync + 'static {
    /// Checks one call and, if it is admitted, counts it — atomically.
    fn check(&self, key: &str, calls: NonZeroU32, window: Duration)
    -> BoxFuture<'static, Result<Decision, StoreError>>;

    /// Gives back one call that [`check`](RateLimitStore::check) admitted under `key`, because
    /// the call was refused further on and never ran. It must be atomic like `check`, and
    /// never leave the key with more than its full burst (a key that went idle meanwhile has
    /// nothing to give back). An error is logged and otherwise ignored: the call stays counted.
    ///
    /// The default gives nothing back: a store that does not implement it keeps a call it
    /// admitted counted, even when a later guard refuses it.
    fn refund(&self, key: &str, calls: NonZeroU32, window: Duration) -> BoxFuture<'static, Result<(), StoreError>> {
        let _ = (key, calls, window);
        Box::pin(std::future::ready(Ok(())))
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

    #[test]
    fn whole_seconds_round_up_to_at_least_one() {
        assert_eq!(whole_seconds(Duration::ZERO), 1);
        assert_eq!(whole_seconds(Duration::from_millis(1)), 1);
        assert_eq!(whole_seconds(Duration::from_millis(1001)), 2);
        assert_eq!(whole_seconds(Duration::from_secs(3)), 3);
    }
}
