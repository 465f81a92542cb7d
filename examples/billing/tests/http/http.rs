//! The built `billing-server` binary over Streamable HTTP: started on a free loopback port,
//! driven by rmcp's HTTP client, stopped with SIGTERM.

use crate::support;

use std::process::Command;

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::json;

#[tokio::test]
async fn serves_http_statefully_and_statelessly_and_stops_on_sigterm() {
    for extra in [&[][..], &["--stateless"][..]] {
        let dir = tempfile::tempdir().unwrap();
        let mut server = support::spawn_http(&dir.path().join("billing.db"), extra, &[]);
        let url = server.url.clone();
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
        let status = server.terminate();
        assert!(status.success(), "{extra:?}: exit {status}");
    }
}

#[test]
fn http_only_flags_need_http() {
    let output = Command::new(support::BIN).args(["--stateless"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--http"), "{stderr}");
    let output = Command::new(support::BIN).args(["--http", "not-an-address"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.starts_with("error: invalid value 'not-an-address' for '--http [<ADDR>]': no port; give HOST:PORT"),
        "{said}"
    );
}

#[tokio::test]
async fn http_takes_a_host_name_and_logs_where_it_listens() {
    let dir = tempfile::tempdir().unwrap();
    // RUST_LOG=warn (as spawn_http sets it): the start-up line is logged all the same.
    let mut server = support::spawn_http_on("localhost:0", &dir.path().join("billing.db"), &[], &[]);
    let url = server.url.clone();
    let addr = url.strip_prefix("http://").and_then(|rest| rest.strip_suffix("/mcp")).expect("http://ADDR/mcp");
    let bound: std::net::SocketAddr = addr.parse().expect("an address");
    assert!(bound.ip().is_loopback() && bound.port() != 0, "{url}");
    // One log format: a tracing event at INFO, the address as a field, the URL in the message.
    let line = &server.line;
    let (time, event) = line.split_once(' ').unwrap();
    assert!(time.len() > 20 && time.ends_with('Z') && time.contains('T'), "a timestamp: {line}");
    assert_eq!(event.trim_start(), format!("INFO billing-server: listening on {url} addr={addr}"));
    let client = ().serve(StreamableHttpClientTransport::from_uri(url)).await.expect("initialize over HTTP");
    assert_eq!(client.list_all_tools().await.unwrap()[0].name, "billing");
    drop(client);
    assert!(server.terminate().success());
}

/// Runs the binary to its end with `args`: exit code and stderr.
fn run_to_exit(args: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(support::BIN)
        .arg("--db")
        .arg(dir.path().join("billing.db"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(output.stdout.is_empty());
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn a_wrong_address_is_refused_in_one_line() {
    let expected = "give HOST:PORT, like 127.0.0.1:8080, localhost:8080 or [::1]:8080 (port 0 picks a free one)";
    // clap's own form for a flag's wrong value: the value, the flag, then the sentence.
    let refused = |addr: &str, why: &str| {
        format!("error: invalid value '{addr}' for '--http [<ADDR>]': {why}\n\nFor more information, try '--help'.\n")
    };
    let cases = [
        ("127.0.0.1", format!("no port; {expected}")),
        ("::1", format!("an IPv6 address needs brackets, like [::1]:8080; {expected}")),
        ("[::1]", format!("no port; {expected}")),
        ("localhost:99999", format!("the port \"99999\" is not a number from 0 to 65535; {expected}")),
        (":8080", format!("no host; {expected}")),
    ];
    for (addr, why) in cases {
        assert_eq!(run_to_exit(&["--http", addr]), (Some(2), refused(addr, &why)), "--http {addr}");
    }
    // The resolver's own words, in the sentence.
    let (code, said) = run_to_exit(&["--http", "nohost.invalid:80"]);
    assert_eq!(code, Some(2), "{said}");
    let first = said.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(
            "error: invalid value 'nohost.invalid:80' for '--http [<ADDR>]': cannot resolve the host nohost.invalid ("
        ),
        "{said}"
    );
    assert!(
        first.ends_with("); give an IP address or a name this machine resolves, like 127.0.0.1:8080 or localhost:8080"),
        "{said}"
    );
}

#[test]
fn help_tells_the_log_filter_and_what_the_limits_left_out_mean() {
    let output = Command::new(support::BIN).arg("--help").output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    for sentence in [
        "RUST_LOG sets what is logged, in tracing's EnvFilter syntax",
        "when it is unset the filter is info,rmcp=warn.",
        "The start-up line `listening on http://ADDR/mcp` is logged at INFO whatever RUST_LOG says.",
        "leaving out --max-active means no limit on the calls running at once;",
        "leaving out --rate-limit means no limit on how often a caller may call;",
        "leaving out --timeout-ms means no time limit on an action.",
        "(see --max-queue). Left out: no limit --max-queue",
        "more get RATE_LIMITED. Left out: no limit --timeout-ms",
        "with TIMEOUT. Left out: no time limit --token",
        "ADDR is HOST:PORT, the host an IP address or a name (`localhost:8080`, `[::1]:8080`)",
    ] {
        assert!(help.contains(sentence), "expected {sentence:?} in {help}");
    }
}

#[tokio::test]
async fn a_token_guards_every_http_request() {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let dir = tempfile::tempdir().unwrap();
    let mut server = support::spawn_http(&dir.path().join("billing.db"), &[], &[("BILLING_TOKEN", "s3cret-token")]);
    let url = server.url.clone();
    let get = json!({"action": "get_invoice", "id": "inv_2026_0001"}).as_object().cloned().unwrap();
    let connect = |token: Option<&'static str>| {
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone());
        if let Some(token) = token {
            config = config.auth_header(token);
        }
        ().serve(StreamableHttpClientTransport::from_config(config))
    };
    let client = connect(Some("s3cret-token")).await.unwrap();
    let result = client.call_tool(CallToolRequestParams::new("billing").with_arguments(get)).await.unwrap();
    assert_eq!(result.is_error, Some(false));
    drop(client);
    // Without the token, or with another, no session is opened: the handshake gets 401.
    for token in [Some("wrong"), None] {
        let Err(refused) = connect(token).await else { panic!("the handshake was accepted without the token") };
        assert!(format!("{refused:?}").contains("AuthRequired"), "{refused:?}");
    }
    assert!(server.terminate().success());
}

/// One HTTP/1.1 request on its own connection: the status and the body.
fn http_get(url: &str, method: &str, path: &str) -> (u16, String) {
    let addr = url.strip_prefix("http://").and_then(|rest| rest.strip_suffix("/mcp")).expect("http://ADDR/mcp");
    http_request(url, method, path, &format!("Host: {addr}"))
}

/// One HTTP/1.1 request on its own connection with these header lines: the status and the
/// body.
fn http_request(url: &str, method: &str, path: &str, headers: &str) -> (u16, String) {
    use std::io::{Read as _, Write as _};
    let addr = url.strip_prefix("http://").and_then(|rest| rest.strip_suffix("/mcp")).expect("http://ADDR/mcp");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(stream, "{method} {path} HTTP/1.1\r\n{headers}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response.split(' ').nth(1).and_then(|code| code.parse().ok()).expect("a status line");
    let body = response.split_once("\r\n\r\n").map(|(_, body)| body.to_owned()).unwrap_or_default();
    (status, body)
}

/// `line` is one of the lines of a scrape.
fn assert_line(scrape: &str, line: &str) {
    assert!(scrape.lines().any(|l| l == line), "no line {line:?} in:\n{scrape}");
}

#[tokio::test]
async fn metrics_count_each_outcome_and_time_each_call() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = support::spawn_http(&dir.path().join("billing.db"), &["--metrics", "--max-active", "4"], &[]);
    // Before any call, every action's outcomes are there at 0: rates and alerts work from the start.
    let (status, before) = http_get(&server.url, "GET", "/metrics");
    assert_eq!(status, 200, "{before}");
    for line in [
        r#"mcp_fusion_calls_total{action="billing.get_invoice",outcome="ok"} 0"#,
        r#"mcp_fusion_calls_total{action="billing.get_invoice",outcome="NOT_FOUND"} 0"#,
        r#"mcp_fusion_calls_total{action="billing.void_invoice",outcome="INTERNAL_ERROR"} 0"#,
        r#"mcp_fusion_calls_total{action="billing.export_invoices",outcome="TIMEOUT"} 0"#,
    ] {
        assert_line(&before, line);
    }
    let client = mcp_fusion_client::FusionClient::connect_http(&server.url, None).await.unwrap();
    let call = |id: &str| client.call("billing.get_invoice", json!({"id": id}));
    assert!(call("inv_2026_0001").await.is_ok());
    assert!(call("inv_2026_0002").await.is_ok());
    assert_eq!(
        call("INV-1").await.unwrap_err().code().map(|c| c.as_str().to_owned()).as_deref(),
        Some("VALIDATION_ERROR")
    );
    assert_eq!(
        call("inv_2099_0001").await.unwrap_err().code().map(|c| c.as_str().to_owned()).as_deref(),
        Some("NOT_FOUND")
    );
    // A tool name nothing serves, sent as is: counted, but under no series of its own.
    let raw = ().serve(StreamableHttpClientTransport::from_uri(server.url.clone())).await.unwrap();
    let unknown = raw.call_tool(CallToolRequestParams::new("made_up_tool_7")).await.unwrap();
    assert_eq!(unknown.is_error, Some(true));

    let (status, metrics) = http_get(&server.url, "GET", "/metrics");
    assert_eq!(status, 200, "{metrics}");
    for line in [
        r#"mcp_fusion_calls_total{action="billing.get_invoice",outcome="ok"} 2"#,
        r#"mcp_fusion_calls_total{action="billing.get_invoice",outcome="VALIDATION_ERROR"} 1"#,
        r#"mcp_fusion_calls_total{action="billing.get_invoice",outcome="NOT_FOUND"} 1"#,
        r#"mcp_fusion_calls_total{action="billing.get_invoice",outcome="TIMEOUT"} 0"#,
        r#"mcp_fusion_calls_total{action="billing.void_invoice",outcome="ok"} 0"#,
        r#"mcp_fusion_calls_total{action="(unknown)",outcome="UNKNOWN_ACTION"} 1"#,
        "# TYPE mcp_fusion_call_duration_seconds histogram",
        r#"mcp_fusion_call_duration_seconds_bucket{action="billing.get_invoice",le="+Inf"} 4"#,
        r#"mcp_fusion_call_duration_seconds_count{action="billing.get_invoice"} 4"#,
        "mcp_fusion_calls_in_flight 0",
        r#"mcp_fusion_concurrency_active{guard="billing"} 0"#,
        r#"mcp_fusion_concurrency_queued{guard="billing"} 0"#,
    ] {
        assert_line(&metrics, line);
    }
    // Names and codes only: no argument's value.
    assert!(!["inv_2099", "INV-1", "made_up_tool_7"].iter().any(|sent| metrics.contains(sent)), "{metrics}");

    let (status, health) = http_get(&server.url, "GET", "/healthz");
    assert_eq!((status, health.as_str()), (200, r#"{"status":"ok","in_flight":0}"#));
    assert_eq!(http_get(&server.url, "POST", "/metrics").0, 405);
    assert_eq!(http_get(&server.url, "GET", "/elsewhere").0, 404);
    drop((client, raw));
    assert!(server.terminate().success());

    // Without --metrics, no /metrics; /healthz all the same.
    let mut plain = support::spawn_http(&dir.path().join("billing.db"), &[], &[]);
    assert_eq!(http_get(&plain.url, "GET", "/metrics").0, 404);
    assert_eq!(http_get(&plain.url, "GET", "/healthz").0, 200);
    assert!(plain.terminate().success());
    // --metrics is for HTTP.
    let (code, said) = run_to_exit(&["--metrics"]);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("--http"), "{said}");
}

#[tokio::test]
async fn probes_obey_the_host_and_origin_rules_of_the_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let server = support::spawn_http(&dir.path().join("billing.db"), &["--metrics"], &[]);
    let addr = server.url.strip_prefix("http://").and_then(|rest| rest.strip_suffix("/mcp")).unwrap().to_owned();
    for path in ["/healthz", "/metrics"] {
        assert_eq!(http_get(&server.url, "GET", path).0, 200, "{path}");
        let from_page = format!("Host: {addr}\r\nOrigin: http://localhost:3000");
        assert_eq!(http_request(&server.url, "GET", path, &from_page).0, 200, "{path}: a loopback page");
        // A name rebound to the loopback, and a page of another site: what /mcp refuses.
        for headers in ["Host: evil.example".to_owned(), format!("Host: {addr}\r\nOrigin: https://evil.example")] {
            let (status, body) = http_request(&server.url, "GET", path, &headers);
            assert_eq!(status, 403, "{path} with {headers:?}: {body}");
            assert!(!body.contains("in_flight") && !body.contains("fusion_calls"), "{body}");
            assert_eq!(http_request(&server.url, "POST", "/mcp", &headers).0, 403, "/mcp with {headers:?}");
        }
    }
    // Where the operator allows a host, the probes answer it too.
    let public = support::spawn_http(&dir.path().join("other.db"), &["--allowed-host", "billing.example"], &[]);
    assert_eq!(http_request(&public.url, "GET", "/healthz", "Host: billing.example").0, 200);
    assert_eq!(http_request(&public.url, "GET", "/healthz", "Host: evil.example").0, 403);
}
