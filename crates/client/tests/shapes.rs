//! Results in every shape a server may send, ours and the TypeScript implementation's, read
//! through the client: the fields an agent branches on come out right, and nothing panics.

use mcp_fusion_client::CallOutcome;
use mcp_fusion_client::wire::{ChangeSeverity, EnvelopeKind, ErrorCode, Severity, parse};
use rmcp::model::{CallToolResult, ContentBlock};

fn failed(text: &str) -> mcp_fusion_client::ToolFailure {
    let outcome = CallOutcome::from_result(CallToolResult::error(vec![ContentBlock::text(text)]));
    // The client reads a failure exactly as `fusion parse` and the wire parser do.
    assert_eq!(outcome.error.as_ref(), Some(&parse(text)), "{text}");
    *outcome.into_result().expect_err("an error result")
}

#[test]
fn typescript_routing_error_no_severity_comma_list_recovery_last() {
    let failure = failed(
        "<tool_error code=\"UNKNOWN_ACTION\">\n<message>Unknown action \"delete\" for tool \"projects\".</message>\n\
         <available_actions>list, create, update</available_actions>\n<recovery>Choose one of the available actions.</recovery>\n</tool_error>",
    );
    assert_eq!(failure.code(), &ErrorCode::UnknownAction);
    assert_eq!(failure.severity(), Severity::Error);
    assert_eq!(failure.available_actions(), ["list", "create", "update"]);
    assert_eq!(failure.recovery(), Some("Choose one of the available actions."));
}

#[test]
fn typescript_error_without_code_is_unknown() {
    let failure = failed("<tool_error>\n<message>Something broke.</message>\n</tool_error>");
    assert_eq!(failure.code().as_str(), "UNKNOWN");
    assert_eq!(failure.message(), "Something broke.");
}

#[test]
fn validation_error_fields_and_action() {
    let failure = failed(
        "<validation_error action=\"projects.create\">\n<field name=\"name\">Too short. You sent: ''. Expected at least 1 character.</field>\n\
         <field name=\"tags.0\">Invalid type. You sent: 1. Expected a string.</field>\n\
         <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n</validation_error>",
    );
    assert_eq!(failure.code(), &ErrorCode::ValidationError);
    assert_eq!(failure.envelope().action.as_deref(), Some("projects.create"));
    let fields: Vec<(&str, &str)> = failure.fields().iter().map(|f| (f.name.as_str(), f.text.as_str())).collect();
    assert_eq!(
        fields,
        [
            ("name", "Too short. You sent: ''. Expected at least 1 character."),
            ("tags.0", "Invalid type. You sent: 1. Expected a string.")
        ]
    );
}

#[test]
fn a_tool_error_followed_by_contract_awareness() {
    let failure = failed(
        "<tool_error code=\"VALIDATION_ERROR\">\n<message>Invalid input.</message>\n\
         <available_actions>\n  <action>projects.list</action>\n</available_actions>\n</tool_error>\n\
         <contract_awareness>\n  <system_note>IMPORTANT: The behavioral contract for tool \"projects\" has changed since your last calibration.</system_note>\n\
         <action>projects.create</action>\n  <change_count>1</change_count>\n  <max_severity>BREAKING</max_severity>\n\
         <contract_changes>\n    <change severity=\"BREAKING\" field=\"actions.create.required\">\n\
         <description>Action \"create\" now requires new fields: [owner]</description>\n      <before>[\"name\"]</before>\n\
         <after>[\"name\",\"owner\"]</after>\n    </change>\n  </contract_changes>\n</contract_awareness>",
    );
    assert_eq!(failure.available_actions(), ["projects.list"], "the awareness <action> is not an available action");
    let changes = failure.contract_changes();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].severity, ChangeSeverity::Breaking);
    assert_eq!(changes[0].field, "actions.create.required");
    assert_eq!(changes[0].after.as_deref(), Some("[\"name\",\"owner\"]"));
}

#[test]
fn non_xml_and_empty_text() {
    let plain = failed("Error: connection refused");
    assert_eq!((plain.code().as_str(), plain.message()), ("UNKNOWN", "Error: connection refused"));
    let empty = failed("");
    assert_eq!(empty.message(), "Unknown error");
    let none = CallOutcome::from_result(CallToolResult::error(vec![]));
    assert_eq!(none.error.unwrap().error.message, "Unknown error");
}

#[test]
fn escaped_entities_in_every_field() {
    let failure = failed(
        "<tool_error code=\"A&amp;B\" severity=\"critical\">\n<message>x &lt; y &amp;&amp; z &gt; 1 &quot;q&quot; &apos;s&apos; &#60;&#x3E;</message>\n\
         <recovery>use &lt;b&gt;</recovery>\n<available_actions>\n  <action>a&amp;b</action>\n</available_actions>\n\
         <details>\n  <detail key=\"k&quot;\">v&lt;</detail>\n</details>\n<retry_after>7 seconds</retry_after>\n</tool_error>",
    );
    assert_eq!(failure.code().as_str(), "A&B");
    assert_eq!(failure.severity(), Severity::Critical);
    assert_eq!(failure.message(), "x < y && z > 1 \"q\" 's' <>");
    assert_eq!(failure.recovery(), Some("use <b>"));
    assert_eq!(failure.available_actions(), ["a&b"]);
    assert_eq!(failure.details(), [("k\"".to_owned(), "v<".to_owned())]);
    assert_eq!(failure.retry_after(), Some(7));
}

