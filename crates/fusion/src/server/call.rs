//! The path of one `tools/call`: routed in the catalog, then, inside one panic catch raced
//! against the client's cancellation, validated, decoded and run through the action's chain.

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};

use futures_util::FutureExt as _;
use mcp_fusion_wire::{ErrorCode, FieldProblem, ToolError, ValidationError, converted_warning, echo};
use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, CallToolResult, CreateTaskResult, InputRequiredResult, JsonObject};
use serde_json::Value;
use tracing::Instrument as _;

use super::FusionServer;
use super::call_record::CallRecord;
use super::compile::Settings;
use super::tasks::{Called, wire_task};
use crate::auth::CallerKey;
use crate::compiled::CompiledAction;
use crate::context::CallInfo;
use crate::context::RequestInfo;
use crate::failure::Failure;
use crate::handler::Decoded;
use crate::input::DecodeError;
use crate::launch::Launch;
use crate::logging::Listening;
use crate::middleware::{Call, Next};
use crate::output::{Output, envelope_result, success_result};
use crate::rounds::{Binding, Refused, Rounds};

/// A call's input, decoded into the handler's type.
type Input = Box<dyn std::any::Any + Send + Sync>;

/// Why a call did not reach its handler or did not succeed.
pub(super) enum Refusal {
    /// The arguments do not fit the action's input.
    Invalid(ValidationError),
    /// Any other failure, as its envelope.
    Failed(ToolError),
    /// The call asked the client for input: answered with the questions and the sealed state.
    InputRequired(Box<InputRequiredResult>),
    /// The request is answered with this JSON-RPC error (a request state that is not this
    /// call's, a capability the client lacks, an answer that is not one).
    Protocol(ErrorData),
}

impl FusionServer {
    /// Runs one `tools/call`: route, validate, then the chain of guards, middleware and
    /// handler. Every failure is an envelope in the result; this never fails, and a panic
    /// anywhere past routing is caught and named after the action.
    pub async fn call(&self, tool: &str, arguments: Option<JsonObject>, request: RequestInfo) -> CallToolResult {
        match self.respond(tool, arguments, request).await {
            Ok(CallToolResponse::Complete(result)) => result,
            Ok(_) => envelope_result(
                ToolError::internal(format!(
                    "{tool} asked the client for input, which a call made with FusionServer::call cannot give."
                ))
                .suggest("Call it through FusionServer::respond, which returns the input-required result.")
                .to_call_result(),
                &[],
                false,
            ),
            Err(error) => {
                // An unknown tool's `-32602` holds its envelope: the result says it whole.
                let error = ToolError::from_protocol_error(error.code.0, &error.message, error.data.as_ref())
                    .unwrap_or_else(|| ToolError::validation(error.message.to_string()));
                envelope_result(error.to_call_result(), &[], false)
            }
        }
    }

    /// Runs one `tools/call` as [`call`](Self::call) does, answered as MCP answers it: the
    /// result, the input-required result of a call that asked the client something (MCP
    /// 2026-07-28), or the JSON-RPC error of a request the call refused (a `requestState` that is
    /// not this call's, a capability the client did not declare, on 2026-07-28 a tool the server
    /// does not have: `-32602` with the envelope's sections in its data).
    pub async fn respond(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        request: RequestInfo,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(match self.call_or_launch(tool, arguments, request).await? {
            Called::Answered(response) => response,
            Called::Task(task) => CallToolResponse::Task(CreateTaskResult::new(wire_task(&task))),
        })
    }

