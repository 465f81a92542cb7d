//! The commit gate: one decision per call between "its writes stand" and "it was answered
//! without them", so no write is made permanent after the caller was told `TIMEOUT`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

const OPEN: u8 = 0;
const COMMITTED: u8 = 1;
const ABANDONED: u8 = 2;

/// Decides once whether a call's writes may become permanent. A handler passes it to the
/// work that writes (it is `Clone + Send + 'static`, for a blocking task too) and calls
/// [`try_commit`](CommitGate::try_commit) right before it commits; the timeout guard and the
/// client's cancellation close it when they answer for the call.
///
/// Whichever comes first wins: a commit that won is waited for and its result sent, even
/// past the deadline; a deadline that won answers `TIMEOUT`, and every later `try_commit`
/// says no, so the work rolls back.
///
/// ```
/// use mcp_fusion::CommitGate;
///
/// let gate = CommitGate::new();
/// let worker = gate.clone();
/// // In the blocking task, right before `COMMIT`:
/// assert!(worker.try_commit());
/// assert!(!worker.is_abandoned());
/// ```
#[derive(Debug, Clone, Default)]
pub struct CommitGate {
    state: Arc<AtomicU8>,
}

impl CommitGate {
    /// An open gate.
    pub fn new() -> CommitGate {
        CommitGate::default()
    }

    /// Claims the right to commit: `true` means commit (the call's answer will be its
    /// result), `false` means the call was already answered with `TIMEOUT` or cancelled, so
    /// roll back. Once `true`, always `true`.
    pub fn try_commit(&self) -> bool {
        match self.state.compare_exchange(OPEN, COMMITTED, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => true,
            Err(state) => state == COMMITTED,
        }
    }

    /// Whether the call was answered without its writes: work not yet done can stop early.
    pub fn is_abandoned(&self) -> bool {
        self.state.load(Ordering::Acquire) == ABANDONED
    }

    /// Closes the gate for a call being answered without its result: `true` when it is
    /// closed (now or before), `false` when a commit already won and its result must be
    /// awaited.
    pub(crate) fn abandon(&self) -> bool {
        match self.state.compare_exchange(OPEN, ABANDONED, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => true,
            Err(state) => state == ABANDONED,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_decision_stands() {
        let gate = CommitGate::new();
        assert!(gate.try_commit());
        assert!(!gate.abandon(), "a committed call cannot be abandoned");
        assert!(gate.try_commit());

        let gate = CommitGate::new();
        assert!(gate.abandon());
        assert!(gate.is_abandoned());
        assert!(!gate.try_commit(), "an abandoned call cannot commit");
        assert!(gate.abandon());
    }

    #[test]
    fn racing_threads_agree_on_one_winner() {
        for _ in 0..200 {
            let gate = CommitGate::new();
            let other = gate.clone();
            let committer = std::thread::spawn(move || other.try_commit());
            let abandoned = gate.abandon();
            let committed = committer.join().unwrap();
            assert_ne!(abandoned, committed);
        }
    }
}
