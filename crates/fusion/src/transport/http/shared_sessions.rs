//! Sessions kept in Redis, so that replicas of one server behind a load balancer serve each
//! other's sessions: a request naming a session this process does not hold restores it from
//! what the session's `initialize` kept there (its owner, protocol version and client
//! capabilities; its logging level and resource subscriptions as they were set since), and
//! what one replica tells a session reaches it through a Redis channel every replica listens
//! on.
//!
//! Each session is one hash, `PREFIX session:ID` (`init`, `owner`, `level`), and one set of the
//! URIs it subscribed to, `PREFIX session:ID:uris`; both expire after the idle timeout and are
//! kept alive by use. `PREFIX subscribers:URI` holds the sessions subscribed to a URI (those
//! that expired are dropped the next time it changes), `PREFIX sessions-of:OWNER` each owner's
//! sessions by when they idle out (what caps a caller across replicas). The channel is
//! `PREFIX relay`.

#![allow(deprecated, reason = "a session's logging level (deprecated by SEP-2577) is kept with the session")]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use redis::Script;
use rmcp::model::{InitializeRequestParams, LoggingLevel, ServerNotification};
use rmcp::transport::streamable_http_server::session::store::{SessionState, SessionStore, SessionStoreError};
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager as _};
use tokio_util::sync::CancellationToken;

use super::sessions::OwnedSessions;
use crate::guard::{FailurePolicy, RedisStore};
use crate::lock::locked;
use crate::server::ListChanged;
use crate::server::{FusionServer, Relay, Relayed};

/// Subscribes a session to a URI within its bound: `-held` when it holds its maximum already.
const SUBSCRIBE_SCRIPT: &str = r"
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 then
  local held = redis.call('SCARD', KEYS[1])
  if held >= tonumber(ARGV[2]) then return -held end
  redis.call('SADD', KEYS[1], ARGV[1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('SADD', KEYS[2], ARGV[4])
return 1
";

/// Ends a session: its record, its subscriptions, its place among each URI's subscribers and
/// among its owner's sessions.
const DELETE_SCRIPT: &str = r"
for _, uri in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  redis.call('SREM', ARGV[1] .. uri, ARGV[2])
end
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner then redis.call('ZREM', ARGV[3] .. owner, ARGV[2]) end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
";

/// Tells every replica that a URI changed, with the sessions still alive among its subscribers
/// (those that expired are dropped from the set on the way).
const UPDATED_SCRIPT: &str = r"
local live = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('EXISTS', ARGV[1] .. id) == 1 then
    table.insert(live, id)
  else
    redis.call('SREM', KEYS[1], id)
  end
end
redis.call('PUBLISH', ARGV[2], 'u\n' .. table.concat(live, ',') .. '\n' .. ARGV[3])
return #live
";

/// Counts an owner's sessions and, when it holds fewer than its cap (`-1`: none), takes a place
/// among them for the session an `initialize` is opening, in one step: replicas opening
/// sessions of one owner at once cannot all see room for one more. The place is a reservation
/// that lapses on its own; the session, once opened, takes its own place.
const RESERVE_SCRIPT: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local held = redis.call('ZCARD', KEYS[1])
local max = tonumber(ARGV[2])
if max >= 0 and held >= max then return -1 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return held
";

/// How long a reservation holds an owner's place while its `initialize` is answered.
const RESERVATION_MS: u64 = 60_000;

/// The place an `initialize` took among its owner's sessions, given back once it is answered.
#[derive(Debug, Clone)]
pub(super) struct Reservation {
    owner_key: String,
    member: String,
}

/// Sessions in Redis, and the relay of what replicas tell them; clones share everything.
#[derive(Clone)]
pub(super) struct SharedSessions {
    store: RedisStore,
    idle: Duration,
    /// What an `initialize` gets when Redis does not answer within `timeout`.
    policy: FailurePolicy,
    timeout: Duration,
    channel: Arc<str>,
    scripts: Arc<[Script; 4]>,
    /// When this process last told Redis that each session it holds is in use.
    touched: Arc<Mutex<HashMap<Arc<str>, Instant>>>,
}

/// Why a new session was not opened.
pub(super) enum NotOpened {
    /// The caller holds `max` sessions across the replicas.
    CallerFull(usize),
    /// Redis did not answer, and the failure policy is closed.
    StoreDown,
}

/// What the record of a session says, as far as a request naming it needs.
pub(super) struct Record {
    /// Who opened it (see `Owner::stored`).
    pub owner: String,
    /// Whether its client speaks the experimental tasks of MCP 2025-11-25.
    pub experimental_tasks: bool,
}

impl std::fmt::Debug for SharedSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedSessions").field("store", &self.store).finish_non_exhaustive()
    }
}

