//! Resources end to end through a real rmcp client: listing with pages, reading fixed URIs and
//! templates with typed parameters, every failure as the JSON-RPC error a client gets, and
//! resources that come and go while clients are connected.

use crate::support;

use mcp_fusion::resource::{Blob, Resource, ResourceTemplate};
use mcp_fusion::wire::ToolError;
use mcp_fusion::{BuildError, Ctx, FusionServer, Json};
use rmcp::ErrorData;
use rmcp::model::{ErrorCode, PaginatedRequestParams, ReadResourceRequestParams, ResourceContents};
use rmcp::service::ServiceError;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use support::connect;

#[derive(Deserialize, JsonSchema)]
struct InvoiceUri {
    /// The invoice id, like `inv_7`.
    id: String,
}

#[derive(Deserialize, JsonSchema)]
struct PageUri {
    /// The page number, from 1.
    #[schemars(range(min = 1))]
    page: u32,
}

async fn invoice(_ctx: Ctx<()>, uri: InvoiceUri) -> Result<Json<Value>, ToolError> {
    if uri.id == "inv_404" {
        return Err(ToolError::not_found(format!("No invoice with id \"{}\".", uri.id))
            .suggest("List invoices first, then read one that exists.")
            .actions(["billing.list_invoices"]));
    }
    Ok(Json(json!({"id": uri.id, "amount_cents": 1200})))
}

async fn page(_ctx: Ctx<()>, uri: PageUri) -> Result<String, ToolError> {
    Ok(format!("page {}", uri.page))
}

fn server() -> FusionServer {
    FusionServer::builder("resources-test", "1")
        .resource(
            Resource::new("billing://summary", "summary")
                .description("Totals per status.")
                .handler(|_ctx: Ctx<()>| async { Ok::<_, ToolError>("2 open, 1 paid") }),
        )
        .resource(
            Resource::new("billing://logo", "logo")
                .mime_type("image/png")
                .handler(|_ctx: Ctx<()>| async { Ok::<_, ToolError>(Blob(vec![0x89, b'P', b'N', b'G'])) }),
        )
        .resource(
            Resource::new("billing://secret", "secret")
                .requires_identity()
                .handler(|_ctx: Ctx<()>| async { Ok::<_, ToolError>("hidden") }),
        )
        .resource(Resource::new("billing://broken", "broken").handler(|_ctx: Ctx<()>| async {
            if std::hint::black_box(true) {
                panic!("the ledger is gone");
            }
            Ok::<_, ToolError>("never")
        }))
        .resource_template(
            ResourceTemplate::new("billing://invoices/{id}", "invoice")
                .description("One invoice as JSON.")
                .handler(invoice),
        )
        .resource_template(ResourceTemplate::new("docs://pages/{page}", "page").handler(page))
        .build(())
        .unwrap()
}

