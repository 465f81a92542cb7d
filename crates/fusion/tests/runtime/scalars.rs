//! Forgiving scalars: a string that spells the number or boolean the schema expects is read as
//! it, the call runs with the value read and its result carries an `ARGUMENTS_CONVERTED`
//! warning; every other string stays a refusal with its sentence.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_fusion::guard::Idempotency;
use mcp_fusion::transport::RequestInfo;
use mcp_fusion::wire::parse;
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::support::{error_text, texts};

#[derive(Deserialize, Serialize, JsonSchema)]
struct Order {
    /// How many, 1 to 500.
    #[schemars(range(min = 1, max = 500))]
    quantity: u32,
    /// The unit price.
    price: Option<f64>,
    /// Whether it is paid.
    paid: Option<bool>,
    /// Free tags.
    tags: Option<Vec<String>>,
    /// The card's PIN: never repeated.
    pin: Option<u32>,
    /// Sends the order once per key.
    idempotency_key: Option<String>,
}

/// A server whose `order` answers with the input it decoded and counts its runs.
fn server(configure: impl FnOnce(Action<()>) -> Action<()>, forgive: bool, runs: &Arc<AtomicUsize>) -> FusionServer {
    let runs = Arc::clone(runs);
    let order = Action::new("order", "Place an order.").sensitive("pin").idempotent_by_key().handler(
        move |_ctx: Ctx<()>, input: Order| {
            runs.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, mcp_fusion::wire::ToolError>(serde_json::to_string(&input).unwrap()) }
        },
    );
    FusionServer::builder::<()>("shop", "1.0.0")
        .forgiving_scalars(forgive)
        .idempotency(Idempotency::new())
        .group(Group::new("shop", "The shop.").action(configure(order)))
        .build(())
        .unwrap()
}

async fn call(server: &FusionServer, arguments: Value) -> rmcp::model::CallToolResult {
    let mut arguments = arguments;
    arguments["action"] = json!("order");
    server.call("shop", arguments.as_object().cloned(), RequestInfo::default()).await
}

fn warning(result: &rmcp::model::CallToolResult) -> String {
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let texts = texts(result);
    assert_eq!(texts.len(), 2, "{texts:?}");
    texts[1].clone()
}

fn converted(message: &str, recovery: &str, fields: &str) -> String {
    format!(
        "<tool_error code=\"ARGUMENTS_CONVERTED\" severity=\"warning\">\n<message>{message}</message>\n\
         <recovery>{recovery}</recovery>\n<details>\n  <detail key=\"fields\">{fields}</detail>\n</details>\n</tool_error>"
    )
}

#[tokio::test]
async fn each_spelled_scalar_is_read_with_its_warning() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = server(|a| a, true, &runs);
    for (sent, field, read, message, recovery) in [
        (
            json!({"quantity": "200"}),
            "quantity",
            json!(200),
            "quantity was sent as the string '200' and read as the integer 200.",
            "Next time send quantity as 200, without quotes.",
        ),
        (
            json!({"quantity": 1, "price": "2.5"}),
            "price",
            json!(2.5),
            "price was sent as the string '2.5' and read as the number 2.5.",
            "Next time send price as 2.5, without quotes.",
        ),
        (
            json!({"quantity": 1, "paid": "false"}),
            "paid",
            json!(false),
            "paid was sent as the string 'false' and read as the boolean false.",
            "Next time send paid as false, without quotes.",
        ),
        (
            json!({"quantity": 1, "paid": "true"}),
            "paid",
            json!(true),
            "paid was sent as the string 'true' and read as the boolean true.",
            "Next time send paid as true, without quotes.",
        ),
        (
            json!({"quantity": 1, "pin": "1234"}),
            "pin",
            json!(1234),
            "pin was sent as a string and read as the integer it spells.",
            "Next time send pin as an integer, without quotes.",
        ),
    ] {
        let result = call(&server, sent.clone()).await;
        assert_eq!(warning(&result), converted(message, recovery, field), "{sent}");
        let decoded: Value = serde_json::from_str(&texts(&result)[0]).unwrap();
        assert_eq!(decoded[field], read, "the handler sees the value read: {sent}");
    }
    let both = call(&server, json!({"quantity": "3", "paid": "true"})).await;
    assert_eq!(
        warning(&both),
        converted(
            "2 arguments were sent as strings and read as what they spell: quantity '3' as the integer 3 and \
             paid 'true' as the boolean true.",
            "Next time send quantity as 3 and paid as true, without quotes.",
            "quantity, paid"
        )
    );
    let pin = call(&server, json!({"quantity": 1, "pin": "1234"})).await;
    assert!(!warning(&pin).contains("1234"), "a sensitive value is not repeated");
}

