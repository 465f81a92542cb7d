//! Scopes over HTTP: the lists each caller is shown, the step-up `403` for a call its token
//! does not cover (or, configured, the in-band `FORBIDDEN`), and the whole server still what
//! contracts describe.

use std::net::SocketAddr;

use mcp_fusion::auth::{Identity, StaticTokens};
use mcp_fusion::http::{HttpConfig, HttpServer, ProtectedResource, ScopeRefusal};
use mcp_fusion::prompt::Prompt;
use mcp_fusion::resource::Resource;
use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

async fn done(_ctx: Ctx<()>, _input: Nothing) -> Result<String, ToolError> {
    Ok("done".into())
}

async fn read(_ctx: Ctx<()>) -> Result<String, ToolError> {
    Ok("read".into())
}

fn server() -> FusionServer {
    FusionServer::builder("scoped", "1")
        .group(
            Group::new("billing", "Invoices.")
                .action(Action::new("list_invoices", "List them.").read_only().scope("billing:read").handler(done))
                .action(Action::new("pay_invoice", "Pay one.").scope("billing:write").handler(done))
                .action(Action::new("void_invoice", "Void one.").destructive().scope("billing:write").handler(done)),
        )
        .group(
            Group::new("admin", "Only for admins.").action(Action::new("purge", "Purge.").scope("admin").handler(done)),
        )
        .group(Group::new("public", "For anyone.").action(Action::new("ping", "Ping.").handler(done)))
        .resource(Resource::new("billing://summary", "summary").scope("billing:read").handler(read))
        .resource(Resource::new("billing://audit", "audit").scope("admin").handler(read))
        .prompt(Prompt::new("dunning", "A letter.").scope("billing:read").handler(done))
        .build(())
        .unwrap()
}

fn tokens() -> StaticTokens {
    StaticTokens::new()
        .token("reader", Identity::new("ana").scopes(["billing:read"]))
        .token("writer", Identity::new("bob").scopes(["billing:read", "billing:write"]))
        .token("nobody", Identity::new("eve"))
}

struct Running {
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

impl Running {
    async fn start(config: HttpConfig) -> Running {
        let http = HttpServer::bind(server(), config.stateless(true)).await.unwrap();
        let addr = http.local_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(http.serve(async move {
            let _ = stopped.await;
        }));
        Running { addr, _stop: stop }
    }

