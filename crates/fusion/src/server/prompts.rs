//! Prompts compiled like actions — a checker for their arguments, a decoder, a chain of guards
//! around the handler — and `prompts/list` and `prompts/get` answered from them.

use std::collections::HashMap;
use std::sync::Arc;

use mcp_fusion_wire::Sent;
use rmcp::ErrorData;
use rmcp::model::{
    CompletionInfo, ContentBlock, GetPromptResponse, GetPromptResult, JsonObject, Prompt as ListedPrompt,
    PromptArgument, PromptMessage, Role,
};
use serde_json::{Map, Value, json};

use super::FusionServer;
use super::call::Refusal;
use super::compile::{ReadOnly, Settings, check_icons, check_name, compile_read_only};
use super::completion::Completions;
use super::resources::{echoed, failed, input_schema_meta, invalid_params, typed};
use crate::auth::{Caller, Identity};
use crate::catalog::listed_icons;
use crate::compiled::CompiledAction;
use crate::context::{EntryKind, RequestInfo};
use crate::error::BuildError;
use crate::output::{Output, Payload};
use crate::prompt::{Prompt, past_deadline};
use crate::similarity::{did_you_mean, likely_names};
use crate::validation::{close_unknown_keys, input_generator, into_object, property_names, required_names};

/// The prompts a server has, as listed and as compiled.
#[derive(Default)]
pub(crate) struct Prompts {
    compiled: Vec<Compiled>,
    by_name: HashMap<String, usize>,
    listed: Vec<ListedPrompt>,
}

/// One prompt ready to get.
struct Compiled {
    action: CompiledAction,
    /// The arguments' schema, to read numbers and booleans out of their text.
    arguments: Map<String, Value>,
    deadline: Option<std::time::Duration>,
    completions: Completions,
}

impl Prompts {
    /// Compiles the prompts, whose handlers get `state`.
    pub(crate) fn compile<S: Send + Sync + 'static>(
        settings: &Settings,
        prompts: Vec<Prompt<S>>,
        state: &Arc<S>,
    ) -> Result<Prompts, BuildError> {
        let mut compiled = Prompts::default();
        for prompt in prompts {
            check_name("prompt", &prompt.name)?;
            if compiled.by_name.insert(prompt.name.clone(), compiled.compiled.len()).is_some() {
                return Err(BuildError::Duplicate { what: "prompt", name: prompt.name });
            }
            let (one, listed) = compile(settings, prompt, state)?;
            compiled.compiled.push(one);
            compiled.listed.push(listed);
        }
        Ok(compiled)
    }

    /// Whether there is any prompt (the server then declares the capability).
    pub(crate) fn any(&self) -> bool {
        !self.compiled.is_empty()
    }

    /// The prompts `prompts/list` returns.
    pub(crate) fn listed(&self) -> &[ListedPrompt] {
        &self.listed
    }

    /// The prompts `prompts/list` shows `caller`: those it may get.
    pub(crate) fn listed_for(&self, caller: &Caller) -> Vec<ListedPrompt> {
        let offered = self.compiled.iter().map(|compiled| compiled.action.access.offered_to(caller));
        self.listed.iter().zip(offered).filter(|(_, offered)| *offered).map(|(listed, _)| listed.clone()).collect()
    }

    /// The scopes to ask `identity` for before it may get the prompt `name`, when it lacks one.
    #[cfg_attr(not(feature = "http"), allow(dead_code, reason = "asked by HTTP's step-up check only"))]
    pub(crate) fn wanted_for_get(&self, name: &str, identity: &Identity) -> Option<Vec<String>> {
        let compiled = &self.compiled[*self.by_name.get(name)?];
        compiled.action.access.wanted_from(identity).map(<[String]>::to_vec)
    }

    /// The values the argument of the prompt `name` may take, from `prefix`.
    pub(crate) async fn complete(&self, name: &str, argument: &str, prefix: &str) -> Result<CompletionInfo, ErrorData> {
        let Some(&index) = self.by_name.get(name) else { return Err(self.unknown(name)) };
        self.compiled[index].completions.complete(&format!("The prompt {}", Sent::text(name)), argument, prefix).await
    }

    /// An unknown prompt: what was asked, the closest name, and what to call instead.
    pub(crate) fn unknown(&self, name: &str) -> ErrorData {
        let mut likely = likely_names(name, self.by_name.keys().map(String::as_str));
        // The map's order is no order: the same question reads the same each time.
        likely.sort_unstable();
        let quoted: Vec<String> = likely.iter().map(|close| Sent::text(close).to_string()).collect();
        let guess = did_you_mean(&quoted).map(|guess| format!(" {guess}")).unwrap_or_default();
        ErrorData::invalid_params(
            format!("Unknown prompt {}.{guess} Call prompts/list for the prompts this server has.", Sent::text(name)),
            Some(json!({"prompt": echoed(name)})),
        )
    }
}

