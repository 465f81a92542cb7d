//! Guards: what stands between a validated call and its handler, each a [`Middleware`] of
//! the one chain every call goes through, each failing into its own envelope.
//!
//! | stage | guard | configure | envelope |
//! |---|---|---|---|
//! | [`Stage::Auth`] | identity and scopes | `requires_identity`, `Action::scope` | `AUTH_REQUIRED`, `UNAUTHORIZED`, `FORBIDDEN` |
//! | [`Stage::Idempotency`] | [`Idempotency`] keys | `Action::idempotent_by_key`, `.idempotency(..)` | the first call's result, `CONFLICT`, `SERVER_BUSY` |
//! | [`Stage::RateLimit`] | [`RateLimit`] per action, group, server | `.rate_limit(..)`, `.rate_limit_store(..)` | `RATE_LIMITED` with `retry_after` |
//! | [`Stage::Concurrency`] | [`Concurrency`] per group, server | `.concurrency(..)` | `SERVER_BUSY` |
//! | [`Stage::Deprecation`] | deprecated actions and fields | `Action::deprecated`, `deprecated_field` | a `DEPRECATED` warning |
//! | [`Stage::Timeout`] | a deadline on the rest of the chain | `.timeout(..)` | `TIMEOUT` |
//! | [`Stage::ResultCap`] | the size of the result's text | `.max_result_bytes(..)` | a `RESULT_TRUNCATED` warning |
//!
//! [`Middleware`]: crate::middleware::Middleware
#![doc = include_str!("../../docs/guards.md")]

mod entry;
mod stage;

pub use concurrency::{Concurrency, ConcurrencyGuard};
pub(crate) use entry::{GroupScope, GuardSpec, GuardedEntry, ServerGuards};
pub(crate) use idempotency::fingerprint;
pub use idempotency::{
    Claim, IDEMPOTENCY_KEY_ARGUMENT, IDEMPOTENCY_KEY_META, Idempotency, IdempotencyKey, IdempotencyStore, KeyBinding,
    MAX_IDEMPOTENCY_KEY_CHARS, MemoryKeys,
};
pub(crate) use rate_limit::StoreSettings;
#[cfg(feature = "redis")]
pub use rate_limit::redis::{DEFAULT_KEY_PREFIX, RedisStore, RedisStoreBuilder};
pub use rate_limit::{Decision, FailurePolicy, MemoryStore, RateLimit, RateLimitStore, StoreError};
pub(crate) use require_caller::RequireCaller;
pub(crate) use stage::{Layers, Placement, StageLayers, assemble};

// The built-in guards, one line each, in the order a call meets them: `Stage => module`. A new
// guard is its module (a `Middleware`, and a `compile(&GuardedEntry, &mut Vec<Arc<dyn Middleware>>)`
// that makes its layers for an entry) and its line here.
stage::stages! {
    /// Credentials refused (`UNAUTHORIZED`), missing (`AUTH_REQUIRED`), or short of a scope
    /// (`FORBIDDEN`). First, so nothing is counted for a caller who may not call at all.
    Auth => require_caller,
    /// Idempotency keys: a repeat of a finished call gets its result without counting
    /// against any limit; the first call goes on through the rest of the chain.
    Idempotency => idempotency,
    /// Rate limits: the action's, then its group's, then the server's. Before concurrency,
    /// so a limited call never waits in line for a slot. A call refused by a later limit or
    /// shed by a concurrency guard gives back what the earlier limits counted.
    RateLimit => rate_limit,
    /// Concurrency slots: the group's, then the server's, so a call waits in one line only.
    Concurrency => concurrency,
    /// `DEPRECATED` warnings for a deprecated action or a deprecated field that was sent.
    Deprecation => deprecation,
    /// The deadline on everything inside it: user middleware and the handler (`TIMEOUT`).
    /// Time spent waiting for a slot does not count.
    Timeout => timeout,
    /// Cuts an oversized result's text and adds a `RESULT_TRUNCATED` warning.
    ResultCap => result_cap,
}
