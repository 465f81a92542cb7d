//! MCP logging (`logging/setLevel`, `notifications/message`), bridged from `tracing`.
//!
//! A client that sets a level (`logging/setLevel`) hears the `tracing` events its own calls emit
//! at that level or above — the handler's, its middleware's, anything inside the call — as
//! `notifications/message`, in the order they happened and all before the call's result. Add
//! [`layer()`] to your subscriber, beside your own output with a filter of its own (a filter on
//! the whole subscriber would hide from clients what it hides from your log):
//!
//! ```
//! use tracing_subscriber::Layer as _;
//! use tracing_subscriber::layer::SubscriberExt as _;
//!
//! let subscriber = tracing_subscriber::registry()
//!     .with(tracing_subscriber::fmt::layer().with_filter(tracing_subscriber::filter::LevelFilter::WARN))
//!     .with(mcp_fusion::logging::layer());
//! # let _ = subscriber;
//! ```
//!
//! Until a client sets a level, the layer sees nothing; after, it looks only at events inside
//! the calls of a client that listens.
//!
//! With `mask_internal_errors`, a call's events are the operator's, not the client's: they may
//! hold what masking keeps from clients (a store's error, a query, a path). The client then
//! hears only what is addressed to it: for an internal error, the ERROR event on
//! [`INCIDENT_TARGET`] with its `action` and `incident` (the id its envelope names), never the
//! error; and the events a handler sends on [`CLIENT_TARGET`]:
//!
//! ```
//! tracing::info!(target: mcp_fusion::logging::CLIENT_TARGET, invoices = 3, "counted the invoices");
//! ```
//!
//! On MCP 2026-07-28 there is no `logging/setLevel`: a request names its level in its own
//! `_meta` (`io.modelcontextprotocol/logLevel`), and only that request's events at that level or
//! above go to the client, on the request's own stream; a request without the key hears nothing.
//! (2026-07-28 deprecates logging in favour of OpenTelemetry, SEP-2577, but keeps it.)

#![allow(
    deprecated,
    reason = "rmcp marks MCP logging deprecated (SEP-2577); it is offered to clients before 2026-07-28"
)]

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tracing::field::{Field, Visit};
use tracing::span;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

mod stderr;

pub use stderr::{LogGuard, NonBlockingStderr, stderr};

use crate::lock::locked;
use crate::observe::INCIDENT_TARGET;
use crate::session::same_session;

/// The target of events meant for the client whose call emits them: forwarded also when
/// internal errors are masked, when a call's other events are not.
pub const CLIENT_TARGET: &str = "mcp_fusion::client";

/// What a client hears of an incident: the action and the id its envelope names.
const INCIDENT_FIELDS: &[&str] = &["message", "action", "incident"];

/// Forwards the `tracing` events of a call to the client that made it, when that client set a
/// logging level and the event is at or above it. Use it through [`layer()`], which filters
/// it.
#[derive(Debug, Default, Clone, Copy)]
pub struct ClientLogLayer;

/// The filter [`init`] uses when `RUST_LOG` is unset or unreadable: the server's own events
/// at INFO, rmcp's at WARN.
pub const DEFAULT_FILTER: &str = "info,rmcp=warn";

/// Installs a log for a server in one line: `tracing` events to stderr (stdout is the stdio
/// transport's) through [`stderr()`], which drops lines rather than wait for a pipe nobody
/// reads, filtered by `RUST_LOG` (else [`DEFAULT_FILTER`]), every value escaped, plus
/// [`layer()`] so clients that set a level hear their calls' events. Keep the guard until
/// `main` returns: dropping it waits for the last lines. Installs nothing when a global
/// subscriber is already set; compose your own from [`stderr()`] and [`layer()`] for more.
///
/// ```
/// let _log = mcp_fusion::logging::init();
/// tracing::info!("serving"); // on stderr: `… INFO serving`
/// ```
pub fn init() -> LogGuard {
    use std::io::IsTerminal as _;
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;

    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_FILTER));
    let (writer, guard) = stderr();
    let log = tracing_subscriber::fmt::layer()
        .with_writer(writer)
        .with_ansi(std::io::stderr().is_terminal())
        .fmt_fields(crate::observe::EscapedFields::new())
        .with_filter(filter);
    // Err only when a subscriber is already set, which is the caller's to keep.
    let _ = tracing_subscriber::registry().with(log).with(layer()).try_init();
    guard
}

