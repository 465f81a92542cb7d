//! What an operator sees of each call: one INFO event with the action, the outcome, the
//! duration, the session and the caller, never an argument's value; a span the handler's own
//! events inherit; and, with the `otlp` feature, that span as OpenTelemetry exports it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_fusion::auth::{Caller, Identity};
use mcp_fusion::guard::RateLimit;
use mcp_fusion::transport::RequestInfo;
use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

/// A secret the arguments carry: it must appear in no event or span.
const EMAIL: &str = "ana.secret@example.com";

#[derive(Deserialize, JsonSchema)]
struct Reminder {
    /// The invoice id, like `inv_7`.
    #[schemars(regex(pattern = r"^inv_[0-9]+$"))]
    id: String,
    /// Who to remind.
    email: String,
}

async fn remind(_ctx: Ctx<()>, input: Reminder) -> Result<String, ToolError> {
    tracing::info!(recipients = usize::from(!input.email.is_empty()), "reminder queued");
    tracing::debug!("below INFO: neither logged here nor exported");
    Ok(format!("reminded about {}", input.id))
}

fn server() -> FusionServer {
    FusionServer::builder("observed", "1")
        .group(
            Group::new("billing", "Invoices.")
                .action(Action::new("remind", "Send a reminder.").handler(remind))
                .action(
                    Action::new("remind_once", "Send one reminder a minute.")
                        .rate_limit(RateLimit::new(1, Duration::from_secs(60)).global())
                        .handler(remind),
                )
                .action(Action::new("remind_signed", "Send a signed reminder.").requires_identity().handler(remind)),
        )
        .build(())
        .unwrap()
}

/// One event or span as captured: its level, target, name and fields, and for an event the
/// fields of the spans it sits in.
#[derive(Debug, Clone, Default)]
struct Seen {
    level: String,
    target: String,
    fields: BTreeMap<String, String>,
    scope: Vec<BTreeMap<String, String>>,
}

/// An event's or a span's fields, by name, as text.
#[derive(Default)]
pub(crate) struct Fields(pub(crate) BTreeMap<String, String>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

/// Every event, with the fields of its spans, and every span's fields as created.
#[derive(Clone, Default)]
struct Capture {
    events: Arc<Mutex<Vec<Seen>>>,
    spans: Arc<Mutex<Vec<Seen>>>,
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        let seen = Seen {
            level: attrs.metadata().level().to_string(),
            target: attrs.metadata().target().to_owned(),
            fields: fields.0.clone(),
            scope: Vec::new(),
        };
        self.spans.lock().unwrap().push(seen);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let scope = ctx
            .event_scope(event)
            .map(|scope| scope.filter_map(|span| span.extensions().get::<Fields>().map(|f| f.0.clone())).collect())
            .unwrap_or_default();
        self.events.lock().unwrap().push(Seen {
            level: event.metadata().level().to_string(),
            target: event.metadata().target().to_owned(),
            fields: fields.0,
            scope,
        });
    }
}

/// A capture of what is logged at `level` and above, this thread's subscriber until the guard
/// drops.
fn capturing(level: Level) -> (Capture, tracing::subscriber::DefaultGuard) {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry()
        .with(capture.clone().with_filter(tracing_subscriber::filter::Targets::new().with_default(level)));
    (capture, tracing::subscriber::set_default(subscriber))
}

fn request(caller: Caller) -> RequestInfo {
    RequestInfo { session_id: Some("session-7".into()), caller, ..RequestInfo::default() }
}

fn arguments(action: &str, id: &str) -> Option<serde_json::Map<String, Value>> {
    json!({"action": action, "id": id, "email": EMAIL}).as_object().cloned()
}

