//! A call's questions to the client (a form for the user, a message for the client's model, its
//! roots) and their answers, on both eras of MCP: over the connection of a session before
//! 2026-07-28, and as a multi round-trip request from then on, where a question ends the request
//! with an input-required result and a sealed `requestState`, and the client sends the request
//! again with the answers.
//!
//! The handler runs again from the start in every round; each question is asked under a key,
//! and an answer already in hand (carried in the state, or sent with this round) is returned at
//! once. The state is sealed with the server's key (HMAC-SHA256), expires, and is bound to the
//! action, the digest of the arguments and the caller: a state changed by one byte, carried
//! past its time, or sent with another call is refused before anything runs.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_fusion_wire::{ErrorCode, Sent, ToolError, echo};
use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, ClientResult, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    RequestStateCodec, SealOptions, ServerRequest,
};
use rmcp::{Peer, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::launch::TaskInbox;

/// How long the answers of a round may take by default: long enough for a person to read a
/// form and answer it.
pub(crate) const DEFAULT_TTL: Duration = Duration::from_secs(600);

/// What the seal binds besides the state itself: a state of another format never opens.
const ASSOCIATED_DATA: &[u8] = b"mcp-fusion/request-state/1";

/// How a server seals the state of its rounds: its key and how long a round's answers may take.
#[derive(Clone)]
pub(crate) struct Sealing {
    pub codec: Arc<RequestStateCodec>,
    pub ttl: Duration,
}

impl std::fmt::Debug for Sealing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The codec holds the key: never printed.
        f.debug_struct("Sealing").field("ttl", &self.ttl).finish_non_exhaustive()
    }
}

impl Sealing {
    /// A codec with a random key of 32 bytes: enough for one process; replicas behind one
    /// address share a key set on the builder.
    pub(crate) fn random() -> Sealing {
        let mut key = Vec::with_capacity(32);
        key.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
        key.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
        Sealing { codec: Arc::new(RequestStateCodec::new_unchecked(key)), ttl: DEFAULT_TTL }
    }
}

/// What a state is bound to: one action, called with the same arguments, by the same caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Binding {
    /// The qualified action (or the prompt, or the URI read).
    pub action: String,
    /// The SHA-256 of the canonical arguments, hex.
    pub arguments: String,
    /// The caller's key (`identity:alice`, `address:…`).
    pub caller: String,
}

/// The state a round hands to the next, sealed. Short field names: it travels in every round.
#[derive(Debug, Serialize, Deserialize)]
struct RoundState {
    #[serde(rename = "a")]
    action: String,
    #[serde(rename = "d")]
    arguments: String,
    #[serde(rename = "c")]
    caller: String,
    /// Unix milliseconds after which the answers are not taken.
    #[serde(rename = "e")]
    expires_at_ms: u64,
    /// The keys of the questions the round asked.
    #[serde(rename = "q")]
    asked: BTreeSet<String>,
    /// The answers of earlier rounds, by key.
    #[serde(rename = "r")]
    answers: BTreeMap<String, Value>,
}

/// Why a request's rounds could not be opened: a JSON-RPC error (a state that is not the
/// server's or not this call's), or an envelope (answers that came too late).
#[derive(Debug)]
pub(crate) enum Refused {
    /// Answered as this JSON-RPC error; nothing ran.
    Protocol(ErrorData),
    /// Answered as this envelope; nothing ran.
    Envelope(ToolError),
}

/// Where the questions of a call go.
#[derive(Debug)]
enum Channel {
    /// MCP 2026-07-28: a question ends the round; its answer comes with the next request.
    Rounds {
        sealing: Sealing,
        binding: Binding,
        /// The answers sent with this request.
        responses: InputResponses,
        /// The keys the last round asked; `None` when the request came without a state (its
        /// answers are then taken as given now, for questions this call asks).
        asked: Option<BTreeSet<String>>,
    },
    /// A session: a question is a request on the connection, answered while the call waits.
    Connection(Peer<RoleServer>),
    /// Nothing reaches the client (stateless HTTP before 2026-07-28, a call made in process).
    Unreachable,
    /// The call runs as a task: a question waits in its store (when the store keeps
    /// questions) until its client answers with `tasks/update`; without one it cannot ask.
    Task(Option<Arc<dyn TaskInbox>>),
}

