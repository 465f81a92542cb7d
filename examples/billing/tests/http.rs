//! The built `billing-server` binary over Streamable HTTP: started on a free loopback port,
//! driven by rmcp's HTTP client, stopped with SIGTERM.

mod support;

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
    assert!(String::from_utf8_lossy(&output.stderr).contains("invalid value 'not-an-address'"));
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
