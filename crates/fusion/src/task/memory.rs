//! Tasks in this process's memory: bounded, each kept for its time to live.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;

use super::store::{FinishIf, Renewal, StoreError, StoredTask, TaskCursor, TaskPage, TaskState, TaskStore, now_ms};
use rmcp::model::JsonObject;

/// The default bound of [`MemoryTasks`].
pub const DEFAULT_MAX_TASKS: usize = 10_000;

/// The default bound of one owner's tasks in a [`MemoryTasks`].
pub const DEFAULT_MAX_TASKS_PER_OWNER: usize = 1_000;

/// Tasks in this process's memory (the default store): a task dies with the process, and
/// replicas do not see each other's. At most [`max_tasks`](MemoryTasks::max_tasks) are kept in
/// all and [`max_tasks_per_owner`](MemoryTasks::max_tasks_per_owner) of one owner. A new task
/// makes room only from its own owner's tasks, the one that ended longest ago: one caller never
/// pushes out another's task before its time to live. With none of the owner's tasks ended, a
/// new one is refused (the call is answered `SERVER_BUSY`).
///
/// ```
/// use mcp_fusion::task::{MemoryTasks, Tasks};
///
/// let tasks = Tasks::new().store(MemoryTasks::new().max_tasks(1_000).max_tasks_per_owner(50));
/// # let _ = tasks;
/// ```
#[derive(Debug, Clone)]
pub struct MemoryTasks {
    tasks: Arc<Mutex<HashMap<String, StoredTask>>>,
    max_tasks: usize,
    max_per_owner: usize,
}

impl Default for MemoryTasks {
    fn default() -> MemoryTasks {
        MemoryTasks::new()
    }
}

impl MemoryTasks {
    /// An empty store of at most [`DEFAULT_MAX_TASKS`] tasks.
    pub fn new() -> MemoryTasks {
        MemoryTasks { tasks: Arc::default(), max_tasks: DEFAULT_MAX_TASKS, max_per_owner: DEFAULT_MAX_TASKS_PER_OWNER }
    }

    /// At most `max` tasks are kept (at least one).
    pub fn max_tasks(mut self, max: usize) -> MemoryTasks {
        self.max_tasks = max.max(1);
        self
    }

    /// At most `max` tasks of one owner are kept (at least one).
    pub fn max_tasks_per_owner(mut self, max: usize) -> MemoryTasks {
        self.max_per_owner = max.max(1);
        self
    }

    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, StoredTask>) -> T) -> T {
        // A panic while holding the lock leaves the map as it was between two operations.
        let mut tasks = self.tasks.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut tasks)
    }
}

/// The task `id` of `tasks`, dropped if it expired.
fn live<'t>(tasks: &'t mut HashMap<String, StoredTask>, id: &str, now: u64) -> Option<&'t mut StoredTask> {
    if tasks.get(id).is_some_and(|task| task.expired(now)) {
        tasks.remove(id);
    }
    tasks.get_mut(id)
}

