//! The fixtures of the suite's MCP 2026-07-28 scenarios: questions to the client asked through
//! mcp-fusion's one API (`ctx.elicit`, `ctx.sample`, `ctx.list_roots`), which on 2026-07-28
//! answer a call with an input-required result and a sealed `requestState`
//! (`input-required-result-*`), and the diagnostic tools of `server-stateless`.

#![allow(deprecated, reason = "rmcp marks sampling and roots deprecated (SEP-2577); the suite still tests them")]

use std::sync::OnceLock;

use mcp_fusion::prompt::Prompt;
use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, Ctx, Elicited, FusionServer, Group, ServerBuilder};
use rmcp::model::{CreateMessageRequestParams, SamplingMessage};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::NoArgs;

/// The server itself, for `test_trigger_tool_change` to change its tool list.
pub(crate) static SERVER: OnceLock<FusionServer> = OnceLock::new();

/// A name the user gives.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Name {
    /// Your name.
    pub name: String,
}

/// A colour the user picks.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Color {
    /// Your favourite colour.
    pub color: String,
}

/// A yes or no.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Confirmation {
    /// Whether to go ahead.
    pub ok: bool,
}

/// What a prompt should be about.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Context {
    /// The context of the prompt.
    pub context: String,
}

/// The accepted answer, or the envelope of a user who did not accept.
fn accepted<T>(ctx: &Ctx<()>, answer: Elicited<T>) -> Result<T, ToolError> {
    match answer {
        Elicited::Accepted(value) => Ok(value),
        other => Err(other.refusal(ctx.action())),
    }
}

/// The text of a sampling answer.
fn sampled_text(result: &rmcp::model::CreateMessageResult) -> String {
    result.message.content.first().and_then(|block| block.as_text()).map_or_else(String::new, |text| text.text.clone())
}

/// `test_input_required_result_elicitation`: asks the user's name under `user_name`.
async fn elicitation(ctx: Ctx<()>, _input: NoArgs) -> Result<String, ToolError> {
    let name = accepted(&ctx, ctx.elicit::<Name>("What is your name?").key("user_name").await?)?;
    Ok(format!("Hello, {}!", name.name))
}

/// `test_input_required_result_sampling`: asks the client's model a question.
async fn sampling(ctx: Ctx<()>, _input: NoArgs) -> Result<String, ToolError> {
    let params =
        CreateMessageRequestParams::new(vec![SamplingMessage::user_text("What is the capital of France?")], 100);
    let answer = ctx.sample(params).await?;
    Ok(format!("The model answered: {}", sampled_text(&answer)))
}

/// `test_input_required_result_list_roots`: asks for the client's roots.
async fn list_roots(ctx: Ctx<()>, _input: NoArgs) -> Result<String, ToolError> {
    let roots = ctx.list_roots().await?;
    let uris: Vec<&str> = roots.roots.iter().map(|root| root.uri.as_str()).collect();
    Ok(format!("The client's roots: {}", uris.join(", ")))
}

/// `test_input_required_result_request_state` and `..._tampered_state`: one confirmation, its
/// answer taken only with the state the server sealed.
async fn confirm(ctx: Ctx<()>, _input: NoArgs) -> Result<String, ToolError> {
    let answer = accepted(&ctx, ctx.elicit::<Confirmation>("Please confirm").key("confirm").await?)?;
    Ok(format!("state-ok: confirmed={}", answer.ok))
}

/// `test_input_required_result_multiple_inputs`: a form, a sampling request and the roots, in one
/// round.
async fn multiple_inputs(ctx: Ctx<()>, _input: NoArgs) -> Result<String, ToolError> {
    let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("Generate a greeting")], 50);
    let (name, greeting, roots) =
        tokio::join!(ctx.elicit::<Name>("What is your name?").key("user_name"), ctx.sample(params), ctx.list_roots());
    let (name, greeting, roots) = (accepted(&ctx, name?)?, greeting?, roots?);
    Ok(format!("{} {}! ({} roots)", sampled_text(&greeting), name.name, roots.roots.len()))
}

/// `test_input_required_result_multi_round`: two questions, one round each.
async fn multi_round(ctx: Ctx<()>, _input: NoArgs) -> Result<String, ToolError> {
    let name = accepted(&ctx, ctx.elicit::<Name>("Step 1: What is your name?").key("step1").await?)?;
    let color = accepted(&ctx, ctx.elicit::<Color>("Step 2: What is your favorite color?").key("step2").await?)?;
    Ok(format!("{} likes {}.", name.name, color.color))
}

