//! The requests that run no action of their own — subscriptions, completions, the skills
//! methods, the task methods — through the server's guards, as a read of no resource goes:
//! its identity requirement, rate limits, concurrency and middleware. Each is one call of a
//! chain compiled once per method, logged under its method with the outcome of its own work,
//! which runs inside the chain as its handler.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use rmcp::ErrorData;
use serde_json::{Map, Value};

use super::FusionServer;
use super::call::Refusal;
use super::compile::{ReadOnly, Settings, compile_read_only};
use super::resources::failed;
use crate::compiled::CompiledAction;
use crate::context::{Ctx, EntryKind, RequestInfo};
use crate::error::BuildError;
use crate::resource::Resource;
use crate::validation::{close_unknown_keys, input_generator, into_object};

/// Which request a gate admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gate {
    /// `resources/subscribe`.
    Subscribe,
    /// `subscriptions/listen`.
    Listen,
    /// `completion/complete`.
    Complete,
    /// `skills/list`.
    ListSkills,
    /// `skills/get`.
    GetSkill,
    /// `resources/directory/read`.
    ReadDirectory,
    /// `tasks/get`.
    GetTask,
    /// `tasks/update`.
    UpdateTask,
    /// `tasks/cancel`.
    CancelTask,
    /// `tasks/result` (MCP 2025-11-25's experimental tasks).
    TaskResult,
    /// `tasks/list` (MCP 2025-11-25's experimental tasks).
    ListTasks,
}

impl Gate {
    const ALL: [Gate; 11] = [
        Gate::Subscribe,
        Gate::Listen,
        Gate::Complete,
        Gate::ListSkills,
        Gate::GetSkill,
        Gate::ReadDirectory,
        Gate::GetTask,
        Gate::UpdateTask,
        Gate::CancelTask,
        Gate::TaskResult,
        Gate::ListTasks,
    ];

    /// The method, which the request is logged and counted under, as a read is under its URI.
    pub(crate) fn method(self) -> &'static str {
        match self {
            Gate::Subscribe => "resources/subscribe",
            Gate::Listen => "subscriptions/listen",
            Gate::Complete => "completion/complete",
            Gate::ListSkills => "skills/list",
            Gate::GetSkill => "skills/get",
            Gate::ReadDirectory => "resources/directory/read",
            Gate::GetTask => "tasks/get",
            Gate::UpdateTask => "tasks/update",
            Gate::CancelTask => "tasks/cancel",
            Gate::TaskResult => "tasks/result",
            Gate::ListTasks => "tasks/list",
        }
    }
}

/// Each gate's chain, in the order of [`Gate::ALL`].
pub(crate) struct Gates(Vec<CompiledAction>);

impl Gates {
    /// Compiles every gate with the server's guards and middleware.
    pub(crate) fn compile(settings: &Settings) -> Result<Gates, BuildError> {
        Gate::ALL.iter().map(|gate| compile_gate(settings, *gate)).collect::<Result<_, _>>().map(Gates)
    }

    fn of(&self, gate: Gate) -> &CompiledAction {
        let index = Gate::ALL.iter().position(|each| *each == gate).unwrap_or_default();
        &self.0[index]
    }
}

/// What a request does once admitted; it keeps its own answer.
type Run = BoxFuture<'static, Result<(), ErrorData>>;

/// The work a request runs inside its gate, handed to the gate's handler with the request
/// (taken once: request extensions are cloned, a future is not).
#[derive(Clone)]
struct Work(Arc<Mutex<Option<Run>>>);

/// Compiles the gate of `gate`: the server's guards around a handler that runs the request's
/// work.
fn compile_gate(settings: &Settings, gate: Gate) -> Result<CompiledAction, BuildError> {
    let name = gate.method();
    let pass = Resource::<()>::new(name, name).handler(|ctx: Ctx<()>| async move {
        let work = ctx
            .call()
            .extensions()
            .get::<Work>()
            .and_then(|Work(work)| work.lock().unwrap_or_else(PoisonError::into_inner).take());
        match work {
            Some(work) => work.await.map(|()| ""),
            None => Ok(""),
        }
    });
    let handler = pass.handler.ok_or_else(|| BuildError::ResourceUri {
        uri: name.to_owned(),
        reason: "the gate has no handler".to_owned(),
    })?;
    let params = close_unknown_keys(into_object(handler.input_schema(&mut input_generator())));
    let asks = ReadOnly { require_identity: false, scopes: &[], rate_limits: &[], timeout: None };
    let mut compiled = compile_read_only(settings, name, handler.as_ref(), &params, &asks, &Arc::new(()))?;
    compiled.kind = match gate {
        Gate::Subscribe | Gate::Listen => EntryKind::Subscription,
        _ => EntryKind::Request,
    };
    Ok(compiled)
}

impl FusionServer {
    /// Runs the server's guards for `gate`, sent with `request`; `subject` says what it asked
    /// for, in a refusal's `data`.
    pub(super) async fn pass_gate(
        &self,
        gate: Gate,
        subject: (&str, &str),
        request: RequestInfo,
    ) -> Result<(), ErrorData> {
        self.gated(gate, subject, request, async { Ok(()) }).await
    }

    /// Answers the request of `gate` with `work`, run inside the gate once the server's guards
    /// admitted it: refused by a guard, it answers the guard's refusal, naming the method; else
    /// what `work` answered, which its log line tells.
    pub(super) async fn through_gate<T: Send + 'static>(
        &self,
        gate: Gate,
        request: RequestInfo,
        work: impl Future<Output = Result<T, ErrorData>> + Send + 'static,
    ) -> Result<T, ErrorData> {
        self.gated(gate, ("request", gate.method()), request, work).await
    }

    /// [`through_gate`](Self::through_gate), a guard's refusal naming `subject`.
    async fn gated<T: Send + 'static>(
        &self,
        gate: Gate,
        subject: (&str, &str),
        mut request: RequestInfo,
        work: impl Future<Output = Result<T, ErrorData>> + Send + 'static,
    ) -> Result<T, ErrorData> {
        let _counted = self.inner.in_flight.enter();
        let answer: Arc<Mutex<Option<T>>> = Arc::new(Mutex::new(None));
        let slot = Arc::clone(&answer);
        let work: Run = Box::pin(async move {
            let answered = work.await?;
            *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(answered);
            Ok(())
        });
        request.extensions.insert(Work(Arc::new(Mutex::new(Some(work)))));
        let action = self.inner.gates.of(gate);
        let (outcome, _warnings) = action.outcome(Value::Object(Map::new()), request, &self.inner.settings).await;
        let method = gate.method();
        match outcome {
            Ok(_) => answer.lock().unwrap_or_else(PoisonError::into_inner).take().ok_or_else(|| {
                // A middleware answered in the handler's place: the request has no answer of its own.
                ErrorData::internal_error(format!("a middleware answered {method} without running it"), None)
            }),
            Err(Refusal::Failed(error)) => Err(failed((subject.0, Some(subject.1)), &error)),
            Err(Refusal::Protocol(error)) => Err(error),
            // A gate has no handler of its own to ask anything.
            Err(Refusal::InputRequired(_)) => {
                Err(ErrorData::internal_error(format!("the guards of {method} asked the client for input"), None))
            }
            // The gate's checker sees only the empty object it is given here.
            Err(Refusal::Invalid(_)) => {
                Err(ErrorData::internal_error(format!("the guards of {method} refused their own input"), None))
            }
        }
    }
}
