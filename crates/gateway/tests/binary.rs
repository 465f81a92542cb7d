//! `fusion-gateway` as operators run it: its file and flags tried with garbage, served over
//! stdio to a real client, its mounted tools locked and checked by `fusion`, and a contract
//! that drifted since the lock logged and told to the model, and a stderr nobody reads.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mcp_fusion::contract::{Contracts, Lockfile, ToolContract};
use mcp_fusion::wire::ErrorCode;
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use support::*;

/// The `fusion` CLI.
fn fusion() -> PathBuf {
    workspace_executable("fusion")
}

/// A gateway file mounting the demo as `demo`, its database in `dir`.
fn demo_config(dir: &Path) -> PathBuf {
    let path = dir.join("gateway.toml");
    let db = dir.join("billing.db");
    let text = format!(
        "[[mount]]\nnamespace = \"demo\"\ncommand = {:?}\nargs = [\"--db\", {:?}]\n",
        billing_server().display().to_string(),
        db.display().to_string()
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs the gateway with `args` to its end; its exit code and stderr.
fn gateway_fails(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(GATEWAY).args(args).stdin(Stdio::null()).output().unwrap();
    assert!(output.stdout.is_empty(), "stdout carries MCP messages only");
    (output.status.code(), String::from_utf8(output.stderr).unwrap())
}

#[test]
fn garbage_files_and_flags_are_refused_in_one_line_that_says_what_and_where() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let cases: Vec<(String, &str)> = vec![
        (dir.path().join("absent.toml").display().to_string(), "cannot read"),
        (file("binary.toml", &[0xff, 0xfe, 0x00, 0x13]), "cannot read the file: stream did not contain valid UTF-8"),
        (file("syntax.toml", b"[[mount]\nnamespace = \"a\"\n"), "TOML parse error at line 1"),
        (file("empty.toml", b""), "[[mount]]: none is set"),
        (
            file("unknown.toml", b"[[mount]]\nnamespace = \"a\"\ncommand = \"x\"\nretries = 3\n"),
            "unknown field `retries`",
        ),
        (
            file("neither.toml", b"[[mount]]\nnamespace = \"a\"\n"),
            "mount \"a\": none of `command`, `url` and `openapi` is set",
        ),
        (
            file(
                "token.toml",
                b"[[mount]]\nnamespace = \"a\"\nurl = \"http://h/mcp\"\ntoken_env = \"NO_SUCH_VARIABLE_SET\"\n",
            ),
            "NO_SUCH_VARIABLE_SET, which is not set",
        ),
    ];
    for (path, expected) in cases {
        let (code, stderr) = gateway_fails(&["--config", &path]);
        assert_eq!(code, Some(1), "{stderr}");
        assert!(stderr.starts_with(&format!("fusion-gateway: error: --config {path}: ")), "{stderr}");
        assert!(stderr.contains(expected), "expected {expected:?} in {stderr}");
    }
    let config = demo_config(dir.path());
    let (code, stderr) = gateway_fails(&["--config", &config.display().to_string(), "--lockfile", "no-such.lock"]);
    assert_eq!(code, Some(1));
    assert!(stderr.starts_with("fusion-gateway: error: --lockfile no-such.lock: "), "{stderr}");
    let (code, stderr) = gateway_fails(&["--config", &config.display().to_string(), "--stateless"]);
    assert_eq!(code, Some(2), "clap refuses --stateless without --http: {stderr}");
    let (code, _) = gateway_fails(&[]);
    assert_eq!(code, Some(2), "--config is required");
}

#[tokio::test]
async fn served_over_stdio_it_forwards_and_its_children_end_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let (command, args) = with_pid_file(
        &pid_file,
        &format!("'{}' --db '{}'", billing_server().display(), dir.path().join("b.db").display()),
    );
    let config = dir.path().join("gateway.toml");
    std::fs::write(&config, format!("[[mount]]\nnamespace = \"demo\"\ncommand = {command:?}\nargs = {args:?}\n"))
        .unwrap();
    let mut gateway = tokio::process::Command::new(GATEWAY);
    gateway.args(["--config", &config.display().to_string(), "--wait-for-upstreams"]);
    let client = ().serve(TokioChildProcess::new(gateway).unwrap()).await.unwrap();
    let tools: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    assert_eq!(tools, ["demo.billing"], "--wait-for-upstreams: the first tools/list has the mount's tools");
    let arguments = json!({"action": "list_invoices"}).as_object().cloned().unwrap();
    let listed = client.call_tool(CallToolRequestParams::new("demo.billing").with_arguments(arguments)).await.unwrap();
    assert_eq!(listed.is_error, Some(false));
    let child = read_pid(&pid_file).await;
    assert!(alive(child));
    client.cancel().await.unwrap();
    eventually("the upstream to end with the gateway", std::time::Duration::from_secs(10), || async {
        (!alive(child)).then_some(())
    })
    .await;
}

