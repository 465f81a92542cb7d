//! What a handler returns on success, and how outcomes become MCP results.

use mcp_fusion_wire::{CallResult, ToolError};
use rmcp::Json;
use rmcp::model::{CallToolResult, ContentBlock, MetaObject, PromptMessage, ResourceContents};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde_json::Value;

use crate::error::BoxError;

/// The success of an action: its content blocks and, for typed outputs, the structured
/// content.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// The content blocks (text, image, audio, resources), in order.
    pub content: Vec<ContentBlock>,
    /// `structuredContent`, when the action declares an output schema.
    pub structured: Option<Value>,
    /// A result that came whole from elsewhere (a mounted upstream): its `isError` and `_meta`.
    passed_through: Option<(bool, Option<MetaObject>)>,
    /// A prompt's messages or a resource's contents, as the handler made them.
    payload: Option<Payload>,
}

/// What a prompt or a resource read answers with, carried through the chain as typed values:
/// a prompt's messages and a read's contents are not content blocks, and a conversion to
/// blocks and back would lose what blocks cannot say (a blob's URI, a message's role).
///
/// The content blocks of an [`Output`] that carries one are what a middleware added: a
/// prompt sends each as one more user message, a read as one more contents (see
/// [`FusionServer::read_resource`](crate::FusionServer::read_resource)).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum Payload {
    /// A prompt's messages.
    Messages {
        /// The description `prompts/get` answers with; the prompt's own when `None`.
        description: Option<String>,
        /// The messages, in order.
        messages: Vec<PromptMessage>,
    },
    /// A resource's contents.
    Contents(Vec<ResourceContents>),
}

impl Output {
    /// A plain text result.
    pub fn text(text: impl Into<String>) -> Output {
        Output::blocks(vec![ContentBlock::text(text.into())])
    }

    /// A structured result: the value as compact JSON text and as `structuredContent`.
    pub fn structured(value: Value) -> Output {
        Output {
            content: vec![ContentBlock::text(value.to_string())],
            structured: Some(value),
            passed_through: None,
            payload: None,
        }
    }

    /// A structured result whose text block is `text` (a summary line, what a model or a
    /// host showing text reads) rather than the value's JSON; `structuredContent` is `value`.
    pub fn structured_with_text(text: impl Into<String>, value: Value) -> Output {
        Output { structured: Some(value), ..Output::text(text) }
    }

    /// A result of any content blocks: images, audio, embedded resources, text.
    pub fn blocks(content: Vec<ContentBlock>) -> Output {
        Output { content, structured: None, passed_through: None, payload: None }
    }

    /// A prompt's answer: its messages, with the prompt's own description.
    pub fn messages(messages: Vec<PromptMessage>) -> Output {
        Output::carrying(Payload::Messages { description: None, messages })
    }

    /// A resource read's answer: its contents (an empty `uri` is filled with the URI read).
    pub fn contents(contents: Vec<ResourceContents>) -> Output {
        Output::carrying(Payload::Contents(contents))
    }

    /// An output carrying `payload`, with no content block of its own.
    pub fn carrying(payload: Payload) -> Output {
        Output { content: Vec::new(), structured: None, passed_through: None, payload: Some(payload) }
    }

    /// The prompt's messages or the read's contents this output carries, if any.
    pub fn payload(&self) -> Option<&Payload> {
        self.payload.as_ref()
    }

    /// The payload, to adjust before it is sent.
    pub fn payload_mut(&mut self) -> Option<&mut Payload> {
        self.payload.as_mut()
    }

    /// Takes the payload out, leaving the content blocks and the structured content.
    pub(crate) fn take_payload(&mut self) -> Option<Payload> {
        self.payload.take()
    }

    /// Whether this is another server's result that it marked an error.
    pub(crate) fn is_passed_error(&self) -> bool {
        self.passed_through.as_ref().is_some_and(|(is_error, _)| *is_error)
    }

    /// Another server's result, passed on as it came: its content, structured content,
    /// `isError` (a tool error of the upstream stays one, byte for byte) and `_meta`.
    pub fn passed_through(result: CallToolResult) -> Output {
        let passed = (result.is_error == Some(true), result.meta);
        Output {
            content: result.content,
            structured: result.structured_content,
            passed_through: Some(passed),
            payload: None,
        }
    }

    /// Whether this is a result passed through with `isError: true`.
    pub fn is_error(&self) -> bool {
        self.passed_through.as_ref().is_some_and(|(is_error, _)| *is_error)
    }

    /// The output as JSON, to keep and give back whole with [`Output::from_record`].
    pub(crate) fn to_record(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(Record {
            content: self.content.clone(),
            structured: self.structured.clone(),
            passed_through: self.passed_through.clone(),
            payload: self.payload.clone(),
        })
    }

    /// The output [`Output::to_record`] kept.
    pub(crate) fn from_record(record: Value) -> Result<Output, serde_json::Error> {
        let Record { content, structured, passed_through, payload } = serde_json::from_value(record)?;
        Ok(Output { content, structured, passed_through, payload })
    }
}

/// Every part of an [`Output`], as JSON.
#[derive(serde::Serialize, serde::Deserialize)]
struct Record {
    content: Vec<ContentBlock>,
    structured: Option<Value>,
    passed_through: Option<(bool, Option<MetaObject>)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    payload: Option<Payload>,
}

/// Structured content with a text block of the handler's choosing, declaring `T`'s output
/// schema as [`Json<T>`](rmcp::Json) does: for a result a model reads as one line ("Created
/// task 3") and a program reads as data.
///
/// ```
/// use mcp_fusion::prelude::*;
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Task { id: u64, title: String }
///
/// /// Create a task.
/// #[action]
/// async fn create_task() -> Result<Structured<Task>> {
///     let task = Task { id: 3, title: "Write the report".into() };
///     Ok(Structured::new(format!("Created task {}", task.id), task))
/// }
///
/// let server = FusionServer::builder("tasks", "1").action(create_task()).build(()).unwrap();
/// assert!(server.tools()[0].output_schema.is_some());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Structured<T> {
    /// The text block.
    pub text: String,
    /// The structured content.
    pub value: T,
}

