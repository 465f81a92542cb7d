//! Idempotency keys: a call repeated with the key of an earlier one gets that call's result
//! instead of running again, so a retry after `TIMEOUT` or a lost answer cannot write twice.
//!
//! An action opts in with [`Action::idempotent_by_key`](crate::Action::idempotent_by_key).
//! The client sends the key as the argument `idempotency_key` (the action's input declares
//! it) or in the request's `_meta` as `fusion/idempotency_key`. A key is bound, for its whole
//! time to live, to the caller that first sent it (its identity, else its session, else its
//! address: see [`CallerKey`](crate::auth::CallerKey)) and to the digest of that call's
//! arguments ([`KeyBinding`]). Per action:
//!
//! - the first call with a key runs, and its result (success or envelope) is kept;
//! - the same caller with the same key and the same arguments gets that result, without
//!   running;
//! - the same key with other arguments, or from another caller, gets a `CONFLICT` envelope —
//!   never another call's result;
//! - while the first call runs, a second one waits for its result (up to
//!   [`Idempotency::wait`]), then answers `SERVER_BUSY` with a `retry_after`.
//!
//! Outcomes worth retrying are not kept: `TIMEOUT`, `SERVER_BUSY`, `RATE_LIMITED`, a
//! cancellation, an `INTERNAL_ERROR`, an upstream that is down, or any envelope with a
//! `retry_after`; nor is a `CONFLICT` (it wrote nothing, and binding the key to its caller
//! would lock the key's owner out). The key is free again then, and the retry runs.
//!
//! A store forgets keys (a restart empties [`MemoryKeys`]); a handler that writes can keep
//! the key with its write, durably, and check a repeat against it with
//! [`IdempotencyKey::check`], reached through [`CallInfo::idempotency`].

mod memory;
#[cfg(feature = "redis")]
pub(crate) mod redis;
mod store;

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use mcp_fusion_wire::{ErrorCode, Sent, ToolError, parse};
use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};

pub use crate::idempotency_key::{
    IDEMPOTENCY_KEY_ARGUMENT, IDEMPOTENCY_KEY_META, IdempotencyKey, KeyBinding, MAX_IDEMPOTENCY_KEY_CHARS,
};
pub use memory::MemoryKeys;
pub use store::{Claim, IdempotencyStore};

use crate::context::CallInfo;
use crate::error::BuildError;
use crate::guard::entry::GuardedEntry;
use crate::middleware::{Call, Middleware, Next, Outcome};
use crate::output::Output;

/// How idempotency keys are kept: the store, how long a result stays, how long a call may
/// hold its key, and how long a repeat waits for a call still running.
///
/// ```
/// use std::time::Duration;
/// use mcp_fusion::guard::{Idempotency, MemoryKeys};
///
/// let keys = Idempotency::new()
///     .store(MemoryKeys::new(10_000))
///     .ttl(Duration::from_secs(3600))
///     .wait(Duration::ZERO); // answer SERVER_BUSY at once while the first call runs
/// # let _ = keys;
/// ```
#[derive(Clone)]
pub struct Idempotency {
    pub(crate) store: Arc<dyn IdempotencyStore>,
    pub(crate) ttl: Duration,
    pub(crate) lease: Duration,
    pub(crate) wait: Duration,
    pub(crate) anonymous_share: bool,
}

impl std::fmt::Debug for Idempotency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Idempotency")
            .field("ttl", &self.ttl)
            .field("lease", &self.lease)
            .field("wait", &self.wait)
            .field("anonymous_share", &self.anonymous_share)
            .finish_non_exhaustive()
    }
}

impl Default for Idempotency {
    fn default() -> Idempotency {
        Idempotency::new()
    }
}