/// The prompt as listed: its arguments are its input's fields, with their descriptions and
/// whether they are required.
fn compile<S: Send + Sync + 'static>(
    settings: &Settings,
    prompt: Prompt<S>,
    state: &Arc<S>,
) -> Result<(Compiled, ListedPrompt), BuildError> {
    let handler =
        prompt.handler.ok_or_else(|| BuildError::MissingHandler { what: "prompt", action: prompt.name.clone() })?;
    let schema = close_unknown_keys(into_object(handler.input_schema(&mut input_generator())));
    let asks = ReadOnly {
        require_identity: prompt.require_identity,
        scopes: &prompt.scopes,
        rate_limits: &prompt.rate_limits,
        timeout: None,
    };
    let mut action = compile_read_only(settings, &prompt.name, handler.as_ref(), &schema, &asks, state)?;
    action.kind = EntryKind::Prompt;
    let required = required_names(&schema);
    let properties = schema.get("properties").and_then(Value::as_object);
    let arguments: Vec<PromptArgument> = property_names(&schema)
        .into_iter()
        .map(|name| {
            let description =
                properties.and_then(|p| p.get(&name)).and_then(|s| s.get("description")).and_then(Value::as_str);
            let mut argument = PromptArgument::new(name.clone()).with_required(required.contains(&name));
            if let Some(description) = description {
                argument = argument.with_description(description);
            }
            argument
        })
        .collect();
    let mut listed =
        ListedPrompt::new(&prompt.name, Some(&prompt.description), Some(arguments).filter(|a| !a.is_empty()));
    listed.title = prompt.title;
    check_icons(|| format!("the prompt {:?}", prompt.name), &prompt.icons)?;
    listed.icons = listed_icons(&prompt.icons);
    listed.meta = Some(input_schema_meta(&schema));
    let completions = Completions::new(prompt.completers, &schema, state);
    if let Some(argument) = completions.unknown_arguments().first() {
        return Err(BuildError::Completion {
            of: format!("the prompt {:?}", prompt.name),
            argument: (*argument).to_owned(),
        });
    }
    Ok((Compiled { action, arguments: schema, deadline: prompt.timeout, completions }, listed))
}

impl FusionServer {
    /// Gets the prompt `name` with `arguments` (`prompts/get`): checked, through the guards
    /// to its handler, within its deadline.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        request: RequestInfo,
    ) -> Result<GetPromptResponse, ErrorData> {
        let _counted = self.inner.in_flight.enter();
        let prompts = &self.inner.prompts;
        let Some(&index) = prompts.by_name.get(name) else {
            return Err(prompts.unknown(name));
        };
        let compiled = &prompts.compiled[index];
        let arguments = Value::Object(typed(&compiled.arguments, arguments.unwrap_or_default()));
        let outcome = compiled.action.outcome(arguments, request, &self.inner.settings);
        let (outcome, _warnings) = match compiled.deadline {
            None => outcome.await,
            Some(deadline) => match tokio::time::timeout(deadline, outcome).await {
                Ok(finished) => finished,
                Err(_) => {
                    tracing::warn!(prompt = name, ?deadline, "prompt past its deadline: answered without live data");
                    return Ok(GetPromptResult::new(vec![past_deadline(name, deadline)]).into());
                }
            },
        };
        match outcome {
            Ok(output) => {
                let (description, messages) = messages(output, name)?;
                let mut result = GetPromptResult::new(messages);
                result.description = description.or_else(|| prompts.listed[index].description.clone());
                Ok(result.into())
            }
            Err(Refusal::InputRequired(input)) => Ok(GetPromptResponse::InputRequired(*input)),
            Err(Refusal::Protocol(error)) => Err(error),
            Err(Refusal::Invalid(error)) => Err(invalid_params(
                &format!("Invalid arguments for the prompt {}:", Sent::text(name)),
                "Fix the arguments and get the prompt again; prompts/list describes them.",
                ("prompt", Some(name)),
                &error,
            )),
            Err(Refusal::Failed(error)) => Err(failed(("prompt", Some(name)), &error)),
        }
    }
}

