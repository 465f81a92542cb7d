//! The rule that turns any failure into an envelope: a `ToolError` passes unchanged, anything
//! else (another error type, a panic) becomes a critical `INTERNAL_ERROR` naming the action.

use std::any::Any;
use std::error::Error as StdError;
use std::fmt::Write as _;

use mcp_fusion_wire::ToolError;

use crate::error::BoxError;
use crate::observe::INCIDENT_TARGET;

/// How a call failed, before it is written as an envelope.
#[derive(Debug)]
pub(crate) enum Failure {
    /// A branded failure: passes unchanged.
    Tool(ToolError),
    /// Any other error: wrapped as `INTERNAL_ERROR`.
    Internal(BoxError),
    /// A panic, with its message when it had one.
    Panic(String),
}

impl Failure {
    /// Sorts an error of any type: a `ToolError` (also inside an `anyhow::Error` or a boxed
    /// error) stays branded; everything else is internal.
    pub(crate) fn from_error<E: Into<BoxError> + 'static>(error: E) -> Failure {
        let mut slot = Some(error);
        let any: &mut dyn Any = &mut slot;
        if let Some(tool) = any.downcast_mut::<Option<ToolError>>().and_then(Option::take) {
            return Failure::Tool(tool);
        }
        #[cfg(feature = "anyhow")]
        if let Some(error) = any.downcast_mut::<Option<anyhow::Error>>().and_then(Option::take) {
            return match error.downcast::<ToolError>() {
                Ok(tool) => Failure::Tool(tool),
                Err(other) => Failure::Internal(other.into()),
            };
        }
        let boxed: BoxError = match slot {
            Some(error) => error.into(),
            None => unreachable!("the slot is emptied only by a successful downcast, which returned"),
        };
        match boxed.downcast::<ToolError>() {
            Ok(tool) => Failure::Tool(*tool),
            Err(other) => match branded_source(&*other) {
                Some(tool) => Failure::Tool(tool),
                None => Failure::Internal(other),
            },
        }
    }

    /// A caught panic payload.
    pub(crate) fn from_panic(payload: Box<dyn Any + Send>) -> Failure {
        let message = match payload.downcast::<String>() {
            Ok(message) => *message,
            Err(payload) => match payload.downcast::<&'static str>() {
                Ok(message) => (*message).to_owned(),
                Err(_) => "a panic without a message".to_owned(),
            },
        };
        Failure::Panic(message)
    }

    /// The envelope: branded errors unchanged, the rest wrapped for `action`: `[group.action] {error}`, or an incident id
    /// alone when internal errors are masked (the full chain then goes to the log only).
    pub(crate) fn into_tool_error(self, action: &str, mask: bool) -> ToolError {
        let (summary, chain) = match self {
            Failure::Tool(tool) => return tool,
            Failure::Internal(error) => (error.to_string(), error_chain(&*error)),
            Failure::Panic(message) => {
                let summary = format!("panicked: {message}");
                (summary.clone(), summary)
            }
        };
        if mask {
            let incident = uuid::Uuid::new_v4().simple().to_string();
            let incident = &incident[..12];
            // On a target of its own: a client listening to the call's events hears the
            // incident, never the chain (`logging`).
            tracing::error!(target: INCIDENT_TARGET, action, incident, error = %chain, "call failed");
            ToolError::internal(format!("[{action}] Internal error (incident {incident})."))
        } else {
            tracing::error!(action, error = %chain, "call failed");
            ToolError::internal(format!("[{action}] {summary}"))
        }
    }
}

/// A `ToolError` somewhere in the error's source chain: an application error type that
/// wraps one (`#[error("…")] Tool(#[source] ToolError)`) still reaches the model branded.
fn branded_source(error: &(dyn StdError + 'static)) -> Option<ToolError> {
    let mut source = error.source();
    while let Some(cause) = source {
        if let Some(tool) = cause.downcast_ref::<ToolError>() {
            return Some(tool.clone());
        }
        source = cause.source();
    }
    None
}

/// `outer: cause: root cause`, for the log.
fn error_chain(error: &(dyn StdError + 'static)) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let _ = write!(out, ": {cause}");
        source = cause.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_fusion_wire::ErrorCode;

    #[test]
    fn tool_errors_stay_branded_however_they_travel() {
        let tool = ToolError::not_found("gone").suggest("list first");
        assert!(matches!(Failure::from_error(tool.clone()), Failure::Tool(t) if t == tool));
        let boxed: BoxError = Box::new(tool.clone());
        assert!(matches!(Failure::from_error(boxed), Failure::Tool(t) if t == tool));
        let wrapped = anyhow::Error::from(tool.clone()).context("while loading");
        assert!(matches!(Failure::from_error(wrapped), Failure::Tool(t) if t == tool));
    }

    #[test]
    fn an_application_error_wrapping_a_tool_error_stays_branded() {
        #[derive(Debug, thiserror::Error)]
        enum AppError {
            #[error("lookup failed")]
            Lookup(#[source] ToolError),
            #[error("database: {0}")]
            Db(#[source] std::io::Error),
        }
        let tool = ToolError::not_found("gone");
        assert!(matches!(Failure::from_error(AppError::Lookup(tool.clone())), Failure::Tool(t) if t == tool));
        let db = AppError::Db(std::io::Error::other("locked"));
        assert!(matches!(Failure::from_error(db), Failure::Internal(_)));
    }

    #[test]
    fn anything_else_is_internal_and_critical() {
        let io = std::io::Error::other("disk on fire");
        let err = Failure::from_error(io).into_tool_error("billing.pay", false);
        assert_eq!(err.code, ErrorCode::InternalError);
        assert_eq!(err.message, "[billing.pay] disk on fire");
        assert_eq!(err.recovery.as_deref(), Some(mcp_fusion_wire::INTERNAL_ERROR_RECOVERY));
        assert!(err.is_error());
        let err = Failure::from_error(anyhow::anyhow!("db down").context("loading")).into_tool_error("a.b", false);
        assert_eq!(err.message, "[a.b] loading");
    }

    #[test]
    fn masked_errors_name_an_incident_only() {
        let err = Failure::from_error("secret connection string").into_tool_error("a.b", true);
        assert!(err.message.starts_with("[a.b] Internal error (incident "), "{}", err.message);
        assert!(!err.message.contains("secret"));
    }

    #[test]
    fn panic_payloads_keep_their_message() {
        let err = Failure::from_panic(Box::new("boom")).into_tool_error("a.b", false);
        assert_eq!(err.message, "[a.b] panicked: boom");
        let err = Failure::from_panic(Box::new(String::from("kaboom"))).into_tool_error("a.b", false);
        assert_eq!(err.message, "[a.b] panicked: kaboom");
        let err = Failure::from_panic(Box::new(42)).into_tool_error("a.b", false);
        assert_eq!(err.message, "[a.b] panicked: a panic without a message");
    }
}
