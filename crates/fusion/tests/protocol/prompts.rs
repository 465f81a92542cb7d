//! Prompts and completions end to end through a real rmcp client: listing, getting with typed
//! arguments, the deadline, every failure as the JSON-RPC error a client gets, and completing
//! prompt arguments and template parameters.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use mcp_fusion::prompt::Prompt;
use mcp_fusion::resource::ResourceTemplate;
use mcp_fusion::wire::ToolError;
use mcp_fusion::{BuildError, Ctx, FusionServer};
use rmcp::ErrorData;
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, ContentBlock, ErrorCode, GetPromptRequestParams, PromptMessage, Reference,
    ResourceContents, Role,
};
use rmcp::service::ServiceError;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use support::connect;

#[derive(Deserialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Tone {
    Friendly,
    Firm,
}

#[derive(Deserialize, JsonSchema)]
struct Letter {
    /// The invoice id, like `inv_7`.
    #[schemars(regex(pattern = r"^inv_[a-z0-9_]+$"))]
    id: String,
    /// How firm the letter is.
    tone: Tone,
    /// Days overdue.
    days: Option<u32>,
}

async fn letter(_ctx: Ctx<()>, args: Letter) -> Result<Vec<PromptMessage>, ToolError> {
    if args.id == "inv_404" {
        return Err(ToolError::not_found(format!("No invoice with id \"{}\".", args.id))
            .suggest("List invoices first, then retry with a real ID."));
    }
    let tone = match args.tone {
        Tone::Friendly => "friendly",
        Tone::Firm => "firm",
    };
    let days = args.days.map(|d| format!(", {d} days overdue")).unwrap_or_default();
    Ok(vec![
        PromptMessage::new_text(Role::User, format!("Write a {tone} letter about invoice {}{days}.", args.id)),
        PromptMessage::new(
            Role::User,
            ContentBlock::resource(ResourceContents::text("{\"id\":\"inv_7\"}", "billing://invoices/inv_7")),
        ),
        PromptMessage::new_text(Role::Assistant, "Here is a draft:"),
    ])
}

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

#[derive(Deserialize, JsonSchema)]
struct Customer {
    /// The customer's e-mail.
    email: String,
}

fn server() -> FusionServer {
    FusionServer::builder("prompts-test", "1")
        .prompt(
            Prompt::new("dunning_letter", "A letter asking a customer to pay.").title("Dunning letter").handler(letter),
        )
        .prompt(Prompt::new("slow", "Needs live data that never comes.").timeout(Duration::from_millis(50)).handler(
            |_ctx: Ctx<()>, _: Nothing| async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                Ok::<_, ToolError>("never")
            },
        ))
        .prompt(
            Prompt::new("secret", "Needs a caller.")
                .requires_identity()
                .handler(|_ctx: Ctx<()>, _: Nothing| async { Ok::<_, ToolError>("hidden") }),
        )
        .resource_template(
            ResourceTemplate::new("crm://customers/{email}", "customer")
                .handler(|_ctx: Ctx<()>, c: Customer| async move { Ok::<_, ToolError>(c.email) })
                .complete("email", |_state: Arc<()>, _prefix: String| async {
                    vec!["ana@example.com".to_owned(), "bruno@example.com".to_owned(), "anabel@example.com".to_owned()]
                }),
        )
        .build(())
        .unwrap()
}

