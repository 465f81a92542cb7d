//! What the gateway's tests share: real upstreams to start, a client that records what the
//! gateway tells it, and ways to wait without sleeping blind.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use mcp_fusion::FusionServer;
use mcp_fusion::wire::{Envelope, parse};
use rmcp::model::{CallToolRequestParams, CallToolResult, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use serde_json::Value;

pub const GATEWAY: &str = env!("CARGO_BIN_EXE_fusion-gateway");

/// The demo server's binary, beside the gateway's.
pub fn billing_server() -> PathBuf {
    workspace_executable("billing-server")
}

/// An executable of another package of the workspace, beside the gateway's. The workspace's
/// executables are built once per test run as `cargo test --workspace` builds them (every
/// member; `--examples` brings in the dev-dependencies' features), so that a test run of the
/// workspace finds them built instead of building the shared crates again with the features one
/// package alone would pick.
pub fn workspace_executable(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let built = Command::new(env!("CARGO")).args(["build", "-q", "--workspace", "--bins", "--examples"]).status();
        assert!(built.unwrap().success(), "cargo build --workspace --bins --examples");
    });
    Path::new(GATEWAY).with_file_name(name)
}

/// `sh -c` running `command` after writing its pid to `pid_file`, so a test can kill the
/// very process the gateway talks to.
pub fn with_pid_file(pid_file: &Path, command: &str) -> (String, Vec<String>) {
    ("sh".into(), vec!["-c".into(), format!("echo $$ > '{}'; exec {command}", pid_file.display())])
}

/// The pid written to `pid_file`, once it is there.
pub async fn read_pid(pid_file: &Path) -> u32 {
    eventually("the upstream's pid file", Duration::from_secs(20), || async {
        std::fs::read_to_string(pid_file).ok().and_then(|text| text.trim().parse().ok())
    })
    .await
}

/// Whether `pid` is a live process (not gone, not a zombie).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses.
        Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

pub fn kill(pid: u32) {
    let status = Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap();
    assert!(status.success(), "kill -KILL {pid}");
}

/// Polls `probe` every 50 ms until it gives a value, failing the test after `limit`.
pub async fn eventually<T, F, Fut>(what: &str, limit: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        assert!(start.elapsed() < limit, "waited {limit:?} for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A progress notification: progress, total, message.
pub type Progress = (f64, Option<f64>, Option<String>);

/// What a client saw besides its answers.
#[derive(Clone, Default)]
pub struct Seen {
    pub tools_changed: Arc<AtomicUsize>,
    pub progress: Arc<Mutex<Vec<Progress>>>,
}

impl ClientHandler for Seen {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.fetch_add(1, Ordering::SeqCst);
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push((params.progress, params.total, params.message));
    }
}

pub type Client = RunningService<RoleClient, Seen>;

/// A client connected to `server` in process.
pub async fn connect(server: &FusionServer, seen: Seen) -> Client {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let server = server.clone();
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    seen.serve(client_io).await.unwrap()
}

pub async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    let mut request = CallToolRequestParams::new(tool.to_owned());
    if let Value::Object(arguments) = arguments {
        request = request.with_arguments(arguments);
    }
    client.call_tool(request).await.unwrap()
}

pub fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.clone()).collect::<Vec<_>>().join("\n")
}

pub fn envelope(result: &CallToolResult) -> Envelope {
    parse(&text(result))
}

pub async fn tool_names(client: &Client) -> Vec<String> {
    client.list_all_tools().await.unwrap().into_iter().map(|tool| tool.name.to_string()).collect()
}

/// Waits until the client's `tools/list` has `tool`.
pub async fn listed(client: &Client, tool: &str) {
    eventually(&format!("{tool} in tools/list"), Duration::from_secs(30), || async {
        tool_names(client).await.iter().any(|name| name == tool).then_some(())
    })
    .await;
}

/// Every log line of the test's thread, at DEBUG and above, kept to be read.
#[derive(Clone, Default)]
pub struct Logs(Arc<Mutex<Vec<u8>>>);

impl Logs {
    pub fn capture() -> (Logs, tracing::subscriber::DefaultGuard) {
        let logs = Logs::default();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("debug"))
            .with_writer(logs.clone())
            .with_ansi(false)
            .finish();
        (logs.clone(), tracing::subscriber::set_default(subscriber))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl std::io::Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().write(bytes)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Logs {
    type Writer = Logs;

    fn make_writer(&'a self) -> Logs {
        self.clone()
    }
}
