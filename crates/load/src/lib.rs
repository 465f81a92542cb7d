//! A closed-loop load generator for MCP tools over Streamable HTTP.
//!
//! [`run`] opens one MCP session per client, each its own rmcp client, then every client calls
//! the tool again as soon as its previous call has returned, until the duration is over or the
//! call budget is spent. Every call ends in exactly one [`Outcome`]: `OK`, the code of the
//! envelope the server answered with instead of a value (read with [`mcp_fusion_wire`]), or a
//! transport or protocol error by kind, `client_timeout` included. The [`Report`] holds the
//! counts, the rate and the latency percentiles, overall and per outcome; it counts the calls
//! started apart from the outcomes, so a call lost on the way shows as `started > answered`, and
//! can count the outcomes per stretch of time ([`Config::timeline`]) to show when they changed.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mcp_fusion_wire::ParsedResult;
use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::{ClientInitializeError, RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpError;
use serde_json::{Value, json};

/// When a run stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Clients start calls until this much time has passed after the warm-up; calls in flight
    /// then finish and count.
    Duration(Duration),
    /// This many calls in all, shared by the clients.
    Calls(u64),
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// The MCP endpoint, like `http://127.0.0.1:8080/mcp`.
    pub url: String,
    /// Concurrent clients, each with its own session.
    pub clients: usize,
    /// When to stop.
    pub stop: Stop,
    /// Calls made during this first stretch are not counted.
    pub warmup: Duration,
    /// The tool to call.
    pub tool: String,
    /// Its arguments.
    pub arguments: JsonObject,
    /// A call (or a session's opening) without an answer by then counts as the error
    /// `client_timeout`.
    pub call_timeout: Duration,
    /// Also count the outcomes per stretch of this length, by when each call started
    /// ([`Report::timeline`]); `None` for totals only.
    pub timeline: Option<Duration>,
}

impl Config {
    /// 16 clients calling `billing` with `get_invoice` for 10 seconds, no warm-up, 30 s per call.
    pub fn new(url: impl Into<String>) -> Config {
        let arguments = json!({"action": "get_invoice", "id": "inv_2026_0001"});
        Config {
            url: url.into(),
            clients: 16,
            stop: Stop::Duration(Duration::from_secs(10)),
            warmup: Duration::ZERO,
            tool: "billing".to_owned(),
            arguments: arguments.as_object().cloned().unwrap_or_default(),
            call_timeout: Duration::from_secs(30),
            timeline: None,
        }
    }
}

/// How one call ended. Ordered: `OK`, then envelope codes, then errors.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    /// A result with `isError` false (or absent) that is not a warning alone: a value, with or
    /// without warnings riding on it.
    Ok,
    /// An envelope instead of a value, by its code: a result with `isError` true
    /// (`SERVER_BUSY`, `RATE_LIMITED`, …; `UNKNOWN` for text that is not an envelope), or one
    /// with `isError` false whose only content is warnings (`HANDOFF_CONNECTING`: the call was
    /// not run, so counting it as `OK` would hide it).
    Envelope(String),
    /// No result: a transport or protocol error, by kind (`transport_send`, `transport_closed`,
    /// `mcp_error -32603`, `client_timeout`, …).
    Error(String),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Ok => f.write_str("OK"),
            Outcome::Envelope(code) => f.write_str(code),
            Outcome::Error(kind) => write!(f, "error: {kind}"),
        }
    }
}

/// Latency percentiles, at microsecond resolution (3 significant digits).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Latency {
    /// Median.
    pub p50: Duration,
    /// 90th percentile.
    pub p90: Duration,
    /// 99th percentile.
    pub p99: Duration,
    /// The slowest call.
    pub max: Duration,
    /// The mean.
    pub mean: Duration,
}

impl Latency {
    fn of(histogram: &Histogram<u64>) -> Latency {
        if histogram.is_empty() {
            return Latency::default();
        }
        let at = |q: f64| Duration::from_micros(histogram.value_at_quantile(q));
        Latency {
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            max: Duration::from_micros(histogram.max()),
            mean: Duration::from_secs_f64(histogram.mean() / 1e6),
        }
    }

