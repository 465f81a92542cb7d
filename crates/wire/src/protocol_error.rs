//! An envelope as a JSON-RPC error, and back: MCP 2026-07-28 answers a call of an unknown tool
//! with `-32602` (Invalid params) instead of a result, and a model reads what a client shows of
//! that error — its message. The message keeps the healing sentences (what was wrong, what to
//! call instead); the `data` keeps the envelope's sections, so a client that reads them gets
//! the same error as from the envelope of a result.

use serde_json::{Map, Value, json};

use crate::budget::{MIN_ENVELOPE_BUDGET, most_that_fit};
use crate::code::ErrorCode;
use crate::severity::Severity;
use crate::tool_error::ToolError;

/// JSON-RPC's Invalid params: MCP's code for a call of a tool the server does not have.
pub const INVALID_PARAMS: i32 = -32602;

/// A JSON-RPC error, as plain data for the runtime to map to its SDK's error type.
#[derive(Debug, Clone, PartialEq)]
pub struct ProtocolError {
    /// The JSON-RPC error code.
    pub code: i32,
    /// The message: what a client shows of the error.
    pub message: String,
    /// The structured data: the envelope's sections.
    pub data: Value,
}

impl ToolError {
    /// This error as JSON-RPC's `-32602`: its message and recovery as the message, its
    /// sections (code, severity, message, recovery, available actions, details, retry delay)
    /// as the data, both together within `budget` characters (at least
    /// [`MIN_ENVELOPE_BUDGET`]), the available actions cut first, as in an envelope.
    ///
    /// ```
    /// use mcp_fusion_wire::{ErrorCode, ToolError};
    ///
    /// let error = ToolError::new(ErrorCode::UnknownAction, "Unknown tool 'pyng'.")
    ///     .suggest("Did you mean \"ping\"? Call one of the available tools.")
    ///     .actions(["ping", "billing"]);
    /// let rpc = error.to_invalid_params(8_000);
    /// assert_eq!(rpc.code, -32602);
    /// assert_eq!(rpc.message, "Unknown tool 'pyng'. Did you mean \"ping\"? Call one of the available tools.");
    /// assert_eq!(rpc.data["code"], "UNKNOWN_ACTION");
    /// assert_eq!(rpc.data["available_actions"][0], "ping");
    /// assert_eq!(ToolError::from_protocol_error(rpc.code, &rpc.message, Some(&rpc.data)), Some(error));
    /// ```
    pub fn to_invalid_params(&self, budget: usize) -> ProtocolError {
        let budget = budget.max(MIN_ENVELOPE_BUDGET);
        let error = self.clone().within(budget);
        let size = |kept: usize| {
            let rpc = protocol_error(&error, kept);
            rpc.message.chars().count() + rpc.data.to_string().chars().count()
        };
        let all = error.available_actions.len();
        if size(all) <= budget {
            return protocol_error(&error, all);
        }
        protocol_error(&error, most_that_fit(all, |kept| size(kept) <= budget))
    }

    /// The error a JSON-RPC error stands for, when it is `-32602` of a tool the server does not
    /// have: read from the sections its `data` holds (as [`to_invalid_params`](Self::to_invalid_params)
    /// writes them), or, from a server that sends only a message (`Unknown tool: x`, `Tool x
    /// not found`), `UNKNOWN_ACTION` with that message. Any other error is none.
    ///
    /// ```
    /// use mcp_fusion_wire::{ErrorCode, ToolError};
    ///
    /// let read = ToolError::from_protocol_error(-32602, "Unknown tool: pyng", None).unwrap();
    /// assert_eq!(read.code, ErrorCode::UnknownAction);
    /// assert_eq!(read.message, "Unknown tool: pyng");
    /// assert_eq!(ToolError::from_protocol_error(-32602, "Invalid cursor", None), None);
    /// ```
    pub fn from_protocol_error(code: i32, message: &str, data: Option<&Value>) -> Option<ToolError> {
        if code != INVALID_PARAMS {
            return None;
        }
        if let Some(error) = data.and_then(Value::as_object).and_then(from_sections) {
            return Some(error);
        }
        names_an_unknown_tool(message).then(|| {
            ToolError::new(ErrorCode::UnknownAction, message)
                .suggest("Call one of the available tools; tools/list describes them.")
        })
    }
}

impl ToolError {
    /// The message and the recovery as one line: what a client shows of an error that is no
    /// envelope (a JSON-RPC error's message, another server's words passed on).
    ///
    /// ```
    /// use mcp_fusion_wire::ToolError;
    ///
    /// let error = ToolError::not_found("No invoice inv_9.").suggest("List the invoices first.");
    /// assert_eq!(error.said_in_one_line(), "No invoice inv_9. List the invoices first.");
    /// ```
    pub fn said_in_one_line(&self) -> String {
        match self.recovery.as_deref().filter(|r| !r.is_empty()) {
            Some(recovery) => format!("{} {recovery}", self.message),
            None => self.message.clone(),
        }
    }
}