impl Idempotency {
    /// Keys in this process's memory ([`MemoryKeys`], 100,000 at most), results kept 24
    /// hours, a call holding its key at most 10 minutes, repeats waiting up to 30 seconds.
    pub fn new() -> Idempotency {
        Idempotency {
            store: Arc::new(MemoryKeys::default()),
            ttl: Duration::from_secs(24 * 3600),
            lease: Duration::from_secs(600),
            wait: Duration::from_secs(30),
            anonymous_share: false,
        }
    }

    /// Where keys live. Replicas behind one load balancer share one
    /// (`RedisStore` (cargo feature `redis`)), or a retry that lands on another replica
    /// runs again.
    pub fn store(mut self, store: impl IdempotencyStore) -> Idempotency {
        self.store = Arc::new(store);
        self
    }

    /// How long a finished call's result is given back to repeats (default: 24 hours).
    pub fn ttl(mut self, ttl: Duration) -> Idempotency {
        self.ttl = ttl;
        self
    }

    /// How long a running call holds its key (default: 10 minutes). A call that runs longer,
    /// or whose process died, frees it then; keep it above the action's timeout.
    pub fn lease(mut self, lease: Duration) -> Idempotency {
        self.lease = lease;
        self
    }

    /// How long a repeat waits for a call still running under its key before answering
    /// `SERVER_BUSY` (default: 30 seconds; zero answers at once).
    pub fn wait(mut self, wait: Duration) -> Idempotency {
        self.wait = wait;
        self
    }

    /// Whether callers without an identity share one scope (default: no). Off, an anonymous
    /// caller's keys are bound to its session (stateful HTTP), else its address (stateless
    /// HTTP), else the local client (stdio): another anonymous caller sending the same key
    /// gets `CONFLICT`, and a retry from a new session does too. On, every anonymous caller
    /// counts as one, so a retry from anywhere replays — and so does a stranger's request
    /// with the same key and arguments. Turn it on only where every anonymous caller is one
    /// trusted client.
    pub fn anonymous_callers_share_keys(mut self, share: bool) -> Idempotency {
        self.anonymous_share = share;
        self
    }

    /// The scope a call's key is bound to.
    fn scope_of(&self, info: &CallInfo) -> String {
        let caller = info.caller_key();
        let scope =
            if self.anonymous_share && !caller.is_identity() { "anonymous".to_owned() } else { caller.to_string() };
        hex(&Sha256::digest(scope.as_bytes()))
    }
}

/// The guard of an action declared idempotent by key.
pub(crate) struct IdempotencyGuard {
    action: Arc<str>,
    keys: Idempotency,
    /// The read-only action that shows whether a write took effect, named to a caller that
    /// may have sent it before.
    check_with: Option<Arc<str>>,
    /// Whether its refusals leave out the key sent.
    value_free: bool,
}

impl IdempotencyGuard {
    pub(crate) fn new(
        action: Arc<str>,
        keys: Idempotency,
        check_with: Option<String>,
        value_free: bool,
    ) -> IdempotencyGuard {
        IdempotencyGuard { action, keys, check_with: check_with.map(Arc::from), value_free }
    }

    /// The key the call sent, bound to its caller and arguments; none when it sent no key.
    fn bind(&self, call: &Call) -> Result<Option<IdempotencyKey>, ToolError> {
        let Some(key) = sent_key(call, self.value_free)? else { return Ok(None) };
        let binding = KeyBinding { scope: self.keys.scope_of(&call.info), arguments: fingerprint(call.arguments()) };
        let action = Arc::clone(&self.action);
        let key = IdempotencyKey::new(Arc::from(key), binding, action, self.check_with.clone());
        Ok(Some(key.value_free(self.value_free)))
    }
}

