//! Envelopes within their budget: a server with 500 actions answers an unknown action, and a
//! call with hundreds of wrong keys is answered, within 8,000 characters, message and recovery
//! whole.

use mcp_fusion::prelude::*;
use mcp_fusion::transport::RequestInfo;
use mcp_fusion::wire::{DEFAULT_ENVELOPE_BUDGET, EnvelopeKind, parse};
use serde_json::{Map, Value, json};

use crate::support::error_text;

async fn noop(_ctx: Ctx<()>, _input: NoInput) -> Result<String> {
    Ok("done".into())
}

fn many(actions: usize, budget: Option<usize>) -> FusionServer {
    let mut group = Group::new("ops", "Five hundred operations.");
    for i in 0..actions {
        group = group.action(Action::new(format!("operation_{i:03}"), format!("Runs operation {i}.")).handler(noop));
    }
    let builder = FusionServer::builder::<()>("many", "1.0.0").group(group);
    let builder = match budget {
        Some(budget) => builder.envelope_budget(budget),
        None => builder,
    };
    builder.build(()).unwrap()
}

async fn call(server: &FusionServer, arguments: Value) -> String {
    let result = server.call("ops", arguments.as_object().cloned(), RequestInfo::default()).await;
    error_text(&result)
}

#[tokio::test]
async fn an_unknown_action_among_500_is_answered_within_the_budget_message_and_recovery_whole() {
    let server = many(500, None);
    let text = call(&server, json!({"action": "operaton_042"})).await;
    assert!(text.chars().count() <= DEFAULT_ENVELOPE_BUDGET, "{} characters", text.chars().count());
    let envelope = parse(&text);
    assert_eq!(envelope.kind, EnvelopeKind::ToolError, "{text}");
    let error = &envelope.error;
    assert_eq!(error.message, "Unknown action 'operaton_042' for tool \"ops\".");
    assert_eq!(
        error.recovery.as_deref(),
        Some(
            "Did you mean \"ops.operation_042\", \"ops.operation_024\" or \"ops.operation_204\"? Call tool \"ops\" with \"action\" set to the one you mean."
        )
    );
    let shown = error.available_actions.len();
    assert!((100..500).contains(&shown), "{shown} actions shown");
    assert_eq!(error.available_actions[0], "ops.operation_000", "the list keeps its order");
    let more = format!("{} more: tools/list lists them all.", 500 - shown);
    assert_eq!(error.find_detail("more_actions"), Some(more.as_str()));
    // A server may give its envelopes more room, and a small list is never cut.
    let roomy = call(&many(500, Some(40_000)), json!({"action": "operaton_042"})).await;
    assert!(roomy.matches("<action>").count() == 500 && !roomy.contains("more_actions"));
    let few = call(&many(5, None), json!({"action": "nope"})).await;
    assert!(few.matches("<action>").count() == 5 && !few.contains("more_actions"), "{few}");
}

#[tokio::test]
async fn hundreds_of_wrong_keys_are_cut_to_the_budget_with_how_many_more() {
    let server = many(3, None);
    let mut arguments: Map<String, Value> =
        (0..400).map(|i| (format!("unexpected_key_{i:03}"), json!("some value that is not wanted here"))).collect();
    arguments.insert("action".into(), json!("operation_001"));
    let text = call(&server, Value::Object(arguments)).await;
    assert!(text.chars().count() <= DEFAULT_ENVELOPE_BUDGET, "{} characters", text.chars().count());
    assert!(text.starts_with("<validation_error action=\"ops.operation_001\">\n<field name=\"unexpected_key_000\">"));
    assert!(text.contains("<field name=\"(root)\">376 more problems are not listed."), "{text}");
    assert!(text.ends_with(
        "<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n</validation_error>"
    ));
}
