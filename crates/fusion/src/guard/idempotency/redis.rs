//! Idempotency keys in Redis (cargo feature `redis`): each operation one atomic Lua script,
//! so two replicas claiming one key at once get one claim between them.

use std::time::Duration;

use futures_util::future::BoxFuture;
use redis::Script;

use super::store::{Claim, IdempotencyStore};
use crate::guard::{RedisStore, StoreError};
use crate::idempotency_key::KeyBinding;

/// Claims `KEYS[1]` for the claim token `ARGV[1]`, bound to the caller scope `ARGV[2]` and
/// the arguments `ARGV[3]`, for `ARGV[4]` milliseconds; or returns what holds it:
/// `{'r', scope, arguments}` (running) or `{'d', scope, arguments, record}` (done). The key is
/// a hash: `s` state, `c` claim, `o` scope, `f` arguments, `v` record. A record without `o`
/// names no caller: it answers with an empty scope, which no caller has, so the key refuses
/// every call (`CONFLICT`) rather than answer one.
const CLAIM_SCRIPT: &str = r"
local state = redis.call('HGET', KEYS[1], 's')
if not state then
  redis.call('HSET', KEYS[1], 's', 'r', 'c', ARGV[1], 'o', ARGV[2], 'f', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return {'claimed'}
end
local held = redis.call('HMGET', KEYS[1], 'o', 'f', 'v')
return {state, held[1] or '', held[2] or '', held[3] or ''}
";

/// Keeps the record `ARGV[2]` under `KEYS[1]` for `ARGV[3]` milliseconds, if the claim
/// `ARGV[1]` still holds it running.
const COMPLETE_SCRIPT: &str = r"
if redis.call('HGET', KEYS[1], 's') == 'r' and redis.call('HGET', KEYS[1], 'c') == ARGV[1] then
  redis.call('HSET', KEYS[1], 's', 'd', 'v', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return 1
end
return 0
";

/// Frees `KEYS[1]`, if the claim `ARGV[1]` still holds it running.
const RELEASE_SCRIPT: &str = r"
if redis.call('HGET', KEYS[1], 's') == 'r' and redis.call('HGET', KEYS[1], 'c') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
";

/// The three scripts, in the order claim, complete, release.
pub(crate) fn scripts() -> [Script; 3] {
    [Script::new(CLAIM_SCRIPT), Script::new(COMPLETE_SCRIPT), Script::new(RELEASE_SCRIPT)]
}

/// At least one millisecond: Redis refuses `PEXPIRE 0`.
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl RedisStore {
    fn idempotency_key(&self, key: &str) -> String {
        format!("{}idem:{key}", self.inner.prefix)
    }

    /// Runs the idempotency script `which` (see [`RedisStore::run_script`]).
    async fn run_key_script<T: redis::FromRedisValue>(
        &self,
        which: usize,
        key: String,
        args: Vec<String>,
    ) -> Result<T, StoreError> {
        self.run_script(&self.inner.keys[which], key, args).await
    }
}

impl IdempotencyStore for RedisStore {
    fn claim(&self, key: &str, binding: &KeyBinding, lease: Duration) -> BoxFuture<'static, Result<Claim, StoreError>> {
        let store = self.clone();
        let key = self.idempotency_key(key);
        let token = uuid::Uuid::new_v4().to_string();
        let args = vec![token.clone(), binding.scope.clone(), binding.arguments.clone(), millis(lease).to_string()];
        Box::pin(async move {
            let reply: Vec<String> = store.run_key_script(0, key, args).await?;
            let mut reply = reply.into_iter();
            let state = reply.next();
            let (scope, arguments, record) = (reply.next(), reply.next(), reply.next());
            let binding = |scope: Option<String>, arguments: Option<String>| KeyBinding {
                scope: scope.unwrap_or_default(),
                arguments: arguments.unwrap_or_default(),
            };
            match (state.as_deref(), record) {
                (Some("claimed"), _) => Ok(Claim::Claimed(token)),
                (Some("r"), _) => Ok(Claim::Running { binding: binding(scope, arguments) }),
                (Some("d"), Some(record)) => Ok(Claim::Done { binding: binding(scope, arguments), record }),
                (state, _) => Err(StoreError(format!(
                    "Redis at {}: an idempotency key in an unknown state {state:?}",
                    store.inner.target
                ))),
            }
        })
    }

    fn complete(
        &self,
        key: &str,
        claim: &str,
        record: String,
        ttl: Duration,
    ) -> BoxFuture<'static, Result<(), StoreError>> {
        let store = self.clone();
        let key = self.idempotency_key(key);
        let args = vec![claim.to_owned(), record, millis(ttl).to_string()];
        Box::pin(async move { store.run_key_script::<i64>(1, key, args).await.map(drop) })
    }

    fn release(&self, key: &str, claim: &str) -> BoxFuture<'static, Result<(), StoreError>> {
        let store = self.clone();
        let key = self.idempotency_key(key);
        let args = vec![claim.to_owned()];
        Box::pin(async move { store.run_key_script::<i64>(2, key, args).await.map(drop) })
    }
}
