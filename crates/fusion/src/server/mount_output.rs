//! The output rules held against a mounted tool's results: a tool listed with an output
//! schema answers a success with structured content that schema accepts, as a local action
//! does. An upstream's success that breaks the rule reaches no client as a success.

use std::sync::OnceLock;

use mcp_fusion_wire::{ErrorCode, ToolError, echo};
use rmcp::model::{CallToolResult, JsonObject};

use crate::validation::{Checker, Formats};

/// A mounted tool's output schema, compiled the first time a result is checked against it.
pub(super) struct OutputCheck {
    schema: JsonObject,
    checker: OnceLock<Option<Checker>>,
}

impl OutputCheck {
    pub(super) fn new(schema: JsonObject) -> OutputCheck {
        OutputCheck { schema, checker: OnceLock::new() }
    }

    /// What is wrong with the success `result` of the tool `qualified`, if anything: what it
    /// is, and the first problem found in it.
    fn problem(&self, qualified: &str, result: &CallToolResult) -> Option<(&'static str, String)> {
        let Some(structured) = &result.structured_content else {
            return Some((
                "a success with no structuredContent, though the tool declares an output schema",
                String::new(),
            ));
        };
        let checker = self.checker.get_or_init(|| match Checker::new(&self.schema, Vec::new(), Formats::Annotated) {
            Ok(checker) => Some(checker),
            Err(reason) => {
                // Its structured content is still required; only its shape goes unchecked.
                tracing::warn!(tool = %qualified, "the upstream's output schema does not compile, so results go unchecked: {}", echo(&reason));
                None
            }
        });
        let problems = checker.as_ref()?.check(structured);
        let first = problems.first()?;
        let more = match problems.len() - 1 {
            0 => String::new(),
            1 => " It has 1 more problem.".to_owned(),
            more => format!(" It has {more} more problems."),
        };
        Some((
            "structuredContent that does not match the tool's output schema",
            format!(" At {}: {}{more}", first.name, first.text),
        ))
    }
}

/// `result` when it keeps the output rules; else the envelope that says how it broke them.
pub(super) fn conforming(
    check: Option<&OutputCheck>,
    namespace: &str,
    qualified: &str,
    result: CallToolResult,
) -> Result<CallToolResult, ToolError> {
    // A failed result needs no structured content: it is the upstream's own envelope.
    let Some((what, detail)) =
        check.filter(|_| result.is_error != Some(true)).and_then(|check| check.problem(qualified, &result))
    else {
        return Ok(result);
    };
    Err(ToolError::new(
        ErrorCode::HandoffUpstreamUnavailable,
        format!(
            "Upstream \"{namespace}\" answered {qualified} with {what}, so the answer cannot be used.{detail}"
        ),
    )
    .suggest(format!(
        "The call reached the upstream and may have run: if the tool changes anything, check first whether it already did. Calling it again is likely to fail the same way; tell the user that upstream \"{namespace}\" answers against its own output schema, or use another tool."
    )))
}