    fn to_json(self) -> Value {
        let us = |d: Duration| d.as_micros() as u64;
        json!({"p50": us(self.p50), "p90": us(self.p90), "p99": us(self.p99), "max": us(self.max), "mean": us(self.mean)})
    }
}

/// The calls that ended one way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutcomeStats {
    /// How many.
    pub count: u64,
    /// How long they took.
    pub latency: Latency,
    /// The message of the first one (the envelope's `<message>` or the error's text), on one
    /// line; `None` for `OK`.
    pub first_message: Option<String>,
}

/// The outcomes counted per stretch of time, by when each call started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeline {
    /// The length of each stretch.
    pub bucket: Duration,
    /// Stretch `i` holds the calls started from `i × bucket` to `(i + 1) × bucket` after the
    /// warm-up, every stretch up to the last call's (empty ones too).
    pub buckets: Vec<BTreeMap<Outcome, u64>>,
}

/// The result of a run.
#[derive(Debug, Clone)]
pub struct Report {
    /// The endpoint.
    pub url: String,
    /// The tool called.
    pub tool: String,
    /// Concurrent clients.
    pub clients: usize,
    /// From the end of the warm-up to the last counted answer.
    pub elapsed: Duration,
    /// Latency of every counted call, whatever its outcome.
    pub latency: Latency,
    /// Every outcome seen, with its count and latency.
    pub outcomes: BTreeMap<Outcome, OutcomeStats>,
    /// Sessions opened, counting the reopening of closed ones.
    pub sessions_opened: u64,
    /// Failures to open a session, by kind (these are not calls).
    pub connect_errors: BTreeMap<String, u64>,
    /// Counted calls sent, tallied as each is sent: [`Report::calls`] tallies them as each ends,
    /// so the two differ only if a call got no outcome at all.
    pub started: u64,
    /// The outcomes per stretch of time, when [`Config::timeline`] asked for them.
    pub timeline: Option<Timeline>,
}

impl Report {
    /// Counted calls that ended, one way or another (with `OK`, an envelope or an error).
    pub fn calls(&self) -> u64 {
        self.outcomes.values().map(|stats| stats.count).sum()
    }

    /// Whether every call started ended in exactly one outcome: none lost.
    pub fn all_answered(&self) -> bool {
        self.started == self.calls()
    }

    /// Counted calls per second of [`Report::elapsed`].
    pub fn calls_per_second(&self) -> f64 {
        let seconds = self.elapsed.as_secs_f64();
        if seconds > 0.0 { self.calls() as f64 / seconds } else { 0.0 }
    }

    /// Calls that ended with `outcome`.
    pub fn count(&self, outcome: &Outcome) -> u64 {
        self.outcomes.get(outcome).map_or(0, |stats| stats.count)
    }

    /// Calls answered with `isError` false.
    pub fn ok(&self) -> u64 {
        self.count(&Outcome::Ok)
    }

    /// Calls answered with an envelope of this code.
    pub fn envelope(&self, code: &str) -> u64 {
        self.count(&Outcome::Envelope(code.to_owned()))
    }

    /// Calls that got no result (transport and protocol errors).
    pub fn errors(&self) -> u64 {
        self.outcomes.iter().filter(|(outcome, _)| matches!(outcome, Outcome::Error(_))).map(|(_, s)| s.count).sum()
    }

