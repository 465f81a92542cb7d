//! `--mask-internal-errors` through the built `billing-server` over stdio and a real rmcp
//! client that listens to everything: an internal error's text reaches the client by no
//! channel — results, JSON-RPC errors, log notifications, progress — and the server's own log
//! keeps it under the incident id the client was given.

#![allow(deprecated, reason = "MCP logging is deprecated by SEP-2577 and offered before 2026-07-28")]

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, GetPromptRequestParams, LoggingLevel, LoggingMessageNotificationParam, NumberOrString,
    ProgressNotificationParam, ProgressToken, ReadResourceRequestParams, RequestMetaObject, SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt as _;
use tokio::sync::Notify;

const BIN: &str = env!("CARGO_BIN_EXE_billing-server");

/// What the corrupt row holds: in the store's error, so in the internal error's text.
const SECRET: &str = "SECRET-INTERNAL-DETAIL";

/// Every notification the client got, as JSON.
#[derive(Clone, Default)]
struct Heard {
    all: Arc<Mutex<Vec<Value>>>,
    arrived: Arc<Notify>,
}

impl Heard {
    fn push(&self, notification: Value) {
        self.all.lock().unwrap().push(notification);
        self.arrived.notify_one();
    }

    /// Waits (up to 30 s) until `n` log notifications arrived, and returns them.
    async fn logged(&self, n: usize) -> Vec<Value> {
        let wait = async {
            loop {
                let arrived = self.arrived.notified();
                let logged: Vec<Value> =
                    self.all.lock().unwrap().iter().filter(|heard| heard["kind"] == "log").cloned().collect();
                if logged.len() >= n {
                    return logged;
                }
                arrived.await;
            }
        };
        tokio::time::timeout(Duration::from_secs(30), wait).await.expect("the log notifications arrive")
    }
}

impl ClientHandler for Heard {
    async fn on_logging_message(&self, params: LoggingMessageNotificationParam, _: NotificationContext<RoleClient>) {
        self.push(json!({"kind": "log", "params": params}));
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        self.push(json!({"kind": "progress", "params": params}));
    }
}

fn billing(arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new("billing").with_arguments(arguments.as_object().cloned().expect("an object"))
}

/// The incident id a masked message names: `… (incident 0123456789ab).`
fn incident(text: &str) -> String {
    let (_, after) = text.split_once("(incident ").unwrap_or_else(|| panic!("no incident in {text}"));
    after[..12].to_owned()
}

#[tokio::test]
async fn with_masking_no_internal_error_text_reaches_the_client_by_any_channel() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("billing.db");
    drop(billing_server::Store::open(&db).unwrap());
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(&format!(
        "PRAGMA ignore_check_constraints = ON; UPDATE invoices SET status = '{SECRET}' WHERE id = 'inv_2026_0001';"
    ))
    .unwrap();
    drop(conn);

    let mut command = tokio::process::Command::new(BIN);
    // The demo's own filter (info,rmcp=warn): what an operator of the release sees.
    command.arg("--db").arg(&db).arg("--mask-internal-errors").env_remove("RUST_LOG");
    let (transport, stderr) = TokioChildProcess::builder(command).stderr(Stdio::piped()).spawn().unwrap();
    let mut stderr = stderr.expect("piped stderr");
    let log = tokio::spawn(async move {
        let mut log = String::new();
        stderr.read_to_string(&mut log).await.unwrap();
        log
    });
    let heard = Heard::default();
    let client = heard.clone().serve(transport).await.expect("initialize");
    client.set_level(SetLevelRequestParams::new(LoggingLevel::Debug)).await.unwrap();

    let call = client.call_tool(billing(json!({"action": "get_invoice", "id": "inv_2026_0001"}))).await.unwrap();
    let read = match client.read_resource(ReadResourceRequestParams::new("billing://invoices/inv_2026_0001")).await {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    };
    let mut prompt = GetPromptRequestParams::new("dunning_letter");
    prompt.arguments = json!({"id": "inv_2026_0001", "tone": "firm"}).as_object().cloned();
    let prompt = match client.get_prompt(prompt).await {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    };
    // A progress token too: whatever the framework reports of the call is heard.
    let mut listed = billing(json!({"action": "list_invoices"}));
    listed.meta = Some(RequestMetaObject::with_progress_token(ProgressToken(NumberOrString::String("p1".into()))));
    let list = client.call_tool(listed).await.unwrap();

    let call_text = serde_json::to_string(&call).unwrap();
    let incidents = [
        incident(&call_text),
        incident(&read.message),
        incident(&prompt.message),
        incident(&serde_json::to_string(&list).unwrap()),
    ];
    // Each masked failure is heard as its incident: the action and the id, nothing more.
    let logged = heard.logged(incidents.len()).await;
    let told: Vec<&Value> = logged.iter().map(|heard| &heard["params"]["data"]).collect();
    for (data, incident) in told.iter().zip(&incidents) {
        assert_eq!(data["incident"], json!(incident), "{logged:?}");
        assert_eq!(data.as_object().map(|fields| fields.len()), Some(3), "message, action, incident: {data}");
        assert_eq!(data["message"], "call failed");
    }
    client.cancel().await.unwrap();
    let log = tokio::time::timeout(Duration::from_secs(30), log).await.expect("the server exits").unwrap();

    let sent_to_client = [
        call_text,
        serde_json::to_string(&read).unwrap(),
        serde_json::to_string(&prompt).unwrap(),
        serde_json::to_string(&list).unwrap(),
        serde_json::to_string(&*heard.all.lock().unwrap()).unwrap(),
    ];
    for sent in &sent_to_client {
        assert!(!sent.contains(SECRET) && !sent.contains("corrupt invoice row"), "{sent}");
    }
    // The operator's log has the whole chain, under each incident id the client was given.
    for incident in &incidents {
        let line = log.lines().find(|line| line.contains(&format!("incident=\"{incident}\""))).unwrap_or_else(|| {
            panic!("no line of incident {incident} in\n{log}");
        });
        assert!(line.contains(&format!("corrupt invoice row: inv_2026_0001: unknown status \"{SECRET}\"")), "{line}");
    }
}
