//! Strict JSON-RPC on the line transport, driven with raw bytes: every request id answered
//! exactly once and echoed as sent, and a client that goes away stops the work it started.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_fusion::transport::stdio::LineTransport;
use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use rmcp::ServiceExt;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::task::JoinHandle;

use crate::support::wait_until;

/// What the handlers saw.
#[derive(Default)]
struct Seen {
    started: AtomicUsize,
    cancelled: AtomicUsize,
}

#[derive(Deserialize, JsonSchema)]
struct Wait {
    /// How long to work, in milliseconds; without it, until cancelled.
    ms: Option<u64>,
}

/// Counts a cancelled call when its handler is dropped, however it ends.
struct Watch(Ctx<Arc<Seen>>);

impl Drop for Watch {
    fn drop(&mut self) {
        if self.0.call().cancellation().is_cancelled() {
            self.0.state().cancelled.fetch_add(1, Ordering::SeqCst);
        }
    }
}

async fn wait(ctx: Ctx<Arc<Seen>>, input: Wait) -> Result<String, ToolError> {
    ctx.state().started.fetch_add(1, Ordering::SeqCst);
    let _watch = Watch(ctx.clone());
    match input.ms {
        Some(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
        None => ctx.call().cancellation().cancelled().await,
    }
    Ok("done".to_owned())
}

/// A client speaking raw lines to a server on a `LineTransport`: stdin and stdout are two
/// pipes, so either can be closed alone.
struct Raw {
    stdout: Option<BufReader<DuplexStream>>,
    stdin: Option<DuplexStream>,
    server: JoinHandle<()>,
    seen: Arc<Seen>,
}

impl Raw {
    async fn start() -> Raw {
        let seen = Arc::new(Seen::default());
        let server = FusionServer::builder("rpc", "1")
            .group(Group::new("work", "Work.").action(Action::new("wait", "Wait.").handler(wait)))
            .build(Arc::clone(&seen))
            .unwrap();
        let (server_in, client_out) = tokio::io::duplex(1 << 16);
        let (server_out, client_in) = tokio::io::duplex(1 << 16);
        let server = tokio::spawn(async move {
            if let Ok(running) = server.serve(LineTransport::new(server_in, server_out)).await {
                let _ = running.waiting().await;
            }
        });
        let mut raw = Raw { stdout: Some(BufReader::new(client_in)), stdin: Some(client_out), server, seen };
        raw.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
            .to_string(),
        )
        .await;
        let init = raw.receive().await;
        assert_eq!(init["id"], 0, "{init}");
        raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
        raw
    }

    async fn send(&mut self, line: impl AsRef<[u8]>) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_ref()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// The next line the server writes, as written.
    async fn receive_text(&mut self) -> String {
        let mut line = String::new();
        let stdout = self.stdout.as_mut().expect("stdout is open");
        tokio::time::timeout(Duration::from_secs(10), stdout.read_line(&mut line))
            .await
            .expect("the server answers")
            .unwrap();
        assert!(line.ends_with('\n'), "a whole line: {line:?}");
        line
    }

    async fn receive(&mut self) -> Value {
        let line = self.receive_text().await;
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Sends a `ping` with `id` and returns every line received up to its answer.
    async fn until_ping(&mut self, id: u64) -> Vec<Value> {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string()).await;
        let mut received = Vec::new();
        loop {
            let message = self.receive().await;
            if message["id"] == id && message.get("result").is_some() {
                return received;
            }
            received.push(message);
        }
    }

    fn call(id: impl std::fmt::Display, arguments: impl std::fmt::Display) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"work","arguments":{arguments}}}}}"#
        )
    }

    async fn wait_started(&self, count: usize) {
        wait_until(|| self.seen.started.load(Ordering::SeqCst) == count).await;
    }
}

