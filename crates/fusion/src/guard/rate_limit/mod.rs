//! Rate limits: how many calls a key may make in a window, checked against a shared store.
//!
//! The algorithm is GCRA (the generic cell rate algorithm): a limit of `N` calls per `W`
//! admits a burst of `N`, then one call every `W / N`. A rejected call is not counted, and
//! the rejection says exactly when the next call would be admitted. The in-memory store runs
//! it under a lock; the Redis store runs the same algorithm in one atomic server-side script,
//! so every replica sharing the Redis counts against one limit.
//!
//! Each limit counts under a key made of its scope (the qualified action, the group, or `*`
//! for the server), its name ([`RateLimit::named`], or `{calls}/{window}` by default) and what
//! it counts by (the session, the identity, everyone): `billing.pay_invoice:10/60s:session:…`.
//! Declaration order plays no part, so reordering limits in code never moves a counter.
//!
//! A call keeps what it was counted only if every limit and every concurrency guard of its
//! chain admit it: one refused by a later limit, shed with `SERVER_BUSY`, or cancelled while
//! waiting for a slot gives back what the earlier limits counted (see the `admission` module).
//!
//! A refused call's `RATE_LIMITED` names the limit's scope and what it counts by (`… for this
//! session across every action of billing.`), and says whether calling another action would
//! get through: the model cannot see the limits, only the envelope.

pub(crate) mod admission;
mod memory;
#[cfg(feature = "redis")]
pub(crate) mod redis;
mod store;

use std::collections::HashSet;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use mcp_fusion_wire::ToolError;

use admission::Taken;
pub use memory::MemoryStore;
use store::whole_seconds;
pub use store::{Decision, RateLimitStore, StoreError};

use crate::auth::CallerKey;
use crate::context::CallInfo;
use crate::error::BuildError;
use crate::guard::entry::GuardedEntry;
use crate::middleware::{Call, Middleware, Next, Outcome};

/// A limit: `calls` per `window`, counted per key.
#[derive(Clone)]
pub struct RateLimit {
    calls: NonZeroU32,
    window: Duration,
    key: RateLimitKey,
    name: Option<String>,
}

impl std::fmt::Debug for RateLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimit")
            .field("name", &self.name())
            .field("calls", &self.calls)
            .field("window", &self.window)
            .field("per", &self.key.kind())
            .finish()
    }
}

impl RateLimit {
    /// `calls` per `window` for each caller (the default key, see [`RateLimit::per_caller`]).
    /// A zero `calls` is read as one.
    pub fn new(calls: u32, window: Duration) -> RateLimit {
        RateLimit {
            calls: NonZeroU32::new(calls).unwrap_or(NonZeroU32::MIN),
            window: window.max(Duration::from_millis(1)),
            key: RateLimitKey::Caller,
            name: None,
        }
    }

    /// Names the limit; the name is part of its counter's key (default `{calls}/{window}`,
    /// like `10/60s`). Two limits of one scope that count by the same key need different
    /// names. Use 1 to 64 characters from `A-Z a-z 0-9 _ - . /`.
    pub fn named(mut self, name: impl Into<String>) -> RateLimit {
        self.name = Some(name.into());
        self
    }

    /// Counts per caller (the default): the authenticated identity, whatever session it uses;
    /// else the session; else (stateless HTTP without a token) the client's address. stdio is
    /// one caller.
    pub fn per_caller(mut self) -> RateLimit {
        self.key = RateLimitKey::Caller;
        self
    }

    /// Counts per session (stdio is one session; a request outside a session counts as its
    /// caller): a caller opening new sessions gets a new budget with each, so prefer
    /// [`RateLimit::per_caller`] where callers are not trusted.
    pub fn per_session(mut self) -> RateLimit {
        self.key = RateLimitKey::Session;
        self
    }

    /// Counts per authenticated identity (anonymous callers share one count).
    pub fn per_identity(mut self) -> RateLimit {
        self.key = RateLimitKey::Identity;
        self
    }

    /// One count for everyone.
    pub fn global(mut self) -> RateLimit {
        self.key = RateLimitKey::Global;
        self
    }

    /// Counts per the key `key` computes from the call.
    pub fn keyed_by(mut self, key: impl Fn(&CallInfo) -> String + Send + Sync + 'static) -> RateLimit {
        self.key = RateLimitKey::Custom(Arc::new(key));
        self
    }

