//! Tools of every shape in one server: actions that stand alone under their own names, a group
//! exposed flat, a grouped tool — each with its own hints and output schema — and every action
//! an envelope names said as the model calls it under that shape.

use mcp_fusion::prelude::*;
use mcp_fusion::transport::RequestInfo;
use mcp_fusion::wire::parse;
use rmcp::model::Tool;
use serde_json::{Value, json};

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Created {
    id: u64,
}

/// Create a task.
#[action(destructive)]
async fn create_task() -> Result<Json<Created>> {
    Ok(Json(Created { id: 3 }))
}

/// List the tasks.
#[action(read_only)]
async fn list_tasks() -> Result<String> {
    Ok("no tasks".into())
}

/// Read one task: it never finds one, and says which action lists them.
#[action(read_only)]
async fn get_task(ctx: Ctx<()>) -> Result<String, ToolError> {
    let list = ctx.action_name(list_tasks);
    Err(ToolError::not_found("No task 3.")
        .suggest(format!("Call {list} for the ids, then call again."))
        .actions([list]))
}

/// The same advice, with the names written as strings: qualified, bare, and one no action has.
#[action(read_only)]
async fn find_task() -> Result<String, ToolError> {
    Err(ToolError::not_found("No task matches.").suggest("Call tasks.list_tasks, then get_task.").actions([
        "tasks.list_tasks",
        "get_task",
        "tasks.lsit_tasks",
    ]))
}

fn tasks() -> Group<()> {
    Group::new("tasks", "Tasks.").action(list_tasks()).action(get_task()).action(find_task())
}

fn tool<'a>(tools: &'a [Tool], name: &str) -> &'a Tool {
    tools.iter().find(|tool| tool.name == name).unwrap_or_else(|| panic!("no tool {name} in {tools:?}"))
}

fn hints(tool: &Tool) -> (Option<bool>, Option<bool>) {
    let hints = tool.annotations.clone().unwrap_or_default();
    (hints.read_only_hint, hints.destructive_hint)
}

async fn failed(server: &FusionServer, tool: &str, arguments: Value) -> mcp_fusion::wire::Envelope {
    let arguments = arguments.as_object().cloned();
    let result = server.call(tool, arguments, RequestInfo::default()).await;
    assert_eq!(result.is_error, Some(true), "{result:?}");
    parse(&result.content[0].as_text().unwrap().text)
}

#[test]
fn standalone_flat_and_grouped_tools_mix_with_their_own_names_hints_and_schemas() {
    let server = FusionServer::builder("tasks", "1.0.0")
        .action(create_task())
        .group(tasks().exposition(Exposition::flat()))
        .group(Group::new("archive", "Old tasks.").action(list_tasks()).action(create_task()))
        .build(())
        .unwrap();
    let tools = server.tools();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["create_task", "tasks_list_tasks", "tasks_get_task", "tasks_find_task", "archive"]);
    assert_eq!(hints(tool(&tools, "create_task")), (Some(false), Some(true)));
    assert_eq!(hints(tool(&tools, "tasks_list_tasks")), (Some(true), Some(false)));
    // The grouped tool keeps the merged hints of its least safe action.
    assert_eq!(hints(tool(&tools, "archive")), (Some(false), Some(true)));
    let schema = tool(&tools, "create_task").output_schema.clone().expect("its own output schema");
    assert_eq!(schema["properties"]["id"]["type"], "integer");
    assert!(tool(&tools, "tasks_list_tasks").output_schema.is_none());
    assert!(
        tool(&tools, "create_task").input_schema.get("properties").is_none_or(|p| p.as_object().unwrap().is_empty())
    );
}

#[tokio::test]
async fn a_standalone_action_is_called_by_its_name_and_its_duplicate_refused() {
    let server = FusionServer::builder("tasks", "1.0.0").action(create_task()).group(tasks()).build(()).unwrap();
    let result = server.call("create_task", None, RequestInfo::default()).await;
    assert_eq!(result.structured_content, Some(json!({"id": 3})));
    let unknown = failed(&server, "create_tsak", json!({})).await;
    assert!(unknown.error.recovery.clone().unwrap().contains("\"create_task\""));

    let twice = FusionServer::builder("tasks", "1.0.0").action(create_task()).action(create_task()).build(());
    assert!(matches!(twice, Err(BuildError::Duplicate { .. })), "{:?}", twice.err());
    let bad =
        FusionServer::builder("t", "1").action(Action::new("a.b", "Dotted.").handler(list_tasks_handler)).build(());
    assert!(matches!(bad, Err(BuildError::InvalidName { .. })), "{:?}", bad.err());
}

async fn list_tasks_handler(_ctx: Ctx<()>, _input: NoInput) -> Result<String> {
    Ok("none".into())
}