/// A call's questions and answers.
#[derive(Debug)]
pub(crate) struct Rounds {
    channel: Channel,
    /// The answers in hand: carried by the state, and those of this request already taken.
    answers: Mutex<BTreeMap<String, Value>>,
    /// The questions of this round still without an answer, in the order asked.
    pending: Mutex<InputRequests>,
    /// A JSON-RPC error the call is answered with instead of its result.
    protocol_error: OnceLock<ErrorData>,
    /// How many questions were asked without a key, to name the next one.
    unnamed: Mutex<usize>,
    /// Where its questions wait once the call became a task in its handler.
    task_inbox: OnceLock<Arc<dyn TaskInbox>>,
}

/// The custom code of the envelope a handler gets back while its question is on its way to the
/// client: the call's answer is the input-required result, never this envelope.
pub(crate) const INPUT_REQUIRED: &str = "INPUT_REQUIRED";

impl Rounds {
    fn with(channel: Channel, answers: BTreeMap<String, Value>) -> Rounds {
        Rounds {
            channel,
            answers: Mutex::new(answers),
            pending: Mutex::new(InputRequests::new()),
            protocol_error: OnceLock::new(),
            unnamed: Mutex::new(0),
            task_inbox: OnceLock::new(),
        }
    }

    /// The rounds of a call that runs as a task: its questions wait in `inbox`, or, without
    /// one, cannot be asked.
    pub(crate) fn in_task(inbox: Option<Arc<dyn TaskInbox>>) -> Rounds {
        Rounds::with(Channel::Task(inbox), BTreeMap::new())
    }

    /// The rounds of a request before 2026-07-28: questions go over `peer`, the connection of a
    /// session, when there is one.
    pub(crate) fn over(peer: Option<Peer<RoleServer>>) -> Rounds {
        Rounds::with(peer.map_or(Channel::Unreachable, Channel::Connection), BTreeMap::new())
    }

    /// The rounds of a 2026-07-28 request: the answers it carries and the state it echoes,
    /// checked (sealed by this server, for this call, in time).
    pub(crate) fn open(
        responses: Option<InputResponses>,
        state: Option<&str>,
        sealing: &Sealing,
        binding: Binding,
    ) -> Result<Rounds, Refused> {
        let (asked, answers) = match state {
            None => (None, BTreeMap::new()),
            Some(sealed) => {
                let state = unseal(sealing, sealed, &binding)?;
                (Some(state.asked), state.answers)
            }
        };
        let channel =
            Channel::Rounds { sealing: sealing.clone(), binding, responses: responses.unwrap_or_default(), asked };
        Ok(Rounds::with(channel, answers))
    }

    /// The key of a question asked without one: `elicitation-1`, `sampling-2`, … in the order
    /// the handler asks, the same in every round.
    pub(crate) fn unnamed_key(&self, kind: &str) -> String {
        let mut count = self.unnamed.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *count += 1;
        format!("{kind}-{count}")
    }

    /// Whether questions go to the client at all (a session's connection, or rounds).
    pub(crate) fn reachable(&self) -> bool {
        !matches!(self.channel, Channel::Unreachable | Channel::Task(None))
    }