/// The layer, filtered so that it sees nothing until a client sets a level.
pub fn layer<S>() -> impl tracing_subscriber::Layer<S>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    tracing_subscriber::Layer::with_filter(ClientLogLayer, OnceAClientListens)
}

/// Whether any client ever set a level: before, the layer's filter enables nothing.
static ANY_LEVEL: AtomicBool = AtomicBool::new(false);

/// How many calls' spans are listed: with none, an event is not looked at.
static LISTED: AtomicUsize = AtomicUsize::new(0);

/// The filter of [`layer()`]: everything once a client has set a level, nothing before.
#[derive(Debug, Clone, Copy)]
struct OnceAClientListens;

impl<S> tracing_subscriber::layer::Filter<S> for OnceAClientListens {
    fn enabled(&self, _metadata: &tracing::Metadata<'_>, _cx: &Context<'_, S>) -> bool {
        ANY_LEVEL.load(Ordering::Relaxed)
    }

    // Before a client sets a level, no callsite interests the layer; the first level set
    // rebuilds every callsite's interest, and from then on each event is asked about.
    fn callsite_enabled(&self, _metadata: &'static tracing::Metadata<'static>) -> tracing::subscriber::Interest {
        if ANY_LEVEL.load(Ordering::Relaxed) {
            tracing::subscriber::Interest::sometimes()
        } else {
            tracing::subscriber::Interest::never()
        }
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        if ANY_LEVEL.load(Ordering::Relaxed) { None } else { Some(tracing::level_filters::LevelFilter::OFF) }
    }
}

/// From now on the layer looks at events: the first time, every callsite's interest is
/// rebuilt, so that those it ignored until now reach it.
pub(crate) fn someone_listens() {
    // Read first: every call that names a level comes here, and a write each time would bounce
    // the flag's cache line between the cores.
    if !ANY_LEVEL.load(Ordering::Relaxed) && !ANY_LEVEL.swap(true, Ordering::Relaxed) {
        tracing::callsite::rebuild_interest_cache();
    }
}

/// The levels the sessions set, by session; `any` spares every call the lock while none is
/// set.
#[derive(Default)]
pub(crate) struct Levels {
    set: Mutex<Vec<(Peer<RoleServer>, LoggingLevel)>>,
    any: AtomicBool,
}

impl std::fmt::Debug for Levels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Levels").field("sessions", &locked(&self.set).len()).finish()
    }
}

impl Levels {
    /// `peer` wants the messages at `level` and above.
    pub(crate) fn set(&self, peer: Peer<RoleServer>, level: LoggingLevel) {
        let mut levels = locked(&self.set);
        levels.retain(|(known, _)| !known.is_transport_closed() && !same_session(known, &peer));
        levels.push((peer, level));
        drop(levels);
        self.any.store(true, Ordering::Relaxed);
        someone_listens();
    }

    /// The level `peer` set, if any.
    pub(crate) fn of(&self, peer: &Peer<RoleServer>) -> Option<LoggingLevel> {
        if !self.any.load(Ordering::Relaxed) {
            return None;
        }
        locked(&self.set).iter().find(|(known, _)| same_session(known, peer)).map(|(_, level)| *level)
    }
}

/// Where the events of one call's span go: into the queue of the task that hands them to the
/// client one by one, so they reach it in the order they happened.
struct Listener {
    level: LoggingLevel,
    /// Internal errors are masked: only what is addressed to the client goes.
    masked: bool,
    messages: mpsc::UnboundedSender<LoggingMessageNotificationParam>,
}

/// The spans of calls whose client listens, by span id.
fn listening() -> &'static Mutex<HashMap<span::Id, Listener>> {
    static LISTENING: OnceLock<Mutex<HashMap<span::Id, Listener>>> = OnceLock::new();
    LISTENING.get_or_init(Mutex::default)
}

/// Keeps a call's span listed while the call runs, and delivers its events.
pub(crate) struct Listening {
    id: Option<span::Id>,
    delivery: Option<JoinHandle<()>>,
}

