//! The experimental tasks of MCP 2025-11-25 over HTTP, as raw JSON-RPC: a session whose client
//! did not declare the tasks extension asks for a task with `task` on `tools/call`, reads it
//! with `tasks/get`, waits for its result with `tasks/result`, lists and cancels its own tasks,
//! in that version's shapes (`ttl`, `pollInterval`, `{task}`, `failed` for a tool error).

use std::sync::Arc;

use mcp_fusion::wire::parse;
use serde_json::{Value, json};

use super::tasks::{gate, serve};
use super::tasks_2025::Session;

fn export_task(arguments: Value, task: Value) -> Value {
    json!({"name": "billing", "arguments": arguments, "task": task})
}

/// Starts a task of `arguments` in `session`; its id.
async fn start(session: &Session, arguments: Value) -> String {
    let created = session.request("tools/call", export_task(arguments, json!({}))).await;
    created["result"]["task"]["taskId"].as_str().unwrap_or_else(|| panic!("no task: {created}")).to_owned()
}

/// The envelope in the first text of a tool result.
fn envelope(result: &Value) -> mcp_fusion::wire::ToolError {
    parse(result["content"][0]["text"].as_str().unwrap()).error
}

#[tokio::test]
async fn initialize_and_tools_list_say_which_calls_run_as_tasks() {
    let addr = serve(gate()).await;
    let ana = Session::open(addr, "ana-token", false).await;
    let capabilities = &ana.initialized["result"]["capabilities"];
    let tasks = json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
    assert_eq!(capabilities["tasks"], tasks, "{capabilities}");
    assert!(capabilities.get("extensions").is_none(), "the extension is for clients that declare it: {capabilities}");
    let listed = ana.request("tools/list", json!({})).await;
    let tool = &listed["result"]["tools"][0];
    assert_eq!(tool["name"], "billing");
    // One of its actions runs only as a task, the others may: the tool may.
    assert_eq!(tool["execution"], json!({"taskSupport": "optional"}), "{tool}");
    assert!(listed["result"].get("resultType").is_none(), "{listed}");

    // A client that declared the extension is told of the extension instead.
    let declared = Session::open(addr, "ana-token", true).await;
    let capabilities = &declared.initialized["result"]["capabilities"];
    assert!(capabilities.get("tasks").is_none(), "{capabilities}");
    assert_eq!(capabilities["extensions"]["io.modelcontextprotocol/tasks"], json!({}));
    let listed = declared.request("tools/list", json!({})).await;
    assert!(listed["result"]["tools"][0].get("execution").is_none(), "{listed}");
}

#[tokio::test]
async fn a_task_is_answered_at_once_and_tasks_result_waits_for_its_result() {
    let gate = gate();
    let addr = serve(Arc::clone(&gate)).await;
    let ana = Session::open(addr, "ana-token", false).await;
    let arguments = json!({"action": "export_invoices", "status": "paid"});
    let created = ana.request("tools/call", export_task(arguments, json!({"ttl": 60_000}))).await;
    let task = &created["result"]["task"];
    assert_eq!(
        (&task["status"], &task["ttl"], &task["pollInterval"]),
        (&json!("working"), &json!(60_000), &json!(1_000))
    );
    assert!(task.get("ttlMs").is_none() && created["result"].get("resultType").is_none(), "{created}");
    let immediate = created["result"]["_meta"]["io.modelcontextprotocol/model-immediate-response"].as_str().unwrap();
    assert!(immediate.starts_with("billing.export_invoices started as task"), "{immediate}");
    let id = task["taskId"].as_str().unwrap().to_owned();
    // The handle came while the handler is held at its gate.
    gate.started.acquire().await.unwrap().forget();
    let working = ana.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(working["result"]["status"], "working", "{working}");
    assert_eq!(working["result"]["statusMessage"], "billing.export_invoices is running.");

    // tasks/result, sent while the task works, answers once it has ended: with the result
    // only the released handler can give.
    let waiting = tokio::spawn({
        let ana = ana.clone();
        async move { ana.request("tasks/result", json!({"taskId": id})).await }
    });
    gate.release.add_permits(1);
    let result = waiting.await.unwrap();
    let result = &result["result"];
    assert_eq!(result["content"][0]["text"], "exported inv_1,inv_2 (paid)", "{result}");
    assert_eq!(result["isError"], false);
    let related = &result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"];
    assert_eq!(related, task["taskId"].as_str().unwrap());
    let done = ana.request("tasks/get", json!({"taskId": related})).await;
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert!(done["result"]["lastUpdatedAt"].as_str() >= done["result"]["createdAt"].as_str());
}