fn run(program: &Path, args: &[&str]) -> (bool, String) {
    let output = Command::new(program).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), text)
}

#[tokio::test]
async fn mounted_tools_are_locked_checked_and_their_drift_told_to_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let config = demo_config(dir.path());
    let lock = dir.path().join("fusion.lock").display().to_string();
    let stdio = format!("'{GATEWAY}' --config '{}' --wait-for-upstreams", config.display());

    let (locked, output) = run(&fusion(), &["lock", "--stdio", &stdio, "--lockfile", &lock]);
    assert!(locked, "{output}");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&lock).unwrap()).unwrap();
    assert!(file["tools"]["demo.billing"]["contract"]["actions"]["create_invoice"].is_object(), "{file:#}");
    let (checked, output) = run(&fusion(), &["check", "--stdio", &stdio, "--lockfile", &lock]);
    assert!(checked, "{output}");

    // The lock as it was when `amount_cents` was a string: the upstream has changed since.
    let mut contract = file["tools"]["demo.billing"]["contract"].clone();
    contract["actions"]["create_invoice"]["inputSchema"]["properties"]["amount_cents"] =
        json!({"type": "string", "description": "The total, as text."});
    let contract: ToolContract = serde_json::from_value(contract).unwrap();
    Lockfile::new(Contracts::from([("demo.billing".to_owned(), contract)])).write(Path::new(&lock)).unwrap();
    let (checked, output) = run(&fusion(), &["check", "--stdio", &stdio, "--lockfile", &lock]);
    assert!(!checked, "a drifted contract fails the check: {output}");
    assert!(output.contains("amount_cents"), "{output}");
    let diff =
        Command::new(fusion()).args(["diff", "--stdio", &stdio, "--lockfile", &lock, "--json"]).output().unwrap();
    let diff: Value = serde_json::from_slice(&diff.stdout).unwrap();
    assert!(diff.to_string().contains("actions.create_invoice.properties.amount_cents.type"), "{diff:#}");

    // Served with the old lock: the drift is logged when the upstream connects, and a model
    // that calls the changed action wrong is told what changed.
    let log = dir.path().join("gateway.log");
    let mut gateway = tokio::process::Command::new(GATEWAY);
    gateway.args(["--config", &config.display().to_string(), "--lockfile", &lock, "--wait-for-upstreams"]);
    let (transport, _) =
        TokioChildProcess::builder(gateway).stderr(Stdio::from(std::fs::File::create(&log).unwrap())).spawn().unwrap();
    let client = ().serve(transport).await.unwrap();
    let arguments = json!({"action": "create_invoice", "customer_email": "ana@example.com", "amount_cents": "12.50", "currency": "EUR"});
    let result = client
        .call_tool(CallToolRequestParams::new("demo.billing").with_arguments(arguments.as_object().cloned().unwrap()))
        .await
        .unwrap();
    let envelope = envelope(&result);
    assert_eq!(envelope.error.code, ErrorCode::ValidationError, "{}", text(&result));
    assert!(text(&result).contains("<contract_awareness"), "{}", text(&result));
    assert!(text(&result).contains("amount_cents"), "{}", text(&result));
    client.cancel().await.unwrap();
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.lines().any(|line| line.contains("contract changed") && line.contains("demo.billing")), "{logged}");
}

