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