#[tokio::test]
async fn a_tool_error_is_a_failed_task_whose_status_and_result_carry_the_envelope() {
    let gate = gate();
    let addr = serve(Arc::clone(&gate)).await;
    let ana = Session::open(addr, "ana-token", false).await;
    // A client may ask for less time than the server keeps tasks, never more.
    let arguments = json!({"action": "export_invoices", "status": "void"});
    let created = ana.request("tools/call", export_task(arguments, json!({"ttl": 99_999_999_999_u64}))).await;
    assert_eq!(created["result"]["task"]["ttl"], 3_600_000, "{created}");
    let id = created["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    gate.release.add_permits(1);
    let result = ana.request("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["result"]["isError"], true, "{result}");
    let error = envelope(&result["result"]);
    assert_eq!((error.code.as_str(), error.recovery.as_deref()), ("NOT_FOUND", Some("Export open or paid ones.")));
    let failed = ana.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(failed["result"]["status"], "failed", "{failed}");
    let message = failed["result"]["statusMessage"].as_str().unwrap();
    assert_eq!(parse(message).error.code.as_str(), "NOT_FOUND", "a client that only polls reads the envelope too");
}

#[tokio::test]
async fn a_cancelled_task_ends_before_the_answer_and_stays_cancelled() {
    let gate = gate();
    let addr = serve(Arc::clone(&gate)).await;
    let ana = Session::open(addr, "ana-token", false).await;
    let id = start(&ana, json!({"action": "export_invoices"})).await;
    gate.started.acquire().await.unwrap().forget();
    let cancelled = ana.request("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    assert_eq!(cancelled["result"]["taskId"], id.as_str());
    // Cancelled before the answer, and so it stays, whatever its work does after.
    gate.release.add_permits(1);
    assert_eq!(ana.request("tasks/get", json!({"taskId": id})).await["result"]["status"], "cancelled");

    let again = ana.request("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(again["error"]["code"], -32602, "{again}");
    let message = again["error"]["message"].as_str().unwrap();
    assert!(message.contains("it already ended (cancelled)") && message.contains("tasks/result"), "{message}");
    let result = ana.request("tasks/result", json!({"taskId": id})).await;
    let error = envelope(&result["result"]);
    assert_eq!(error.code.as_str(), "CANCELLED", "{result}");
    assert!(error.message.contains("its task was cancelled by its client"), "{}", error.message);
}

#[tokio::test]
async fn tasks_list_shows_each_caller_only_its_own_tasks() {
    let gate = gate();
    let addr = serve(Arc::clone(&gate)).await;
    let ana = Session::open(addr, "ana-token", false).await;
    let bo = Session::open(addr, "bo-token", false).await;
    let mut anas = Vec::new();
    for session in [&ana, &ana, &bo] {
        let id = start(session, json!({"action": "export_invoices"})).await;
        gate.release.add_permits(1);
        session.request("tasks/result", json!({"taskId": id})).await;
        if std::ptr::eq(session, &ana) {
            anas.push(id);
        }
    }
    let listed = ana.request("tasks/list", json!({})).await;
    let ids: Vec<&str> =
        listed["result"]["tasks"].as_array().unwrap().iter().map(|t| t["taskId"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2, "{listed}");
    assert!(anas.iter().all(|id| ids.contains(&id.as_str())), "{listed}");
    assert!(listed["result"].get("nextCursor").is_none());
    assert_eq!(listed["result"]["tasks"][0]["status"], "completed");
    assert_eq!(bo.request("tasks/list", json!({})).await["result"]["tasks"].as_array().unwrap().len(), 1);

    let forged = ana.request("tasks/list", json!({"cursor": "1.abc'; DROP"})).await;
    assert_eq!(forged["error"]["code"], -32602, "{forged}");
    assert!(forged["error"]["message"].as_str().unwrap().contains("is not one this server gave"));
    let number = ana.request("tasks/list", json!({"cursor": 7})).await;
    assert_eq!(number["error"]["code"], -32602, "{number}");
}

#[tokio::test]
async fn an_unknown_or_someone_elses_task_is_refused_by_every_method() {
    let gate = gate();
    let addr = serve(Arc::clone(&gate)).await;
    let ana = Session::open(addr, "ana-token", false).await;
    let bo = Session::open(addr, "bo-token", false).await;
    let id = start(&ana, json!({"action": "export_invoices"})).await;
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        for (session, id) in [(&bo, id.as_str()), (&ana, "no-such-task")] {
            let refused = session.request(method, json!({"taskId": id})).await;
            assert_eq!(refused["error"]["code"], -32602, "{method}: {refused}");
            let message = refused["error"]["message"].as_str().unwrap();
            assert!(message.contains("of yours is known here"), "{method}: {message}");
            assert!(message.contains("call the action that started it again"), "{message}");
        }
    }
    let missing = ana.request("tasks/get", json!({})).await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert!(missing["error"]["message"].as_str().unwrap().contains("\"taskId\" is missing"));
    gate.release.add_permits(1);
    let result = ana.request("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["result"]["isError"], false, "Bo's cancel stopped nothing: {result}");
}

#[tokio::test]
async fn a_call_without_task_is_plain_and_one_that_needs_a_task_says_how_to_ask() {
    let gate = gate();
    let addr = serve(Arc::clone(&gate)).await;
    let ana = Session::open(addr, "ana-token", false).await;
    gate.release.add_permits(1);
    let plain = ana.request("tools/call", json!({"name": "billing", "arguments": {"action": "export_invoices"}})).await;
    assert_eq!(plain["result"]["content"][0]["text"], "exported inv_1,inv_2 (all)", "{plain}");
    assert!(plain["result"].get("task").is_none());

    let required = ana.request("tools/call", json!({"name": "billing", "arguments": {"action": "export_all"}})).await;
    assert_eq!(required["error"]["code"], -32601, "{required}");
    let message = required["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("billing.export_all runs only as a task") && message.contains(r#""task": {}"#),
        "{message}"
    );

    // A call refused before its handler is answered as the plain call: nothing to poll.
    let invalid =
        ana.request("tools/call", export_task(json!({"action": "export_invoices", "status": "lost"}), json!({}))).await;
    assert_eq!(envelope(&invalid["result"]).code.as_str(), "VALIDATION_ERROR", "{invalid}");
    assert!(invalid["result"].get("task").is_none());

    for (task, found) in [(json!(5), "it is not an object"), (json!({"ttl": "soon"}), "its \"ttl\" is a string")] {
        let refused = ana.request("tools/call", export_task(json!({"action": "export_invoices"}), task)).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert!(refused["error"]["message"].as_str().unwrap().contains(found), "{refused}");
    }
}

#[tokio::test]
async fn the_same_idempotency_key_answers_with_the_same_task() {
    let gate = gate();
    let addr = serve(Arc::clone(&gate)).await;
    let ana = Session::open(addr, "ana-token", false).await;
    let keyed = json!({"action": "export_keyed", "idempotency_key": "export-2025-11"});
    let id = start(&ana, keyed.clone()).await;
    gate.started.acquire().await.unwrap().forget();
    assert_eq!(start(&ana, keyed.clone()).await, id, "nothing runs twice");
    let plain = ana.request("tools/call", json!({"name": "billing", "arguments": keyed})).await;
    let error = envelope(&plain["result"]);
    assert_eq!(error.code.as_str(), "CONFLICT", "{plain}");
    assert!(error.message.contains(&format!("became the task '{id}'")), "{}", error.message);
    gate.release.add_permits(1);
    assert_eq!(ana.request("tasks/result", json!({"taskId": id})).await["result"]["isError"], false);
}

#[tokio::test]
async fn a_session_that_is_not_of_this_form_cannot_reach_its_methods() {
    let addr = serve(gate()).await;
    let declared = Session::open(addr, "ana-token", true).await;
    for method in ["tasks/result", "tasks/list", "fusion/experimental-tasks/tasks/get"] {
        let refused = declared.request(method, json!({"taskId": "x"})).await;
        assert_eq!(refused["error"]["code"], -32601, "{method}: {refused}");
    }
}
