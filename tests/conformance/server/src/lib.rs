//! The fixture server of the official MCP conformance suite (`@modelcontextprotocol/conformance`),
//! built with mcp-fusion. Test-only: it exists so `tests/conformance/run.sh` can run the suite's
//! server scenarios against our HTTP transport.
//!
//! The suite calls its fixture tools by fixed names (`test_simple_text`, ...). The server uses
//! the flat exposition with the separator `_`, so the action `simple_text` of the group `test` is
//! the tool `test_simple_text`.
//!
//! Every tool scenario of the suite has its fixture here: text, error, image, audio, embedded
//! resource and mixed content blocks, progress notifications, and requests to the client
//! (sampling, elicitation, with the SEP-1034 defaults and the SEP-1330 enum shapes); so do the
//! resource, prompt, completion and logging scenarios, and the skills extension's (a skill,
//! `pdf-processing`).

use std::borrow::Cow;
use std::fmt::Display;
use std::time::Duration;

use mcp_fusion::wire::ToolError;
use std::sync::Arc;

use mcp_fusion::prompt::{Prompt, PromptMessage, Role};
use mcp_fusion::resource::{Resource, ResourceTemplate};
use mcp_fusion::skill::Skill;
use mcp_fusion::{Action, BuildError, Ctx, Exposition, FusionServer, Group, ServerBuilder};
use rmcp::model::{
    ContentBlock, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationSchema, EnumSchema, LegacyEnumSchema,
    PrimitiveSchemaDefinition, ResourceContents, ServerRequest,
};
use rmcp::service::ServiceError;
use rmcp::{Peer, RoleServer};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;

/// What `test_simple_text` returns (scenario `tools-call-simple-text`).
pub const SIMPLE_TEXT: &str = "This is a simple text response for testing.";

/// The message of `test_error_handling`'s error (scenario `tools-call-error`).
pub const ERROR_MESSAGE: &str = "This tool intentionally returns an error for testing";

/// A 1x1 red pixel, PNG, base64 (69 bytes decoded).
pub const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC";

/// Eight samples of silence: WAV, PCM 8-bit mono 8 kHz, base64 (52 bytes decoded).
pub const SILENT_WAV: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

/// The URI of `test_embedded_resource`'s resource (scenario `tools-call-embedded-resource`).
pub const EMBEDDED_URI: &str = "test://embedded-resource";

/// The text of `test_embedded_resource`'s resource.
pub const EMBEDDED_TEXT: &str = "This is an embedded resource content.";

/// The URI of the resource in `test_multiple_content_types` (scenario `tools-call-mixed-content`).
pub const MIXED_URI: &str = "test://mixed-content-resource";

/// The progress values `test_tool_with_progress` reports, of [`PROGRESS_TOTAL`].
pub const PROGRESS_STEPS: [f64; 3] = [0.0, 50.0, 100.0];

/// The total of `test_tool_with_progress`'s progress notifications.
pub const PROGRESS_TOTAL: f64 = 100.0;

/// How long a call may take: it bounds the wait for a client that never answers a sampling or
/// elicitation request (the suite's client gives up after 60 s).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The `maxTokens` of `test_sampling`'s `sampling/createMessage`.
pub const SAMPLING_MAX_TOKENS: u32 = 100;

/// The tool names the suite calls, in `tools/list` order.
pub const TOOL_NAMES: &[&str] = &[
    "test_simple_text",
    "test_error_handling",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_progress",
    "test_tool_with_logging",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_tampered_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_capabilities",
    "test_missing_capability",
    "test_trigger_tool_change",
    "test_streaming_elicitation",
    "test_logging_tool",
    "test_param_header",
    "test_reconnection",
    "json_schema_2020_12_tool",
    "greet",
    "slow_compute",
    "failing_job",
    "test_tool_with_task",
    "confirm_delete",
    "multi_input",
    "protocol_error_job",
];