#[test]
fn warnings_on_success_are_surfaced_not_thrown() {
    let result = CallToolResult::success(vec![
        ContentBlock::text("{\"id\":1}"),
        ContentBlock::text(
            "<tool_error code=\"DEPRECATED\" severity=\"warning\">\n<message>old</message>\n</tool_error>",
        ),
    ]);
    let reply = CallOutcome::from_result(result).into_result().unwrap();
    assert_eq!(reply.value, Some(serde_json::json!({"id": 1})));
    assert_eq!(reply.warnings[0].error.code, ErrorCode::Deprecated);
    let alone = CallOutcome::from_result(CallToolResult::success(vec![ContentBlock::text(
        "<tool_error code=\"DEPRECATED\" severity=\"warning\">\n<message>old</message>\n</tool_error>",
    )]));
    assert!(!alone.is_error());
    assert_eq!(alone.value(), None);
    assert_eq!(alone.warnings.len(), 1);
}

#[test]
fn a_bare_message_outside_an_envelope_is_the_message() {
    let failure = failed("upstream said:\n<message>Quota &amp; limits &lt;reached&gt;</message>\n");
    assert_eq!(failure.envelope().kind, EnvelopeKind::Text);
    assert_eq!((failure.code().as_str(), failure.message()), ("UNKNOWN", "Quota & limits <reached>"));
    assert_eq!(failure.severity(), Severity::Error);
    assert_eq!((failure.recovery(), failure.retry_after()), (None, None));
    assert!(failure.available_actions().is_empty() && failure.details().is_empty());
    // Without a message element the whole text is still the message.
    assert_eq!(failed("no tags here").message(), "no tags here");
}

#[test]
fn repeated_single_valued_elements_first_wins() {
    let failure = failed(
        "<tool_error code=\"RATE_LIMITED\" severity=\"error\">\n<message>first</message>\n<message>second</message>\n\
         <recovery>Wait.</recovery>\n<recovery>Give up.</recovery>\n<retry_after>5 seconds</retry_after>\n\
         <retry_after>60 seconds</retry_after>\n</tool_error>",
    );
    assert_eq!(failure.code(), &ErrorCode::RateLimited);
    assert_eq!(failure.message(), "first");
    assert_eq!(failure.recovery(), Some("Wait."));
    assert_eq!(failure.retry_after(), Some(5));
}

#[test]
fn an_unknown_severity_is_kept_as_sent() {
    let failure =
        failed("<tool_error code=\"INTERNAL_ERROR\" severity=\"fatal\">\n<message>Disk gone.</message>\n</tool_error>");
    assert_eq!(failure.severity(), Severity::Custom("fatal".to_owned()));
    assert_eq!(failure.severity().as_str(), "fatal");
    assert!(failure.envelope().is_error());
    assert_eq!(failure.to_string(), "INTERNAL_ERROR: Disk gone.");

    // On a success it is not a warning: only `warning` rides along as one.
    let outcome = CallOutcome::from_result(CallToolResult::success(vec![
        ContentBlock::text("{}"),
        ContentBlock::text("<tool_error code=\"X\" severity=\"Warning\">\n<message>m</message>\n</tool_error>"),
    ]));
    assert!(outcome.warnings.is_empty());
}

#[test]
fn attribute_values_are_unescaped_like_text() {
    let failure = failed(
        "<tool_error code=\"X&lt;Y\" severity=\"a&amp;b\">\n<message>m</message>\n<details>\n  \
         <detail key=\"a&quot;b\">v</detail>\n</details>\n</tool_error>",
    );
    assert_eq!(failure.code().as_str(), "X<Y");
    assert_eq!(failure.severity(), Severity::Custom("a&b".to_owned()));
    assert_eq!(failure.details(), [("a\"b".to_owned(), "v".to_owned())]);

    let failure = failed(
        "<validation_error action=\"a&amp;b\">\n<field name=\"x&lt;y\">bad.</field>\n</validation_error>\n\
         <contract_awareness>\n  <action>a&amp;b</action>\n  <contract_changes>\n    \
         <change severity=\"BREAKING\" field=\"p&amp;q\">\n      <description>d</description>\n    </change>\n  \
         </contract_changes>\n</contract_awareness>",
    );
    assert_eq!(failure.envelope().action.as_deref(), Some("a&b"));
    assert_eq!(failure.message(), "Invalid arguments for a&b.");
    assert_eq!(failure.fields()[0].name, "x<y");
    assert_eq!(failure.contract_changes()[0].field, "p&q");
}

#[test]
fn every_golden_vector_reads_as_the_wire_parser_reads_it() {
    const VECTORS: &str = include_str!("../../wire/tests/vectors/wire-vectors.jsonl");
    let mut read = 0;
    for line in VECTORS.lines().filter(|l| !l.trim().is_empty()) {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(is_error) = case["expected"]["is_error"].as_bool() else { continue };
        let text = case["expected"]["text"].as_str().unwrap();
        let result = if is_error {
            CallToolResult::error(vec![ContentBlock::text(text)])
        } else {
            CallToolResult::success(vec![ContentBlock::text("{}"), ContentBlock::text(text)])
        };
        let outcome = CallOutcome::from_result(result);
        let envelope = parse(text);
        assert_eq!(envelope.kind, EnvelopeKind::ToolError, "{}", case["id"]);
        if is_error {
            assert_eq!(outcome.error, Some(envelope), "{}", case["id"]);
        } else {
            assert_eq!((outcome.error, outcome.warnings), (None, vec![envelope]), "{}", case["id"]);
        }
        read += 1;
    }
    assert_eq!(read, 170, "every tool_error and error_builder vector");
}
