//! The gateway in front of real upstreams it starts or dials: `billing-server` over stdio and
//! over Streamable HTTP, and a server of this framework reporting progress and waiting to be
//! cancelled. What a model sees through the gateway is checked against what the upstream
//! says directly.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_fusion::handoff::Mount;
use mcp_fusion::http::{HttpConfig, HttpServer};
use mcp_fusion::wire::{EnvelopeKind, ErrorCode, Severity, ToolError};
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use mcp_fusion_gateway::{Backoff, Gateway, Upstream};
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, RequestMetaObject};
use rmcp::service::PeerRequestOptions;
use rmcp::transport::TokioChildProcess;
use rmcp::{ServiceExt as _, model::CallToolResult};
use serde_json::json;
use support::*;
use tokio::io::AsyncBufReadExt as _;

/// `server` served over Streamable HTTP on a free port: its URL, and the token that stops it.
async fn serve_http(server: FusionServer) -> (String, tokio_util::sync::CancellationToken) {
    let http = HttpServer::bind(server, HttpConfig::new("127.0.0.1:0")).await.unwrap();
    let url = format!("http://{}/mcp", http.local_addr());
    let stop = tokio_util::sync::CancellationToken::new();
    tokio::spawn(http.serve(stop.clone().cancelled_owned()));
    (url, stop)
}

fn gateway() -> FusionServer {
    FusionServer::builder::<()>("gateway-test", "1").build(()).unwrap()
}

/// A backoff with a first wait long enough to see an upstream unavailable, and short enough
/// to see it come back.
fn backoff(initial_ms: u64) -> Backoff {
    Backoff { initial: Duration::from_millis(initial_ms), max: Duration::from_secs(5), jitter: 0.0 }
}

#[tokio::test]
async fn a_stdio_upstream_answers_through_the_gateway_as_it_answers_directly() {
    let dir = tempfile::tempdir().unwrap();
    let billing = billing_server();
    let db = |name: &str| dir.path().join(name).display().to_string();
    let server = gateway();
    let running = Gateway::new()
        .mount(Mount::new("demo"), Upstream::stdio(billing.display().to_string(), ["--db", &db("via.db")]))
        .start(&server);
    let client = connect(&server, Seen::default()).await;
    let mut direct_command = tokio::process::Command::new(&billing);
    direct_command.args(["--db", &db("direct.db")]).stderr(std::process::Stdio::null());
    let direct = ().serve(TokioChildProcess::new(direct_command).unwrap()).await.unwrap();
    listed(&client, "demo.billing").await;

    // The tool, its schema, description and annotations as the upstream lists it.
    let upstream_tool = direct.list_all_tools().await.unwrap().remove(0);
    let mounted = client.list_all_tools().await.unwrap().into_iter().find(|t| t.name == "demo.billing").unwrap();
    assert_eq!(mounted.input_schema, upstream_tool.input_schema);
    assert_eq!(mounted.output_schema, upstream_tool.output_schema);
    assert_eq!((&mounted.description, &mounted.annotations), (&upstream_tool.description, &upstream_tool.annotations));

    // A success byte for byte; the upstream's envelope byte for byte but for its actions'
    // names, which it says as the gateway serves them.
    for arguments in [json!({"action": "list_invoices"}), json!({"action": "get_invoice", "id": "inv_nope"})] {
        let through = call(&client, "demo.billing", arguments.clone()).await;
        let straight = direct
            .call_tool(CallToolRequestParams::new("billing").with_arguments(arguments.as_object().cloned().unwrap()))
            .await
            .unwrap();
        let expected =
            serde_json::to_string(&straight).unwrap().replace("billing.list_invoices", "demo.billing.list_invoices");
        assert_eq!(serde_json::to_string(&through).unwrap(), expected);
    }
    let not_found = call(&client, "demo.billing", json!({"action": "get_invoice", "id": "inv_nope"})).await;
    assert_eq!((not_found.is_error, envelope(&not_found).error.code.clone()), (Some(true), ErrorCode::NotFound));
    assert_eq!(envelope(&not_found).error.available_actions, ["demo.billing.list_invoices"]);

    // A bad argument is told by the gateway, from the upstream's schema, naming the action as
    // the gateway serves it.
    let bad = call(&client, "demo.billing", json!({"action": "get_invoice", "id": 42})).await;
    let bad_envelope = envelope(&bad);
    assert_eq!(bad_envelope.kind, EnvelopeKind::ValidationError);
    assert_eq!(bad_envelope.action.as_deref(), Some("demo.billing.get_invoice"));
    assert!(text(&bad).contains("You sent: 42. Expected a string"), "{}", text(&bad));

    // Unknown namespaces and tools, with a did-you-mean.
    let nowhere = envelope(&call(&client, "crm.search", json!({})).await);
    assert_eq!(nowhere.error.code, ErrorCode::HandoffNamespaceMismatch);
    assert!(nowhere.error.available_actions.contains(&"demo.billing".to_owned()));
    let typo = envelope(&call(&client, "demo.biling", json!({})).await);
    assert_eq!(typo.error.code, ErrorCode::HandoffNamespaceMismatch);
    assert!(typo.error.recovery.as_deref().unwrap().contains("\"demo.billing\""), "{typo:?}");

    direct.cancel().await.unwrap();
    running.shutdown().await;
}