#[tokio::test]
async fn an_envelope_names_each_action_as_the_model_calls_it_under_each_shape() {
    for (exposition, list) in [(Exposition::grouped(), "tasks.list_tasks"), (Exposition::flat(), "tasks_list_tasks")] {
        let server = FusionServer::builder("tasks", "1.0.0").group(tasks().exposition(exposition)).build(()).unwrap();
        let (tool, arguments) = match server.tools().len() {
            1 => ("tasks", json!({"action": "get_task"})),
            _ => ("tasks_get_task", json!({})),
        };
        let error = failed(&server, tool, arguments).await.error;
        assert_eq!(error.available_actions, [list]);
        assert_eq!(error.recovery.clone().unwrap(), format!("Call {list} for the ids, then call again."));

        let (tool, arguments) = match server.tools().len() {
            1 => ("tasks", json!({"action": "find_task"})),
            _ => ("tasks_find_task", json!({})),
        };
        let error = failed(&server, tool, arguments).await.error;
        let get = list.replace("list_tasks", "get_task");
        assert_eq!(error.available_actions, [list, get.as_str(), "tasks.lsit_tasks"], "an unknown name stays");
        assert_eq!(error.recovery.clone().unwrap(), format!("Call {list}, then {get}."));
    }

    // Standalone, the actions are tools of their own names.
    let server = FusionServer::builder("tasks", "1.0.0").action(list_tasks()).action(get_task()).build(()).unwrap();
    let error = failed(&server, "get_task", json!({})).await.error;
    assert_eq!(error.available_actions, ["list_tasks"]);
}

#[test]
fn a_name_written_at_build_time_that_no_action_has_is_refused() {
    let replaced = |replacement: &'static str| {
        FusionServer::builder("tasks", "1.0.0")
            .group(tasks())
            .action(Action::new("old_list", "The old list.").deprecated(Some(replacement)).handler(list_tasks_handler))
            .build(())
    };
    assert!(replaced("tasks.list_tasks").is_ok());
    let Err(refused) = replaced("tasks.lsit_tasks") else { panic!("a replacement no action has is refused") };
    assert!(matches!(&refused, BuildError::NamesNoAction { what: "replacement", .. }), "{refused}");
    assert!(refused.to_string().contains("\"tasks.lsit_tasks\""), "{refused}");

    let checked = |check: &'static str| {
        FusionServer::builder("tasks", "1.0.0")
            .action(list_tasks())
            .action(Action::new("pay", "Pay.").check_with(check).handler(list_tasks_handler))
            .build(())
    };
    assert!(checked("list_tasks").is_ok());
    assert!(matches!(checked("list_task"), Err(BuildError::NamesNoAction { what: "check_with", .. })));
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Task {
    id: u64,
    title: String,
}

/// Create a task, said in one line beside its data.
#[action]
async fn create_titled() -> Result<Structured<Task>> {
    let task = Task { id: 3, title: "Write the report".into() };
    Ok(Structured::new(format!("Created task {}", task.id), task))
}

#[tokio::test]
async fn a_summary_line_sits_beside_structured_content_and_its_schema_for_a_real_client() {
    let server = FusionServer::builder("tasks", "1.0.0").action(create_titled()).build(()).unwrap();
    let client = crate::support::connect(server).await;
    let tools = client.list_all_tools().await.unwrap();
    let schema = tools[0].output_schema.clone().expect("the output schema of Task");
    assert_eq!(schema["required"], json!(["id", "title"]));
    let result = crate::support::call(&client, "create_titled", json!({})).await;
    assert_eq!(crate::support::texts(&result), ["Created task 3"]);
    assert_eq!(result.structured_content, Some(json!({"id": 3, "title": "Write the report"})));
    client.cancel().await.unwrap();
}

/// A JSON Schema 2020-12 input written by hand, each of its objects closed by itself: `$anchor`
/// in `$defs`, `$ref`, `allOf` over `anyOf`, `if` / `then` / `else`, `dependentRequired`,
/// `prefixItems`.
const WRITTEN_2020_12: &str = r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}},"additionalProperties":false}},"properties":{"name":{"type":"string","minLength":1},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string","format":"email"},"tags":{"type":"array","prefixItems":[{"type":"string"}],"items":false}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"dependentRequired":{"phone":["name"]},"additionalProperties":false}"##;

/// The arguments of `contact`, described by [`WRITTEN_2020_12`].
#[derive(serde::Deserialize)]
struct Contact {
    name: Option<String>,
}

impl schemars::JsonSchema for Contact {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Contact".into()
    }

    fn json_schema(_generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        serde_json::from_str(WRITTEN_2020_12).expect("the written schema is JSON")
    }
}

async fn contact(_ctx: Ctx<()>, input: Contact) -> Result<String> {
    Ok(format!("contacting {}", input.name.unwrap_or_default()))
}

#[tokio::test]
async fn a_2020_12_schema_written_by_hand_is_published_byte_for_byte_and_holds() {
    let server = FusionServer::builder("contacts", "1")
        .action(Action::new("contact", "Contact someone.").handler(contact))
        .build(())
        .unwrap();
    let tools = server.tools();
    // Every keyword and value as written, in the order written: nothing added, dropped or moved.
    let published = serde_json::to_string(&*tool(&tools, "contact").input_schema).unwrap();
    assert_eq!(published, WRITTEN_2020_12);

    let call = |arguments: Value| server.call("contact", arguments.as_object().cloned(), RequestInfo::default());
    let answered = call(json!({"name": "Ada", "contactMethod": "email", "email": "ada@example.com"})).await;
    assert_eq!(answered.is_error, Some(false), "{answered:?}");
    // `then` applies: a phone contact needs its phone.
    let envelope =
        failed(&server, "contact", json!({"name": "Ada", "contactMethod": "phone", "email": "ada@example.com"})).await;
    assert!(envelope.fields.iter().any(|field| field.name == "phone"), "{envelope:?}");
    // The referenced object is closed as written.
    let envelope = failed(&server, "contact", json!({"email": "ada@example.com", "address": {"zip": "75001"}})).await;
    assert!(envelope.fields.iter().any(|field| field.name == "address.zip"), "{envelope:?}");
}