/// The JSON-RPC error of a request that failed.
fn rpc_error(result: Result<impl std::fmt::Debug, ServiceError>) -> ErrorData {
    match result {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

async fn read(client: &support::Client, uri: &str) -> Result<Vec<ResourceContents>, ServiceError> {
    client.read_resource(ReadResourceRequestParams::new(uri)).await.map(|result| result.contents)
}

#[tokio::test]
async fn resources_and_templates_are_listed_and_declared() {
    let client = connect(server()).await;
    let info = client.peer_info().unwrap();
    assert!(info.capabilities.resources.is_some(), "the server declares resources");
    let listed = client.list_resources(None).await.unwrap();
    let uris: Vec<&str> = listed.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["billing://summary", "billing://logo", "billing://secret", "billing://broken"]);
    assert_eq!(listed.resources[0].description.as_deref(), Some("Totals per status."));
    assert_eq!(listed.next_cursor, None);
    let templates = client.list_resource_templates(None).await.unwrap();
    let templates: Vec<&str> = templates.resource_templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert_eq!(templates, ["billing://invoices/{id}", "docs://pages/{page}"]);
}

#[tokio::test]
async fn a_server_without_resources_declares_none() {
    let server = FusionServer::builder("tools-only", "1")
        .group(mcp_fusion::Group::new("t", "T.").action(
            mcp_fusion::Action::new("a", "A.").handler(|_ctx: Ctx<()>, _: PageUri| async { Ok::<_, ToolError>("a") }),
        ))
        .build(())
        .unwrap();
    let client = connect(server).await;
    assert!(client.peer_info().unwrap().capabilities.resources.is_none());
}

#[tokio::test]
async fn fixed_resources_and_templates_read_with_their_types() {
    let client = connect(server()).await;
    let json = |contents: Vec<ResourceContents>| serde_json::to_value(contents).unwrap();
    assert_eq!(
        json(read(&client, "billing://summary").await.unwrap()),
        json!([{"uri": "billing://summary", "mimeType": "text/plain", "text": "2 open, 1 paid"}])
    );
    assert_eq!(
        json(read(&client, "billing://logo").await.unwrap()),
        json!([{"uri": "billing://logo", "mimeType": "image/png", "blob": "iVBORw=="}])
    );
    assert_eq!(
        json(read(&client, "billing://invoices/inv_7").await.unwrap()),
        json!([{"uri": "billing://invoices/inv_7", "mimeType": "application/json", "text": "{\"id\":\"inv_7\",\"amount_cents\":1200}"}])
    );
    // A number in the URI reaches a numeric field as a number; a percent-escape is decoded.
    assert_eq!(json(read(&client, "docs://pages/3").await.unwrap())[0]["text"], "page 3");
    assert_eq!(
        json(read(&client, "billing://invoices/inv%5F8").await.unwrap())[0]["uri"],
        "billing://invoices/inv%5F8"
    );
}

#[tokio::test]
async fn an_unknown_uri_names_the_closest_and_what_to_call() {
    let client = connect(server()).await;
    let error = rpc_error(read(&client, "billing://invoice/inv_7").await);
    assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
    assert_eq!(
        error.message,
        "Resource not found: 'billing://invoice/inv_7'. Did you mean 'billing://invoices/inv_7'? \
         Call resources/list for the resources this server reads and resources/templates/list for its URI templates."
    );
    assert_eq!(error.data, Some(json!({"uri": "billing://invoice/inv_7", "closest": ["billing://invoices/inv_7"]})));
    let error = rpc_error(read(&client, "billing://sumary").await);
    assert_eq!(
        error.message,
        "Resource not found: 'billing://sumary'. Did you mean 'billing://summary'? \
         Call resources/list for the resources this server reads and resources/templates/list for its URI templates."
    );
    let error = rpc_error(read(&client, "ftp://elsewhere").await);
    assert_eq!(
        error.message,
        "Resource not found: 'ftp://elsewhere'. \
         Call resources/list for the resources this server reads and resources/templates/list for its URI templates."
    );
}

#[tokio::test]
async fn a_not_found_names_the_uri_as_asked_when_the_message_cuts_it() {
    let client = connect(server()).await;
    // 51 characters: the message cuts it, `data` keeps it whole so the client knows which read
    // failed (SEP-2164); a URI with a character no reader would see stays cut and escaped.
    let uri = "test://nonexistent-resource-for-conformance-testing";
    let error = rpc_error(read(&client, uri).await);
    assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
    assert!(error.message.starts_with("Resource not found: 'test://nonexistent-resource-for-conformance-tes...'."));
    assert_eq!(error.data.unwrap()["uri"], uri);
    let hidden = "test://a\u{200b}b";
    let error = rpc_error(read(&client, hidden).await);
    assert_eq!(error.data.unwrap()["uri"], "'test://a\\u{200b}b'");
}

#[tokio::test]
async fn errors_echo_at_most_a_cut_of_a_long_uri() {
    let client = connect(server()).await;
    let small = |error: &ErrorData| serde_json::to_string(error).unwrap().len() < 2_000;
    let pages = format!("docs://pages/{}", "9".repeat(3 << 20));
    let error = rpc_error(read(&client, &pages).await);
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(small(&error), "{error:.300?}");
    assert_eq!(error.data.unwrap()["uri"], format!("'{}...'", &pages[..47]));
    // A near miss of a template: the closest expansion repeats the sent segment.
    let near = format!("billing://invoice/{}", "a".repeat(3 << 20));
    let error = rpc_error(read(&client, &near).await);
    assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
    assert!(small(&error), "{error:.300?}");
    let closest = format!("'billing://invoices/{}...'", "a".repeat(28));
    assert_eq!(error.data, Some(json!({"uri": format!("'{}...'", &near[..47]), "closest": [closest]})));
    let error = rpc_error(read(&client, &format!("billing://{}", "s".repeat(3 << 20))).await);
    assert!(small(&error), "{error:.300?}");
}

#[tokio::test]
async fn parameters_that_do_not_fit_get_one_sentence_per_field() {
    let client = connect(server()).await;
    let error = rpc_error(read(&client, "docs://pages/two").await);
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        error.message,
        "Invalid parameters in the resource URI 'docs://pages/two':\n\
         page: Invalid type. You sent: 'two'. Expected an integer of at least 1: the page number, from 1.\n\
         Fix the URI and read it again; resources/templates/list describes the templates."
    );
    let data = error.data.unwrap();
    assert_eq!(data["fields"][0]["name"], "page");
    let error = rpc_error(read(&client, "docs://pages/0").await);
    assert_eq!(error.message.lines().nth(1), Some("page: Too small. You sent: 0. Expected at least 1."));
}