    async fn post(&self, token: &str, method: &str, params: Value) -> (u16, Option<String>, Value) {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let response = reqwest::Client::new()
            .post(format!("http://{}/mcp", self.addr))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .bearer_auth(token)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let challenge = response.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_owned());
        let text = response.text().await.unwrap();
        (status, challenge, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    async fn list(&self, token: &str, method: &str, field: &str) -> Vec<String> {
        let (status, _, body) = self.post(token, method, json!({})).await;
        assert_eq!(status, 200, "{body}");
        let items = body["result"][field].as_array().unwrap_or_else(|| panic!("{body}"));
        let key = if field == "resourceTemplates" {
            "uriTemplate"
        } else if field == "resources" {
            "uri"
        } else {
            "name"
        };
        items.iter().map(|item| item[key].as_str().unwrap().to_owned()).collect()
    }

    async fn tools(&self, token: &str) -> Value {
        let (status, _, body) = self.post(token, "tools/list", json!({})).await;
        assert_eq!(status, 200, "{body}");
        body["result"]["tools"].clone()
    }
}

fn config() -> HttpConfig {
    let resource = ProtectedResource::new("http://127.0.0.1/mcp")
        .and_then(|resource| resource.authorization_server("https://id.example.com"))
        .unwrap();
    HttpConfig::new("127.0.0.1:0").authenticator(tokens()).protected_resource(resource)
}

fn names(tools: &Value) -> Vec<&str> {
    tools.as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect()
}

fn actions<'t>(tools: &'t Value, tool: &str) -> Vec<&'t str> {
    let tool = tools.as_array().unwrap().iter().find(|t| t["name"] == tool).unwrap();
    tool["inputSchema"]["properties"]["action"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn each_caller_is_shown_what_its_scopes_let_it_use() {
    let running = Running::start(config()).await;
    let reader = running.tools("reader").await;
    assert_eq!(names(&reader), ["billing", "public"], "a group none of whose actions it may call is left out");
    assert_eq!(actions(&reader, "billing"), ["list_invoices"]);
    let description = reader[0]["description"].as_str().unwrap();
    assert!(!description.contains("pay_invoice") && !description.contains("Destructive"), "{description}");
    let writer = running.tools("writer").await;
    assert_eq!(actions(&writer, "billing"), ["list_invoices", "pay_invoice", "void_invoice"]);
    assert_eq!(names(&running.tools("nobody").await), ["public"]);
    // The same caller again is answered from what was made for its scopes.
    assert_eq!(running.tools("reader").await, reader);

    assert_eq!(running.list("reader", "resources/list", "resources").await, ["billing://summary"]);
    assert!(running.list("nobody", "resources/list", "resources").await.is_empty());
    assert_eq!(running.list("reader", "prompts/list", "prompts").await, ["dunning"]);
    assert!(running.list("nobody", "prompts/list", "prompts").await.is_empty());

    // Contracts describe the whole server, whoever asks the builder.
    let all: Vec<String> = server().tools().iter().map(|tool| tool.name.to_string()).collect();
    assert_eq!(all, ["billing", "admin", "public"]);
    let everything = Running::start(config().lists_per_caller(false)).await;
    assert_eq!(names(&everything.tools("reader").await), ["billing", "admin", "public"]);
    assert_eq!(
        Value::Array(server().tools().iter().map(|t| serde_json::to_value(t).unwrap()).collect()),
        everything.tools("nobody").await
    );
}

#[tokio::test]
async fn a_call_the_token_does_not_cover_asks_the_client_to_step_up() {
    let running = Running::start(config()).await;
    let metadata = r#"resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp""#;
    let pay = json!({"name": "billing", "arguments": {"action": "pay_invoice"}});
    let (status, challenge, body) = running.post("reader", "tools/call", pay.clone()).await;
    assert_eq!(status, 403, "{body}");
    let challenge = challenge.unwrap();
    assert!(challenge.starts_with(r#"Bearer error="insufficient_scope", scope="billing:write""#), "{challenge}");
    assert!(challenge.ends_with(metadata), "{challenge}");
    for (method, params) in [
        ("resources/read", json!({"uri": "billing://audit"})),
        ("tools/call", json!({"name": "admin", "arguments": {"action": "purge"}})),
    ] {
        let (status, challenge, _) = running.post("writer", method, params).await;
        assert_eq!(status, 403);
        assert!(challenge.unwrap().contains(r#"scope="admin""#));
    }
    let (status, challenge, _) = running.post("nobody", "prompts/get", json!({"name": "dunning"})).await;
    assert_eq!((status, challenge.unwrap().contains(r#"scope="billing:read""#)), (403, true));
    // What the token covers runs; what names nothing served fails as it would anyway.
    let (status, _, body) = running.post("writer", "tools/call", pay).await;
    assert_eq!((status, body["result"]["content"][0]["text"].as_str()), (200, Some("done")), "{body}");
    let (status, _, body) =
        running.post("reader", "tools/call", json!({"name": "billing", "arguments": {"action": "nope"}})).await;
    assert_eq!(status, 200);
    assert!(body["result"]["content"][0]["text"].as_str().unwrap().contains("UNKNOWN_ACTION"), "{body}");
    for garbage in
        [json!({"name": 5}), json!({"name": "billing", "arguments": {"action": ["pay_invoice"]}}), json!(null)]
    {
        let (status, _, _) = running.post("reader", "tools/call", garbage).await;
        assert_ne!(status, 403);
    }
}

#[tokio::test]
async fn in_band_the_model_hears_which_permission_is_missing() {
    let running = Running::start(config().scope_refusal(ScopeRefusal::InBand)).await;
    let (status, challenge, body) =
        running.post("reader", "tools/call", json!({"name": "billing", "arguments": {"action": "pay_invoice"}})).await;
    assert_eq!((status, challenge), (200, None));
    assert_eq!(body["result"]["isError"], true);
    let text = body["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("FORBIDDEN") && text.contains("billing:write"), "{text}");
}