#[tokio::test]
async fn a_killed_stdio_upstream_is_unavailable_then_restarted_and_announced() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let db = dir.path().join("billing.db");
    let (command, args) =
        with_pid_file(&pid_file, &format!("'{}' --db '{}'", billing_server().display(), db.display()));
    let server = gateway();
    let running =
        Gateway::new().backoff(backoff(3_000)).mount(Mount::new("demo"), Upstream::stdio(command, args)).start(&server);
    let seen = Seen::default();
    let client = connect(&server, seen.clone()).await;
    listed(&client, "demo.billing").await;
    let first = read_pid(&pid_file).await;
    std::fs::remove_file(&pid_file).unwrap();
    let announced = seen.tools_changed.load(Ordering::SeqCst);

    kill(first);
    // Down: every call says so, with the seconds until the next attempt, and nothing hangs.
    let down = eventually("HANDOFF_UPSTREAM_UNAVAILABLE", Duration::from_secs(10), || async {
        let result = call(&client, "demo.billing", json!({"action": "list_invoices"})).await;
        let envelope = envelope(&result);
        (envelope.error.code == ErrorCode::HandoffUpstreamUnavailable).then_some((result, envelope))
    })
    .await;
    assert_eq!(down.0.is_error, Some(true));
    assert!(matches!(down.1.error.retry_after, Some(1..=3)), "{:?}", down.1.error);
    assert!(!tool_names(&client).await.contains(&"demo.billing".to_owned()), "a down upstream lists no tools");

    // Back after the restart: a new process, the tools listed again, the client told.
    listed(&client, "demo.billing").await;
    let second = read_pid(&pid_file).await;
    assert_ne!(first, second);
    let back = call(&client, "demo.billing", json!({"action": "list_invoices"})).await;
    assert_eq!(back.is_error, Some(false), "{}", text(&back));
    eventually("gone and back announced", Duration::from_secs(5), || async {
        (seen.tools_changed.load(Ordering::SeqCst) >= announced + 2).then_some(())
    })
    .await;

    running.shutdown().await;
    assert!(!alive(second), "the child outlived the gateway");
}

#[tokio::test]
async fn a_restart_replaces_the_child_at_once_without_a_backoff() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let db = dir.path().join("billing.db");
    let (command, args) =
        with_pid_file(&pid_file, &format!("'{}' --db '{}'", billing_server().display(), db.display()));
    let server = gateway();
    // A backoff of a minute: a child back within the test's limit came back by the restart.
    let running = Gateway::new()
        .backoff(backoff(60_000))
        .mount(Mount::new("demo"), Upstream::stdio(command, args))
        .start(&server);
    let client = connect(&server, Seen::default()).await;
    listed(&client, "demo.billing").await;
    let first = read_pid(&pid_file).await;
    std::fs::remove_file(&pid_file).unwrap();

    assert!(!running.restart("nowhere"), "no mount has that namespace");
    assert!(running.restart("demo"));
    let second = read_pid(&pid_file).await;
    assert_ne!(first, second);
    eventually("the first child to end", Duration::from_secs(10), || async { (!alive(first)).then_some(()) }).await;
    eventually("calls served by the new child", Duration::from_secs(20), || async {
        let result = call(&client, "demo.billing", json!({"action": "list_invoices"})).await;
        (result.is_error == Some(false) && !text(&result).starts_with("<tool_error")).then_some(())
    })
    .await;

    running.shutdown().await;
    assert!(!alive(second), "the child outlived the gateway");
}