/// The messages of a prompt's output, and the description it sets: the messages it carries,
/// then one user message per content block a middleware added. An output a middleware made
/// whole (no payload) is read as a prompt's answer of JSON: its structured content, the
/// messages as JSON, else its blocks, each a user message.
fn messages(mut output: Output, name: &str) -> Result<(Option<String>, Vec<PromptMessage>), ErrorData> {
    let added = |blocks: Vec<ContentBlock>| blocks.into_iter().map(|block| PromptMessage::new(Role::User, block));
    match output.take_payload() {
        Some(Payload::Messages { description, mut messages }) => {
            messages.extend(added(output.content));
            Ok((description, messages))
        }
        Some(Payload::Contents(_)) => {
            tracing::error!(prompt = %Sent::text(name), "a middleware answered the prompt with a resource's contents");
            Err(unsendable())
        }
        None => match output.structured {
            Some(messages) => {
                let messages = serde_json::from_value(messages).map_err(|error| {
                    // The decoder's words may quote the handler's text: for the log only.
                    tracing::error!(prompt = %Sent::text(name), "the prompt's messages do not decode: {error}");
                    unsendable()
                })?;
                Ok((None, messages))
            }
            None => Ok((None, added(output.content).collect())),
        },
    }
}

/// A prompt's answer that cannot be sent as messages; the log says why.
fn unsendable() -> ErrorData {
    ErrorData::internal_error("The prompt's messages could not be sent; report it to the server's operator.", None)
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ContentBlock, PromptMessage, Role};

    use crate::context::RequestInfo;
    use crate::middleware::{Call, Next, from_fn};
    use crate::prompt::Prompt;
    use crate::wire::ToolError;
    use crate::{Ctx, FusionServer, Output, Payload};

    #[tokio::test]
    async fn a_middleware_sees_the_messages_typed_and_what_it_adds_is_sent() {
        let server = FusionServer::builder("s", "1")
            .prompt(Prompt::new("hello", "Says hello.").handler(|_ctx: Ctx<()>, _: crate::NoInput| async {
                Ok::<_, ToolError>(PromptMessage::new_text(Role::Assistant, "hello"))
            }))
            .middleware(from_fn(|call: Call, next: Next| async move {
                let mut output = next.run(call).await?;
                if let Some(Payload::Messages { description, messages }) = output.payload_mut() {
                    assert_eq!(messages.len(), 1, "the handler's message, as it made it");
                    *description = Some("Says hello, checked.".into());
                }
                output.content.push(ContentBlock::image("iVBO", "image/png"));
                Ok::<Output, ToolError>(output)
            }))
            .build(())
            .unwrap();
        let Ok(rmcp::model::GetPromptResponse::Complete(result)) =
            server.get_prompt("hello", None, RequestInfo::default()).await
        else {
            panic!("the prompt did not complete")
        };
        assert_eq!(result.description.as_deref(), Some("Says hello, checked."));
        assert_eq!(
            result.messages,
            vec![
                PromptMessage::new_text(Role::Assistant, "hello"),
                PromptMessage::new(Role::User, ContentBlock::image("iVBO", "image/png")),
            ]
        );
    }

    #[tokio::test]
    async fn a_middleware_tells_a_prompt_from_a_read_and_a_missing_handler_names_the_prompt() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = std::sync::Arc::clone(&seen);
        let server = FusionServer::builder("s", "1")
            .prompt(
                Prompt::new("hello", "Says hello.")
                    .handler(|_ctx: Ctx<()>, _: crate::NoInput| async { Ok::<_, ToolError>("hello") }),
            )
            .resource(
                crate::resource::Resource::new("x://a", "a").handler(|_ctx: Ctx<()>| async { Ok::<_, ToolError>("a") }),
            )
            .middleware(from_fn(move |call: Call, next: Next| {
                record.lock().unwrap().push(format!("{:?}", call.info().entry()));
                next.run(call)
            }))
            .build(())
            .unwrap();
        server.get_prompt("hello", None, RequestInfo::default()).await.unwrap();
        server.read_resource("x://a", RequestInfo::default()).await.unwrap();
        assert_eq!(*seen.lock().unwrap(), ["Prompt(\"hello\")", "Resource { uri: \"x://a\" }"]);

        let missing = FusionServer::builder("s", "1").prompt(Prompt::<()>::new("p", "P.")).build(()).err().unwrap();
        assert_eq!(missing.to_string(), "prompt \"p\" has no handler: call `.handler(..)` on it");
    }
}
