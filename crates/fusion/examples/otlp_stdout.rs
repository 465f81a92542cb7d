//! One call's trace as OpenTelemetry exports it, printed by the SDK's stdout exporter instead
//! of sent to a collector: `cargo run -p mcp-fusion --features otlp --example otlp_stdout`.
//! `docs/observability.md` shows its output.

use mcp_fusion::auth::{Caller, Identity};
use mcp_fusion::transport::RequestInfo;
use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// What a reminder is sent for, and to whom: neither leaves in the trace.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Reminder {
    id: String,
    email: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (otlp, guard) =
        mcp_fusion::observe::otlp::layer_with_exporter("billing-server", opentelemetry_stdout::SpanExporter::default());
    tracing_subscriber::registry().with(otlp).init();

    let server = FusionServer::builder("billing-server", "1.0.0")
        .group(Group::new("billing", "Invoices.").action(Action::new("remind", "Send a reminder.").handler(
            |_ctx: Ctx<()>, input: Reminder| async move {
                tracing::info!(recipients = usize::from(!input.email.is_empty()), "reminder queued");
                Ok::<_, ToolError>(format!("reminded about {}", input.id))
            },
        )))
        .build(())?;
    let request = RequestInfo {
        session_id: Some("session-7".into()),
        caller: Caller::Authenticated(Identity::new("ana")),
        ..RequestInfo::default()
    };
    let arguments = serde_json::json!({"action": "remind", "id": "inv_7", "email": "ana@example.com"});
    let result = server.call("billing", arguments.as_object().cloned(), request).await;
    assert_eq!(result.is_error, Some(false));

    // The batch goes out now, printed on stdout.
    guard.shutdown()?;
    Ok(())
}