impl Middleware for IdempotencyGuard {
    fn call(&self, call: Call, next: Next) -> BoxFuture<'static, Outcome> {
        let bound = self.bind(&call);
        let keys = self.keys.clone();
        Box::pin(async move {
            let Some(sent) = bound? else { return next.run(call).await };
            let action = Arc::clone(&sent.action);
            let info = Arc::clone(&call.info);
            let stored_key = store_key(&action, &sent.key);
            let started = tokio::time::Instant::now();
            let mut pause = Duration::from_millis(10);
            loop {
                let claim = keys.store.claim(&stored_key, &sent.binding, keys.lease).await.map_err(|error| {
                    tracing::warn!(action = %action, "idempotency store: {error}");
                    unavailable(&action)
                })?;
                let held = match claim {
                    Claim::Claimed(token) => {
                        let _ = info.idempotency.set(sent);
                        let mut held = Held { keys: keys.clone(), key: stored_key, token, open: true };
                        let run = next.run(call);
                        let Some(started) = info.task_started.clone() else {
                            let outcome = run.await;
                            held.finish(&outcome, &info).await;
                            return outcome;
                        };
                        // A call that becomes a task keeps the task under its key as soon as
                        // the task is kept: the same key then answers with the same task.
                        tokio::pin!(run);
                        let task = tokio::select! {
                            outcome = &mut run => {
                                held.finish(&outcome, &info).await;
                                return outcome;
                            }
                            task = task_kept(started) => task,
                        };
                        if let Some(task) = task {
                            held.keep_task(&task, &info).await;
                        }
                        let outcome = run.await;
                        if held.open {
                            held.finish(&outcome, &info).await;
                        }
                        return outcome;
                    }
                    Claim::Done { binding, record } => {
                        sent.check(&binding)?;
                        return replay(&record, &info).ok_or_else(|| {
                            tracing::warn!(action = %action, "idempotency store: a record that does not decode");
                            unavailable(&action)
                        })?;
                    }
                    Claim::Running { binding } => binding,
                };
                sent.check(&held)?;
                let waited = started.elapsed();
                if waited >= keys.wait {
                    return Err(busy(&action, keys.lease));
                }
                tokio::time::sleep(pause.min(keys.wait - waited)).await;
                pause = (pause * 2).min(Duration::from_millis(250));
            }
        })
    }

    fn name(&self) -> String {
        "idempotency key".to_owned()
    }
}

/// A claimed key: completed with the call's result, or released — also when the call is
/// dropped before it ends (the client cancelled, a panic unwound), from a spawned task.
struct Held {
    keys: Idempotency,
    key: String,
    token: String,
    open: bool,
}

impl Held {
    /// Completes the key with the task its call became.
    async fn keep_task(&mut self, task: &str, info: &CallInfo) {
        self.open = false;
        let record = json!({ "task": task }).to_string();
        if let Err(error) = self.keys.store.complete(&self.key, &self.token, record, self.keys.ttl).await {
            tracing::warn!(action = %info.action(), "idempotency store: {error}");
        }
    }

    async fn finish(&mut self, outcome: &Outcome, info: &CallInfo) {
        self.open = false;
        let kept = match record(outcome, info) {
            Some(record) => self.keys.store.complete(&self.key, &self.token, record, self.keys.ttl).await,
            None => self.keys.store.release(&self.key, &self.token).await,
        };
        if let Err(error) = kept {
            // The claim lapses with its lease: the key is free again then.
            tracing::warn!(action = %info.action(), "idempotency store: {error}");
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if !self.open {
            return;
        }
        let release = self.keys.store.release(&self.key, &self.token);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(error) = release.await {
                    tracing::warn!("idempotency store: {error}");
                }
            });
        }
    }
}

