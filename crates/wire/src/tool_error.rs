//! The `<tool_error>` envelope: a failure (or a warning) written for the model.

use std::fmt;

use crate::call_result::CallResult;
use crate::code::ErrorCode;
use crate::escape::{push_attr, push_text};
use crate::severity::Severity;

/// The recovery line of a wrapped failure that is not a [`ToolError`].
pub const INTERNAL_ERROR_RECOVERY: &str =
    "Do not blindly retry this call. Check the arguments, try another action, or report the failure to the user.";

/// A failure the model can act on: a code, a message, and optional recovery, available actions,
/// details and retry delay.
///
/// It is its own builder: every method takes and returns the value, and there is no `build()`
/// step. A handler returns it as `Err(ToolError)`, with `?` or `return Err(..)`.
///
/// ```
/// use mcp_fusion_wire::{ErrorCode, ToolError};
///
/// let err = ToolError::new(ErrorCode::NotFound, "No invoice with that ID")
///     .suggest("List invoices first, then retry with a real ID")
///     .actions(["billing.list_invoices"])
///     .detail("requestedId", "inv_2026_9999")
///     .retry_after(30);
/// assert_eq!(err.render(), "\
/// <tool_error code=\"NOT_FOUND\" severity=\"error\">
/// <message>No invoice with that ID</message>
/// <recovery>List invoices first, then retry with a real ID</recovery>
/// <available_actions>
///   <action>billing.list_invoices</action>
/// </available_actions>
/// <details>
///   <detail key=\"requestedId\">inv_2026_9999</detail>
/// </details>
/// <retry_after>30 seconds</retry_after>
/// </tool_error>");
/// assert!(err.to_call_result().is_error);
/// ```
///
/// The sections are the public fields of [`ToolErrorFields`], reached through `Deref`
/// (`err.code`, `err.message = ..`); the rendering applies the contract's rules whatever they
/// hold (a recovery is written only when non-empty, a retry delay only when above zero). The
/// fields live behind one box so that `Result<T, ToolError>` stays as small as a pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    fields: Box<ToolErrorFields>,
}

/// The sections of a [`ToolError`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolErrorFields {
    /// The error code.
    pub code: ErrorCode,
    /// The severity; `error` unless set.
    pub severity: Severity,
    /// The message, always rendered (even empty).
    pub message: String,
    /// The recovery hint.
    pub recovery: Option<String>,
    /// Actions the model may call instead, in order, duplicates kept.
    pub available_actions: Vec<String>,
    /// Key/value details in insertion order.
    pub details: Vec<(String, String)>,
    /// Whole seconds to wait before retrying.
    pub retry_after: Option<u64>,
}

impl ToolError {
    /// A new error with a code and a message; severity `error`, every other section empty.
    pub fn new(code: impl Into<ErrorCode>, message: impl Into<String>) -> ToolError {
        ToolError {
            fields: Box::new(ToolErrorFields {
                code: code.into(),
                severity: Severity::Error,
                message: message.into(),
                recovery: None,
                available_actions: Vec::new(),
                details: Vec::new(),
                retry_after: None,
            }),
        }
    }

    /// Sets the recovery hint. The last call wins; an empty hint removes it.
    pub fn suggest(mut self, recovery: impl Into<String>) -> ToolError {
        let recovery = recovery.into();
        self.recovery = (!recovery.is_empty()).then_some(recovery);
        self
    }