    /// The limit's name: the one given, or `{calls}/{window}` (`10/60s`).
    pub fn name(&self) -> String {
        match &self.name {
            Some(name) => name.clone(),
            None => format!("{}/{}", self.calls, describe_window(self.window)),
        }
    }

    /// What the limit counts by: `caller`, `session`, `identity`, `global` or `custom`.
    pub fn counts_per(&self) -> &'static str {
        self.key.kind()
    }

    /// The limit as text: `10 calls per 60s`.
    pub fn describe(&self) -> String {
        let unit = if self.calls.get() == 1 { "call" } else { "calls" };
        format!("{} {unit} per {}", self.calls, describe_window(self.window))
    }

    /// The time between two calls once the burst is spent.
    pub fn emission_interval(&self) -> Duration {
        self.window / self.calls.get()
    }

    /// The counted key of a call. Every part comes from the verified identity, a session the
    /// transport issued, the client's address or the limit's own name: none is a value the
    /// client merely sends.
    fn key_of(&self, call: &CallInfo) -> String {
        match &self.key {
            RateLimitKey::Caller => call.caller_key().to_string(),
            RateLimitKey::Session => match call.session_id {
                Some(ref session) => CallerKey::Session(Arc::clone(session)).to_string(),
                // No session (stateless HTTP): the caller, so callers do not share one count.
                None => call.caller_key().to_string(),
            },
            RateLimitKey::Identity => match call.identity() {
                Some(identity) => CallerKey::identity(identity).to_string(),
                None => "identity:anonymous".to_owned(),
            },
            RateLimitKey::Global => "global".to_owned(),
            RateLimitKey::Custom(key) => format!("custom:{}", bounded(key(call))),
        }
    }
}

/// A custom key as it is when short, else its digest: a key function that puts a long
/// argument into its key must not make every counter that long.
fn bounded(key: String) -> String {
    use sha2::Digest as _;
    if key.len() <= 128 {
        return key;
    }
    sha2::Sha256::digest(key.as_bytes()).iter().map(|byte| format!("{byte:02x}")).collect()
}

fn describe_window(window: Duration) -> String {
    if window.subsec_nanos() == 0 { format!("{}s", window.as_secs()) } else { format!("{}ms", window.as_millis()) }
}

/// What a limit counts by.
#[derive(Clone)]
enum RateLimitKey {
    Caller,
    Session,
    Identity,
    Global,
    Custom(Arc<dyn Fn(&CallInfo) -> String + Send + Sync>),
}

impl RateLimitKey {
    fn kind(&self) -> &'static str {
        match self {
            RateLimitKey::Caller => "caller",
            RateLimitKey::Session => "session",
            RateLimitKey::Identity => "identity",
            RateLimitKey::Global => "global",
            RateLimitKey::Custom(_) => "custom",
        }
    }

    /// Whose calls the limit counts together, as the envelopes say it.
    fn counted(&self) -> &'static str {
        match self {
            RateLimitKey::Caller | RateLimitKey::Identity => "for this caller",
            RateLimitKey::Session => "for this session",
            RateLimitKey::Global => "for all callers together",
            RateLimitKey::Custom(_) => "for this call's key",
        }
    }
}

/// Which calls a limit counts: so a refusal can say whether another action would get through.
enum Scope {
    /// The calls of one action (its qualified name).
    Action(Arc<str>),
    /// The calls of every action of one group (its name).
    Group(String),
    /// Every call the server takes.
    Server,
}

impl Scope {
    /// The scope of a limit counted under `scope` for calls of `action`.
    fn of(action: &Arc<str>, scope: &str) -> Scope {
        // Unambiguous: a group's name holds neither `.` nor `*`, and a qualified action a `.`.
        match scope {
            "*" => Scope::Server,
            _ if scope == &**action => Scope::Action(Arc::clone(action)),
            group => Scope::Group(group.to_owned()),
        }
    }

