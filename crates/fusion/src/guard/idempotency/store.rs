//! Where idempotency keys are claimed and their results kept: the store's contract.

use std::time::Duration;

use futures_util::future::BoxFuture;

use crate::guard::{KeyBinding, StoreError};

/// What a store says of a key when a call asks to claim it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Claim {
    /// The key was free and is now this call's, under this claim token (for
    /// [`complete`](IdempotencyStore::complete) and [`release`](IdempotencyStore::release)).
    Claimed(String),
    /// Another call runs under the key, bound to this.
    Running {
        /// The caller and arguments of the running call.
        binding: KeyBinding,
    },
    /// A call bound to this finished under the key; its result.
    Done {
        /// The caller and arguments of the finished call.
        binding: KeyBinding,
        /// The finished call's result, as the guard recorded it.
        record: String,
    },
}

/// Where idempotency keys live. `key` is unique per action and idempotency key, whoever
/// calls: a key another caller sent is found, and refused by its [`KeyBinding`].
///
/// Every operation is atomic: two calls claiming one key at once, on one replica or on two
/// sharing the store, get one [`Claim::Claimed`] between them. A store must not forget a
/// finished key before its time to live unless something durable stands behind it (see
/// [`MemoryKeys::evict_when_full`](super::MemoryKeys::evict_when_full)): a forgotten key
/// runs again.
pub trait IdempotencyStore: Send + Sync + 'static {
    /// Claims `key` for a call bound to `binding`, for at most `lease` (a claim whose holder
    /// died frees the key then); or says what holds it.
    fn claim(&self, key: &str, binding: &KeyBinding, lease: Duration) -> BoxFuture<'static, Result<Claim, StoreError>>;

    /// Keeps `record` under `key` for `ttl`, if `claim` still holds the key.
    fn complete(
        &self,
        key: &str,
        claim: &str,
        record: String,
        ttl: Duration,
    ) -> BoxFuture<'static, Result<(), StoreError>>;

    /// Frees `key`, if `claim` still holds it: the call ended without a result worth
    /// keeping (it timed out, was refused by a guard, or failed in a way worth retrying).
    fn release(&self, key: &str, claim: &str) -> BoxFuture<'static, Result<(), StoreError>>;
}