    /// Asks the client `request` under `key`: the answer, as the client sent it, when it is in
    /// hand or (on a session) once the client answers; otherwise the question joins the round's
    /// and the handler gets an envelope to return (the call is answered with the questions).
    ///
    /// `may_ask` closes the call's commit gate: a round that asks commits nothing, so a write is
    /// made once, in the round that has every answer. It returns `false` when the call already
    /// committed: asking then would run the write again in the next round.
    pub(crate) async fn ask(
        &self,
        action: &str,
        key: &str,
        request: InputRequest,
        may_ask: impl FnOnce() -> bool,
    ) -> Result<Value, ToolError> {
        if let Some(answer) = self.lock_answers().get(key) {
            return Ok(answer.clone());
        }
        if let Some(inbox) = self.task_inbox.get() {
            return self.wait_in_task(inbox.as_ref(), action, key, &request).await;
        }
        match &self.channel {
            Channel::Rounds { responses, asked, .. } => {
                let asked_here = asked.as_ref().is_none_or(|asked| asked.contains(key));
                if let Some(answer) = responses.get(key).filter(|_| asked_here) {
                    self.lock_answers().insert(key.to_owned(), answer.clone());
                    return Ok(answer.clone());
                }
                if !may_ask() {
                    return Err(asked_after_commit(action, key));
                }
                self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(key.to_owned(), request);
                Err(ToolError::new(
                    ErrorCode::Custom(INPUT_REQUIRED.to_owned()),
                    format!("{action} asked the client for input ({key}); the call is answered with the question."),
                ))
            }
            Channel::Connection(peer) => {
                let request = server_request(request).ok_or_else(|| {
                    ToolError::internal(format!("{action} asked the client a kind of question ({key}) this server cannot send over a session."))
                })?;
                let answer = peer.send_request(request).await.map_err(|error| {
                    tracing::debug!(action, key, "the client did not answer: {error}");
                    ToolError::new(
                        ErrorCode::Custom("CLIENT_REQUEST_FAILED".to_owned()),
                        format!("{action} asked the client for input ({key}) and got no answer: the connection failed or the client refused the request."),
                    )
                    .suggest(format!("Call {action} again once the client is connected; if it fails again, tell the user the client cannot answer this server's questions."))
                })?;
                let answer = client_answer(answer);
                self.lock_answers().insert(key.to_owned(), answer.clone());
                Ok(answer)
            }
            Channel::Unreachable => Err(ToolError::new(
                ErrorCode::Custom("CLIENT_UNREACHABLE".to_owned()),
                format!("{action} needs to ask the client ({key}), but this request has no way to reach it: it came over stateless HTTP before MCP 2026-07-28, or in process."),
            )
            .suggest(format!("Call {action} over a session (stdio or stateful HTTP), or with protocol version 2026-07-28, where the server asks within the request."))),
            Channel::Task(Some(inbox)) => self.wait_in_task(inbox.as_ref(), action, key, &request).await,
            Channel::Task(None) => Err(ToolError::new(
                ErrorCode::Custom("CLIENT_UNREACHABLE".to_owned()),
                format!("{action} needs to ask the client ({key}), but it runs as a task, and a task tells its client only its status: the question was not sent."),
            )
            .suggest(format!("Nothing to do but report it: {action} must ask its questions before its work runs as a task."))),
        }
    }

    /// Puts the question in the task's store, where `tasks/get` shows it, and waits for its
    /// answer (`tasks/update`); questions asked at once wait side by side, each for its own.
    async fn wait_in_task(
        &self,
        inbox: &dyn TaskInbox,
        action: &str,
        key: &str,
        request: &InputRequest,
    ) -> Result<Value, ToolError> {
        let unkept = |reason: String| {
            tracing::warn!(action, key, %reason, "a task's question could not be kept");
            ToolError::new(
                ErrorCode::Custom("CLIENT_UNREACHABLE".to_owned()),
                format!("{action} needs to ask the client ({key}), but the question could not be kept with its task."),
            )
            .suggest(format!(
                "Call {action} again; if it fails again, tell the user the server cannot keep a task's questions now."
            ))
        };
        let question = serde_json::to_value(request).map_err(|error| unkept(error.to_string()))?;
        inbox.ask(key, question).await.map_err(unkept)?;
        loop {
            let taken = inbox.take().await.map_err(unkept)?;
            {
                let mut answers = self.lock_answers();
                answers.extend(taken);
                if let Some(answer) = answers.get(key) {
                    return Ok(answer.clone());
                }
            }
            if inbox.stopped() {
                return Err(ToolError::new(
                    ErrorCode::cancelled(),
                    format!("{action} stopped while it waited for its client's answer ({key})."),
                ));
            }
            inbox.changed().await;
        }
    }

    /// From now on the call's questions wait in `inbox`: its handler made it a task.
    pub(crate) fn enter_task(&self, inbox: Arc<dyn TaskInbox>) {
        let _ = self.task_inbox.set(inbox);
    }

