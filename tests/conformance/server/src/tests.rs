//! The fixtures answer as the suite expects: names and schemas, the content blocks, and what the
//! tools send to a real rmcp client (progress, sampling, elicitation) over an in-process pipe.

use std::sync::{Arc, Mutex};

use mcp_fusion::transport::RequestInfo;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorData, Implementation, NumberOrString, ProgressNotificationParam, ProgressToken,
    RequestMetaObject,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

use super::*;

fn object(value: Value) -> Option<serde_json::Map<String, Value>> {
    match value {
        Value::Object(map) => Some(map),
        other => panic!("arguments must be an object, not {other}"),
    }
}

fn content_json(result: &CallToolResult) -> Value {
    serde_json::to_value(&result.content).unwrap()
}

fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("a text block").text
}

#[test]
fn exposes_exactly_the_names_the_suite_calls() {
    let server = server().unwrap();
    let tools = server.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, TOOL_NAMES);
    assert!(server.tools().into_iter().all(|t| t.description.as_deref().is_some_and(|d| !d.is_empty())));
}

#[test]
fn asks_for_the_arguments_the_suite_sends() {
    let server = server().unwrap();
    let schema = |name: &str| {
        let tool = server.tools().into_iter().find(|t| t.name == name).unwrap();
        Value::Object((*tool.input_schema).clone())
    };
    assert_eq!(schema("test_sampling")["required"], json!(["prompt"]));
    assert_eq!(schema("test_elicitation")["required"], json!(["message"]));
    let no_args = schema("test_image_content");
    assert_eq!((no_args["type"].as_str(), no_args.get("required")), (Some("object"), None));
}

#[test]
fn keeps_the_2020_12_keywords() {
    let server = server().unwrap();
    let tool = server.tools().into_iter().find(|t| t.name == "json_schema_2020_12_tool").unwrap();
    let schema = Value::Object((*tool.input_schema).clone());
    let mut written: Value = serde_json::from_str(SCHEMA_2020_12).unwrap();
    // Every keyword as written ($schema, $defs with its $anchor, allOf over anyOf, if/then/else,
    // additionalProperties); the one addition is the framework's closing of the referenced
    // object to keys it does not name, which a strict action publishes as it checks it.
    written["properties"]["address"]["unevaluatedProperties"] = json!(false);
    assert_eq!(schema, written);
}

#[test]
fn the_media_are_what_their_mime_types_say() {
    // Base64 of the PNG signature and of a RIFF/WAVE header.
    assert!(RED_PIXEL_PNG.starts_with("iVBORw0KGgo"));
    assert!(SILENT_WAV.starts_with("UklGR") && SILENT_WAV[8..].starts_with("AABXQVZF"));
}

#[tokio::test]
async fn text_and_error_fixtures() {
    let server = server().unwrap();
    let ok = server.call("test_simple_text", None, RequestInfo::default()).await;
    assert_eq!(ok.is_error, Some(false));
    assert_eq!(text(&ok), SIMPLE_TEXT);

    let err = server.call("test_error_handling", Some(Default::default()), RequestInfo::default()).await;
    assert_eq!(err.is_error, Some(true));
    assert!(text(&err).contains(ERROR_MESSAGE));

    let args = json!({"name": "Ada", "address": {"street": "1 Loop", "city": "Paris"}, "email": "ada@example.com"});
    let echo = server.call("json_schema_2020_12_tool", object(args), RequestInfo::default()).await;
    assert_eq!(echo.is_error, Some(false), "{:?}", echo.content);
    // The conditional keywords hold: a phone contact without a phone is refused, and said so.
    let args = json!({"contactMethod": "phone", "email": "ada@example.com"});
    let refused = server.call("json_schema_2020_12_tool", object(args), RequestInfo::default()).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains("phone"), "{}", text(&refused));
}

#[tokio::test]
async fn content_block_fixtures() {
    let server = server().unwrap();
    let call = |name: &'static str| server.call(name, Some(Default::default()), RequestInfo::default());

    let image = call("test_image_content").await;
    assert_eq!(image.is_error, Some(false));
    assert_eq!(content_json(&image), json!([{"type": "image", "data": RED_PIXEL_PNG, "mimeType": "image/png"}]));

    let audio = call("test_audio_content").await;
    assert_eq!(content_json(&audio), json!([{"type": "audio", "data": SILENT_WAV, "mimeType": "audio/wav"}]));

    let resource = call("test_embedded_resource").await;
    assert_eq!(
        content_json(&resource),
        json!([{"type": "resource", "resource": {"uri": EMBEDDED_URI, "mimeType": "text/plain", "text": EMBEDDED_TEXT}}])
    );

    let mixed = call("test_multiple_content_types").await;
    assert_eq!(
        content_json(&mixed),
        json!([
            {"type": "text", "text": "Multiple content types test:"},
            {"type": "image", "data": RED_PIXEL_PNG, "mimeType": "image/png"},
            {"type": "resource", "resource": {
                "uri": MIXED_URI, "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}"
            }}
        ])
    );
}

