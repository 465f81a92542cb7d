//! Garbage at the protocol edge: raw JSON-RPC frames written to the server's stdio-like pipe.
//! Every request is answered — with an envelope, or with a clean JSON-RPC error for a frame
//! that is not a valid request — and the server keeps serving.

use std::time::Duration;

use mcp_fusion::transport::stdio::LineTransport;
use mcp_fusion::wire::{EnvelopeKind, parse};
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use rmcp::ServiceExt;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

#[derive(Deserialize, JsonSchema)]
struct Note {
    #[schemars(length(max = 100))]
    text: String,
}

async fn note(_ctx: Ctx<()>, input: Note) -> Result<String, mcp_fusion::wire::ToolError> {
    Ok(format!("{} characters", input.text.chars().count()))
}

struct Raw {
    reader: BufReader<ReadHalf<DuplexStream>>,
    writer: WriteHalf<DuplexStream>,
}

impl Raw {
    async fn start() -> Raw {
        let server = FusionServer::builder("notes", "1")
            .group(Group::new("notes", "Notes.").action(Action::new("add", "Add a note.").handler(note)))
            .build(())
            .unwrap();
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server_io);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(LineTransport::new(server_read, server_write)).await {
                let _ = running.waiting().await;
            }
        });
        let (read, write) = tokio::io::split(client_io);
        let mut raw = Raw { reader: BufReader::new(read), writer: write };
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

    async fn send(&mut self, line: &str) {
        self.writer.write_all(line.as_bytes()).await.unwrap();
        self.writer.write_all(b"\n").await.unwrap();
        self.writer.flush().await.unwrap();
    }

    async fn receive(&mut self) -> Value {
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(20), self.reader.read_line(&mut line))
            .await
            .expect("the server answers")
            .unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Sends a tools/call with raw `arguments` JSON and returns the response.
    async fn call(&mut self, id: u64, arguments: &str) -> Value {
        let frame = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"notes","arguments":{arguments}}}}}"#
        );
        self.send(&frame).await;
        let response = self.receive().await;
        assert_eq!(response["id"], id, "{response}");
        response
    }

    async fn still_serves(&mut self, id: u64) {
        let ok = self.call(id, r#"{"action":"add","text":"ok"}"#).await;
        assert_eq!(ok["result"]["content"][0]["text"], "2 characters", "{ok}");
    }
}

fn envelope_of(response: &Value) -> mcp_fusion::wire::Envelope {
    assert_eq!(response["result"]["isError"], true, "{response}");
    parse(response["result"]["content"][0]["text"].as_str().expect("a text block"))
}

#[tokio::test]
async fn arguments_that_are_not_an_object_get_a_protocol_error() {
    let mut raw = Raw::start().await;
    for (id, arguments, kind) in [(1, "[1,2]", "an array"), (2, "\"text\"", "a string"), (3, "42", "a number")] {
        let response = raw.call(id, arguments).await;
        assert_eq!(response["error"]["code"], -32602, "{arguments}: {response}");
        assert_eq!(
            response["error"]["message"],
            format!(
                "Invalid params for tools/call: \"arguments\" must be a JSON object of the tool's fields, but it is {kind}"
            )
        );
    }
    let null = raw.call(4, "null").await;
    assert_eq!(envelope_of(&null).error.code.as_str(), "MISSING_DISCRIMINATOR");
    raw.still_serves(5).await;
}

#[tokio::test]
async fn a_malformed_frame_does_not_stop_the_server() {
    let mut raw = Raw::start().await;
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notes","#).await;
    raw.send("not json at all").await;
    raw.send(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":7}}"#).await;
    // The frame cut short still names its id: answered, not left waiting. The garbage is not.
    let cut = raw.receive().await;
    assert_eq!((&cut["id"], &cut["error"]["code"]), (&json!(1), &json!(-32700)), "{cut}");
    let response = raw.receive().await;
    assert_eq!(response["id"], 9, "{response}");
    assert_eq!(
        response["error"]["message"],
        "Invalid params for tools/call: \"name\" must be a string, but it is a number"
    );
    raw.still_serves(2).await;
}

#[tokio::test]
async fn ten_thousand_keys_give_a_capped_validation_error() {
    let mut raw = Raw::start().await;
    let mut arguments = serde_json::Map::new();
    arguments.insert("action".into(), json!("add"));
    arguments.insert("text".into(), json!("x"));
    for i in 0..10_000 {
        arguments.insert(format!("k{i:05}"), json!(i));
    }
    let response = raw.call(1, &Value::Object(arguments).to_string()).await;
    let envelope = envelope_of(&response);
    assert_eq!(envelope.kind, EnvelopeKind::ValidationError);
    assert_eq!(envelope.fields.len(), 25);
    assert!(envelope.fields[24].text.starts_with("9976 more problems are not listed."), "{:?}", envelope.fields[24]);
    raw.still_serves(2).await;
}

#[tokio::test]
async fn deep_nesting_is_answered() {
    let mut raw = Raw::start().await;
    let deep = format!("{}1{}", "[".repeat(1000), "]".repeat(1000));
    let response = raw.call(1, &format!(r#"{{"action":"add","text":{deep}}}"#)).await;
    // Too deep to decode as a request: a JSON-RPC error carrying the id, not silence.
    assert_eq!(response["error"]["code"], -32600, "{response}");
    assert_eq!(
        response["error"]["message"],
        "Invalid request: the message nests deeper than 128 levels; send flatter arguments"
    );
    raw.still_serves(2).await;
}

#[tokio::test]
async fn a_ten_megabyte_string_is_echoed_cut() {
    let mut raw = Raw::start().await;
    let big = "é".repeat(5 * 1024 * 1024);
    let response = raw.call(1, &json!({"action": "add", "text": big}).to_string()).await;
    let envelope = envelope_of(&response);
    assert_eq!(
        envelope.fields[0].text,
        format!("Too long. You sent: '{}...'. Expected at most 100 characters.", "é".repeat(47))
    );
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.len() < 1024, "the envelope stays small: {} bytes", text.len());
    raw.still_serves(2).await;
}
