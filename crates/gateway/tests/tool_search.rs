//! Tool search in the gateway: three real upstreams over Streamable HTTP serving 200 tools
//! between them, listed whole or found through `search_tools`. Prints what `tools/list` weighs
//! either way (characters, and tokens estimated at four characters each), and checks that
//! every tool is still found and called by its name.

mod support;

use mcp_fusion::handoff::Mount;
use mcp_fusion::http::{HttpConfig, HttpServer};
use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, Ctx, Exposition, FusionServer, GET_TOOL_DETAILS, Group, SEARCH_TOOLS};
use mcp_fusion_gateway::{Gateway, Upstream};
use serde_json::{Value, json};
use support::*;

/// What the upstreams' tools take: a few fields, described as real tools describe theirs.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Record {
    /// The record's id, as a search returned it.
    id: Option<String>,
    /// Words to look for in the records' names and notes.
    query: Option<String>,
    /// How many records per page, 1 to 100.
    #[schemars(range(min = 1, max = 100))]
    limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    cursor: Option<String>,
}

async fn handle(_ctx: Ctx<()>, _input: Record) -> Result<String, ToolError> {
    Ok("done".into())
}

const VERBS: &[(&str, &str)] = &[
    ("list", "List the {n}s, newest first, a page at a time."),
    ("get", "Read one {n} by its id, with everything recorded about it."),
    ("create", "Create a new {n} from the fields given and return it with its id."),
    ("update", "Change the fields given on an existing {n}; the others stay."),
    ("delete", "Delete a {n} for good, with what depends on it."),
    ("search", "Find {n}s whose name or notes hold the words of the query."),
    ("archive", "Archive a {n}: hidden from lists, kept for the record."),
    ("export", "Export the {n}s as CSV text, all or those a query finds."),
];

/// An upstream of `nouns` × every verb, flat: `{noun}_{verb}` tools, cut to `count`.
async fn upstream(name: &str, nouns: &[&str], count: usize) -> (String, tokio_util::sync::CancellationToken) {
    let mut group = Group::new(name, format!("The {name} service.")).exposition(Exposition::flat());
    let mut made = 0;
    'all: for noun in nouns {
        for (verb, words) in VERBS {
            if made == count {
                break 'all;
            }
            let description = words.replace("{n}", &noun.replace('_', " "));
            group = group.action(Action::new(format!("{verb}_{noun}"), description).handler(handle));
            made += 1;
        }
    }
    let server = FusionServer::builder::<()>(name, "1").group(group).build(()).unwrap();
    let http = HttpServer::bind(server, HttpConfig::new("127.0.0.1:0")).await.unwrap();
    let url = format!("http://{}/mcp", http.local_addr());
    let stop = tokio_util::sync::CancellationToken::new();
    tokio::spawn(http.serve(stop.clone().cancelled_owned()));
    (url, stop)
}

async fn gateway(search: bool, urls: &[(String, &str)]) -> (FusionServer, mcp_fusion_gateway::Running) {
    let server = FusionServer::builder::<()>("gateway", "1").tool_search(search).build(()).unwrap();
    let mut gateway = Gateway::new();
    for (url, namespace) in urls {
        gateway = gateway.mount(Mount::new(*namespace), Upstream::http(url));
    }
    let running = gateway.start(&server);
    running.settled().await;
    (server, running)
}

async fn listed_chars(server: &FusionServer) -> (usize, usize) {
    let client = connect(server, Seen::default()).await;
    let tools = client.list_all_tools().await.unwrap();
    (tools.len(), serde_json::to_string(&tools).unwrap().chars().count())
}

#[tokio::test]
async fn three_mounts_of_200_tools_are_listed_as_two_and_found_by_what_they_do() {
    let (crm, stop_crm) =
        upstream("crm", &["customer", "contact", "deal", "lead", "company", "note", "task", "meeting", "pipeline"], 67)
            .await;
    let (desk, stop_desk) = upstream(
        "desk",
        &["ticket", "reply", "agent", "macro", "sla_policy", "tag", "view", "article", "forum_post"],
        67,
    )
    .await;
    let (books, stop_books) = upstream(
        "books",
        &["invoice", "payment", "bill", "vendor", "expense", "account", "journal_entry", "tax_rate", "budget"],
        66,
    )
    .await;
    let urls = [(crm, "crm"), (desk, "desk"), (books, "books")];

    let (all, running_all) = gateway(false, &urls).await;
    let (searched, running_searched) = gateway(true, &urls).await;
    let (tools_all, chars_all) = listed_chars(&all).await;
    let (tools_searched, chars_searched) = listed_chars(&searched).await;
    println!(
        "tools/list: {tools_all} tools, {chars_all} characters (~{} tokens); with tool search: {tools_searched} tools, {chars_searched} characters (~{} tokens)",
        chars_all / 4,
        chars_searched / 4
    );
    assert_eq!((tools_all, tools_searched), (200, 2));
    assert!(chars_searched * 20 < chars_all, "{chars_searched} of {chars_all}");

    let client = connect(&searched, Seen::default()).await;
    let found = call(&client, SEARCH_TOOLS, json!({"query": "archive a support ticket", "limit": 3})).await;
    let found = found.structured_content.unwrap();
    assert_eq!(found["tools"][0]["name"], "desk.desk_archive_ticket", "{found}");
    assert_eq!(found["served"], 200);
    let found = call(&client, SEARCH_TOOLS, json!({"query": "record a payment"})).await.structured_content.unwrap();
    let names: Vec<&str> = found["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.iter().take(3).any(|name| name.starts_with("books.") && name.contains("payment")), "{names:?}");
    let details = call(&client, GET_TOOL_DETAILS, json!({"name": "books.books_create_invoice"})).await;
    let details: Value = details.structured_content.unwrap();
    assert_eq!(details["inputSchema"]["properties"]["limit"]["maximum"], 100);
    assert_eq!(text(&call(&client, "books.books_create_invoice", json!({"query": "x"})).await), "done");

    for running in [running_all, running_searched] {
        running.shutdown().await;
    }
    for stop in [stop_crm, stop_desk, stop_books] {
        stop.cancel();
    }
}
