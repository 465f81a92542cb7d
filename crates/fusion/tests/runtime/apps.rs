//! MCP Apps: an app's page served as a `ui://` resource with the extension's MIME type and
//! sandbox, tools linked to it grouped and flat, the extension advertised, and a tool only an
//! app calls kept from clients that render no apps.

use crate::support;

use mcp_fusion::apps::{APP_MIME_TYPE, App, Csp, FUSION_APP_JS_MARKER, Permission, UI_EXTENSION, Visibility};
use mcp_fusion::prelude::*;
use mcp_fusion::{BuildError, Exposition};
use rmcp::ServiceExt;
use rmcp::model::{ClientCapabilities, ClientConfig, ReadResourceRequestParams, ResourceContents, Tool};
use serde_json::{Value, json};

const VIEW: &str = "ui://shop/order-view";
const PAGE: &str =
    "<!DOCTYPE html>\n<html><body><main id=\"order\"></main><script>/*FUSION_APP_JS*/</script></body></html>";

async fn order(_ctx: Ctx<()>, _input: NoInput) -> Result<Json<Value>> {
    Ok(Json(json!({"id": "ord_1", "total_cents": 1200})))
}

async fn refresh(_ctx: Ctx<()>, _input: NoInput) -> Result<String> {
    Ok("refreshed".into())
}

fn view() -> App {
    App::new(VIEW, "order_view", PAGE)
        .title("Order")
        .description("One order.")
        .csp(Csp::new().connect_domain("https://api.shop.example").resource_domain("https://*.cdn.example"))
        .permission(Permission::ClipboardWrite)
        .prefers_border(false)
}

fn shop(exposition: Exposition) -> FusionServer {
    FusionServer::builder("shop", "1.0.0")
        .exposition(exposition)
        .app(view())
        .group(
            Group::new("orders", "Orders.")
                .action(Action::new("get_order", "Read one order.").read_only().app(VIEW).handler(order))
                .action(Action::new("count_orders", "Count the orders.").read_only().handler(refresh)),
        )
        .action(
            Action::new("refresh_view", "Refresh the order view.")
                .read_only()
                .app(VIEW)
                .app_visibility(&[Visibility::App])
                .handler(refresh),
        )
        .build(())
        .expect("the shop builds")
}

fn ui(tool: &Tool) -> Option<&Value> {
    tool.meta.as_ref()?.get("ui")
}

#[test]
fn a_grouped_tool_links_to_the_one_app_its_actions_name_and_a_flat_tool_to_its_own() {
    let grouped = shop(Exposition::default());
    let tools = grouped.tools();
    assert_eq!(ui(&tools[0]), Some(&json!({"resourceUri": VIEW})), "the grouped tool {:?}", tools[0].name);
    assert_eq!(ui(&tools[1]), Some(&json!({"resourceUri": VIEW, "visibility": ["app"]})));

    let flat = shop(Exposition::flat());
    let tools = flat.tools();
    let linked: Vec<(&str, Option<&Value>)> = tools.iter().map(|tool| (tool.name.as_ref(), ui(tool))).collect();
    assert_eq!(
        linked,
        [
            ("orders_get_order", Some(&json!({"resourceUri": VIEW}))),
            ("orders_count_orders", None),
            ("refresh_view", Some(&json!({"resourceUri": VIEW, "visibility": ["app"]}))),
        ]
    );
    // The framework's own keys stay beside the link.
    assert!(tools[0].meta.as_ref().unwrap().contains_key("fusion/action"));
}

#[test]
fn a_group_names_the_app_of_each_flat_tool_without_one() {
    let server = FusionServer::builder("shop", "1.0.0")
        .exposition(Exposition::flat())
        .app(view())
        .group(
            Group::new("orders", "Orders.")
                .app(VIEW)
                .action(Action::new("get_order", "Read one order.").handler(order))
                .action(Action::new("count_orders", "Count the orders.").handler(refresh)),
        )
        .build(())
        .unwrap();
    assert!(server.tools().iter().all(|tool| ui(tool) == Some(&json!({"resourceUri": VIEW}))));
}