impl SharedSessions {
    pub(super) fn new(
        store: RedisStore,
        idle: Duration,
        (policy, timeout): (FailurePolicy, Duration),
    ) -> SharedSessions {
        let channel = Arc::from(format!("{}relay", store.key_prefix()));
        let scripts = Arc::new([SUBSCRIBE_SCRIPT, DELETE_SCRIPT, UPDATED_SCRIPT, RESERVE_SCRIPT].map(Script::new));
        SharedSessions { store, idle, policy, timeout, channel, scripts, touched: Arc::default() }
    }

    fn owner_key(&self, owner: &str) -> String {
        format!("{}sessions-of:{owner}", self.store.key_prefix())
    }

    fn now_ms() -> u64 {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        u64::try_from(now.as_millis()).unwrap_or(u64::MAX)
    }

    /// Whether `owner` may open one more session, holding fewer than `max` across the replicas
    /// (`None` for a caller nobody can tell apart: uncapped), and if so the place it took among
    /// them, in one step. Redis not answering in time decides by the failure policy.
    pub(super) async fn may_open(&self, owner: &str, max: Option<usize>) -> Result<Option<Reservation>, NotOpened> {
        let reservation =
            Reservation { owner_key: self.owner_key(owner), member: format!("opening:{}", uuid::Uuid::new_v4()) };
        let now = Self::now_ms();
        let args = [
            now.to_string(),
            max.map_or_else(|| "-1".to_owned(), |max| max.to_string()),
            now.saturating_add(RESERVATION_MS).to_string(),
            reservation.member.clone(),
            self.idle_ms().max(RESERVATION_MS).to_string(),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let keys = [reservation.owner_key.clone()];
        let reserved = self.store.invoke::<i64>("session_reserve", &self.scripts[3], &keys, &args);
        match tokio::time::timeout(self.timeout, reserved).await {
            Ok(Ok(held)) if held < 0 => Err(NotOpened::CallerFull(max.unwrap_or_default())),
            Ok(Ok(_)) => Ok(Some(reservation)),
            Ok(Err(error)) => self.down(&error.to_string()).map(|()| None),
            Err(_) => self.down(&format!("no answer within {} ms", self.timeout.as_millis())).map(|()| None),
        }
    }

    /// Gives back the place `reservation` took: the session it was for holds its own by now,
    /// or was not opened. Awaited before the `initialize` is answered, so the caller's next one
    /// finds the place free.
    pub(super) async fn release(&self, reservation: Reservation) {
        let mut release = redis::cmd("ZREM");
        release.arg(&reservation.owner_key).arg(&reservation.member);
        // Not given back, it lapses on its own within a minute.
        let _ = tokio::time::timeout(self.timeout, self.store.query::<()>("session_release", &release)).await;
    }

    fn down(&self, why: &str) -> Result<(), NotOpened> {
        match self.policy {
            FailurePolicy::Closed => {
                tracing::warn!(redis = %self.store.target(), "refused a new session: the session store failed ({why})");
                Err(NotOpened::StoreDown)
            }
            _ => {
                tracing::warn!(redis = %self.store.target(), "a new session is served by this replica only: the session store failed ({why})");
                Ok(())
            }
        }
    }

    fn record_key(&self, id: &str) -> String {
        format!("{}session:{id}", self.store.key_prefix())
    }

    fn uris_key(&self, id: &str) -> String {
        format!("{}session:{id}:uris", self.store.key_prefix())
    }

    fn subscribers_key(&self, uri: &str) -> String {
        format!("{}subscribers:{uri}", self.store.key_prefix())
    }

    fn idle_ms(&self) -> u64 {
        u64::try_from(self.idle.as_millis()).unwrap_or(u64::MAX)
    }

    /// Keeps a session that just answered `initialize`, before its client learns its id.
    pub(super) async fn create(&self, id: &str, init: &InitializeRequestParams, owner: &str) {
        let Ok(init) = serde_json::to_string(init) else { return };
        let (key, owner_key) = (self.record_key(id), self.owner_key(owner));
        let mut pipeline = redis::pipe();
        pipeline.atomic().hset_multiple(&key, &[("init", init.as_str()), ("owner", owner)]).ignore();
        pipeline.cmd("PEXPIRE").arg(&key).arg(self.idle_ms()).ignore();
        pipeline.cmd("ZADD").arg(&owner_key).arg(Self::now_ms().saturating_add(self.idle_ms())).arg(id).ignore();
        pipeline.cmd("PEXPIRE").arg(&owner_key).arg(self.idle_ms()).ignore();
        let kept = tokio::time::timeout(self.timeout, self.store.query::<()>("session_create", &pipeline)).await;
        if !matches!(kept, Ok(Ok(()))) {
            tracing::warn!(
                redis = %self.store.target(),
                "a new session is served by this replica only: it could not be kept in Redis in {} ms",
                self.timeout.as_millis()
            );
        }
        locked(&self.touched).insert(Arc::from(id), Instant::now());
    }

    /// Those of `held` whose record is gone from the store: ended, or expired.
    async fn ended_of(&self, held: &[SessionId]) -> Result<Vec<SessionId>, redis::RedisError> {
        let mut ended = Vec::new();
        for chunk in held.chunks(512) {
            let mut pipeline = redis::pipe();
            for id in chunk {
                pipeline.cmd("EXISTS").arg(self.record_key(id));
            }
            let exists: Vec<bool> = self.store.query("session_exists", &pipeline).await?;
            ended.extend(chunk.iter().zip(exists).filter(|(_, exists)| !exists).map(|(id, _)| id.clone()));
        }
        Ok(ended)
    }

    /// The record of session `id`; `None` when there is none (it ended, expired, or never was).
    pub(super) async fn record(&self, id: &str) -> Result<Option<Record>, redis::RedisError> {
        let mut read = redis::cmd("HMGET");
        read.arg(self.record_key(id)).arg("owner").arg("init");
        let (owner, init): (Option<String>, Option<String>) =
            tokio::time::timeout(self.timeout, self.store.query("session_owner", &read)).await.map_err(|_| {
                let why = format!("no answer within {} ms", self.timeout.as_millis());
                redis::RedisError::from(std::io::Error::new(std::io::ErrorKind::TimedOut, why))
            })??;
        let (Some(owner), Some(init)) = (owner, init) else { return Ok(None) };
        let experimental_tasks = serde_json::from_str::<InitializeRequestParams>(&init)
            .is_ok_and(|init| crate::task::experimental::spoken_by(&init));
        Ok(Some(Record { owner, experimental_tasks }))
    }

    /// Tells Redis that session `id` is in use, at most every quarter of its idle timeout per
    /// process, without waiting: a session's record lives as long as any replica uses it.
    pub(super) fn touch(&self, id: &str, owner: impl FnOnce() -> String) {
        let now = Instant::now();
        {
            let mut touched = locked(&self.touched);
            match touched.get_mut(id) {
                Some(last) if now.duration_since(*last) < self.idle / 4 => return,
                Some(last) => *last = now,
                None => {
                    touched.insert(Arc::from(id), now);
                }
            }
        }
        let (shared, id, owner) = (self.clone(), id.to_owned(), self.owner_key(&owner()));
        tokio::spawn(async move {
            let idle = shared.idle_ms();
            let mut pipeline = redis::pipe();
            pipeline.cmd("PEXPIRE").arg(shared.record_key(&id)).arg(idle).ignore();
            pipeline.cmd("PEXPIRE").arg(shared.uris_key(&id)).arg(idle).ignore();
            pipeline.cmd("ZADD").arg(&owner).arg("XX").arg(Self::now_ms().saturating_add(idle)).arg(&id).ignore();
            pipeline.cmd("PEXPIRE").arg(&owner).arg(idle).ignore();
            if let Err(error) = shared.store.query::<()>("session_touch", &pipeline).await {
                tracing::debug!(session = %id, "cannot keep a session's record alive: {error}");
            }
        });
    }

    /// Forgets what this process noted of session `id`, which it no longer holds.
    pub(super) fn let_go(&self, id: &str) {
        let mut touched = locked(&self.touched);
        touched.remove(id);
        if touched.capacity() > 64 && touched.len() < touched.capacity() / 8 {
            let len = touched.len();
            touched.shrink_to(len * 2);
        }
    }

    /// Publishes `message` on the relay channel, on a task of its own.
    fn publish(&self, message: String) {
        let shared = self.clone();
        tokio::spawn(async move {
            let sent: redis::RedisResult<i64> =
                shared.store.query("publish", redis::cmd("PUBLISH").arg(&*shared.channel).arg(message)).await;
            if let Err(error) = sent {
                tracing::warn!("a notification for other replicas was lost: {error}");
            }
        });
    }

    /// Listens on the relay channel until `stop`, telling `server` what comes and closing the
    /// sessions of `manager` that another replica ended; connects again when the connection
    /// drops (what was sent in the meantime is missed: notifications are hints a client may
    /// miss).
    pub(super) fn listen(self, server: FusionServer, manager: Arc<OwnedSessions>, stop: CancellationToken) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!("the endpoint was built outside a Tokio runtime: it hears nothing from other replicas");
            return;
        };
        runtime.spawn(async move {
            let mut delay = Duration::from_millis(50);
            loop {
                let listening = async {
                    let mut pubsub = self.store.inner.client.get_async_pubsub().await?;
                    pubsub.subscribe(&*self.channel).await?;
                    delay = Duration::from_millis(50);
                    // What ended while nobody listened (a DELETE through another replica during
                    // a reconnection) was told to no one: the sessions held here are checked
                    // against their records once listening, and those gone end here too.
                    for id in self.ended_of(&manager.held()).await? {
                        tracing::info!(session = %id, "a session ended elsewhere while the relay was away: ending it here");
                        let _ = manager.close_session(&id).await;
                    }
                    let mut messages = pubsub.into_on_message();
                    while let Some(message) = messages.next().await {
                        let Ok(payload) = message.get_payload::<String>() else { continue };
                        match parse(&payload) {
                            Some(Message::Relayed(relayed)) => server.told(relayed),
                            Some(Message::Closed(id)) => {
                                let _ = manager.close_session(&id.as_str().into()).await;
                            }
                            None => tracing::debug!("an unreadable message on the relay channel was ignored"),
                        }
                    }
                    Ok::<(), redis::RedisError>(())
                };
                tokio::select! {
                    () = stop.cancelled() => return,
                    ended = listening => match ended {
                        Ok(()) => tracing::warn!("the relay channel closed; listening again"),
                        Err(error) => tracing::warn!("cannot listen on the relay channel ({error}); trying again"),
                    },
                }
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(delay) => delay = (delay * 2).min(Duration::from_secs(2)),
                }
            }
        });
    }
}

