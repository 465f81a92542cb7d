//! The call path in process, without a transport: `cargo bench -p mcp-fusion --bench call`.
//!
//! `valid` is route + schema check + decode + handler + result for a four-field input whose
//! handler does nothing but build its output; `invalid` builds a three-problem validation
//! error; `handler_only` is the same handler called directly, so `valid - handler_only` is
//! what the framework adds. `mounted_composed` is a valid call of a mounted tool whose schema
//! is composed as pydantic and Zod write them (`$ref`s into `$defs`, an `allOf`, an
//! `Option<Model>`, a discriminated union), forwarded to an upstream that answers at once.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::future::BoxFuture;
use mcp_fusion::guard::{Concurrency, RateLimit};
use mcp_fusion::handoff::{Forward, ForwardError, Mount, MountState};
use mcp_fusion::transport::RequestInfo;
use mcp_fusion::{Action, CallInfo, Ctx, FusionServer, Group, Json};
use mcp_fusion_wire::ToolError;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
enum Currency {
    Eur,
    Usd,
    Brl,
}

#[derive(Deserialize, JsonSchema)]
struct CreateInvoice {
    #[schemars(email)]
    customer_email: String,
    #[schemars(range(min = 1))]
    amount_cents: u64,
    currency: Currency,
    #[schemars(extend("format" = "date"))]
    due_date: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct Invoice {
    id: &'static str,
    customer_email: String,
    amount_cents: u64,
    currency: &'static str,
}

async fn create(_ctx: Ctx<()>, input: CreateInvoice) -> Result<Json<Invoice>, ToolError> {
    let Ok(output) = create_output(input);
    Ok(output)
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!("the bench passes objects"),
    }
}

fn call_path(c: &mut Criterion) {
    let server = FusionServer::builder("bench", "1")
        .group(Group::new("billing", "Invoices.").action(Action::new("create_invoice", "Create.").handler(create)))
        .build(())
        .expect("the bench server builds");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().expect("a runtime");
    let valid = object(json!({
        "action": "create_invoice", "customer_email": "ana@example.com", "amount_cents": 1500,
        "currency": "EUR", "due_date": "2026-12-31",
    }));
    let invalid = object(json!({
        "action": "create_invoice", "customer_email": "not-an-email", "amount_cents": 0, "currency": "eur",
    }));
    let result = runtime.block_on(server.call("billing", Some(valid.clone()), RequestInfo::default()));
    assert_eq!(result.is_error, Some(false));
    let result = runtime.block_on(server.call("billing", Some(invalid.clone()), RequestInfo::default()));
    assert_eq!(result.is_error, Some(true));

    c.bench_function("call/valid", |b| {
        b.to_async(&runtime).iter(|| server.call("billing", Some(black_box(valid.clone())), RequestInfo::default()))
    });
    c.bench_function("call/invalid_3_problems", |b| {
        b.to_async(&runtime).iter(|| server.call("billing", Some(black_box(invalid.clone())), RequestInfo::default()))
    });
    // The same call through every built-in guard: a rate limit counted in memory, a group
    // and a server concurrency slot, a timeout and the result cap.
    let guarded = FusionServer::builder("bench", "1")
        .rate_limit(RateLimit::new(u32::MAX, Duration::from_secs(1)))
        .concurrency(Concurrency::new(64, 64))
        .timeout(Duration::from_secs(5))
        .max_result_bytes(1 << 20)
        .group(
            Group::new("billing", "Invoices.")
                .concurrency(Concurrency::new(64, 64))
                .action(Action::new("create_invoice", "Create.").handler(create)),
        )
        .build(())
        .expect("the guarded bench server builds");
    let result = runtime.block_on(guarded.call("billing", Some(valid.clone()), RequestInfo::default()));
    assert_eq!(result.is_error, Some(false));
    c.bench_function("call/guarded", |b| {
        b.to_async(&runtime).iter(|| guarded.call("billing", Some(black_box(valid.clone())), RequestInfo::default()))
    });
    mounted_composed(c, &runtime);
    c.bench_function("call/handler_only", |b| {
        b.iter(|| {
            let input: CreateInvoice =
                serde_json::from_value(Value::Object(black_box(valid.clone()))).expect("valid input");
            let Ok(Json(invoice)) = create_output(input);
            serde_json::to_value(invoice).expect("serializable")
        })
    });
}

/// An upstream that answers every call at once, so the bench measures the gateway's side.
struct Answers;

impl Forward for Answers {
    fn call(
        &self,
        _: &str,
        _: JsonObject,
        _: Arc<CallInfo>,
    ) -> BoxFuture<'static, Result<CallToolResult, ForwardError>> {
        Box::pin(std::future::ready(Ok(CallToolResult::success(vec![ContentBlock::text("ok")]))))
    }
}

/// A valid call of a mounted tool whose schema is composed.
fn mounted_composed(c: &mut Criterion, runtime: &tokio::runtime::Runtime) {
    let schema = json!({
        "type": "object",
        "$defs": {
            "Address": {"type": "object", "properties": {
                "street": {"type": "string", "minLength": 1},
                "city": {"type": "string"},
                "zip": {"type": "string", "pattern": "^[0-9]{5}$"}
            }, "required": ["street", "city"]},
            "Cat": {"type": "object", "properties": {"kind": {"const": "cat"}, "meows": {"type": "integer", "minimum": 0}}, "required": ["kind"]},
            "Dog": {"type": "object", "properties": {"kind": {"const": "dog"}, "barks": {"type": "boolean"}}, "required": ["kind", "barks"]}
        },
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "email": {"type": "string", "format": "email"},
            "home": {"$ref": "#/$defs/Address"},
            "work": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]},
            "pet": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}], "discriminator": {"propertyName": "kind"}},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10}
        },
        "allOf": [{"required": ["name"]}, {"if": {"required": ["work"]}, "then": {"required": ["email"]}}],
        "required": ["home", "pet"]
    });
    let tool = Tool::new("register", "Registers a pet owner.", Arc::new(object(schema)));
    let server = FusionServer::builder("bench", "1").build(()).expect("the bench server builds");
    let state = MountState::Ready { tools: vec![tool], forward: Arc::new(Answers) };
    server.set_mount(&Mount::new("crm"), state).expect("the mount compiles");
    let valid = object(json!({
        "name": "Ana", "email": "ana@example.com",
        "home": {"street": "Rua A 1", "city": "Lisboa", "zip": "12345"},
        "work": {"street": "Rua B 2", "city": "Porto"},
        "pet": {"kind": "dog", "barks": true},
        "tags": ["a", "b"]
    }));
    let result = runtime.block_on(server.call("crm.register", Some(valid.clone()), RequestInfo::default()));
    assert_eq!(result.is_error, Some(false), "{result:?}");
    c.bench_function("call/mounted_composed", |b| {
        b.to_async(runtime).iter(|| server.call("crm.register", Some(black_box(valid.clone())), RequestInfo::default()))
    });
}

/// The handler's work: decode-independent, so it can also be measured without the framework.
fn create_output(input: CreateInvoice) -> Result<Json<Invoice>, std::convert::Infallible> {
    let _ = input.due_date;
    let currency = match input.currency {
        Currency::Eur => "EUR",
        Currency::Usd => "USD",
        Currency::Brl => "BRL",
    };
    Ok(Json(Invoice { id: "inv_1", customer_email: input.customer_email, amount_cents: input.amount_cents, currency }))
}

criterion_group!(benches, call_path);
criterion_main!(benches);