#[tokio::test]
async fn a_handlers_error_keeps_its_code_message_and_recovery() {
    let client = connect(server()).await;
    let error = rpc_error(read(&client, "billing://invoices/inv_404").await);
    assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
    assert_eq!(error.message, "No invoice with id \"inv_404\". List invoices first, then read one that exists.");
    let data = error.data.unwrap();
    assert_eq!(data["code"], "NOT_FOUND");
    assert_eq!(data["recovery"], "List invoices first, then read one that exists.");
    assert_eq!(data["available_actions"], json!(["billing.list_invoices"]));
    assert!(data["envelope"].as_str().unwrap().starts_with("<tool_error code=\"NOT_FOUND\""), "{data}");
}

#[tokio::test]
async fn guards_refuse_a_read_as_they_refuse_a_call() {
    let client = connect(server()).await;
    let error = rpc_error(read(&client, "billing://secret").await);
    assert_eq!(error.code, ErrorCode(-32000));
    assert_eq!(
        error.message,
        "billing://secret needs an authenticated caller, and this call came without credentials. \
         Tell the user this action needs them to sign in (the client must send a bearer token); do not retry until then."
    );
    assert_eq!(error.data.unwrap()["code"], "AUTH_REQUIRED");
}

#[tokio::test]
async fn a_panicking_handler_is_an_internal_error_naming_the_resource() {
    let client = connect(server()).await;
    let error = rpc_error(read(&client, "billing://broken").await);
    assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
    let data = error.data.unwrap();
    assert_eq!(data["code"], "INTERNAL_ERROR");
    assert_eq!(data["severity"], "critical");
    assert_eq!(data["message"], "[billing://broken] panicked: the ledger is gone");
    // The server goes on.
    assert!(read(&client, "billing://summary").await.is_ok());
}

#[tokio::test]
async fn long_lists_come_in_pages() {
    let mut builder = FusionServer::builder("many", "1");
    for i in 0..150 {
        builder = builder.resource(
            Resource::new(format!("many://{i:03}"), format!("r{i}"))
                .handler(|_ctx: Ctx<()>| async { Ok::<_, ToolError>("x") }),
        );
    }
    let client = connect(builder.build(()).unwrap()).await;
    let first = client.list_resources(None).await.unwrap();
    assert_eq!((first.resources.len(), first.next_cursor.as_deref()), (100, Some("100")));
    let second =
        client.list_resources(Some(PaginatedRequestParams::default().with_cursor(first.next_cursor))).await.unwrap();
    assert_eq!((second.resources.len(), second.next_cursor), (50, None));
    assert_eq!(second.resources[0].uri, "many://100");
    let error =
        rpc_error(client.list_resources(Some(PaginatedRequestParams::default().with_cursor(Some("zz".into())))).await);
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        error.message,
        "Invalid cursor 'zz': use the nextCursor of the previous page, or no cursor for the first page"
    );
}

fn build_error(builder: mcp_fusion::ServerBuilder<()>) -> String {
    match builder.build(()) {
        Err(error) => error.to_string(),
        Ok(_) => panic!("the server should not build"),
    }
}

#[test]
fn resources_that_cannot_be_served_do_not_build() {
    let text = |_ctx: Ctx<()>| async { Ok::<_, ToolError>("x") };
    let base = || FusionServer::builder("bad", "1");
    assert_eq!(
        build_error(base().resource_template(ResourceTemplate::new("x://{id}/{extra}", "t").handler(invoice))),
        "the template \"x://{id}/{extra}\" and the fields of its handler's parameters differ: the struct has no field \"extra\"; give the struct one field per {parameter}"
    );
    assert_eq!(
        build_error(base().resource_template(ResourceTemplate::new("x://{page_id}", "t").handler(page))),
        "the template \"x://{page_id}\" and the fields of its handler's parameters differ: the struct has no field \"page_id\"; the template has no parameter for the required field \"page\"; give the struct one field per {parameter}"
    );
    assert_eq!(
        build_error(base().resource_template(ResourceTemplate::new("x://{+path}", "t").handler(invoice))),
        "the resource \"x://{+path}\" cannot be served: the parameter {+path} is not a plain name (A-Z a-z 0-9 _); only level-1 templates are served"
    );
    assert_eq!(
        build_error(base().resource(Resource::new("x://{id}", "r").handler(text))),
        "the resource \"x://{id}\" cannot be served: a fixed URI has no {parameter}: declare it as a ResourceTemplate"
    );
    assert_eq!(
        build_error(base().resource(Resource::new("x://a", "r"))),
        "the resource \"x://a\" cannot be served: it has no handler: call `.handler(..)` on it"
    );
    let twice =
        base().resource(Resource::new("x://a", "r").handler(text)).resource(Resource::new("x://a", "s").handler(text));
    assert!(matches!(twice.build(()), Err(BuildError::Duplicate { what: "resource", .. })));
}

