//! Long work as tasks (the MCP tasks extension, `io.modelcontextprotocol/tasks`): a client that
//! declared the extension gets a handle at once and reads the status and the result later.
//!
//! An action marked [`Action::task`](crate::Action::task) runs as a task for a client that
//! declared the extension, and as a plain call for one that did not (or is refused `-32021`
//! when the action requires a task). Where tasks are kept is [`Tasks::store`]: in memory by
//! default, or in Redis (`guard::RedisStore`, cargo feature `redis`) so
//! that replicas share them.
#![doc = include_str!("../../docs/tasks.md")]

pub(crate) mod experimental;
mod memory;
#[cfg(feature = "redis")]
mod redis;
mod store;

use std::sync::Arc;
use std::time::Duration;

pub use memory::{DEFAULT_MAX_TASKS, DEFAULT_MAX_TASKS_PER_OWNER, MemoryTasks};
pub use store::{FinishIf, Renewal, StoreError, StoredTask, TaskCursor, TaskPage, TaskState, TaskStore};

pub(crate) use store::now_ms;

/// A time kept in milliseconds since the Unix epoch, as ISO 8601.
pub(crate) fn iso(ms: u64) -> String {
    let ms = i64::try_from(ms).unwrap_or(i64::MAX);
    chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Whether an action runs as a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskSupport {
    /// As a task for a client that declared the tasks extension, as a plain call otherwise.
    Optional,
    /// Only as a task: a client that did not declare the extension is refused with JSON-RPC
    /// `-32021` (missing required client capability), naming the extension.
    Required,
}

/// How a server keeps its tasks: the store, and the times it hands out.
///
/// ```
/// use std::time::Duration;
/// use mcp_fusion::task::Tasks;
///
/// let tasks = Tasks::new().ttl(Duration::from_secs(600)).poll_interval(Duration::from_millis(500));
/// # let _ = tasks;
/// ```
#[derive(Clone)]
pub struct Tasks {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) lease: Duration,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("ttl", &self.ttl)
            .field("poll_interval", &self.poll_interval)
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

impl Default for Tasks {
    fn default() -> Tasks {
        Tasks::new()
    }
}

impl Tasks {
    /// Tasks in memory ([`MemoryTasks`]), kept an hour, polled every second, under a lease of
    /// 30 seconds.
    pub fn new() -> Tasks {
        Tasks {
            store: Arc::new(MemoryTasks::new()),
            ttl: Duration::from_secs(3600),
            poll_interval: Duration::from_secs(1),
            lease: Duration::from_secs(30),
        }
    }

    /// Where tasks are kept.
    pub fn store(mut self, store: impl TaskStore) -> Tasks {
        self.store = Arc::new(store);
        self
    }

    /// How long a task is kept after it starts (its `ttlMs`); a task still working then is
    /// stopped, and, as every task past that time, forgotten: a poll reads it as unknown.
    pub fn ttl(mut self, ttl: Duration) -> Tasks {
        self.ttl = ttl;
        self
    }

    /// How often a client is asked to poll (its `pollIntervalMs`).
    pub fn poll_interval(mut self, interval: Duration) -> Tasks {
        self.poll_interval = interval;
        self
    }

    /// How long a replica vouches for a task it runs before it renews the vouch (a third of
    /// the lease later). A task whose replica died is reported `failed` once its lease lapsed.
    pub fn lease(mut self, lease: Duration) -> Tasks {
        self.lease = lease.max(Duration::from_millis(30));
        self
    }
}
