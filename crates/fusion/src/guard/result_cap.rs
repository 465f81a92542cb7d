//! The result cap: a result whose text is longer than the cap is cut on a character boundary,
//! and a `RESULT_TRUNCATED` warning tells the model to ask for less.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use mcp_fusion_wire::{ErrorCode, ToolError};
use rmcp::model::ContentBlock;

use crate::context::CallInfo;
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
        Box::pin(async move { run.await.map(|output| cap(output, max_bytes, &info)) })
    }

    fn name(&self) -> String {
        format!("result cap ({} bytes)", self.max_bytes)
    }
}

/// Cuts the text of an oversized result on a character boundary and says so in a warning.
fn cap(mut output: Output, limit: usize, call: &CallInfo) -> Output {
    let total: usize = output.content.iter().filter_map(|block| block.as_text().map(|t| t.text.len())).sum();
    if total <= limit {
        return output;
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
    // A cut JSON text no longer matches the structured content; the text is what is left.
    output.structured = None;
    call.warn(
        ToolError::new(ErrorCode::result_truncated(), format!("The result was cut to {limit} of {total} bytes."))
            .suggest("Ask for less: use a smaller page (limit) or a narrower filter, and paginate.")
            .detail("limit_bytes", limit)
            .detail("result_bytes", total),
    );
    output
}

/// The largest index `<= at` that is a character boundary of `text`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    (0..=at).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0)
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
