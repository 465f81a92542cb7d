//! The fixture server of the official MCP conformance suite (`@modelcontextprotocol/conformance`),
//! built with mcp-fusion. Test-only: it exists so `tests/conformance/run.sh` can run the suite's
//! server scenarios against our HTTP transport.
//!
//! The suite calls its fixture tools by fixed names (`test_simple_text`, ...). The server uses
//! the flat exposition with the separator `_`, so the action `simple_text` of the group `test` is
//! the tool `test_simple_text`.
//!
//! Only the fixtures this framework can serve are here. The scenarios whose fixtures need what
//! the framework does not have (image/audio/resource content blocks, log and progress
//! notifications from a handler, sampling, elicitation, resources, prompts, completions) are
//! listed in `tests/conformance/baseline.json` or in `tests/conformance/README.md`.

use std::borrow::Cow;

use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, BuildError, Ctx, Exposition, FusionServer, Group};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;

/// What `test_simple_text` returns (scenario `tools-call-simple-text`).
pub const SIMPLE_TEXT: &str = "This is a simple text response for testing.";

/// The message of `test_error_handling`'s error (scenario `tools-call-error`).
pub const ERROR_MESSAGE: &str = "This tool intentionally returns an error for testing";

/// The tool names the suite calls, in `tools/list` order.
pub const TOOL_NAMES: &[&str] = &["test_simple_text", "test_error_handling", "json_schema_2020_12_tool"];

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

/// The input of `json_schema_2020_12_tool` (scenario `json-schema-2020-12`, SEP-1613, in the
/// suite's pending set): its schema is written by hand so that `$schema`, `$defs` and the `$ref`
/// into them reach `tools/list` as the suite expects.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonSchema202012 {
    /// A name.
    pub name: Option<String>,
    /// An address.
    pub address: Option<Address>,
}

/// The `address` definition of [`JsonSchema202012`].
#[derive(Debug, Deserialize)]
pub struct Address {
    /// The street.
    pub street: Option<String>,
    /// The city.
    pub city: Option<String>,
}

impl JsonSchema for JsonSchema202012 {
    fn schema_name() -> Cow<'static, str> {
        "JsonSchema202012".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {
                        "street": { "type": "string" },
                        "city": { "type": "string" }
                    }
                }
            },
            "properties": {
                "name": { "type": "string" },
                "address": { "$ref": "#/$defs/address" }
            },
            "additionalProperties": false
        })
    }
}

/// `json_schema_2020_12_tool`: says what it received.
async fn json_schema_2020_12(_ctx: Ctx<()>, input: JsonSchema202012) -> Result<String, ToolError> {
    let address = input.address.map(|a| (a.street, a.city));
    Ok(format!("Received name={:?}, address={:?}", input.name, address))
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
        );
    let json = Group::new("json", "JSON Schema 2020-12 fixtures of the MCP conformance suite.").action(
        Action::new(
            "schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features (conformance scenario json-schema-2020-12).",
        )
        .read_only()
        .handler(json_schema_2020_12),
    );
    FusionServer::builder("fusion-conformance-server", env!("CARGO_PKG_VERSION"))
        .instructions("Fixture server of the MCP conformance suite; its tools exist only for the suite.")
        .exposition(Exposition::Flat { separator: "_".into() })
        .group(test)
        .group(json)
        .build(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_fusion::RequestInfo;
    use serde_json::{Value, json};

    #[test]
    fn exposes_exactly_the_names_the_suite_calls() {
        let server = server().unwrap();
        let names: Vec<&str> = server.tools().iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, TOOL_NAMES);
        assert!(server.tools().iter().all(|t| t.description.as_deref().is_some_and(|d| !d.is_empty())));
    }

    #[test]
    fn keeps_the_2020_12_keywords() {
        let server = server().unwrap();
        let tool = server.tools().iter().find(|t| t.name == "json_schema_2020_12_tool").unwrap();
        let schema = Value::Object((*tool.input_schema).clone());
        assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
        assert!(schema["$defs"]["address"].is_object());
        assert_eq!(schema["additionalProperties"], false);
    }

    #[tokio::test]
    async fn fixtures_answer_as_the_suite_expects() {
        let server = server().unwrap();
        let ok = server.call("test_simple_text", None, RequestInfo::default()).await;
        assert_eq!(ok.is_error, Some(false));
        assert_eq!(ok.content[0].as_text().unwrap().text, SIMPLE_TEXT);

        let err = server.call("test_error_handling", Some(Default::default()), RequestInfo::default()).await;
        assert_eq!(err.is_error, Some(true));
        assert!(err.content[0].as_text().unwrap().text.contains(ERROR_MESSAGE));

        let args = json!({"name": "Ada", "address": {"street": "1 Loop", "city": "Paris"}});
        let echo = server.call("json_schema_2020_12_tool", args.as_object().cloned(), RequestInfo::default()).await;
        assert_eq!(echo.is_error, Some(false), "{:?}", echo.content);
    }
}
