//! `bench-search`: what searching a large catalog costs everyone else. One server with tool
//! search on, a cheap local action (`ping`) and 10,000 mounted tools, served over Streamable
//! HTTP; real MCP clients time another caller's calls alone, then again while 16 clients search
//! the catalog in a loop, and print both side by side as markdown.
//!
//! ```text
//! bench-search
//! bench-search --calls 500 --searchers 4 --tools 2000
//! ```

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};
use clap::Parser;
use mcp_fusion::handoff::{Forward, ForwardError, Mount, MountState};
use mcp_fusion::http::{HttpConfig, HttpServer};
use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, CallInfo, Ctx, FusionServer, NoInput, SEARCH_TOOLS};
use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, JsonObject, Tool};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Times another caller's calls alone and while many clients search 10,000 mounted tools.
#[derive(Debug, Parser)]
#[command(name = "bench-search", version, about)]
struct Cli {
    /// Tools mounted under `archive`.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    tools: u32,
    /// Clients searching at once, each its own session, while the other caller is timed.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=512))]
    searchers: u16,
    /// Calls of each timed tool in each phase, one after another.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..))]
    calls: u32,
    /// Calls of each timed tool before its counted ones when idle, not counted.
    #[arg(long, default_value_t = 200)]
    warmup_calls: u32,
    /// The longest one tool is timed in one phase, warm-up included, in seconds: fewer calls are
    /// counted when they are slower.
    #[arg(long, default_value_t = 20.0, value_parser = seconds)]
    max_seconds: f64,
    /// What the searchers ask `search_tools` for.
    #[arg(long, default_value = "archive a support ticket")]
    query: String,
    /// The server's timeout guard, in seconds: a call (a search waiting for its turn to rank
    /// included) that takes longer is answered with `TIMEOUT`.
    #[arg(long, default_value_t = 10.0, value_parser = seconds)]
    timeout: f64,
    /// Print one line of JSON instead of the markdown table.
    #[arg(long)]
    json: bool,
}

fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && (0.001..=3600.0).contains(&s) => Ok(s),
        _ => Err(format!("expected seconds between 0.001 and 3600, found {text:?}")),
    }
}

/// The calls another client makes while the catalog is searched: one the server answers
/// itself, and one it forwards to a mount.
const TIMED: [(&str, &str); 2] = [("ping", "local action"), ("archive.record_1", "mounted tool")];

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // The server on a runtime of its own, as a deployment runs it (a worker per core); the
    // clients on one thread beside it, so that what they cost is not the server's workers' time.
    let server_runtime = tokio::runtime::Builder::new_multi_thread().enable_all().thread_name("server").build()?;
    let server = server(&cli)?;
    let http = server_runtime.block_on(HttpServer::bind(server, HttpConfig::new("127.0.0.1:0")))?;
    let url = format!("http://{}/mcp", http.local_addr());
    let stop = CancellationToken::new();
    let serving = server_runtime.spawn(http.serve(stop.clone().cancelled_owned()));

    let clients = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let report = clients.block_on(measure(&cli, &url));
    stop.cancel();
    // Searches still ranking when the clients left are not waited for.
    drop(serving);
    server_runtime.shutdown_timeout(Duration::from_secs(1));
    let report = report?;
    if cli.json {
        println!("{}", serde_json::to_string(&report.to_json(&cli))?);
    } else {
        print!("{}", report.markdown(&cli));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The server.

async fn ping(_ctx: Ctx<()>, _input: NoInput) -> Result<String, ToolError> {
    Ok("pong".to_owned())
}

/// The mount's upstream: answers every call at once, so a mounted call costs only the server's
/// own path.
struct Archive;

impl Forward for Archive {
    fn call(
        &self,
        tool: &str,
        _arguments: JsonObject,
        _call: Arc<CallInfo>,
    ) -> Pin<Box<dyn Future<Output = Result<CallToolResult, ForwardError>> + Send + 'static>> {
        let answer = CallToolResult::success(vec![ContentBlock::text(format!("{{\"record\":\"{tool}\"}}"))]);
        Box::pin(std::future::ready(Ok(answer)))
    }
}