/// Whether `id` has the form of the session ids rmcp issues (a UUID, in hex and hyphens): no
/// other string a client sends is looked up, so none names a key of the store.
pub(super) fn issued_form(id: &str) -> bool {
    id.len() == 36 && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}

/// What comes on the relay channel.
#[derive(Debug)]
enum Message {
    Relayed(Relayed),
    /// A session was ended (`DELETE`) through some replica.
    Closed(String),
}

/// Reads a message of the relay channel: its kind on the first line, then its fields; a
/// session id never holds a line break, so what may (a URI, a notification) comes last.
fn parse(payload: &str) -> Option<Message> {
    let (kind, rest) = payload.split_once('\n')?;
    Some(match kind {
        "u" => {
            let (sessions, uri) = rest.split_once('\n')?;
            let sessions = sessions.split(',').filter(|id| !id.is_empty()).map(str::to_owned).collect();
            Message::Relayed(Relayed::Updated { uri: uri.to_owned(), sessions })
        }
        "l" => Message::Relayed(Relayed::ListChanged(match rest {
            "tools" => ListChanged::Tools,
            "resources" => ListChanged::Resources,
            _ => return None,
        })),
        "n" => {
            let (session, notification) = rest.split_once('\n')?;
            let notification = serde_json::from_str(notification).ok()?;
            Message::Relayed(Relayed::ToSession { session: session.to_owned(), notification })
        }
        "v" => {
            let (session, level) = rest.split_once('\n')?;
            let level = serde_json::from_value(serde_json::Value::String(level.to_owned())).ok()?;
            Message::Relayed(Relayed::Level { session: session.to_owned(), level })
        }
        "c" => Message::Closed(rest.to_owned()),
        _ => return None,
    })
}

