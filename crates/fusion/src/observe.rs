//! What a running server tells its operator: the `tracing` target of its per-call span and
//! event, the field formatter that keeps its log lines data, and the metrics it records through
//! the [`metrics`](https://docs.rs/metrics) facade.
//!
//! Every call — a `tools/call`, a `resources/read`, a `prompts/get` — runs in a span named
//! `call` and ends with one INFO event, `call finished`, both on the target [`CALL_TARGET`]
//! with the fields `action`, `outcome` (`ok` or the envelope's code), `duration_us`, `session`,
//! `caller` and `trace_id` (of the W3C trace context the request's `_meta` carries, SEP-414; with
//! the `otlp` feature, of the trace the call's span is exported in, continued from that one);
//! never an argument's value. The same call counts in [`CALLS_TOTAL`] and
//! [`CALL_DURATION_SECONDS`]. Nothing is recorded anywhere until the application installs a
//! subscriber or a recorder; [`FusionServer::record_gauges`](crate::FusionServer::record_gauges)
//! sets the gauges, as a scrape wants them. With the `otlp` feature, `observe::otlp` exports the
//! calls' spans over OpenTelemetry.
//!
//! ```
//! use mcp_fusion::observe;
//!
//! // A Prometheus exporter's histogram buckets for the call latency, in seconds.
//! assert_eq!(observe::CALL_DURATION_SECONDS, "mcp_fusion_call_duration_seconds");
//! assert!(observe::DURATION_BUCKETS.windows(2).all(|pair| pair[0] < pair[1]));
//! ```
//!
//! A log line holds what clients and upstreams sent: JSON-RPC ids, tool names, URIs, their
//! error texts. The framework's own events echo them escaped and cut
//! ([`echo`](mcp_fusion_wire::echo)), but rmcp's do not (it logs a request's id raw). Format the
//! log with [`EscapedFields`] and no value of any event can start a line, send the terminal an
//! escape, reorder the text or fill the log:
//!
//! ```
//! use tracing_subscriber::layer::SubscriberExt as _;
//!
//! let log = tracing_subscriber::fmt::layer()
//!     .with_writer(std::io::stderr)
//!     .fmt_fields(mcp_fusion::observe::EscapedFields::new());
//! let subscriber = tracing_subscriber::registry().with(log);
//! # let _ = subscriber;
//! ```
//!
//! With `mask_internal_errors`, an internal error is logged once at ERROR on
//! [`INCIDENT_TARGET`], with the incident id the client was given and the whole cause chain.

mod escaped_fields;
#[cfg(feature = "otlp")]
pub mod otlp;
mod trace_context;

pub use escaped_fields::{EscapedFields, EscapedVisitor, MAX_LOG_VALUE_CHARS};
pub use trace_context::TraceContext;

/// The `tracing` target of the call's span and event (`RUST_LOG=mcp_fusion::call=warn`
/// silences the per-call lines).
pub const CALL_TARGET: &str = "mcp_fusion::call";

/// The `tracing` target of the ERROR event of an internal error under `mask_internal_errors`:
/// fields `action`, `incident` (the id in the envelope) and `error` (the cause chain). A client
/// listening to the call's events (`logging`) hears it with `action` and `incident` only.
pub const INCIDENT_TARGET: &str = "mcp_fusion::incident";

/// Counter: calls ended, labelled `action` (the qualified action, resource URI or template,
/// or prompt; `(unknown)` for a tool name nothing serves, so a client cannot make new series)
/// and `outcome` (`ok` or the envelope's code).
pub const CALLS_TOTAL: &str = "mcp_fusion_calls_total";

/// Histogram: how long calls took, in seconds, labelled `action`.
pub const CALL_DURATION_SECONDS: &str = "mcp_fusion_call_duration_seconds";

/// Gauge: calls running now.
pub const CALLS_IN_FLIGHT: &str = "mcp_fusion_calls_in_flight";

/// Gauge: calls holding a slot of a concurrency guard, labelled `guard` (`server`, or the
/// group's name).
pub const CONCURRENCY_ACTIVE: &str = "mcp_fusion_concurrency_active";

/// Gauge: calls waiting in a concurrency guard's line, labelled `guard`.
pub const CONCURRENCY_QUEUED: &str = "mcp_fusion_concurrency_queued";

/// Counter: tasks (the MCP tasks extension), labelled `action` and `status`: `created` when
/// one is kept, then how it ended: `completed`, `failed` (its replica was lost, or it was still
/// working when its time to live ran out) or `cancelled`.
pub const TASKS_TOTAL: &str = "mcp_fusion_tasks_total";

/// Gauge: tasks this process runs now.
pub const TASKS_RUNNING: &str = "mcp_fusion_tasks_running";

/// Histogram: how long a command to Redis took, in seconds, labelled `op` (`rate_limit`,
/// `script` for idempotency keys and tasks, `session_create`, `session_load`, `session_owner`,
/// `session_touch`, `session_delete`, `subscribe`, `unsubscribe`, `level`, `publish`), whether it
/// succeeded or not.
pub const REDIS_SECONDS: &str = "mcp_fusion_redis_seconds";

/// Counter: commands to Redis that failed (unreachable, timed out, refused), labelled `op`.
pub const REDIS_ERRORS_TOTAL: &str = "mcp_fusion_redis_errors_total";

/// Counter: log lines dropped because stderr did not take them (a pipe nobody reads), from
/// [`crate::logging::stderr`].
pub const LOG_LINES_DROPPED_TOTAL: &str = "mcp_fusion_log_lines_dropped_total";

/// Records a command to Redis, `op`, sent at `started`, and whether it failed.
#[cfg(feature = "redis")]
pub(crate) fn redis_command(op: &'static str, started: std::time::Instant, ok: bool) {
    metrics::histogram!(REDIS_SECONDS, "op" => op).record(started.elapsed().as_secs_f64());
    if !ok {
        metrics::counter!(REDIS_ERRORS_TOTAL, "op" => op).increment(1);
    }
}

/// Buckets for [`CALL_DURATION_SECONDS`], from half a millisecond to ten seconds: a call of
/// this framework answers in a fraction of a millisecond when its handler is quick.
pub const DURATION_BUCKETS: &[f64] =
    &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];