fn rpc_error(result: Result<impl std::fmt::Debug, ServiceError>) -> ErrorData {
    match result {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

fn get(name: &str, arguments: Value) -> GetPromptRequestParams {
    let mut params = GetPromptRequestParams::new(name);
    params.arguments = arguments.as_object().cloned();
    params
}

#[tokio::test]
async fn prompts_are_listed_with_their_arguments() {
    let client = connect(server()).await;
    let capabilities = client.peer_info().unwrap().capabilities.clone();
    assert!(capabilities.prompts.is_some() && capabilities.completions.is_some());
    let prompts = client.list_all_prompts().await.unwrap();
    assert_eq!(prompts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["dunning_letter", "slow", "secret"]);
    let mut listed = serde_json::to_value(&prompts[0]).unwrap();
    // The typed schema of the arguments, for contracts: what the listing cannot say.
    let schema = listed.as_object_mut().unwrap().remove("_meta").expect("a _meta")["fusion/inputSchema"].take();
    assert_eq!(schema["properties"]["tone"]["enum"], json!(["friendly", "firm"]), "{schema}");
    assert_eq!(schema["additionalProperties"], json!(false), "{schema}");
    assert_eq!(
        listed,
        json!({
            "name": "dunning_letter",
            "title": "Dunning letter",
            "description": "A letter asking a customer to pay.",
            "arguments": [
                {"name": "id", "description": "The invoice id, like `inv_7`.", "required": true},
                {"name": "tone", "description": "How firm the letter is.", "required": true},
                {"name": "days", "description": "Days overdue.", "required": false},
            ]
        })
    );
    assert_eq!(prompts[1].arguments, None, "a prompt without arguments lists none");
}

#[tokio::test]
async fn a_prompt_returns_its_messages_with_typed_arguments() {
    let client = connect(server()).await;
    let result =
        client.get_prompt(get("dunning_letter", json!({"id": "inv_7", "tone": "firm", "days": "12"}))).await.unwrap();
    assert_eq!(result.description.as_deref(), Some("A letter asking a customer to pay."));
    assert_eq!(
        serde_json::to_value(&result.messages).unwrap(),
        json!([
            {"role": "user", "content": {"type": "text", "text": "Write a firm letter about invoice inv_7, 12 days overdue."}},
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "billing://invoices/inv_7", "mimeType": "text/plain", "text": "{\"id\":\"inv_7\"}"}}},
            {"role": "assistant", "content": {"type": "text", "text": "Here is a draft:"}},
        ])
    );
}

#[tokio::test]
async fn arguments_that_do_not_fit_get_one_sentence_per_field() {
    let client = connect(server()).await;
    let error = rpc_error(client.get_prompt(get("dunning_letter", json!({"id": "INV-7", "tone": "angry"}))).await);
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        error.message,
        "Invalid arguments for the prompt 'dunning_letter':\n\
         id: Does not match the required pattern. You sent: 'INV-7'. Expected a string matching the pattern /^inv_[a-z0-9_]+$/.\n\
         tone: Invalid value. You sent: 'angry'. Expected one of 'friendly', 'firm'.\n\
         Fix the arguments and get the prompt again; prompts/list describes them."
    );
    let error = rpc_error(client.get_prompt(get("dunning_letter", json!({"id": "inv_7"}))).await);
    assert_eq!(
        error.message.lines().nth(1),
        Some(
            "tone: Missing required field. You sent: (missing). Expected one of 'friendly', 'firm': how firm the letter is."
        )
    );
}

#[tokio::test]
async fn an_unknown_prompt_names_the_closest() {
    let client = connect(server()).await;
    let error = rpc_error(client.get_prompt(get("duning_letter", json!({}))).await);
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        error.message,
        "Unknown prompt 'duning_letter'. Did you mean 'dunning_letter'? Call prompts/list for the prompts this server has."
    );
}

#[tokio::test]
async fn errors_echo_at_most_a_cut_of_a_long_name_or_argument() {
    let client = connect(server()).await;
    let long = "x".repeat(3 << 20);
    let cut = format!("'{}...'", "x".repeat(47));
    let small = |error: &ErrorData| serde_json::to_string(error).unwrap().len() < 2_000;
    let error = rpc_error(client.get_prompt(get(&long, json!({}))).await);
    assert!(small(&error), "{error:.300?}");
    assert_eq!(error.message, format!("Unknown prompt {cut}. Call prompts/list for the prompts this server has."));
    assert_eq!(error.data, Some(json!({"prompt": cut})));
    let error =
        rpc_error(client.get_prompt(get("dunning_letter", json!({"id": long, "tone": "firm", &long: 1}))).await);
    assert!(small(&error), "{error:.300?}");
    let error = rpc_error(complete(&client, Reference::for_prompt("dunning_letter"), &long, &long).await);
    assert!(small(&error), "{error:.300?}");
    assert_eq!(error.data.unwrap()["argument"], cut.as_str());
    let error = rpc_error(complete(&client, Reference::for_resource(&long), "email", "").await);
    assert!(small(&error), "{error:.300?}");
    assert_eq!(error.data, Some(json!({"uri": cut})));
}