/// The error as JSON-RPC's `-32602` with its first `kept` actions, and a detail counting the
/// rest.
fn protocol_error(error: &ToolError, kept: usize) -> ProtocolError {
    let message = error.said_in_one_line();
    let mut details: Map<String, Value> =
        error.details.iter().map(|(key, value)| (key.clone(), Value::String(value.clone()))).collect();
    let more = error.available_actions.len() - kept;
    if more > 0 {
        details.insert("more_actions".into(), format!("{more} more: tools/list lists them all.").into());
    }
    let mut data = json!({
        "code": error.code.as_str(),
        "severity": error.severity.as_str(),
        "message": error.message,
    });
    if let Some(recovery) = error.recovery.as_deref().filter(|r| !r.is_empty()) {
        data["recovery"] = recovery.into();
    }
    if kept > 0 {
        data["available_actions"] = error.available_actions[..kept].into();
    }
    if !details.is_empty() {
        data["details"] = Value::Object(details);
    }
    if let Some(seconds) = error.retry_after.filter(|&s| s > 0) {
        data["retry_after"] = seconds.into();
    }
    ProtocolError { code: INVALID_PARAMS, message, data }
}

/// The error the sections of a JSON-RPC error's data hold; none without a code and a message.
fn from_sections(data: &Map<String, Value>) -> Option<ToolError> {
    let code = data.get("code")?.as_str()?;
    let message = data.get("message")?.as_str()?;
    let severity = data.get("severity").and_then(Value::as_str).and_then(|s| s.parse::<Severity>().ok());
    let mut error = ToolError::new(ErrorCode::from(code), message).severity(severity.unwrap_or(Severity::Error));
    if let Some(recovery) = data.get("recovery").and_then(Value::as_str) {
        error = error.suggest(recovery);
    }
    let actions = data.get("available_actions").and_then(Value::as_array).into_iter().flatten();
    error = error.actions(actions.filter_map(Value::as_str));
    let details = data.get("details").and_then(Value::as_object).into_iter().flatten();
    error = error.details(details.map(|(key, value)| match value {
        Value::String(text) => (key.clone(), text.clone()),
        other => (key.clone(), other.to_string()),
    }));
    if let Some(seconds) = data.get("retry_after").and_then(Value::as_u64) {
        error = error.retry_after(seconds);
    }
    Some(error)
}

/// Whether a `-32602`'s message says the tool is not there, as SDKs word it (`Unknown tool:
/// x`, `Tool x not found`): not about the arguments.
pub fn names_an_unknown_tool(message: &str) -> bool {
    let message = message.to_lowercase();
    message.contains("tool") && (message.contains("not found") || message.contains("unknown"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unknown() -> ToolError {
        ToolError::new(ErrorCode::UnknownAction, "Unknown tool 'pyng'.")
            .suggest("Did you mean \"ping\"? Call one of the available tools.")
    }

    #[test]
    fn the_sections_come_back_whole() {
        let error = unknown().actions(["ping", "billing"]).detail("requested", "pyng").retry_after(3);
        let rpc = error.to_invalid_params(8_000);
        assert_eq!(ToolError::from_protocol_error(rpc.code, &rpc.message, Some(&rpc.data)), Some(error));
    }

    #[test]
    fn a_long_list_of_tools_is_cut_to_the_budget_and_counted() {
        let error = unknown().actions((0..500).map(|i| format!("crm.tool_{i}")));
        let rpc = error.to_invalid_params(1_000);
        let total = rpc.message.chars().count() + rpc.data.to_string().chars().count();
        assert!(total <= 1_000, "{total}");
        assert!(rpc.message.contains("Did you mean \"ping\"?"));
        assert!(rpc.data["details"]["more_actions"].as_str().unwrap().ends_with("tools/list lists them all."));
    }

    #[test]
    fn another_servers_message_alone_is_an_unknown_tool() {
        for message in ["Unknown tool: pyng", "Tool pyng not found"] {
            let read = ToolError::from_protocol_error(INVALID_PARAMS, message, Some(&json!({"x": 1}))).unwrap();
            assert_eq!(read.code, ErrorCode::UnknownAction);
            assert_eq!(read.message, message);
        }
        assert_eq!(ToolError::from_protocol_error(-32601, "Unknown tool: pyng", None), None);
        assert_eq!(ToolError::from_protocol_error(INVALID_PARAMS, "Invalid cursor", None), None);
    }
}