    /// The report as one JSON object (latencies in microseconds).
    pub fn to_json(&self) -> Value {
        let mut envelopes = serde_json::Map::new();
        let mut errors = serde_json::Map::new();
        let mut by_outcome = serde_json::Map::new();
        for (outcome, stats) in &self.outcomes {
            match outcome {
                Outcome::Ok => {}
                Outcome::Envelope(code) => drop(envelopes.insert(code.clone(), stats.count.into())),
                Outcome::Error(kind) => drop(errors.insert(kind.clone(), stats.count.into())),
            }
            by_outcome.insert(
                outcome.to_string(),
                json!({"count": stats.count, "latency_us": stats.latency.to_json(), "first_message": stats.first_message}),
            );
        }
        let mut report = json!({
            "url": self.url,
            "tool": self.tool,
            "clients": self.clients,
            "elapsed_s": (self.elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
            "started": self.started,
            "calls": self.calls(),
            "all_answered": self.all_answered(),
            "calls_per_s": (self.calls_per_second() * 10.0).round() / 10.0,
            "latency_us": self.latency.to_json(),
            "ok": self.ok(),
            "envelopes": envelopes,
            "errors": errors,
            "by_outcome": by_outcome,
            "sessions_opened": self.sessions_opened,
            "connect_errors": self.connect_errors,
        });
        if let Some(timeline) = &self.timeline {
            let bucket_s = timeline.bucket.as_secs_f64();
            let buckets: Vec<Value> = timeline
                .buckets
                .iter()
                .enumerate()
                .map(|(i, counts)| {
                    let counts: serde_json::Map<String, Value> =
                        counts.iter().map(|(outcome, n)| (outcome.to_string(), (*n).into())).collect();
                    json!({"from_s": (i as f64 * bucket_s * 1000.0).round() / 1000.0, "outcomes": counts})
                })
                .collect();
            report["timeline"] = json!({"bucket_s": bucket_s, "buckets": buckets});
        }
        report
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = &self.latency;
        writeln!(
            f,
            "fusion-load: {}, tool {}, {} clients, {:.2} s",
            self.url,
            self.tool,
            self.clients,
            self.elapsed.as_secs_f64()
        )?;
        write!(f, "calls     {} ({:.1}/s)", self.calls(), self.calls_per_second())?;
        if self.all_answered() {
            writeln!(f, ", every call started answered")?;
        } else {
            writeln!(f, "; {} started, {} without an outcome", self.started, self.started.abs_diff(self.calls()))?;
        }
        writeln!(
            f,
            "latency   p50 {}  p90 {}  p99 {}  max {}",
            human(l.p50),
            human(l.p90),
            human(l.p99),
            human(l.max)
        )?;
        writeln!(f, "outcomes")?;
        let width = self.outcomes.keys().map(|o| o.to_string().len()).max().unwrap_or(2);
        for (outcome, stats) in &self.outcomes {
            write!(
                f,
                "  {:<width$}  {:>9}  p50 {:>9}  p99 {:>9}",
                outcome.to_string(),
                stats.count,
                human(stats.latency.p50),
                human(stats.latency.p99),
            )?;
            match &stats.first_message {
                Some(message) => writeln!(f, "  first: {}", shorten(message, 110))?,
                None => writeln!(f)?,
            }
        }
        write!(f, "sessions  {} opened", self.sessions_opened)?;
        if !self.connect_errors.is_empty() {
            let failed: Vec<String> = self.connect_errors.iter().map(|(kind, n)| format!("{kind} ×{n}")).collect();
            write!(f, "; failed to open: {}", failed.join(", "))?;
        }
        if let Some(timeline) = &self.timeline {
            write!(f, "\ntimeline  calls by the {} they started in", human(timeline.bucket))?;
            for (i, counts) in timeline.buckets.iter().enumerate() {
                let from = i as f64 * timeline.bucket.as_secs_f64();
                let counts: Vec<String> = counts.iter().map(|(outcome, n)| format!("{outcome} {n}")).collect();
                write!(f, "\n  from {from:>7.2} s  {}", counts.join(", "))?;
            }
        }
        Ok(())
    }
}

/// `850 µs`, `1.23 ms`, `2.50 s`.
pub fn human(duration: Duration) -> String {
    let us = duration.as_micros();
    if us < 1_000 {
        format!("{us} µs")
    } else if us < 1_000_000 {
        format!("{:.2} ms", us as f64 / 1e3)
    } else {
        format!("{:.2} s", us as f64 / 1e6)
    }
}

fn shorten(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// Why a run could not take place.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// No client could open a session.
    #[error("cannot open an MCP session at {url}: {reason}")]
    Unreachable {
        /// The endpoint.
        url: String,
        /// The first failure, on one line.
        reason: String,
    },
    /// The configuration cannot run.
    #[error("{0}")]
    Config(String),
    /// A client task panicked.
    #[error("a client task failed: {0}")]
    Task(String),
}

type Client = RunningService<RoleClient, ()>;

/// Runs the load and reports. Fails only when no client can open a session (or a task panics):
/// errors during the run are counted, not returned.
pub async fn run(config: Config) -> Result<Report, LoadError> {
    if config.clients == 0 {
        return Err(LoadError::Config("at least one client is needed".to_owned()));
    }
    if config.stop == Stop::Calls(0) {
        return Err(LoadError::Config("at least one call is needed".to_owned()));
    }
    if config.timeline.is_some_and(|bucket| bucket.as_micros() == 0) {
        return Err(LoadError::Config("a timeline's stretches must be at least a microsecond long".to_owned()));
    }
    let config = Arc::new(config);

    // Every session is open before the clock starts.
    let opening: Vec<_> = (0..config.clients)
        .map(|_| {
            let config = Arc::clone(&config);
            tokio::spawn(async move { connect(&config).await })
        })
        .collect();
    let mut clients = Vec::with_capacity(config.clients);
    let mut first_failure = None;
    let mut connect_errors = BTreeMap::<String, u64>::new();
    for opened in opening {
        match opened.await.map_err(|e| LoadError::Task(e.to_string()))? {
            Ok(client) => clients.push(Some(client)),
            Err((kind, reason)) => {
                *connect_errors.entry(kind).or_default() += 1;
                first_failure.get_or_insert(reason);
                clients.push(None);
            }
        }
    }
    if clients.iter().all(Option::is_none) {
        let reason = first_failure.unwrap_or_else(|| "no session opened".to_owned());
        return Err(LoadError::Unreachable { url: config.url.clone(), reason });
    }

    let measure_from = Instant::now() + config.warmup;
    let shared = Arc::new(Shared {
        end: match config.stop {
            Stop::Duration(duration) => Some(measure_from + duration),
            Stop::Calls(_) => None,
        },
        budget: match config.stop {
            Stop::Calls(calls) => Some(calls),
            Stop::Duration(_) => None,
        },
        claimed: AtomicU64::new(0),
        started: AtomicU64::new(0),
        measure_from,
        config: Arc::clone(&config),
    });
    let opened = clients.iter().filter(|c| c.is_some()).count() as u64;
    let tasks: Vec<_> =
        clients.into_iter().map(|client| tokio::spawn(client_loop(Arc::clone(&shared), client))).collect();

    let mut all = Histogram::<u64>::new_with_bounds(1, MAX_MICROS, 3).expect("valid bounds");
    let mut per = BTreeMap::<Outcome, (Histogram<u64>, Option<String>)>::new();
    let mut last_done = None::<Instant>;
    let mut sessions_opened = opened;
    let mut buckets = Vec::<BTreeMap<Outcome, u64>>::new();
    for task in tasks {
        let tally = task.await.map_err(|e| LoadError::Task(e.to_string()))?;
        if buckets.len() < tally.buckets.len() {
            buckets.resize_with(tally.buckets.len(), BTreeMap::new);
        }
        for (into, from) in buckets.iter_mut().zip(tally.buckets) {
            for (outcome, n) in from {
                *into.entry(outcome).or_default() += n;
            }
        }
        for (outcome, (histogram, first)) in tally.outcomes {
            all.add(&histogram).expect("same bounds");
            let entry = per.entry(outcome).or_insert_with(|| (new_histogram(), None));
            entry.0.add(&histogram).expect("same bounds");
            if entry.1.is_none() {
                entry.1 = first;
            }
        }
        for (kind, n) in tally.connect_errors {
            *connect_errors.entry(kind).or_default() += n;
        }
        sessions_opened += tally.sessions_opened;
        last_done = last_done.max(tally.last_done);
    }
    let elapsed = match (config.stop, last_done) {
        (_, Some(done)) => done.saturating_duration_since(measure_from),
        (Stop::Duration(duration), None) => duration,
        (Stop::Calls(_), None) => Duration::ZERO,
    };
    let outcomes = per
        .into_iter()
        .map(|(outcome, (histogram, first_message))| {
            let stats = OutcomeStats { count: histogram.len(), latency: Latency::of(&histogram), first_message };
            (outcome, stats)
        })
        .collect();
    Ok(Report {
        url: config.url.clone(),
        tool: config.tool.clone(),
        clients: config.clients,
        elapsed,
        latency: Latency::of(&all),
        outcomes,
        sessions_opened,
        connect_errors,
        started: shared.started.load(Ordering::Acquire),
        timeline: config.timeline.map(|bucket| Timeline { bucket, buckets }),
    })
}

/// An hour, in microseconds: the histograms' ceiling (longer calls count as an hour).
const MAX_MICROS: u64 = 3_600_000_000;

fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_MICROS, 3).expect("valid bounds")
}