/// No arguments: the suite calls these tools with `{}` or with no `arguments` at all.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// `test_simple_text`: one text block.
async fn simple_text(_ctx: Ctx<()>, _input: NoArgs) -> Result<&'static str, ToolError> {
    Ok(SIMPLE_TEXT)
}

/// `test_error_handling`: always fails, so the result is an envelope with `isError: true`.
async fn error_handling(_ctx: Ctx<()>, _input: NoArgs) -> Result<&'static str, ToolError> {
    Err(ToolError::new("TEST_ERROR", ERROR_MESSAGE)
        .suggest("Nothing to fix: this conformance fixture fails on purpose; do not retry."))
}

/// `test_image_content`: one `image` block (`image/png`).
async fn image_content(_ctx: Ctx<()>, _input: NoArgs) -> Result<ContentBlock, ToolError> {
    Ok(ContentBlock::image(RED_PIXEL_PNG, "image/png"))
}

/// `test_audio_content`: one `audio` block (`audio/wav`).
async fn audio_content(_ctx: Ctx<()>, _input: NoArgs) -> Result<ContentBlock, ToolError> {
    Ok(ContentBlock::audio(SILENT_WAV, "audio/wav"))
}

/// `test_embedded_resource`: one `resource` block with a `text/plain` resource.
async fn embedded_resource(_ctx: Ctx<()>, _input: NoArgs) -> Result<ContentBlock, ToolError> {
    Ok(ContentBlock::resource(ResourceContents::text(EMBEDDED_TEXT, EMBEDDED_URI).with_mime_type("text/plain")))
}

/// `test_multiple_content_types`: a text, an image and a resource block, in that order.
async fn multiple_content_types(_ctx: Ctx<()>, _input: NoArgs) -> Result<Vec<ContentBlock>, ToolError> {
    Ok(vec![
        ContentBlock::text("Multiple content types test:"),
        ContentBlock::image(RED_PIXEL_PNG, "image/png"),
        ContentBlock::resource(
            ResourceContents::text(r#"{"test":"data","value":123}"#, MIXED_URI).with_mime_type("application/json"),
        ),
    ])
}

/// `test_tool_with_progress`: reports 0, 50 and 100 of 100, about 50 ms apart (only when the
/// request carried a `progressToken`; the delays happen either way).
async fn tool_with_progress(ctx: Ctx<()>, _input: NoArgs) -> Result<String, ToolError> {
    for (i, progress) in PROGRESS_STEPS.into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.progress(progress, Some(PROGRESS_TOTAL), None).await;
    }
    Ok(format!("Progress test completed: {} steps reported", PROGRESS_STEPS.len()))
}

/// `test_tool_with_logging`: three `tracing` events, 50 ms apart, which reach a client that
/// set a logging level as `notifications/message` (scenario `tools-call-with-logging`).
async fn tool_with_logging(_ctx: Ctx<()>, _input: NoArgs) -> Result<&'static str, ToolError> {
    tracing::info!("Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    tracing::info!("Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    tracing::info!("Tool execution completed");
    Ok("Tool with logging executed successfully")
}

/// The client connection, if the call came through a transport and the client declared
/// `capability` (checked by `declared`).
fn client_peer<'a>(
    ctx: &'a Ctx<()>,
    capability: &str,
    declared: impl FnOnce(&rmcp::model::ClientCapabilities) -> bool,
) -> Result<&'a Peer<RoleServer>, ToolError> {
    let peer = ctx.call().peer().ok_or_else(|| {
        ToolError::new("CLIENT_UNREACHABLE", format!("This call has no client connection to send {capability} to."))
            .suggest("Call this tool over an MCP transport (stdio or HTTP).")
    })?;
    if !peer.peer_info().is_some_and(|info| declared(&info.capabilities)) {
        // Stateless HTTP has no session: rmcp gives every request empty client capabilities, and
        // a request to the client could not be answered anyway.
        return Err(ToolError::new(
            "CLIENT_CAPABILITY_MISSING",
            format!("The client did not declare the {capability} capability on this session."),
        )
        .suggest(format!(
            "Use a client that declares `{capability}` at initialize, over a session (stdio or stateful HTTP)."
        )));
    }
    Ok(peer)
}

