//! Reading a `tools/call` result: its data, its warnings, or its error envelope.

use mcp_fusion_wire::{Envelope, EnvelopeKind, Severity, parse};
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
    /// Reads a result: an error's text blocks are joined and parsed; a success's blocks
    /// after the first (and the first, when it is one) that hold warning envelopes are its
    /// warnings.
    pub fn from_result(result: CallToolResult) -> CallOutcome {
        let texts: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
        if result.is_error == Some(true) {
            let error = parse(&texts.join("\n"));
            return CallOutcome { result, error: Some(error), warnings: Vec::new() };
        }
        let warnings = texts
            .iter()
            .filter(|text| text.trim_start().starts_with("<tool_error"))
            .map(|text| parse(text))
            .filter(|envelope| envelope.kind == EnvelopeKind::ToolError && envelope.error.severity == Severity::Warning)
            .collect();
        CallOutcome { result, error: None, warnings }
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
        let first = self.result.content.iter().find_map(|c| c.as_text())?;
        if first.text.trim_start().starts_with("<tool_error") && !self.warnings.is_empty() {
            return None;
        }
        Some(serde_json::from_str(&first.text).unwrap_or_else(|_| Value::String(first.text.clone())))
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