/// A server whose one action changes an invoice and says so.
fn server_that_pays() -> FusionServer {
    #[derive(Deserialize, JsonSchema)]
    struct Pay {
        id: String,
    }
    async fn pay(ctx: Ctx<()>, input: Pay) -> Result<String, ToolError> {
        ctx.call().resource_updated(&format!("billing://invoices/{}", input.id));
        Ok(format!("paid {}", input.id))
    }
    FusionServer::builder("subscriptions-test", "1")
        .group(
            mcp_fusion::Group::new("billing", "Invoices.").action(mcp_fusion::Action::new("pay", "Pay.").handler(pay)),
        )
        .resource_template(ResourceTemplate::new("billing://invoices/{id}", "invoice").handler(invoice))
        .build(())
        .unwrap()
}

/// The URIs of `notifications/resources/updated`, as received.
#[derive(Clone, Default)]
struct Updates(std::sync::Arc<std::sync::Mutex<Vec<String>>>, std::sync::Arc<tokio::sync::Notify>);

impl rmcp::ClientHandler for Updates {
    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.lock().unwrap().push(params.uri);
        self.1.notify_one();
    }
}

#[tokio::test]
#[allow(deprecated, reason = "resources/subscribe is how clients before 2026-07-28 subscribe")]
async fn a_subscriber_hears_of_a_change_and_an_unsubscriber_does_not() {
    use rmcp::ServiceExt;
    use rmcp::model::{SubscribeRequestParams, UnsubscribeRequestParams};
    let server = server_that_pays();
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let serving = server.clone();
    tokio::spawn(async move {
        if let Ok(running) = serving.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let updates = Updates::default();
    let client = updates.clone().serve(client_io).await.unwrap();
    assert_eq!(client.peer_info().unwrap().capabilities.resources.as_ref().unwrap().subscribe, Some(true));
    client.subscribe(SubscribeRequestParams::new("billing://invoices/inv_7")).await.unwrap();
    // Twice is once.
    client.subscribe(SubscribeRequestParams::new("billing://invoices/inv_7")).await.unwrap();
    support::call(&client, "billing", json!({"action": "pay", "id": "inv_8"})).await;
    support::call(&client, "billing", json!({"action": "pay", "id": "inv_7"})).await;
    tokio::time::timeout(std::time::Duration::from_secs(5), updates.1.notified()).await.expect("an update arrives");
    // The server itself can say so too, for a change made elsewhere.
    server.resource_updated("billing://invoices/inv_7");
    tokio::time::timeout(std::time::Duration::from_secs(5), updates.1.notified()).await.expect("a second update");
    client.unsubscribe(UnsubscribeRequestParams::new("billing://invoices/inv_7")).await.unwrap();
    support::call(&client, "billing", json!({"action": "pay", "id": "inv_7"})).await;
    // A read after the call is answered after any notification the call sent.
    client.read_resource(ReadResourceRequestParams::new("billing://invoices/inv_7")).await.unwrap();
    assert_eq!(*updates.0.lock().unwrap(), ["billing://invoices/inv_7", "billing://invoices/inv_7"]);
    // Only what the server serves can be subscribed to.
    let error = rpc_error(client.subscribe(SubscribeRequestParams::new("billing://invoice/inv_7")).await);
    assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
}

#[tokio::test]
async fn a_listener_hears_of_the_uris_it_asked_for() {
    use rmcp::model::ProtocolVersion;
    use rmcp::model::{ServerNotification, SubscriptionFilter};
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    let server = server_that_pays();
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = rmcp::ServiceExt::serve(server, server_io).await {
            let _ = running.waiting().await;
        }
    });
    // Listening is the 2026-07-28 way: a client that discovers rather than initializes.
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let client = ().serve_with_lifecycle(client_io, lifecycle).await.unwrap();
    let filter = SubscriptionFilter::builder()
        .resource_subscriptions(["billing://invoices/inv_7", "billing://elsewhere"])
        .build();
    let mut subscription = client.listen(filter).await.unwrap();
    assert_eq!(subscription.acknowledged().resource_subscriptions, Some(vec!["billing://invoices/inv_7".to_owned()]));
    support::call(&client, "billing", json!({"action": "pay", "id": "inv_9"})).await;
    support::call(&client, "billing", json!({"action": "pay", "id": "inv_7"})).await;
    let next = tokio::time::timeout(std::time::Duration::from_secs(5), subscription.next()).await.unwrap().unwrap();
    match next {
        Some(ServerNotification::ResourceUpdatedNotification(update)) => {
            assert_eq!(update.params.uri, "billing://invoices/inv_7");
        }
        other => panic!("expected resources/updated, got {other:?}"),
    }
}