const VERBS: [&str; 8] = [
    "List the {n}s, newest first, a page at a time.",
    "Read one {n} by its id, with everything recorded about it.",
    "Create a new {n} from the fields given and return it with its id.",
    "Change the fields given on an existing {n}; the others stay.",
    "Delete a {n} for good, with what depends on it.",
    "Find {n}s whose name or notes hold the words of the query.",
    "Archive a {n}: hidden from lists, kept for the record.",
    "Export the {n}s as CSV text, all or those a query finds.",
];

const NOUNS: [&str; 25] = [
    "customer",
    "contact",
    "deal",
    "lead",
    "company",
    "note",
    "task",
    "meeting",
    "ticket",
    "reply",
    "agent",
    "macro",
    "tag",
    "article",
    "invoice",
    "payment",
    "bill",
    "vendor",
    "expense",
    "account",
    "journal entry",
    "tax rate",
    "budget",
    "shipment",
    "warehouse",
];

/// `count` tools described as real tools describe theirs: a verb on a noun, in a few regions
/// each, taking the fields a list or a read takes.
fn archive_tools(count: u32) -> Vec<Tool> {
    let schema = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "The record's id, as a search returned it."},
            "query": {"type": "string", "description": "Words to look for in the records' names and notes."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "How many records per page, 1 to 100."},
            "cursor": {"type": "string", "description": "The `next_cursor` of the previous page."},
        },
        "additionalProperties": false,
    });
    let schema = Arc::new(schema.as_object().cloned().unwrap_or_default());
    (0..count as usize)
        .map(|i| {
            let verb = VERBS[i % VERBS.len()];
            let noun = NOUNS[(i / VERBS.len()) % NOUNS.len()];
            let region = i / (VERBS.len() * NOUNS.len());
            let description = format!("{} In region {region}.", verb.replace("{n}", noun));
            Tool::new(format!("record_{i}"), description, Arc::clone(&schema))
        })
        .collect()
}

fn server(cli: &Cli) -> anyhow::Result<FusionServer> {
    let server = FusionServer::builder::<()>("bench-search", env!("CARGO_PKG_VERSION"))
        .tool_search(true)
        .timeout(Duration::from_secs_f64(cli.timeout))
        .action(Action::new("ping", "Answers pong.").read_only().handler(ping))
        .build(())?;
    let tools = archive_tools(cli.tools);
    let forward: Arc<dyn Forward> = Arc::new(Archive);
    let mount = Mount::new("archive").max_tools(cli.tools as usize);
    server.set_mount(&mount, MountState::Ready { tools, forward })?;
    Ok(server)
}

// ---------------------------------------------------------------------------------------------
// The clients.

type Client = RunningService<RoleClient, ()>;

async fn connect(url: &str) -> anyhow::Result<Client> {
    let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
    ().serve(transport).await.context("opening an MCP session")
}

fn request(tool: &str, arguments: Value) -> CallToolRequestParams {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments)
}

/// The call of a timed tool.
fn timed_call(tool: &str) -> CallToolRequestParams {
    match tool {
        "ping" => request(tool, json!({})),
        _ => request(tool, json!({"id": "rec_1"})),
    }
}

/// How a call ended: `OK`, the code of the envelope answered instead of a value, or the
/// client's error.
fn outcome(answer: &Result<CallToolResult, rmcp::service::ServiceError>) -> String {
    match answer {
        Ok(result) if result.is_error == Some(true) => {
            let text: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
            mcp_fusion::wire::parse(&text.join("\n")).error.code.as_str().to_owned()
        }
        Ok(_) => "OK".to_owned(),
        Err(error) => format!("error: {error}"),
    }
}

/// Latencies of one stretch of calls.
#[derive(Debug, Default, Clone)]
struct Timings(Vec<Duration>);

impl Timings {
    fn at(&self, quantile: f64) -> Duration {
        let mut sorted = self.0.clone();
        sorted.sort_unstable();
        match sorted.len() {
            0 => Duration::ZERO,
            n => sorted[((quantile * n as f64).ceil() as usize).clamp(1, n) - 1],
        }
    }
}