    /// Runs one `tools/call`, answered at once or, when it runs as a task, with the task kept.
    pub(super) async fn call_or_launch(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        request: RequestInfo,
    ) -> Result<Called, ErrorData> {
        let _counted = self.inner.in_flight.enter();
        let catalog = self.inner.catalog.load();
        let arguments = arguments.unwrap_or_default();
        if catalog.searches(tool)
            && let Some(search) = &self.inner.settings.search
        {
            drop(catalog);
            let mut request = request;
            request.extensions.insert(super::search::Searched(self.inner.catalog.load_full()));
            let action = Arc::clone(search.action(tool));
            return action.run(arguments, request, &self.inner.settings).await.map(Called::Answered);
        }
        match catalog.route(tool, arguments) {
            Ok((action, arguments)) => {
                drop(catalog);
                if self.as_task(&action, tool, &request)? {
                    // Boxed: a task's launch is a large future, and a plain call should not carry its room.
                    return Box::pin(self.launch(action, arguments, request)).await;
                }
                action.run(arguments, request, &self.inner.settings).await.map(Called::Answered)
            }
            Err(error) => {
                // A caller is told of the tools its list shows, and no others.
                let error = match catalog.tool(tool) {
                    None if error.code == ErrorCode::UnknownAction => {
                        catalog.unknown_tool_seen_by(tool, &request.caller).unwrap_or(error)
                    }
                    _ => error,
                };
                CallRecord::start(&request).unrouted(tool, &error.code);
                let budget = self.inner.settings.envelope_budget;
                // On 2026-07-28 a tool the server does not have is a protocol error, `-32602`:
                // its message keeps the sentences that heal, its data the envelope's sections.
                // A known tool's unknown action stays the tool's error, about its arguments;
                // a warning (a mount still connecting) stays a result.
                if request.multi_round_trip && error.is_error() && catalog.tool(tool).is_none() {
                    return Err(invalid_params(&error, budget));
                }
                // Only a warning (a mount still connecting) depends on the tool's output schema.
                let output_schema = !error.is_error() && catalog.declares_output_schema(tool);
                let error = error.within(budget);
                Ok(Called::Answered(envelope_result(error.to_call_result(), &[], output_schema).into()))
            }
        }
    }
}

/// The JSON-RPC `-32602` of `error` within `budget` characters, as rmcp sends it.
fn invalid_params(error: &ToolError, budget: usize) -> ErrorData {
    let rpc = error.to_invalid_params(budget);
    ErrorData::new(rmcp::model::ErrorCode(rpc.code), rpc.message, Some(rpc.data))
}

/// The code of another server's error result, as its envelope names it.
fn passed_error_code(output: &Output) -> ErrorCode {
    let text = output.content.iter().find_map(|block| block.as_text()).map_or("", |text| text.text.as_str());
    mcp_fusion_wire::parse(text).error.code.clone()
}

/// The outcome and warnings of a call with each envelope cut to fit `budget` characters.
fn within_budget(
    outcome: Result<Output, Refusal>,
    warnings: Vec<ToolError>,
    budget: usize,
) -> (Result<Output, Refusal>, Vec<ToolError>) {
    let outcome = match outcome {
        Err(Refusal::Failed(error)) => Err(Refusal::Failed(error.within(budget))),
        Err(Refusal::Invalid(error)) => Err(Refusal::Invalid(error.within(budget))),
        other => other,
    };
    (outcome, warnings.into_iter().map(|warning| warning.within(budget)).collect())
}

impl CompiledAction {
    /// Runs the call and answers it as a tool result: the success, or its envelope.
    async fn run(
        &self,
        arguments: JsonObject,
        request: RequestInfo,
        settings: &Settings,
    ) -> Result<CallToolResponse, ErrorData> {
        let (outcome, warnings) = self.outcome(Value::Object(arguments), request, settings).await;
        self.answer(outcome, &warnings)
    }

    /// The answer to a call that ended with `outcome`: the success, its envelope, the
    /// input-required result, or the JSON-RPC error.
    pub(super) fn answer(
        &self,
        outcome: Result<Output, Refusal>,
        warnings: &[ToolError],
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(match outcome {
            Ok(output) => success_result(output, warnings).into(),
            Err(Refusal::Failed(error)) => envelope_result(error.to_call_result(), warnings, self.output_schema).into(),
            Err(Refusal::Invalid(error)) => {
                envelope_result(error.to_call_result(), warnings, self.output_schema).into()
            }
            Err(Refusal::InputRequired(input)) => CallToolResponse::InputRequired(*input),
            Err(Refusal::Protocol(error)) => return Err(error),
        })
    }

    /// The edge of the chain: the one place panics are caught and cancellation is raced, and
    /// where the call is watched (its span, its one event). Returns the outcome and the
    /// warnings collected on the way.
    pub(super) async fn outcome(
        &self,
        arguments: Value,
        request: RequestInfo,
        settings: &Settings,
    ) -> (Result<Output, Refusal>, Vec<ToolError>) {
        self.outcome_of(arguments, request, settings, None).await
    }