impl TaskStore for MemoryTasks {
    fn create(&self, task: StoredTask) -> BoxFuture<'static, Result<(), StoreError>> {
        let (max, max_per_owner) = (self.max_tasks, self.max_per_owner);
        let created = self.with(|tasks| {
            let now = now_ms();
            tasks.retain(|_, kept| !kept.expired(now));
            let owned = tasks.values().filter(|kept| kept.owner == task.owner).count();
            if tasks.len() >= max || owned >= max_per_owner {
                let oldest_ended = tasks
                    .values()
                    .filter(|kept| kept.owner == task.owner && kept.state.is_terminal())
                    .min_by_key(|kept| kept.updated_at_ms)
                    .map(|kept| kept.id.clone());
                match oldest_ended {
                    Some(id) => {
                        tasks.remove(&id);
                    }
                    None if owned >= max_per_owner => {
                        return Err(StoreError(format!(
                            "{owned} tasks of this caller are working, the most this store keeps of one caller"
                        )));
                    }
                    None => {
                        return Err(StoreError(format!(
                            "{max} tasks are kept, the most this store keeps, and none of this caller's has ended"
                        )));
                    }
                }
            }
            tasks.insert(task.id.clone(), task);
            Ok(())
        });
        Box::pin(std::future::ready(created))
    }

    fn get(&self, id: &str) -> BoxFuture<'static, Result<Option<StoredTask>, StoreError>> {
        let found = self.with(|tasks| live(tasks, id, now_ms()).cloned());
        Box::pin(std::future::ready(Ok(found)))
    }

    fn renew(&self, id: &str, until_ms: u64) -> BoxFuture<'static, Result<Renewal, StoreError>> {
        let renewal = self.with(|tasks| match live(tasks, id, now_ms()) {
            None => Renewal::Unknown,
            Some(task) if task.state.is_terminal() => Renewal::Ended,
            Some(task) => {
                task.lease_until_ms = task.lease_until_ms.max(until_ms);
                Renewal::Working { cancel_requested: task.cancel_requested }
            }
        });
        Box::pin(std::future::ready(Ok(renewal)))
    }

    fn finish(
        &self,
        id: &str,
        state: TaskState,
        now_ms: u64,
        condition: FinishIf,
    ) -> BoxFuture<'static, Result<bool, StoreError>> {
        let finished = self.with(|tasks| match live(tasks, id, now_ms) {
            Some(task) if !task.state.is_terminal() => {
                let holds = match condition {
                    FinishIf::Working => true,
                    FinishIf::LeaseLapsed => task.lease_until_ms < now_ms,
                };
                if holds {
                    task.state = state;
                    task.updated_at_ms = now_ms;
                }
                holds
            }
            _ => false,
        });
        Box::pin(std::future::ready(Ok(finished)))
    }

    fn request_cancel(&self, id: &str) -> BoxFuture<'static, Result<bool, StoreError>> {
        let asked = self.with(|tasks| match live(tasks, id, now_ms()) {
            Some(task) if !task.state.is_terminal() => {
                task.cancel_requested = true;
                true
            }
            _ => false,
        });
        Box::pin(std::future::ready(Ok(asked)))
    }

    fn ask(&self, id: &str, questions: JsonObject, now_ms: u64) -> BoxFuture<'static, Result<bool, StoreError>> {
        let asked = self.with(|tasks| match live(tasks, id, now_ms) {
            Some(task) if !task.state.is_terminal() => {
                task.asked.extend(questions);
                task.updated_at_ms = now_ms;
                true
            }
            _ => false,
        });
        Box::pin(std::future::ready(Ok(asked)))
    }

    fn answer(&self, id: &str, responses: JsonObject, now_ms: u64) -> BoxFuture<'static, Result<bool, StoreError>> {
        let taken = self.with(|tasks| match live(tasks, id, now_ms) {
            Some(task) if !task.state.is_terminal() => {
                let mut taken = false;
                for (key, response) in responses {
                    if task.asked.remove(&key).is_some() {
                        task.answers.insert(key, response);
                        taken = true;
                    }
                }
                if taken {
                    task.updated_at_ms = now_ms;
                }
                taken
            }
            _ => false,
        });
        Box::pin(std::future::ready(Ok(taken)))
    }

    fn take_answers(&self, id: &str) -> BoxFuture<'static, Result<JsonObject, StoreError>> {
        let answers = self
            .with(|tasks| live(tasks, id, now_ms()).map(|task| std::mem::take(&mut task.answers)).unwrap_or_default());
        Box::pin(std::future::ready(Ok(answers)))
    }

    fn list(
        &self,
        owner: &str,
        after: Option<TaskCursor>,
        limit: usize,
    ) -> BoxFuture<'static, Result<TaskPage, StoreError>> {
        let now = now_ms();
        let mut tasks: Vec<StoredTask> = self.with(|tasks| {
            let owned = |task: &&StoredTask| task.owner == owner && !task.expired(now);
            let later = |task: &&StoredTask| after.as_ref().is_none_or(|after| TaskCursor::of(task) > *after);
            tasks.values().filter(owned).filter(later).cloned().collect()
        });
        tasks.sort_by_key(TaskCursor::of);
        let more = tasks.len() > limit;
        tasks.truncate(limit);
        let next = if more { tasks.last().map(TaskCursor::of) } else { None };
        Box::pin(std::future::ready(Ok(TaskPage::new(tasks, next))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, ttl_ms: u64) -> StoredTask {
        let mut task = StoredTask::working(id, "local", "billing.export_invoices", now_ms());
        task.ttl_ms = ttl_ms;
        task.lease_until_ms = now_ms() + 60_000;
        task
    }

    #[tokio::test]
    async fn a_task_is_read_renewed_cancelled_and_finished_once() {
        let store = MemoryTasks::new();
        store.create(task("t1", 60_000)).await.unwrap();
        assert_eq!(store.get("t1").await.unwrap().unwrap().state, TaskState::Working);
        assert!(store.request_cancel("t1").await.unwrap());
        assert_eq!(store.renew("t1", now_ms() + 1).await.unwrap(), Renewal::Working { cancel_requested: true });
        // Its lease has not lapsed: a reader cannot declare it lost.
        assert!(!store.finish("t1", TaskState::Cancelled, now_ms(), FinishIf::LeaseLapsed).await.unwrap());
        assert!(store.finish("t1", TaskState::Cancelled, now_ms(), FinishIf::Working).await.unwrap());
        assert!(!store.finish("t1", TaskState::Working, now_ms(), FinishIf::Working).await.unwrap());
        assert_eq!(store.renew("t1", now_ms()).await.unwrap(), Renewal::Ended);
        assert!(!store.request_cancel("t1").await.unwrap());
        assert_eq!(store.renew("nope", now_ms()).await.unwrap(), Renewal::Unknown);
    }

    #[tokio::test]
    async fn questions_wait_until_answered_and_each_answer_is_taken_once() {
        let store = MemoryTasks::new();
        store.create(task("t1", 60_000)).await.unwrap();
        let question = |text: &str| serde_json::json!({"method": "elicitation/create", "params": {"message": text}});
        let asked = JsonObject::from_iter([("a".to_owned(), question("A?")), ("b".to_owned(), question("B?"))]);
        assert!(store.ask("t1", asked, now_ms()).await.unwrap());
        let answer = serde_json::json!({"action": "accept", "content": {}});
        let given = JsonObject::from_iter([("a".to_owned(), answer.clone()), ("zz".to_owned(), answer.clone())]);
        assert!(store.answer("t1", given, now_ms()).await.unwrap());
        let kept = store.get("t1").await.unwrap().unwrap();
        assert_eq!(kept.asked.keys().collect::<Vec<_>>(), ["b"], "the answered question left, the other stays");
        assert_eq!(store.take_answers("t1").await.unwrap(), JsonObject::from_iter([("a".to_owned(), answer.clone())]));
        assert!(store.take_answers("t1").await.unwrap().is_empty(), "taken once");
        // An answer to nothing asked, or to an ended task, is taken by nobody.
        assert!(
            !store.answer("t1", JsonObject::from_iter([("zz".to_owned(), answer.clone())]), now_ms()).await.unwrap()
        );
        store.finish("t1", TaskState::Cancelled, now_ms(), FinishIf::Working).await.unwrap();
        assert!(!store.ask("t1", JsonObject::new(), now_ms()).await.unwrap());
        assert!(!store.answer("t1", JsonObject::from_iter([("b".to_owned(), answer)]), now_ms()).await.unwrap());
    }

    #[tokio::test]
    async fn a_lapsed_lease_lets_a_reader_declare_the_task_lost() {
        let store = MemoryTasks::new();
        let mut lost = task("t1", 60_000);
        lost.lease_until_ms = now_ms() - 1;
        store.create(lost).await.unwrap();
        let failed = TaskState::Failed { error: error_object(-32603) };
        assert!(store.finish("t1", failed.clone(), now_ms(), FinishIf::LeaseLapsed).await.unwrap());
        assert_eq!(store.get("t1").await.unwrap().unwrap().state, failed);
    }

    fn owned(id: &str, owner: &str) -> StoredTask {
        StoredTask { owner: owner.to_owned(), ..task(id, 60_000) }
    }

    #[tokio::test]
    async fn a_caller_makes_room_only_from_its_own_ended_tasks_never_from_anothers() {
        let store = MemoryTasks::new().max_tasks(8).max_tasks_per_owner(3);
        store.create(owned("ana-1", "ana")).await.unwrap();
        store.finish("ana-1", TaskState::Cancelled, now_ms(), FinishIf::Working).await.unwrap();
        store.create(owned("ana-2", "ana")).await.unwrap();
        // Bo floods: at three of his own, each new task replaces his oldest ended one.
        for n in 0..50 {
            store.create(owned(&format!("bo-{n}"), "bo")).await.unwrap();
            store.finish(&format!("bo-{n}"), TaskState::Cancelled, now_ms(), FinishIf::Working).await.unwrap();
        }
        assert!(store.get("ana-1").await.unwrap().is_some(), "ana's ended task outlives bo's flood");
        assert!(store.get("ana-2").await.unwrap().is_some(), "ana's working task too");
        assert_eq!(store.list("bo", None, 100).await.unwrap().tasks.len(), 3);
        // Three working tasks of one caller: the fourth is refused, whoever else has room.
        for id in ["cy-1", "cy-2", "cy-3"] {
            store.create(owned(id, "cy")).await.unwrap();
        }
        let refused = store.create(owned("cy-4", "cy")).await.unwrap_err();
        assert!(refused.to_string().contains("3 tasks of this caller are working"), "{refused}");
        // Full in all (ana 2, bo 3, cy 3): dee's first task is refused, and nobody else's goes
        // to make room for it.
        let refused = store.create(owned("dee-1", "dee")).await.unwrap_err();
        assert!(refused.to_string().contains("none of this caller's has ended"), "{refused}");
        assert!(store.get("ana-1").await.unwrap().is_some());
    }

    #[tokio::test]
    async fn an_expired_task_is_gone_and_a_full_store_makes_room_from_ended_tasks() {
        let store = MemoryTasks::new().max_tasks(2);
        store.create(task("gone", 0)).await.unwrap();
        assert_eq!(store.get("gone").await.unwrap(), None);
        store.create(task("a", 60_000)).await.unwrap();
        store.create(task("b", 60_000)).await.unwrap();
        let refused = store.create(task("c", 60_000)).await.unwrap_err();
        assert!(refused.to_string().contains("none of this caller's has ended"), "{refused}");
        store.finish("a", TaskState::Cancelled, now_ms(), FinishIf::Working).await.unwrap();
        store.create(task("c", 60_000)).await.unwrap();
        assert_eq!(store.get("a").await.unwrap(), None);
        assert!(store.get("b").await.unwrap().is_some());
    }

    #[tokio::test]
    async fn an_owner_lists_only_its_own_tasks_page_by_page() {
        let store = MemoryTasks::new();
        // One clock reading for all: read per task, a busy machine's millisecond moves between
        // them and reorders the creations.
        let base = now_ms() - 1_000;
        for (id, owner, created) in [("b", "ana", 2), ("a", "ana", 2), ("c", "ana", 1), ("d", "bo", 1)] {
            let mut kept = task(id, 60_000);
            kept.owner = owner.to_owned();
            kept.created_at_ms = base + created;
            store.create(kept).await.unwrap();
        }
        let first = store.list("ana", None, 2).await.unwrap();
        let ids: Vec<&str> = first.tasks.iter().map(|task| task.id.as_str()).collect();
        assert_eq!(ids, ["c", "a"], "oldest first, then by id");
        let rest = store.list("ana", first.next.clone(), 2).await.unwrap();
        assert_eq!(rest.tasks.iter().map(|task| task.id.as_str()).collect::<Vec<_>>(), ["b"]);
        assert_eq!(rest.next, None);
        let cursor = first.next.unwrap();
        assert_eq!(TaskCursor::decode(&cursor.encode()), Some(cursor));
        assert_eq!(store.list("nobody", None, 10).await.unwrap(), TaskPage::default());
    }

    #[test]
    fn a_cursor_that_is_not_one_of_ours_is_refused() {
        for garbage in
            ["", ".", "12", "12.", ".abc", "x1.abc", "-1.abc", "1.a b", "1.a.b", "+1.abc", "99999999999999999999999.a"]
        {
            assert_eq!(TaskCursor::decode(garbage), None, "{garbage:?}");
        }
        assert_eq!(TaskCursor::decode("7.ab12"), Some(TaskCursor { created_at_ms: 7, id: "ab12".to_owned() }));
    }

    fn error_object(code: i64) -> rmcp::model::JsonObject {
        serde_json::json!({ "code": code, "message": "lost" }).as_object().cloned().unwrap()
    }
}