#[tokio::test]
async fn a_slow_upstream_is_connecting_as_a_warning_and_never_holds_up_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let billing = billing_server().display().to_string();
    let slow_db = dir.path().join("slow.db").display().to_string();
    let fast_db = dir.path().join("fast.db").display().to_string();
    // The slow one starts once the test has seen it connecting (or after 60 s, should the test
    // fail first), and the gateway waits as long for it.
    let gate = dir.path().join("start-slow");
    let slow = format!(
        "i=0; while [ ! -e '{}' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; exec '{billing}' --db '{slow_db}'",
        gate.display()
    );
    let server = gateway();
    let running = Gateway::new()
        .connect_timeout(Duration::from_secs(60))
        .mount(Mount::new("slow"), Upstream::stdio("sh", ["-c", &slow]))
        .mount(Mount::new("fast"), Upstream::stdio(&billing, ["--db", &fast_db]))
        .start(&server);
    let client = connect(&server, Seen::default()).await;

    let connecting = call(&client, "slow.billing", json!({"action": "list_invoices"})).await;
    assert_eq!(connecting.is_error, Some(false), "connecting is a warning, not an error");
    let warning = envelope(&connecting);
    assert_eq!(
        (&warning.error.code, &warning.error.severity, warning.error.retry_after),
        (&ErrorCode::HandoffConnecting, &Severity::Warning, Some(2))
    );
    listed(&client, "fast.billing").await;
    let fast = call(&client, "fast.billing", json!({"action": "list_invoices"})).await;
    assert_eq!(fast.is_error, Some(false));
    assert_eq!(
        envelope(&call(&client, "slow.billing", json!({"action": "list_invoices"})).await).error.code,
        ErrorCode::HandoffConnecting,
        "the slow one is still starting while the fast one answers"
    );
    std::fs::write(&gate, "").unwrap();
    listed(&client, "slow.billing").await;
    assert_eq!(call(&client, "slow.billing", json!({"action": "list_invoices"})).await.is_error, Some(false));
    running.shutdown().await;
}

