//! Tasks over HTTP as raw JSON-RPC on MCP 2025-11-25 sessions whose client declared the tasks
//! extension at `initialize`: handles polled with `tasks/get`; a task is its creator's,
//! whichever of its sessions asks. (A session that did not declare it speaks that version's
//! experimental tasks: `tasks_experimental.rs`.)

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::mcp_2026::messages;
use super::tasks::{gate, serve};

/// One session of one caller, opened with `initialize` on 2025-11-25.
#[derive(Clone)]
pub(super) struct Session {
    addr: SocketAddr,
    token: &'static str,
    pub(super) id: String,
    /// The answer to its `initialize`.
    pub(super) initialized: Value,
}

impl Session {
    /// Opens a session for `token`, declaring the tasks extension if `tasks`.
    pub(super) async fn open(addr: SocketAddr, token: &'static str, tasks: bool) -> Session {
        let capabilities = if tasks { json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}) } else { json!({}) };
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "raw-2025", "version": "0"}}});
        let response = post(addr, token, None, &initialize).await;
        assert_eq!(response.status(), 200);
        let id = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let answer = messages(&response.text().await.unwrap());
        assert_eq!(answer[0]["result"]["protocolVersion"], "2025-11-25", "{answer:?}");
        let ready = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(post(addr, token, Some(&id), &ready).await.status(), 202);
        Session { addr, token, id, initialized: answer[0].clone() }
    }

    /// The answer to `method` with `params` in this session.
    pub(super) async fn request(&self, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": params});
        let response = post(self.addr, self.token, Some(&self.id), &body).await;
        assert_eq!(response.status(), 200);
        messages(&response.text().await.unwrap()).pop().expect("an answer")
    }

    async fn export(&self, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": "billing", "arguments": arguments})).await
    }

    async fn get(&self, id: &str) -> Value {
        self.request("tasks/get", json!({"taskId": id})).await
    }

    /// Polls the task until it leaves `working`, for at most ten seconds.
    async fn settled(&self, id: &str) -> Value {
        tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                let task = self.get(id).await;
                if task["result"]["status"] != "working" {
                    return task["result"].clone();
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("the task settles")
    }
}

async fn post(addr: SocketAddr, token: &str, session: Option<&str>, body: &Value) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .bearer_auth(token);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.body(body.to_string()).send().await.unwrap()
}

#[tokio::test]
async fn a_session_that_declared_the_extension_gets_a_handle_and_polls_it_to_the_result() {
    let gate = gate();
    let addr = serve(Arc::clone(&gate)).await;
    let ana = Session::open(addr, "ana-token", true).await;
    let created = ana.export(json!({"action": "export_invoices", "status": "paid"})).await;
    let task = &created["result"];
    assert_eq!((&task["resultType"], &task["status"]), (&json!("task"), &json!("working")), "{created}");
    assert_eq!(task["pollIntervalMs"], 1_000);
    let id = task["taskId"].as_str().unwrap().to_owned();
    // The handle came while the handler waits.
    gate.started.acquire().await.unwrap().forget();
    assert_eq!(ana.get(&id).await["result"]["status"], "working");

    gate.release.add_permits(1);
    let done = ana.settled(&id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "exported inv_1,inv_2 (paid)");

    // The same caller in another session reads it: a task is its creator's, not its session's.
    let again = Session::open(addr, "ana-token", true).await;
    assert_eq!(again.get(&id).await["result"]["status"], "completed");
}

#[tokio::test]
async fn a_cancelled_task_reads_cancelled_and_an_unknown_id_is_refused_with_what_to_do() {
    let gate = gate();
    let addr = serve(Arc::clone(&gate)).await;
    let ana = Session::open(addr, "ana-token", true).await;
    let created = ana.export(json!({"action": "export_invoices"})).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    gate.started.acquire().await.unwrap().forget();
    let ack = ana.request("tasks/cancel", json!({"taskId": id})).await;
    assert!(ack["result"].is_object() && ack.get("error").is_none(), "{ack}");
    let done = ana.settled(&id).await;
    assert_eq!(done["status"], "cancelled", "{done}");
    assert_eq!(gate.release.available_permits(), 0, "the work stopped by its token, not by finishing");

    let unknown = ana.get("no-such-task").await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let message = unknown["error"]["message"].as_str().unwrap();
    assert!(message.contains("no task 'no-such-task' of yours is known here"), "{message}");
    assert!(message.contains("call the action that started it again"), "{message}");
}

#[tokio::test]
async fn another_callers_task_id_is_refused_in_their_session() {
    let gate = gate();
    let addr = serve(Arc::clone(&gate)).await;
    let ana = Session::open(addr, "ana-token", true).await;
    let bo = Session::open(addr, "bo-token", true).await;
    let created = ana.export(json!({"action": "export_invoices"})).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    for method in ["tasks/get", "tasks/cancel"] {
        let refused = bo.request(method, json!({"taskId": id})).await;
        assert_eq!(refused["error"]["code"], -32602, "{method}: {refused}");
        assert!(refused["error"]["message"].as_str().unwrap().contains("of yours is known here"));
    }
    gate.release.add_permits(1);
    assert_eq!(ana.settled(&id).await["status"], "completed", "Bo's cancel stopped nothing");
}