/// A failed request to the client, as a tool error.
fn client_request_failed(what: &str, error: ServiceError) -> ToolError {
    ToolError::new("CLIENT_REQUEST_FAILED", format!("The client did not answer {what}: {error}"))
}

/// A schema the fixture could not build (a bug of the fixture).
fn schema_bug(error: impl Display) -> ToolError {
    ToolError::new("INTERNAL_ERROR", format!("The fixture built an invalid elicitation schema: {error}"))
}

/// The input of `test_sampling`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SamplingArgs {
    /// The prompt to send to the client's LLM.
    pub prompt: String,
}

/// `test_sampling`: asks the client's LLM (`sampling/createMessage`, the prompt as one user
/// message, `maxTokens` 100) and returns its text.
#[expect(deprecated, reason = "rmcp 3.11 deprecates sampling (SEP-2577); the suite still tests it")]
async fn sampling(ctx: Ctx<()>, input: SamplingArgs) -> Result<String, ToolError> {
    use rmcp::model::{CreateMessageRequestParams, SamplingMessage};

    let peer = client_peer(&ctx, "sampling", |capabilities| capabilities.sampling.is_some())?;
    let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text(input.prompt)], SAMPLING_MAX_TOKENS);
    let result = peer.create_message(params).await.map_err(|error| client_request_failed("sampling", error))?;
    let text: Vec<String> = result
        .message
        .content
        .into_vec()
        .into_iter()
        .map(|block| block.as_text().map_or_else(|| "[non-text content]".to_owned(), |t| t.text.clone()))
        .collect();
    Ok(format!("LLM response: {}", text.join(" ")))
}

/// Sends `elicitation/create` with a form and returns the client's answer.
async fn elicit(
    ctx: &Ctx<()>,
    message: impl Into<String>,
    requested_schema: ElicitationSchema,
) -> Result<ElicitResult, ToolError> {
    let peer = client_peer(ctx, "elicitation", |capabilities| capabilities.elicitation.is_some())?;
    let params = ElicitRequestParams::FormElicitationParams { meta: None, message: message.into(), requested_schema };
    // `Peer::create_elicitation` exists only with rmcp's `elicitation` feature (it pulls in the
    // `url` crate, which would change Cargo.lock); the request and its types do not need it.
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
    match peer.send_request(request).await.map_err(|error| client_request_failed("elicitation", error))? {
        rmcp::model::ClientResult::ElicitResult(result) => Ok(result),
        other => Err(ToolError::new(
            "CLIENT_REQUEST_FAILED",
            format!("The client answered elicitation/create with something else: {other:?}"),
        )),
    }
}

/// `action=accept, content={...}` of an elicitation result.
fn describe(result: &ElicitResult) -> String {
    let action = serde_json::to_value(&result.action).unwrap_or_default();
    let action = action.as_str().unwrap_or("unknown");
    let content = result.content.as_ref().map_or_else(|| "null".to_owned(), ToString::to_string);
    format!("action={action}, content={content}")
}

/// The input of `test_elicitation`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ElicitationArgs {
    /// The message to show the user.
    pub message: String,
}

/// The form of `test_elicitation`: required strings `username` and `email`.
pub fn user_form() -> Result<ElicitationSchema, &'static str> {
    ElicitationSchema::builder()
        .required_string_property("username", |s| s.description("User's response"))
        .required_string_property("email", |s| s.description("User's email address"))
        .build()
}

/// `test_elicitation`: asks the user for a username and an email.
async fn elicitation(ctx: Ctx<()>, input: ElicitationArgs) -> Result<String, ToolError> {
    let result = elicit(&ctx, input.message, user_form().map_err(schema_bug)?).await?;
    Ok(format!("User response: {}", describe(&result)))
}