/// `billing-server --http` on `addr`, with its URL read from its stderr.
async fn billing_over_http(db: &std::path::Path, addr: &str, token: &str) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(billing_server())
        .args(["--db", &db.display().to_string(), "--http", addr])
        .env("BILLING_TOKEN", token)
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next_line().await.unwrap().expect("billing-server exited before listening");
        // `… INFO billing-server: listening on http://ADDR/mcp addr=ADDR`
        if let Some((_, after)) = line.split_once("billing-server: listening on ") {
            break after.split_whitespace().next().unwrap_or_default().to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

#[tokio::test]
async fn an_http_upstream_is_dialled_with_its_token_and_redialled_when_it_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("billing.db");
    let (mut upstream, url) = billing_over_http(&db, "127.0.0.1:0", "s3cret").await;
    let server = gateway();
    let running = Gateway::new()
        .backoff(backoff(1_000))
        .keepalive(Duration::from_millis(200))
        .mount(Mount::new("demo"), Upstream::http(&url).token("s3cret"))
        .mount(Mount::new("stranger"), Upstream::http(&url).token("wrong"))
        .start(&server);
    let seen = Seen::default();
    let client = connect(&server, seen.clone()).await;
    listed(&client, "demo.billing").await;
    let ok = call(&client, "demo.billing", json!({"action": "list_invoices"})).await;
    assert_eq!(ok.is_error, Some(false), "{}", text(&ok));
    // The token reaches the upstream: a wrong one is refused at the handshake (401), which the
    // gateway says in words, naming the token.
    let refused = eventually("the refused mount said so", Duration::from_secs(10), || async {
        let refused = envelope(&call(&client, "stranger.billing", json!({"action": "list_invoices"})).await);
        (refused.error.code == ErrorCode::HandoffUpstreamUnavailable).then_some(refused)
    })
    .await;
    assert!(refused.error.message.contains("refused the gateway's credentials"), "{refused:?}");

    let announced = seen.tools_changed.load(Ordering::SeqCst);
    upstream.kill().await.unwrap();
    // Found out by the keepalive ping, without a call: its tools are withdrawn, and said so.
    eventually("the tools of the dead upstream withdrawn", Duration::from_secs(10), || async {
        (!tool_names(&client).await.contains(&"demo.billing".to_owned())).then_some(())
    })
    .await;
    let down = eventually("HANDOFF_UPSTREAM_UNAVAILABLE", Duration::from_secs(15), || async {
        let envelope = envelope(&call(&client, "demo.billing", json!({"action": "list_invoices"})).await);
        (envelope.error.code == ErrorCode::HandoffUpstreamUnavailable).then_some(envelope)
    })
    .await;
    assert!(matches!(down.error.retry_after, Some(1..=30)), "{down:?}");
    assert!(down.error.message.starts_with("Upstream \"demo\""), "{down:?}");

    let port = url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    let (_again, _) = billing_over_http(&db, &port, "s3cret").await;
    listed(&client, "demo.billing").await;
    eventually("gone and back announced", Duration::from_secs(5), || async {
        (seen.tools_changed.load(Ordering::SeqCst) >= announced + 2).then_some(())
    })
    .await;
    let back = call(&client, "demo.billing", json!({"action": "list_invoices"})).await;
    assert_eq!(back.is_error, Some(false), "{}", text(&back));
    running.shutdown().await;
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Steps {
    steps: u32,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

struct Upstate {
    started: AtomicBool,
    cancelled: AtomicBool,
}

async fn count(ctx: Ctx<Upstate>, input: Steps) -> Result<String, ToolError> {
    for step in 1..=input.steps {
        ctx.progress(f64::from(step), Some(f64::from(input.steps)), Some(format!("step {step}"))).await;
    }
    Ok(format!("counted to {}", input.steps))
}

async fn hang(ctx: Ctx<Upstate>, _input: Nothing) -> Result<String, ToolError> {
    ctx.state().started.store(true, Ordering::SeqCst);
    ctx.call().cancellation().cancelled().await;
    ctx.state().cancelled.store(true, Ordering::SeqCst);
    Ok("cancelled".into())
}

#[tokio::test]
async fn progress_comes_back_and_cancellation_goes_on_to_the_upstream() {
    let state = Arc::new(Upstate { started: AtomicBool::new(false), cancelled: AtomicBool::new(false) });
    let upstream = FusionServer::builder("work-upstream", "1")
        .group(
            Group::new("work", "Slow work.")
                .action(Action::new("count", "Counts with progress.").handler(count))
                .action(Action::new("hang", "Waits until cancelled.").handler(hang)),
        )
        .build(Arc::clone(&state))
        .unwrap();
    let (url, stop) = serve_http(upstream).await;

    let server = gateway();
    let running = Gateway::new().mount(Mount::new("up"), Upstream::http(&url)).start(&server);
    let seen = Seen::default();
    let client = connect(&server, seen.clone()).await;
    listed(&client, "up.work").await;

    let mut params = CallToolRequestParams::new("up.work")
        .with_arguments(json!({"action": "count", "steps": 3}).as_object().cloned().unwrap());
    let mut meta = RequestMetaObject::default();
    meta.set_progress_token(rmcp::model::ProgressToken(rmcp::model::NumberOrString::Number(7)));
    params.meta = Some(meta);
    let counted: CallToolResult = client.call_tool(params).await.unwrap();
    assert_eq!(text(&counted), "counted to 3");
    let progress = eventually("three progress notifications", Duration::from_secs(5), || async {
        let progress = seen.progress.lock().unwrap().clone();
        (progress.len() == 3).then_some(progress)
    })
    .await;
    assert_eq!(progress[2], (3.0, Some(3.0), Some("step 3".into())));

    let hang = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("up.work").with_arguments(json!({"action": "hang"}).as_object().cloned().unwrap()),
    ));
    let handle = client.send_request_with_option(hang, PeerRequestOptions::no_options()).await.unwrap();
    eventually("the call to reach the upstream's handler", Duration::from_secs(30), || async {
        state.started.load(Ordering::SeqCst).then_some(())
    })
    .await;
    assert!(!state.cancelled.load(Ordering::SeqCst));
    handle.cancel(Some("the user changed their mind".into())).await.unwrap();
    eventually("the upstream's handler to see the cancellation", Duration::from_secs(5), || async {
        state.cancelled.load(Ordering::SeqCst).then_some(())
    })
    .await;
    running.shutdown().await;
    stop.cancel();
}

