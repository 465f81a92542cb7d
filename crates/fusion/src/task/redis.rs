//! Tasks in Redis (cargo feature `redis`): each operation one atomic Lua script, so a task
//! finished by its replica and declared lost by a reader on another at once ends one way only.
//!
//! A task is the hash `{prefix}task:{id}`, expiring with the task (`PEXPIRE` at creation; the
//! later writes are `HSET`s, which keep it):
//!
//! | field | holds |
//! |---|---|
//! | `json` | the [`StoredTask`] as created (serde JSON); the fields below override its own |
//! | `s` | `w` while it works, `e` once it ended |
//! | `state` | the [`TaskState`] as JSON once it ended (empty while it works) |
//! | `updated` | `updated_at_ms` |
//! | `lease` | `lease_until_ms` |
//! | `cancel` | `1` once a client asked it to stop, else `0` |
//! | `q:{key}` | a question its work waits on (an `InputRequest`, JSON) |
//! | `a:{key}` | a client's answer to it (JSON), until its work takes it |
//!
//! The fields a script reads or writes are plain strings, so that no script has to decode
//! JSON. The sorted set `{prefix}tasks-of:{owner}` indexes an owner's tasks by creation time,
//! for listing; it expires with the owner's last task, and a member whose task is gone is
//! dropped when a listing meets it. Unlike [`MemoryTasks`](super::MemoryTasks) the store is not bounded: Redis drops every
//! task once its time to live passed.

use std::sync::LazyLock;

use futures_util::future::BoxFuture;
use redis::Script;
use rmcp::model::JsonObject;

use super::store::{FinishIf, Renewal, StoreError, StoredTask, TaskCursor, TaskPage, TaskState, TaskStore, now_ms};
use crate::guard::RedisStore;

/// Keeps the task `ARGV[1]` (JSON) under `KEYS[1]` with the fields `s`, `state`, `updated`,
/// `lease`, `cancel` = `ARGV[2..6]`, for `ARGV[7]` milliseconds, and indexes its id `ARGV[9]`
/// in its owner's set `KEYS[2]` under its creation time `ARGV[8]` (the set lives as long as
/// its longest-lived task). A task kept under the same id before is replaced whole, so none of
/// its fields outlives it.
const CREATE_SCRIPT: &str = r"
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'json', ARGV[1], 's', ARGV[2], 'state', ARGV[3], 'updated', ARGV[4], 'lease', ARGV[5], 'cancel', ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[7])
redis.call('ZADD', KEYS[2], ARGV[8], ARGV[9])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[7]) then
  redis.call('PEXPIRE', KEYS[2], ARGV[7])
end
return 1
";

