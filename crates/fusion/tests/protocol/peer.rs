//! What a handler can send besides its result: content blocks of any kind, and progress
//! notifications to a client that asked for them.

use crate::support;

use std::sync::{Arc, Mutex};

use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use rmcp::model::{CallToolRequestParams, ContentBlock, ProgressNotificationParam, RequestMetaObject};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct Steps {
    steps: u32,
}

async fn picture(_ctx: Ctx<()>, _input: Steps) -> Result<Vec<ContentBlock>, ToolError> {
    Ok(vec![ContentBlock::text("a red dot"), ContentBlock::image("iVBORw0KGgo=", "image/png")])
}

async fn count(ctx: Ctx<()>, input: Steps) -> Result<String, ToolError> {
    for step in 1..=input.steps {
        ctx.progress(f64::from(step), Some(f64::from(input.steps)), Some(format!("step {step}"))).await;
    }
    Ok(format!("counted to {}", input.steps))
}

fn server() -> FusionServer {
    FusionServer::builder("peer-test", "1")
        .group(
            Group::new("p", "Peer features.")
                .action(Action::new("picture", "A picture.").handler(picture))
                .action(Action::new("count", "Count with progress.").handler(count)),
        )
        .build(())
        .unwrap()
}

/// Progress values and messages, as received.
type Reports = Arc<Mutex<Vec<(f64, Option<String>)>>>;

#[derive(Clone, Default)]
struct Recorder {
    progress: Reports,
}

impl ClientHandler for Recorder {
    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push((params.progress, params.message));
    }
}

async fn connect(recorder: Recorder) -> rmcp::service::RunningService<RoleClient, Recorder> {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let server = server();
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    recorder.serve(client_io).await.unwrap()
}

#[tokio::test]
async fn content_blocks_pass_through() {
    let client = connect(Recorder::default()).await;
    let arguments = json!({"action": "picture", "steps": 0}).as_object().cloned().unwrap();
    let result = client.call_tool(CallToolRequestParams::new("p").with_arguments(arguments)).await.unwrap();
    assert_eq!(result.is_error, Some(false));
    let content = serde_json::to_value(&result.content).unwrap();
    assert_eq!(
        content,
        json!([{"type": "text", "text": "a red dot"}, {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}])
    );
}

#[tokio::test]
async fn progress_reaches_a_client_that_asked_for_it() {
    let recorder = Recorder::default();
    let client = connect(recorder.clone()).await;
    let arguments = json!({"action": "count", "steps": 3}).as_object().cloned().unwrap();
    let mut meta = RequestMetaObject::default();
    meta.set_progress_token(rmcp::model::ProgressToken(rmcp::model::NumberOrString::String("tok-1".into())));
    let mut request = CallToolRequestParams::new("p").with_arguments(arguments);
    request.meta = Some(meta);
    let result = client.call_tool(request).await.unwrap();
    assert_eq!(result.content[0].as_text().unwrap().text, "counted to 3");
    // Notifications and the response travel the same ordered pipe, but each notification is
    // handled on a task of its own.
    support::wait_until(|| recorder.progress.lock().unwrap().len() >= 3).await;
    assert_eq!(
        *recorder.progress.lock().unwrap(),
        [(1.0, Some("step 1".into())), (2.0, Some("step 2".into())), (3.0, Some("step 3".into()))]
    );
}
