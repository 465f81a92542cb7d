//! The built `billing-server` over HTTP, driven by rmcp's client: a listen request for too many
//! resource URIs refused at once, and the bounds on subscriptions set by flags.

use crate::support;

use std::time::{Duration, Instant};

use rmcp::model::{ErrorCode, ProtocolVersion, SubscribeRequestParams, SubscriptionFilter};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ErrorData, ServiceExt as _};

fn invoices(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("billing://invoices/inv_2026_{i:04}")).collect()
}

fn rpc_error<T: std::fmt::Debug>(result: Result<T, ServiceError>) -> ErrorData {
    match result {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error, got {:.300}", format!("{other:?}")),
    }
}

#[tokio::test]
async fn a_listen_for_too_many_uris_is_refused_at_once_and_its_bound_is_a_flag() {
    for (extra, asked, limit) in [(&[][..], 30_000, 100), (&["--max-uris-per-listen", "5"][..], 6, 5)] {
        let dir = tempfile::tempdir().unwrap();
        let mut server = support::spawn_http(&dir.path().join("billing.db"), extra, &[]);
        let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
        let transport = StreamableHttpClientTransport::from_uri(server.url.clone());
        let client = ().serve_with_lifecycle(transport, lifecycle).await.unwrap();
        let filter = SubscriptionFilter::builder().resource_subscriptions(invoices(asked)).build();
        let started = Instant::now();
        let error = rpc_error(client.listen(filter).await);
        let took = started.elapsed();
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        let said = format!("holds {asked} URIs, and this server accepts at most {limit} per listen request");
        assert!(error.message.contains(&said), "{extra:?}: {error:?}");
        assert!(took < Duration::from_secs(2), "{extra:?}: refused in {took:?}");
        drop(client);
        assert!(server.terminate().success());
    }
}

#[tokio::test]
#[allow(deprecated, reason = "resources/subscribe is how clients before 2026-07-28 subscribe")]
async fn a_session_subscribes_within_the_flag_s_bound() {
    let dir = tempfile::tempdir().unwrap();
    let mut server =
        support::spawn_http(&dir.path().join("billing.db"), &["--max-subscriptions-per-session", "2"], &[]);
    let client = ().serve(StreamableHttpClientTransport::from_uri(server.url.clone())).await.unwrap();
    for uri in ["billing://summary", "billing://invoices/inv_2026_0001"] {
        client.subscribe(SubscribeRequestParams::new(uri)).await.unwrap();
    }
    let error = rpc_error(client.subscribe(SubscribeRequestParams::new("billing://invoices/inv_2026_0002")).await);
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(error.message.starts_with("This session holds 2 resource subscriptions and asked for 1 more"), "{error:?}");
    // An id a read refuses is refused the same way.
    let error = rpc_error(client.subscribe(SubscribeRequestParams::new("billing://invoices/INV-1")).await);
    assert!(
        error.message.starts_with("Invalid parameters in the resource URI 'billing://invoices/INV-1':"),
        "{error:?}"
    );
    drop(client);
    assert!(server.terminate().success());
}