#[tokio::test]
async fn the_page_is_listed_and_read_with_its_mime_type_its_sandbox_and_the_bridge_script() {
    let client = support::connect(shop(Exposition::default())).await;
    let extensions = client.peer_info().unwrap().capabilities.extensions.clone().unwrap_or_default();
    assert_eq!(extensions.get(UI_EXTENSION), Some(json!({"mimeTypes": [APP_MIME_TYPE]}).as_object().unwrap()));

    let sandbox = json!({"ui": {
        "csp": {"connectDomains": ["https://api.shop.example"], "resourceDomains": ["https://*.cdn.example"]},
        "permissions": {"clipboardWrite": {}},
        "prefersBorder": false,
    }});
    let listed = client.list_all_resources().await.unwrap();
    let page = listed.iter().find(|resource| resource.uri == VIEW).expect("the app is listed");
    assert_eq!(page.mime_type.as_deref(), Some(APP_MIME_TYPE));
    assert_eq!(page.title.as_deref(), Some("Order"));
    assert_eq!(serde_json::to_value(&page.meta).unwrap(), sandbox);

    let read = client.read_resource(ReadResourceRequestParams::new(VIEW)).await.unwrap();
    let [ResourceContents::TextResourceContents { uri, mime_type, text, meta }] = read.contents.as_slice() else {
        panic!("one text content, not {:?}", read.contents);
    };
    assert_eq!((uri.as_str(), mime_type.as_deref()), (VIEW, Some(APP_MIME_TYPE)));
    assert_eq!(serde_json::to_value(meta).unwrap(), sandbox);
    assert!(text.starts_with("<!DOCTYPE html>"));
    assert!(!text.contains(FUSION_APP_JS_MARKER), "the marker is replaced");
    assert!(text.contains(mcp_fusion::apps::FUSION_APP_JS), "the bridge script is inlined");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_tool_only_an_app_calls_is_listed_only_to_a_client_that_renders_apps() {
    let plain = support::connect(shop(Exposition::default())).await;
    let names: Vec<String> = plain.list_all_tools().await.unwrap().iter().map(|tool| tool.name.to_string()).collect();
    assert_eq!(names, ["orders"], "a client without apps would hand refresh_view to its model");
    plain.cancel().await.unwrap();

    let mut capabilities = ClientCapabilities::default();
    let ui = json!({"mimeTypes": [APP_MIME_TYPE]}).as_object().cloned().unwrap();
    capabilities.extensions = Some([(UI_EXTENSION.to_owned(), ui)].into_iter().collect());
    let host = ClientConfig::new(capabilities, rmcp::model::Implementation::new("host", "1"));
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let server = shop(Exposition::default());
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = host.serve(client_io).await.unwrap();
    let names: Vec<String> = client.list_all_tools().await.unwrap().iter().map(|tool| tool.name.to_string()).collect();
    assert_eq!(names, ["orders", "refresh_view"]);
    // The app calls it as any client calls a tool.
    let result = support::call(&client, "refresh_view", json!({})).await;
    assert_eq!(support::texts(&result), ["refreshed"]);
    client.cancel().await.unwrap();
}

#[test]
fn a_link_to_an_app_the_server_does_not_declare_fails_the_build_with_the_closest() {
    let built = FusionServer::builder("shop", "1.0.0")
        .app(view())
        .action(Action::new("get_order", "Read one order.").app("ui://shop/order-veiw").handler(order))
        .build(());
    let Err(error @ BuildError::UnknownApp { .. }) = built else { panic!("built: {:?}", built.err()) };
    assert_eq!(
        error.to_string(),
        "the tool \"get_order\" shows its results in the app \"ui://shop/order-veiw\", which the server does not \
         declare: add it with `.app(App::new(\"ui://shop/order-veiw\", ..))`; the server declares \"ui://shop/order-view\""
    );
}

#[test]
fn an_app_that_cannot_be_served_fails_the_build_saying_why() {
    let cases = [
        (App::new("https://shop.example/view", "v", PAGE), "does not start with \"ui://\""),
        (App::new("ui://", "v", PAGE), "names no view"),
        (App::new(VIEW, "v", "<div>hi</div>"), "does not start with <!DOCTYPE html>"),
        (
            App::new(VIEW, "v", PAGE).csp(Csp::new().connect_domain("api.shop.example")),
            "write an origin as https://host",
        ),
    ];
    for (app, why) in cases {
        let built = FusionServer::builder("shop", "1.0.0").app(app).build(());
        let Err(error @ BuildError::App { .. }) = built else { panic!("built: {:?}", built.err()) };
        assert!(error.to_string().contains(why), "{error}");
    }
}

#[tokio::test]
async fn a_call_from_the_app_that_fails_comes_back_as_the_same_envelope() {
    let client = support::connect(shop(Exposition::default())).await;
    let result = support::call(&client, "orders", json!({"action": "get_ordr"})).await;
    assert_eq!(result.is_error, Some(true));
    let text = support::error_text(&result);
    assert!(text.starts_with("<tool_error code=\"UNKNOWN_ACTION\""), "{text}");
    let parsed = mcp_fusion::wire::parse(&text);
    assert!(format!("{parsed:?}").contains("get_order"), "{parsed:?}");
    client.cancel().await.unwrap();
}
