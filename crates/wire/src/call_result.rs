//! The MCP result an envelope travels in, as plain data for the runtime to map.

/// The `CallToolResult` of an envelope: one text block holding it, and the `isError` flag.
///
/// An envelope never goes in `structuredContent` of a failed call; the runtime maps this to
/// its SDK's result type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallResult {
    /// The single text block: the rendered envelope.
    pub text: String,
    /// `isError`: false only for warnings.
    pub is_error: bool,
}

use serde_json::Value;

use crate::parse::{Envelope, parse};
use crate::problem::value_kind as kind;

/// An MCP `CallToolResult` JSON read back: its text and its parsed envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedResult {
    /// The text blocks joined with `\n` (other block types are ignored).
    pub text: String,
    /// `isError` (absent means `false`).
    pub is_error: bool,
    /// The envelope the text holds.
    pub envelope: Envelope,
}

/// Why a JSON value is not a `CallToolResult`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAResult(pub String);

impl std::fmt::Display for NotAResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not an MCP CallToolResult: {}", self.0)
    }
}

impl std::error::Error for NotAResult {}

/// Reads a `CallToolResult` JSON object (`{"content": [...], "isError": bool}`): joins its
/// text blocks with `\n` and parses the envelope they hold.
///
/// ```
/// let result = serde_json::json!({
///     "content": [{"type": "text", "text": "<tool_error code=\"NOT_FOUND\">\n<message>gone</message>\n</tool_error>"}],
///     "isError": true,
/// });
/// let parsed = mcp_fusion_wire::parse_call_result(&result).unwrap();
/// assert!(parsed.is_error);
/// assert_eq!(parsed.envelope.error.message, "gone");
/// ```
pub fn parse_call_result(result: &Value) -> Result<ParsedResult, NotAResult> {
    let object =
        result.as_object().ok_or_else(|| NotAResult(format!("expected a JSON object, found {}", kind(result))))?;
    let content = match object.get("content") {
        Some(Value::Array(content)) => content,
        Some(other) => return Err(NotAResult(format!("\"content\" is {}, expected an array of blocks", kind(other)))),
        None => return Err(NotAResult("it has no \"content\" array".to_owned())),
    };
    let is_error = match object.get("isError") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(flag)) => *flag,
        Some(other) => return Err(NotAResult(format!("\"isError\" is {}, expected true or false", kind(other)))),
    };
    let texts: Vec<&str> = content
        .iter()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect();
    let text = texts.join("\n");
    let envelope = parse(&text);
    Ok(ParsedResult { text, is_error, envelope })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn joins_text_blocks_and_ignores_others() {
        let result = json!({"content": [
            {"type": "text", "text": "<tool_error code=\"X\" severity=\"warning\">"},
            {"type": "image", "data": "AA==", "mimeType": "image/png"},
            {"type": "text", "text": "<message>m</message>\n</tool_error>"}
        ]});
        let parsed = parse_call_result(&result).unwrap();
        assert!(!parsed.is_error);
        assert_eq!(parsed.text, "<tool_error code=\"X\" severity=\"warning\">\n<message>m</message>\n</tool_error>");
        assert_eq!(parsed.envelope.error.message, "m");
    }

    #[test]
    fn garbage_is_a_clear_error() {
        for (value, wanted) in [
            (json!([1]), "expected a JSON object, found an array"),
            (json!({}), "it has no \"content\" array"),
            (json!({"content": "x"}), "\"content\" is a string"),
            (json!({"content": [], "isError": "yes"}), "\"isError\" is a string"),
        ] {
            let error = parse_call_result(&value).unwrap_err().to_string();
            assert!(error.contains(wanted), "{error}");
        }
        let empty = parse_call_result(&json!({"content": []})).unwrap();
        assert_eq!(empty.envelope.error.message, "Unknown error");
    }
}
