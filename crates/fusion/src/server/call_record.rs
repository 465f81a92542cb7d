//! What an operator sees of each call: through `tracing`, a span the handler's own events
//! inherit (so they carry the action and the session), and one INFO event when the call ends
//! with the action, its outcome (`ok` or the envelope's code), how long it took, the session
//! and the caller (and the OAuth client acting for it); through `metrics`, the call counted by
//! action and outcome and its duration recorded. Never an argument's value: arguments may hold
//! a customer's data.

use std::sync::Arc;
use std::time::Instant;

use mcp_fusion_wire::ErrorCode;
use metrics::SharedString;
use tracing::{Level, Span};

use crate::auth::Caller;
use crate::context::RequestInfo;
#[cfg(feature = "otlp")]
use crate::observe::TraceContext;

use crate::observe::{CALL_DURATION_SECONDS, CALL_TARGET as TARGET, CALLS_TOTAL};

/// The longest action name an event carries: a tool name nothing serves comes from the
/// client, and a log line is no place for a megabyte of it.
const MAX_ACTION_CHARS: usize = 128;

/// The label of a call whose tool nothing serves: a client cannot mint metric series.
const UNKNOWN: &str = "(unknown)";

/// The outcome of a call that succeeded.
pub(super) const OK: &str = "ok";

/// One call being watched, from its start.
pub(crate) struct CallRecord {
    started: Instant,
    /// What the log needs, when anything listens at INFO: an unlogged call pays one check.
    logged: Option<Logged>,
}

struct Logged {
    session: Option<Arc<str>>,
    caller: Option<String>,
    /// The OAuth client acting for the caller, when its token names one.
    client: Option<String>,
    /// The trace the request's `_meta` names (continued in OpenTelemetry), and the id of the
    /// trace the call is in.
    #[cfg(feature = "otlp")]
    trace: Option<TraceContext>,
    trace_id: Option<String>,
    /// The call's span, kept open until its outcome is written into it.
    span: Option<Span>,
}

impl CallRecord {
    /// Starts watching the call of `request`.
    pub(crate) fn start(request: &RequestInfo) -> CallRecord {
        let logged = tracing::enabled!(target: TARGET, Level::INFO).then(|| Logged {
            session: request.session_id.clone(),
            caller: match &request.caller {
                Caller::Authenticated(identity) => Some(identity.subject.clone()),
                Caller::Anonymous | Caller::Refused(_) => None,
            },
            client: match &request.caller {
                Caller::Authenticated(identity) => identity.client_id.clone(),
                Caller::Anonymous | Caller::Refused(_) => None,
            },
            #[cfg(feature = "otlp")]
            trace: request.trace_context.clone(),
            trace_id: request.trace_context.as_ref().map(|trace| trace.trace_id().to_owned()),
            span: None,
        });
        CallRecord { started: Instant::now(), logged }
    }

    /// The span the call runs in, when anything listens. Its `outcome` is written when the
    /// call ends, before the span closes, so an exported span carries it too.
    pub(crate) fn span(&mut self, action: &str) -> Option<Span> {
        let logged = self.logged.as_mut()?;
        let span = tracing::info_span!(
            target: TARGET,
            "call",
            action = bounded(action),
            session = logged.session.as_deref(),
            caller = logged.caller.as_deref(),
            client = logged.client.as_deref(),
            trace_id = tracing::field::Empty,
            outcome = tracing::field::Empty,
        );
        #[cfg(feature = "otlp")]
        {
            use opentelemetry::trace::TraceContextExt as _;
            use tracing_opentelemetry::OpenTelemetrySpanExt as _;
            if let Some(trace) = &logged.trace {
                trace.continue_in(&span);
            }
            // The trace the span is exported in: the client's, or one it starts.
            let exported = span.context().span().span_context().trace_id();
            if exported != opentelemetry::trace::TraceId::INVALID {
                logged.trace_id = Some(exported.to_string());
            }
        }
        if let Some(trace_id) = &logged.trace_id {
            span.record("trace_id", trace_id.as_str());
        }
        logged.span = Some(span.clone());
        Some(span)
    }

    /// The end of a call that reached an action (`outcome` `None` for a success, else the
    /// envelope's code): counted, timed and logged.
    pub(crate) fn finish(self, action: &Arc<str>, outcome: Option<&ErrorCode>) {
        self.end(action, Some(action), outcome);
    }

    /// The end of a call to a tool nothing serves: counted under `(unknown)`, logged with the
    /// name sent.
    pub(crate) fn unrouted(self, tool: &str, outcome: &ErrorCode) {
        self.end(tool, None, Some(outcome));
    }

    fn end(self, action: &str, label: Option<&Arc<str>>, outcome: Option<&ErrorCode>) {
        let elapsed = self.started.elapsed();
        let code = outcome.map_or(OK, ErrorCode::as_str);
        let label = label.map_or(SharedString::const_str(UNKNOWN), |action| SharedString::from(Arc::clone(action)));
        // A call that succeeds, the common case, labels its outcome without allocating.
        let outcome_label = match outcome {
            None => SharedString::const_str(OK),
            Some(code) => SharedString::from(code.as_str().to_owned()),
        };
        metrics::counter!(CALLS_TOTAL, "action" => label.clone(), "outcome" => outcome_label).increment(1);
        metrics::histogram!(CALL_DURATION_SECONDS, "action" => label).record(elapsed.as_secs_f64());
        let Some(logged) = self.logged else { return };
        if let Some(span) = &logged.span {
            span.record("outcome", code);
        }
        // Whole microseconds: exact, and short in a log line.
        let duration_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        tracing::info!(
            target: TARGET,
            action = bounded(action),
            outcome = code,
            duration_us,
            session = logged.session.as_deref(),
            caller = logged.caller.as_deref(),
            client = logged.client.as_deref(),
            trace_id = logged.trace_id.as_deref(),
            "call finished",
        );
    }
}

fn bounded(action: &str) -> &str {
    match action.char_indices().nth(MAX_ACTION_CHARS) {
        Some((end, _)) => &action[..end],
        None => action,
    }
}