/// The form of `test_elicitation_sep1034_defaults`: a default for every primitive type
/// (SEP-1034).
pub fn defaults_form() -> Result<ElicitationSchema, String> {
    let status = EnumSchema::builder(vec!["active".into(), "inactive".into(), "pending".into()])
        .description("Account status")
        .with_default("active")?
        .build();
    Ok(ElicitationSchema::builder()
        .string_property("name", |s| s.description("User name").with_default("John Doe"))
        .integer_property("age", |s| s.description("User age").with_default(30))
        .number_property("score", |s| s.description("User score").with_default(95.5))
        .optional_enum_schema("status", status)
        .bool_property("verified", |s| s.description("Verification status").with_default(true))
        .build()?)
}

/// `test_elicitation_sep1034_defaults`: a form whose fields all have defaults.
async fn elicitation_sep1034_defaults(ctx: Ctx<()>, _input: NoArgs) -> Result<String, ToolError> {
    let form = defaults_form().map_err(schema_bug)?;
    let result = elicit(&ctx, "Please review and update the form fields with defaults", form).await?;
    Ok(format!("Elicitation completed: {}", describe(&result)))
}

/// The form of `test_elicitation_sep1330_enums`: the five enum shapes of SEP-1330.
pub fn enums_form() -> Result<ElicitationSchema, String> {
    let strings = |values: &[&str]| values.iter().map(|v| (*v).to_owned()).collect::<Vec<String>>();
    let options = strings(&["option1", "option2", "option3"]);
    let untitled_single = EnumSchema::builder(options.clone()).description("Untitled single-select").build();
    let titled_single = EnumSchema::builder(strings(&["value1", "value2", "value3"]))
        .description("Titled single-select")
        .enum_titles(strings(&["First Option", "Second Option", "Third Option"]))?
        .build();
    // The deprecated `enumNames` form: rmcp models it (`LegacyEnumSchema`) but has no builder
    // for it, so its public fields are set directly.
    let mut legacy = LegacyEnumSchema::new(strings(&["opt1", "opt2", "opt3"]));
    legacy.description = Some(Cow::Borrowed("Legacy titled enum (enumNames)"));
    legacy.enum_names = Some(strings(&["Option One", "Option Two", "Option Three"]));
    let untitled_multi = EnumSchema::builder(options).description("Untitled multi-select").multiselect().build();
    let titled_multi = EnumSchema::builder(strings(&["value1", "value2", "value3"]))
        .description("Titled multi-select")
        .multiselect()
        .enum_titles(strings(&["First Choice", "Second Choice", "Third Choice"]))?
        .build();
    Ok(ElicitationSchema::builder()
        .optional_enum_schema("untitledSingle", untitled_single)
        .optional_enum_schema("titledSingle", titled_single)
        .property("legacyEnum", PrimitiveSchemaDefinition::Enum(EnumSchema::Legacy(legacy)))
        .optional_enum_schema("untitledMulti", untitled_multi)
        .optional_enum_schema("titledMulti", titled_multi)
        .build()?)
}

/// `test_elicitation_sep1330_enums`: a form with every enum shape.
async fn elicitation_sep1330_enums(ctx: Ctx<()>, _input: NoArgs) -> Result<String, ToolError> {
    let form = enums_form().map_err(schema_bug)?;
    let result = elicit(&ctx, "Please select options from the enum fields", form).await?;
    Ok(format!("Elicitation completed: {}", describe(&result)))
}

/// The input of `json_schema_2020_12_tool` (scenario `json-schema-2020-12`, SEP-1613 and
/// SEP-2106): its schema is written by hand, word for word the suite's, so that `$schema`,
/// `$defs` with an `$anchor`, the `$ref` into them, `allOf` over `anyOf` and `if`/`then`/`else`
/// reach `tools/list` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JsonSchema202012 {
    /// A name.
    pub name: Option<String>,
    /// An address.
    pub address: Option<Address>,
    /// How to reach the person: `phone` or `email`.
    pub contact_method: Option<String>,
    /// A phone number.
    pub phone: Option<String>,
    /// An email address.
    pub email: Option<String>,
}