#[tokio::test]
async fn each_call_is_one_info_event_with_its_outcome_and_no_argument_values() {
    let (capture, _default) = capturing(Level::INFO);
    let server = server();
    let ana = || Caller::Authenticated(Identity::new("ana"));

    let ok = server.call("billing", arguments("remind", "inv_7"), request(ana())).await;
    assert_eq!(ok.is_error, Some(false));
    let invalid = server.call("billing", arguments("remind", "INV-7"), request(ana())).await;
    assert_eq!(invalid.is_error, Some(true));
    server.call("billing", arguments("remind_once", "inv_7"), request(ana())).await;
    let limited = server.call("billing", arguments("remind_once", "inv_7"), request(ana())).await;
    assert_eq!(limited.is_error, Some(true));
    let anonymous = server.call("billing", arguments("remind_signed", "inv_7"), request(Caller::Anonymous)).await;
    assert_eq!(anonymous.is_error, Some(true));
    let unknown = server.call("nothing_here", arguments("remind", "inv_7"), request(ana())).await;
    assert_eq!(unknown.is_error, Some(true));

    let events = capture.events.lock().unwrap().clone();
    let finished: Vec<&Seen> =
        events.iter().filter(|e| e.fields.get("message").is_some_and(|m| m == "call finished")).collect();
    let told: Vec<(&str, &str, Option<&str>)> = finished
        .iter()
        .map(|e| {
            (e.fields["action"].as_str(), e.fields["outcome"].as_str(), e.fields.get("caller").map(String::as_str))
        })
        .collect();
    assert_eq!(
        told,
        [
            ("billing.remind", "ok", Some("ana")),
            ("billing.remind", "VALIDATION_ERROR", Some("ana")),
            ("billing.remind_once", "ok", Some("ana")),
            ("billing.remind_once", "RATE_LIMITED", Some("ana")),
            ("billing.remind_signed", "AUTH_REQUIRED", None),
            ("nothing_here", "UNKNOWN_ACTION", Some("ana")),
        ]
    );
    for event in &finished {
        assert_eq!((event.level.as_str(), event.target.as_str()), ("INFO", "mcp_fusion::call"), "{event:?}");
        assert_eq!(event.fields["session"], "session-7", "{event:?}");
        let duration: u64 = event.fields["duration_us"].parse().expect("whole microseconds");
        assert!(duration < 10_000_000, "{event:?}");
        // Outside the call's span: the event stands on its own.
        assert!(event.scope.is_empty(), "{event:?}");
    }

    // The handler's own event sits in the call's span, which names the action and the session.
    let queued: Vec<&Seen> =
        events.iter().filter(|e| e.fields.get("message").is_some_and(|m| m == "reminder queued")).collect();
    assert_eq!(queued.len(), 2, "the two calls that reached the handler");
    assert_eq!(queued[0].scope[0]["action"], "billing.remind");
    assert_eq!(queued[0].scope[0]["session"], "session-7");
    assert_eq!(queued[0].scope[0]["caller"], "ana");

    // No argument value anywhere: not the e-mail, not the refused id.
    let spans = capture.spans.lock().unwrap().clone();
    for seen in events.iter().chain(&spans) {
        let text = format!("{seen:?}");
        assert!(!text.contains(EMAIL) && !text.contains("INV-7") && !text.contains("inv_7"), "{text}");
    }
}

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[tokio::test]
async fn the_log_line_carries_the_trace_id_the_request_names_when_it_is_well_formed() {
    let (capture, _default) = capturing(Level::INFO);
    let server = server();
    let traced = |traceparent: &str| RequestInfo {
        trace_context: mcp_fusion::observe::TraceContext::parse(traceparent, None, None),
        ..request(Caller::Anonymous)
    };
    server.call("billing", arguments("remind", "inv_7"), traced(TRACEPARENT)).await;
    server.call("billing", arguments("remind", "inv_7"), traced("00-\n-forged-01")).await;
    server.call("billing", arguments("remind", "inv_7"), request(Caller::Anonymous)).await;
    let events = capture.events.lock().unwrap().clone();
    let trace_ids: Vec<Option<&str>> = events
        .iter()
        .filter(|e| e.fields.get("message").is_some_and(|m| m == "call finished"))
        .map(|e| e.fields.get("trace_id").map(String::as_str))
        .collect();
    assert_eq!(trace_ids, [Some("4bf92f3577b34da6a3ce929d0e0e4736"), None, None]);
}

#[tokio::test]
async fn nothing_listening_costs_no_event() {
    let (capture, _default) = capturing(Level::WARN);
    let result = server().call("billing", arguments("remind", "inv_7"), request(Caller::Anonymous)).await;
    assert_eq!(result.is_error, Some(false));
    assert!(capture.events.lock().unwrap().is_empty());
    assert!(capture.spans.lock().unwrap().is_empty());
}

/// The `otlp` feature: a call's span leaves through the OpenTelemetry exporter named `call`,
/// with the action, the session and the outcome as attributes and the handler's event inside
/// it, and no argument value anywhere in what is exported.
#[cfg(feature = "otlp")]
mod otlp {
    use opentelemetry::{Key, Value};
    use opentelemetry_sdk::error::OTelSdkResult;
    use opentelemetry_sdk::trace::{SpanData, SpanExporter};

    use super::*;

    /// Keeps every span it is given.
    #[derive(Debug, Clone, Default)]
    struct Collect(Arc<Mutex<Vec<SpanData>>>);