struct Shared {
    config: Arc<Config>,
    measure_from: Instant,
    end: Option<Instant>,
    budget: Option<u64>,
    claimed: AtomicU64,
    /// Counted calls sent, kept apart from the tallies of their outcomes so that the report can
    /// check one against the other.
    started: AtomicU64,
}

impl Shared {
    fn over(&self, now: Instant) -> bool {
        match (self.end, self.budget) {
            (Some(end), _) => now >= end,
            (None, Some(budget)) => self.claimed.load(Ordering::Acquire) >= budget,
            (None, None) => true,
        }
    }

    /// Whether a call starting now may be counted (in `Calls` mode, takes one from the budget).
    fn claim(&self) -> bool {
        match self.budget {
            Some(budget) => self.claimed.fetch_add(1, Ordering::AcqRel) < budget,
            None => true,
        }
    }
}

#[derive(Default)]
struct Tally {
    outcomes: BTreeMap<Outcome, (Histogram<u64>, Option<String>)>,
    connect_errors: BTreeMap<String, u64>,
    sessions_opened: u64,
    last_done: Option<Instant>,
    buckets: Vec<BTreeMap<Outcome, u64>>,
}

impl Tally {
    /// Counts one call; `bucket` is the stretch of the timeline it started in, if one is kept.
    fn record(&mut self, outcome: Outcome, message: Option<String>, took: Duration, bucket: Option<usize>) {
        if let Some(i) = bucket {
            if self.buckets.len() <= i {
                self.buckets.resize_with(i + 1, BTreeMap::new);
            }
            *self.buckets[i].entry(outcome.clone()).or_default() += 1;
        }
        let entry = self.outcomes.entry(outcome).or_insert_with(|| (new_histogram(), None));
        entry.0.saturating_record((took.as_micros() as u64).max(1));
        if entry.1.is_none() {
            entry.1 = message;
        }
    }
}

