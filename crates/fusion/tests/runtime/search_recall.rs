//! `search_tools` on requests others wrote: MetaTool's labelled requests over its 199 tools
//! (`tests/fixtures/metatool`), each searched through the server as a model searches, against
//! plain BM25 over the same names and descriptions. The figures go to docs/benchmarks.md.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use mcp_fusion::handoff::{Forward, ForwardError, Mount, MountState};
use mcp_fusion::transport::RequestInfo;
use mcp_fusion::{CallInfo, FusionServer, SEARCH_TOOLS};
use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::{Value, json};

const TOOLS: &str = include_str!("../fixtures/metatool/tools.json");
const QUERIES: &str = include_str!("../fixtures/metatool/queries.jsonl");

/// An upstream never called: only searched.
struct Searched;

impl Forward for Searched {
    fn call(
        &self,
        _: &str,
        _: JsonObject,
        _: Arc<CallInfo>,
    ) -> BoxFuture<'static, Result<CallToolResult, ForwardError>> {
        Box::pin(std::future::ready(Err(ForwardError::NoSuchTool("only searched".into()))))
    }
}

fn tools() -> Vec<(String, String)> {
    let tools: serde_json::Map<String, Value> = serde_json::from_str(TOOLS).unwrap();
    tools.into_iter().map(|(name, description)| (name, description.as_str().unwrap().to_owned())).collect()
}

fn queries() -> Vec<(String, String)> {
    QUERIES
        .lines()
        .map(|line| {
            let row: Value = serde_json::from_str(line).unwrap();
            (row["query"].as_str().unwrap().to_owned(), row["tool"].as_str().unwrap().to_owned())
        })
        .collect()
}

/// Words as plain BM25 reads them: runs of letters and digits, lower-cased.
fn plain_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|word| !word.is_empty()).map(str::to_lowercase).collect()
}

/// Plain BM25 (Okapi, k1 1.2, b 0.75, Lucene's idf) over each tool's name and description:
/// the tools a query finds, best first.
struct PlainBm25 {
    documents: Vec<HashMap<String, f64>>,
    lengths: Vec<f64>,
    frequency: HashMap<String, f64>,
    average: f64,
}

impl PlainBm25 {
    fn new(tools: &[(String, String)]) -> PlainBm25 {
        let mut frequency: HashMap<String, f64> = HashMap::new();
        let mut documents = Vec::new();
        let mut lengths = Vec::new();
        for (name, description) in tools {
            let words = plain_words(&format!("{name} {description}"));
            let mut counts: HashMap<String, f64> = HashMap::new();
            for word in &words {
                *counts.entry(word.clone()).or_default() += 1.0;
            }
            for word in counts.keys() {
                *frequency.entry(word.clone()).or_default() += 1.0;
            }
            lengths.push(words.len() as f64);
            documents.push(counts);
        }
        let average = lengths.iter().sum::<f64>() / lengths.len() as f64;
        PlainBm25 { documents, lengths, frequency, average }
    }

    fn rank(&self, query: &str) -> Vec<usize> {
        let tools = self.documents.len() as f64;
        let mut scored: Vec<(f64, usize)> = (0..self.documents.len())
            .map(|tool| {
                let score = plain_words(query)
                    .iter()
                    .filter_map(|word| {
                        let count = *self.documents[tool].get(word)?;
                        let found = self.frequency[word];
                        let idf = (1.0 + (tools - found + 0.5) / (found + 0.5)).ln();
                        let norm = 1.2 * (1.0 - 0.75 + 0.75 * self.lengths[tool] / self.average);
                        Some(idf * count * 2.2 / (count + norm))
                    })
                    .sum::<f64>();
                (score, tool)
            })
            .filter(|(score, _)| *score > 0.0)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().map(|(_, tool)| tool).collect()
    }
}

/// Recall at 1 and 5, mean reciprocal rank (over the first 10), and how many answers were
/// empty.
#[derive(Debug, Default)]
struct Figures {
    at_1: f64,
    at_5: f64,
    mrr: f64,
    empty: usize,
}

