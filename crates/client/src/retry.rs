//! Retrying the failures that say when to come back.

use std::time::Duration;

use mcp_fusion_wire::{Envelope, ErrorCode, Severity};

/// Retries calls that failed with `RATE_LIMITED`, `SERVER_BUSY` or `HANDOFF_CONNECTING`,
/// after the `retry_after` the server gave, within a cap on attempts and on total waiting.
/// A `critical` failure is never retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Calls in all, the first included (at least one).
    pub max_attempts: u32,
    /// The most time spent waiting between attempts, in all.
    pub max_total_wait: Duration,
}

impl RetryPolicy {
    /// Up to `max_attempts` calls, waiting at most `max_total_wait` in all.
    pub fn new(max_attempts: u32, max_total_wait: Duration) -> RetryPolicy {
        RetryPolicy { max_attempts: max_attempts.max(1), max_total_wait }
    }

    /// How long to wait before the next attempt, or `None` to give up.
    pub(crate) fn wait_before_retry(&self, failure: &Envelope, attempts: u32, waited: Duration) -> Option<Duration> {
        let error = &failure.error;
        let retryable =
            matches!(error.code, ErrorCode::RateLimited | ErrorCode::ServerBusy | ErrorCode::HandoffConnecting);
        if !retryable || error.severity == Severity::Critical || attempts >= self.max_attempts {
            return None;
        }
        let wait = Duration::from_secs(error.retry_after.unwrap_or(1).max(1));
        (waited + wait <= self.max_total_wait).then_some(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_fusion_wire::ToolError;

    fn envelope(error: ToolError) -> Envelope {
        Envelope::from(error)
    }

    #[test]
    fn waits_as_told_within_the_caps() {
        let policy = RetryPolicy::new(3, Duration::from_secs(5));
        let limited = envelope(ToolError::rate_limited("slow", 2));
        assert_eq!(policy.wait_before_retry(&limited, 1, Duration::ZERO), Some(Duration::from_secs(2)));
        assert_eq!(policy.wait_before_retry(&limited, 2, Duration::from_secs(2)), Some(Duration::from_secs(2)));
        assert_eq!(policy.wait_before_retry(&limited, 3, Duration::from_secs(4)), None, "attempts cap");
        assert_eq!(policy.wait_before_retry(&limited, 2, Duration::from_secs(4)), None, "wait cap");
        let busy = envelope(ToolError::server_busy("full"));
        assert_eq!(policy.wait_before_retry(&busy, 1, Duration::ZERO), Some(Duration::from_secs(1)));
    }

    #[test]
    fn never_retries_critical_or_other_codes() {
        let policy = RetryPolicy::new(10, Duration::from_secs(60));
        assert_eq!(
            policy.wait_before_retry(&envelope(ToolError::rate_limited("x", 1).critical()), 1, Duration::ZERO),
            None
        );
        assert_eq!(
            policy.wait_before_retry(&envelope(ToolError::not_found("x").retry_after(1)), 1, Duration::ZERO),
            None
        );
    }
}
