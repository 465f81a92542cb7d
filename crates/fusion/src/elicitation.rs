//! Asking in the middle of a call: a form for the user ([`Ctx::elicit`]), a page to open
//! ([`Ctx::elicit_url`]), a message for the client's model ([`Ctx::sample`]) or the client's
//! roots ([`Ctx::list_roots`]) — one API for both eras of MCP.
//!
//! On a session (MCP before 2026-07-28) the question is a request on the connection and the
//! handler waits for the answer. On MCP 2026-07-28 it is a multi round-trip request: the call is
//! answered with an input-required result carrying the question and a sealed `requestState`,
//! the client sends the call again with the answer, and the handler runs again from the start,
//! getting the answer where it asked. So a handler asks before it writes, and its work before the
//! question is done once per round (keep it to reads). A round that asks commits nothing (the
//! call's [`CommitGate`](crate::CommitGate) is closed), so a write happens once, in the round that
//! has every answer; an idempotency key is freed by a round that asks and claimed again by the
//! next.
//!
//! ```
//! use mcp_fusion::{Ctx, Elicited, wire::ToolError};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! /// The form the user fills in.
//! #[derive(Deserialize, JsonSchema)]
//! struct Confirm {
//!     /// Tick to go ahead.
//!     confirm: bool,
//! }
//!
//! async fn purge(ctx: Ctx<()>, _input: serde_json::Value) -> Result<&'static str, ToolError> {
//!     match ctx.elicit::<Confirm>("Purge every archived invoice?").await? {
//!         Elicited::Accepted(Confirm { confirm: true }) => Ok("purged"),
//!         other => Err(other.refusal(ctx.action())),
//!     }
//! }
//! ```

#![allow(deprecated, reason = "rmcp marks sampling and roots deprecated (SEP-2577); 2026-07-28 keeps them")]

use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;

use mcp_fusion_wire::{ErrorCode, FieldProblem, ToolError, echo};
use rmcp::model::{
    CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult, ElicitRequest, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationSchema, InputRequest, ListRootsRequest, ListRootsResult,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::context::{CallInfo, Ctx};
use crate::rounds::{malformed_answer, missing_capability};
use crate::validation::{Checker, Formats};

/// What the user did with a form or a page: accepted it (with the form's values), declined it,
/// or dismissed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicited<T> {
    /// The user answered; for a form, its values.
    Accepted(T),
    /// The user said no.
    Declined,
    /// The user dismissed the question without answering.
    Cancelled,
}

impl<T> Elicited<T> {
    /// The answer, when the user accepted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicited::Accepted(answer) => Some(answer),
            Elicited::Declined | Elicited::Cancelled => None,
        }
    }

    /// The envelope of a call of `action` that stops here because the user did not go ahead
    /// (declined, dismissed, or accepted a form that says no): nothing was done, and the model
    /// is told not to insist.
    pub fn refusal(&self, action: &str) -> ToolError {
        match self {
            Elicited::Cancelled => ToolError::new(
                ErrorCode::Custom("ELICITATION_CANCELLED".to_owned()),
                format!("The user dismissed the question of {action} without answering; nothing was done."),
            )
            .suggest(format!("Ask the user whether to go on; call {action} again only if they say so.")),
            Elicited::Accepted(_) | Elicited::Declined => ToolError::new(
                ErrorCode::Custom("ELICITATION_DECLINED".to_owned()),
                format!("The user declined the question of {action}; nothing was done."),
            )
            .suggest(format!("Tell the user it was not done; call {action} again only if they ask for it.")),
        }
    }
}

/// A question for the user, asked when awaited: a form of `T`'s fields, or a page to open.
/// Built by [`Ctx::elicit`] and [`Ctx::elicit_url`].
#[must_use = "a question is asked when awaited"]
pub struct Elicit<'a, T> {
    info: &'a CallInfo,
    message: String,
    key: Option<String>,
    url: Option<String>,
    answer: PhantomData<fn() -> T>,
}

impl<T> Elicit<'_, T> {
    /// The key the question is asked under in `inputRequests` (default `elicitation-1`,
    /// `elicitation-2`, … in the order the handler asks). It must be the same in every round.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}

impl<'a, T> IntoFuture for Elicit<'a, T>
where
    T: DeserializeOwned + JsonSchema + Send + 'a,
{
    type Output = Result<Elicited<T>, ToolError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.ask())
    }
}

