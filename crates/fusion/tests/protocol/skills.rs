//! Skills requests rmcp would answer amiss, refused by the framework's own transports before
//! rmcp decodes them, over stdio (raw lines) and HTTP (an rmcp client): a `skills/get` whose
//! URI is no `SKILL.md`'s (rmcp would echo a megabyte URI whole, bidi override included) and
//! a `skills/list` whose cursor is no string (rmcp would answer the first page).

use std::net::SocketAddr;
use std::time::Duration;

use mcp_fusion::FusionServer;
use mcp_fusion::http::{HttpConfig, HttpServer};
use mcp_fusion::skill::Skill;
use mcp_fusion::transport::stdio::LineTransport;
use rmcp::model::{ClientRequest, CustomRequest, ErrorCode, GetSkillRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ErrorData, RoleClient, ServiceExt as _};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream};
use tokio::sync::oneshot;

const SKILL_MD: &str = "skill://git-workflow/SKILL.md";

/// A server of one skill, `git-workflow`.
fn server() -> FusionServer {
    let text = "---\nname: git-workflow\ndescription: Branch and commit.\n---\n# Git workflow\n";
    FusionServer::builder("skills-test", "1").skill(Skill::new("git-workflow", text)).build(()).unwrap()
}

/// A URI of over a megabyte that is no `SKILL.md`'s, with a bidi override and an escape in it.
fn hostile_uri() -> String {
    format!("skill://x\u{202e}\u{1b}[31m{}", "a".repeat(1 << 20))
}

/// The cursors that are there but no string.
fn bad_cursors() -> [(Value, &'static str); 3] {
    [(json!(1), "a number"), (json!([1]), "an array"), (json!({}), "an object")]
}

/// What `skills/list` says of a cursor of `kind`, as `resources/directory/read` says it.
fn cursor_refusal(kind: &str) -> String {
    format!("Invalid params for skills/list: \"cursor\" must be a string, but it is {kind}")
}

/// Asserts `message` is the refusal of [`hostile_uri`]: short, escaped, and saying what to send.
fn assert_bounded_refusal(message: &str) {
    let shown = message.chars().take(300).collect::<String>().escape_debug().to_string();
    assert!(message.chars().count() < 2_000, "{} characters: {shown}", message.chars().count());
    assert!(!message.contains(['\u{202e}', '\u{1b}']), "raw control characters in {shown}");
    assert!(message.starts_with(r"'skill://x\u{202e}\u{1b}[31maaa"), "{message}");
    assert!(message.contains("is not the URI of a SKILL.md"), "{message}");
    assert!(message.ends_with("Call skills/list for the skills this server serves."), "{message}");
}

/// A client writing raw lines to a server on a [`LineTransport`] set up for it.
struct Lines {
    stdin: DuplexStream,
    stdout: BufReader<DuplexStream>,
}

impl Lines {
    async fn start(server: FusionServer) -> Lines {
        let (server_in, stdin) = tokio::io::duplex(1 << 16);
        let (server_out, stdout) = tokio::io::duplex(1 << 16);
        let transport = LineTransport::new(server_in, server_out).for_server(&server);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(transport).await {
                let _ = running.waiting().await;
            }
        });
        Lines { stdin, stdout: BufReader::new(stdout) }
    }

    /// Sends request `id` of `method` with `params`, as a 2026-07-28 client (no handshake, its
    /// version and capabilities in `_meta`), and returns the answer.
    async fn ask(&mut self, id: u64, method: &str, mut params: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.stdin.write_all(format!("{request}\n").as_bytes()).await.unwrap();
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(30), self.stdout.read_line(&mut line))
            .await
            .expect("the server answers")
            .unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["id"], id, "{answer:.300}");
        answer
    }
}

/// The code and message of an error answer.
fn error_of(answer: &Value) -> (i64, &str) {
    let error = &answer["error"];
    let message = error["message"].as_str().unwrap_or_else(|| panic!("an error, not {answer:.300}"));
    (error["code"].as_i64().unwrap(), message)
}