/// `params` called `warmup` times uncounted, then `calls` times, one after another, for at most
/// `most` in all: a server that holds every call for seconds still ends the run.
async fn timed(
    client: &Client,
    params: CallToolRequestParams,
    warmup: u32,
    calls: u32,
    most: Duration,
) -> anyhow::Result<Timings> {
    let mut timings = Timings(Vec::with_capacity(calls as usize));
    let began = Instant::now();
    for n in 0..warmup + calls {
        if began.elapsed() >= most {
            break;
        }
        let sent = Instant::now();
        let answer = client.call_tool(params.clone()).await;
        let took = sent.elapsed();
        match outcome(&answer).as_str() {
            "OK" => {}
            other => bail!("{} answered {other}: {answer:?}", params.name),
        }
        if n >= warmup {
            timings.0.push(took);
        }
    }
    Ok(timings)
}

/// One search's end: when, how, and how long it took.
type Searched = (Instant, String, Duration);

/// A client that searches until told to stop, noting every search as it ends.
async fn search_loop(client: Client, query: String, stop: CancellationToken, ends: Arc<Mutex<Vec<Searched>>>) {
    let params = request(SEARCH_TOOLS, json!({"query": query}));
    while !stop.is_cancelled() {
        let sent = Instant::now();
        let answer = tokio::select! {
            answer = client.call_tool(params.clone()) => answer,
            () = stop.cancelled() => break,
        };
        let end = (Instant::now(), outcome(&answer), sent.elapsed());
        ends.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(end);
    }
    let _ = tokio::time::timeout(Duration::from_secs(1), client.cancel()).await;
}

struct Report {
    /// One search, the server otherwise idle.
    alone: Timings,
    /// Per timed tool: alone, then while the searchers search.
    idle: Vec<Timings>,
    busy: Vec<Timings>,
    /// The searches that ended while the timed calls ran.
    window: Duration,
    searches: BTreeMap<String, Timings>,
}

