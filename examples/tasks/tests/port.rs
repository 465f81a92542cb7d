//! The port against its rmcp original, both spawned and listed by rmcp's client over stdio: the
//! same tool names and per-tool hints, the same data for the same good calls, and where the
//! original answers a bad call with a protocol error, the port answers with an envelope naming
//! the field or the next call.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use mcp_fusion::wire::{ErrorCode, parse};
use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ()>;

const PORT: &str = env!("CARGO_BIN_EXE_tasks-server");

/// The rmcp original, built beside the port as `cargo test --workspace` builds the workspace's
/// executables (every member; `--examples` brings in the dev-dependencies' features), so that a
/// test run of the workspace finds it built instead of building the shared crates again with the
/// features `-p tasks-rmcp` alone would pick.
fn original() -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let built = Command::new(env!("CARGO")).args(["build", "-q", "--workspace", "--bins", "--examples"]).status();
        assert!(built.unwrap().success(), "cargo build --workspace --bins --examples");
    });
    Path::new(PORT).with_file_name("tasks-rmcp")
}

async fn spawn(binary: &Path, file: &Path) -> Client {
    let mut command = tokio::process::Command::new(binary);
    command.arg("--file").arg(file).env("RUST_LOG", "warn");
    ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap()
}

async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else { panic!("arguments are an object") };
    client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments)).await.unwrap()
}

type Hints = (Option<bool>, Option<bool>, Option<bool>, Option<bool>);

async fn listed(client: &Client) -> BTreeMap<String, Hints> {
    let tools = client.list_all_tools().await.unwrap();
    tools
        .into_iter()
        .map(|tool| {
            let a = tool.annotations.unwrap_or_default();
            let hints = (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint);
            (tool.name.to_string(), hints)
        })
        .collect()
}

/// The good calls a user makes, in order.
fn good_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("create_task", json!({"title": "Write the report", "priority": "high", "due": "2026-12-31"})),
        ("create_task", json!({"title": "Book the train", "notes": "Before Friday"})),
        ("list_tasks", json!({})),
        ("get_task", json!({"id": 1})),
        ("update_task", json!({"id": 2, "priority": "low", "title": "Book the night train"})),
        ("complete_task", json!({"id": 1})),
        ("list_tasks", json!({"include_done": true})),
        ("list_tasks", json!({"priority": "low"})),
        ("search_tasks", json!({"query": "friday"})),
        ("delete_task", json!({"id": 2})),
        ("list_tasks", json!({"include_done": true})),
    ]
}

#[tokio::test]
async fn the_port_lists_the_originals_tools_and_hints_and_answers_its_good_calls_alike() {
    let dir = tempfile::tempdir().unwrap();
    let original = spawn(&original(), &dir.path().join("original.json")).await;
    let port = spawn(Path::new(PORT), &dir.path().join("port.json")).await;

    let tools = listed(&original).await;
    assert_eq!(tools.len(), 7, "{tools:?}");
    assert_eq!(listed(&port).await, tools, "the same names and hints, tool for tool");
    assert_eq!(tools["list_tasks"].0, Some(true), "read-only, as hosts that auto-approve expect");
    assert_eq!(tools["delete_task"].1, Some(true));

    for (tool, arguments) in good_calls() {
        let (before, after) = (call(&original, tool, arguments.clone()).await, call(&port, tool, arguments).await);
        assert_eq!(after.is_error, Some(false), "{tool}: {after:?}");
        assert_eq!(after.structured_content, before.structured_content, "{tool}");
    }
    let created = call(&port, "create_task", json!({"title": "Call the bank"})).await;
    assert_eq!(created.content[0].as_text().unwrap().text, "Created task 3: Call the bank");
    original.cancel().await.unwrap();
    port.cancel().await.unwrap();
}

#[tokio::test]
async fn a_bad_call_to_the_port_names_the_field_or_the_next_call_by_its_tool_name() {
    let dir = tempfile::tempdir().unwrap();
    let port = spawn(Path::new(PORT), &dir.path().join("tasks.json")).await;
    let envelope = |result: CallToolResult| {
        assert_eq!(result.is_error, Some(true), "{result:?}");
        parse(&result.content[0].as_text().unwrap().text)
    };

    let missing = envelope(call(&port, "get_task", json!({"id": 9})).await).error;
    assert_eq!(missing.code, ErrorCode::NotFound);
    assert_eq!(missing.available_actions, ["list_tasks", "search_tasks"], "tools it can call, by their names");
    assert!(missing.recovery.as_deref().unwrap().starts_with("Call list_tasks (or search_tasks"));

    let invalid = envelope(call(&port, "create_task", json!({"titel": "Write", "due": "31.12.2026"})).await);
    let fields: Vec<&str> = invalid.fields.iter().map(|field| field.name.as_str()).collect();
    assert!(fields.contains(&"title") && fields.contains(&"due"), "{fields:?}");

    let misspelt = invalid.fields.iter().find(|field| field.name == "titel").expect("the unknown key is named");
    assert!(misspelt.text.contains("title"), "{}", misspelt.text);

    let impossible = envelope(call(&port, "create_task", json!({"title": "Write", "due": "2026-13-40"})).await).error;
    assert_eq!(impossible.code, ErrorCode::ValidationError);
    assert!(impossible.recovery.as_deref().unwrap().contains("like 2026-12-31"));

    let many = envelope(call(&port, "search_tasks", json!({"query": "x", "limit": 1000})).await);
    assert_eq!(many.fields.len(), 1);
    assert!(many.fields[0].name == "limit" && many.fields[0].text.contains("100"), "{:?}", many.fields);
    port.cancel().await.unwrap();
}

/// What the original answers to the same bad calls, as `docs/porting-from-rmcp.md` tells it: a
/// protocol error, a text naming the first missing field, or a call that runs.
#[tokio::test]
async fn the_original_answers_the_same_bad_calls_with_protocol_errors_or_runs_them() {
    let dir = tempfile::tempdir().unwrap();
    let original = spawn(&original(), &dir.path().join("tasks.json")).await;
    let answer = |tool: &'static str, arguments: Value| {
        let original = &original;
        async move {
            let Value::Object(arguments) = arguments else { unreachable!() };
            let request = CallToolRequestParams::new(tool).with_arguments(arguments);
            match original.call_tool(request).await {
                Err(rmcp::service::ServiceError::McpError(error)) => format!("{}: {}", error.code.0, error.message),
                Ok(result) => format!("isError {:?}: {}", result.is_error, result.content[0].as_text().unwrap().text),
                Err(other) => panic!("{tool}: {other}"),
            }
        }
    };
    assert_eq!(answer("get_task", json!({"id": 9})).await, "-32602: no task has id 9");
    assert_eq!(
        answer("create_task", json!({"titel": "Write"})).await,
        "isError Some(true): failed to deserialize parameters: missing field `title`"
    );
    assert_eq!(
        answer("create_task", json!({"title": "Write", "due": "31.12.2026"})).await,
        "-32602: the due date \"31.12.2026\" is not a date like 2026-12-31"
    );
    let many = answer("search_tasks", json!({"query": "x", "limit": 1000})).await;
    assert!(many.starts_with("isError Some(false)"), "{many}");
    original.cancel().await.unwrap();
}
