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

impl CallResult {
    /// This envelope as a failed result (`isError: true`) with `warnings` folded into its one
    /// text block, each rendered after it on lines of its own: a failed result is exactly one
    /// text block, and [`ParsedResult::from_blocks`] reads the same text, the same envelope
    /// first, as when the warnings travelled as blocks of their own.
    ///
    /// ```
    /// use mcp_fusion_wire::ToolError;
    ///
    /// let warning = ToolError::deprecated("old").warning();
    /// let failed = ToolError::not_found("gone").to_call_result().failed_with(&[warning.clone()]);
    /// assert!(failed.is_error);
    /// assert_eq!(failed.text, format!("{}\n{}", ToolError::not_found("gone").render(), warning.render()));
    /// ```
    pub fn failed_with(self, warnings: &[ToolError]) -> CallResult {
        let mut text = self.text;
        for warning in warnings {
            text.push('\n');
            warning.render_into(&mut text);
        }
        CallResult { text, is_error: true }
    }
}

use serde_json::Value;

use crate::parse::{Envelope, EnvelopeKind, parse};
use crate::problem::value_kind as kind;
use crate::severity::Severity;
use crate::tool_error::ToolError;

/// An MCP `CallToolResult` read back: its text, the envelope it holds, and the warnings that
/// rode on a success.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedResult {
    /// The text blocks joined with `\n` (other block types are ignored).
    pub text: String,
    /// `isError` (absent means `false`).
    pub is_error: bool,
    /// The envelope the text holds (of a success, whatever its text reads as).
    pub envelope: Envelope,
    /// On a success: each text block that is a `<tool_error>` of severity `warning`, in
    /// order. Empty on an error, whose one envelope is `envelope`.
    pub warnings: Vec<Envelope>,
}

impl ParsedResult {
    /// Reads the text blocks of a result flagged `is_error`: the one place that decides what
    /// a result's envelope and warnings are, for every reader of results.
    ///
    /// A warning travels as its own block next to the data (or alone), so on a success each
    /// block is tried on its own; a block counts only when it is a tool error that says
    /// `severity="warning"`, so data that merely mentions a tag is not taken for one.
    ///
    /// ```
    /// use mcp_fusion_wire::{ErrorCode, ParsedResult};
    ///
    /// let warning = "<tool_error code=\"DEPRECATED\" severity=\"warning\">\n<message>old</message>\n</tool_error>";
    /// let read = ParsedResult::from_blocks(&["{\"id\": 1}", warning], false);
    /// assert_eq!(read.text, format!("{{\"id\": 1}}\n{warning}"));
    /// assert_eq!(read.warnings.len(), 1);
    /// assert_eq!(read.warnings[0].error.code, ErrorCode::Deprecated);
    ///
    /// let failed = ParsedResult::from_blocks(&["<tool_error code=\"NOT_FOUND\">\n<message>gone</message>\n</tool_error>"], true);
    /// assert_eq!(failed.envelope.error.code, ErrorCode::NotFound);
    /// assert!(failed.warnings.is_empty());
    /// ```
    pub fn from_blocks(texts: &[&str], is_error: bool) -> ParsedResult {
        let text = texts.join("\n");
        let envelope = parse(&text);
        let warnings = if is_error {
            Vec::new()
        } else {
            texts
                .iter()
                .filter(|block| block.trim_start().starts_with("<tool_error"))
                .map(|block| parse(block))
                .filter(|read| read.kind == EnvelopeKind::ToolError && read.error.severity == Severity::Warning)
                .collect()
        };
        ParsedResult { text, is_error, envelope, warnings }
    }
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

/// Reads a `CallToolResult` JSON object (`{"content": [...], "isError": bool}`): its text
/// blocks as [`ParsedResult::from_blocks`] reads them.
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
    Ok(ParsedResult::from_blocks(&texts, is_error))
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

    const WARNING: &str =
        "<tool_error code=\"DEPRECATED\" severity=\"warning\">\n<message>old</message>\n</tool_error>";

    #[test]
    fn warnings_are_the_warning_blocks_of_a_success() {
        let error_block = "<tool_error code=\"NOT_FOUND\">\n<message>gone</message>\n</tool_error>";
        let validation = "<validation_error action=\"g.a\">\n<recovery>r</recovery>\n</validation_error>";
        let truncated =
            "  \n<tool_error code=\"RESULT_TRUNCATED\" severity=\"warning\">\n<message>cut</message>\n</tool_error>";
        let blocks = ["{\"id\": 1}", WARNING, error_block, validation, "text about <tool_error> tags", truncated];
        let read = ParsedResult::from_blocks(&blocks, false);
        let codes: Vec<&str> = read.warnings.iter().map(|w| w.error.code.as_str()).collect();
        assert_eq!(codes, ["DEPRECATED", "RESULT_TRUNCATED"]);
        assert_eq!(read.text, blocks.join("\n"));
        assert_eq!(read.envelope, parse(&blocks.join("\n")));
        assert!(!read.is_error);

        // On an error the joined text is the one envelope; nothing is a warning.
        let failed = ParsedResult::from_blocks(&[WARNING, error_block], true);
        assert!(failed.is_error && failed.warnings.is_empty());
        assert_eq!(failed.envelope, parse(&format!("{WARNING}\n{error_block}")));

        let empty = ParsedResult::from_blocks(&[], false);
        assert_eq!((empty.text.as_str(), empty.warnings.len()), ("", 0));
    }

    #[test]
    fn parse_call_result_reads_warnings_too() {
        let success = json!({"content": [
            {"type": "text", "text": "{\"id\": 1}"},
            {"type": "text", "text": WARNING},
        ], "structuredContent": {"id": 1}});
        let read = parse_call_result(&success).unwrap();
        assert_eq!(read.warnings.len(), 1);
        assert_eq!(read.warnings[0].error.message, "old");
        let failed =
            parse_call_result(&json!({"content": [{"type": "text", "text": WARNING}], "isError": true})).unwrap();
        assert!(failed.warnings.is_empty());
        assert_eq!(failed.envelope.error.severity, Severity::Warning);
    }
}