impl<T: DeserializeOwned + JsonSchema> Elicit<'_, T> {
    async fn ask(self) -> Result<Elicited<T>, ToolError> {
        let info = self.info;
        let action = info.action();
        let form = match &self.url {
            None => Some(form_of::<T>(action)?),
            Some(_) => None,
        };
        let declared = info.client_capabilities().and_then(|capabilities| capabilities.elicitation.as_ref());
        let supported = declared.is_some_and(|elicitation| match &self.url {
            // `elicitation: {}` (before form and url were told apart) means forms.
            None => elicitation.form.is_some() || elicitation.url.is_none(),
            Some(_) => elicitation.url.is_some(),
        });
        if !supported && info.rounds.reachable() {
            return Err(cannot_elicit(
                action,
                &self.message,
                form.as_ref().map(|(schema, _)| schema),
                self.url.as_deref(),
            ));
        }
        let params = match (&form, self.url) {
            (Some((schema, _)), _) => ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: self.message.clone(),
                requested_schema: schema.clone(),
            },
            (None, url) => ElicitRequestParams::UrlElicitationParams {
                meta: None,
                message: self.message.clone(),
                url: url.unwrap_or_default(),
                elicitation_id: uuid::Uuid::new_v4().to_string(),
            },
        };
        let key = self.key.unwrap_or_else(|| info.rounds.unnamed_key("elicitation"));
        let request = InputRequest::Elicitation(ElicitRequest::new(params));
        let answer = info.ask(&key, request).await?;
        let result: ElicitResult = serde_json::from_value(answer.clone()).map_err(|_| {
            info.rounds.refuse(malformed_answer(
                action,
                &key,
                "an elicitation result ({\"action\": \"accept\", \"content\": {…}})",
                &answer,
            ));
            pending_refusal(action)
        })?;
        Ok(match result.action {
            ElicitationAction::Accept => {
                let content = result.content.unwrap_or_else(|| Value::Object(Map::new()));
                Elicited::Accepted(match &form {
                    Some((_, checker)) => fitted(action, checker, content)?,
                    // A page has no values: its answer is that the user went through it.
                    None => serde_json::from_value(Value::Null)
                        .map_err(|_| form_bug(action, "a URL elicitation answers ()"))?,
                })
            }
            ElicitationAction::Decline => Elicited::Declined,
            // Cancel, and any action a later version adds: the user did not answer.
            _ => Elicited::Cancelled,
        })
    }
}

/// The envelope a handler gets back while the call is refused with a JSON-RPC error; the
/// client sees the error, not this.
fn pending_refusal(action: &str) -> ToolError {
    ToolError::new(
        ErrorCode::Custom(crate::rounds::INPUT_REQUIRED.to_owned()),
        format!("{action} is answered with a JSON-RPC error about the client's answers."),
    )
}

/// The form of `T` as MCP's restricted schema, and the checker its answers go through.
fn form_of<T: JsonSchema>(action: &str) -> Result<(ElicitationSchema, Checker), ToolError> {
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    let Value::Object(mut object) = Value::from(schema) else {
        return Err(form_bug(action, "its schema is not an object"));
    };
    let checker = Checker::new(&object, Vec::new(), Formats::Asserted).map_err(|error| form_bug(action, &error))?;
    // MCP's form schema is a flat object of primitive fields, without a dialect.
    object.shift_remove("$schema");
    let form = ElicitationSchema::from_json_schema(object).map_err(|error| {
        form_bug(
            action,
            &format!("it is not a flat object of string, number, integer, boolean or enum fields ({error})"),
        )
    })?;
    Ok((form, checker))
}

/// A form type MCP cannot show: a bug of the server.
fn form_bug(action: &str, problem: &str) -> ToolError {
    ToolError::internal(format!("{action} asked the user with a form its server cannot send: {problem}."))
        .suggest(format!("Nothing to fix in the call: report that {action}'s form is invalid."))
}

/// The user's values, checked against the form and decoded, or the sentences of what does not fit.
fn fitted<T: DeserializeOwned>(action: &str, checker: &Checker, content: Value) -> Result<T, ToolError> {
    let problems = checker.check(&content);
    if !problems.is_empty() {
        return Err(unfit(action, &problems));
    }
    serde_json::from_value(content).map_err(|error| {
        tracing::debug!(action, "an elicitation answer did not decode: {}", echo(&error.to_string()));
        unfit(action, &[])
    })
}

/// The envelope of an answer that does not fit its form.
fn unfit(action: &str, problems: &[FieldProblem]) -> ToolError {
    let sentences: Vec<String> = problems.iter().map(|problem| format!("{}: {}", problem.name, problem.text)).collect();
    let what =
        if sentences.is_empty() { "its values are not of the form's types".to_owned() } else { sentences.join(" ") };
    ToolError::validation(format!(
        "The user's answer to the form of {action} does not fit it; nothing was done. {what}"
    ))
    .suggest(format!("Call {action} again with the same arguments: the user is asked again."))
}

