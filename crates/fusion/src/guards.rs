//! What stands between a validated call and its handler — identity and scopes, rate limits,
//! concurrency, timeout and cancellation — and what is added to a result on the way out:
//! the payload cap and deprecation warnings. Each failure is an envelope (SPEC §2.3).

use std::sync::Arc;
use std::time::Duration;

use mcp_fusion_wire::{ErrorCode, ToolError};
use rmcp::model::ContentBlock;
use serde_json::Value;

use crate::auth::{AuthError, Caller};
use crate::concurrency::{ConcurrencyGuard, Slot};
use crate::context::CallInfo;
use crate::rate_limit::{Decision, FailurePolicy, RateLimit, RateLimitStore, whole_seconds};
use crate::response::Output;

/// The guards of the whole server.
pub(crate) struct ServerGuards {
    pub store: Arc<dyn RateLimitStore>,
    pub failure_policy: FailurePolicy,
    pub store_timeout: Duration,
    pub max_result_bytes: Option<usize>,
}

/// The guards of one action, composed at build time from the server's, its group's and its own.
pub(crate) struct ActionGuards {
    pub qualified: Arc<str>,
    pub require_identity: bool,
    pub scopes: Vec<String>,
    /// Each limit with the prefix that makes its keys unique (`billing.pay_invoice#0`).
    pub rate_limits: Vec<(String, RateLimit)>,
    /// Outermost (server) last: slots are taken tool first, so a call waits in one line.
    pub concurrency: Vec<Arc<ConcurrencyGuard>>,
    pub timeout: Option<Duration>,
    pub idempotent: bool,
    pub deprecation: Option<ToolError>,
    pub deprecated_fields: Vec<(String, ToolError)>,
}

/// What a call holds while it runs: its concurrency slots.
pub(crate) struct Admission {
    _slots: Vec<Slot>,
}

impl ActionGuards {
    /// Identity, scopes, rate limits, then a concurrency slot (waiting in line if need be).
    pub(crate) async fn admit(&self, call: &CallInfo, server: &ServerGuards) -> Result<Admission, ToolError> {
        self.check_caller(call)?;
        for (prefix, limit) in &self.rate_limits {
            self.check_rate(call, server, prefix, limit).await?;
        }
        let mut slots = Vec::with_capacity(self.concurrency.len());
        for guard in &self.concurrency {
            slots.push(guard.acquire().await?);
        }
        Ok(Admission { _slots: slots })
    }

    fn check_caller(&self, call: &CallInfo) -> Result<(), ToolError> {
        let action = &self.qualified;
        let identity = match &call.caller {
            Caller::Refused(reason) => {
                let reason = match reason {
                    AuthError::Invalid => "the bearer token is not valid",
                    AuthError::Expired => "the bearer token has expired",
                };
                return Err(ToolError::unauthorized(format!("The credentials sent with this call were refused: {reason}."))
                    .suggest("Tell the user to sign in again (the client must send a fresh bearer token); do not retry with the same credentials."));
            }
            Caller::Anonymous if self.require_identity || !self.scopes.is_empty() => {
                return Err(ToolError::auth_required(format!("{action} needs an authenticated caller, and this call came without credentials."))
                    .suggest("Tell the user this action needs them to sign in (the client must send a bearer token); do not retry until then."));
            }
            Caller::Anonymous => return Ok(()),
            Caller::Authenticated(identity) => identity,
        };
        if let Some(missing) = self.scopes.iter().find(|scope| !identity.has_scope(scope)) {
            return Err(ToolError::forbidden(format!(
                "{action} needs the scope \"{missing}\", which \"{}\" does not have.",
                identity.subject
            ))
            .suggest("Do not retry: ask the user for access, or use an action you are allowed to call.")
            .detail("required_scope", missing));
        }
        Ok(())
    }

