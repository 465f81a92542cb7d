//! Idempotency keys in this process's memory: bounded, each entry with its deadline.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;

use super::store::{Claim, IdempotencyStore};
use crate::guard::StoreError;
use crate::idempotency_key::KeyBinding;

/// Idempotency keys in memory, for one process: at most `capacity` keys, each kept for its
/// time to live. Replicas need a shared store (`RedisStore` (cargo feature `redis`)).
///
/// When full, expired keys go first. A finished key is never forgotten before its time to
/// live, since a forgotten key would run again: a store full of keys within their time to live
/// refuses new ones (the call is answered `SERVER_BUSY`, and nothing runs). Size it for the
/// keys of a time to live, or, where each write records its key durably with its binding (in
/// its own database, as `billing-server` does), let memory be a cache in front of that record
/// with [`evict_when_full`](MemoryKeys::evict_when_full).
#[derive(Debug)]
pub struct MemoryKeys {
    entries: Mutex<Entries>,
    capacity: usize,
    evict: bool,
}

#[derive(Debug, Default)]
struct Entries {
    by_key: HashMap<String, Entry>,
    next_claim: u64,
}

#[derive(Debug)]
struct Entry {
    binding: KeyBinding,
    state: State,
    until: Instant,
}

#[derive(Debug)]
enum State {
    Running { claim: u64 },
    Done { record: String },
}

impl MemoryKeys {
    /// Keeps at most `capacity` keys (at least one).
    pub fn new(capacity: usize) -> MemoryKeys {
        MemoryKeys { entries: Mutex::new(Entries::default()), capacity: capacity.max(1), evict: false }
    }

    /// When full, forgets the finished keys closest to their end (an eighth of the store at
    /// once) instead of refusing new keys. Only for servers whose actions keep their own
    /// durable record of each write's key and [`KeyBinding`] and answer a repeat from it
    /// (see [`IdempotencyKey::check`](super::IdempotencyKey::check)): memory is then a cache,
    /// and the record what holds.
    pub fn evict_when_full(mut self) -> MemoryKeys {
        self.evict = true;
        self
    }

    /// How many keys are held now, expired ones included until they are swept.
    pub fn len(&self) -> usize {
        self.lock().by_key.len()
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        // Every update is one statement on the map: a panic cannot leave it half-changed.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn make_room(&self, entries: &mut Entries, now: Instant) -> Result<(), StoreError> {
        if entries.by_key.len() < self.capacity {
            return Ok(());
        }
        entries.by_key.retain(|_, entry| entry.until > now);
        if entries.by_key.len() < self.capacity {
            return Ok(());
        }
        if !self.evict {
            return Err(StoreError(format!(
                "all {} idempotency keys are within their time to live; none is forgotten early",
                self.capacity
            )));
        }
        // Sweep an eighth at once, so a full store does not sort on every claim.
        let mut done: Vec<(Instant, String)> = entries
            .by_key
            .iter()
            .filter(|(_, entry)| matches!(entry.state, State::Done { .. }))
            .map(|(key, entry)| (entry.until, key.clone()))
            .collect();
        if done.is_empty() {
            return Err(StoreError(format!("all {} idempotency keys belong to calls still running", self.capacity)));
        }
        done.sort_unstable();
        for (_, key) in done.into_iter().take((self.capacity / 8).max(1)) {
            entries.by_key.remove(&key);
        }
        Ok(())
    }
}

impl Default for MemoryKeys {
    /// Up to 100,000 keys, none forgotten before its time to live.
    fn default() -> MemoryKeys {
        MemoryKeys::new(100_000)
    }
}

