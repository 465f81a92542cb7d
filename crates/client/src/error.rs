//! What a call can fail with: the server's envelope (a tool error the agent can act on), or a
//! protocol or transport failure.

use mcp_fusion_wire::{ContractChange, Envelope, ErrorCode, FieldProblem, Severity};
use rmcp::model::CallToolResult;
use serde_json::Value;

/// Why a call did not give a result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FusionClientError {
    /// The server answered with an error envelope (`isError: true`).
    #[error("{0}")]
    Tool(Box<ToolFailure>),
    /// The server answered with warnings alone, no value; they say why (a mount connecting: nothing ran).
    #[error("{action} answered with a warning and no value: {}", first_warning(warnings))]
    Warned {
        /// The action called.
        action: String,
        /// The warnings, in the order the server sent them.
        warnings: Vec<Envelope>,
        /// The result as received.
        result: Box<CallToolResult>,
    },
    /// The server answered with a JSON-RPC error.
    #[error("JSON-RPC error {code}: {message}")]
    Protocol {
        /// The JSON-RPC error code (`-32602` invalid params, …).
        code: i32,
        /// Its message.
        message: String,
        /// Its data, if any.
        data: Option<Value>,
    },
    /// The connection failed or closed: one sentence of what failed, where, why, and what to
    /// try (`cannot connect to http://127.0.0.1:1/mcp: connection refused; is the server
    /// running, …?`).
    #[error("{0}")]
    Transport(String),
    /// The arguments given are not a JSON object.
    #[error("the arguments of {action} must be a JSON object, not {found}")]
    Arguments {
        /// The action called.
        action: String,
        /// What was given.
        found: Value,
    },
    /// No tool of the server serves the action.
    #[error("no tool serves {action:?}; the server has: {}", tools.join(", "))]
    NoSuchAction {
        /// The action asked for.
        action: String,
        /// The tools the server lists.
        tools: Vec<String>,
    },
    /// The result did not decode as the expected output type.
    #[error("the result of {action} is not a {expected}: {reason}")]
    Output {
        /// The action called.
        action: String,
        /// The type expected.
        expected: &'static str,
        /// What serde said.
        reason: String,
        /// The result as received.
        raw: Box<CallToolResult>,
    },
}

impl FusionClientError {
    /// The tool failure, if this is one.
    pub fn tool(&self) -> Option<&ToolFailure> {
        match self {
            FusionClientError::Tool(failure) => Some(failure),
            _ => None,
        }
    }

    /// The error code of a tool failure.
    pub fn code(&self) -> Option<&ErrorCode> {
        self.tool().map(ToolFailure::code)
    }

    /// The warnings of an answer that had nothing else ([`FusionClientError::Warned`]); empty
    /// for any other error.
    pub fn warnings(&self) -> &[Envelope] {
        match self {
            FusionClientError::Warned { warnings, .. } => warnings,
            _ => &[],
        }
    }
}

/// The first warning as the server said it: its code, its message and what to do.
fn first_warning(warnings: &[Envelope]) -> String {
    let Some(warning) = warnings.first() else { return "(none given)".to_owned() };
    let error = &warning.error;
    let mut said = format!("{}: {}", error.code, error.message);
    if let Some(recovery) = &error.recovery {
        said.push_str(&format!(" ({recovery})"));
    }
    said
}

/// A tool error, parsed from the envelope the server sent.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolFailure {
    envelope: Envelope,
    raw: CallToolResult,
}

impl ToolFailure {
    pub(crate) fn new(envelope: Envelope, raw: CallToolResult) -> ToolFailure {
        ToolFailure { envelope, raw }
    }

    /// The error code (`NOT_FOUND`, `VALIDATION_ERROR`, or a code of the server's own).
    pub fn code(&self) -> &ErrorCode {
        &self.envelope.error.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.envelope.error.message
    }

    /// What to do about it.
    pub fn recovery(&self) -> Option<&str> {
        self.envelope.error.recovery.as_deref()
    }

    /// The actions the agent may call instead.
    pub fn available_actions(&self) -> &[String] {
        &self.envelope.error.available_actions
    }

    /// How bad it is.
    pub fn severity(&self) -> Severity {
        self.envelope.error.severity.clone()
    }

    /// Key/value details, in the server's order.
    pub fn details(&self) -> &[(String, String)] {
        &self.envelope.error.details
    }

    /// Seconds to wait before retrying, if the server said.
    pub fn retry_after(&self) -> Option<u64> {
        self.envelope.error.retry_after
    }

    /// The field problems of a validation error: path and sentence.
    pub fn fields(&self) -> &[FieldProblem] {
        &self.envelope.fields
    }

    /// The changes of the tool's contract, when the server told them.
    pub fn contract_changes(&self) -> &[ContractChange] {
        self.envelope.contract_awareness.as_ref().map_or(&[], |a| &a.changes)
    }

    /// The whole parsed envelope.
    pub fn envelope(&self) -> &Envelope {
        &self.envelope
    }

    /// The MCP result as received.
    pub fn raw(&self) -> &CallToolResult {
        &self.raw
    }
}

impl std::fmt::Display for ToolFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code(), self.message())?;
        if let Some(recovery) = self.recovery() {
            write!(f, " ({recovery})")?;
        }
        Ok(())
    }
}
