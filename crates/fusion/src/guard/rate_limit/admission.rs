//! Admission: a call keeps what its rate limits counted only once every gate (each rate limit,
//! each concurrency slot) has admitted it; a call that ends before its last gate gives it back.
//!
//! Refund on refusal, not a two-phase reserve and commit in the stores: a check that admits
//! counts at once, so concurrent calls never see one budget promised twice, every store keeps
//! one atomic operation per check, and only the rare call refused further on costs one more
//! (its refund). A GCRA count is a sum of intervals, so a refund (one interval taken off)
//! commutes with the checks of other calls and other replicas in between.
//!
//! The first gate of a call that is not also its last opens the call's admission and owns it;
//! later gates add what they counted; the last gate commits. When the owner's rest of the
//! chain ends without a commit (a later limit refused, a concurrency guard shed the call, a
//! middleware placed between the gates answered itself) the owner gives everything back
//! before the refusal is returned; when the call is dropped before its commit (cancelled while
//! waiting for a slot, a panic) the refund runs in the background.

use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::store::RateLimitStore;
use crate::context::CallInfo;
use crate::lock::locked;

/// One call counted by one limit, to give back should the call not be admitted.
pub(crate) struct Taken {
    /// The action the call is for, named in the logs.
    pub action: Arc<str>,
    pub store: Arc<dyn RateLimitStore>,
    /// How long the store may take to answer, as for its checks.
    pub timeout: Duration,
    pub key: String,
    pub calls: NonZeroU32,
    pub window: Duration,
}

impl Taken {
    /// Gives the call back; a store that fails or does not answer in time is logged, and the
    /// call stays counted (never a hang).
    async fn give_back(self) {
        let refund = self.store.refund(&self.key, self.calls, self.window);
        let failure = match tokio::time::timeout(self.timeout, refund).await {
            Ok(Ok(())) => return,
            Ok(Err(error)) => error.to_string(),
            Err(_) => format!("rate-limit store did not answer within {} ms", self.timeout.as_millis()),
        };
        tracing::warn!(action = %self.action, key = %self.key, "a refused call stays counted: {failure}");
    }
}

/// What a call has counted so far, between its first gate and its last.
#[derive(Default)]
struct Held {
    taken: Vec<Taken>,
    committed: bool,
}

/// The admission of a call between its first gate and its last, kept in the call's own guard
/// state: a call's gates find it there even when a middleware between them runs the rest of
/// the chain in another task, and calls never contend for one another's.
#[derive(Clone, Default)]
struct Admission(Arc<Mutex<Held>>);

/// Adds what a gate (not the call's last) counted to the call's admission; the first such gate
/// gets the [`Owner`] of the admission.
pub(crate) fn hold(info: &Arc<CallInfo>, taken: Option<Taken>) -> Option<Owner> {
    let mut state = locked(&info.guard_state);
    if let Some(admission) = state.get::<Admission>() {
        locked(&admission.0).taken.extend(taken);
        return None;
    }
    let admission = Admission::default();
    locked(&admission.0).taken.extend(taken);
    state.insert(admission.clone());
    Some(Owner { held: admission, info: Arc::clone(info) })
}

/// The call passed its last gate: it keeps everything it was counted, whatever happens next.
pub(crate) fn commit(info: &Arc<CallInfo>) {
    if let Some(admission) = locked(&info.guard_state).remove::<Admission>() {
        locked(&admission.0).committed = true;
    }
}

/// The first gate's hold on a call's admission.
pub(crate) struct Owner {
    held: Admission,
    info: Arc<CallInfo>,
}

impl Owner {
    /// After the rest of the chain: gives back what the call was counted unless it passed its
    /// last gate, before the outcome goes out, so the caller's next call sees the budget.
    pub(crate) async fn finish(mut self) {
        let taken = self.release();
        futures_util::future::join_all(taken.into_iter().map(Taken::give_back)).await;
    }

    /// Closes the admission: what it holds, unless it was committed.
    fn release(&mut self) -> Vec<Taken> {
        {
            let mut state = locked(&self.info.guard_state);
            if state.get::<Admission>().is_some_and(|open| Arc::ptr_eq(&open.0, &self.held.0)) {
                state.remove::<Admission>();
            }
        }
        let mut held = locked(&self.held.0);
        if held.committed { Vec::new() } else { std::mem::take(&mut held.taken) }
    }
}

impl Drop for Owner {
    /// The call was dropped before its outcome (cancelled while waiting for a slot, or a
    /// panic): the refund cannot be awaited here, so it runs in the background.
    fn drop(&mut self) {
        let taken = self.release();
        if taken.is_empty() {
            return;
        }
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(futures_util::future::join_all(taken.into_iter().map(Taken::give_back)));
            }
            Err(_) => tracing::warn!("a dropped call stays counted: no runtime to give it back on"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::{Decision, MemoryStore};

    fn n(calls: u32) -> NonZeroU32 {
        NonZeroU32::new(calls).unwrap()
    }

    fn info() -> Arc<CallInfo> {
        Arc::new(CallInfo::new("g.a".into(), crate::context::RequestInfo::default(), false, false, None))
    }

    async fn taken(store: &Arc<MemoryStore>, key: &str) -> Taken {
        assert_eq!(store.check(key, n(1), Duration::from_secs(60)).await.unwrap(), Decision::Allowed);
        Taken {
            action: "g.a".into(),
            store: Arc::clone(store) as Arc<dyn RateLimitStore>,
            timeout: Duration::from_secs(1),
            key: key.to_owned(),
            calls: n(1),
            window: Duration::from_secs(60),
        }
    }

    async fn spent(store: &Arc<MemoryStore>, key: &str) -> bool {
        let decision = store.check(key, n(1), Duration::from_secs(60)).await.unwrap();
        matches!(decision, Decision::Limited { .. })
    }

    #[tokio::test]
    async fn uncommitted_counts_come_back_and_committed_ones_stay() {
        let store = Arc::new(MemoryStore::new());
        let refused = info();
        let owner = hold(&refused, Some(taken(&store, "first").await)).expect("the first gate owns");
        assert!(hold(&refused, Some(taken(&store, "second").await)).is_none());
        owner.finish().await;
        assert!(!spent(&store, "first").await && !spent(&store, "second").await);
        assert!(locked(&refused.guard_state).get::<Admission>().is_none());

        let admitted = info();
        let owner = hold(&admitted, Some(taken(&store, "third").await)).unwrap();
        commit(&admitted);
        owner.finish().await;
        assert!(spent(&store, "third").await);
    }

    #[tokio::test]
    async fn a_dropped_call_gives_back_in_the_background() {
        let store = Arc::new(MemoryStore::new());
        let call = info();
        drop(hold(&call, Some(taken(&store, "k").await)));
        tokio::task::yield_now().await;
        assert!(!spent(&store, "k").await);
    }
}