#[tokio::test]
async fn client_requests_need_a_client() {
    let server = server().unwrap();
    for (tool, args) in [
        ("test_sampling", json!({"prompt": "hi"})),
        ("test_elicitation", json!({"message": "hi"})),
        ("test_elicitation_sep1034_defaults", json!({})),
        ("test_elicitation_sep1330_enums", json!({})),
    ] {
        let result = server.call(tool, object(args), RequestInfo::default()).await;
        assert_eq!(result.is_error, Some(true), "{tool}");
        assert!(text(&result).contains("CLIENT_UNREACHABLE"), "{tool}: {}", text(&result));
    }
    // Progress without a client: the delays, no notifications, and the result.
    let progress = server.call("test_tool_with_progress", None, RequestInfo::default()).await;
    assert_eq!(progress.is_error, Some(false));
}

/// Recorded values, shared between the client task and the test.
type Log<T> = Arc<Mutex<Vec<T>>>;

/// What the client saw, and how it answers elicitation.
#[derive(Clone)]
struct SuiteClient {
    /// Declares `sampling` and `elicitation`, as the suite's client does.
    capable: bool,
    /// The `content` of every elicitation answer (`accept`).
    elicit_answer: Value,
    /// `(progress, total)` of each progress notification.
    progress: Log<(f64, Option<f64>)>,
    /// The params of each `sampling/createMessage`, as sent.
    sampling: Log<Value>,
    /// The params of each `elicitation/create`, as sent.
    elicitation: Log<Value>,
}

impl SuiteClient {
    fn new(elicit_answer: Value) -> SuiteClient {
        SuiteClient {
            capable: true,
            elicit_answer,
            progress: Arc::default(),
            sampling: Arc::default(),
            elicitation: Arc::default(),
        }
    }
}

#[expect(deprecated, reason = "rmcp 3.11 deprecates sampling (SEP-2577); the suite still tests it")]
impl ClientHandler for SuiteClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities = if self.capable {
            serde_json::from_value(json!({"sampling": {}, "elicitation": {}})).unwrap()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("conformance-test-client", "1.0.0"))
    }

    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, ErrorData> {
        self.sampling.lock().unwrap().push(serde_json::to_value(&params).unwrap());
        let message = rmcp::model::SamplingMessage::assistant_text("This is a test response from the client");
        Ok(rmcp::model::CreateMessageResult::new(message, "test-model".into()).with_stop_reason("endTurn"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.elicitation.lock().unwrap().push(serde_json::to_value(&request).unwrap());
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(self.elicit_answer.clone()))
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push((params.progress, params.total));
    }
}

/// Serves the fixture server on one end of a duplex pipe and connects `client` to the other.
async fn connect(client: SuiteClient) -> RunningService<RoleClient, SuiteClient> {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let server = server().unwrap();
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    client.serve(client_io).await.expect("the client connects")
}

async fn call_tool(client: &RunningService<RoleClient, SuiteClient>, tool: &str, args: Value) -> CallToolResult {
    let request = CallToolRequestParams::new(tool.to_owned()).with_arguments(object(args).unwrap());
    client.call_tool(request).await.expect("tools/call answers")
}

#[tokio::test]
async fn progress_0_50_100_of_100() {
    let recorder = SuiteClient::new(Value::Null);
    let client = connect(recorder.clone()).await;
    let mut meta = RequestMetaObject::default();
    meta.set_progress_token(ProgressToken(NumberOrString::String("progress-test-1".into())));
    let mut request = CallToolRequestParams::new("test_tool_with_progress").with_arguments(Default::default());
    request.meta = Some(meta);
    let result = client.call_tool(request).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{:?}", result.content);
    // Notifications and the response travel the same ordered pipe, but each notification is
    // handled on a task of its own.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while recorder.progress.lock().unwrap().len() < PROGRESS_STEPS.len() {
        assert!(std::time::Instant::now() < deadline, "not all progress arrived within 30 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let expected: Vec<(f64, Option<f64>)> = PROGRESS_STEPS.iter().map(|p| (*p, Some(PROGRESS_TOTAL))).collect();
    assert_eq!(*recorder.progress.lock().unwrap(), expected);
}

#[tokio::test]
async fn sampling_asks_the_client_and_returns_its_answer() {
    let recorder = SuiteClient::new(Value::Null);
    let client = connect(recorder.clone()).await;
    let result = call_tool(&client, "test_sampling", json!({"prompt": "Test prompt for sampling"})).await;
    assert_eq!(result.is_error, Some(false), "{:?}", result.content);
    assert_eq!(text(&result), "LLM response: This is a test response from the client");
    let requests = recorder.sampling.lock().unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Test prompt for sampling"}}])
    );
    assert_eq!(requests[0]["maxTokens"], SAMPLING_MAX_TOKENS);
}