#[tokio::test]
async fn what_is_not_an_exact_spelling_stays_a_refusal_with_its_sentence() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = server(|a| a, true, &runs);
    for (sent, field, sentence) in [
        (
            json!({"quantity": "12abc"}),
            "quantity",
            "Invalid type. You sent: '12abc'. Expected an integer from 1 to 500: how many, 1 to 500.",
        ),
        (
            json!({"quantity": 1, "price": "1e400"}),
            "price",
            "Invalid type. You sent: '1e400'. Expected a number: the unit price.",
        ),
        (
            json!({"quantity": 1, "paid": "yes"}),
            "paid",
            "Invalid type. You sent: 'yes'. Expected a boolean: whether it is paid.",
        ),
        // In range once read, or not at all: "0" is no answer where the least is 1.
        (
            json!({"quantity": "0"}),
            "quantity",
            "Invalid type. You sent: '0'. Expected an integer from 1 to 500: how many, 1 to 500.",
        ),
        // A scalar where an array is expected is not guessed into one.
        (
            json!({"quantity": 1, "tags": "urgent"}),
            "tags",
            "Invalid type. You sent: 'urgent'. Expected an array: free tags.",
        ),
    ] {
        let envelope = parse(&error_text(&call(&server, sent.clone()).await));
        let lines: Vec<(String, String)> = envelope.fields.iter().map(|f| (f.name.clone(), f.text.clone())).collect();
        assert_eq!(lines, [(field.to_owned(), sentence.to_owned())], "{sent}");
    }
    // A string that could be read beside an argument that is wrong anyway: the call is refused
    // as sent, both said.
    let envelope = parse(&error_text(&call(&server, json!({"quantity": "2", "paid": "yes"})).await));
    let names: Vec<&str> = envelope.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["paid", "quantity"]);
    assert_eq!(runs.load(Ordering::SeqCst), 0, "no refused call ran");
}

#[tokio::test]
async fn off_for_the_server_or_the_action_a_spelled_scalar_is_refused() {
    let runs = Arc::new(AtomicUsize::new(0));
    for server in [server(|a| a, false, &runs), server(|a| a.forgiving_scalars(false), true, &runs)] {
        let envelope = parse(&error_text(&call(&server, json!({"quantity": "200"})).await));
        assert_eq!(envelope.fields.len(), 1, "{envelope:?}");
        assert_eq!(envelope.fields[0].name, "quantity");
    }
    // And on for one action of a server that turned it off.
    let server = server(|a| a.forgiving_scalars(true), false, &runs);
    assert!(warning(&call(&server, json!({"quantity": "200"})).await).contains("ARGUMENTS_CONVERTED"));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_idempotency_key_is_bound_to_the_arguments_as_read() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = server(|a| a, true, &runs);
    let first = call(&server, json!({"quantity": "200", "idempotency_key": "k1"})).await;
    let again = call(&server, json!({"quantity": 200, "idempotency_key": "k1"})).await;
    assert_eq!(first.is_error, Some(false), "{first:?}");
    assert_eq!(texts(&first)[0], texts(&again)[0], "the same arguments once read: the first result again");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let other = call(&server, json!({"quantity": "201", "idempotency_key": "k1"})).await;
    assert_eq!(parse(&error_text(&other)).error.code.as_str(), "CONFLICT");
}