#[tokio::test]
async fn shutdown_ends_every_child() {
    let dir = tempfile::tempdir().unwrap();
    let billing = billing_server().display().to_string();
    let server = gateway();
    let mut gateway = Gateway::new();
    let mut pid_files = Vec::new();
    for namespace in ["a", "b", "c"] {
        let pid_file = dir.path().join(format!("{namespace}.pid"));
        let db = dir.path().join(format!("{namespace}.db"));
        let (command, args) = with_pid_file(&pid_file, &format!("'{billing}' --db '{}'", db.display()));
        gateway = gateway.mount(Mount::new(namespace), Upstream::stdio(command, args));
        pid_files.push(pid_file);
    }
    // An upstream that leaves something of its own running: it ends with its group.
    let straggler_file = dir.path().join("straggler.pid");
    let db = dir.path().join("d.db");
    let launcher =
        format!("sleep 60 & echo $! > '{}'; exec '{billing}' --db '{}'", straggler_file.display(), db.display());
    gateway = gateway.mount(Mount::new("d"), Upstream::stdio("sh", ["-c", launcher.as_str()]));
    let running = gateway.start(&server);
    running.settled().await;
    let mut pids = Vec::new();
    for pid_file in pid_files.iter().chain([&straggler_file]) {
        pids.push(read_pid(pid_file).await);
    }
    assert!(pids.iter().all(|pid| alive(*pid)));
    running.shutdown().await;
    // A signal takes a moment to land: the group is killed by the time shutdown returns, but
    // its last member may not be gone yet.
    eventually("every child and what it left behind to end", Duration::from_secs(5), || async {
        pids.iter().all(|pid| !alive(*pid)).then_some(())
    })
    .await;
}

async fn noop(_ctx: Ctx<()>, _input: mcp_fusion::NoInput) -> Result<String, ToolError> {
    Ok("done".into())
}

#[tokio::test]
async fn a_gateway_with_1000_mounted_tools_answers_an_unknown_one_within_the_envelope_budget() {
    let mut group = Group::new("crm", "A thousand tools.").exposition(mcp_fusion::Exposition::flat());
    for i in 0..1_000 {
        group = group.action(Action::new(format!("lookup_{i:04}"), format!("Looks up record set {i}.")).handler(noop));
    }
    let upstream = FusionServer::builder::<()>("crm-upstream", "1").group(group).build(()).unwrap();
    let (url, stop) = serve_http(upstream).await;

    let server = gateway();
    let running = Gateway::new().mount(Mount::new("up"), Upstream::http(&url)).start(&server);
    let client = connect(&server, Seen::default()).await;
    listed(&client, "up.crm_lookup_0999").await;
    assert_eq!(tool_names(&client).await.len(), 1_000);

    let result = call(&client, "up.crm_lokup_0042", json!({})).await;
    let answer = text(&result);
    assert!(
        answer.chars().count() <= mcp_fusion::wire::DEFAULT_ENVELOPE_BUDGET,
        "{} characters",
        answer.chars().count()
    );
    let envelope = envelope(&result);
    assert_eq!(envelope.kind, EnvelopeKind::ToolError);
    assert_eq!(envelope.error.code, ErrorCode::HandoffNamespaceMismatch);
    assert_eq!(envelope.error.message, "Upstream \"up\" has no tool 'crm_lokup_0042'.");
    let recovery = envelope.error.recovery.as_deref().unwrap_or_default();
    assert!(recovery.starts_with("Did you mean \"up.crm_lookup_0042\""), "{recovery}");
    let shown = envelope.error.available_actions.len();
    assert!((100..1_000).contains(&shown), "{shown} tools named");
    let more = format!("{} more: tools/list lists them all.", 1_000 - shown);
    assert_eq!(envelope.error.find_detail("more_actions"), Some(more.as_str()));
    running.shutdown().await;
    stop.cancel();
}

/// An upstream action that writes at once, then answers when the test lets it.
struct Writes {
    written: std::sync::atomic::AtomicUsize,
    release: tokio::sync::Semaphore,
}

async fn write(ctx: Ctx<Writes>, _input: Nothing) -> Result<String, ToolError> {
    if !ctx.call().commit_gate().try_commit() {
        return Err(ToolError::new(ErrorCode::Conflict, "answered before it could write"));
    }
    ctx.state().written.fetch_add(1, Ordering::SeqCst);
    ctx.state().release.acquire().await.expect("the semaphore stays open").forget();
    Ok("written".into())
}