#[tokio::test]
async fn over_stdio_a_skills_get_for_a_uri_that_is_no_skill_md_is_refused_short_and_escaped() {
    let mut lines = Lines::start(server()).await;
    let answer = lines.ask(1, "skills/get", json!({"uri": hostile_uri()})).await;
    let (code, message) = error_of(&answer);
    assert_eq!(code, -32602);
    assert_bounded_refusal(message);
    let got = lines.ask(2, "skills/get", json!({"uri": SKILL_MD})).await;
    assert_eq!(got["result"]["skill"]["uri"], SKILL_MD, "{got}");
}

#[tokio::test]
async fn over_stdio_a_skills_list_with_a_cursor_that_is_no_string_is_refused() {
    let mut lines = Lines::start(server()).await;
    for (id, (cursor, kind)) in (1..).zip(bad_cursors()) {
        let answer = lines.ask(id, "skills/list", json!({"cursor": cursor})).await;
        assert_eq!(error_of(&answer), (-32602, cursor_refusal(kind).as_str()), "{cursor}: {answer:.300}");
    }
    let listed = lines.ask(4, "skills/list", json!({})).await;
    assert_eq!(listed["result"]["skills"][0]["uri"], SKILL_MD, "{listed}");
    let null = lines.ask(5, "skills/list", json!({"cursor": null})).await;
    assert_eq!(null["result"]["skills"], listed["result"]["skills"], "a null cursor is no cursor");
}

#[tokio::test]
async fn over_stdio_a_server_without_skills_leaves_the_skills_methods_to_rmcp() {
    let mut lines = Lines::start(FusionServer::builder("plain", "1").build(()).unwrap()).await;
    let answer = lines.ask(1, "skills/get", json!({"uri": "skill://x"})).await;
    assert_eq!(error_of(&answer).0, -32601, "{answer}");
    let answer = lines.ask(2, "skills/list", json!({"cursor": 1})).await;
    assert_eq!(error_of(&answer).0, -32601, "{answer}");
}

/// An HTTP server of `server`, stopped when dropped.
struct Http {
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

impl Http {
    async fn start(server: FusionServer) -> Http {
        let http = HttpServer::bind(server, HttpConfig::new("127.0.0.1:0")).await.unwrap();
        let addr = http.local_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(http.serve(async move {
            let _ = stopped.await;
        }));
        Http { addr, _stop: stop }
    }
}

/// The JSON-RPC error of a request that failed.
fn rpc_error<T: std::fmt::Debug>(result: Result<T, ServiceError>) -> ErrorData {
    match result {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error, got {:.300}", format!("{other:?}")),
    }
}

/// A 2026-07-28 rmcp client of `http`.
async fn client_of(http: &Http) -> RunningService<RoleClient, ()> {
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{}/mcp", http.addr));
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    ().serve_with_lifecycle(transport, lifecycle).await.unwrap()
}

#[tokio::test]
async fn over_http_a_skills_get_for_a_uri_that_is_no_skill_md_is_refused_short_and_escaped() {
    let http = Http::start(server()).await;
    let client = client_of(&http).await;
    let error = rpc_error(client.get_skill(GetSkillRequestParams::new(hostile_uri())).await);
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_bounded_refusal(&error.message);
    let got = client.get_skill(GetSkillRequestParams::new(SKILL_MD)).await.unwrap();
    assert_eq!(got.skill.uri, SKILL_MD);
}

#[tokio::test]
async fn over_http_a_skills_list_with_a_cursor_that_is_no_string_is_refused() {
    let http = Http::start(server()).await;
    let client = client_of(&http).await;
    for (cursor, kind) in bad_cursors() {
        let asked = ClientRequest::CustomRequest(CustomRequest::new("skills/list", Some(json!({"cursor": cursor}))));
        let error = rpc_error(client.send_request(asked).await);
        assert_eq!((error.code, error.message.as_ref()), (ErrorCode::INVALID_PARAMS, cursor_refusal(kind).as_str()));
    }
    let listed = client.list_skills(None).await.unwrap();
    assert_eq!(listed.skills.iter().map(|skill| skill.uri.as_str()).collect::<Vec<_>>(), [SKILL_MD]);
}