    /// Appends actions the model may call instead, in order; duplicates are kept.
    pub fn actions<I, S>(mut self, actions: I) -> ToolError
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.available_actions.extend(actions.into_iter().map(Into::into));
        self
    }

    /// Sets one detail. A repeated key keeps its first position and takes the new value.
    pub fn detail(mut self, key: impl Into<String>, value: impl fmt::Display) -> ToolError {
        self.set_detail(key.into(), value.to_string());
        self
    }

    /// Sets several details in order, each as [`ToolError::detail`] does.
    pub fn details<I, K, V>(mut self, details: I) -> ToolError
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: fmt::Display,
    {
        for (key, value) in details {
            self.set_detail(key.into(), value.to_string());
        }
        self
    }

    fn set_detail(&mut self, key: String, value: String) {
        match self.details.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => *v = value,
            None => self.details.push((key, value)),
        }
    }

    /// Sets the severity.
    pub fn severity(mut self, severity: Severity) -> ToolError {
        self.severity = severity;
        self
    }

    /// Makes this a warning: guidance on the success path, sent with `isError: false`.
    pub fn warning(self) -> ToolError {
        self.severity(Severity::Warning)
    }

    /// Makes this critical: failed, and not to be retried blindly.
    pub fn critical(self) -> ToolError {
        self.severity(Severity::Critical)
    }

    /// Tells the model to wait this many whole seconds before retrying; 0 removes it.
    pub fn retry_after(mut self, seconds: u64) -> ToolError {
        self.retry_after = (seconds > 0).then_some(seconds);
        self
    }

    /// `NOT_FOUND` with a message.
    pub fn not_found(message: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::NotFound, message)
    }

    /// `CONFLICT` with a message.
    pub fn conflict(message: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::Conflict, message)
    }

    /// `VALIDATION_ERROR` with a message.
    pub fn validation(message: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::ValidationError, message)
    }

    /// `MISSING_REQUIRED_FIELD` for `field`, with the message and recovery of the contract.
    ///
    /// ```
    /// let err = mcp_fusion_wire::ToolError::required("workspace_id");
    /// assert_eq!(err.message, "Required field \"workspace_id\" is missing.");
    /// assert_eq!(err.recovery.as_deref(), Some("Provide the \"workspace_id\" parameter and retry."));
    /// ```
    pub fn required(field: &str) -> ToolError {
        ToolError::new(ErrorCode::MissingRequiredField, format!("Required field \"{field}\" is missing."))
            .suggest(format!("Provide the \"{field}\" parameter and retry."))
    }

    /// `UNAUTHORIZED`: credentials missing, invalid or expired.
    pub fn unauthorized(message: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::Unauthorized, message)
    }

    /// `FORBIDDEN`: the identity lacks a permission.
    pub fn forbidden(message: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::Forbidden, message)
    }

    /// `AUTH_REQUIRED`: the action needs an authenticated identity.
    pub fn auth_required(message: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::AuthRequired, message)
    }

    /// `RATE_LIMITED`, which always carries a retry delay (at least one second).
    pub fn rate_limited(message: impl Into<String>, retry_after_seconds: u64) -> ToolError {
        ToolError::new(ErrorCode::RateLimited, message).retry_after(retry_after_seconds.max(1))
    }

    /// `TIMEOUT` with a message.
    pub fn timeout(message: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::Timeout, message)
    }

    /// `SERVER_BUSY` with a message.
    pub fn server_busy(message: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::ServerBusy, message)
    }

    /// `INTERNAL_ERROR`, critical, with the do-not-retry-blindly recovery.
    pub fn internal(message: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::InternalError, message).critical().suggest(INTERNAL_ERROR_RECOVERY)
    }

    /// `DEPRECATED` as a warning: the call succeeded, but should move on.
    pub fn deprecated(message: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::Deprecated, message).warning()
    }

    /// The value of the detail `key`, if set.
    pub fn find_detail(&self, key: &str) -> Option<&str> {
        self.details.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Whether the result is flagged `isError` (every severity but `warning`).
    pub fn is_error(&self) -> bool {
        self.severity.is_error()
    }

    /// Renders the envelope, byte-exactly as the contract defines it.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(self.rendered_len_hint());
        self.render_into(&mut out);
        out
    }

    /// Appends the rendered envelope to `out`.
    pub fn render_into(&self, out: &mut String) {
        out.push_str("<tool_error code=\"");
        push_attr(out, self.code.as_str());
        out.push_str("\" severity=\"");
        push_attr(out, self.severity.as_str());
        out.push_str("\">\n<message>");
        push_text(out, &self.message);
        out.push_str("</message>\n");
        if let Some(recovery) = self.recovery.as_deref().filter(|r| !r.is_empty()) {
            out.push_str("<recovery>");
            push_text(out, recovery);
            out.push_str("</recovery>\n");
        }
        if !self.available_actions.is_empty() {
            out.push_str("<available_actions>\n");
            for action in &self.available_actions {
                out.push_str("  <action>");
                push_text(out, action);
                out.push_str("</action>\n");
            }
            out.push_str("</available_actions>\n");
        }
        if !self.details.is_empty() {
            out.push_str("<details>\n");
            for (key, value) in &self.details {
                out.push_str("  <detail key=\"");
                push_attr(out, key);
                out.push_str("\">");
                push_text(out, value);
                out.push_str("</detail>\n");
            }
            out.push_str("</details>\n");
        }
        if let Some(seconds) = self.retry_after.filter(|&s| s > 0) {
            out.push_str("<retry_after>");
            out.push_str(&seconds.to_string());
            out.push_str(" seconds</retry_after>\n");
        }
        out.push_str("</tool_error>");
    }

    fn rendered_len_hint(&self) -> usize {
        let actions: usize = self.available_actions.iter().map(|a| a.len() + 20).sum();
        let details: usize = self.details.iter().map(|(k, v)| k.len() + v.len() + 30).sum();
        96 + self.code.as_str().len()
            + self.message.len()
            + self.recovery.as_ref().map_or(0, |r| r.len() + 24)
            + actions
            + details
    }

    /// The MCP result for this error: one text block, `isError` unless it is a warning.
    pub fn to_call_result(&self) -> CallResult {
        CallResult { text: self.render(), is_error: self.is_error() }
    }
}