/// `test_input_required_result_capabilities`: asks only what the client declared it can answer.
async fn capabilities(ctx: Ctx<()>, _input: NoArgs) -> Result<String, ToolError> {
    let declared = ctx.call().client_capabilities().cloned().unwrap_or_default();
    let mut said = Vec::new();
    if declared.elicitation.is_some() {
        said.push(accepted(&ctx, ctx.elicit::<Name>("What is your name?").await?)?.name);
    }
    if declared.sampling.is_some() {
        let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("Say hello")], 20);
        said.push(sampled_text(&ctx.sample(params).await?));
    }
    Ok(format!("Asked only what the client declared: {}", said.join("; ")))
}

/// `test_missing_capability`: needs sampling, which the suite's probe does not declare.
async fn missing_capability(ctx: Ctx<()>, _input: NoArgs) -> Result<String, ToolError> {
    let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("Say hello")], 20);
    Ok(sampled_text(&ctx.sample(params).await?))
}

/// `test_trigger_tool_change`: adds a group, or removes it when it is there, so every call
/// changes the tool list and listeners hear `notifications/tools/list_changed`.
async fn trigger_tool_change(_ctx: Ctx<()>, _input: NoArgs) -> Result<&'static str, ToolError> {
    let server = SERVER.get().ok_or_else(|| ToolError::internal("the fixture server is not built yet"))?;
    if server.remove_group("changed") {
        return Ok("the tool list changed");
    }
    let changed = Group::new("changed", "Added by test_trigger_tool_change.").action(
        Action::new("probe", "Exists once test_trigger_tool_change ran.")
            .read_only()
            .handler(|_ctx: Ctx<()>, _input: NoArgs| async { Ok::<_, ToolError>("probe") }),
    );
    server.insert_group(changed, ()).map_err(|error| ToolError::internal(error.to_string()))?;
    Ok("the tool list changed")
}

/// `test_streaming_elicitation`: asks the user a question, which on 2026-07-28 ends the request
/// with an input-required result, never a request of its own on the response stream.
async fn streaming_elicitation(ctx: Ctx<()>, _input: NoArgs) -> Result<String, ToolError> {
    let name = accepted(&ctx, ctx.elicit::<Name>("What is your name?").await?)?;
    Ok(format!("Hello, {}.", name.name))
}

/// `test_logging_tool`: logs while it runs; a request that names no logging level hears none
/// of it.
async fn logging_tool(_ctx: Ctx<()>, _input: NoArgs) -> Result<&'static str, ToolError> {
    tracing::info!("Logging tool running");
    Ok("Logged, to whoever asked for a level")
}

/// The fixture actions, added to the `test` group.
pub fn actions(group: Group<()>) -> Group<()> {
    let fixture = |name: &str, scenario: &str| {
        Action::new(name, format!("Conformance fixture of the scenario {scenario} (MCP 2026-07-28).")).read_only()
    };
    group
        .action(
            fixture("input_required_result_elicitation", "input-required-result-basic-elicitation")
                .handler(elicitation),
        )
        .action(fixture("input_required_result_sampling", "input-required-result-basic-sampling").handler(sampling))
        .action(
            fixture("input_required_result_list_roots", "input-required-result-basic-list-roots").handler(list_roots),
        )
        .action(fixture("input_required_result_request_state", "input-required-result-request-state").handler(confirm))
        .action(
            fixture("input_required_result_tampered_state", "input-required-result-tampered-state").handler(confirm),
        )
        .action(
            fixture("input_required_result_multiple_inputs", "input-required-result-multiple-input-requests")
                .handler(multiple_inputs),
        )
        .action(fixture("input_required_result_multi_round", "input-required-result-multi-round").handler(multi_round))
        .action(
            fixture("input_required_result_capabilities", "input-required-result-capability-check")
                .handler(capabilities),
        )
        .action(fixture("missing_capability", "server-stateless").handler(missing_capability))
        .action(fixture("trigger_tool_change", "server-stateless").handler(trigger_tool_change))
        .action(fixture("streaming_elicitation", "server-stateless").handler(streaming_elicitation))
        .action(fixture("logging_tool", "server-stateless").handler(logging_tool))
}

/// The prompt of `input-required-result-non-tool-request`.
pub fn prompts(builder: ServerBuilder<()>) -> ServerBuilder<()> {
    builder.prompt(
        Prompt::new(
            "test_input_required_result_prompt",
            "A prompt that asks the user for its context (conformance scenario input-required-result-non-tool-request).",
        )
        .handler(|ctx: Ctx<()>, _: NoArgs| async move {
            let context = ctx.elicit::<Context>("What context should the prompt use?").key("user_context").await?;
            let context = accepted(&ctx, context)?;
            Ok::<_, ToolError>(format!("Answer with this context in mind: {}", context.context))
        }),
    )
}