/// Counts `notifications/resources/list_changed`.
#[derive(Clone, Default)]
struct ListChanges(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl ListChanges {
    fn count(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl rmcp::ClientHandler for ListChanges {
    async fn on_resource_list_changed(&self, _context: rmcp::service::NotificationContext<rmcp::RoleClient>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A client of `server` that counts the changes of its resources' listing.
async fn connect_watching(
    server: FusionServer,
) -> (rmcp::service::RunningService<rmcp::RoleClient, ListChanges>, ListChanges) {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = rmcp::ServiceExt::serve(server, server_io).await {
            let _ = running.waiting().await;
        }
    });
    let changes = ListChanges::default();
    let client = rmcp::ServiceExt::serve(changes.clone(), client_io).await.unwrap();
    // The server hears `notifications/initialized` before it answers a later request, and
    // only then counts the session among those it tells.
    client.list_all_resources().await.unwrap();
    (client, changes)
}

async fn listed_uris(client: &rmcp::Peer<rmcp::RoleClient>) -> Vec<String> {
    client.list_all_resources().await.unwrap().into_iter().map(|r| r.uri).collect()
}

async fn listed_templates(client: &rmcp::Peer<rmcp::RoleClient>) -> Vec<String> {
    client.list_all_resource_templates().await.unwrap().into_iter().map(|t| t.uri_template).collect()
}

async fn read_text(client: &rmcp::Peer<rmcp::RoleClient>, uri: &str) -> String {
    let contents = client.read_resource(ReadResourceRequestParams::new(uri)).await.unwrap().contents;
    match &contents[..] {
        [ResourceContents::TextResourceContents { text, .. }] => text.clone(),
        other => panic!("expected one text, got {other:?}"),
    }
}

async fn read_error(client: &rmcp::Peer<rmcp::RoleClient>, uri: &str) -> ErrorData {
    rpc_error(client.read_resource(ReadResourceRequestParams::new(uri)).await)
}

fn status(text: &'static str) -> Resource<()> {
    Resource::new("billing://status", "status").handler(move |_ctx: Ctx<()>| async move { Ok::<_, ToolError>(text) })
}

#[tokio::test]
async fn a_resource_inserted_at_run_time_is_announced_listed_read_and_removed() {
    let server = server();
    let (client, changes) = connect_watching(server.clone()).await;
    let declared = client.peer_info().unwrap().capabilities.resources.clone().unwrap();
    assert_eq!((declared.subscribe, declared.list_changed), (Some(true), Some(true)));
    assert!(read_error(&client, "billing://status").await.code == ErrorCode::RESOURCE_NOT_FOUND);

    server.insert_resource(status("all systems go"), ()).unwrap();
    support::wait_until(|| changes.count() == 1).await;
    assert_eq!(listed_uris(&client).await.last().map(String::as_str), Some("billing://status"));
    assert_eq!(read_text(&client, "billing://status").await, "all systems go");

    assert!(server.remove_resource("billing://status"));
    support::wait_until(|| changes.count() == 2).await;
    assert!(!listed_uris(&client).await.iter().any(|uri| uri == "billing://status"));
    let error = read_error(&client, "billing://status").await;
    assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
    assert_eq!(
        error.message,
        "Resource not found: 'billing://status'. Did you mean 'billing://summary'? \
         Call resources/list for the resources this server reads and resources/templates/list for its URI templates."
    );
    // Nothing left to remove: nothing to tell.
    assert!(!server.remove_resource("billing://status"));
    read_text(&client, "billing://summary").await;
    assert_eq!(changes.count(), 2);
}

#[tokio::test]
async fn a_template_inserted_at_run_time_reads_and_leaves() {
    #[derive(Deserialize, JsonSchema)]
    struct ReportUri {
        year: u16,
    }
    let server = server();
    let (client, changes) = connect_watching(server.clone()).await;
    let reports = ResourceTemplate::new("billing://reports/{year}", "report")
        .handler(|_ctx: Ctx<()>, uri: ReportUri| async move { Ok::<_, ToolError>(format!("report {}", uri.year)) });
    server.insert_resource_template(reports, ()).unwrap();
    support::wait_until(|| changes.count() == 1).await;
    assert_eq!(
        listed_templates(&client).await,
        ["billing://invoices/{id}", "docs://pages/{page}", "billing://reports/{year}"]
    );
    assert_eq!(read_text(&client, "billing://reports/2026").await, "report 2026");
    // Checked like a template declared at build time.
    assert_eq!(read_error(&client, "billing://reports/last").await.code, ErrorCode::INVALID_PARAMS);

    assert!(server.remove_resource_template("billing://reports/{year}"));
    support::wait_until(|| changes.count() == 2).await;
    assert_eq!(listed_templates(&client).await, ["billing://invoices/{id}", "docs://pages/{page}"]);
    assert_eq!(read_error(&client, "billing://reports/2026").await.code, ErrorCode::RESOURCE_NOT_FOUND);
    assert!(!server.remove_resource_template("billing://reports/{year}"));
}

#[tokio::test]
async fn replacing_a_resource_swaps_its_handler_and_its_state() {
    let server = server();
    let (client, changes) = connect_watching(server.clone()).await;
    // Another state type than the server was built with: the handler gets the one given here.
    let greeting = || {
        Resource::new("billing://summary", "summary").description("Totals per status.").handler(
            |ctx: Ctx<String>| async move { Ok::<_, ToolError>(format!("{} from the new handler", ctx.state())) },
        )
    };
    server.insert_resource(greeting(), "hello".to_owned()).unwrap();
    assert_eq!(read_text(&client, "billing://summary").await, "hello from the new handler");
    // It lists as before, in its place: nobody is told to list again.
    assert_eq!(
        listed_uris(&client).await,
        ["billing://summary", "billing://logo", "billing://secret", "billing://broken"]
    );
    assert_eq!(changes.count(), 0);
    // Listed differently: told.
    server.insert_resource(greeting().title("Summary"), std::sync::Arc::new("hi".to_owned())).unwrap();
    support::wait_until(|| changes.count() == 1).await;
    assert_eq!(read_text(&client, "billing://summary").await, "hi from the new handler");
    assert_eq!(client.list_all_resources().await.unwrap()[0].title.as_deref(), Some("Summary"));
    // One notification in all: the first replacement sent none that could arrive late.
    assert_eq!(changes.count(), 1);
}

#[tokio::test]
async fn an_insert_that_cannot_be_served_changes_nothing() {
    let server = server();
    let (client, changes) = connect_watching(server.clone()).await;
    let text = |_ctx: Ctx<()>| async { Ok::<_, ToolError>("x") };
    let error = server.insert_resource(Resource::new("billing://{id}", "r").handler(text), ()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the resource \"billing://{id}\" cannot be served: a fixed URI has no {parameter}: declare it as a ResourceTemplate"
    );
    let error = server.insert_resource(Resource::new("billing://summary", "summary"), ()).unwrap_err();
    assert!(matches!(error, BuildError::ResourceUri { .. }), "{error}");
    let error = server
        .insert_resource_template(ResourceTemplate::new("docs://pages/{page_id}", "page").handler(page), ())
        .unwrap_err();
    assert!(matches!(error, BuildError::TemplateParameters { .. }), "{error}");
    let error = server
        .insert_resource_template(ResourceTemplate::new("docs://pages/{+page}", "page").handler(page), ())
        .unwrap_err();
    assert!(matches!(error, BuildError::ResourceUri { .. }), "{error}");

    assert_eq!(
        listed_uris(&client).await,
        ["billing://summary", "billing://logo", "billing://secret", "billing://broken"]
    );
    assert_eq!(listed_templates(&client).await, ["billing://invoices/{id}", "docs://pages/{page}"]);
    assert_eq!(read_text(&client, "billing://summary").await, "2 open, 1 paid");
    assert_eq!(read_text(&client, "docs://pages/2").await, "page 2");
    assert_eq!(changes.count(), 0);
    // The first notification is the valid insert's.
    server.insert_resource(status("up"), ()).unwrap();
    support::wait_until(|| changes.count() == 1).await;
    assert_eq!(read_text(&client, "billing://status").await, "up");
    assert_eq!(changes.count(), 1);
}

#[tokio::test]
async fn a_read_already_running_finishes_on_the_resource_it_found() {
    let started = std::sync::Arc::new(tokio::sync::Notify::new());
    let release = std::sync::Arc::new(tokio::sync::Notify::new());
    let slow = {
        let (started, release) = (started.clone(), release.clone());
        Resource::new("billing://slow", "slow").handler(move |_ctx: Ctx<()>| {
            let (started, release) = (started.clone(), release.clone());
            async move {
                started.notify_one();
                release.notified().await;
                Ok::<_, ToolError>("finished")
            }
        })
    };
    let server = server();
    server.insert_resource(slow, ()).unwrap();
    let client = connect(server.clone()).await;
    let reading = tokio::spawn({
        let peer = client.peer().clone();
        async move { read_text(&peer, "billing://slow").await }
    });
    started.notified().await;
    assert!(server.remove_resource("billing://slow"));
    release.notify_one();
    assert_eq!(reading.await.unwrap(), "finished");
    assert_eq!(read_error(&client, "billing://slow").await.code, ErrorCode::RESOURCE_NOT_FOUND);
}

#[tokio::test]
async fn a_server_built_without_resources_declares_them_from_the_first_one_on() {
    let server = FusionServer::builder("tools-only", "1")
        .group(mcp_fusion::Group::new("t", "T.").action(
            mcp_fusion::Action::new("a", "A.").handler(|_ctx: Ctx<()>, _: PageUri| async { Ok::<_, ToolError>("a") }),
        ))
        .build(())
        .unwrap();
    let before = connect(server.clone()).await;
    assert!(before.peer_info().unwrap().capabilities.resources.is_none());
    server.insert_resource(status("up"), ()).unwrap();
    let after = connect(server.clone()).await;
    let declared = after.peer_info().unwrap().capabilities.resources.clone().unwrap();
    assert_eq!(declared.list_changed, Some(true));
    assert_eq!(read_text(&after, "billing://status").await, "up");
    // Declared for good: it stays while the resources come and go.
    assert!(server.remove_resource("billing://status"));
    let later = connect(server).await;
    assert!(later.peer_info().unwrap().capabilities.resources.is_some());
}

/// A 2026-07-28 client of `server` over a pipe: it discovers instead of initializing.
async fn discovering(server: &FusionServer) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    use rmcp::model::ProtocolVersion;
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let serving = server.clone();
    tokio::spawn(async move {
        if let Ok(running) = rmcp::ServiceExt::serve(serving, server_io).await {
            let _ = running.waiting().await;
        }
    });
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    ().serve_with_lifecycle(client_io, lifecycle).await.unwrap()
}

#[tokio::test]
async fn a_listener_that_asked_hears_the_listings_change() {
    use rmcp::model::{ServerNotification, SubscriptionFilter};
    let server = server_that_pays();
    let client = discovering(&server).await;
    let filter = SubscriptionFilter::builder().resources_list_changed().tools_list_changed().build();
    let mut subscription = client.listen(filter).await.unwrap();
    let acknowledged = subscription.acknowledged();
    assert_eq!((acknowledged.resources_list_changed, acknowledged.tools_list_changed), (Some(true), Some(true)));
    async fn next(subscription: &mut rmcp::service::Subscription) -> Option<ServerNotification> {
        tokio::time::timeout(std::time::Duration::from_secs(5), subscription.next()).await.unwrap().unwrap()
    }

    server.insert_resource(status("up"), ()).unwrap();
    match next(&mut subscription).await {
        Some(ServerNotification::ResourceListChangedNotification(_)) => {}
        other => panic!("expected resources/list_changed, got {other:?}"),
    }
    // Tools changes travel the same way.
    let group = mcp_fusion::Group::new("more", "More.").action(
        mcp_fusion::Action::new("a", "A.").handler(|_ctx: Ctx<()>, _: PageUri| async { Ok::<_, ToolError>("a") }),
    );
    server.insert_group(group, ()).unwrap();
    match next(&mut subscription).await {
        Some(ServerNotification::ToolListChangedNotification(_)) => {}
        other => panic!("expected tools/list_changed, got {other:?}"),
    }
}

/// rmcp acknowledges a listen before the server holds it; what changes in between (here while
/// the server's middleware runs for the listen) is told once the listen is held.
#[tokio::test]
async fn a_change_between_a_listens_acknowledgment_and_its_holding_is_told() {
    use mcp_fusion::middleware::{Call, Next, from_fn};
    use rmcp::model::{ServerNotification, SubscriptionFilter};
    use tokio::sync::{mpsc, oneshot};

    // The middleware says when the listen reached it, and waits to be let through.
    let (reached, mut listen_reached) = mpsc::unbounded_channel::<oneshot::Sender<()>>();
    let held_back = move |call: Call, next: Next| {
        let reached = reached.clone();
        async move {
            if call.action() == "subscriptions/listen" {
                let (let_through, wait) = oneshot::channel();
                let _ = reached.send(let_through);
                let _ = wait.await;
            }
            next.run(call).await
        }
    };
    let server = FusionServer::builder("listens", "1")
        .middleware(from_fn(held_back))
        .resource(Resource::new("status://now", "now").handler(|_ctx: Ctx<()>| async { Ok::<_, ToolError>("up") }))
        .build(())
        .unwrap();
    let client = discovering(&server).await;
    let filter = SubscriptionFilter::builder()
        .tools_list_changed()
        .resource_subscriptions(vec!["status://now".to_owned()])
        .build();
    let mut subscription = client.listen(filter).await.unwrap();
    let let_through = listen_reached.recv().await.expect("the listen reaches the middleware");

    // Acknowledged, not held yet: the tools change, and the resource twice.
    let group = mcp_fusion::Group::new("more", "More.").action(
        mcp_fusion::Action::new("a", "A.").handler(|_ctx: Ctx<()>, _: PageUri| async { Ok::<_, ToolError>("a") }),
    );
    server.insert_group(group, ()).unwrap();
    server.resource_updated("status://now");
    server.resource_updated("status://now");
    server.resource_updated("status://elsewhere");
    let _ = let_through.send(());

    let mut heard = Vec::new();
    for _ in 0..2 {
        let next = tokio::time::timeout(std::time::Duration::from_secs(10), subscription.next()).await;
        heard.push(next.expect("told of the change").unwrap().expect("a notification"));
    }
    assert!(heard.iter().any(|n| matches!(n, ServerNotification::ToolListChangedNotification(_))), "{heard:?}");
    let updated: Vec<_> = heard
        .iter()
        .filter_map(|n| match n {
            ServerNotification::ResourceUpdatedNotification(updated) => Some(updated.params.uri.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(updated, ["status://now"], "{heard:?}");

    // Held now: a later change is told once, as it happens.
    server.resource_updated("status://now");
    let next = tokio::time::timeout(std::time::Duration::from_secs(10), subscription.next()).await;
    match next.expect("told of the change").unwrap() {
        Some(ServerNotification::ResourceUpdatedNotification(updated)) => {
            assert_eq!(updated.params.uri, "status://now")
        }
        other => panic!("expected resources/updated, got {other:?}"),
    }
}

async fn notes(_ctx: Ctx<()>) -> Result<String, ToolError> {
    Ok("a note".into())
}

#[tokio::test]
async fn annotations_are_listed_with_resources_and_templates_and_bad_ones_refused() {
    use rmcp::model::{Annotations, Role};
    let modified = chrono::DateTime::parse_from_rfc3339("2026-12-01T09:30:00Z").unwrap().to_utc();
    let annotations = Annotations::for_resource(0.8, modified).with_audience(vec![Role::User, Role::Assistant]);
    let server = FusionServer::builder("notes", "1")
        .resource(Resource::new("notes://today", "today").annotations(annotations.clone()).handler(notes))
        .resource_template(
            ResourceTemplate::new("billing://invoices/{id}", "invoice")
                .annotations(Annotations::default().with_priority(0.2))
                .handler(invoice),
        )
        .build(())
        .unwrap();
    let client = connect(server).await;
    let listed = client.list_all_resources().await.unwrap();
    assert_eq!(listed[0].annotations, Some(annotations));
    let templates = client.list_all_resource_templates().await.unwrap();
    assert_eq!(templates[0].annotations.as_ref().and_then(|a| a.priority), Some(0.2));
    client.cancel().await.unwrap();

    let refused = |annotations: Annotations| {
        let resource = Resource::new("notes://today", "today").annotations(annotations).handler(notes);
        match FusionServer::builder("notes", "1").resource(resource).build(()) {
            Err(BuildError::ResourceUri { reason, .. }) => reason,
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("built"),
        }
    };
    assert!(refused(Annotations::default().with_priority(1.5)).contains("priority 1.5"));
    let mut late = Annotations::default();
    late.last_modified = Some("yesterday".into());
    let late = refused(late);
    assert!(late.contains("\"yesterday\" is not an RFC 3339 time"), "{late}");
}
