//! The result cap: a result whose text is longer than the cap is cut on a character boundary,
//! and a `RESULT_TRUNCATED` warning tells the model to ask for less. A tool that declares an
//! output schema must send conforming structured content with every success, so its result
//! keeps the structured content whole when that fits the cap (the text is what is cut), and
//! is otherwise refused with a `RESULT_TRUNCATED` error.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use mcp_fusion_wire::{ErrorCode, ToolError};
use rmcp::model::ContentBlock;

use super::entry::GuardedEntry;
use crate::context::CallInfo;
use crate::error::BuildError;
use crate::middleware::{Call, Middleware, Next, Outcome};
use crate::output::Output;

/// Cuts the text of results longer than `max_bytes`.
pub(crate) struct ResultCap {
    max_bytes: usize,
}

impl ResultCap {
    pub(crate) fn new(max_bytes: usize) -> ResultCap {
        ResultCap { max_bytes }
    }
}

impl Middleware for ResultCap {
    fn call(&self, call: Call, next: Next) -> BoxFuture<'static, Outcome> {
        let info = Arc::clone(&call.info);
        let max_bytes = self.max_bytes;
        let run = next.run(call);
        Box::pin(async move { run.await.and_then(|output| cap(output, max_bytes, &info)) })
    }

    fn name(&self) -> String {
        format!("result cap ({} bytes)", self.max_bytes)
    }
}

/// Cuts the text of an oversized result on a character boundary and says so in a warning;
/// refuses it when its tool declares an output schema and no whole structured content fits.
fn cap(mut output: Output, limit: usize, call: &CallInfo) -> Outcome {
    let total: usize = output.content.iter().filter_map(|block| block.as_text().map(|t| t.text.len())).sum();
    if total <= limit {
        return Ok(output);
    }
    // A failed result needs no structured content: only its text is cut.
    let keep_structured = call.output_schema && !output.is_error();
    if keep_structured && output.structured.as_ref().is_none_or(|value| json_len(value) > limit) {
        return Err(ToolError::new(
            ErrorCode::result_truncated(),
            format!(
                "The result is {total} bytes, more than the {limit}-byte cap, and this tool's structured result cannot be cut."
            ),
        )
        .suggest("Ask for less: use a smaller page (limit) or a narrower filter, and paginate.")
        .detail("limit_bytes", limit)
        .detail("result_bytes", total));
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
    if !keep_structured {
        // A cut JSON text no longer matches the structured content; the text is what is left.
        output.structured = None;
    }
    call.warn(
        ToolError::new(ErrorCode::result_truncated(), format!("The result was cut to {limit} of {total} bytes."))
            .suggest("Ask for less: use a smaller page (limit) or a narrower filter, and paginate.")
            .detail("limit_bytes", limit)
            .detail("result_bytes", total),
    );
    Ok(output)
}

/// The length of `value` as compact JSON, counted without writing it anywhere.
fn json_len(value: &serde_json::Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a Value to a writer that never fails cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// The largest index `<= at` that is a character boundary of `text`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    (0..=at).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0)
}

/// The result-cap stage of `entry`, when the server caps results.
pub(super) fn compile(entry: &GuardedEntry<'_>, layers: &mut Vec<Arc<dyn Middleware>>) -> Result<(), BuildError> {
    if let Some(max_bytes) = entry.server.max_result_bytes {
        layers.push(Arc::new(ResultCap::new(max_bytes)));
    }
    Ok(())
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