/// The `address` of [`JsonSchema202012`].
#[derive(Debug, Deserialize)]
pub struct Address {
    /// The street.
    pub street: Option<String>,
    /// The city.
    pub city: Option<String>,
}

/// The schema of `json_schema_2020_12_tool`, as the suite writes it.
pub const SCHEMA_2020_12: &str = r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "$anchor": "addressDef",
      "type": "object",
      "properties": {
        "street": { "type": "string" },
        "city": { "type": "string" }
      }
    }
  },
  "properties": {
    "name": { "type": "string" },
    "address": { "$ref": "#/$defs/address" },
    "contactMethod": { "type": "string", "enum": ["phone", "email"] },
    "phone": { "type": "string" },
    "email": { "type": "string" }
  },
  "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
  "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
  "then": { "required": ["phone"] },
  "else": { "required": ["email"] },
  "additionalProperties": false
}"##;

impl JsonSchema for JsonSchema202012 {
    fn schema_name() -> Cow<'static, str> {
        "JsonSchema202012".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        serde_json::from_str(SCHEMA_2020_12).expect("the suite's schema is JSON")
    }
}

async fn json_schema_2020_12(_ctx: Ctx<()>, input: JsonSchema202012) -> Result<String, ToolError> {
    let address = input.address.map(|a| (a.street, a.city));
    let contact = (input.contact_method, input.phone, input.email);
    Ok(format!("Received name={:?}, address={:?}, contact={:?}", input.name, address, contact))
}

/// The input of `test_param_header`: a region that travels in a header too.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Routed {
    /// Where to route the call.
    pub region: String,
}

async fn param_header(_ctx: Ctx<()>, input: Routed) -> Result<String, ToolError> {
    Ok(format!("Routed to {}", input.region))
}

/// How long `test_reconnection` tells its client to wait before it reconnects.
const RECONNECT_AFTER: Duration = Duration::from_millis(500);

/// Closes the call's stream before it answers: the answer reaches the client on the stream it
/// resumes with `Last-Event-ID`.
async fn reconnection(ctx: Ctx<()>, _input: NoArgs) -> Result<&'static str, ToolError> {
    if ctx.close_sse_stream(RECONNECT_AFTER).await {
        Ok("Reconnection test completed: answered after the stream was closed.")
    } else {
        Ok("Reconnection test completed: the call had no stream to close.")
    }
}

