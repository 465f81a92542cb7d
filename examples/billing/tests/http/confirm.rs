//! `void_invoice`'s confirmation of a large invoice: raw MCP 2026-07-28 JSON-RPC over HTTP (the
//! question as an input-required result with a sealed `requestState`), and real rmcp clients on
//! 2026-07-28 (which answer it in a second round) and on a 2025-11-25 session (where it is an
//! `elicitation/create` request on the connection).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use billing_server::{Options, Store, server};
use mcp_fusion::http::{HttpConfig, HttpServer};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    Implementation, ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Map, Value, json};

/// Invoice 3: 9900.00 BRL, open; its void asks the user.
const LARGE: &str = "inv_2026_0003";
/// Invoice 6: 150.00 BRL, open; its void does not ask.
const SMALL: &str = "inv_2026_0006";

/// The server over HTTP on a loopback port, on a fresh SQLite file in `dir`.
async fn serve(dir: &Path, options: &Options) -> SocketAddr {
    let server = server(Store::open(&dir.join("billing.db")).unwrap(), options).unwrap();
    let http = HttpServer::bind(server, HttpConfig::new("127.0.0.1:0")).await.unwrap();
    let addr = http.local_addr();
    tokio::spawn(http.serve(std::future::pending()));
    addr
}

/// The `_meta` of a 2026-07-28 request from a client with `capabilities`.
fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    })
}

/// The params of a `billing` call with `arguments`, from a client with `capabilities`.
fn billing(arguments: Value, capabilities: Value) -> Map<String, Value> {
    json!({"name": "billing", "arguments": arguments, "_meta": meta(capabilities)}).as_object().cloned().unwrap()
}

fn void(id: &str) -> Value {
    json!({"action": "void_invoice", "id": id, "reason": "Issued twice"})
}

/// Posts one 2026-07-28 request; the HTTP status and the JSON-RPC answer (the last message).
async fn post(addr: SocketAddr, method: &str, params: Map<String, Value>) -> (u16, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", "billing")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, crate::support::last_message(&response.text().await.unwrap()))
}

/// The invoice's status, read through the server.
async fn status(addr: SocketAddr, id: &str) -> String {
    let (_, read) = post(addr, "tools/call", billing(json!({"action": "get_invoice", "id": id}), json!({}))).await;
    read["result"]["structuredContent"]["status"].as_str().unwrap().to_owned()
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"].as_str().unwrap()
}

/// The first round of a large void from a client that can show forms: the question, and the
/// sealed state.
async fn asked(addr: SocketAddr) -> (Value, String) {
    let (status, answer) = post(addr, "tools/call", billing(void(LARGE), json!({"elicitation": {}}))).await;
    assert_eq!(status, 200);
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    let state = result["requestState"].as_str().expect("a requestState").to_owned();
    (result["inputRequests"].clone(), state)
}

/// The second round: the same call with `answer` under `confirm_void` and `state`.
async fn answered(addr: SocketAddr, answer: Value, state: &str) -> (u16, Value) {
    let mut params = billing(void(LARGE), json!({"elicitation": {}}));
    params.insert("inputResponses".into(), json!({"confirm_void": answer}));
    params.insert("requestState".into(), json!(state));
    post(addr, "tools/call", params).await
}

#[tokio::test]
async fn a_large_void_asks_the_user_and_voids_once_they_confirm() {
    let dir = tempfile::tempdir().unwrap();
    let addr = serve(dir.path(), &Options::default()).await;
    let (questions, state) = asked(addr).await;
    assert_eq!(
        questions,
        json!({"confirm_void": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Void invoice inv_2026_0003 of 9900.00 BRL billed to bruno@example.com.br for good? Reason given: 'Issued twice'",
                "requestedSchema": {
                    "type": "object",
                    "title": "ConfirmVoid",
                    "description": "The form `void_invoice` shows the user before it voids a large invoice.",
                    "properties": {"confirm": {"type": "boolean", "description": "Tick to void the invoice for good."}},
                    "required": ["confirm"]
                }
            }
        }})
    );
    assert_eq!(status(addr, LARGE).await, "open", "a round that asks writes nothing");

    let (_, done) = answered(addr, json!({"action": "accept", "content": {"confirm": true}}), &state).await;
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(done["result"]["structuredContent"]["status"], "void");
    assert_eq!(status(addr, LARGE).await, "void");
}

#[tokio::test]
async fn a_declined_or_unticked_confirmation_voids_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let addr = serve(dir.path(), &Options::default()).await;
    for answer in [json!({"action": "decline"}), json!({"action": "accept", "content": {"confirm": false}})] {
        let (_, state) = asked(addr).await;
        let (_, refused) = answered(addr, answer, &state).await;
        assert_eq!(refused["result"]["isError"], true);
        assert_eq!(
            text(&refused),
            r#"<tool_error code="ELICITATION_DECLINED" severity="error">
<message>The user declined the question of billing.void_invoice; nothing was done.</message>
<recovery>Tell the user it was not done; call billing.void_invoice again only if they ask for it.</recovery>
<details>
  <detail key="invoice_id">inv_2026_0003</detail>
</details>
</tool_error>"#
        );
    }
    let (_, state) = asked(addr).await;
    let (_, dismissed) = answered(addr, json!({"action": "cancel"}), &state).await;
    assert_eq!(
        text(&dismissed),
        r#"<tool_error code="ELICITATION_CANCELLED" severity="error">
<message>The user dismissed the question of billing.void_invoice without answering; nothing was done.</message>
<recovery>Ask the user whether to go on; call billing.void_invoice again only if they say so.</recovery>
<details>
  <detail key="invoice_id">inv_2026_0003</detail>
</details>
</tool_error>"#
    );
    assert_eq!(status(addr, LARGE).await, "open");
}