#[tokio::test]
async fn elicitation_asks_for_username_and_email() {
    let answer = json!({"username": "testuser", "email": "test@example.com"});
    let recorder = SuiteClient::new(answer.clone());
    let client = connect(recorder.clone()).await;
    let result = call_tool(&client, "test_elicitation", json!({"message": "Please provide your information"})).await;
    assert_eq!(result.is_error, Some(false), "{:?}", result.content);
    assert_eq!(text(&result), format!("User response: action=accept, content={answer}"));
    let requests = recorder.elicitation.lock().unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["message"], "Please provide your information");
    assert_eq!(
        requests[0]["requestedSchema"],
        json!({
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"}
            },
            "required": ["username", "email"]
        })
    );
}

#[tokio::test]
async fn sep1034_every_primitive_has_a_default() {
    let answer = json!({"name": "Jane Smith", "age": 25, "score": 88, "status": "inactive", "verified": false});
    let recorder = SuiteClient::new(answer.clone());
    let client = connect(recorder.clone()).await;
    let result = call_tool(&client, "test_elicitation_sep1034_defaults", json!({})).await;
    assert_eq!(result.is_error, Some(false), "{:?}", result.content);
    assert_eq!(text(&result), format!("Elicitation completed: action=accept, content={answer}"));
    let requests = recorder.elicitation.lock().unwrap();
    assert_eq!(
        requests[0]["requestedSchema"]["properties"],
        json!({
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string", "description": "Account status",
                "enum": ["active", "inactive", "pending"], "default": "active"
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        })
    );
}

#[tokio::test]
async fn sep1330_the_five_enum_shapes() {
    let answer = json!({
        "untitledSingle": "option1", "titledSingle": "value1", "legacyEnum": "opt1",
        "untitledMulti": ["option1", "option2"], "titledMulti": ["value1", "value2"]
    });
    let recorder = SuiteClient::new(answer.clone());
    let client = connect(recorder.clone()).await;
    let result = call_tool(&client, "test_elicitation_sep1330_enums", json!({})).await;
    assert_eq!(result.is_error, Some(false), "{:?}", result.content);
    assert_eq!(text(&result), format!("Elicitation completed: action=accept, content={answer}"));
    let requests = recorder.elicitation.lock().unwrap();
    assert_eq!(
        requests[0]["requestedSchema"]["properties"],
        json!({
            "untitledSingle": {
                "type": "string", "description": "Untitled single-select",
                "enum": ["option1", "option2", "option3"]
            },
            "titledSingle": {
                "type": "string", "description": "Titled single-select",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}
                ]
            },
            "legacyEnum": {
                "type": "string", "description": "Legacy titled enum (enumNames)",
                "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array", "description": "Untitled multi-select",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
            },
            "titledMulti": {
                "type": "array", "description": "Titled multi-select",
                "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"}
                ]}
            }
        })
    );
}

#[tokio::test]
async fn a_client_without_the_capabilities_gets_an_error() {
    let mut recorder = SuiteClient::new(Value::Null);
    recorder.capable = false;
    let client = connect(recorder.clone()).await;
    let sampling = call_tool(&client, "test_sampling", json!({"prompt": "hi"})).await;
    assert_eq!(sampling.is_error, Some(true));
    assert!(text(&sampling).contains("CLIENT_CAPABILITY_MISSING"), "{}", text(&sampling));
    let elicitation = call_tool(&client, "test_elicitation", json!({"message": "hi"})).await;
    assert_eq!(elicitation.is_error, Some(true));
    assert!(text(&elicitation).contains("CLIENT_CAPABILITY_MISSING"), "{}", text(&elicitation));
    assert!(recorder.sampling.lock().unwrap().is_empty() && recorder.elicitation.lock().unwrap().is_empty());
}

#[tokio::test]
async fn the_tasks_fixtures_answer_a_plain_call() {
    let server = server().unwrap();
    let greeting = server.call("greet", object(json!({"name": "World"})), RequestInfo::default()).await;
    assert_eq!(text(&greeting), "Hello, World!");
    let computed =
        server.call("slow_compute", object(json!({"seconds": 0, "label": "now"})), RequestInfo::default()).await;
    assert_eq!((computed.is_error, text(&computed)), (Some(false), "now: computed in 0 s"));
}
