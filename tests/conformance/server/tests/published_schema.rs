//! A schema written by hand reaches `tools/list` byte for byte: the suite's 2020-12 schema, in
//! the raw bytes of the HTTP answer, is the written text with its whitespace taken out — every
//! keyword, value and key in the order written — and one addition, the framework's own: the
//! object behind `$ref`, which the suite leaves open, closed beside the reference.

use axum::body::Body;
use http::Request;
use mcp_fusion::http::HttpConfig;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;

/// The JSON text without the whitespace between its tokens, done on the characters (not through
/// serde_json, which could reorder keys on both sides alike).
fn minified(text: &str) -> String {
    let (mut out, mut in_string, mut escaped) = (String::new(), false, false);
    for c in text.chars() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c.is_whitespace() {
            continue;
        } else {
            in_string = c == '"';
        }
        out.push(c);
    }
    out
}

#[tokio::test]
async fn the_suites_2020_12_schema_is_listed_as_written() {
    for direct in [true, false] {
        let config = HttpConfig::new("127.0.0.1:0").stateless(true).direct_path(direct);
        let app =
            mcp_fusion::http::router(fusion_conformance_server::server().unwrap(), &config, CancellationToken::new());
        let request = Request::post("/mcp")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .body(Body::from(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#))
            .unwrap();
        let response = app.oneshot(request).await.unwrap();
        assert_eq!(response.status(), 200);
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        let answer = String::from_utf8(bytes.to_vec()).unwrap();
        let written = minified(fusion_conformance_server::SCHEMA_2020_12);
        let reference = r##""address":{"$ref":"#/$defs/address"}"##;
        assert!(written.contains(reference));
        let closed = r##""address":{"$ref":"#/$defs/address","unevaluatedProperties":false}"##;
        let written = format!(r#""inputSchema":{}"#, written.replace(reference, closed));
        assert!(answer.contains(&written), "direct path {direct}: {written}\nnot in\n{answer}");
    }
}

#[test]
fn minifying_keeps_strings_whole() {
    assert_eq!(minified(r#"{ "a b": "c \" d\\", "e": [1, 2] }"#), r#"{"a b":"c \" d\\","e":[1,2]}"#);
}
