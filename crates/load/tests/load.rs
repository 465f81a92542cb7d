//! The load generator against a real HTTP server in process: a tool that sleeps behind a
//! concurrency guard of one slot and no queue, so concurrent clients see both `OK` and
//! `SERVER_BUSY`, and one that answers with warnings, alone or on a value. No assertion depends
//! on timing beyond "some calls overlap" and "a call that sleeps far past the call timeout
//! times out".

use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

use fusion_load::{Config, LoadError, Outcome, Stop};
use mcp_fusion::guard::Concurrency;
use mcp_fusion::http::{HttpConfig, HttpServer};
use mcp_fusion::wire::{ErrorCode, ToolError};
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;

#[derive(Deserialize, JsonSchema)]
struct Nap {
    millis: u64,
}

async fn nap(_ctx: Ctx<()>, input: Nap) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(input.millis)).await;
    Ok("rested".to_owned())
}

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

/// What a gateway answers while its upstream connects: a warning alone, `isError` false.
async fn connecting(_ctx: Ctx<()>, _input: Nothing) -> Result<String, ToolError> {
    Err(ToolError::new(ErrorCode::HandoffConnecting, "Upstream \"x\" is still connecting.").warning().retry_after(2))
}

/// A value with a warning riding on it.
async fn outdated(ctx: Ctx<()>, _input: Nothing) -> Result<String, ToolError> {
    ctx.warn(ToolError::deprecated("signals.outdated is old."));
    Ok("a value".to_owned())
}

fn server() -> FusionServer {
    FusionServer::builder("load-test", "1")
        .group(
            Group::new("slow", "A tool that takes its time.")
                .concurrency(Concurrency::new(1, 0))
                .action(Action::new("nap", "Sleep, then answer.").handler(nap)),
        )
        .group(
            Group::new("unguarded", "The same without a guard.")
                .action(Action::new("nap", "Sleep, then answer.").handler(nap)),
        )
        .group(
            Group::new("signals", "Warnings.")
                .action(Action::new("connecting", "A warning alone.").handler(connecting))
                .action(Action::new("outdated", "A value and a warning.").handler(outdated)),
        )
        .build(())
        .unwrap()
}

