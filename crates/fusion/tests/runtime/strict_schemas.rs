//! Strict schemas: tools listed in the subset strict tool use decodes against, while calls
//! are checked against the full schema and a `null` for a field the full schema leaves
//! optional means the field is left out.

use mcp_fusion::transport::RequestInfo;
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::support::texts;

#[derive(Deserialize, Serialize, JsonSchema)]
struct Search {
    /// What to look for.
    #[schemars(length(min = 2))]
    query: String,
    /// How many, 1 to 50.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 50))]
    limit: Option<u32>,
}

#[derive(Deserialize, Serialize, JsonSchema)]
struct Note {
    text: String,
}

fn search() -> Action<()> {
    Action::new("search", "Search.").handler(|_ctx: Ctx<()>, input: Search| async move {
        Ok::<_, mcp_fusion::wire::ToolError>(serde_json::to_string(&input).unwrap())
    })
}

fn note() -> Action<()> {
    Action::new("note", "Note.")
        .handler(|_ctx: Ctx<()>, input: Note| async move { Ok::<_, mcp_fusion::wire::ToolError>(input.text) })
}

fn server() -> FusionServer {
    FusionServer::builder::<()>("docs", "1.0.0")
        .strict_schemas(true)
        .group(Group::new("docs", "The docs.").action(search()).action(note()))
        .group(Group::new("loose", "Left as written.").strict_schemas(false).action(search()))
        .build(())
        .unwrap()
}

fn schema(server: &FusionServer, tool: &str) -> Value {
    let tool = server.tools().into_iter().find(|t| t.name == tool).unwrap();
    Value::Object((*tool.input_schema).clone())
}

#[tokio::test]
async fn a_strict_group_lists_every_field_required_and_a_group_may_say_otherwise() {
    let server = server();
    let strict = schema(&server, "docs");
    assert_eq!(strict["additionalProperties"], json!(false));
    assert_eq!(strict["required"], json!(["action", "query", "limit", "text"]));
    assert_eq!(strict["properties"]["limit"]["type"], json!(["integer", "null"]));
    assert!(strict["properties"]["limit"].get("minimum").is_none(), "{strict}");
    assert!(
        strict["properties"]["limit"]["description"].as_str().unwrap().contains("At least 1; at most 50"),
        "{strict}"
    );
    let loose = schema(&server, "loose");
    assert_eq!(loose["required"], json!(["action"]));
    assert_eq!(loose["properties"]["limit"]["minimum"], json!(1));
}

#[tokio::test]
async fn nulls_for_the_fields_a_strict_host_must_send_are_left_out_and_the_full_schema_still_heals() {
    let server = server();
    let call = |arguments: Value| server.call("docs", arguments.as_object().cloned(), RequestInfo::default());
    // Every field of the grouped tool, as a strict host sends them: the other action's as null.
    let result = call(json!({"action": "search", "query": "rust", "limit": null, "text": null})).await;
    assert_eq!((result.is_error, texts(&result)), (Some(false), vec![r#"{"query":"rust"}"#.to_owned()]));
    let result = call(json!({"action": "note", "query": null, "limit": null, "text": "hi"})).await;
    assert_eq!((result.is_error, texts(&result)), (Some(false), vec!["hi".to_owned()]));
    // The bound the strict schema said only in words is checked.
    let refused = call(json!({"action": "search", "query": "rust", "limit": 90, "text": null})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(texts(&refused)[0].contains("<field name=\"limit\">Too big. You sent: 90. Expected at most 50.</field>"));
    // A null for a required field is not "left out": it is refused as sent.
    let refused = call(json!({"action": "search", "query": null, "limit": null, "text": null})).await;
    assert!(
        texts(&refused)[0].contains("<field name=\"query\">Invalid type. You sent: null."),
        "{:?}",
        texts(&refused)
    );
    // Where schemas are published as written, a null stays what it is.
    let loose = server
        .call(
            "loose",
            json!({"action": "search", "query": "rust", "text": null}).as_object().cloned(),
            RequestInfo::default(),
        )
        .await;
    assert_eq!(loose.is_error, Some(true));
}
