//! Reading a `tools/call` result: its data, its warnings, or its error envelope.

use mcp_fusion_wire::{Envelope, ParsedResult};
use rmcp::model::CallToolResult;
use serde_json::Value;

use crate::error::ToolFailure;

/// What a call gave, whether it failed or not (the non-throwing mode).
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// The MCP result as received.
    pub result: CallToolResult,
    /// The error envelope of a failed call (`isError: true`).
    pub error: Option<Envelope>,
    /// The warnings on a successful call: each text block that is a warning envelope.
    pub warnings: Vec<Envelope>,
}

impl CallOutcome {
    /// Reads a result as [`ParsedResult::from_blocks`] does: an error's text blocks are
    /// joined and parsed as its envelope; a success's text blocks that are warning envelopes
    /// are its warnings.
    pub fn from_result(result: CallToolResult) -> CallOutcome {
        let texts: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
        let read = ParsedResult::from_blocks(&texts, result.is_error == Some(true));
        let (error, warnings) = if read.is_error { (Some(read.envelope), Vec::new()) } else { (None, read.warnings) };
        CallOutcome { result, error, warnings }
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        self.error.is_some()
    }

    /// The data of a success: `structuredContent` if present, else the first text block
    /// read as JSON (or as a JSON string when it is not JSON); `None` when the result is
    /// only a standalone warning.
    pub fn value(&self) -> Option<Value> {
        if let Some(structured) = &self.result.structured_content {
            return Some(structured.clone());
        }
        let first = self.value_text()?;
        Some(serde_json::from_str(first).unwrap_or_else(|_| Value::String(first.to_owned())))
    }

    /// Whether the call succeeded with warnings and no value: a standalone warning, such as
    /// `HANDOFF_CONNECTING` from a mount that is still connecting.
    pub fn is_standalone_warning(&self) -> bool {
        self.error.is_none()
            && !self.warnings.is_empty()
            && self.result.structured_content.is_none()
            && self.value_text().is_none()
    }

    /// The text block that holds the value: the first one, unless it is a warning sent alone.
    fn value_text(&self) -> Option<&str> {
        let first = self.result.content.iter().find_map(|c| c.as_text())?;
        if first.text.trim_start().starts_with("<tool_error") && !self.warnings.is_empty() {
            return None;
        }
        Some(&first.text)
    }

    /// The outcome as a `Result`: the failure when the call failed.
    pub fn into_result(self) -> Result<Reply<Option<Value>>, Box<ToolFailure>> {
        match self.error {
            Some(envelope) => Err(Box::new(ToolFailure::new(envelope, self.result))),
            None => {
                let value = CallOutcome { error: None, ..self.clone() }.value();
                Ok(Reply { value, warnings: self.warnings, result: self.result })
            }
        }
    }
}

/// A successful call's value, with the warnings that rode on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply<T> {
    /// The value.
    pub value: T,
    /// The warnings (deprecations, truncations, …).
    pub warnings: Vec<Envelope>,
    /// The MCP result as received.
    pub result: CallToolResult,
}

impl<T> std::ops::Deref for Reply<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}