fn level_name(level: LoggingLevel) -> String {
    match serde_json::to_value(level) {
        Ok(serde_json::Value::String(name)) => name,
        _ => "info".to_owned(),
    }
}

impl Relay for SharedSessions {
    fn resource_updated(&self, uri: &str) {
        let (shared, uri) = (self.clone(), uri.to_owned());
        tokio::spawn(async move {
            let keys = [shared.subscribers_key(&uri)];
            let prefix = shared.record_key("");
            let told: redis::RedisResult<i64> =
                shared.store.invoke("publish", &shared.scripts[2], &keys, &[&prefix, &shared.channel, &uri]).await;
            if let Err(error) = told {
                tracing::warn!(uri, "resources/updated did not reach the other replicas: {error}");
            }
        });
    }

    fn list_changed(&self, which: ListChanged) {
        let name = match which {
            ListChanged::Tools => "tools",
            ListChanged::Resources => "resources",
        };
        self.publish(format!("l\n{name}"));
    }

    fn to_session(&self, session: &str, notification: &ServerNotification) {
        let Ok(json) = serde_json::to_string(notification) else { return };
        self.publish(format!("n\n{session}\n{json}"));
    }

    fn subscribe(&self, session: &str, uri: &str, limit: usize) -> BoxFuture<'static, Result<(), usize>> {
        let keys = [self.uris_key(session), self.subscribers_key(uri)];
        let (session, uri, idle) = (session.to_owned(), uri.to_owned(), self.idle_ms().to_string());
        let shared = self.clone();
        Box::pin(async move {
            let limit = limit.to_string();
            match shared
                .store
                .invoke::<i64>("subscribe", &shared.scripts[0], &keys, &[&uri, &limit, &idle, &session])
                .await
            {
                Ok(held) if held < 0 => Err(usize::try_from(-held).unwrap_or(usize::MAX)),
                Ok(_) => Ok(()),
                Err(error) => {
                    // Kept here all the same: this replica tells the session what changes.
                    tracing::warn!(session, uri, "a subscription is known to this replica only: {error}");
                    Ok(())
                }
            }
        })
    }

    fn unsubscribe(&self, session: &str, uri: &str) -> BoxFuture<'static, ()> {
        let (uris, subscribers) = (self.uris_key(session), self.subscribers_key(uri));
        let (session, uri, shared) = (session.to_owned(), uri.to_owned(), self.clone());
        Box::pin(async move {
            let mut pipeline = redis::pipe();
            pipeline.cmd("SREM").arg(&uris).arg(&uri).ignore();
            pipeline.cmd("SREM").arg(&subscribers).arg(&session).ignore();
            if let Err(error) = shared.store.query::<()>("unsubscribe", &pipeline).await {
                tracing::warn!(session, uri, "an unsubscription did not reach Redis: {error}");
            }
        })
    }

    fn set_level(&self, session: &str, level: LoggingLevel) -> BoxFuture<'static, ()> {
        let key = self.record_key(session);
        let name = level_name(level);
        let message = format!("v\n{session}\n{name}");
        let shared = self.clone();
        Box::pin(async move {
            let mut pipeline = redis::pipe();
            pipeline.cmd("HSET").arg(&key).arg("level").arg(&name).ignore();
            pipeline.cmd("PUBLISH").arg(&*shared.channel).arg(&message).ignore();
            if let Err(error) = shared.store.query::<()>("level", &pipeline).await {
                tracing::warn!("a logging level is known to this replica only: {error}");
            }
        })
    }

    fn level_of(&self, session: &str) -> BoxFuture<'static, Option<LoggingLevel>> {
        let key = self.record_key(session);
        let shared = self.clone();
        Box::pin(async move {
            let level: Option<String> =
                shared.store.query("level", redis::cmd("HGET").arg(&key).arg("level")).await.ok()?;
            serde_json::from_value(serde_json::Value::String(level?)).ok()
        })
    }
}