/// The fixture server.
pub fn server() -> Result<FusionServer, BuildError> {
    let test = Group::new("test", "Fixtures of the MCP conformance suite.")
        .action(
            Action::new("simple_text", "Returns one text block (conformance scenario tools-call-simple-text).")
                .read_only()
                .handler(simple_text),
        )
        .action(
            Action::new("error_handling", "Always fails with isError: true (conformance scenario tools-call-error).")
                .read_only()
                .handler(error_handling),
        )
        .action(
            Action::new("image_content", "Returns one PNG image block (conformance scenario tools-call-image).")
                .read_only()
                .handler(image_content),
        )
        .action(
            Action::new("audio_content", "Returns one WAV audio block (conformance scenario tools-call-audio).")
                .read_only()
                .handler(audio_content),
        )
        .action(
            Action::new(
                "embedded_resource",
                "Returns one embedded text resource (conformance scenario tools-call-embedded-resource).",
            )
            .read_only()
            .handler(embedded_resource),
        )
        .action(
            Action::new(
                "multiple_content_types",
                "Returns a text, an image and a resource block (conformance scenario tools-call-mixed-content).",
            )
            .read_only()
            .handler(multiple_content_types),
        )
        .action(
            Action::new(
                "tool_with_progress",
                "Reports progress 0, 50, 100 of 100 (conformance scenario tools-call-with-progress).",
            )
            .read_only()
            .handler(tool_with_progress),
        )
        .action(
            Action::new(
                "tool_with_logging",
                "Logs three messages during the call (conformance scenario tools-call-with-logging).",
            )
            .read_only()
            .handler(tool_with_logging),
        )
        .action(
            Action::new(
                "sampling",
                "Asks the client's LLM to answer the prompt (conformance scenario tools-call-sampling).",
            )
            .read_only()
            .handler(sampling),
        )
        .action(
            Action::new(
                "elicitation",
                "Asks the user for a username and an email (conformance scenario tools-call-elicitation).",
            )
            .read_only()
            .handler(elicitation),
        )
        .action(
            Action::new(
                "elicitation_sep1034_defaults",
                "Asks the user to confirm a form whose fields have defaults (conformance scenario \
                 elicitation-sep1034-defaults).",
            )
            .read_only()
            .handler(elicitation_sep1034_defaults),
        )
        .action(
            Action::new(
                "elicitation_sep1330_enums",
                "Asks the user to pick from the five enum shapes (conformance scenario elicitation-sep1330-enums).",
            )
            .read_only()
            .handler(elicitation_sep1330_enums),
        );
    let test = rounds::actions(test)
        .action(
            Action::new(
                "param_header",
                "Routes by region, which a client also sends in the Mcp-Param-Region header \
             (conformance scenario http-custom-header-server-validation).",
            )
            .read_only()
            .param_header("region", "Region")
            .handler(param_header),
        )
        .action(
            Action::new(
                "reconnection",
                "Closes its SSE stream before it answers; the client resumes it with Last-Event-ID \
             (conformance scenario server-sse-polling).",
            )
            .read_only()
            .handler(reconnection),
        );
    let json = Group::new("json", "JSON Schema 2020-12 fixtures of the MCP conformance suite.").action(
        Action::new(
            "schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features (conformance scenario json-schema-2020-12).",
        )
        .read_only()
        .handler(json_schema_2020_12),
    );
    let builder = FusionServer::builder("fusion-conformance-server", env!("CARGO_PKG_VERSION"))
        .instructions("Fixture server of the MCP conformance suite; its tools exist only for the suite.")
        .exposition(Exposition::Flat { separator: "_".into() })
        .timeout(CALL_TIMEOUT)
        .group(test)
        .group(json);
    let server = tasks::tools(rounds::prompts(with_prompts(with_skills(with_resources(builder))))).build(())?;
    // The first server built is the one `test_trigger_tool_change` edits (one a process).
    let _ = rounds::SERVER.set(server.clone());
    Ok(server)
}

/// The skill of the skills extension's scenarios (`sep-2640-skills-enumeration`, `-manifest`,
/// `-directory`): the suite finds it through `skills/list`, and reads its `SKILL.md`, the
/// directory `skill://pdf-processing` and its subdirectory `references`.
fn with_skills(builder: ServerBuilder<()>) -> ServerBuilder<()> {
    // Embedded, so the server serves it from any working directory.
    let pdf = Skill::new("pdf-processing", include_str!("../skills/pdf-processing/SKILL.md"))
        .file("references/FORMS.md", include_str!("../skills/pdf-processing/references/FORMS.md"))
        .file("scripts/extract.py", include_str!("../skills/pdf-processing/scripts/extract.py"));
    builder.skill(pdf)
}

/// The text of `test://static-text` (scenario `resources-read-text`).
pub const STATIC_TEXT: &str = "This is the content of the static text resource.";