impl IdempotencyStore for MemoryKeys {
    fn claim(&self, key: &str, binding: &KeyBinding, lease: Duration) -> BoxFuture<'static, Result<Claim, StoreError>> {
        let now = Instant::now();
        let mut entries = self.lock();
        let answer = match entries.by_key.get(key).filter(|entry| entry.until > now) {
            Some(Entry { binding, state: State::Running { .. }, .. }) => {
                Ok(Claim::Running { binding: binding.clone() })
            }
            Some(Entry { binding, state: State::Done { record }, .. }) => {
                Ok(Claim::Done { binding: binding.clone(), record: record.clone() })
            }
            None => self.make_room(&mut entries, now).map(|()| {
                entries.next_claim += 1;
                let claim = entries.next_claim;
                let entry = Entry { binding: binding.clone(), state: State::Running { claim }, until: now + lease };
                entries.by_key.insert(key.to_owned(), entry);
                Claim::Claimed(claim.to_string())
            }),
        };
        Box::pin(std::future::ready(answer))
    }

    fn complete(
        &self,
        key: &str,
        claim: &str,
        record: String,
        ttl: Duration,
    ) -> BoxFuture<'static, Result<(), StoreError>> {
        let mut entries = self.lock();
        if let Some(entry) = entries.by_key.get_mut(key).filter(|entry| holds(entry, claim)) {
            entry.state = State::Done { record };
            entry.until = Instant::now() + ttl;
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn release(&self, key: &str, claim: &str) -> BoxFuture<'static, Result<(), StoreError>> {
        let mut entries = self.lock();
        if entries.by_key.get(key).is_some_and(|entry| holds(entry, claim)) {
            entries.by_key.remove(key);
        }
        Box::pin(std::future::ready(Ok(())))
    }
}

fn holds(entry: &Entry, claim: &str) -> bool {
    matches!(entry.state, State::Running { claim: held } if held.to_string() == claim)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEASE: Duration = Duration::from_secs(60);

    fn bound(arguments: &str) -> KeyBinding {
        KeyBinding { scope: "s".into(), arguments: arguments.into() }
    }

    async fn claim(store: &MemoryKeys, key: &str, arguments: &str) -> Claim {
        store.claim(key, &bound(arguments), LEASE).await.unwrap()
    }

    #[tokio::test]
    async fn a_key_is_claimed_once_then_replayed() {
        let store = MemoryKeys::new(10);
        let Claim::Claimed(token) = claim(&store, "k", "f1").await else { panic!("not claimed") };
        assert_eq!(claim(&store, "k", "f2").await, Claim::Running { binding: bound("f1") });
        store.complete("k", "not-the-token", "forged".into(), LEASE).await.unwrap();
        store.complete("k", &token, "result".into(), LEASE).await.unwrap();
        assert_eq!(claim(&store, "k", "f1").await, Claim::Done { binding: bound("f1"), record: "result".into() });
    }

    #[tokio::test]
    async fn a_released_or_expired_key_is_free_again() {
        let store = MemoryKeys::new(10);
        let Claim::Claimed(token) = claim(&store, "k", "f").await else { panic!("not claimed") };
        store.release("k", &token).await.unwrap();
        assert!(matches!(claim(&store, "k", "f").await, Claim::Claimed(_)));

        let Claim::Claimed(_) = store.claim("short", &bound("f"), Duration::ZERO).await.unwrap() else { panic!() };
        assert!(matches!(claim(&store, "short", "f").await, Claim::Claimed(_)), "a lapsed lease frees the key");
    }

    #[tokio::test]
    async fn a_full_store_forgets_no_finished_key_before_its_end() {
        let store = MemoryKeys::new(2);
        let Claim::Claimed(token) = claim(&store, "done", "f").await else { panic!() };
        store.complete("done", &token, "r".into(), LEASE).await.unwrap();
        let Claim::Claimed(_) = claim(&store, "running", "f").await else { panic!() };
        let refused = store.claim("new", &bound("f"), LEASE).await.unwrap_err();
        assert!(refused.to_string().contains("within their time to live"), "{refused}");
        assert!(matches!(claim(&store, "done", "f").await, Claim::Done { .. }), "the finished key is still known");
    }

    #[tokio::test]
    async fn a_cache_drops_finished_keys_first_and_refuses_when_all_run() {
        let store = MemoryKeys::new(2).evict_when_full();
        let Claim::Claimed(token) = claim(&store, "done", "f").await else { panic!() };
        store.complete("done", &token, "r".into(), LEASE).await.unwrap();
        let Claim::Claimed(_) = claim(&store, "running", "f").await else { panic!() };
        assert!(matches!(claim(&store, "new", "f").await, Claim::Claimed(_)));
        assert_eq!(store.len(), 2);
        let refused = store.claim("done", &bound("f"), LEASE).await;
        assert!(refused.is_err(), "the finished key made room, and both keys left belong to running calls");
        let full = MemoryKeys::new(1).evict_when_full();
        let Claim::Claimed(_) = claim(&full, "a", "f").await else { panic!() };
        let refused = full.claim("b", &bound("f"), LEASE).await.unwrap_err();
        assert!(refused.to_string().contains("still running"), "{refused}");
    }
}