/// The ids and creation times (`{id, time, id, time, …}`) of the owner's set `KEYS[1]` that
/// come after the time `ARGV[1]` and id `ARGV[2]` (none: `-inf` and the empty string), oldest
/// first; at most `ARGV[3]`.
const LIST_SCRIPT: &str = r"
local after_score, after_id, want = ARGV[1], ARGV[2], tonumber(ARGV[3])
local out, found, offset = {}, 0, 0
while found < want do
  local page = redis.call('ZRANGEBYSCORE', KEYS[1], after_score, '+inf', 'WITHSCORES', 'LIMIT', offset, 64)
  if #page == 0 then
    break
  end
  for i = 1, #page, 2 do
    if after_id == '' or tonumber(page[i + 1]) > tonumber(after_score) or page[i] > after_id then
      out[#out + 1] = page[i]
      out[#out + 1] = page[i + 1]
      found = found + 1
      if found >= want then
        break
      end
    end
  end
  offset = offset + 64
end
return out
";

/// Drops the ids `ARGV` from the owner's set `KEYS[1]`: their tasks are gone.
const UNLIST_SCRIPT: &str = r"
return redis.call('ZREM', KEYS[1], unpack(ARGV))
";

/// The fields of the task `KEYS[1]`: `{json, s, state, updated, lease, cancel}`, all nil when
/// there is no such task, then each question and answer field and its value.
const GET_SCRIPT: &str = r"
local fields = redis.call('HMGET', KEYS[1], 'json', 's', 'state', 'updated', 'lease', 'cancel')
if not fields[1] then
  return fields
end
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local prefix = string.sub(all[i], 1, 2)
  if prefix == 'q:' or prefix == 'a:' then
    fields[#fields + 1] = all[i]
    fields[#fields + 1] = all[i + 1]
  end
end
return fields
";
/// Adds the questions `ARGV[2..]` (key, JSON, key, JSON, …) to the working task `KEYS[1]` at
/// the time `ARGV[1]`. Returns 1 when it was working, else 0.
const ASK_SCRIPT: &str = r"
if redis.call('HGET', KEYS[1], 's') ~= 'w' then
  return 0
end
for i = 2, #ARGV, 2 do
  redis.call('HSET', KEYS[1], 'q:' .. ARGV[i], ARGV[i + 1])
end
redis.call('HSET', KEYS[1], 'updated', ARGV[1])
return 1
";
/// Takes the answers `ARGV[2..]` (key, JSON, …) to questions the working task `KEYS[1]` waits
/// on, at the time `ARGV[1]`: each answered question becomes its answer; others are ignored.
/// Returns 1 when any was taken, else 0.
const ANSWER_SCRIPT: &str = r"
if redis.call('HGET', KEYS[1], 's') ~= 'w' then
  return 0
end
local taken = 0
for i = 2, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], 'q:' .. ARGV[i]) == 1 then
    redis.call('HDEL', KEYS[1], 'q:' .. ARGV[i])
    redis.call('HSET', KEYS[1], 'a:' .. ARGV[i], ARGV[i + 1])
    taken = 1
  end
end
if taken == 1 then
  redis.call('HSET', KEYS[1], 'updated', ARGV[1])
end
return taken
";
/// Takes the answers of the task `KEYS[1]` (each once): `{key, JSON, key, JSON, …}`.
const TAKE_SCRIPT: &str = r"
local all = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 2) == 'a:' then
    redis.call('HDEL', KEYS[1], all[i])
    out[#out + 1] = string.sub(all[i], 3)
    out[#out + 1] = all[i + 1]
  end
end
return out
";

/// Extends the lease of the working task `KEYS[1]` to `ARGV[1]` (never shortens it). Returns
/// 0 when there is no such task, 1 when it ended, 2 when it works, 3 when it works and a
/// client asked it to stop.
const RENEW_SCRIPT: &str = r"
local task = redis.call('HMGET', KEYS[1], 's', 'lease', 'cancel')
if not task[1] then
  return 0
end
if task[1] ~= 'w' then
  return 1
end
if tonumber(ARGV[1]) > tonumber(task[2]) then
  redis.call('HSET', KEYS[1], 'lease', ARGV[1])
end
if task[3] == '1' then
  return 3
end
return 2
";

/// Ends the working task `KEYS[1]` with `s` = `ARGV[1]` and `state` = `ARGV[2]` at the time
/// `ARGV[3]`, when `ARGV[4]` is `working`, or `lapsed` and its lease ended before `ARGV[3]`.
/// Returns 1 when it did, 0 otherwise.
const FINISH_SCRIPT: &str = r"
local task = redis.call('HMGET', KEYS[1], 's', 'lease')
if task[1] ~= 'w' then
  return 0
end
if ARGV[4] == 'lapsed' and tonumber(task[2]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], 's', ARGV[1], 'state', ARGV[2], 'updated', ARGV[3])
return 1
";

/// Marks the working task `KEYS[1]` as asked to stop. Returns 1 when it was working, else 0.
const CANCEL_SCRIPT: &str = r"
if redis.call('HGET', KEYS[1], 's') ~= 'w' then
  return 0
end
redis.call('HSET', KEYS[1], 'cancel', '1')
return 1
";

/// The largest time a Lua number (a double) holds exactly; later times are clamped to it
/// (still some 285,000 years away), so that the scripts' comparisons stay exact.
const MAX_EXACT_MS: u64 = (1 << 53) - 1;

/// The task scripts, hashed once per process rather than per store: they are the same for all.
struct Scripts {
    create: Script,
    get: Script,
    renew: Script,
    finish: Script,
    cancel: Script,
    list: Script,
    unlist: Script,
    ask: Script,
    answer: Script,
    take: Script,
}

/// The scripts every [`RedisStore`] runs for tasks.
static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| Scripts {
    create: Script::new(CREATE_SCRIPT),
    get: Script::new(GET_SCRIPT),
    renew: Script::new(RENEW_SCRIPT),
    finish: Script::new(FINISH_SCRIPT),
    cancel: Script::new(CANCEL_SCRIPT),
    list: Script::new(LIST_SCRIPT),
    unlist: Script::new(UNLIST_SCRIPT),
    ask: Script::new(ASK_SCRIPT),
    answer: Script::new(ANSWER_SCRIPT),
    take: Script::new(TAKE_SCRIPT),
});

/// The key of the task `id`.
fn task_key(store: &RedisStore, id: &str) -> String {
    format!("{}task:{id}", store.inner.prefix)
}

/// The key of the set that indexes the tasks of `owner`.
fn owner_key(store: &RedisStore, owner: &str) -> String {
    format!("{}tasks-of:{owner}", store.inner.prefix)
}

/// The `s` field of `state`, and its `state` field.
fn state_fields(state: &TaskState) -> Result<(&'static str, String), serde_json::Error> {
    if state.is_terminal() { Ok(("e", serde_json::to_string(state)?)) } else { Ok(("w", String::new())) }
}

/// An error about a task record this store cannot read or write.
fn record_error(store: &RedisStore, what: impl std::fmt::Display) -> StoreError {
    StoreError(format!("Redis at {}: {what}", store.inner.target))
}

/// The task whose fields `GET_SCRIPT` returned, if there is one.
fn decode(fields: Vec<Option<String>>) -> Result<Option<StoredTask>, String> {
    let mut fields = fields.into_iter();
    let Some(json) = fields.next().flatten() else { return Ok(None) };
    let mut field = |name: &str| fields.next().flatten().ok_or_else(|| format!("a task without its `{name}` field"));
    let (s, state, updated, lease, cancel) =
        (field("s")?, field("state")?, field("updated")?, field("lease")?, field("cancel")?);
    let number = |name: &str, value: &str| {
        value.parse::<u64>().map_err(|error| format!("a task whose `{name}` is {value:?}: {error}"))
    };
    let mut task: StoredTask =
        serde_json::from_str(&json).map_err(|error| format!("a task record that does not decode: {error}"))?;
    task.state = match s.as_str() {
        "w" => TaskState::Working,
        "e" => serde_json::from_str(&state).map_err(|error| format!("a task state that does not decode: {error}"))?,
        other => return Err(format!("a task in an unknown state {other:?}")),
    };
    task.updated_at_ms = number("updated", &updated)?;
    task.lease_until_ms = number("lease", &lease)?;
    task.cancel_requested = cancel == "1";
    while let (Some(Some(name)), Some(Some(value))) = (fields.next(), fields.next()) {
        let value =
            serde_json::from_str(&value).map_err(|error| format!("a task's {name:?} that does not decode: {error}"))?;
        match name.split_at_checked(2) {
            Some(("q:", key)) => task.asked.insert(key.to_owned(), value),
            Some(("a:", key)) => task.answers.insert(key.to_owned(), value),
            _ => return Err(format!("a task field {name:?} that is neither a question nor an answer")),
        };
    }
    Ok(Some(task))
}

/// `ARGV` of the question and answer scripts: the time, then each key and its JSON.
fn keyed_args(now_ms: u64, entries: JsonObject) -> Vec<String> {
    let mut args = vec![now_ms.min(MAX_EXACT_MS).to_string()];
    for (key, value) in entries {
        args.push(key);
        args.push(value.to_string());
    }
    args
}

impl TaskStore for RedisStore {
    fn create(&self, task: StoredTask) -> BoxFuture<'static, Result<(), StoreError>> {
        let store = self.clone();
        Box::pin(async move {
            let expires_at = task.created_at_ms.saturating_add(task.ttl_ms);
            let now = now_ms();
            if expires_at <= now {
                // Expired already: a get would not find it anyway.
                return Ok(());
            }
            let remaining = (expires_at - now).min(MAX_EXACT_MS);
            let json = serde_json::to_string(&task).map_err(|error| record_error(&store, error))?;
            let (s, state) = state_fields(&task.state).map_err(|error| record_error(&store, error))?;
            let args = vec![
                json,
                s.to_owned(),
                state,
                task.updated_at_ms.to_string(),
                task.lease_until_ms.min(MAX_EXACT_MS).to_string(),
                if task.cancel_requested { "1" } else { "0" }.to_owned(),
                remaining.to_string(),
                task.created_at_ms.min(MAX_EXACT_MS).to_string(),
                task.id.clone(),
            ];
            let keys = [task_key(&store, &task.id), owner_key(&store, &task.owner)];
            store.run_script_on::<i64>(&SCRIPTS.create, &keys, args).await.map(drop)
        })
    }

    fn get(&self, id: &str) -> BoxFuture<'static, Result<Option<StoredTask>, StoreError>> {
        let store = self.clone();
        let key = task_key(self, id);
        Box::pin(async move {
            let fields: Vec<Option<String>> = store.run_script(&SCRIPTS.get, key, Vec::new()).await?;
            let task = decode(fields).map_err(|error| record_error(&store, error))?;
            // Redis drops it on its own clock; this replica's may be a little ahead.
            Ok(task.filter(|task| !task.expired(now_ms())))
        })
    }

    fn renew(&self, id: &str, until_ms: u64) -> BoxFuture<'static, Result<Renewal, StoreError>> {
        let store = self.clone();
        let key = task_key(self, id);
        let args = vec![until_ms.min(MAX_EXACT_MS).to_string()];
        Box::pin(async move {
            match store.run_script::<i64>(&SCRIPTS.renew, key, args).await? {
                0 => Ok(Renewal::Unknown),
                1 => Ok(Renewal::Ended),
                2 => Ok(Renewal::Working { cancel_requested: false }),
                3 => Ok(Renewal::Working { cancel_requested: true }),
                other => Err(record_error(&store, format!("unexpected reply of the task renewal script: {other}"))),
            }
        })
    }

    fn finish(
        &self,
        id: &str,
        state: TaskState,
        now_ms: u64,
        condition: FinishIf,
    ) -> BoxFuture<'static, Result<bool, StoreError>> {
        let store = self.clone();
        let key = task_key(self, id);
        let condition = match condition {
            FinishIf::Working => "working",
            FinishIf::LeaseLapsed => "lapsed",
        };
        Box::pin(async move {
            let (s, state) = state_fields(&state).map_err(|error| record_error(&store, error))?;
            let args = vec![s.to_owned(), state, now_ms.min(MAX_EXACT_MS).to_string(), condition.to_owned()];
            Ok(store.run_script::<i64>(&SCRIPTS.finish, key, args).await? == 1)
        })
    }

    fn request_cancel(&self, id: &str) -> BoxFuture<'static, Result<bool, StoreError>> {
        let store = self.clone();
        let key = task_key(self, id);
        Box::pin(async move { Ok(store.run_script::<i64>(&SCRIPTS.cancel, key, Vec::new()).await? == 1) })
    }

    fn ask(&self, id: &str, questions: JsonObject, now_ms: u64) -> BoxFuture<'static, Result<bool, StoreError>> {
        let store = self.clone();
        let key = task_key(self, id);
        let args = keyed_args(now_ms, questions);
        Box::pin(async move { Ok(store.run_script::<i64>(&SCRIPTS.ask, key, args).await? == 1) })
    }

    fn answer(&self, id: &str, responses: JsonObject, now_ms: u64) -> BoxFuture<'static, Result<bool, StoreError>> {
        let store = self.clone();
        let key = task_key(self, id);
        let args = keyed_args(now_ms, responses);
        Box::pin(async move { Ok(store.run_script::<i64>(&SCRIPTS.answer, key, args).await? == 1) })
    }

    fn take_answers(&self, id: &str) -> BoxFuture<'static, Result<JsonObject, StoreError>> {
        let store = self.clone();
        let key = task_key(self, id);
        Box::pin(async move {
            let taken: Vec<String> = store.run_script(&SCRIPTS.take, key, Vec::new()).await?;
            let mut answers = JsonObject::new();
            for pair in taken.chunks_exact(2) {
                let value = serde_json::from_str(&pair[1])
                    .map_err(|error| record_error(&store, format!("an answer that does not decode: {error}")))?;
                answers.insert(pair[0].clone(), value);
            }
            Ok(answers)
        })
    }

    fn list(
        &self,
        owner: &str,
        after: Option<TaskCursor>,
        limit: usize,
    ) -> BoxFuture<'static, Result<TaskPage, StoreError>> {
        let store = self.clone();
        let (owner, index) = (owner.to_owned(), owner_key(self, owner));
        Box::pin(async move {
            let (score, id) = match after {
                Some(after) => (after.created_at_ms.min(MAX_EXACT_MS).to_string(), after.id),
                None => ("-inf".to_owned(), String::new()),
            };
            // One more than asked for: whether there is a next page.
            let args = vec![score, id, limit.saturating_add(1).to_string()];
            let found: Vec<String> = store.run_script(&SCRIPTS.list, index.clone(), args).await?;
            let mut listed = Vec::new();
            for pair in found.chunks_exact(2) {
                let created_at_ms = pair[1].parse().map_err(|error| {
                    record_error(&store, format!("a task index whose time is {:?}: {error}", pair[1]))
                })?;
                listed.push(TaskCursor { created_at_ms, id: pair[0].clone() });
            }
            let next = (limit > 0 && listed.len() > limit).then(|| listed[limit - 1].clone());
            listed.truncate(limit);
            let kept = futures_util::future::try_join_all(listed.iter().map(|at| store.get(&at.id))).await?;
            let mut tasks = Vec::with_capacity(kept.len());
            let mut gone = Vec::new();
            for (at, task) in listed.into_iter().zip(kept) {
                match task {
                    Some(task) if task.owner == owner => tasks.push(task),
                    _ => gone.push(at.id),
                }
            }
            if !gone.is_empty() {
                store.run_script::<i64>(&SCRIPTS.unlist, index, gone).await?;
            }
            Ok(TaskPage::new(tasks, next))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(values: [Option<&str>; 6]) -> Vec<Option<String>> {
        values.into_iter().map(|value| value.map(str::to_owned)).collect()
    }

    #[test]
    fn the_fields_override_the_record_as_created() {
        let json = serde_json::to_string(&StoredTask::working("t1", "local", "billing.export", 5)).unwrap();
        let cancelled = r#"{"status":"cancelled"}"#;
        let ended = fields([Some(&json), Some("e"), Some(cancelled), Some("9"), Some("7"), Some("1")]);
        let task = decode(ended).unwrap().unwrap();
        assert_eq!(task.state, TaskState::Cancelled);
        assert_eq!((task.created_at_ms, task.updated_at_ms, task.lease_until_ms), (5, 9, 7));
        assert!(task.cancel_requested);
        assert_eq!(decode(fields([None; 6])), Ok(None));
        let unknown = decode(fields([Some(&json), Some("z"), Some(""), Some("9"), Some("7"), Some("0")]));
        assert!(unknown.unwrap_err().contains("unknown state"));
    }

    #[test]
    fn only_a_terminal_state_is_kept_as_json() {
        assert_eq!(state_fields(&TaskState::Working).unwrap(), ("w", String::new()));
        assert_eq!(state_fields(&TaskState::Cancelled).unwrap(), ("e", r#"{"status":"cancelled"}"#.to_owned()));
    }

    #[test]
    fn writes_after_creation_keep_the_expiry() {
        for script in [
            RENEW_SCRIPT,
            FINISH_SCRIPT,
            CANCEL_SCRIPT,
            LIST_SCRIPT,
            UNLIST_SCRIPT,
            ASK_SCRIPT,
            ANSWER_SCRIPT,
            TAKE_SCRIPT,
        ] {
            assert!(!script.contains("EXPIRE") && !script.contains("'SET'") && !script.contains("'DEL'"), "{script}");
        }
        assert!(CREATE_SCRIPT.contains("redis.call('PEXPIRE', KEYS[1], ARGV[7])"));
    }
}