/// The key the call carries, from its arguments or its `_meta`: none, or a refusal when it
/// is not a string of 1 to 255 characters.
fn sent_key(call: &Call, value_free: bool) -> Result<Option<String>, ToolError> {
    let sent = call.arguments().get(IDEMPOTENCY_KEY_ARGUMENT).or(call.info.meta_idempotency_key.as_ref());
    let Some(sent) = sent.filter(|sent| !sent.is_null()) else { return Ok(None) };
    match sent.as_str() {
        Some(key) if (1..=MAX_IDEMPOTENCY_KEY_CHARS).contains(&key.chars().count()) => Ok(Some(key.to_owned())),
        _ => Err(ToolError::validation(format!(
            "The idempotency_key must be a string of 1 to {MAX_IDEMPOTENCY_KEY_CHARS} characters; got {}.",
            if value_free { Sent::kind(sent) } else { Sent::value(sent) }
        ))
        .suggest("Send a unique string per operation, like a UUID, and the same one when you retry it.")
        .detail("field", IDEMPOTENCY_KEY_ARGUMENT)),
    }
}

/// Where the key is stored: per action, whoever sends it (its binding tells callers apart),
/// hashed so any key makes a short, safe store key.
fn store_key(action: &str, key: &str) -> String {
    format!("{action}:{}", hex(&Sha256::digest(key.as_bytes())))
}

/// The arguments without the key, as canonical JSON (object keys sorted), hashed.
pub(crate) fn fingerprint(arguments: &Value) -> String {
    let mut arguments = arguments.clone();
    if let Value::Object(object) = &mut arguments {
        object.shift_remove(IDEMPOTENCY_KEY_ARGUMENT);
    }
    let canonical = canonical(arguments).to_string();
    hex(&Sha256::digest(canonical.as_bytes()))
}