    async fn check_rate(
        &self,
        call: &CallInfo,
        server: &ServerGuards,
        prefix: &str,
        limit: &RateLimit,
    ) -> Result<(), ToolError> {
        let key = format!("{prefix}:{}", limit.key_of(call));
        let checked =
            tokio::time::timeout(server.store_timeout, server.store.check(&key, limit.calls, limit.window)).await;
        let failure = match checked {
            Ok(Ok(Decision::Allowed)) => return Ok(()),
            Ok(Ok(Decision::Limited { retry_after })) => {
                let seconds = whole_seconds(retry_after);
                return Err(ToolError::rate_limited(
                    format!("Rate limit of {} reached: {}.", self.qualified, limit.describe()),
                    seconds,
                )
                .suggest(format!("Wait {seconds} seconds before calling it again; do not retry sooner."))
                .detail("limit", limit.calls)
                .detail("window_seconds", limit.window.as_secs_f64()));
            }
            Ok(Err(error)) => error.to_string(),
            Err(_) => format!("rate-limit store did not answer within {} ms", server.store_timeout.as_millis()),
        };
        match server.failure_policy {
            FailurePolicy::Open => {
                tracing::warn!(action = %self.qualified, "admitting the call unchecked (fail-open): {failure}");
                Ok(())
            }
            FailurePolicy::Closed => {
                tracing::warn!(action = %self.qualified, "refusing the call (fail-closed): {failure}");
                Err(ToolError::rate_limited(
                    format!(
                        "The rate limit of {} cannot be checked right now, so the call was refused.",
                        self.qualified
                    ),
                    5,
                )
                .suggest("Wait 5 seconds and call again; the limit store is recovering."))
            }
        }
    }

    /// The `TIMEOUT` envelope, telling whether a retry is safe.
    pub(crate) fn timed_out(&self, after: Duration) -> ToolError {
        let recovery = if self.idempotent {
            "Retry the call; repeating this action is safe."
        } else {
            "The action may have partly run: check its effect with a read action before calling it again."
        };
        ToolError::timeout(format!("{} did not finish within {} ms.", self.qualified, after.as_millis()))
            .suggest(recovery)
    }

    /// Deprecation warnings for the action and for each deprecated field sent.
    pub(crate) fn warn_deprecations(&self, call: &CallInfo, arguments: &Value) {
        if let Some(warning) = &self.deprecation {
            call.warn(warning.clone());
        }
        for (field, warning) in &self.deprecated_fields {
            if arguments.get(field).is_some() {
                call.warn(warning.clone());
            }
        }
    }
}

/// What a client that cancelled sees, should the answer still reach it.
pub(crate) fn cancelled(action: &str) -> ToolError {
    ToolError::new("CANCELLED", format!("{action} was cancelled by the client before it finished."))
        .suggest("Nothing to do: the client cancelled this call.")
}

impl ServerGuards {
    /// Cuts the text of an oversized result on a character boundary and says so in a warning.
    pub(crate) fn cap(&self, mut output: Output, call: &CallInfo) -> Output {
        let Some(limit) = self.max_result_bytes else { return output };
        let total: usize = output.content.iter().filter_map(|block| block.as_text().map(|t| t.text.len())).sum();
        if total <= limit {
            return output;
        }
        let mut budget = limit;
        for block in &mut output.content {
            let Some(text) = block.as_text().map(|t| t.text.as_str()) else { continue };
            let keep = floor_char_boundary(text, budget);
            budget -= keep;
            if keep < text.len() {
                *block = ContentBlock::text(text[..keep].to_owned());
            }
        }
        // A cut JSON text no longer matches the structured content; the text is what is left.
        output.structured = None;
        call.warn(
            ToolError::new("RESULT_TRUNCATED", format!("The result was cut to {limit} of {total} bytes."))
                .suggest("Ask for less: use a smaller page (limit) or a narrower filter, and paginate.")
                .detail("limit_bytes", limit)
                .detail("result_bytes", total),
        );
        output
    }
}

/// The largest index `<= at` that is a character boundary of `text`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    (0..=at).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0)
}

/// The `DEPRECATED` warning of an action, naming its replacement.
pub(crate) fn action_deprecation(qualified: &str, replacement: Option<&str>) -> ToolError {
    let warning = ToolError::new(ErrorCode::Deprecated, format!("{qualified} is deprecated.")).warning();
    match replacement {
        Some(replacement) => warning.suggest(format!("Use {replacement} instead.")).actions([replacement]),
        None => warning.suggest("Stop relying on it: it will be removed."),
    }
}

/// The `DEPRECATED` warning of a field, naming its replacement.
pub(crate) fn field_deprecation(qualified: &str, field: &str, replacement: Option<&str>) -> ToolError {
    let warning =
        ToolError::new(ErrorCode::Deprecated, format!("The field \"{field}\" of {qualified} is deprecated.")).warning();
    let warning = match replacement {
        Some(replacement) => warning.suggest(format!("Send \"{replacement}\" instead of \"{field}\".")),
        None => warning.suggest(format!("Stop sending \"{field}\": it will be removed.")),
    };
    warning.actions([qualified]).detail("field", field)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_a_character_boundary() {
        assert_eq!(floor_char_boundary("héllo", 2), 1);
        assert_eq!(floor_char_boundary("héllo", 3), 3);
        assert_eq!(floor_char_boundary("🚀🚀", 5), 4);
        assert_eq!(floor_char_boundary("ab", 10), 2);
    }
}
