//! The load generator against a real HTTP server in process: a tool that sleeps behind a
//! concurrency guard of one slot and no queue, so concurrent clients see both `OK` and
//! `SERVER_BUSY`. No assertion depends on timing beyond "some calls overlap".

use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

use fusion_load::{Config, LoadError, Outcome, Stop};
use mcp_fusion::guard::Concurrency;
use mcp_fusion::http::{HttpConfig, HttpServer};
use mcp_fusion::wire::ToolError;
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

fn server() -> FusionServer {
    FusionServer::builder("load-test", "1")
        .group(
            Group::new("slow", "A tool that takes its time.")
                .concurrency(Concurrency::new(1, 0))
                .action(Action::new("nap", "Sleep, then answer.").handler(nap)),
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
        let config = HttpConfig::new("127.0.0.1:0".parse().unwrap()).stateless(stateless);
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
    assert_eq!(ok + busy, report.calls(), "only OK and SERVER_BUSY: {report}");
    assert!(ok > 0 && busy > 0, "{report}");
    assert_eq!(report.errors(), 0, "{report}");
    assert_eq!(report.sessions_opened, 8, "{report}");
    let first = report.outcomes[&Outcome::Envelope("SERVER_BUSY".into())].first_message.clone().unwrap();
    assert!(first.contains("at capacity"), "{first}");

    let json = report.to_json();
    assert_eq!(json["calls"], 120);
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
            .args(["--url", &url, "--clients", "4", "--calls", "40", "--tool", "slow", "--json"])
            .args(["--args", r#"{"action":"nap","millis":10}"#])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let busy = report["envelopes"]["SERVER_BUSY"].as_u64().unwrap_or(0);
    assert_eq!(report["calls"], 40, "{report}");
    assert_eq!(report["ok"].as_u64().unwrap() + busy, 40, "{report}");
    assert!(report["latency_us"]["p99"].as_u64().unwrap() >= report["latency_us"]["p50"].as_u64().unwrap());
    running.shutdown().await;
}