    impl SpanExporter for Collect {
        async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
            self.0.lock().unwrap().extend(batch);
            Ok(())
        }
    }

    fn attribute<'a>(attributes: &'a [opentelemetry::KeyValue], key: &str) -> Option<&'a Value> {
        attributes.iter().find(|kv| kv.key == Key::from(key.to_owned())).map(|kv| &kv.value)
    }

    #[tokio::test]
    async fn a_call_is_exported_as_a_span_with_its_action_session_and_the_handlers_event() {
        let collected = Collect::default();
        let (otlp, guard) = mcp_fusion::observe::otlp::layer_with_exporter("observed", collected.clone());
        let subscriber = tracing_subscriber::registry().with(otlp);
        let _default = tracing::subscriber::set_default(subscriber);

        let server = server();
        let ana = || Caller::Authenticated(Identity::new("ana"));
        let result = server.call("billing", arguments("remind", "inv_7"), request(ana())).await;
        assert_eq!(result.is_error, Some(false));
        // A refused call: its span goes out too, and the value refused stays out of it.
        let result = server.call("billing", arguments("remind", "INV-7"), request(ana())).await;
        assert_eq!(result.is_error, Some(true));
        // Outside any call: not exported.
        tracing::info!("not in a call");
        tracing::info_span!("elsewhere").in_scope(|| tracing::info!("nor here"));

        guard.shutdown().expect("flushed");
        let spans = collected.0.lock().unwrap().clone();
        let names: Vec<&str> = spans.iter().map(|span| span.name.as_ref()).collect();
        assert_eq!(names, ["call", "call"], "{spans:#?}");

        let call = &spans[0];
        assert_eq!(attribute(&call.attributes, "action"), Some(&Value::from("billing.remind")), "{call:#?}");
        assert_eq!(attribute(&call.attributes, "session"), Some(&Value::from("session-7")), "{call:#?}");
        assert_eq!(attribute(&call.attributes, "caller"), Some(&Value::from("ana")), "{call:#?}");
        assert_eq!(attribute(&call.attributes, "outcome"), Some(&Value::from("ok")), "{call:#?}");
        assert_eq!(call.instrumentation_scope.name(), "mcp-fusion");
        // A root span: the transport's spans are not exported, so nothing is its parent.
        assert_eq!(call.parent_span_id, opentelemetry::trace::SpanId::INVALID);
        // The handler's INFO event, as a span event; its DEBUG one left out.
        let events: Vec<&str> = call.events.iter().map(|event| event.name.as_ref()).collect();
        assert_eq!(events, ["reminder queued"], "{call:#?}");
        let recipients = attribute(&call.events.events[0].attributes, "recipients").map(Value::as_str);
        assert_eq!(recipients.as_deref(), Some("1"), "{call:#?}");

        // The refused call never reached the handler: a span with no event.
        assert_eq!(attribute(&spans[1].attributes, "action"), Some(&Value::from("billing.remind")));
        assert_eq!(spans[1].events.len(), 0, "{:#?}", spans[1]);
        assert_eq!(attribute(&spans[1].attributes, "outcome"), Some(&Value::from("VALIDATION_ERROR")));

        let text = format!("{spans:?}");
        assert!(!text.contains(EMAIL) && !text.contains("INV-7") && !text.contains("inv_7"), "{text}");
    }

    /// A request whose `_meta` carries a W3C trace context, sent by a real rmcp client: the
    /// exported span continues that trace, a child of the client's span, with its trace state;
    /// a request without one starts a trace of its own.
    #[tokio::test]
    async fn a_call_continues_the_trace_its_request_names() {
        use rmcp::ServiceExt as _;
        use rmcp::model::{CallToolRequestParams, RequestMetaObject};

        let collected = Collect::default();
        let (otlp, guard) = mcp_fusion::observe::otlp::layer_with_exporter("observed", collected.clone());
        let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(otlp));
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if let Ok(running) = server().serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let client = ().serve(client_io).await.unwrap();
        let call = |meta: Option<RequestMetaObject>| {
            let mut params =
                CallToolRequestParams::new("billing").with_arguments(arguments("remind", "inv_7").unwrap());
            params.meta = meta;
            params
        };
        let mut meta = RequestMetaObject::new();
        meta.set_traceparent(TRACEPARENT);
        meta.set_tracestate("rojo=00f067aa0ba902b7");
        let traced = client.call_tool(call(Some(meta))).await.unwrap();
        assert_eq!(traced.is_error, Some(false));
        let untraced = client.call_tool(call(None)).await.unwrap();
        assert_eq!(untraced.is_error, Some(false));
        client.cancel().await.unwrap();

        guard.shutdown().expect("flushed");
        let spans = collected.0.lock().unwrap().clone();
        let calls: Vec<&SpanData> = spans.iter().filter(|span| span.name == "call").collect();
        assert_eq!(calls.len(), 2, "{spans:#?}");
        let traced = calls[0];
        assert_eq!(traced.span_context.trace_id().to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(traced.parent_span_id.to_string(), "00f067aa0ba902b7");
        assert_eq!(traced.span_context.trace_state().header(), "rojo=00f067aa0ba902b7");
        assert_eq!(attribute(&traced.attributes, "trace_id"), Some(&Value::from("4bf92f3577b34da6a3ce929d0e0e4736")));
        let untraced = calls[1];
        assert_ne!(untraced.span_context.trace_id(), traced.span_context.trace_id());
        assert_eq!(untraced.parent_span_id, opentelemetry::trace::SpanId::INVALID);
        let own = untraced.span_context.trace_id().to_string();
        assert_eq!(attribute(&untraced.attributes, "trace_id"), Some(&Value::from(own)));
    }
}