    /// [`outcome`](Self::outcome) of a call that may become a task: `launch` hands it over
    /// when it reaches its handler.
    pub(super) async fn outcome_of(
        &self,
        arguments: Value,
        request: RequestInfo,
        settings: &Settings,
        launch: Option<Launch>,
    ) -> (Result<Output, Refusal>, Vec<ToolError>) {
        let mut record = CallRecord::start(&request);
        let run = self.caught_outcome(arguments, request, settings, launch);
        let (outcome, warnings) = match record.span(&self.qualified) {
            Some(span) => run.instrument(span).await,
            None => run.await,
        };
        // Made only for the outcome that has it: a success allocates no code.
        let code = match &outcome {
            // Another server's error passed on is logged with the code its envelope names.
            Ok(output) if output.is_passed_error() => Some(Cow::Owned(passed_error_code(output))),
            Ok(_) => None,
            Err(Refusal::Invalid(_)) => Some(Cow::Owned(ErrorCode::ValidationError)),
            Err(Refusal::Failed(error)) => Some(Cow::Borrowed(&error.code)),
            Err(Refusal::InputRequired(_)) => {
                Some(Cow::Owned(ErrorCode::Custom(crate::rounds::INPUT_REQUIRED.to_owned())))
            }
            Err(Refusal::Protocol(_)) => Some(Cow::Owned(ErrorCode::Custom("PROTOCOL_ERROR".to_owned()))),
        };
        record.finish(&self.qualified, code.as_deref());
        (outcome, warnings)
    }

    async fn caught_outcome(
        &self,
        arguments: Value,
        request: RequestInfo,
        settings: &Settings,
        launch: Option<Launch>,
    ) -> (Result<Output, Refusal>, Vec<ToolError>) {
        let cancellation = request.cancellation.clone();
        let sent = self.value_free.then(|| arguments.clone());
        // The call's facts, once validation let it through: its warnings outlive a panic or
        // a cancellation, and ride on that envelope too.
        let admitted = OnceLock::new();
        let work =
            AssertUnwindSafe(self.validate_and_run(arguments, request, settings, &admitted, launch)).catch_unwind();
        tokio::pin!(work);
        let caught = |outcome: Result<_, _>| {
            outcome.unwrap_or_else(|panic| {
                Err(Refusal::Failed(
                    Failure::from_panic(panic).into_tool_error(&self.qualified, self.mask_internal_errors),
                ))
            })
        };
        let outcome = tokio::select! {
            biased;
            outcome = &mut work => caught(outcome),
            () = cancellation.cancelled() => {
                // A call whose handler already committed runs to its end: dropping it now would
                // free its idempotency key with the write made.
                // So does one handed to another server: that server may have acted on it, and
                // the forwarder ends it with what it knows.
                let runs_on = admitted
                    .get()
                    .is_some_and(|info: &Arc<CallInfo>| !info.commit.abandon() || info.is_handed_off());
                if runs_on { caught(work.await) } else { Err(Refusal::Failed(cancelled(&self.qualified))) }
            }
        };
        let mut warnings = admitted.get().map(|info: &Arc<CallInfo>| info.take_warnings()).unwrap_or_default();
        // A value-free server's warnings quote nothing the call sent, as its failures do not.
        if let Some(sent) = &sent {
            warnings = warnings.into_iter().map(|warning| warning.without_values(sent)).collect();
        }
        let (outcome, warnings) = self.named_as_called(outcome, warnings, settings);
        within_budget(outcome, warnings, settings.envelope_budget)
    }

    /// The outcome and warnings with each action they name said as a model calls it.
    fn named_as_called(
        &self,
        outcome: Result<Output, Refusal>,
        mut warnings: Vec<ToolError>,
        settings: &Settings,
    ) -> (Result<Output, Refusal>, Vec<ToolError>) {
        let names_actions = |error: &ToolError| !error.available_actions.is_empty();
        let failed = matches!(&outcome, Err(Refusal::Failed(error)) if names_actions(error));
        if !self.names_local_actions || (!failed && !warnings.iter().any(names_actions)) {
            return (outcome, warnings);
        }
        let names = settings.names.load();
        let outcome = match outcome {
            Err(Refusal::Failed(error)) => Err(Refusal::Failed(names.rename(error, &self.qualified))),
            other => other,
        };
        warnings = warnings.into_iter().map(|warning| names.rename(warning, &self.qualified)).collect();
        (outcome, warnings)
    }