async fn measure(cli: &Cli, url: &str) -> anyhow::Result<Report> {
    let caller = connect(url).await?;
    let listed: Vec<String> = caller.list_all_tools().await?.into_iter().map(|tool| tool.name.to_string()).collect();
    ensure!(listed.len() == 3 && listed.iter().any(|name| name == SEARCH_TOOLS), "tools/list: {listed:?}");
    let found = caller.call_tool(request(SEARCH_TOOLS, json!({"query": cli.query}))).await?;
    let found = found.structured_content.context("a search answered without structured content")?;
    let served = found["served"].as_u64().unwrap_or_default();
    ensure!(
        served > u64::from(cli.tools),
        "the search looked at {served} tools, not the {} mounted and ping",
        cli.tools
    );
    ensure!(found["tools"].as_array().is_some_and(|tools| !tools.is_empty()), "{} found nothing", cli.query);

    let most = Duration::from_secs_f64(cli.max_seconds);
    let alone = timed(&caller, request(SEARCH_TOOLS, json!({"query": cli.query})), 1, 5, most).await?;
    let mut idle = Vec::new();
    for (tool, _) in TIMED {
        idle.push(timed(&caller, timed_call(tool), cli.warmup_calls, cli.calls, most).await?);
    }

    let mut searchers = Vec::new();
    for _ in 0..cli.searchers {
        searchers.push(connect(url).await?);
    }
    let stop = CancellationToken::new();
    let ends = Arc::new(Mutex::new(Vec::new()));
    let loops: Vec<_> = searchers
        .into_iter()
        .map(|client| tokio::spawn(search_loop(client, cli.query.clone(), stop.clone(), Arc::clone(&ends))))
        .collect();
    // Timed once as many searches have ended as there are searchers: past the first wave, all
    // sent at once, every searcher is sending its next as soon as the last is answered.
    let ramp = Instant::now();
    while ends.lock().unwrap_or_else(std::sync::PoisonError::into_inner).len() < usize::from(cli.searchers)
        && ramp.elapsed() < most
    {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let opens = Instant::now();
    let mut busy = Vec::new();
    for (tool, _) in TIMED {
        // No warm-up: the session and both calls are warm from the idle phase.
        busy.push(timed(&caller, timed_call(tool), 0, cli.calls, most).await?);
    }
    let closes = Instant::now();
    stop.cancel();
    for searcher in loops {
        searcher.await?;
    }
    let _ = tokio::time::timeout(Duration::from_secs(1), caller.cancel()).await;

    let mut searches = BTreeMap::<String, Timings>::new();
    for (end, outcome, took) in ends.lock().unwrap_or_else(std::sync::PoisonError::into_inner).drain(..) {
        if (opens..=closes).contains(&end) {
            searches.entry(outcome).or_default().0.push(took);
        }
    }
    Ok(Report { alone, idle, busy, window: closes - opens, searches })
}

// ---------------------------------------------------------------------------------------------
// The report.

fn ms(duration: Duration) -> String {
    let ms = duration.as_secs_f64() * 1e3;
    match ms {
        ..10.0 => format!("{ms:.2} ms"),
        ..1_000.0 => format!("{ms:.0} ms"),
        _ => format!("{:.2} s", ms / 1e3),
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

impl Report {
    fn answered(&self) -> usize {
        self.searches.get("OK").map_or(0, |t| t.0.len())
    }

    fn per_second(&self) -> f64 {
        self.answered() as f64 / self.window.as_secs_f64().max(1e-9)
    }

    fn refused(&self) -> Vec<(String, usize)> {
        self.searches.iter().filter(|(outcome, _)| *outcome != "OK").map(|(o, t)| (o.clone(), t.0.len())).collect()
    }

    fn markdown(&self, cli: &Cli) -> String {
        let mut out = format!(
            "| another caller's call | idle p50 | idle p99 | while {} clients search: p50 | p99 | p99, busy ÷ idle |\n|---|---|---|---|---|---|\n",
            cli.searchers
        );
        for (((tool, what), idle), busy) in TIMED.iter().zip(&self.idle).zip(&self.busy) {
            let ratio = busy.at(0.99).as_secs_f64() / idle.at(0.99).as_secs_f64().max(1e-9);
            out.push_str(&format!(
                "| `{tool}` ({what}) | {} | {} | {} | {} | {ratio:.1}× |\n",
                ms(idle.at(0.5)),
                ms(idle.at(0.99)),
                ms(busy.at(0.5)),
                ms(busy.at(0.99)),
            ));
        }
        let ok = self.searches.get("OK").cloned().unwrap_or_default();
        let refused: Vec<String> = self.refused().iter().map(|(outcome, n)| format!("{outcome} {n}")).collect();
        let counted: Vec<String> = self.idle.iter().chain(&self.busy).map(|t| t.0.len().to_string()).collect();
        out.push_str(&format!(
            "\nCalls counted, idle then busy: {} (of {}; the idle ones after {} uncounted). {} cores. One search of {} tools alone: p50 {}.\n",
            counted.join(", "),
            cli.calls,
            cli.warmup_calls,
            cores(),
            cli.tools,
            ms(self.alone.at(0.5)),
        ));
        out.push_str(&format!(
            "Searches answered while the calls were timed: {} in {:.1} s ({:.1}/s), each p50 {} p99 {} from sent to answered; refused or failed: {}.\n",
            self.answered(),
            self.window.as_secs_f64(),
            self.per_second(),
            ms(ok.at(0.5)),
            ms(ok.at(0.99)),
            if refused.is_empty() { "none".to_owned() } else { refused.join(", ") },
        ));
        out
    }

    fn to_json(&self, cli: &Cli) -> Value {
        let us = |d: Duration| d.as_micros() as u64;
        let timed: Vec<Value> = TIMED
            .iter()
            .zip(&self.idle)
            .zip(&self.busy)
            .map(|(((tool, _), idle), busy)| {
                json!({
                    "tool": tool,
                    "idle_us": {"p50": us(idle.at(0.5)), "p99": us(idle.at(0.99)), "calls": idle.0.len()},
                    "busy_us": {"p50": us(busy.at(0.5)), "p99": us(busy.at(0.99)), "calls": busy.0.len()},
                })
            })
            .collect();
        let ok = self.searches.get("OK").cloned().unwrap_or_default();
        json!({
            "cores": cores(),
            "tools": cli.tools,
            "searchers": cli.searchers,
            "calls": cli.calls,
            "search_alone_us": us(self.alone.at(0.5)),
            "timed": timed,
            "window_s": self.window.as_secs_f64(),
            "searches_answered": self.answered(),
            "searches_per_s": self.per_second(),
            "search_us": {"p50": us(ok.at(0.5)), "p99": us(ok.at(0.99))},
            "searches_refused": self.refused().into_iter().collect::<BTreeMap<_, _>>(),
        })
    }
}