#[tokio::test]
async fn a_handlers_error_and_a_guards_refusal_keep_their_codes() {
    let client = connect(server()).await;
    let error = rpc_error(client.get_prompt(get("dunning_letter", json!({"id": "inv_404", "tone": "firm"}))).await);
    assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
    assert_eq!(error.message, "No invoice with id \"inv_404\". List invoices first, then retry with a real ID.");
    assert_eq!(error.data.as_ref().unwrap()["code"], "NOT_FOUND");
    assert_eq!(error.data.unwrap()["prompt"], "dunning_letter");
    let error = rpc_error(client.get_prompt(get("secret", json!({}))).await);
    assert_eq!(error.data.unwrap()["code"], "AUTH_REQUIRED");
}

// On the paused clock the 50 ms deadline ends the 30 s of waiting at once.
#[tokio::test(start_paused = true)]
async fn past_its_deadline_a_prompt_says_to_go_on_without_live_data() {
    let client = connect(server()).await;
    let result = client.get_prompt(get("slow", json!({}))).await.unwrap();
    assert_eq!(
        serde_json::to_value(&result.messages).unwrap(),
        json!([{"role": "user", "content": {"type": "text", "text":
            "The live data for the prompt \"slow\" could not be fetched within 50 ms. \
             Go on without it: work from what you already know, and say that figures may be out of date."}}])
    );
}

async fn complete(
    client: &support::Client,
    reference: Reference,
    argument: &str,
    value: &str,
) -> Result<Vec<String>, ServiceError> {
    let params = CompleteRequestParams::new(reference, ArgumentInfo::new(argument, value));
    client.complete(params).await.map(|result| result.completion.values)
}

#[tokio::test]
async fn arguments_complete_from_an_enum_or_a_completer() {
    let client = connect(server()).await;
    let prompt = || Reference::for_prompt("dunning_letter");
    assert_eq!(complete(&client, prompt(), "tone", "f").await.unwrap(), ["friendly", "firm"]);
    assert_eq!(complete(&client, prompt(), "tone", "fi").await.unwrap(), ["firm"]);
    assert!(complete(&client, prompt(), "id", "inv").await.unwrap().is_empty(), "a free string has no values");
    let template = || Reference::for_resource("crm://customers/{email}");
    assert_eq!(complete(&client, template(), "email", "ana").await.unwrap(), ["ana@example.com", "anabel@example.com"]);
    let error = rpc_error(complete(&client, prompt(), "mood", "").await);
    assert_eq!(error.message, "The prompt 'dunning_letter' has no argument 'mood'. Its arguments: id, tone, days.");
    let error = rpc_error(complete(&client, Reference::for_prompt("nope"), "tone", "").await);
    assert_eq!(error.message, "Unknown prompt 'nope'. Call prompts/list for the prompts this server has.");
    let error = rpc_error(complete(&client, Reference::for_resource("crm://people/{email}"), "email", "").await);
    assert_eq!(
        error.message,
        "No resource template 'crm://people/{email}'. Call resources/templates/list for the templates this server has."
    );
}

#[test]
fn prompts_that_cannot_be_served_do_not_build() {
    let build = |builder: mcp_fusion::ServerBuilder<()>| builder.build(()).err().map(|e| e.to_string());
    let base = || FusionServer::builder("bad", "1");
    assert_eq!(
        build(
            base().prompt(
                Prompt::new("p", "P.").handler(letter).complete("mood", |_: Arc<()>, _: String| async { vec![] })
            )
        ),
        Some("the prompt \"p\" has no argument \"mood\" to complete: name one of the fields of its input".to_owned())
    );
    assert_eq!(
        build(base().prompt(Prompt::new("bad name", "P.").handler(letter))),
        Some("invalid prompt name \"bad name\": use 1 to 64 characters from A-Z a-z 0-9 _ -".to_owned())
    );
    let twice = base().prompt(Prompt::new("p", "P.").handler(letter)).prompt(Prompt::new("p", "Q.").handler(letter));
    assert!(matches!(twice.build(()), Err(BuildError::Duplicate { what: "prompt", .. })));
    assert!(matches!(base().prompt(Prompt::new("p", "P.")).build(()), Err(BuildError::MissingHandler { .. })));
}