#[tokio::test]
async fn a_state_changed_by_one_byte_or_sent_with_another_call_is_refused_and_nothing_is_voided() {
    let dir = tempfile::tempdir().unwrap();
    let addr = serve(dir.path(), &Options::default()).await;
    let (_, state) = asked(addr).await;
    let mut bytes = state.into_bytes();
    let middle = bytes.len() / 2;
    bytes[middle] = if bytes[middle] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(bytes).unwrap();
    let (status_code, refused) =
        answered(addr, json!({"action": "accept", "content": {"confirm": true}}), &tampered).await;
    assert_eq!(status_code, 200);
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(
        refused["error"]["message"],
        "Invalid params: requestState failed its integrity check (request state failed integrity verification); it is not a state this server sealed, or it was changed after. Nothing was done. Send the requestState exactly as the server returned it, or call billing.void_invoice again without requestState and inputResponses to start over."
    );
    assert_eq!(status(addr, LARGE).await, "open");

    // A genuine state, with other arguments: another reason.
    let (_, state) = asked(addr).await;
    let mut params = billing(
        json!({"action": "void_invoice", "id": LARGE, "reason": "Changed my mind"}),
        json!({"elicitation": {}}),
    );
    params.insert("inputResponses".into(), json!({"confirm_void": {"action": "accept", "content": {"confirm": true}}}));
    params.insert("requestState".into(), json!(state));
    let (_, foreign) = post(addr, "tools/call", params).await;
    assert_eq!(
        foreign["error"]["message"],
        "Invalid params: this requestState was issued for a call of other arguments, not this call of billing.void_invoice. Nothing was done. Send a requestState only with the request it came with (same action, same arguments), or call billing.void_invoice again without requestState and inputResponses to start over."
    );
    assert_eq!(status(addr, LARGE).await, "open");
}

#[tokio::test]
async fn an_answer_after_the_state_expired_voids_nothing_and_says_to_ask_again() {
    let dir = tempfile::tempdir().unwrap();
    // Every state expires as it is sealed.
    let options = Options { request_state_ttl: Some(Duration::ZERO), ..Options::default() };
    let addr = serve(dir.path(), &options).await;
    let (_, state) = asked(addr).await;
    let (_, expired) = answered(addr, json!({"action": "accept", "content": {"confirm": true}}), &state).await;
    assert_eq!(expired["result"]["isError"], true);
    assert_eq!(
        text(&expired),
        r#"<tool_error code="INPUT_EXPIRED" severity="error">
<message>The answers to billing.void_invoice's questions came after they expired (answers are taken for 0 s after the question); nothing was done.</message>
<recovery>Call billing.void_invoice again with the same arguments: the question is asked again.</recovery>
<available_actions>
  <action>billing.void_invoice</action>
</available_actions>
</tool_error>"#
    );
    assert_eq!(status(addr, LARGE).await, "open");
}

#[tokio::test]
async fn a_client_without_elicitation_is_told_to_ask_the_user_and_a_small_void_never_asks() {
    let dir = tempfile::tempdir().unwrap();
    let addr = serve(dir.path(), &Options::default()).await;
    let (_, unsupported) = post(addr, "tools/call", billing(void(LARGE), json!({}))).await;
    assert_eq!(unsupported["result"]["isError"], true, "{unsupported}");
    assert_eq!(
        text(&unsupported),
        r#"<tool_error code="ELICITATION_UNSUPPORTED" severity="error">
<message>billing.void_invoice must ask the user "Void invoice inv_2026_0003 of 9900.00 BRL billed to bruno@example.com.br for good? Reason given: 'Issued twice'" before it goes on, and this client cannot show a form (form elicitation): it declared no such elicitation capability. Nothing was done.</message>
<recovery>Ask the user yourself: "Void invoice inv_2026_0003 of 9900.00 BRL billed to bruno@example.com.br for good? Reason given: 'Issued twice'". Their answer must reach the server through the client, not through you: if they want it done, they need a client that supports elicitation; then call billing.void_invoice again.</recovery>
<details>
  <detail key="form_fields">confirm</detail>
</details>
</tool_error>"#
    );
    assert_eq!(status(addr, LARGE).await, "open");

    let (_, small) = post(addr, "tools/call", billing(void(SMALL), json!({}))).await;
    assert_eq!(small["result"]["structuredContent"]["status"], "void", "{small}");
}