    /// Whether the call will be answered with questions or a JSON-RPC error instead of its
    /// result.
    pub(crate) fn interrupting(&self) -> bool {
        self.protocol_error.get().is_some()
            || !self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).is_empty()
    }

    /// Answers the call with `error` (a JSON-RPC error) instead of its result, whatever the
    /// handler returns: the first such error wins.
    pub(crate) fn refuse(&self, error: ErrorData) {
        let _ = self.protocol_error.set(error);
    }

    /// What the call is answered with instead of its result, once the handler returned: the
    /// JSON-RPC error it was refused with, else the round's questions with the sealed state
    /// that carries the answers so far.
    pub(crate) fn interrupted(&self) -> Option<Result<InputRequiredResult, ErrorData>> {
        if let Some(error) = self.protocol_error.get() {
            return Some(Err(error.clone()));
        }
        let pending = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        if pending.is_empty() {
            return None;
        }
        let Channel::Rounds { sealing, binding, .. } = &self.channel else { return None };
        let state = RoundState {
            action: binding.action.clone(),
            arguments: binding.arguments.clone(),
            caller: binding.caller.clone(),
            expires_at_ms: now_ms().saturating_add(sealing.ttl.as_millis().min(u128::from(u64::MAX)) as u64),
            asked: pending.keys().cloned().collect(),
            answers: self.lock_answers().clone(),
        };
        let options = SealOptions::new().associated_data(ASSOCIATED_DATA);
        Some(match sealing.codec.seal_json_with(&state, &options) {
            Ok(sealed) => Ok(InputRequiredResult::new(Some(pending), Some(sealed))),
            Err(error) => {
                Err(ErrorData::internal_error(format!("the server could not seal its request state: {error}"), None))
            }
        })
    }

    fn lock_answers(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Value>> {
        self.answers.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Opens a state echoed by the client: sealed by this server, for this call, in time.
fn unseal(sealing: &Sealing, sealed: &str, binding: &Binding) -> Result<RoundState, Refused> {
    let action = &binding.action;
    let state: RoundState = sealing.codec.open_json_with(sealed, ASSOCIATED_DATA).map_err(|error| {
        tracing::debug!(action = %action, "requestState refused: {error}");
        Refused::Protocol(ErrorData::invalid_params(
            format!(
                "Invalid params: requestState failed its integrity check ({error}); it is not a state this server sealed, or it was changed after. Nothing was done. Send the requestState exactly as the server returned it, or call {action} again without requestState and inputResponses to start over."
            ),
            None,
        ))
    })?;
    let other = if state.action != binding.action {
        Some(format!("another action ({})", Sent::text(&state.action)))
    } else if state.arguments != binding.arguments {
        Some("other arguments".to_owned())
    } else if state.caller != binding.caller {
        Some("another caller".to_owned())
    } else {
        None
    };
    if let Some(other) = other {
        return Err(Refused::Protocol(ErrorData::invalid_params(
            format!(
                "Invalid params: this requestState was issued for a call of {other}, not this call of {action}. Nothing was done. Send a requestState only with the request it came with (same action, same arguments), or call {action} again without requestState and inputResponses to start over."
            ),
            None,
        )));
    }
    if now_ms() >= state.expires_at_ms {
        let ttl = sealing.ttl;
        return Err(Refused::Envelope(
            ToolError::new(
                ErrorCode::Custom("INPUT_EXPIRED".to_owned()),
                format!(
                    "The answers to {action}'s questions came after they expired (answers are taken for {} after the question); nothing was done.",
                    seconds(ttl)
                ),
            )
            .suggest(format!("Call {action} again with the same arguments: the question is asked again."))
            .actions([action.as_str()]),
        ));
    }
    Ok(state)
}

/// `600 s`, `1.5 s`.
fn seconds(duration: Duration) -> String {
    format!("{} s", duration.as_secs_f64())
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_millis().min(u128::from(u64::MAX)) as u64)
}

/// A question as the request it is on a session's connection (`None`: a kind of question a
/// later rmcp adds, which this server does not know how to send).
fn server_request(request: InputRequest) -> Option<ServerRequest> {
    Some(match request {
        InputRequest::CreateMessage(request) => ServerRequest::CreateMessageRequest(request),
        InputRequest::Elicitation(request) => ServerRequest::ElicitRequest(request),
        InputRequest::ListRoots(request) => ServerRequest::ListRootsRequest(request),
        _ => return None,
    })
}

/// The client's answer as the JSON it would have sent in `inputResponses`.
fn client_answer(result: ClientResult) -> Value {
    serde_json::to_value(result).unwrap_or(Value::Null)
}

/// A question asked after the call's writes were committed: a bug of the handler.
fn asked_after_commit(action: &str, key: &str) -> ToolError {
    ToolError::internal(format!(
        "{action} asked the client for input ({key}) after its writes were committed: the next round would write again, so the question was not sent."
    ))
    .suggest(format!("Nothing to do but report it: {action} must ask before it writes."))
}

/// The JSON-RPC error of a question for a capability the client did not declare
/// (MissingRequiredClientCapability, -32021), naming it in `requiredCapabilities`.
pub(crate) fn missing_capability(action: &str, capability: &str) -> ErrorData {
    let required: ClientCapabilities =
        serde_json::from_value(serde_json::json!({ capability: {} })).unwrap_or_default();
    let mut error = ErrorData::missing_required_client_capability(required);
    error.message = format!(
        "{action} needs the client's {capability} capability, which this request does not declare: declare \"{capability}\" in the client capabilities of its _meta (or at initialize), or call an action that does not need it"
    )
    .into();
    error
}

/// What a response for `key` that is not an answer of the expected kind is refused with.
pub(crate) fn malformed_answer(action: &str, key: &str, expected: &str, sent: &Value) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "Invalid params: inputResponses[{}] is {}, not {expected}. Nothing was done. Send {expected} under that key, or call {action} again without inputResponses to be asked again.",
            echo(key),
            mcp_fusion_wire::value_kind(sent)
        ),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ElicitRequest, ElicitRequestParams, ElicitationSchema};

    fn binding(arguments: &str) -> Binding {
        Binding { action: "billing.void_invoice".into(), arguments: arguments.into(), caller: "local".into() }
    }

    fn question() -> InputRequest {
        let schema = ElicitationSchema::builder().required_bool("confirm").build().unwrap();
        InputRequest::Elicitation(ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: "Sure?".into(),
            requested_schema: schema,
        }))
    }

    /// The state of a first round that asked `confirm`.
    async fn first_round(sealing: &Sealing) -> String {
        let rounds = Rounds::open(None, None, sealing, binding("d1")).unwrap();
        let asked = rounds.ask("billing.void_invoice", "confirm", question(), || true).await;
        assert_eq!(asked.unwrap_err().code, ErrorCode::Custom(INPUT_REQUIRED.to_owned()));
        let input = rounds.interrupted().unwrap().unwrap();
        assert_eq!(input.input_requests.unwrap().keys().collect::<Vec<_>>(), ["confirm"]);
        input.request_state.unwrap()
    }

    fn protocol_message(refused: Result<Rounds, Refused>) -> String {
        match refused {
            Err(Refused::Protocol(error)) => error.message.to_string(),
            other => panic!("expected a JSON-RPC refusal, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn the_answer_of_the_next_round_is_taken_with_the_state() {
        let sealing = Sealing::random();
        let state = first_round(&sealing).await;
        let responses: InputResponses = [("confirm".to_owned(), serde_json::json!({"action": "accept"}))].into();
        let rounds = Rounds::open(Some(responses), Some(&state), &sealing, binding("d1")).unwrap();
        let answer = rounds.ask("billing.void_invoice", "confirm", question(), || panic!("asked again")).await;
        assert_eq!(answer.unwrap(), serde_json::json!({"action": "accept"}));
        assert!(rounds.interrupted().is_none());
    }

    #[tokio::test]
    async fn a_changed_foreign_or_garbage_state_is_refused_and_an_expired_one_answered_with_an_envelope() {
        let sealing = Sealing::random();
        let state = first_round(&sealing).await;
        for at in [0, state.len() / 3, state.len() / 2, state.len() - 1] {
            let mut bytes = state.clone().into_bytes();
            bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
            let changed = String::from_utf8(bytes).unwrap();
            let opened = Rounds::open(None, Some(&changed), &sealing, binding("d1"));
            assert!(protocol_message(opened).contains("failed its integrity check"), "byte {at}");
        }
        let other_key = Sealing::random();
        assert!(protocol_message(Rounds::open(None, Some(&state), &other_key, binding("d1"))).contains("integrity"));
        for garbage in ["", "x", "rs1.", "rs2...", &"A".repeat(10_000), "\u{202e}\u{0}"] {
            assert!(protocol_message(Rounds::open(None, Some(garbage), &sealing, binding("d1"))).contains("integrity"));
        }
        let foreign = protocol_message(Rounds::open(None, Some(&state), &sealing, binding("d2")));
        assert!(foreign.contains("issued for a call of other arguments"), "{foreign}");

        let at_once = Sealing { ttl: Duration::ZERO, ..sealing };
        let state = first_round(&at_once).await;
        match Rounds::open(None, Some(&state), &at_once, binding("d1")) {
            Err(Refused::Envelope(error)) => assert_eq!(error.code, ErrorCode::Custom("INPUT_EXPIRED".to_owned())),
            other => panic!("expected INPUT_EXPIRED, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_question_after_the_commit_is_not_sent() {
        let rounds = Rounds::open(None, None, &Sealing::random(), binding("d1")).unwrap();
        let asked = rounds.ask("billing.void_invoice", "confirm", question(), || false).await.unwrap_err();
        assert_eq!(asked.code, ErrorCode::InternalError);
        assert!(rounds.interrupted().is_none(), "nothing is asked");
    }
}
