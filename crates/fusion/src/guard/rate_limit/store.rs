//! Where rate limits count: the store's contract.

use std::num::NonZeroU32;
use std::time::Duration;

use futures_util::future::BoxFuture;

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
    fn check(&self, key: &str, calls: NonZeroU32, window: Duration)
    -> BoxFuture<'static, Result<Decision, StoreError>>;
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