struct Running {
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Running {
    async fn start(stateless: bool) -> Running {
        let config = HttpConfig::new("127.0.0.1:0").stateless(stateless);
        let http = HttpServer::bind(server(), config).await.unwrap();
        let addr = http.local_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(http.serve(async move {
            let _ = stopped.await;
        }));
        Running { addr, stop, task }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    async fn shutdown(self) {
        let _ = self.stop.send(());
        tokio::time::timeout(Duration::from_secs(30), self.task).await.expect("serve returns").unwrap().unwrap();
    }
}

fn nap_config(url: String, calls: u64) -> Config {
    Config {
        clients: 8,
        stop: Stop::Calls(calls),
        tool: "slow".to_owned(),
        arguments: json!({"action": "nap", "millis": 20}).as_object().cloned().unwrap(),
        ..Config::new(url)
    }
}

async fn sheds_the_excess(stateless: bool) {
    let running = Running::start(stateless).await;
    let report = fusion_load::run(nap_config(running.url(), 120)).await.unwrap();
    let (ok, busy) = (report.ok(), report.envelope("SERVER_BUSY"));
    assert_eq!(report.calls(), 120, "{report}");
    assert_eq!(report.started, 120, "{report}");
    assert_eq!(ok + busy, report.calls(), "only OK and SERVER_BUSY: {report}");
    assert!(ok > 0 && busy > 0, "{report}");
    assert_eq!(report.errors(), 0, "{report}");
    assert_eq!(report.sessions_opened, 8, "{report}");
    let first = report.outcomes[&Outcome::Envelope("SERVER_BUSY".into())].first_message.clone().unwrap();
    assert!(first.contains("at capacity"), "{first}");

    let json = report.to_json();
    assert_eq!((json["started"].as_u64(), json["calls"].as_u64()), (Some(120), Some(120)));
    assert_eq!(json["all_answered"], true);
    assert!(json.get("timeline").is_none(), "only when asked for");
    assert_eq!(json["ok"], ok);
    assert_eq!(json["envelopes"]["SERVER_BUSY"], busy);
    assert_eq!(json["by_outcome"]["OK"]["count"], ok);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counts_add_up_under_shedding() {
    sheds_the_excess(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counts_add_up_under_shedding_stateless() {
    sheds_the_excess(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn envelopes_other_than_busy_are_counted_by_code() {
    let running = Running::start(false).await;
    let mut config = nap_config(running.url(), 10);
    config.clients = 2;
    config.arguments = json!({"action": "nope"}).as_object().cloned().unwrap();
    let report = fusion_load::run(config).await.unwrap();
    assert_eq!(report.envelope("UNKNOWN_ACTION") + report.envelope("SERVER_BUSY"), 10, "{report}");
    assert!(report.envelope("UNKNOWN_ACTION") > 0, "{report}");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warning_alone_counts_under_its_code_and_a_value_with_one_as_ok() {
    let running = Running::start(false).await;
    let signal = |action: &str| Config {
        clients: 2,
        stop: Stop::Calls(10),
        tool: "signals".to_owned(),
        arguments: json!({"action": action}).as_object().cloned().unwrap(),
        ..Config::new(running.url())
    };
    let alone = fusion_load::run(signal("connecting")).await.unwrap();
    assert_eq!((alone.envelope("HANDOFF_CONNECTING"), alone.ok(), alone.started), (10, 0, 10), "{alone}");
    let first = alone.outcomes[&Outcome::Envelope("HANDOFF_CONNECTING".into())].first_message.clone();
    assert_eq!(first.as_deref(), Some("Upstream \"x\" is still connecting."));
    assert_eq!(alone.to_json()["envelopes"]["HANDOFF_CONNECTING"], 10);

    let on_a_value = fusion_load::run(signal("outdated")).await.unwrap();
    assert_eq!((on_a_value.ok(), on_a_value.calls()), (10, 10), "{on_a_value}");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_call_is_answered_by_the_client_timeout() {
    let running = Running::start(false).await;
    let config = Config {
        clients: 1,
        stop: Stop::Calls(2),
        tool: "unguarded".to_owned(),
        // Far past the call timeout, yet short enough for the server to shut down after it.
        arguments: json!({"action": "nap", "millis": 1500}).as_object().cloned().unwrap(),
        call_timeout: Duration::from_millis(100),
        ..Config::new(running.url())
    };
    let report = fusion_load::run(config).await.unwrap();
    assert_eq!(report.count(&Outcome::Error("client_timeout".into())), 2, "{report}");
    assert_eq!((report.started, report.calls(), report.errors()), (2, 2, 2), "{report}");
    assert!(report.all_answered());
    let json = report.to_json();
    assert_eq!(json["errors"]["client_timeout"], 2);
    assert_eq!(json["all_answered"], true);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_timeline_holds_every_call_by_when_it_started() {
    let running = Running::start(false).await;
    let mut config = nap_config(running.url(), 1);
    config.clients = 2;
    config.tool = "unguarded".to_owned();
    config.stop = Stop::Duration(Duration::from_millis(400));
    config.timeline = Some(Duration::from_millis(100));
    let report = fusion_load::run(config).await.unwrap();
    let timeline = report.timeline.clone().expect("asked for");
    assert_eq!(timeline.bucket, Duration::from_millis(100));
    // Calls start before the end, so in the first four stretches (a fifth only if one started
    // on the very instant of the end).
    assert!((1..=5).contains(&timeline.buckets.len()), "{report}");
    let in_timeline: u64 = timeline.buckets.iter().flat_map(|counts| counts.values()).sum();
    assert_eq!((in_timeline, report.started), (report.calls(), report.calls()), "{report}");
    assert!(report.calls() > 0 && report.ok() == report.calls(), "{report}");

    let json = report.to_json();
    let buckets = json["timeline"]["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), timeline.buckets.len());
    assert_eq!((json["timeline"]["bucket_s"].as_f64(), buckets[0]["from_s"].as_f64()), (Some(0.1), Some(0.0)));
    let ok_in_json: u64 = buckets.iter().map(|b| b["outcomes"]["OK"].as_u64().unwrap_or(0)).sum();
    assert_eq!(ok_in_json, report.ok());
    assert!(report.to_string().contains("timeline  calls by the 100.00 ms they started in"), "{report}");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duration_run_stops() {
    let running = Running::start(false).await;
    let mut config = nap_config(running.url(), 1);
    config.stop = Stop::Duration(Duration::from_millis(300));
    config.warmup = Duration::from_millis(100);
    let report = fusion_load::run(config).await.unwrap();
    assert!(report.calls() > 0, "{report}");
    assert_eq!(report.ok() + report.envelope("SERVER_BUSY"), report.calls(), "{report}");
    running.shutdown().await;
}

fn closed_port_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}/mcp")
}

#[tokio::test]
async fn an_unreachable_url_is_an_error() {
    let url = closed_port_url();
    match fusion_load::run(Config::new(url.clone())).await {
        Err(LoadError::Unreachable { url: reported, reason }) => {
            assert_eq!(reported, url);
            assert!(!reason.is_empty() && !reason.contains('\n'), "{reason}");
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
}

#[test]
fn the_binary_reports_an_unreachable_url_on_one_line_and_exits_1() {
    let url = closed_port_url();
    let output =
        Command::new(env!("CARGO_BIN_EXE_fusion-load")).args(["--url", &url, "--calls", "1"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with(&format!("fusion-load: error: cannot open an MCP session at {url}: ")), "{stderr}");
}

#[test]
fn bad_flags_get_clap_errors() {
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_fusion-load")).args(args).output().unwrap();
    let missing_url = run(&[]);
    assert_eq!(missing_url.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing_url.stderr).contains("--url <URL>"));
    for bad in [
        &["--url", "http://x/mcp", "--clients", "0"][..],
        &["--url", "http://x/mcp", "--duration", "5", "--calls", "10"],
        &["--url", "http://x/mcp", "--args", "[1]"],
        &["--url", "http://x/mcp", "--duration", "soon"],
        &["--url", "http://x/mcp", "--timeline", "0"],
    ] {
        let output = run(bad);
        assert_eq!(output.status.code(), Some(2), "{bad:?}");
        assert!(String::from_utf8_lossy(&output.stderr).starts_with("error: "), "{bad:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_prints_one_json_object() {
    let running = Running::start(false).await;
    let url = running.url();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_fusion-load"))
            .args(["--url", &url, "--clients", "4", "--calls", "40", "--tool", "slow", "--json", "--timeline", "60"])
            .args(["--args", r#"{"action":"nap","millis":10}"#])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let busy = report["envelopes"]["SERVER_BUSY"].as_u64().unwrap_or(0);
    assert_eq!((report["started"].as_u64(), report["calls"].as_u64()), (Some(40), Some(40)), "{report}");
    assert_eq!(report["all_answered"], true, "{report}");
    // Forty calls take well under a minute: all in the first stretch.
    let buckets = report["timeline"]["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 1, "{report}");
    assert_eq!(buckets[0]["outcomes"]["OK"].as_u64().unwrap() + busy, 40, "{report}");
    assert_eq!(report["ok"].as_u64().unwrap() + busy, 40, "{report}");
    assert!(report["latency_us"]["p99"].as_u64().unwrap() >= report["latency_us"]["p50"].as_u64().unwrap());
    running.shutdown().await;
}