/// A gateway in front of an HTTP upstream whose `work.write` writes, then waits.
async fn gateway_before_writes()
-> (FusionServer, Arc<Writes>, mcp_fusion_gateway::Running, tokio_util::sync::CancellationToken) {
    let state = Arc::new(Writes { written: Default::default(), release: tokio::sync::Semaphore::new(0) });
    let upstream = FusionServer::builder("writes-upstream", "1")
        .group(Group::new("work", "Writes.").action(Action::new("write", "Writes, then answers.").handler(write)))
        .build(Arc::clone(&state))
        .unwrap();
    let (url, stop) = serve_http(upstream).await;
    let server = gateway();
    let running = Gateway::new().mount(Mount::new("up"), Upstream::http(&url)).start(&server);
    let client = connect(&server, Seen::default()).await;
    listed(&client, "up.work").await;
    (server, state, running, stop)
}

/// The `call finished` lines of `action` in `logs`, by outcome.
fn outcomes(logs: &Logs, action: &str) -> Vec<String> {
    let action = format!("action={action:?}");
    let action_plain = action.replace('"', "");
    logs.text()
        .lines()
        .filter(|line| line.contains("call finished") && (line.contains(&action) || line.contains(&action_plain)))
        .filter_map(|line| {
            line.split("outcome=").nth(1)?.split_whitespace().next().map(|o| o.trim_matches('"').to_owned())
        })
        .collect()
}

/// A client that goes away (its stdin closed) while the upstream has its calls: they finish,
/// and each is logged as the upstream ended it, never `CANCELLED` over a write.
#[tokio::test]
async fn calls_in_flight_when_the_client_goes_finish_and_are_logged_as_they_ended() {
    use mcp_fusion::transport::stdio::LineTransport;
    use tokio::io::AsyncWriteExt as _;
    let (logs, _logging) = Logs::capture();
    let (server, state, running, stop) = gateway_before_writes().await;

    let (client_side, server_side) = tokio::io::duplex(1 << 16);
    let (server_reads, server_writes) = tokio::io::split(server_side);
    let serving = server.clone();
    let served = tokio::spawn(async move {
        let running = serving.serve(LineTransport::new(server_reads, server_writes)).await.unwrap();
        let _ = running.waiting().await;
    });
    let (client_reads, mut client_writes) = tokio::io::split(client_side);
    let mut answers = tokio::io::BufReader::new(client_reads).lines();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "leaves", "version": "1"}}});
    client_writes.write_all(format!("{initialize}\n").as_bytes()).await.unwrap();
    answers.next_line().await.unwrap().expect("initialized");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let mut lines = format!("{initialized}\n");
    for id in 1..=3 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "up.work", "arguments": {"action": "write"}}});
        lines.push_str(&format!("{call}\n"));
    }
    client_writes.write_all(lines.as_bytes()).await.unwrap();
    eventually("three writes upstream", Duration::from_secs(30), || async {
        (state.written.load(Ordering::SeqCst) == 3).then_some(())
    })
    .await;

    // The client goes. rmcp waits for the calls' answers a while, then ends the connection.
    drop(client_writes);
    drop(answers);
    served.await.unwrap();
    state.release.add_permits(3);
    server.idle().await;

    assert_eq!(outcomes(&logs, "up.work"), ["ok", "ok", "ok"], "{}", logs.text());
    assert_eq!(state.written.load(Ordering::SeqCst), 3);
    running.shutdown().await;
    stop.cancel();
}