async fn client_loop(shared: Arc<Shared>, mut client: Option<Client>) -> Tally {
    let config = &shared.config;
    let mut tally = Tally::default();
    let params = CallToolRequestParams::new(config.tool.clone()).with_arguments(config.arguments.clone());
    loop {
        if shared.over(Instant::now()) {
            break;
        }
        // A session whose transport closed is reopened (and counted) before the next call.
        if client.as_ref().is_some_and(|c| c.is_transport_closed())
            && let Some(closed) = client.take()
        {
            close(closed).await;
        }
        let Some(session) = client.as_ref() else {
            match connect(config).await {
                Ok(opened) => {
                    tally.sessions_opened += 1;
                    client = Some(opened);
                }
                Err((kind, _)) => {
                    *tally.connect_errors.entry(kind).or_default() += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
            continue;
        };
        let start = Instant::now();
        let counted = start >= shared.measure_from;
        if counted {
            if !shared.claim() {
                break;
            }
            shared.started.fetch_add(1, Ordering::AcqRel);
        }
        // The timeout is what makes a hung call an outcome (`client_timeout`) instead of a
        // run that never ends.
        let answer = tokio::time::timeout(config.call_timeout, session.call_tool(params.clone())).await;
        let done = Instant::now();
        if counted {
            let (outcome, message) = classify(answer, config.call_timeout);
            let bucket = config.timeline.map(|width| bucket_of(start - shared.measure_from, width));
            tally.record(outcome, message, done - start, bucket);
            tally.last_done = Some(done);
        }
    }
    if let Some(client) = client {
        close(client).await;
    }
    tally
}

/// Opens a session; on failure, the error's kind and its text on one line.
async fn connect(config: &Config) -> Result<Client, (String, String)> {
    let transport = StreamableHttpClientTransport::from_uri(config.url.clone());
    match tokio::time::timeout(config.call_timeout, ().serve(transport)).await {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(ClientInitializeError::TransportError { error, context })) => {
            Err(("initialize".to_owned(), format!("{} (on {context})", transport_text(&*error.error))))
        }
        Ok(Err(error)) => Err(("initialize".to_owned(), one_line(&error))),
        Err(_) => {
            Err(("client_timeout".to_owned(), format!("no answer to initialize within {}", human(config.call_timeout))))
        }
    }
}

/// The stretch of `width` that `since` falls in.
fn bucket_of(since: Duration, width: Duration) -> usize {
    usize::try_from(since.as_micros() / width.as_micros().max(1)).unwrap_or(usize::MAX)
}

async fn close(client: Client) {
    let _ = tokio::time::timeout(Duration::from_secs(5), client.cancel()).await;
}

fn classify(
    answer: Result<Result<CallToolResult, ServiceError>, tokio::time::error::Elapsed>,
    call_timeout: Duration,
) -> (Outcome, Option<String>) {
    match answer {
        Err(_) => {
            (Outcome::Error("client_timeout".to_owned()), Some(format!("no answer within {}", human(call_timeout))))
        }
        Ok(Err(ServiceError::TransportSend(error))) => {
            (Outcome::Error("transport_send".to_owned()), Some(transport_text(&*error.error)))
        }
        Ok(Err(error)) => (Outcome::Error(error_kind(&error)), Some(one_line(&error))),
        Ok(Ok(result)) if result.is_error == Some(true) => {
            let text: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
            let envelope = mcp_fusion_wire::parse(&text.join("\n"));
            (Outcome::Envelope(envelope.error.code.as_str().to_owned()), Some(flatten(&envelope.error.message)))
        }
        Ok(Ok(result)) => match lone_warning(&result) {
            Some(warning) => {
                (Outcome::Envelope(warning.error.code.as_str().to_owned()), Some(flatten(&warning.error.message)))
            }
            None => (Outcome::Ok, None),
        },
    }
}

/// The first warning of a result with `isError` false that holds nothing but warnings (no
/// structured content, every block a `<tool_error severity="warning">`): an answer in place of
/// a value, as `HANDOFF_CONNECTING` is. A value with warnings riding on it is not one.
fn lone_warning(result: &CallToolResult) -> Option<mcp_fusion_wire::Envelope> {
    if result.structured_content.is_some() || result.content.is_empty() {
        return None;
    }
    let mut texts = Vec::with_capacity(result.content.len());
    for block in &result.content {
        // The cheap test first: a value's blocks are not parsed as envelopes on every call.
        let text = block.as_text()?.text.as_str();
        if !text.trim_start().starts_with("<tool_error") {
            return None;
        }
        texts.push(text);
    }
    let read = ParsedResult::from_blocks(&texts, false);
    (read.warnings.len() == texts.len()).then(|| read.warnings.into_iter().next()).flatten()
}

fn error_kind(error: &ServiceError) -> String {
    match error {
        ServiceError::McpError(data) => format!("mcp_error {}", data.code.0),
        ServiceError::TransportSend(_) => "transport_send".to_owned(),
        ServiceError::TransportClosed => "transport_closed".to_owned(),
        ServiceError::UnexpectedResponse => "unexpected_response".to_owned(),
        ServiceError::SubscriptionLagged { .. } => "subscription_lagged".to_owned(),
        ServiceError::Cancelled { .. } => "cancelled".to_owned(),
        ServiceError::Timeout { .. } => "timeout".to_owned(),
        ServiceError::InputRequiredRoundsExceeded { .. } => "input_required_rounds".to_owned(),
        _ => "other".to_owned(),
    }
}

/// A transport's error without rmcp's wrapping: reqwest's error with its causes (`… tcp
/// connect error: Connection refused`), which rmcp's `Client error` does not expose as a source.
fn transport_text(error: &(dyn std::error::Error + Send + Sync + 'static)) -> String {
    match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::Client(inner)) => one_line(inner),
        _ => one_line(error),
    }
}

