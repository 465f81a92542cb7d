//! The built `billing-server` binary over Streamable HTTP: started on a free loopback port,
//! driven by rmcp's HTTP client, stopped with SIGTERM.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_billing-server");

/// Starts the server with `extra` flags and returns it with its endpoint URL, read from the
/// line it prints once bound.
fn start(db: &std::path::Path, extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(BIN)
        .arg("--db")
        .arg(db)
        .args(["--http", "127.0.0.1:0"])
        .args(extra)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn billing-server");
    let stderr = child.stderr.take().expect("piped stderr");
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines.next().expect("the server prints its address").expect("readable stderr");
        if let Some(url) = line.strip_prefix("billing-server: listening on ") {
            break url.to_owned();
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, url)
}

fn terminate(child: &mut Child) -> std::process::ExitStatus {
    let pid = child.id().to_string();
    Command::new("kill").args(["-TERM", &pid]).status().expect("kill -TERM");
    for _ in 0..200 {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().ok();
    panic!("billing-server did not stop within 10 s of SIGTERM");
}

#[tokio::test]
async fn serves_http_statefully_and_statelessly_and_stops_on_sigterm() {
    for extra in [&[][..], &["--stateless"][..]] {
        let dir = tempfile::tempdir().unwrap();
        let (mut child, url) = start(&dir.path().join("billing.db"), extra);
        assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{url}");
        let client = ().serve(StreamableHttpClientTransport::from_uri(url)).await.expect("initialize over HTTP");
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(tools[0].name, "billing");
        let arguments = json!({"action": "get_invoice", "id": "inv_2026_9999"}).as_object().cloned();
        let result =
            client.call_tool(CallToolRequestParams::new("billing").with_arguments(arguments.unwrap())).await.unwrap();
        assert_eq!(result.is_error, Some(true));
        assert!(
            result.content[0].as_text().unwrap().text.contains("<detail key=\"requestedId\">inv_2026_9999</detail>"),
            "{result:?}"
        );
        drop(client);
        let status = terminate(&mut child);
        assert!(status.success(), "{extra:?}: exit {status}");
    }
}

#[test]
fn http_only_flags_need_http() {
    let output = Command::new(BIN).args(["--stateless"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--http"), "{stderr}");
    let output = Command::new(BIN).args(["--http", "not-an-address"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("invalid value 'not-an-address'"));
}

#[tokio::test]
async fn a_token_guards_http_calls() {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .arg("--db")
        .arg(dir.path().join("billing.db"))
        .args(["--http", "127.0.0.1:0"])
        .env("BILLING_TOKEN", "s3cret-token")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next().unwrap().unwrap();
        if let Some(url) = line.strip_prefix("billing-server: listening on ") {
            break url.to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let get = json!({"action": "get_invoice", "id": "inv_2026_0001"}).as_object().cloned().unwrap();
    for (token, expected) in
        [(Some("s3cret-token"), None), (Some("wrong"), Some("UNAUTHORIZED")), (None, Some("AUTH_REQUIRED"))]
    {
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone());
        if let Some(token) = token {
            config = config.auth_header(token);
        }
        let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
        let result = client.call_tool(CallToolRequestParams::new("billing").with_arguments(get.clone())).await.unwrap();
        let text = &result.content[0].as_text().unwrap().text;
        match expected {
            None => assert_eq!(result.is_error, Some(false), "{text}"),
            Some(code) => assert!(text.starts_with(&format!("<tool_error code=\"{code}\"")), "{text}"),
        }
        drop(client);
    }
    assert!(terminate(&mut child).success());
}