    /// Validation against the schema, decoding into the input type with its custom rules,
    /// then the chain. A refused call costs no more than its sentences.
    async fn validate_and_run(
        &self,
        arguments: Value,
        request: RequestInfo,
        settings: &Settings,
        admitted: &OnceLock<Arc<CallInfo>>,
        launch: Option<Launch>,
    ) -> Result<Output, Refusal> {
        let (input, arguments, converted) = self.checked(arguments).map_err(Refusal::Invalid)?;
        let requested_level = request.log_level;
        // A call that becomes a task at its handler asks from the task; one whose handler asks
        // first asks as a plain call does, until it becomes the task.
        let rounds = match &launch {
            Some(launch) if !self.questions_first => Rounds::in_task(launch.inbox()),
            _ => self.rounds(&request, &arguments, settings)?,
        };
        let info = Arc::new(
            CallInfo::new(
                Arc::clone(&self.qualified),
                request,
                self.mask_internal_errors,
                self.output_schema,
                Some(Arc::clone(&settings.subscriptions)),
            )
            .of_kind(self.kind)
            .with_rounds(rounds)
            .launching(launch)
            .questions_first(self.questions_first)
            .naming(Arc::clone(&settings.names)),
        );
        let info = Arc::clone(admitted.get_or_init(|| info));
        if let Some(warning) = converted {
            info.warn(warning);
        }
        // A client that set a logging level hears the events of its calls: they run in a span
        // of their own, listed for the client while the call runs. On 2026-07-28 the level is
        // the request's own, and a request without one hears nothing.
        let level = info.peer.as_ref().and_then(|peer| {
            let level = requested_level.inspect(|_| crate::logging::someone_listens());
            Some((peer.clone(), level.or_else(|| settings.log_levels.of(peer))?))
        });
        // A value-free server's handlers may quote what they were sent: their words lose it.
        let sent = self.value_free.then(|| arguments.clone());
        let call = Call { info: Arc::clone(&info), arguments, input: Some(input) };
        let run = Next::start(Arc::clone(&self.chain)).run(call);
        let outcome = match level {
            None => run.await,
            Some((peer, level)) => {
                let span = tracing::info_span!("mcp_call", action = %self.qualified);
                let listening = Listening::start(&span, peer, level, self.mask_internal_errors);
                let outcome = run.instrument(span).await;
                listening.finish().await;
                outcome
            }
        };
        match info.rounds.interrupted() {
            Some(Ok(input)) => Err(Refusal::InputRequired(Box::new(input))),
            Some(Err(error)) => Err(Refusal::Protocol(error)),
            None => outcome.map_err(|error| match &sent {
                Some(arguments) => Refusal::Failed(error.without_values(arguments)),
                None => Refusal::Failed(error),
            }),
        }
    }

    /// The call's rounds of questions to the client: on MCP 2026-07-28, opened from the state
    /// the request echoes, which must be sealed by this server for this action, these
    /// arguments and this caller, and still in time.
    fn rounds(&self, request: &RequestInfo, arguments: &Value, settings: &Settings) -> Result<Rounds, Refusal> {
        if !request.multi_round_trip {
            // Nothing to bind: a session's questions wait on its connection.
            return Ok(Rounds::over(request.peer.clone().filter(|_| request.peer_accepts_requests)));
        }
        let caller = CallerKey::of(request.caller.identity(), request.session_id.as_ref(), request.client_address);
        let binding = Binding {
            action: self.qualified.to_string(),
            arguments: crate::guard::fingerprint(arguments),
            caller: caller.to_string(),
        };
        Rounds::open(
            request.input_responses.clone(),
            request.request_state.as_deref(),
            &settings.request_state,
            binding,
        )
        .map_err(|refused| match refused {
            Refused::Protocol(error) => Refusal::Protocol(error),
            Refused::Envelope(error) => Refusal::Failed(error),
        })
    }

