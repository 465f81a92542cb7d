//! Guards: what stands between a validated call and its handler, each a [`Middleware`] of
//! the one chain every call goes through, each failing into its own envelope.
//!
//! | stage | guard | configure | envelope |
//! |---|---|---|---|
//! | [`Stage::Auth`] | identity and scopes | `require_identity`, `Action::scope` | `AUTH_REQUIRED`, `UNAUTHORIZED`, `FORBIDDEN` |
//! | [`Stage::Idempotency`] | [`Idempotency`] keys | `Action::idempotent_by_key`, `.idempotency(..)` | the first call's result, `CONFLICT`, `SERVER_BUSY` |
//! | [`Stage::RateLimit`] | [`RateLimit`] per action, group, server | `.rate_limit(..)`, `.rate_limit_store(..)` | `RATE_LIMITED` with `retry_after` |
//! | [`Stage::Concurrency`] | [`Concurrency`] per group, server | `.concurrency(..)` | `SERVER_BUSY` |
//! | [`Stage::Deprecation`] | deprecated actions and fields | `Action::deprecated`, `deprecated_field` | a `DEPRECATED` warning |
//! | [`Stage::Timeout`] | a deadline on the rest of the chain | `.timeout(..)` | `TIMEOUT` |
//! | [`Stage::ResultCap`] | the size of the result's text | `.max_result_bytes(..)` | a `RESULT_TRUNCATED` warning |
//!
//! [`Middleware`]: crate::middleware::Middleware
#![doc = include_str!("../../docs/guards.md")]

pub(crate) mod auth;
mod concurrency;
mod deprecation;
mod idempotency;
mod rate_limit;
mod result_cap;
mod stage;
mod timeout;

pub(crate) use auth::RequireCaller;
pub(crate) use concurrency::ConcurrencyLimit;
pub use concurrency::{Concurrency, ConcurrencyGuard};
pub(crate) use deprecation::Deprecation;
pub(crate) use idempotency::IdempotencyGuard;
pub use idempotency::{
    Claim, IDEMPOTENCY_KEY_ARGUMENT, IDEMPOTENCY_KEY_META, Idempotency, IdempotencyKey, IdempotencyStore, KeyBinding,
    MAX_IDEMPOTENCY_KEY_CHARS, MemoryKeys,
};
#[cfg(feature = "redis")]
pub use rate_limit::redis::{DEFAULT_KEY_PREFIX, RedisStore, RedisStoreBuilder};
pub use rate_limit::{Decision, FailurePolicy, MemoryStore, RateLimit, RateLimitStore, StoreError};
pub(crate) use rate_limit::{RateLimitGuard, StoreSettings};
pub(crate) use result_cap::ResultCap;
pub use stage::Stage;
pub(crate) use stage::{Layers, Placement, StageLayers, assemble};
pub(crate) use timeout::{Retry, Timeout};