/// The resources of the `resources-*` scenarios.
fn with_resources(builder: ServerBuilder<()>) -> ServerBuilder<()> {
    #[derive(Deserialize, JsonSchema)]
    struct TemplateId {
        /// Any id; the contents repeat it.
        id: String,
    }
    builder
        .resource(
            Resource::new("test://static-text", "static-text")
                .description("A fixed text resource (conformance scenario resources-read-text).")
                .handler(|_ctx: Ctx<()>| async { Ok::<_, ToolError>(STATIC_TEXT) }),
        )
        .resource(
            Resource::new("test://static-binary", "static-binary")
                .description("A fixed PNG resource (conformance scenario resources-read-binary).")
                .mime_type("image/png")
                .handler(|_ctx: Ctx<()>| async { Ok::<_, ToolError>(png_pixel()) }),
        )
        .resource(
            Resource::new("test://watched-resource", "watched-resource")
                .description(
                    "A resource to subscribe to (conformance scenarios resources-subscribe, resources-unsubscribe).",
                )
                .handler(|_ctx: Ctx<()>| async { Ok::<_, ToolError>("Watched resource content.") }),
        )
        .resource_template(
            ResourceTemplate::new("test://template/{id}/data", "template-data")
                .description("Data by id, the id repeated in it (conformance scenario resources-templates-read).")
                .mime_type("application/json")
                .handler(|_ctx: Ctx<()>, params: TemplateId| async move {
                    Ok::<_, ToolError>(format!(
                        "{{\"id\":{:?},\"templateTest\":true,\"data\":\"Data for ID: {}\"}}",
                        params.id, params.id
                    ))
                }),
        )
}

/// The red pixel as a blob; its URI is filled with the one read.
fn png_pixel() -> ResourceContents {
    ResourceContents::blob(RED_PIXEL_PNG, "")
}

/// The prompts of the `prompts-*` and `completion-complete` scenarios.
fn with_prompts(builder: ServerBuilder<()>) -> ServerBuilder<()> {
    #[derive(Deserialize, JsonSchema)]
    struct Nothing {}
    #[derive(Deserialize, JsonSchema)]
    struct TwoArguments {
        /// First test argument.
        arg1: String,
        /// Second test argument.
        arg2: String,
    }
    #[derive(Deserialize, JsonSchema)]
    struct ResourceArgument {
        /// URI of the resource to embed.
        #[serde(rename = "resourceUri")]
        resource_uri: String,
    }
    builder
        .prompt(
            Prompt::new("test_simple_prompt", "A prompt without arguments (conformance scenario prompts-get-simple).")
                .handler(|_ctx: Ctx<()>, _: Nothing| async {
                    Ok::<_, ToolError>("This is a simple prompt for testing.")
                }),
        )
        .prompt(
            Prompt::new(
                "test_prompt_with_arguments",
                "A prompt with two arguments (conformance scenario prompts-get-with-args).",
            )
            .handler(|_ctx: Ctx<()>, args: TwoArguments| async move {
                Ok::<_, ToolError>(format!("Prompt with arguments: arg1='{}', arg2='{}'", args.arg1, args.arg2))
            })
            .complete("arg1", |_: Arc<()>, _prefix: String| async {
                vec!["test".to_owned(), "testing".to_owned(), "value".to_owned()]
            }),
        )
        .prompt(
            Prompt::new(
                "test_prompt_with_embedded_resource",
                "A prompt embedding a resource (conformance scenario prompts-get-embedded-resource).",
            )
            .handler(|_ctx: Ctx<()>, args: ResourceArgument| async move {
                let resource = ResourceContents::text("Embedded resource content for testing.", args.resource_uri);
                Ok::<_, ToolError>(vec![
                    PromptMessage::new(Role::User, ContentBlock::resource(resource)),
                    PromptMessage::new_text(Role::User, "Please process the embedded resource above."),
                ])
            }),
        )
        .prompt(
            Prompt::new(
                "test_prompt_with_image",
                "A prompt with an image (conformance scenario prompts-get-with-image).",
            )
            .handler(|_ctx: Ctx<()>, _: Nothing| async {
                Ok::<_, ToolError>(vec![
                    PromptMessage::new(Role::User, ContentBlock::image(RED_PIXEL_PNG, "image/png")),
                    PromptMessage::new_text(Role::User, "Please analyze the image above."),
                ])
            }),
        )
}

mod rounds;
pub mod tasks;

#[cfg(test)]
mod tests;