fn canonical(value: Value) -> Value {
    match value {
        Value::Object(object) => {
            let mut entries: Vec<_> = object.into_iter().collect();
            entries.sort_by(|(a, _), (b, _)| a.cmp(b));
            Value::Object(entries.into_iter().map(|(key, value)| (key, canonical(value))).collect::<Map<_, _>>())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(canonical).collect()),
        other => other,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Whether a failure says "try again": then the key is freed, not bound to it.
fn worth_retrying(error: &ToolError) -> bool {
    error.retry_after.is_some()
        || error.code == ErrorCode::cancelled()
        || matches!(
            error.code,
            ErrorCode::Timeout
                | ErrorCode::ServerBusy
                | ErrorCode::RateLimited
                | ErrorCode::InternalError
                | ErrorCode::HandoffUpstreamUnavailable
                | ErrorCode::HandoffConnecting
        )
}

/// The outcome and the warnings it carries, as the store keeps them (envelopes in their
/// rendered text, which the wire's parser reads back whole); none for an outcome worth
/// retrying.
fn record(outcome: &Outcome, info: &CallInfo) -> Option<String> {
    // A round that asked the client something is answered with the question, whatever the
    // handler made of it: the key waits for the round with the answers.
    if info.rounds.interrupting() {
        return None;
    }
    let warnings: Vec<String> = info.warnings_snapshot().iter().map(ToolError::render).collect();
    let kept = match outcome {
        Ok(output) => json!({ "ok": output.to_record().ok()?, "warnings": warnings }),
        Err(error) if worth_retrying(error) || error.code == ErrorCode::Conflict => return None,
        Err(error) => json!({ "error": error.render(), "warnings": warnings }),
    };
    Some(kept.to_string())
}

/// The outcome a record keeps, its warnings about the outcome added to this call's.
fn replay(record: &str, info: &CallInfo) -> Option<Outcome> {
    let mut record: Value = serde_json::from_str(record).ok()?;
    if let Some(task) = record.get("task") {
        let task = task.as_str()?.to_owned();
        // A call that may become a task answers with that task; any other is told of it.
        let told = task_of_key(info.action(), &task);
        if let Some(launch) = info.take_launch() {
            launch.existing(task);
        }
        return Some(Err(told));
    }
    for warning in record.get("warnings")?.as_array()? {
        let warning = parse(warning.as_str()?).error;
        // How the first call's arguments were read says nothing of this call's: this call
        // carries its own conversion warning, or none when it sent the values as they are.
        if warning.code != ErrorCode::arguments_converted() {
            info.warn(warning);
        }
    }
    if let Some(error) = record.get("error") {
        return Some(Err(parse(error.as_str()?).error));
    }
    Some(Ok(Output::from_record(record.get_mut("ok")?.take()).ok()?))
}

/// The id of the task a call became, once it is kept; none if the call ends without one.
async fn task_kept(mut started: tokio::sync::watch::Receiver<Option<String>>) -> Option<String> {
    loop {
        let kept = started.borrow_and_update().clone();
        if kept.is_some() {
            return kept;
        }
        started.changed().await.ok()?;
    }
}

/// What a call told to use a key that started a task gets, when it cannot be answered with the
/// task (its client did not declare the tasks extension).
fn task_of_key(action: &str, task: &str) -> ToolError {
    ToolError::conflict(format!(
        "{action} already ran with this idempotency_key: that call became the task {}, which holds its result.",
        mcp_fusion_wire::Sent::text(task)
    ))
    .suggest("Read that task with tasks/get (your client must declare the tasks extension), or call with a new idempotency_key to run it again.")
}

fn busy(action: &str, lease: Duration) -> ToolError {
    ToolError::server_busy(format!("{action} is still running a call with this idempotency_key."))
        .suggest("Wait, then call again with the same arguments and idempotency_key: you get that call's result.")
        .retry_after(lease.as_secs().clamp(1, 2))
}

fn unavailable(action: &str) -> ToolError {
    ToolError::server_busy(format!("{action} could not check its idempotency_key: the key store did not answer."))
        .suggest("Nothing ran. Call again with the same arguments and idempotency_key in a few seconds.")
        .retry_after(2)
}

/// The idempotency stage of `entry`, when it is idempotent by key.
pub(in crate::guard) fn compile(entry: &GuardedEntry<'_>, layers: &mut Vec<Arc<dyn Middleware>>) -> Result<(), BuildError> {
    if entry.asks.by_key {
        let guard =
            IdempotencyGuard::new(
                Arc::clone(entry.qualified),
                entry.server.idempotency.clone(),
                entry.check_with(),
                entry.server.value_free_errors,
            );
        layers.push(Arc::new(guard));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_ignores_key_order_and_the_key_itself() {
        let a = json!({"amount_cents": 10, "id": "inv_1", "idempotency_key": "k1", "nested": {"b": 1, "a": [2, {"d": 1, "c": 0}]}});
        let b = json!({"nested": {"a": [2, {"c": 0, "d": 1}], "b": 1}, "id": "inv_1", "amount_cents": 10, "idempotency_key": "k2"});
        assert_eq!(fingerprint(&a), fingerprint(&b));
        let c = json!({"amount_cents": 11, "id": "inv_1"});
        assert_ne!(fingerprint(&a), fingerprint(&c));
    }

    #[test]
    fn an_envelope_survives_its_record() {
        let error = ToolError::conflict("Invoice \"inv_1\" is paid and cannot be paid.")
            .suggest("Do not retry.")
            .actions(["billing.get_invoice", "billing.list_invoices"])
            .detail("id", "inv_1")
            .detail("status", "paid")
            .critical();
        assert_eq!(parse(&error.render()).error, error);
    }

    #[test]
    fn only_final_outcomes_are_kept() {
        for code in [ErrorCode::Timeout, ErrorCode::ServerBusy, ErrorCode::RateLimited, ErrorCode::InternalError] {
            assert!(worth_retrying(&ToolError::new(code, "x")));
        }
        assert!(worth_retrying(&ToolError::new(ErrorCode::cancelled(), "x")));
        assert!(worth_retrying(&ToolError::conflict("x").retry_after(3)));
        assert!(!worth_retrying(&ToolError::conflict("x")));
        assert!(!worth_retrying(&ToolError::not_found("x")));
        assert!(!worth_retrying(&ToolError::validation("x")));
    }
}
