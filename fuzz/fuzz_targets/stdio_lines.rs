//! The stdio line transport under a real server, fed a stream of requests mixed with garbage
//! lines, in chunks cut anywhere.
//!
//! Every request the stream carries (ids `"req-N"`, all distinct) gets exactly one answer
//! under its id; every line the server writes is a JSON-RPC answer with an id key. Garbage is
//! any bytes on a line, except that it may not name a request's id, in words (`req`) or in
//! escapes (`\u`): a garbage line that reuses or cancels a request's id is the client breaking
//! the protocol, and the transport is right to answer it or drop the request.

#![no_main]

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use mcp_fusion::transport::stdio::LineTransport;
use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use mcp_fusion_fuzz::value;
use rmcp::ServiceExt;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[derive(Deserialize, JsonSchema)]
struct Echo {
    /// What to send back.
    text: Option<String>,
}

async fn echo(_ctx: Ctx<()>, input: Echo) -> Result<String, ToolError> {
    Ok(input.text.unwrap_or_default())
}

/// What a request expects back: a result, an error object, or either.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Answer {
    Result,
    Error,
    Any,
}

#[derive(Debug)]
enum Frame {
    Request { line: Vec<u8>, answer: Answer },
    Garbage(Vec<u8>),
}

fn frame(u: &mut Unstructured<'_>, id: &str) -> Result<Frame> {
    let request = |method: &str, params: Option<Value>| {
        let mut request = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(params) = params {
            request["params"] = params;
        }
        request.to_string().into_bytes()
    };
    Ok(match u.int_in_range(0..=5u8)? {
        0 => Frame::Request { line: request("ping", None), answer: Answer::Result },
        1 => Frame::Request { line: request("tools/list", None), answer: Answer::Result },
        2 => {
            let mut arguments = value(u, &["action", "text", "echo"], 1)?;
            if let Value::Object(map) = &mut arguments
                && u.arbitrary()?
            {
                map.insert("action".into(), json!("echo"));
            }
            // Arguments that are no object are invalid params (-32602); `null` may read as none.
            let answer = if arguments.is_object() { Answer::Result } else { Answer::Any };
            let line = request("tools/call", Some(json!({"name": "work", "arguments": arguments})));
            Frame::Request { line, answer }
        }
        3 => {
            let method = format!("x/{}", u.arbitrary::<String>()?);
            Frame::Request { line: request(&method, Some(value(u, &[], 2)?)), answer: Answer::Error }
        }
        _ => {
            let mut line: Vec<u8> = u.arbitrary()?;
            line.retain(|&b| b != b'\n');
            if line.windows(3).any(|w| w.eq_ignore_ascii_case(b"req")) || line.windows(2).any(|w| w == b"\\u") {
                line.clear();
            }
            Frame::Garbage(line)
        }
    })
}

#[derive(Debug)]
struct Input {
    stream: Vec<u8>,
    chunks: Vec<usize>,
    expected: HashMap<String, Answer>,
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let mut stream = Vec::new();
        let mut expected = HashMap::new();
        for n in 0..u.int_in_range(0..=12usize)? {
            let id = format!("req-{n}");
            let ending: &[u8] = if u.arbitrary()? { b"\r\n" } else { b"\n" };
            match frame(u, &id)? {
                Frame::Request { line, answer } => {
                    stream.extend_from_slice(&line);
                    expected.insert(id, answer);
                }
                Frame::Garbage(line) => stream.extend_from_slice(&line),
            }
            stream.extend_from_slice(ending);
        }
        let chunks = u.arbitrary::<Vec<u8>>()?.into_iter().map(|c| usize::from(c) + 1).collect();
        Ok(Input { stream, chunks, expected })
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap())
}

/// Generous: a run is milliseconds, but the machine may be busy.
const PATIENCE: Duration = Duration::from_secs(20);

/// Built once: every run is a new connection to the same server, as on a real one.
fn server() -> &'static FusionServer {
    static SERVER: OnceLock<FusionServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        FusionServer::builder("fuzz", "1")
            .group(Group::new("work", "Work.").action(Action::new("echo", "Echo.").handler(echo)))
            .build(())
            .unwrap()
    })
}

async fn run(input: Input) {
    let server = server().clone();
    let (server_in, mut client_out) = tokio::io::duplex(1 << 16);
    let (server_out, client_in) = tokio::io::duplex(1 << 16);
    let served = tokio::spawn(async move {
        if let Ok(running) = server.serve(LineTransport::new(server_in, server_out)).await {
            let _ = running.waiting().await;
        }
    });
    let mut lines = BufReader::new(client_in).lines();

    let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}}});
    client_out.write_all(format!("{init}\n").as_bytes()).await.unwrap();
    let answer = tokio::time::timeout(PATIENCE, lines.next_line()).await.expect("initialize answered").unwrap();
    assert!(answer.is_some_and(|a| a.contains("\"init\"")), "initialize answered first");
    client_out.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await.unwrap();

    // Written from a task of its own: the server's answers fill the other pipe meanwhile.
    let Input { stream, chunks, expected } = input;
    let writer = tokio::spawn(async move {
        let mut rest = &stream[..];
        let mut sizes = chunks.into_iter().cycle();
        while !rest.is_empty() {
            let size = sizes.next().unwrap_or(rest.len()).min(rest.len());
            if client_out.write_all(&rest[..size]).await.is_err() {
                break;
            }
            rest = &rest[size..];
        }
        let _ = client_out.flush().await;
        client_out
    });

    let mut answers: HashMap<String, Vec<Value>> = HashMap::new();
    // Until every request is answered: closing the input earlier would cancel those in flight.
    tokio::time::timeout(PATIENCE, async {
        while !expected.keys().all(|id| answers.contains_key(id)) {
            match lines.next_line().await.unwrap() {
                Some(line) => check(&line, &expected, &mut answers),
                None => panic!("the server stopped with requests unanswered"),
            }
        }
    })
    .await
    .unwrap_or_else(|_| {
        let missing: Vec<_> = expected.keys().filter(|id| !answers.contains_key(*id)).collect();
        panic!("no answer to {missing:?}")
    });
    drop(writer.await.unwrap());
    // The input is closed: the server stops, and whatever it still writes is checked too.
    tokio::time::timeout(PATIENCE, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            check(&line, &expected, &mut answers);
        }
    })
    .await
    .expect("the server stops when its input ends");
    served.await.unwrap();

    for (id, answer) in &expected {
        let got = &answers[id];
        assert_eq!(got.len(), 1, "{id} answered {} times: {got:?}", got.len());
        if *answer != Answer::Any {
            assert_eq!(got[0].get("result").is_some(), *answer == Answer::Result, "{id}: {}", got[0]);
        }
    }
}

/// Checks one line the server wrote, and files it under its id if it answers a request.
fn check(line: &str, expected: &HashMap<String, Answer>, answers: &mut HashMap<String, Vec<Value>>) {
    let message: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"));
    assert_eq!(message["jsonrpc"], "2.0", "{line}");
    assert!(message.get("id").is_some(), "an answer without an id: {line}");
    assert!(message.get("result").is_some() != message.get("error").is_some(), "{line}");
    if let Some(id) = message["id"].as_str().filter(|id| expected.contains_key(*id)) {
        answers.entry(id.to_owned()).or_default().push(message);
    }
}

fuzz_target!(|input: Input| {
    runtime().block_on(run(input));
});