impl<T> Structured<T> {
    /// `value` as structured content, `text` as the text block.
    pub fn new(text: impl Into<String>, value: T) -> Structured<T> {
        Structured { text: text.into(), value }
    }
}

impl<T: Serialize + JsonSchema + Send + 'static> IntoOutput for Structured<T> {
    fn output_schema(generator: &mut SchemaGenerator) -> Option<Schema> {
        Some(generator.root_schema_for::<T>())
    }

    fn into_output(self) -> Result<Output, BoxError> {
        Ok(Output::structured_with_text(self.text, serde_json::to_value(self.value)?))
    }
}

/// What a handler may return on success, like axum's `IntoResponse`.
///
/// - [`Json<T>`](rmcp::Json) (`T: Serialize + JsonSchema`): structured content, and the action
///   declares `T`'s schema as its output schema;
/// - [`Structured<T>`]: the same, with a text block of the handler's choosing;
/// - `String` / `&'static str`: a text block;
/// - [`serde_json::Value`]: its JSON text;
/// - [`ContentBlock`] / `Vec<ContentBlock>`: as given (images, audio, embedded resources);
/// - [`Output`]: as given.
#[diagnostic::on_unimplemented(
    message = "an action cannot return `{Self}`: wrap it in `Json(..)` to return it as structured content",
    label = "`{Self}` is not an action's output",
    note = "an action returns `Json<T>` (T: Serialize + JsonSchema; an object keeps the tool's outputSchema, so put a list in a struct field), `Structured<T>` (the same with a text of its own), `String`, `&'static str`, `serde_json::Value`, `ContentBlock`, `Vec<ContentBlock>` or `Output`"
)]
pub trait IntoOutput: Send + 'static {
    /// The output schema this type declares, if any.
    fn output_schema(generator: &mut SchemaGenerator) -> Option<Schema> {
        let _ = generator;
        None
    }

    /// The success result.
    fn into_output(self) -> Result<Output, BoxError>;
}

impl<T: Serialize + JsonSchema + Send + 'static> IntoOutput for Json<T> {
    fn output_schema(generator: &mut SchemaGenerator) -> Option<Schema> {
        Some(generator.root_schema_for::<T>())
    }

    fn into_output(self) -> Result<Output, BoxError> {
        Ok(Output::structured(serde_json::to_value(self.0)?))
    }
}

impl IntoOutput for String {
    fn into_output(self) -> Result<Output, BoxError> {
        Ok(Output::text(self))
    }
}

impl IntoOutput for &'static str {
    fn into_output(self) -> Result<Output, BoxError> {
        Ok(Output::text(self))
    }
}

impl IntoOutput for Value {
    fn into_output(self) -> Result<Output, BoxError> {
        Ok(Output::text(self.to_string()))
    }
}

impl IntoOutput for ContentBlock {
    fn into_output(self) -> Result<Output, BoxError> {
        Ok(Output::blocks(vec![self]))
    }
}

// Not offered as the fix for another `Vec<T>`: that one wants `Json(..)`.
#[diagnostic::do_not_recommend]
impl IntoOutput for Vec<ContentBlock> {
    fn into_output(self) -> Result<Output, BoxError> {
        Ok(Output::blocks(self))
    }
}

impl IntoOutput for Output {
    fn into_output(self) -> Result<Output, BoxError> {
        Ok(self)
    }
}

/// The MCP result of a successful call: the data block first, then each warning as a
/// further text block; `isError: false`. A result passed through with `isError: true` goes
/// as it came, its blocks byte for byte, with no warning after them: a failed result is one
/// envelope, and this one is the upstream's.
pub(crate) fn success_result(output: Output, warnings: &[ToolError]) -> CallToolResult {
    let mut content = output.content;
    let (is_error, meta) = output.passed_through.unwrap_or_default();
    if is_error {
        if !warnings.is_empty() {
            let codes: Vec<&str> = warnings.iter().map(|w| w.code.as_str()).collect();
            tracing::debug!(?codes, "warnings not sent: they would follow an upstream's own error result");
        }
    } else {
        content.extend(warnings.iter().map(|w| ContentBlock::text(w.render())));
    }
    let mut result = if is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
    result.structured_content = output.structured;
    result.meta = meta;
    result
}

/// The MCP result of an envelope as the wire crate lays it out. Never carries
/// `structuredContent`.
///
/// A failure is exactly one text block: the envelope, any collected warnings folded into it.
/// So is a warning sent alone by a tool that declares an output schema (`output_schema`), and
/// with `isError: true`: MCP requires a success of such a tool to carry structured content
/// that conforms, and a warning has none, so a client would reject it as a success. A warning
/// alone from any other tool is a success (`isError: false`), the warnings after it as blocks
/// of their own.
pub(crate) fn envelope_result(envelope: CallResult, warnings: &[ToolError], output_schema: bool) -> CallToolResult {
    if envelope.is_error || output_schema {
        let CallResult { text, .. } = envelope.failed_with(warnings);
        return CallToolResult::error(vec![ContentBlock::text(text)]);
    }
    let CallResult { text, is_error } = envelope;
    let mut content = Vec::with_capacity(1 + warnings.len());
    content.push(ContentBlock::text(text));
    content.extend(warnings.iter().map(|w| ContentBlock::text(w.render())));
    if is_error { CallToolResult::error(content) } else { CallToolResult::success(content) }
}