impl Listening {
    /// Lists `span` (when a subscriber gave it an id) for `peer`, at `level`; `masked` when
    /// internal errors are.
    pub(crate) fn start(span: &tracing::Span, peer: Peer<RoleServer>, level: LoggingLevel, masked: bool) -> Listening {
        let Some(id) = span.id() else { return Listening { id: None, delivery: None } };
        let (messages, mut queue) = mpsc::unbounded_channel();
        let delivery = tokio::spawn(async move {
            while let Some(message) = queue.recv().await {
                // An event of this delivery's own failure would come back here: it is not logged.
                let _ = peer.notify_logging_message(message).await;
            }
        });
        locked(listening()).insert(id.clone(), Listener { level, masked, messages });
        LISTED.fetch_add(1, Ordering::Relaxed);
        Listening { id: Some(id), delivery: Some(delivery) }
    }

    /// Unlists the span and waits until its events are handed to the client, so that they
    /// reach it before the call's result.
    pub(crate) async fn finish(mut self) {
        self.unlist();
        if let Some(delivery) = self.delivery.take() {
            let _ = delivery.await;
        }
    }

    /// Unlisting drops the queue's sender: the delivery ends once the queue is empty.
    fn unlist(&mut self) {
        if let Some(id) = self.id.take() {
            locked(listening()).remove(&id);
            LISTED.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        // A cancelled call: its queued events are still delivered, by the task left running.
        self.unlist();
    }
}

/// MCP's level for a `tracing` level: there is no trace, and warn is warning.
fn level_of(level: &tracing::Level) -> LoggingLevel {
    match *level {
        tracing::Level::ERROR => LoggingLevel::Error,
        tracing::Level::WARN => LoggingLevel::Warning,
        tracing::Level::INFO => LoggingLevel::Info,
        _ => LoggingLevel::Debug,
    }
}

fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The fields of an event its client hears: all of them, some, or none.
enum Heard {
    All,
    Only(&'static [&'static str]),
    Nothing,
}

impl Heard {
    /// Without masking, every event whole; with it, those addressed to the client whole, an
    /// incident without its error, nothing else.
    fn of(target: &str, masked: bool) -> Heard {
        match target {
            _ if !masked => Heard::All,
            CLIENT_TARGET => Heard::All,
            INCIDENT_TARGET => Heard::Only(INCIDENT_FIELDS),
            _ => Heard::Nothing,
        }
    }
}

/// An event's fields as JSON: `message`, then the rest by name; `only` those when set.
#[derive(Default)]
struct Fields {
    map: Map<String, Value>,
    only: Option<&'static [&'static str]>,
}

impl Fields {
    fn insert(&mut self, field: &Field, value: impl FnOnce() -> Value) {
        if self.only.is_none_or(|only| only.contains(&field.name())) {
            self.map.insert(field.name().to_owned(), value());
        }
    }
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.insert(field, || {
            let mut text = String::new();
            let _ = write!(text, "{value:?}");
            Value::String(text)
        });
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.insert(field, || Value::String(value.to_owned()));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.insert(field, || Value::from(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.insert(field, || Value::from(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.insert(field, || Value::Bool(value));
    }
}

impl<S> tracing_subscriber::Layer<S> for ClientLogLayer
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        if LISTED.load(Ordering::Relaxed) == 0 {
            return;
        }
        let Some(scope) = ctx.event_scope(event) else { return };
        let level = level_of(event.metadata().level());
        let target = {
            let listening = locked(listening());
            if listening.is_empty() {
                return;
            }
            scope
                .into_iter()
                .find_map(|span| listening.get(&span.id()).map(|l| (l.messages.clone(), l.level, l.masked)))
        };
        let Some((messages, min, masked)) = target else { return };
        if rank(level) < rank(min) {
            return;
        }
        let only = match Heard::of(event.metadata().target(), masked) {
            Heard::All => None,
            Heard::Only(fields) => Some(fields),
            Heard::Nothing => return,
        };
        let mut fields = Fields { map: Map::new(), only };
        event.record(&mut fields);
        let message = LoggingMessageNotificationParam::new(level, Value::Object(fields.map))
            .with_logger(event.metadata().target());
        // Fails only when the call has ended and its delivery with it: the event is late.
        let _ = messages.send(message);
    }
}