#[test]
fn http_takes_a_host_name_and_a_wrong_address_is_one_line() {
    use std::io::BufRead as _;
    let dir = tempfile::tempdir().unwrap();
    // An HTTP upstream no one serves: the gateway listens all the same, and starts no child.
    let config = dir.path().join("gateway.toml");
    std::fs::write(&config, "[[mount]]\nnamespace = \"away\"\nurl = \"http://127.0.0.1:1/mcp\"\n").unwrap();
    let config = config.display().to_string();

    let expected = "give HOST:PORT, like 127.0.0.1:8080, localhost:8080 or [::1]:8080 (port 0 picks a free one)";
    let (code, stderr) = gateway_fails(&["--config", &config, "--http", "127.0.0.1"]);
    let refused = format!(
        "error: invalid value '127.0.0.1' for '--http [<ADDR>]': no port; {expected}\n\nFor more information, try '--help'.\n"
    );
    assert_eq!((code, stderr), (Some(2), refused));
    let (code, stderr) = gateway_fails(&["--config", &config, "--http", "nohost.invalid:80"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.starts_with(
            "error: invalid value 'nohost.invalid:80' for '--http [<ADDR>]': cannot resolve the host nohost.invalid ("
        ),
        "{stderr}"
    );

    // RUST_LOG=warn: the start-up line, an INFO event with the address as a field, is logged anyway.
    let mut gateway = Command::new(GATEWAY)
        .args(["--config", &config, "--http", "localhost:0"])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(gateway.stderr.take().unwrap()).lines();
    let line = lines
        .find_map(|line| line.ok().filter(|line| line.contains("listening on")))
        .expect("the gateway logs where it listens");
    gateway.kill().unwrap();
    gateway.wait().unwrap();
    let (_time, event) = line.split_once(' ').unwrap();
    let event = event.trim_start();
    let url = event.strip_prefix("INFO fusion-gateway: listening on ").and_then(|rest| rest.split(' ').next());
    let addr = url.and_then(|url| url.strip_prefix("http://")?.strip_suffix("/mcp")).expect(&line);
    let bound: std::net::SocketAddr = addr.parse().expect(&line);
    assert!(bound.ip().is_loopback() && bound.port() != 0, "{line}");
    assert!(event.ends_with(&format!(" addr={addr}")), "{line}");
}

#[test]
fn help_tells_the_log_filter_and_where_the_limits_are() {
    let output = Command::new(GATEWAY).arg("--help").output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    for sentence in [
        "RUST_LOG sets what is logged, in tracing's EnvFilter syntax",
        "when it is unset the filter is info,rmcp=warn,rmcp::transport::streamable_http_client=off,rmcp::transport::worker=off.",
        "The start-up line `listening on http://ADDR/mcp` is logged at INFO whatever RUST_LOG says.",
        "A mount that leaves out timeout_ms fails a call its upstream has not answered in 60 s with TIMEOUT",
        "one that leaves out max_tools takes an upstream of at most 1000 tools",
        "one that leaves out max_active or rate_limit has no limit",
        "ADDR is HOST:PORT, the host an IP address or a name",
    ] {
        assert!(help.contains(sentence), "expected {sentence:?} in {help}");
    }
}

/// MCP lets a stdio client ignore stderr: the gateway's log and its upstream's (which inherits
/// it) fill the unread pipe within a few hundred calls, and every call is answered still.
#[tokio::test]
async fn with_stderr_a_pipe_nobody_reads_every_one_of_3000_calls_is_answered_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut gateway = tokio::process::Command::new(GATEWAY);
    gateway.args(["--config", &demo_config(dir.path()).display().to_string(), "--wait-for-upstreams"]);
    // Debug: the most lines a call writes, in the gateway and in the demo behind it.
    gateway.env("RUST_LOG", "debug");
    let (transport, stderr) = TokioChildProcess::builder(gateway).stderr(Stdio::piped()).spawn().unwrap();
    let _unread = stderr.expect("stderr is a pipe");
    let client = ().serve(transport).await.unwrap();
    for n in 0..3_000 {
        let arguments = if n % 2 == 0 {
            json!({"action": "list_invoices"})
        } else {
            json!({"action": "create_invoice", "amount_cents": "lots", "currency": "euro"})
        };
        let call = CallToolRequestParams::new("demo.billing").with_arguments(arguments.as_object().cloned().unwrap());
        let answered = tokio::time::timeout(std::time::Duration::from_secs(60), client.call_tool(call)).await;
        assert!(matches!(answered, Ok(Ok(_))), "call {n} of 3000 unanswered: {answered:?}");
    }
    client.cancel().await.unwrap();
}