    /// Validation against the schema, then decoding into the input type with its custom
    /// rules: the input, the arguments it was decoded from and the warning of the strings read
    /// as the numbers or booleans they spell, or why they do not fit.
    pub(super) fn checked(&self, arguments: Value) -> Result<(Input, Value, Option<ToolError>), ValidationError> {
        let checker = self.checker.as_ref();
        let mut arguments = match checker.filter(|_| self.nulls_left_out) {
            Some(checker) => checker.nulls_left_out(self.other_actions_nulls_left_out(arguments)),
            None => arguments,
        };
        let mut converted = None;
        if let Some(problems) = checker.map(|checker| checker.check(&arguments)).filter(|p| !p.is_empty()) {
            let forgiven = checker.filter(|_| self.forgiving_scalars).and_then(|checker| checker.converted(&arguments));
            let Some((read, conversions)) = forgiven else {
                return Err(self.invalid(problems, &arguments));
            };
            arguments = read;
            converted = Some(converted_warning(&conversions));
        }
        let (decoded, arguments) = self.decode(arguments);
        match decoded {
            Ok((input, issues)) if issues.is_empty() => Ok((input, arguments, converted)),
            Ok((_, issues)) => {
                let problems = checker.map(|checker| checker.rule_problems(issues, &arguments)).unwrap_or_default();
                Err(self.invalid(problems, &arguments))
            }
            Err(error) => {
                // The decoder's words may quote the value: for the log, not for the model.
                tracing::debug!(action = %self.qualified, field = %error.path(), "input did not decode: {}", echo(error.message()));
                let problems = checker.map(|checker| checker.decode_problem(&error, &arguments)).unwrap_or_default();
                Err(self.invalid(problems, &arguments))
            }
        }
    }

    /// Decodes the arguments into the input type. A whole float (`30.0`) where the schema asks
    /// for an integer passed validation, as it should; the decoder is given it as `30`.
    fn decode(&self, arguments: Value) -> (Result<Decoded, DecodeError>, Value) {
        let decoded = (self.decode)(&arguments);
        if decoded.is_ok() {
            return (decoded, arguments);
        }
        let mut whole = arguments.clone();
        if self.checker.as_ref().is_some_and(|checker| checker.whole_numbers(&mut whole)) {
            let retried = (self.decode)(&whole);
            if retried.is_ok() {
                return (retried, whole);
            }
        }
        (decoded, arguments)
    }

    /// A mounted grouped tool's call without the `null`s a strict schema's host sent for the
    /// fields of the tool's other actions: the upstream checks the named action's fields only.
    fn other_actions_nulls_left_out(&self, mut arguments: Value) -> Value {
        let Some(grouped) = self.upstream_actions.as_deref() else { return arguments };
        let action = arguments.get(&grouped.discriminator).and_then(Value::as_str).map(str::to_owned);
        let Some(fields) = action.and_then(|action| grouped.fields.get(&action)) else { return arguments };
        if let Value::Object(object) = &mut arguments {
            object.retain(|key, value| !value.is_null() || key == &grouped.discriminator || fields.contains(key));
        }
        arguments
    }

    fn invalid(&self, problems: Vec<FieldProblem>, arguments: &Value) -> ValidationError {
        // A mounted grouped tool's call names its action: the error names it as the mount
        // serves it (`demo.billing.list_invoices`), when it is one the upstream publishes.
        let picked = self.upstream_actions.as_deref().and_then(|grouped| {
            let action = arguments.get(&grouped.discriminator)?.as_str()?;
            grouped.actions.iter().any(|known| known == action).then(|| format!("{}.{action}", self.qualified))
        });
        ValidationError {
            action: picked.unwrap_or_else(|| self.qualified.to_string()),
            fields: problems,
            contract_awareness: self.awareness.clone(),
        }
    }
}

/// What a client that cancelled sees, should the answer still reach it.
fn cancelled(action: &str) -> ToolError {
    ToolError::new(ErrorCode::cancelled(), format!("{action} was cancelled by the client before it finished."))
        .suggest("Nothing to do: the client cancelled this call.")
}