#[async_trait::async_trait]
impl SessionStore for SharedSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        if !issued_form(session_id) {
            return Ok(None);
        }
        let init: Option<String> =
            self.store.query("session_load", redis::cmd("HGET").arg(self.record_key(session_id)).arg("init")).await?;
        let Some(init) = init else { return Ok(None) };
        Ok(Some(SessionState::new(serde_json::from_str(&init)?)))
    }

    /// Nothing: the session was kept when it answered `initialize`, with its owner, which rmcp
    /// does not know (see `OwnedSessions::initialize_session`).
    async fn store(&self, _session_id: &str, _state: &SessionState) -> Result<(), SessionStoreError> {
        Ok(())
    }

    /// The client ended the session (`DELETE`): it ends on every replica.
    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        if !issued_form(session_id) {
            return Ok(());
        }
        let keys = [self.record_key(session_id), self.uris_key(session_id)];
        let (subscribers, owners) = (self.subscribers_key(""), self.owner_key(""));
        self.store
            .invoke::<i64>("session_delete", &self.scripts[1], &keys, &[&subscribers, session_id, &owners])
            .await?;
        let _: i64 = self
            .store
            .query("publish", redis::cmd("PUBLISH").arg(&*self.channel).arg(format!("c\n{session_id}")))
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ids_of_the_issued_form_are_looked_up() {
        assert!(issued_form("f37f0103-0d13-4c6a-b898-f91cd019e4dc"));
        for id in [
            "",
            "made-up",
            "f37f0103-0d13-4c6a-b898-f91cd019e4dc:uris",
            "f37f0103-0d13-4c6a-b898-f91cd019e4d*",
            "x".repeat(36).as_str(),
        ] {
            assert!(!issued_form(id), "{id}");
        }
    }

    #[test]
    fn relay_messages_read_back_and_garbage_is_ignored() {
        let read = |payload: &str| format!("{:?}", parse(payload));
        assert_eq!(
            read("u\na,b\nbilling://summary\nwith a line break"),
            r#"Some(Relayed(Updated { uri: "billing://summary\nwith a line break", sessions: ["a", "b"] }))"#
        );
        assert_eq!(
            read("u\n\nbilling://summary"),
            r#"Some(Relayed(Updated { uri: "billing://summary", sessions: [] }))"#
        );
        assert_eq!(read("l\ntools"), "Some(Relayed(ListChanged(Tools)))");
        let level = format!("v\ns1\n{}", level_name(LoggingLevel::Warning));
        assert_eq!(read(&level), r#"Some(Relayed(Level { session: "s1", level: Warning }))"#);
        let notification = ServerNotification::ToolListChangedNotification(Default::default());
        let sent = format!("n\ns1\n{}", serde_json::to_string(&notification).unwrap());
        assert!(
            read(&sent)
                .starts_with(r#"Some(Relayed(ToSession { session: "s1", notification: ToolListChangedNotification"#)
        );
        assert_eq!(read("c\ns1"), r#"Some(Closed("s1"))"#);
        for garbage in ["", "u", "u\nonly", "l\nprompts", "n\ns1\n{not json", "n\ns1", "v\ns1\nloud", "x\ny", "\u{0}\n"]
        {
            assert_eq!(read(garbage), "None", "{garbage:?}");
        }
    }
}