/// `(id, code)` of error responses.
fn errors(messages: &[Value]) -> Vec<(Value, i64)> {
    messages
        .iter()
        .map(|m| (m["id"].clone(), m["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error: {m}"))))
        .collect()
}

// On the paused clock the first call's 300 ms pass only while nothing else can run: it is still
// in flight when its duplicate arrives, however busy the machine is.
#[tokio::test(start_paused = true)]
async fn a_duplicate_id_in_flight_is_refused_and_freed_by_the_answer() {
    let mut raw = Raw::start().await;
    raw.send(Raw::call(7, json!({"action": "wait", "ms": 300}))).await;
    raw.wait_started(1).await;
    raw.send(Raw::call(7, json!({"action": "wait", "ms": 0}))).await;
    let refused = raw.receive().await;
    assert_eq!(refused["id"], 7, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(
        refused["error"]["message"],
        "Invalid request: id 7 is already in use by a request in flight; use a new id"
    );
    let first = raw.receive().await;
    assert_eq!(first["id"], 7, "{first}");
    assert_eq!(first["result"]["content"][0]["text"], "done", "{first}");
    assert_eq!(raw.seen.started.load(Ordering::SeqCst), 1, "the duplicate never ran");
    // Answered: the id is free again, and a string id is its own.
    raw.send(Raw::call(7, json!({"action": "wait", "ms": 0}))).await;
    assert_eq!(raw.receive().await["result"]["content"][0]["text"], "done");
    raw.send(Raw::call("\"7\"", json!({"action": "wait", "ms": 0}))).await;
    assert_eq!(raw.receive().await["id"], "7");
}

/// Found by the `stdio_lines` fuzz target: a line of ASCII whitespace that JSON does not
/// count as blank (a form feed) indexed past the line's end, and the panic took the
/// connection down.
#[tokio::test]
async fn a_line_of_other_ascii_whitespace_is_ignored() {
    let mut raw = Raw::start().await;
    raw.send(b"\x0c").await;
    raw.send(b" \x0c\t\x0b").await;
    assert!(raw.until_ping(1).await.is_empty());
}

#[tokio::test]
async fn every_line_with_an_id_is_answered_once() {
    let mut raw = Raw::start().await;
    raw.send(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\xfe\"}}").await;
    raw.send(Raw::call(2, json!({"action": "wait", "note": "\\ud800"})).replace("\\\\ud800", "\\ud800")).await;
    raw.send(r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#).await;
    raw.send(r#"{"jsonrpc":"2.0","id":true,"method":"tools/list"}"#).await;
    raw.send(r#"[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":"4","method":"ping"}]"#).await;
    raw.send(r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#).await;
    raw.send(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}{"jsonrpc":"2.0","id":6,"method":"ping"}"#).await;
    raw.send(r#"{"jsonrpc":"2.0","id":8}"#).await;
    raw.send(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"#).await;
    // No id, or a response: never answered.
    raw.send("not json at all").await;
    raw.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\",\"x\":\"\xff\"}").await;
    raw.send(b"{\"jsonrpc\":\"2.0\",\"id\":10,\"result\":{\"x\":\"\xff\"}}").await;
    let received = raw.until_ping(100).await;
    assert_eq!(
        errors(&received),
        [
            (json!(1), -32700),
            (json!(2), -32700),
            (Value::Null, -32600),
            (Value::Null, -32600),
            (json!(3), -32600),
            (json!("4"), -32600),
            (Value::Null, -32600),
            (json!(5), -32700),
            (json!(6), -32700),
            (json!(8), -32600),
            (json!(9), -32700),
        ],
        "{received:#?}"
    );
    assert!(received[1]["error"]["message"].as_str().unwrap().starts_with("Parse error: "), "{}", received[1]);
    assert_eq!(
        received[4]["error"]["message"],
        "Invalid request: batches (JSON arrays) are not supported; send each message on its own line"
    );
    assert_eq!(
        received[7]["error"]["message"],
        "Parse error: the line holds more than one JSON value; send one message per line"
    );
    assert_eq!(raw.seen.started.load(Ordering::SeqCst), 0, "nothing refused ran");
}

#[tokio::test]
async fn ids_come_back_exactly_as_sent() {
    let mut raw = Raw::start().await;
    for (n, id) in ["18446744073709551616", "9223372036854775808", "-9223372036854775809", "1e400", "1.0", "-0", "7"]
        .into_iter()
        .enumerate()
    {
        let expected = format!(r#"{{"jsonrpc":"2.0","id":{id},"#);
        raw.send(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#)).await;
        let pong = raw.receive_text().await;
        assert!(pong.starts_with(&expected) && pong.contains(r#""result":{}"#), "{id}: {pong}");
        raw.send(Raw::call(id, json!({"action": "wait", "ms": 0}))).await;
        let done = raw.receive_text().await;
        assert!(done.starts_with(&expected) && done.contains(r#""text":"done""#), "{id}: {done}");
        // Undecodable: refused under the id as written.
        raw.send(format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\",\"x\":\"\\ud800\"}}")).await;
        let refused = raw.receive_text().await;
        assert!(refused.starts_with(&expected) && refused.contains("-32700"), "{id}: {refused}");
        assert_eq!(raw.seen.started.load(Ordering::SeqCst), n + 1);
    }
    // A big id in flight is cancelled by that same number, and then free again.
    let big = "18446744073709551616";
    raw.send(Raw::call(big, json!({"action": "wait"}))).await;
    raw.wait_started(8).await;
    raw.send(Raw::call(big, json!({"action": "wait", "ms": 0}))).await;
    let refused = raw.receive_text().await;
    assert!(refused.contains(&format!("id {big} is already in use")), "{refused}");
    raw.send(format!(r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{big}}}}}"#)).await;
    wait_until(|| raw.seen.cancelled.load(Ordering::SeqCst) == 1).await;
    raw.send(Raw::call(big, json!({"action": "wait", "ms": 0}))).await;
    let done = raw.receive_text().await;
    assert!(done.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{big},"#)) && done.contains("done"), "{done}");
}

#[tokio::test]
async fn a_line_too_long_is_refused_under_its_id() {
    let mut raw = Raw::start().await;
    let line = Raw::call("\"long\"", format!(r#"{{"action":"wait","text":"{}"}}"#, "x".repeat(64 << 20)));
    // The client writes while the server answers: both ends of the pipes move.
    let stdin = raw.stdin.take().unwrap();
    let writer = tokio::spawn(async move {
        let mut stdin = stdin;
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin
    });
    let refused = raw.receive().await;
    assert_eq!(
        refused,
        json!({"jsonrpc": "2.0", "id": "long", "error": {"code": -32600,
            "message": "Invalid request: the message is longer than 67108864 bytes"}})
    );
    raw.stdin = Some(writer.await.unwrap());
    assert!(raw.until_ping(1).await.is_empty());
    assert_eq!(raw.seen.started.load(Ordering::SeqCst), 0);
}

/// Counts the error events logged while it is the default subscriber.
#[derive(Clone, Default)]
struct ErrorCount(Arc<AtomicUsize>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for ErrorCount {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if *event.metadata().level() == tracing::Level::ERROR {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

// On the paused clock the last sleep ends only once every task is idle: a call the stopped
// server still took would have started by then. rmcp's wait for the handlers of a closed
// connection passes without taking real time.
#[tokio::test(start_paused = true)]
async fn a_closed_output_stops_the_server_and_cancels_the_calls_in_flight() {
    use tracing_subscriber::layer::SubscriberExt as _;
    let errors = ErrorCount::default();
    let _logging = tracing::subscriber::set_default(tracing_subscriber::registry().with(errors.clone()));
    let mut raw = Raw::start().await;
    for id in 1..=20 {
        raw.send(Raw::call(id, json!({"action": "wait"}))).await;
    }
    raw.wait_started(20).await;
    drop(raw.stdout.take());
    // The server learns that nobody reads when it next writes.
    raw.send(json!({"jsonrpc": "2.0", "id": 21, "method": "ping"}).to_string()).await;
    wait_until(|| raw.seen.cancelled.load(Ordering::SeqCst) == 20).await;
    tokio::time::timeout(Duration::from_secs(30), &mut raw.server).await.expect("the server stops").unwrap();
    assert!(errors.0.load(Ordering::SeqCst) <= 1, "{} error lines", errors.0.load(Ordering::SeqCst));
    // Nothing more is started.
    let _ = raw
        .stdin
        .as_mut()
        .unwrap()
        .write_all(format!("{}\n", Raw::call(22, json!({"action": "wait"}))).as_bytes())
        .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(raw.seen.started.load(Ordering::SeqCst), 20);
}

#[tokio::test]
async fn the_input_ending_stops_the_server_and_cancels_the_calls_in_flight() {
    let mut raw = Raw::start().await;
    for id in 1..=20 {
        raw.send(Raw::call(id, json!({"action": "wait"}))).await;
    }
    raw.wait_started(20).await;
    drop(raw.stdin.take());
    wait_until(|| raw.seen.cancelled.load(Ordering::SeqCst) == 20).await;
    tokio::time::timeout(Duration::from_secs(30), &mut raw.server).await.expect("the server stops").unwrap();
    // Cancelled requests get no answer: the output just ends.
    let mut rest = String::new();
    tokio::io::AsyncReadExt::read_to_string(raw.stdout.as_mut().unwrap(), &mut rest).await.unwrap();
    assert_eq!(rest, "");
}

/// A client that pipelines far more requests than the cap: the transport stops reading at the
/// cap, so no more than that many run at once, and every request is still answered. On the
/// paused clock, so that the first calls' 20 ms cannot pass before the third has started.
#[tokio::test(start_paused = true)]
async fn reading_pauses_at_the_cap_of_requests_in_flight() {
    let seen = Arc::new(Seen::default());
    let running = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (counting, peak) = (Arc::clone(&running), Arc::clone(&most));
    let action = Action::new("wait", "Wait.").handler(move |ctx: Ctx<Arc<Seen>>, input: Wait| {
        let (running, most) = (Arc::clone(&counting), Arc::clone(&peak));
        async move {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            let answer = wait(ctx, input).await;
            running.fetch_sub(1, Ordering::SeqCst);
            answer
        }
    });
    let server = FusionServer::builder("rpc", "1")
        .group(Group::new("work", "Work.").action(action))
        .build(Arc::clone(&seen))
        .unwrap();
    let (server_in, client_out) = tokio::io::duplex(1 << 20);
    let (server_out, client_in) = tokio::io::duplex(1 << 20);
    let serving = tokio::spawn(async move {
        let transport = LineTransport::new(server_in, server_out).max_in_flight(3);
        if let Ok(running) = server.serve(transport).await {
            let _ = running.waiting().await;
        }
    });
    let mut raw = Raw { stdout: Some(BufReader::new(client_in)), stdin: Some(client_out), server: serving, seen };
    raw.send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
        .to_string(),
    )
    .await;
    raw.receive().await;
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    for id in 1..=30 {
        raw.send(Raw::call(id, json!({"action": "wait", "ms": 20}))).await;
    }
    let mut answered = std::collections::BTreeSet::new();
    for _ in 1..=30 {
        let answer = raw.receive().await;
        assert_eq!(answer["result"]["content"][0]["text"], "done", "{answer}");
        answered.insert(answer["id"].as_u64().unwrap());
    }
    assert_eq!(answered, (1..=30).collect());
    assert_eq!(most.load(Ordering::SeqCst), 3, "at most 3 ran at once, and the cap was reached");
}