    /// The `scope` detail.
    fn kind(&self) -> &'static str {
        match self {
            Scope::Action(_) => "action",
            Scope::Group(_) => "group",
            Scope::Server => "server",
        }
    }

    /// Which calls count, after the limit in the message.
    fn counts(&self) -> String {
        match self {
            Scope::Action(action) => format!("on {action}"),
            Scope::Group(group) => format!("across every action of {group}"),
            Scope::Server => "across every tool of this server".to_owned(),
        }
    }

    /// What to call again, after the wait.
    fn again(&self) -> String {
        match self {
            Scope::Action(action) => format!("calling {action} again"),
            Scope::Group(group) => format!("calling any action of {group} again"),
            Scope::Server => "calling any tool of this server again".to_owned(),
        }
    }

    /// Whether calling something else would get through this limit.
    fn elsewhere(&self) -> String {
        match self {
            Scope::Action(_) => "Other actions are not limited by it.".to_owned(),
            Scope::Group(group) => {
                format!(
                    "Calling another action of {group} will not help; actions outside {group} are not limited by it."
                )
            }
            Scope::Server => "Calling another action or tool will not help.".to_owned(),
        }
    }
}

/// What to do with a call when the store cannot decide (Redis down, or too slow).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FailurePolicy {
    /// Admit the call (availability first). The default.
    #[default]
    Open,
    /// Reject the call (the limit first).
    Closed,
}

/// The store every limit of a server checks, and what to do when it cannot answer in time.
#[derive(Clone)]
pub(crate) struct StoreSettings {
    pub store: Arc<dyn RateLimitStore>,
    pub failure_policy: FailurePolicy,
    pub timeout: Duration,
}

/// The rate-limit stage of the chain for one limit of one action.
pub(crate) struct RateLimitGuard(Arc<Check>);

struct Check {
    /// The action the call is for, named in the logs.
    action: Arc<str>,
    /// Which calls the limit counts, named in the envelopes.
    scope: Scope,
    /// `{scope}:{name}`: the counter's key before the counted key.
    prefix: String,
    limit: RateLimit,
    store: StoreSettings,
    /// Whether this is the call's last gate (no other limit nor concurrency guard follows
    /// it): passing it commits what the call was counted.
    last_gate: bool,
}

impl RateLimitGuard {
    /// `limit`, counted in `scope` (the qualified action, the group, or `*` for the server),
    /// for calls of `action`; `last_gate` when no other limit or concurrency guard follows it.
    pub(crate) fn new(
        action: Arc<str>,
        scope: &str,
        limit: RateLimit,
        store: StoreSettings,
        last_gate: bool,
    ) -> RateLimitGuard {
        let prefix = format!("{scope}:{}", limit.name());
        let scope = Scope::of(&action, scope);
        RateLimitGuard(Arc::new(Check { action, scope, prefix, limit, store, last_gate }))
    }
}

impl Middleware for RateLimitGuard {
    fn call(&self, call: Call, next: Next) -> BoxFuture<'static, Outcome> {
        let check = Arc::clone(&self.0);
        Box::pin(async move {
            let taken = check.admit(&call.info).await?;
            if check.last_gate {
                admission::commit(&call.info);
                return next.run(call).await;
            }
            let Some(owner) = admission::hold(&call.info, taken) else { return next.run(call).await };
            let outcome = next.run(call).await;
            owner.finish().await;
            outcome
        })
    }

    fn name(&self) -> String {
        format!("rate limit ({}, {} per {})", self.0.prefix, self.0.limit.describe(), self.0.limit.counts_per())
    }
}

impl Check {
    /// Checks the call: what it counted (nothing when the store could not decide and the call
    /// was let through), or its refusal.
    async fn admit(&self, call: &CallInfo) -> Result<Option<Taken>, ToolError> {
        let key = format!("{}:{}", self.prefix, self.limit.key_of(call));
        let (calls, window) = (self.limit.calls, self.limit.window);
        let checked = tokio::time::timeout(self.store.timeout, self.store.store.check(&key, calls, window)).await;
        let failure = match checked {
            Ok(Ok(Decision::Allowed)) => {
                return Ok(Some(Taken {
                    action: Arc::clone(&self.action),
                    store: Arc::clone(&self.store.store),
                    timeout: self.store.timeout,
                    key,
                    calls,
                    window,
                }));
            }
            Ok(Ok(Decision::Limited { retry_after })) => return Err(self.limited(whole_seconds(retry_after))),
            Ok(Err(error)) => error.to_string(),
            Err(_) => format!("rate-limit store did not answer within {} ms", self.store.timeout.as_millis()),
        };
        match self.store.failure_policy {
            FailurePolicy::Open => {
                tracing::warn!(action = %self.action, "admitting the call unchecked (fail-open): {failure}");
                Ok(None)
            }
            FailurePolicy::Closed => {
                tracing::warn!(action = %self.action, "refusing the call (fail-closed): {failure}");
                Err(self.unchecked())
            }
        }
    }