impl std::ops::Deref for ToolError {
    type Target = ToolErrorFields;

    fn deref(&self) -> &ToolErrorFields {
        &self.fields
    }
}

impl std::ops::DerefMut for ToolError {
    fn deref_mut(&mut self) -> &mut ToolErrorFields {
        &mut self.fields
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

impl From<ToolError> for CallResult {
    fn from(error: ToolError) -> CallResult {
        error.to_call_result()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_carrying_it_stay_small() {
        assert_eq!(std::mem::size_of::<ToolError>(), std::mem::size_of::<usize>());
    }

    #[test]
    fn minimal_envelope() {
        assert_eq!(
            ToolError::not_found("m").render(),
            "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n<message>m</message>\n</tool_error>"
        );
    }

    #[test]
    fn suggest_last_wins_and_empty_clears() {
        let err = ToolError::not_found("m").suggest("first").suggest("second");
        assert_eq!(err.recovery.as_deref(), Some("second"));
        assert_eq!(err.suggest("").recovery, None);
    }

    #[test]
    fn details_keep_first_position_take_new_value() {
        let err = ToolError::not_found("m")
            .details([("a", "1"), ("b", "2")])
            .details([("b", "two"), ("c", "3")])
            .detail("limit", 100)
            .detail("strict", true);
        let keys: Vec<_> = err.details.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(keys, ["a=1", "b=two", "c=3", "limit=100", "strict=true"]);
        assert_eq!(err.find_detail("b"), Some("two"));
    }

    #[test]
    fn warning_is_not_an_error_result() {
        let result = ToolError::deprecated("old").to_call_result();
        assert!(!result.is_error);
        assert!(result.text.starts_with("<tool_error code=\"DEPRECATED\" severity=\"warning\">"));
    }

    #[test]
    fn rate_limited_always_carries_a_delay() {
        assert_eq!(ToolError::rate_limited("slow", 0).retry_after, Some(1));
        assert_eq!(ToolError::rate_limited("slow", 30).retry_after, Some(30));
    }

    #[test]
    fn works_with_question_mark() {
        fn handler() -> Result<(), Box<dyn std::error::Error>> {
            Err(ToolError::conflict("Invoice is already paid."))?;
            Ok(())
        }
        let err = handler().unwrap_err();
        assert_eq!(err.to_string(), "CONFLICT: Invoice is already paid.");
        assert!(err.downcast_ref::<ToolError>().is_some());
    }
}