/// A call the client cancels once the upstream has it: the upstream is told, and a call whose
/// upstream does not answer is logged `CANCELLED_IN_FLIGHT` (it may have written), never
/// `CANCELLED` (nothing was written).
#[tokio::test]
async fn a_call_cancelled_once_the_upstream_has_it_is_not_logged_as_cancelled_whole() {
    let (logs, _logging) = Logs::capture();
    let (server, state, running, stop) = gateway_before_writes().await;
    let client = connect(&server, Seen::default()).await;
    let write = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("up.work").with_arguments(json!({"action": "write"}).as_object().cloned().unwrap()),
    ));
    let handle = client.send_request_with_option(write, PeerRequestOptions::no_options()).await.unwrap();
    eventually("the write upstream", Duration::from_secs(30), || async {
        (state.written.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;
    handle.cancel(Some("the user changed their mind".into())).await.unwrap();
    let logged = eventually("the call's outcome logged", Duration::from_secs(30), || async {
        let logged = outcomes(&logs, "up.work");
        (!logged.is_empty()).then_some(logged)
    })
    .await;
    assert_eq!(logged, ["CANCELLED_IN_FLIGHT"], "{}", logs.text());
    state.release.add_permits(1);
    running.shutdown().await;
    stop.cancel();
}

/// An HTTP API whose `PUT /items/{id}` writes at once, then answers when the test lets it.
async fn api_that_writes(state: Arc<Writes>) -> (String, tokio_util::sync::CancellationToken) {
    async fn put(
        axum::extract::State(state): axum::extract::State<Arc<Writes>>,
    ) -> ([(axum::http::HeaderName, &'static str); 1], &'static str) {
        state.written.fetch_add(1, Ordering::SeqCst);
        state.release.acquire().await.expect("the semaphore stays open").forget();
        ([(axum::http::header::CONTENT_TYPE, "application/json")], r#"{"written": true}"#)
    }
    let app = axum::Router::new().route("/items/{id}", axum::routing::put(put)).with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let stop = tokio_util::sync::CancellationToken::new();
    let stopped = stop.clone();
    tokio::spawn(async move {
        axum::serve(listener, app).with_graceful_shutdown(stopped.cancelled_owned()).await.unwrap();
    });
    (url, stop)
}

/// A write to an OpenAPI mount the client cancels once it was sent: HTTP cannot take it back,
/// so the API's answer, when it comes in time, is the outcome logged; without one the call is
/// `CANCELLED_IN_FLIGHT`, never `CANCELLED`.
#[tokio::test]
async fn a_cancelled_write_to_an_http_api_is_logged_as_the_api_ended_it() {
    let (logs, _logging) = Logs::capture();
    let state = Arc::new(Writes { written: Default::default(), release: tokio::sync::Semaphore::new(0) });
    let (url, stop) = api_that_writes(Arc::clone(&state)).await;
    let dir = tempfile::tempdir().unwrap();
    let document = dir.path().join("items.json");
    let paths = json!({"openapi": "3.1.0", "paths": {"/items/{id}": {"put": {"operationId": "put_item",
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}]}}}});
    std::fs::write(&document, paths.to_string()).unwrap();
    let server = gateway();
    let upstream = Upstream::openapi(document.display().to_string()).base_url(&url);
    let running = Gateway::new().mount(Mount::new("api"), upstream).start(&server);
    let client = connect(&server, Seen::default()).await;
    listed(&client, "api.put_item").await;

    let put = || {
        ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new("api.put_item").with_arguments(json!({"id": "7"}).as_object().cloned().unwrap()),
        ))
    };
    // Answered just after the cancellation: the write is logged as done.
    let handle = client.send_request_with_option(put(), PeerRequestOptions::no_options()).await.unwrap();
    eventually("the first write", Duration::from_secs(30), || async {
        (state.written.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;
    handle.cancel(None).await.unwrap();
    state.release.add_permits(1);
    let logged = eventually("the first outcome", Duration::from_secs(30), || async {
        let logged = outcomes(&logs, "api.put_item");
        (!logged.is_empty()).then_some(logged)
    })
    .await;
    assert_eq!(logged, ["ok"], "{}", logs.text());

    // Not answered: its effect is unknown, and said so.
    let handle = client.send_request_with_option(put(), PeerRequestOptions::no_options()).await.unwrap();
    eventually("the second write", Duration::from_secs(30), || async {
        (state.written.load(Ordering::SeqCst) == 2).then_some(())
    })
    .await;
    handle.cancel(None).await.unwrap();
    let logged = eventually("the second outcome", Duration::from_secs(30), || async {
        let logged = outcomes(&logs, "api.put_item");
        (logged.len() == 2).then_some(logged)
    })
    .await;
    assert_eq!(logged, ["ok", "CANCELLED_IN_FLIGHT"], "{}", logs.text());
    state.release.add_permits(1);
    running.shutdown().await;
    stop.cancel();
}

/// What an HTTP API received: each request's method, path and query, `Content-Type` and body.
type Received = Arc<std::sync::Mutex<Vec<(String, String, String, String)>>>;

/// An HTTP API that records every request and answers `{"ok": true}`.
async fn api_that_records(received: Received) -> (String, tokio_util::sync::CancellationToken) {
    async fn record(
        axum::extract::State(received): axum::extract::State<Received>,
        request: axum::extract::Request,
    ) -> ([(axum::http::HeaderName, &'static str); 1], &'static str) {
        let (parts, body) = request.into_parts();
        let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
        let media = parts.headers.get("content-type").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
        received.lock().unwrap().push((
            parts.method.to_string(),
            parts.uri.to_string(),
            media,
            String::from_utf8_lossy(&bytes).into_owned(),
        ));
        ([(axum::http::header::CONTENT_TYPE, "application/json")], r#"{"ok": true}"#)
    }
    let app = axum::Router::new().fallback(record).with_state(received);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let stop = tokio_util::sync::CancellationToken::new();
    let stopped = stop.clone();
    tokio::spawn(async move {
        axum::serve(listener, app).with_graceful_shutdown(stopped.cancelled_owned()).await.unwrap();
    });
    (url, stop)
}

/// A document as vendors publish it: an operation the tools cannot carry is left out with a
/// warning and the rest served; a call valid by the document (Xero's `name` beside `Name`)
/// passes the gateway's checks and arrives as it was made; a form body (Stripe's) arrives as
/// form fields; a parameter named twice (SendGrid's `list_id`) arrives by its own name.
#[tokio::test]
async fn an_http_api_is_served_as_its_document_says() {
    let (logs, _logging) = Logs::capture();
    let received = Received::default();
    let (url, stop) = api_that_records(Arc::clone(&received)).await;
    let dir = tempfile::tempdir().unwrap();
    let document = dir.path().join("vendor.json");
    let paths = json!({"openapi": "3.0.3", "paths": {
        "/session": {"get": {"operationId": "whoAmI", "parameters": [{"name": "sid", "in": "cookie", "required": true}]}},
        "/Folders": {"put": {"operationId": "createFolder", "requestBody": {"required": true, "content": {"application/json": {
            "schema": {"type": "object", "required": ["name"], "properties": {"Name": {"type": "string"}}}}}}}},
        "/v1/charges": {"post": {"operationId": "PostCharges", "requestBody": {"content": {"application/x-www-form-urlencoded": {
            "schema": {"type": "object", "properties": {"amount": {"type": "integer"}, "metadata": {"type": "object"}}}}}}}},
        "/lists/{list_id}": {"delete": {"operationId": "DeleteList", "parameters": [
            {"name": "list_id", "in": "path", "required": true, "schema": {"type": "string"}},
            {"name": "list_id", "in": "query", "schema": {"type": "string"}}]}},
    }});
    std::fs::write(&document, paths.to_string()).unwrap();
    let server = gateway();
    let running = Gateway::new()
        .mount(Mount::new("api"), Upstream::openapi(document.display().to_string()).base_url(&url))
        .start(&server);
    let client = connect(&server, Seen::default()).await;
    listed(&client, "api.createFolder").await;
    let mut names = tool_names(&client).await;
    names.retain(|name| name.starts_with("api."));
    names.sort();
    assert_eq!(names, ["api.DeleteList", "api.PostCharges", "api.createFolder"]);
    assert!(
        logs.text().contains("GET /session is left out: /paths/~1session/get/parameters/0/in: a cookie parameter is not supported; a tool sends no cookies"),
        "{}",
        logs.text()
    );

    let folder = call(&client, "api.createFolder", json!({"body": {"name": "Receipts"}})).await;
    assert_ne!(folder.is_error, Some(true), "{}", text(&folder));
    let charge = call(&client, "api.PostCharges", json!({"body": {"amount": 2000, "metadata": {"order": "7"}}})).await;
    assert_ne!(charge.is_error, Some(true), "{}", text(&charge));
    let deleted = call(&client, "api.DeleteList", json!({"list_id": "a", "query_list_id": "b"})).await;
    assert_ne!(deleted.is_error, Some(true), "{}", text(&deleted));
    let received = received.lock().unwrap().clone();
    assert_eq!(
        received,
        [
            ("PUT".into(), "/Folders".into(), "application/json".into(), r#"{"name":"Receipts"}"#.into()),
            (
                "POST".into(),
                "/v1/charges".into(),
                "application/x-www-form-urlencoded".into(),
                "amount=2000&metadata[order]=7".into()
            ),
            ("DELETE".into(), "/lists/a?list_id=b".into(), String::new(), String::new()),
        ]
    );
    running.shutdown().await;
    stop.cancel();
}
