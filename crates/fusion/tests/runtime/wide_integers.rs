//! Integers past 64 bits: read as floats, they would reach a handler or an upstream rounded
//! (`18446744073709551616` forwarded as `1.8446744073709552e+19`). Where the schema asks for
//! an integer they are refused at their path; what 64 bits hold passes exactly as sent.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use mcp_fusion::handoff::{Forward, ForwardError, Mount, MountState};
use mcp_fusion::transport::RequestInfo;
use mcp_fusion::wire::{ToolError, parse};
use mcp_fusion::{Action, CallInfo, Ctx, FusionServer};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::support::{error_text, texts};

#[derive(Deserialize, Serialize, JsonSchema)]
struct Ids {
    /// A signed id.
    signed: Option<i64>,
    /// An unsigned id.
    unsigned: Option<u64>,
}

/// The upstream of the mounted `ledger` namespace: answers with the arguments it was sent, as
/// JSON text, and keeps them.
#[derive(Default, Clone)]
struct Ledger(Arc<Mutex<Vec<String>>>);

impl Forward for Ledger {
    fn call(
        &self,
        _tool: &str,
        arguments: JsonObject,
        _call: Arc<CallInfo>,
    ) -> BoxFuture<'static, Result<CallToolResult, ForwardError>> {
        let sent = serde_json::to_string(&arguments).unwrap();
        self.0.lock().unwrap().push(sent.clone());
        Box::pin(std::future::ready(Ok(CallToolResult::success(vec![ContentBlock::text(sent)]))))
    }
}

fn server(ledger: &Ledger) -> FusionServer {
    let ids = Action::new("ids", "Echo the ids.")
        .handler(|_ctx: Ctx<()>, input: Ids| async move { Ok::<_, ToolError>(serde_json::to_string(&input).unwrap()) });
    let server = FusionServer::builder::<()>("wide", "1").action(ids).build(()).unwrap();
    let schema = json!({"type": "object", "properties": {"amount": {"type": "integer"}, "ratio": {"type": "number"}}});
    let tools = vec![Tool::new("post", "Post an amount.", Arc::new(schema.as_object().cloned().unwrap()))];
    let forward: Arc<dyn Forward> = Arc::new(ledger.clone());
    server.set_mount(&Mount::new("ledger"), MountState::Ready { tools, forward }).unwrap();
    server
}

/// The arguments as a client writes them: parsed from JSON text, as the transport parses them.
fn sent(text: &str) -> Option<JsonObject> {
    serde_json::from_str::<Value>(text).unwrap().as_object().cloned()
}

fn refused_field(result: &CallToolResult) -> Vec<String> {
    let envelope = parse(&error_text(result));
    envelope.fields.iter().map(|field| format!("{}: {}", field.name, field.text)).collect()
}

const BEYOND: &str = "This integer is beyond the integers this server carries exactly (64 bits): it would reach \
                      the tool rounded. You sent: a number. Expected an integer from -9223372036854775808 to \
                      18446744073709551615; send one in that range, or ask the user what the value should be.";

#[tokio::test]
async fn a_tools_integer_past_64_bits_is_refused_at_its_path() {
    let server = server(&Ledger::default());
    for (field, value) in [("unsigned", "18446744073709551616"), ("signed", "-9223372036854775809"), ("signed", "1e20")]
    {
        let result = server.call("ids", sent(&format!("{{\"{field}\": {value}}}")), RequestInfo::default()).await;
        assert_eq!(refused_field(&result), [format!("{field}: {BEYOND}")], "{field} = {value}");
    }
    let fits = server.call("ids", sent(r#"{"unsigned": 18446744073709551615}"#), RequestInfo::default()).await;
    assert_eq!(texts(&fits), [r#"{"signed":null,"unsigned":18446744073709551615}"#]);
}

#[tokio::test]
async fn a_forwarded_integer_past_64_bits_is_refused_and_one_that_fits_arrives_as_written() {
    let ledger = Ledger::default();
    let server = server(&ledger);
    for value in ["18446744073709551616", "-9223372036854775809", "1e20"] {
        let result =
            server.call("ledger.post", sent(&format!("{{\"amount\": {value}}}")), RequestInfo::default()).await;
        assert_eq!(refused_field(&result), [format!("amount: {BEYOND}")], "{value}");
    }
    assert!(ledger.0.lock().unwrap().is_empty(), "nothing rounded reached the upstream");
    let fits = server.call("ledger.post", sent(r#"{"amount": 18446744073709551615}"#), RequestInfo::default());
    assert_eq!(fits.await.is_error, Some(false));
    // A float where the upstream takes any number is a float: it was not asked to be exact.
    let ratio = server.call("ledger.post", sent(r#"{"ratio": 1e20}"#), RequestInfo::default()).await;
    assert_eq!(ratio.is_error, Some(false));
    assert_eq!(*ledger.0.lock().unwrap(), [r#"{"amount":18446744073709551615}"#, r#"{"ratio":1e+20}"#]);
}