fn figures<'a>(rankings: impl Iterator<Item = (Vec<String>, &'a str)>) -> Figures {
    let mut figures = Figures::default();
    let mut n = 0.0;
    for (ranked, expected) in rankings {
        n += 1.0;
        let position = ranked.iter().take(10).position(|name| name == expected);
        figures.at_1 += f64::from(position == Some(0));
        figures.at_5 += f64::from(position.is_some_and(|at| at < 5));
        figures.mrr += position.map_or(0.0, |at| 1.0 / (at as f64 + 1.0));
        figures.empty += usize::from(ranked.is_empty());
    }
    Figures { at_1: figures.at_1 / n, at_5: figures.at_5 / n, mrr: figures.mrr / n, empty: figures.empty }
}

async fn searched(server: &FusionServer, query: &str) -> (Option<bool>, Vec<String>) {
    let arguments = json!({"query": query, "limit": 10}).as_object().cloned();
    let answer = server.call(SEARCH_TOOLS, arguments, RequestInfo::default()).await;
    let names = answer.structured_content.as_ref().and_then(|found| found["tools"].as_array().cloned());
    let names = names.unwrap_or_default().iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect();
    (answer.is_error, names)
}

#[tokio::test]
async fn search_tools_finds_metatool_requests_ten_points_better_than_plain_bm25() {
    let tools = tools();
    let listed: Vec<Tool> = tools
        .iter()
        .map(|(name, description)| {
            let schema = json!({"type": "object"}).as_object().cloned().unwrap();
            Tool::new(name.clone(), description.clone(), Arc::new(schema))
        })
        .collect();
    let server = FusionServer::builder("metatool", "1").tool_search(true).build(()).unwrap();
    let forward: Arc<dyn Forward> = Arc::new(Searched);
    server.set_mount(&Mount::new("meta"), MountState::Ready { tools: listed, forward }).unwrap();

    let queries = queries();
    let told: HashSet<String> =
        tools.iter().flat_map(|(name, description)| plain_words(&format!("{name} {description}"))).collect();
    // Content words: all but NLTK's English stop words and the words of any search.
    let stop: HashSet<&str> =
        stop_words::lookup("en").unwrap_or_default().iter().copied().chain(["please", "tool", "tools"]).collect();
    let mut ours = Vec::new();
    for (query, _) in &queries {
        let (is_error, names) = searched(&server, query).await;
        assert_eq!(is_error, Some(false), "{query}");
        let names: Vec<String> = names.into_iter().map(|name| name.trim_start_matches("meta.").to_owned()).collect();
        // A request saying a content word some tool says is never answered with nothing.
        if names.is_empty() {
            let content: Vec<String> = plain_words(query)
                .into_iter()
                .filter(|word| !stop.contains(word.as_str()) && told.contains(word))
                .collect();
            assert!(content.is_empty(), "{query:?} found nothing though tools say {content:?}");
        }
        ours.push(names);
    }
    let plain = PlainBm25::new(&tools);
    let baseline = figures(queries.iter().map(|(query, tool)| {
        (plain.rank(query).into_iter().map(|index| tools[index].0.clone()).collect(), tool.as_str())
    }));
    let ours = figures(ours.into_iter().zip(queries.iter().map(|(_, tool)| tool.as_str())));
    eprintln!("search_tools: {ours:?}\nplain BM25:   {baseline:?}");
    assert!(ours.at_5 >= baseline.at_5 + 0.10, "search_tools {ours:?} against plain BM25 {baseline:?}");
    assert!(ours.at_1 > baseline.at_1 && ours.mrr > baseline.mrr, "{ours:?} against {baseline:?}");

    // A request of any length is searched, never refused.
    let long = format!("I need the air quality forecast for my zip code {}", "and more words ".repeat(500));
    let (is_error, names) = searched(&server, &long).await;
    assert_eq!(is_error, Some(false));
    assert_eq!(names.first().map(String::as_str), Some("meta.airqualityforeast"), "{names:?}");
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Record {
    /// The record's id.
    #[allow(dead_code)]
    id: String,
}

async fn done(_ctx: mcp_fusion::Ctx<()>, _input: Record) -> Result<String, mcp_fusion::wire::ToolError> {
    Ok("done".into())
}

/// A server of three grouped tools, each action with its own words.
fn grouped_server(tool_search: bool) -> FusionServer {
    use mcp_fusion::{Action, Group};
    let group = |name: &str, description: &str, actions: &[(&str, &str)]| {
        actions.iter().fold(Group::new(name, description), |group, (action, said)| {
            group.action(Action::new(*action, *said).handler(done))
        })
    };
    FusionServer::builder("office", "1")
        .tool_search(tool_search)
        .group(group(
            "billing",
            "Invoices and payments.",
            &[
                ("pay_invoice", "Pay an open invoice by card or bank transfer."),
                ("void_invoice", "Cancel an invoice sent by mistake, so nobody owes it."),
                ("refund_payment", "Give a customer their money back for a payment."),
            ],
        ))
        .group(group(
            "crm",
            "Customers and their contacts.",
            &[
                ("find_customer", "Look up a customer by name or e-mail address."),
                ("merge_customers", "Merge two duplicate customer records into one."),
            ],
        ))
        .group(group(
            "files",
            "The shared drive.",
            &[
                ("upload_file", "Upload a document to the shared drive."),
                ("share_folder", "Give a colleague access to a folder."),
            ],
        ))
        .build(())
        .unwrap()
}

async fn search(server: &FusionServer, query: &str) -> Value {
    let arguments = json!({"query": query}).as_object().cloned();
    let answer = server.call(SEARCH_TOOLS, arguments, RequestInfo::default()).await;
    assert_eq!(answer.is_error, Some(false), "{answer:?}");
    answer.structured_content.unwrap()
}

#[tokio::test]
async fn with_search_on_each_grouped_action_is_found_on_its_own_and_said_how_to_call() {
    let server = grouped_server(true);
    for (query, name, tool, action) in [
        ("pay an invoice", "billing.pay_invoice", "billing", "pay_invoice"),
        ("money back for a payment", "billing.refund_payment", "billing", "refund_payment"),
        ("duplicate customer records", "crm.merge_customers", "crm", "merge_customers"),
        ("give a colleague access", "files.share_folder", "files", "share_folder"),
        ("files.upload_file", "files.upload_file", "files", "upload_file"),
        ("refund a customer's payment", "billing.refund_payment", "billing", "refund_payment"),
    ] {
        let found = search(&server, query).await;
        let first = &found["tools"][0];
        assert_eq!(first["name"], name, "{query}: {found}");
        assert_eq!((&first["tool"], &first["arguments"]), (&json!(tool), &json!({"action": action})), "{query}");
        assert!(found["next"].as_str().unwrap().contains("grouped tool"), "{found}");
    }
    let details = server
        .call(
            mcp_fusion::GET_TOOL_DETAILS,
            json!({"name": "billing.refund_payment"}).as_object().cloned(),
            RequestInfo::default(),
        )
        .await;
    let details = details.structured_content.unwrap();
    assert_eq!((&details["tool"], &details["arguments"]), (&json!("billing"), &json!({"action": "refund_payment"})));
    assert_eq!(details["inputSchema"]["properties"]["id"]["type"], "string", "{details}");
    // Called as the answer says.
    let arguments = json!({"action": "refund_payment", "id": "pay_7"}).as_object().cloned();
    let called = server.call("billing", arguments, RequestInfo::default()).await;
    assert_eq!(called.is_error, Some(false), "{called:?}");
}

/// A host that searches the listed tools itself (BM25 over each tool's name and description)
/// finds the grouped tool for each of its actions' own words.
#[test]
fn a_hosts_own_search_over_the_listing_finds_the_grouped_tool_of_each_action() {
    let server = grouped_server(false);
    let listed: Vec<(String, String)> = server
        .tools()
        .iter()
        .map(|tool| (tool.name.to_string(), tool.description.as_deref().unwrap_or_default().to_owned()))
        .collect();
    assert_eq!(listed.len(), 3);
    let host = PlainBm25::new(&listed);
    for tool in server.tools() {
        let actions =
            tool.meta.as_ref().and_then(|meta| meta.get("fusion/actions")).and_then(Value::as_object).unwrap();
        for (action, contract) in actions {
            let words = contract["description"].as_str().unwrap();
            let found = host.rank(words);
            assert_eq!(listed[found[0]].0, tool.name, "{action}: {words:?} found {found:?}");
        }
    }
}
