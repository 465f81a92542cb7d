//! Retrying the answers that say nothing was run and when to come back.

use std::time::Duration;

use mcp_fusion_wire::{Envelope, ErrorCode, Severity};

use crate::outcome::CallOutcome;

/// Retries calls answered with `RATE_LIMITED`, `SERVER_BUSY` or `HANDOFF_CONNECTING` (as a
/// failure, or as a standalone warning with no value) after the `retry_after` the server gave,
/// within a cap on attempts and on total waiting. A `critical` failure is never retried, nor a
/// warning riding on a value (the call ran).
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

    /// How long to wait before the next attempt, or `None` to give up (or when there is
    /// nothing to retry).
    pub(crate) fn wait_before_retry(&self, outcome: &CallOutcome, attempts: u32, waited: Duration) -> Option<Duration> {
        if attempts >= self.max_attempts {
            return None;
        }
        let come_back = match &outcome.error {
            Some(failure) => Some(failure).filter(|f| f.error.severity != Severity::Critical && retryable(f)),
            // A warning alone means the call gave nothing; one riding on a value means it ran.
            None if outcome.is_standalone_warning() => outcome.warnings.iter().find(|w| retryable(w)),
            None => None,
        }?;
        let wait = Duration::from_secs(come_back.error.retry_after.unwrap_or(1).max(1));
        (waited + wait <= self.max_total_wait).then_some(wait)
    }
}

/// Whether the envelope's code says the call was not run and may be made again as it was.
///
/// Of the other canonical codes that can carry `retry_after`, neither qualifies:
/// `HANDOFF_UPSTREAM_UNAVAILABLE` also answers a forwarded call whose connection dropped
/// midway, which the upstream may have run, and `TIMEOUT` a call that may have finished late.
fn retryable(envelope: &Envelope) -> bool {
    matches!(envelope.error.code, ErrorCode::RateLimited | ErrorCode::ServerBusy | ErrorCode::HandoffConnecting)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_fusion_wire::ToolError;
    use rmcp::model::{CallToolResult, ContentBlock};

    fn failed(error: ToolError) -> CallOutcome {
        CallOutcome::from_result(CallToolResult::error(vec![ContentBlock::text(error.render())]))
    }

    /// A success whose content is `blocks`, as a server sends it (`isError: false`).
    fn succeeded(blocks: &[String]) -> CallOutcome {
        CallOutcome::from_result(CallToolResult::success(blocks.iter().map(ContentBlock::text).collect()))
    }

    /// The warning a mount that is still connecting answers with.
    fn connecting() -> String {
        ToolError::new(ErrorCode::HandoffConnecting, "Upstream \"crm\" is still connecting.")
            .suggest("Call again in 2 seconds; nothing was run.")
            .retry_after(2)
            .warning()
            .render()
    }

    #[test]
    fn waits_as_told_within_the_caps() {
        let policy = RetryPolicy::new(3, Duration::from_secs(5));
        let limited = failed(ToolError::rate_limited("slow", 2));
        assert_eq!(policy.wait_before_retry(&limited, 1, Duration::ZERO), Some(Duration::from_secs(2)));
        assert_eq!(policy.wait_before_retry(&limited, 2, Duration::from_secs(2)), Some(Duration::from_secs(2)));
        assert_eq!(policy.wait_before_retry(&limited, 3, Duration::from_secs(4)), None, "attempts cap");
        assert_eq!(policy.wait_before_retry(&limited, 2, Duration::from_secs(4)), None, "wait cap");
        let busy = failed(ToolError::server_busy("full"));
        assert_eq!(policy.wait_before_retry(&busy, 1, Duration::ZERO), Some(Duration::from_secs(1)));
    }

    #[test]
    fn never_retries_critical_or_other_codes() {
        let policy = RetryPolicy::new(10, Duration::from_secs(60));
        assert_eq!(
            policy.wait_before_retry(&failed(ToolError::rate_limited("x", 1).critical()), 1, Duration::ZERO),
            None
        );
        assert_eq!(
            policy.wait_before_retry(&failed(ToolError::not_found("x").retry_after(1)), 1, Duration::ZERO),
            None
        );
        let unavailable = ToolError::new(ErrorCode::HandoffUpstreamUnavailable, "down").retry_after(4);
        assert_eq!(policy.wait_before_retry(&failed(unavailable), 1, Duration::ZERO), None, "it may have run");
        assert_eq!(
            policy.wait_before_retry(&failed(ToolError::timeout("slow").retry_after(1)), 1, Duration::ZERO),
            None
        );
    }

    #[test]
    fn a_standalone_connecting_warning_is_retried_within_the_same_caps() {
        let policy = RetryPolicy::new(3, Duration::from_secs(5));
        let alone = succeeded(&[connecting()]);
        assert!(alone.is_standalone_warning());
        assert_eq!(policy.wait_before_retry(&alone, 1, Duration::ZERO), Some(Duration::from_secs(2)));
        assert_eq!(policy.wait_before_retry(&alone, 2, Duration::from_secs(2)), Some(Duration::from_secs(2)));
        assert_eq!(policy.wait_before_retry(&alone, 3, Duration::from_secs(4)), None, "attempts cap");
        assert_eq!(policy.wait_before_retry(&alone, 2, Duration::from_secs(4)), None, "wait cap");
        // Found among other warnings sent alone with it.
        let deprecated = ToolError::deprecated("old").render();
        let both = succeeded(&[deprecated, connecting()]);
        assert_eq!(policy.wait_before_retry(&both, 1, Duration::ZERO), Some(Duration::from_secs(2)));
        // The other codes that say nothing ran are retried when sent alone as warnings too.
        let busy = succeeded(&[ToolError::server_busy("full").retry_after(3).warning().render()]);
        assert_eq!(policy.wait_before_retry(&busy, 1, Duration::ZERO), Some(Duration::from_secs(3)));
        // As a failure, as an older server may send it, it is retried too.
        let failure = failed(ToolError::new(ErrorCode::HandoffConnecting, "connecting").retry_after(2));
        assert_eq!(policy.wait_before_retry(&failure, 1, Duration::ZERO), Some(Duration::from_secs(2)));
    }

    #[test]
    fn a_warning_on_a_value_or_one_a_retry_cannot_help_is_not_retried() {
        let policy = RetryPolicy::new(10, Duration::from_secs(60));
        // The call ran and gave its value: running it again would run it twice.
        let ran = succeeded(&["{\"id\":1}".to_owned(), connecting()]);
        assert!(!ran.is_standalone_warning());
        assert_eq!(policy.wait_before_retry(&ran, 1, Duration::ZERO), None);
        let mut with_structured = CallToolResult::success(vec![ContentBlock::text(connecting())]);
        with_structured.structured_content = Some(serde_json::json!({"id": 1}));
        let structured = CallOutcome::from_result(with_structured);
        assert_eq!(policy.wait_before_retry(&structured, 1, Duration::ZERO), None);
        // Alone, but saying something a retry does not change.
        let deprecated = succeeded(&[ToolError::deprecated("old").retry_after(1).render()]);
        assert!(deprecated.is_standalone_warning());
        assert_eq!(policy.wait_before_retry(&deprecated, 1, Duration::ZERO), None);
        // A plain success, and an empty one, have nothing to retry.
        assert_eq!(policy.wait_before_retry(&succeeded(&["ok".to_owned()]), 1, Duration::ZERO), None);
        assert_eq!(policy.wait_before_retry(&succeeded(&[]), 1, Duration::ZERO), None);
    }
}
