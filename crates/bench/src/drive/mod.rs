//! The driver: a closed loop of `tools/call` requests with a fixed number in flight, counted
//! over a measured window after a warm-up.

mod http;
mod server;
mod stdio;

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

pub use server::{Memory, Server};

/// Why a run could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    /// The server could not be started, or its pipes or socket failed.
    #[error("{context}: {source}")]
    Io {
        /// What the driver was doing.
        context: &'static str,
        /// The error the system gave.
        source: std::io::Error,
    },
    /// The HTTP client failed.
    #[error("HTTP: {0}")]
    Http(#[from] hyper::Error),
    /// The server answered something a client of this tool cannot use.
    #[error("unexpected answer: {0}")]
    Protocol(String),
    /// The server did not start listening, or went silent.
    #[error("timed out: {0}")]
    Timeout(&'static str),
}

impl DriveError {
    fn io(context: &'static str) -> impl FnOnce(std::io::Error) -> DriveError {
        move |source| DriveError::Io { context, source }
    }
}

/// How the server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    /// Newline-delimited JSON-RPC on the server's stdin and stdout, requests pipelined.
    Stdio,
    /// Streamable HTTP without sessions, one keep-alive connection per request in flight.
    HttpStateless,
    /// Streamable HTTP with one session shared by every connection.
    HttpStateful,
}

/// Which call is repeated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Call {
    /// `get_invoice` with an id: a result.
    Valid,
    /// `get_invoice` without its id: an error result.
    Invalid,
}

impl Call {
    fn arguments(self) -> &'static str {
        match self {
            Call::Valid => r#"{"action":"get_invoice","id":"inv_2026_0001"}"#,
            Call::Invalid => r#"{"action":"get_invoice"}"#,
        }
    }

    fn expects_error(self) -> bool {
        self == Call::Invalid
    }
}

/// One run's settings.
#[derive(Debug, Clone)]
pub struct Plan {
    /// How the server is reached.
    pub transport: Transport,
    /// Which call is repeated.
    pub call: Call,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Calls made before the window opens, and not counted.
    pub warmup: Duration,
    /// How long calls are counted.
    pub window: Duration,
}

impl Plan {
    /// The `tools/call` request with this id, as sent.
    fn request(&self, id: u64) -> Vec<u8> {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"billing","arguments":{}}}}}"#,
            self.call.arguments()
        )
        .into_bytes()
    }
}

/// What one run measured.
#[derive(Debug, Serialize)]
pub struct Report {
    /// Calls answered inside the window.
    pub calls: u64,
    /// Calls answered per second inside the window.
    pub calls_per_s: f64,
    /// Median latency, µs.
    pub p50_us: u64,
    /// 99th percentile latency, µs.
    pub p99_us: u64,
    /// The server's CPU time (user and system, every thread) per call inside the window, µs.
    pub cpu_us_per_call: f64,
    /// The server's peak resident set, KiB (`VmHWM`).
    pub peak_rss_kib: u64,
    /// The server's private (anonymous) resident memory when the window closes, KiB
    /// (`RssAnon`): the resident set without the executable's shared, clean pages.
    pub private_kib: u64,
}

/// The longest latency told apart, µs (a minute); longer ones count as a minute.
const MAX_LATENCY_US: u64 = 60_000_000;

/// Latencies and a count of the calls answered inside the window.
struct Window {
    opens: Instant,
    closes: Instant,
    latencies: Histogram<u64>,
}

impl Window {
    fn new(plan: &Plan) -> Window {
        let opens = Instant::now() + plan.warmup;
        Window {
            opens,
            closes: opens + plan.window,
            // Bounds set up front: `saturating_record` clamps to the current range and never
            // resizes, so an auto-sized histogram would report every latency past its first
            // range as that range's top.
            latencies: Histogram::new_with_bounds(1, MAX_LATENCY_US, 3).expect("valid bounds and precision"),
        }
    }

    /// Counts a call answered now that was sent at `sent`; false once the window has closed.
    fn record(&mut self, sent: Instant) -> bool {
        let now = Instant::now();
        if now >= self.opens && now < self.closes {
            self.latencies.saturating_record((now - sent).as_micros() as u64);
        }
        now < self.closes
    }

    fn merge(&mut self, other: &Window) {
        self.latencies.add(&other.latencies).expect("histograms of the same precision merge");
    }
}

/// The part of an answer the driver reads.
#[derive(Deserialize)]
struct Answer {
    id: Option<u64>,
    result: Option<CallResult>,
    error: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct CallResult {
    #[serde(rename = "isError", default)]
    is_error: bool,
}

impl Answer {
    /// The answer's id, once it is checked to be the outcome `call` must have.
    fn read(text: &[u8], call: Call) -> Result<Option<u64>, DriveError> {
        let answer: Answer = serde_json::from_slice(text)
            .map_err(|e| DriveError::Protocol(format!("{e}: {}", String::from_utf8_lossy(text))))?;
        let Some(id) = answer.id else { return Ok(None) };
        match (&answer.result, &answer.error) {
            (Some(result), None) if result.is_error == call.expects_error() => Ok(Some(id)),
            _ => Err(DriveError::Protocol(format!("{call:?} call answered {}", String::from_utf8_lossy(text)))),
        }
    }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench-drive","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Runs `plan` against `server` and measures it; the server is stopped afterwards.
pub async fn run(plan: &Plan, mut server: Server) -> Result<Report, DriveError> {
    let (window, Usage { cpu, memory }) = match plan.transport {
        Transport::Stdio => stdio::drive(plan, &mut server).await?,
        Transport::HttpStateless | Transport::HttpStateful => http::drive(plan, &mut server).await?,
    };
    server.stop().await;
    let calls = window.latencies.len();
    Ok(Report {
        calls,
        calls_per_s: calls as f64 / plan.window.as_secs_f64(),
        p50_us: window.latencies.value_at_quantile(0.5),
        p99_us: window.latencies.value_at_quantile(0.99),
        cpu_us_per_call: cpu.as_secs_f64() * 1e6 / calls.max(1) as f64,
        peak_rss_kib: memory.peak_rss_kib,
        private_kib: memory.private_kib,
    })
}

/// What the server used: CPU time over the window, and its peak memory up to its close.
struct Usage {
    cpu: Duration,
    memory: Memory,
}

/// Reads the server's usage when the window opens and when it closes: while the driver still
/// holds its pipes and connections, so that the server is still running.
async fn usage_over(window_opens: Instant, window_closes: Instant, server: &Server) -> Result<Usage, DriveError> {
    tokio::time::sleep_until(window_opens.into()).await;
    let before = server.cpu_time()?;
    tokio::time::sleep_until(window_closes.into()).await;
    Ok(Usage { cpu: server.cpu_time()?.saturating_sub(before), memory: server.memory()? })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_past_two_milliseconds_are_kept() {
        let plan = Plan {
            transport: Transport::Stdio,
            call: Call::Valid,
            concurrency: 1,
            warmup: Duration::ZERO,
            window: Duration::from_secs(60),
        };
        let mut window = Window::new(&plan);
        let now = Instant::now();
        for ms in [1, 5, 50, 500] {
            window.record(now - Duration::from_millis(ms));
        }
        let p99 = window.latencies.value_at_quantile(0.99);
        assert!((500_000..510_000).contains(&p99), "{p99}");
    }
}