/// The error and its sources, `: `-joined on one line (a source already quoted is skipped).
fn one_line(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    flatten(&text)
}

fn flatten(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        assert_eq!(human(Duration::from_micros(850)), "850 µs");
        assert_eq!(human(Duration::from_micros(1234)), "1.23 ms");
        assert_eq!(human(Duration::from_millis(2500)), "2.50 s");
    }

    #[test]
    fn envelopes_are_classified_by_code() {
        let busy = mcp_fusion_wire::ToolError::server_busy("Full.").render();
        let result = CallToolResult::error(vec![rmcp::model::ContentBlock::text(busy)]);
        let (outcome, message) = classify(Ok(Ok(result)), Duration::from_secs(1));
        assert_eq!((outcome, message.as_deref()), (Outcome::Envelope("SERVER_BUSY".into()), Some("Full.")));
        let ok = CallToolResult::success(vec![rmcp::model::ContentBlock::text("fine")]);
        assert_eq!(classify(Ok(Ok(ok)), Duration::from_secs(1)).0, Outcome::Ok);
        let closed = classify(Ok(Err(ServiceError::TransportClosed)), Duration::from_secs(1)).0;
        assert_eq!(closed, Outcome::Error("transport_closed".into()));
    }

    #[test]
    fn a_warning_alone_is_counted_by_its_code_and_a_value_with_one_as_ok() {
        use mcp_fusion_wire::{ErrorCode, ToolError};
        use rmcp::model::ContentBlock;
        let text = |t: &str| ContentBlock::text(t.to_owned());
        let connecting =
            ToolError::new(ErrorCode::HandoffConnecting, "Still connecting.").warning().retry_after(2).render();
        let deprecated = ToolError::deprecated("Old.").render();
        let classify_ok = |result| classify(Ok(Ok(result)), Duration::from_secs(1));

        let alone = CallToolResult::success(vec![text(&connecting), text(&deprecated)]);
        let (outcome, message) = classify_ok(alone);
        assert_eq!(
            (outcome, message.as_deref()),
            (Outcome::Envelope("HANDOFF_CONNECTING".into()), Some("Still connecting."))
        );

        // A value, in a block or in structured content, makes it a success whatever rides on it.
        let with_value = CallToolResult::success(vec![text("{\"id\": 1}"), text(&deprecated)]);
        assert_eq!(classify_ok(with_value).0, Outcome::Ok);
        let mut structured = CallToolResult::success(vec![text(&deprecated)]);
        structured.structured_content = Some(json!({"id": 1}));
        assert_eq!(classify_ok(structured).0, Outcome::Ok);
        // `isError` false is the server's word for success unless every block is a warning.
        let not_a_warning = ToolError::not_found("Gone.").render();
        assert_eq!(classify_ok(CallToolResult::success(vec![text(&not_a_warning)])).0, Outcome::Ok);
        assert_eq!(classify_ok(CallToolResult::success(vec![])).0, Outcome::Ok);
    }

    #[test]
    fn calls_fall_in_the_stretch_they_started_in() {
        let second = Duration::from_secs(1);
        assert_eq!(bucket_of(Duration::ZERO, second), 0);
        assert_eq!(bucket_of(Duration::from_millis(999), second), 0);
        assert_eq!(bucket_of(Duration::from_millis(1000), second), 1);
        assert_eq!(bucket_of(Duration::from_millis(2500), Duration::from_millis(500)), 5);
    }

    #[test]
    fn outcomes_sort_ok_then_envelopes_then_errors() {
        let mut outcomes = [Outcome::Error("a".into()), Outcome::Envelope("Z".into()), Outcome::Ok];
        outcomes.sort();
        assert_eq!(outcomes.map(|o| o.to_string()), ["OK", "Z", "error: a"]);
    }
}