/// The envelope of a question the client cannot show: the model is told what was asked, so it
/// can ask the user itself, and why the server cannot take that answer from it. The question is
/// the server's own text (whatever it quotes from the call it echoed), and shown whole.
fn cannot_elicit(action: &str, message: &str, form: Option<&ElicitationSchema>, url: Option<&str>) -> ToolError {
    let mode = if url.is_some() { "open a page (URL elicitation)" } else { "show a form (form elicitation)" };
    let mut error = ToolError::new(
        ErrorCode::Custom("ELICITATION_UNSUPPORTED".to_owned()),
        format!(
            "{action} must ask the user \"{message}\" before it goes on, and this client cannot {mode}: it declared no such elicitation capability. Nothing was done."
        ),
    )
    .suggest(format!(
        "Ask the user yourself: \"{message}\". Their answer must reach the server through the client, not through you: if they want it done, they need a client that supports elicitation; then call {action} again."
    ));
    if let Some(form) = form {
        let fields: Vec<&str> = form.properties.keys().map(|name| name.as_ref()).collect();
        error = error.detail("form_fields", fields.join(", "));
    }
    if let Some(url) = url {
        error = error.detail("url", echo(url));
    }
    error
}

impl<S> Ctx<S> {
    /// Asks the user to fill in a form of `T`'s fields (a flat struct of strings, numbers,
    /// booleans and enums, described by its doc comments), with `message` above it. See the
    /// [module](crate::elicitation) for how it works on each protocol version.
    ///
    /// Fails with an envelope when the client cannot show a form (the model is told what was
    /// asked), when the user's values do not fit the form, and, on MCP 2026-07-28, while the
    /// question is on its way (return it: the call is answered with the question).
    pub fn elicit<T>(&self, message: impl Into<String>) -> Elicit<'_, T> {
        Elicit { info: self.call(), message: message.into(), key: None, url: None, answer: PhantomData }
    }

    /// Asks the user to open `url` (to sign in elsewhere, to pay): the answer says whether they
    /// went through it. The page must not carry secrets in its address.
    pub fn elicit_url(&self, message: impl Into<String>, url: impl Into<String>) -> Elicit<'_, ()> {
        Elicit { info: self.call(), message: message.into(), key: None, url: Some(url.into()), answer: PhantomData }
    }

    /// Asks the client's model (`sampling/createMessage`). A client that did not declare
    /// `sampling` gets the JSON-RPC error MissingRequiredClientCapability (-32021).
    pub async fn sample(&self, params: CreateMessageRequestParams) -> Result<CreateMessageResult, ToolError> {
        let info = self.call();
        let declared = info.client_capabilities().is_some_and(|capabilities| capabilities.sampling.is_some());
        let request = InputRequest::CreateMessage(CreateMessageRequest::new(params));
        info.ask_typed(declared, "sampling", "a sampling result ({\"role\", \"content\", \"model\"})", request).await
    }

    /// Asks the client for its roots (`roots/list`). A client that did not declare `roots`
    /// gets the JSON-RPC error MissingRequiredClientCapability (-32021).
    pub async fn list_roots(&self) -> Result<ListRootsResult, ToolError> {
        let info = self.call();
        let declared = info.client_capabilities().is_some_and(|capabilities| capabilities.roots.is_some());
        info.ask_typed(
            declared,
            "roots",
            "a roots result ({\"roots\": […]})",
            InputRequest::ListRoots(ListRootsRequest::default()),
        )
        .await
    }
}

impl CallInfo {
    /// Asks the client `request` under `key`, with the call's commit gate closed for a round
    /// that asks.
    async fn ask(&self, key: &str, request: InputRequest) -> Result<Value, ToolError> {
        let gate = &self.commit;
        self.rounds.ask(self.action(), key, request, || gate.abandon()).await
    }

    /// Asks for an answer of type `R`, of a capability the client must have `declared`.
    async fn ask_typed<R: DeserializeOwned>(
        &self,
        declared: bool,
        capability: &str,
        expected: &str,
        request: InputRequest,
    ) -> Result<R, ToolError> {
        let action = self.action();
        if !declared && self.rounds.reachable() {
            self.rounds.refuse(missing_capability(action, capability));
            return Err(pending_refusal(action));
        }
        let key = self.rounds.unnamed_key(capability);
        let answer = self.ask(&key, request).await?;
        serde_json::from_value(answer.clone()).map_err(|_| {
            self.rounds.refuse(malformed_answer(action, &key, expected, &answer));
            pending_refusal(action)
        })
    }
}
