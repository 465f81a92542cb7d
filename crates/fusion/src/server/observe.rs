//! What an operator sees of each call, through `tracing`: a span the handler's own events
//! inherit (so they carry the action and the session), and one INFO event when the call ends
//! with the action, its outcome (`ok` or the envelope's code), how long it took, the session
//! and the caller. Never an argument's value: arguments may hold a customer's data.

use std::sync::Arc;
use std::time::Instant;

use mcp_fusion_wire::ErrorCode;
use tracing::{Level, Span};

use crate::auth::Caller;
use crate::transport::RequestInfo;

/// The target of the span and the event, to filter on (`RUST_LOG=mcp_fusion::call=info`).
pub(crate) const TARGET: &str = "mcp_fusion::call";

/// The longest action name an event carries: a tool name nothing serves comes from the
/// client, and a log line is no place for a megabyte of it.
const MAX_ACTION_CHARS: usize = 128;

/// One call being watched, from its start; `None` from [`CallRecord::start`] when nothing
/// listens, so an unwatched call pays one check.
pub(crate) struct CallRecord {
    started: Instant,
    session: Option<Arc<str>>,
    caller: Option<String>,
}

impl CallRecord {
    /// Starts watching the call of `request`, if anything listens at INFO.
    pub(crate) fn start(request: &RequestInfo) -> Option<CallRecord> {
        if !tracing::enabled!(target: TARGET, Level::INFO) {
            return None;
        }
        let caller = match &request.caller {
            Caller::Authenticated(identity) => Some(identity.subject.clone()),
            Caller::Anonymous | Caller::Refused(_) => None,
        };
        Some(CallRecord { started: Instant::now(), session: request.session_id.clone(), caller })
    }

    /// The span the call runs in.
    pub(crate) fn span(&self, action: &str) -> Span {
        tracing::info_span!(
            target: TARGET,
            "call",
            action = bounded(action),
            session = self.session.as_deref(),
            caller = self.caller.as_deref(),
        )
    }

    /// The one event of the call: `outcome` is `None` for a success, else the envelope's code.
    pub(crate) fn finish(self, action: &str, outcome: Option<&ErrorCode>) {
        // Whole microseconds: exact, and short in a log line.
        let duration_us = u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX);
        tracing::info!(
            target: TARGET,
            action = bounded(action),
            outcome = outcome.map_or("ok", ErrorCode::as_str),
            duration_us,
            session = self.session.as_deref(),
            caller = self.caller.as_deref(),
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