    /// The refusal of a call over the limit: which calls the limit counts, when to call again,
    /// and whether calling something else would get through.
    fn limited(&self, seconds: u64) -> ToolError {
        let message = format!("Rate limit reached: {}.", self.counting());
        let recovery = format!(
            "Wait {seconds} seconds before {}; do not retry sooner. {}",
            self.scope.again(),
            self.scope.elsewhere()
        );
        self.details(ToolError::rate_limited(message, seconds).suggest(recovery))
    }

    /// The refusal of a call whose limit the store cannot check (fail-closed).
    fn unchecked(&self) -> ToolError {
        let message =
            format!("The rate limit of {} cannot be checked right now, so the call was refused.", self.counting());
        let recovery = format!(
            "Wait 5 seconds before {}; the limit store is recovering. {}",
            self.scope.again(),
            self.scope.elsewhere()
        );
        self.details(ToolError::rate_limited(message, 5).suggest(recovery))
    }

    /// The limit and the calls it counts: `10 calls per 60s for this session on billing.pay_invoice`.
    fn counting(&self) -> String {
        format!("{} {} {}", self.limit.describe(), self.limit.key.counted(), self.scope.counts())
    }

    /// The limit, and which calls it counts, for clients that read details.
    fn details(&self, error: ToolError) -> ToolError {
        error
            .detail("limit", self.limit.calls)
            .detail("window_seconds", self.limit.window.as_secs_f64())
            .detail("scope", self.scope.kind())
            .detail("counted_per", self.limit.counts_per())
    }
}

/// The rate-limit stage of `entry`: its own limits, its group's, the server's. The last gate
/// (limit or concurrency slot) a call passes commits what its limits counted; a call that
/// stops before it gives that back. Each limit counts under its scope and its name, never its
/// position among the others.
pub(in crate::guard) fn compile(entry: &GuardedEntry<'_>, layers: &mut Vec<Arc<dyn Middleware>>) -> Result<(), BuildError> {
    let qualified = entry.qualified;
    let group = entry.group.name;
    let scopes = [
        (&**qualified, entry.asks.rate_limits, qualified.to_string()),
        (group, entry.group.rate_limits, format!("group {group:?}")),
        ("*", &entry.server.rate_limits[..], "the server".to_owned()),
    ];
    let mut gates = scopes.iter().map(|(_, limits, _)| limits.len()).sum::<usize>() + entry.slots().count();
    for (scope, limits, described) in scopes {
        let mut counters = HashSet::new();
        for limit in limits {
            gates -= 1;
            let name = limit.name();
            check_name(&name)?;
            if !counters.insert((name.clone(), limit.counts_per())) {
                return Err(BuildError::DuplicateRateLimit { scope: described, name });
            }
            let guard = RateLimitGuard::new(
                Arc::clone(qualified),
                scope,
                limit.clone(),
                entry.server.store.clone(),
                gates == 0,
            );
            layers.push(Arc::new(guard));
        }
    }
    Ok(())
}

/// A rate limit's name is part of its counter's key, between `:`s: it holds none.
fn check_name(name: &str) -> Result<(), BuildError> {
    let valid = (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'));
    if valid {
        Ok(())
    } else {
        Err(BuildError::InvalidName { what: "rate limit", name: name.to_owned(), allowed: "A-Z a-z 0-9 _ - . /" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_and_names_itself() {
        let limit = RateLimit::new(10, Duration::from_secs(60));
        assert_eq!(
            (limit.describe(), limit.name(), limit.counts_per()),
            ("10 calls per 60s".into(), "10/60s".into(), "caller")
        );
        let odd = RateLimit::new(0, Duration::from_millis(1500)).global().named("burst");
        assert_eq!(
            (odd.describe(), odd.name(), odd.counts_per()),
            ("1 call per 1500ms".into(), "burst".into(), "global")
        );
    }
}