/// An rmcp client that shows forms and answers every one with `content`, recording the
/// questions.
#[derive(Clone)]
struct Confirming {
    content: Value,
    asked: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Confirming {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities = serde_json::from_value(json!({"elicitation": {}})).unwrap();
        ClientConfig::new(capabilities, Implementation::new("confirming", "1"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.asked.lock().unwrap().push(message);
        }
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(self.content.clone()))
    }
}

/// Voids the large invoice through an rmcp client over stdio-like pipes, on `lifecycle`.
async fn void_through_rmcp(lifecycle: Option<ClientLifecycleMode>) -> (Value, Vec<String>, String) {
    let dir = tempfile::tempdir().unwrap();
    let server = server(Store::open(&dir.path().join("billing.db")).unwrap(), &Options::default()).unwrap();
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let handler = Confirming { content: json!({"confirm": true}), asked: Arc::default() };
    let asked = Arc::clone(&handler.asked);
    let client = match lifecycle {
        Some(lifecycle) => handler.serve_with_lifecycle(client_io, lifecycle).await.unwrap(),
        None => handler.serve(client_io).await.unwrap(),
    };
    let arguments = void(LARGE).as_object().cloned().unwrap();
    let result = client.call_tool(CallToolRequestParams::new("billing").with_arguments(arguments)).await.unwrap();
    let read = json!({"action": "get_invoice", "id": LARGE}).as_object().cloned().unwrap();
    let read = client.call_tool(CallToolRequestParams::new("billing").with_arguments(read)).await.unwrap();
    let status = read.structured_content.unwrap()["status"].as_str().unwrap().to_owned();
    let asked = asked.lock().unwrap().clone();
    (serde_json::to_value(result.structured_content).unwrap(), asked, status)
}

#[tokio::test]
async fn an_rmcp_client_confirms_in_a_second_round_on_2026_07_28_and_over_the_connection_on_a_session() {
    let question = "Void invoice inv_2026_0003 of 9900.00 BRL billed to bruno@example.com.br for good? Reason given: 'Issued twice'";
    let discover = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    for lifecycle in [Some(discover), None] {
        let (voided, asked, status) = void_through_rmcp(lifecycle).await;
        assert_eq!(voided["status"], "void");
        assert_eq!(asked, [question], "asked once");
        assert_eq!(status, "void");
    }
}

#[tokio::test]
async fn an_answer_that_does_not_fit_the_form_is_a_validation_error_and_voids_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let addr = serve(dir.path(), &Options::default()).await;
    let (_, state) = asked(addr).await;
    let (_, unfit) = answered(addr, json!({"action": "accept", "content": {"confirm": "yes"}}), &state).await;
    assert_eq!(unfit["result"]["isError"], true, "{unfit}");
    assert_eq!(
        text(&unfit),
        r#"<tool_error code="VALIDATION_ERROR" severity="error">
<message>The user's answer to the form of billing.void_invoice does not fit it; nothing was done. confirm: Invalid type. You sent: 'yes'. Expected a boolean: tick to void the invoice for good.</message>
<recovery>Call billing.void_invoice again with the same arguments: the user is asked again.</recovery>
</tool_error>"#
    );
    let (_, state) = asked(addr).await;
    let (_, malformed) = answered(addr, json!(12345), &state).await;
    assert_eq!(malformed["error"]["code"], -32602, "{malformed}");
    assert_eq!(
        malformed["error"]["message"],
        r#"Invalid params: inputResponses['confirm_void'] is a number, not an elicitation result ({"action": "accept", "content": {…}}). Nothing was done. Send an elicitation result ({"action": "accept", "content": {…}}) under that key, or call billing.void_invoice again without inputResponses to be asked again."#
    );
    assert_eq!(status(addr, LARGE).await, "open");
}

#[tokio::test]
async fn an_idempotency_key_spans_the_rounds_and_a_replay_neither_asks_nor_voids_twice() {
    let dir = tempfile::tempdir().unwrap();
    let addr = serve(dir.path(), &Options::default()).await;
    let keyed = json!({"action": "void_invoice", "id": LARGE, "reason": "Issued twice", "idempotency_key": "void-3"});
    let elicit = json!({"elicitation": {}});
    let (_, first) = post(addr, "tools/call", billing(keyed.clone(), elicit.clone())).await;
    assert_eq!(first["result"]["resultType"], "input_required", "the round that asks frees the key: {first}");
    let mut params = billing(keyed.clone(), elicit.clone());
    params.insert("inputResponses".into(), json!({"confirm_void": {"action": "accept", "content": {"confirm": true}}}));
    params.insert("requestState".into(), first["result"]["requestState"].clone());
    let (_, done) = post(addr, "tools/call", params).await;
    assert_eq!(done["result"]["structuredContent"]["status"], "void", "{done}");
    // The same key again, as a client retrying after a lost answer: the first result, not a
    // question (the invoice is void now) and not a second write.
    let (_, replay) = post(addr, "tools/call", billing(keyed, elicit)).await;
    assert_eq!(replay["result"]["structuredContent"], done["result"]["structuredContent"], "{replay}");
}
