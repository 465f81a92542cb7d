//! The Redis rate-limit store (cargo feature `redis`): every replica sharing one Redis counts
//! against one limit.
//!
//! Each check is one atomic Lua script (sent as `EVALSHA` and loaded again when Redis has
//! forgotten it) running the same GCRA as the in-memory store, on Redis' own
//! clock so replicas with skewed clocks agree. A call refused further on is given back by a
//! second atomic script, the refund. The connection is a `ConnectionManager`: it
//! reconnects on its own, and while Redis is unreachable every check fails fast with a
//! [`StoreError`], so the server follows its [`FailurePolicy`](crate::guard::FailurePolicy).

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, Script};

use futures_util::future::BoxFuture;

use super::store::{Decision, RateLimitStore, StoreError};

/// The prefix of every key the store writes, unless [`RedisStoreBuilder::key_prefix`] says
/// otherwise.
pub const DEFAULT_KEY_PREFIX: &str = "mcp-fusion:rl:";

/// The check, run atomically by Redis: GCRA exactly as the in-memory store runs it. A limit of `N` calls per `W` admits a burst of `N`, then one call every `T = W / N`.
///
/// `KEYS[1]` is the counted key; `ARGV[1]` is `T` and `ARGV[2]` the tolerance `T * (N - 1)`,
/// both in whole microseconds. The key holds the theoretical arrival time (TAT) in
/// microseconds of Redis' clock (`TIME`), so every replica reads one clock.
///
/// Returns `{1, 0}` when the call is admitted (and counted), or `{0, wait_ms}` when it is not
/// (and nothing is written): `wait_ms` is the wait until the next admission, rounded up to the
/// millisecond so that a call made that much later is admitted. An admitted key expires when
/// the clock reaches its TAT, the moment it becomes as good as absent: idle keys vanish.
///
/// Lua numbers are doubles: microseconds since 1970 (about 2^51) stay exact, and the TAT is
/// written with `%.0f` (`tostring` would round it to 14 digits).
pub(crate) const GCRA_SCRIPT: &str = r"
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local tat = tonumber(redis.call('GET', KEYS[1]))
if not tat or tat < now then
  tat = now
end
local earliest = tat - tolerance
if now < earliest then
  return {0, math.ceil((earliest - now) / 1000)}
end
local next_tat = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', next_tat), 'PX', math.ceil((next_tat - now) / 1000))
return {1, 0}
";

/// The refund, run atomically by Redis: gives back one call the check admitted, for a call
/// refused further on (by a later limit, or shed by a concurrency guard).
///
/// `KEYS[1]` is the counted key and `ARGV[1]` the interval `T`, as for the check. The TAT moves
/// back by `T`, never before Redis' now: a key that went idle meanwhile has nothing to give
/// back, and one back at now is deleted, as idle keys are. Since a TAT is the sum of the
/// intervals admitted, taking one off commutes with the checks of other replicas in between.
///
/// Returns 1 when a call was given back, 0 when the key was already idle.
pub(crate) const REFUND_SCRIPT: &str = r"
local interval = tonumber(ARGV[1])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local tat = tonumber(redis.call('GET', KEYS[1]))
if not tat or tat <= now then
  return 0
end
local earlier = tat - interval
if earlier <= now then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], string.format('%.0f', earlier), 'PX', math.ceil((earlier - now) / 1000))
end
return 1
";

/// Windows longer than this (about 407 days) count as this long, so every sum the script
/// makes stays an exact integer in a Lua double.
const MAX_WINDOW_MICROS: u128 = 1 << 45;

/// Rate limits counted, and idempotency keys kept, in Redis: shared by every process that uses
/// the same Redis and key prefix. Cloning is cheap and shares the connection.
///
/// ```no_run
/// # async fn demo() -> Result<(), mcp_fusion::guard::StoreError> {
/// use std::time::Duration;
/// use mcp_fusion::FusionServer;
/// use mcp_fusion::guard::{FailurePolicy, RateLimit, RedisStore};
///
/// let store = RedisStore::connect("redis://127.0.0.1:6379").await?;
/// let builder = FusionServer::builder::<()>("billing", "1.0.0")
///     .rate_limit(RateLimit::new(100, Duration::from_secs(60)).per_identity())
///     .rate_limit_store(store)
///     .rate_limit_failure(FailurePolicy::Closed, Duration::from_millis(250));
/// # let _ = builder;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RedisStore {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) connection: ConnectionManager,
    /// For the connections of their own that subscriptions to channels need.
    #[cfg_attr(not(feature = "http"), expect(dead_code, reason = "only shared HTTP sessions subscribe"))]
    pub(crate) client: Client,
    script: Script,
    refund: Script,
    /// The idempotency keys' scripts: claim, complete, release.
    pub(in crate::guard) keys: [Script; 3],
    pub(crate) prefix: String,
    /// `host:port` (or the socket path): the URL without its credentials, for messages.
    pub(crate) target: String,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("target", &self.inner.target)
            .field("prefix", &self.inner.prefix)
            .finish_non_exhaustive()
    }
}

/// Configures a [`RedisStore`]; [`connect`](RedisStoreBuilder::connect) makes it.
#[derive(Debug, Clone)]
pub struct RedisStoreBuilder {
    url: String,
    prefix: String,
    connect_timeout: Duration,
    response_timeout: Duration,
}

impl RedisStoreBuilder {
    /// The prefix of every key (default [`DEFAULT_KEY_PREFIX`]). Servers meant to share a
    /// limit must use the same one.
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> RedisStoreBuilder {
        self.prefix = prefix.into();
        self
    }

    /// How long [`connect`](RedisStoreBuilder::connect) waits for Redis, and how long each
    /// connection attempt may take (default: 1 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> RedisStoreBuilder {
        self.connect_timeout = timeout;
        self
    }

    /// How long a command may wait for its answer before the connection gives up on it
    /// (default: 1 s). The server's own store timeout (`rate_limit_failure`) still bounds
    /// every check, usually much tighter.
    pub fn response_timeout(mut self, timeout: Duration) -> RedisStoreBuilder {
        self.response_timeout = timeout;
        self
    }

    /// Makes the store, waiting at most the connect timeout for Redis to answer (and loading
    /// the script when it does). Fails only on an invalid URL: when Redis is unreachable the
    /// store is returned anyway, logs a warning, and reports [`StoreError`] on every check
    /// until Redis answers again. Call it inside the Tokio runtime that will serve the calls
    /// (the connection runs its reconnections there).
    pub async fn connect(self) -> Result<RedisStore, StoreError> {
        let client =
            Client::open(self.url.as_str()).map_err(|error| StoreError(format!("invalid Redis URL: {error}")))?;
        let target = client.get_connection_info().addr().to_string();
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.connect_timeout))
            .set_response_timeout(Some(self.response_timeout))
            // One quick retry per reconnection: while Redis is down each check fails fast and
            // the next one starts a new attempt, so the store is back as soon as Redis is.
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_millis(500));
        let connection = ConnectionManager::new_lazy_with_config(client.clone(), config)
            .map_err(|error| StoreError(format!("Redis at {target}: {error}")))?;
        let store = RedisStore {
            inner: Arc::new(Inner {
                connection,
                client,
                script: Script::new(GCRA_SCRIPT),
                refund: Script::new(REFUND_SCRIPT),
                keys: crate::guard::idempotency::redis::scripts(),
                prefix: self.prefix,
                target,
            }),
        };
        let target = &store.inner.target;
        match tokio::time::timeout(self.connect_timeout, store.load_script()).await {
            Ok(Ok(())) => tracing::info!(redis = %target, "rate-limit store connected to Redis"),
            Ok(Err(error)) => tracing::warn!(
                redis = %target,
                "rate-limit store: Redis is unreachable ({error}); limits follow the failure policy until it answers"
            ),
            Err(_) => tracing::warn!(
                redis = %target,
                "rate-limit store: Redis did not answer within {} ms; limits follow the failure policy until it answers",
                self.connect_timeout.as_millis()
            ),
        }
        Ok(store)
    }
}

impl RedisStore {
    /// Configures a store on `url`: `redis://[:password@]host:port[/db]` or `unix:///path`
    /// (TLS, `rediss://`, is not compiled in).
    pub fn builder(url: impl Into<String>) -> RedisStoreBuilder {
        RedisStoreBuilder {
            url: url.into(),
            prefix: DEFAULT_KEY_PREFIX.to_owned(),
            connect_timeout: Duration::from_secs(1),
            response_timeout: Duration::from_secs(1),
        }
    }

    /// A store on `url` with the defaults; see [`RedisStoreBuilder::connect`].
    pub async fn connect(url: impl Into<String>) -> Result<RedisStore, StoreError> {
        RedisStore::builder(url).connect().await
    }

    /// Asks Redis for a `PONG`: `Ok` once it answers (after an outage, this also makes the
    /// connection try again).
    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut connection = self.inner.connection.clone();
        let ping = redis::cmd("PING");
        let mut reply = ping.query_async::<String>(&mut connection).await;
        if reply.as_ref().is_err_and(redis::RedisError::is_connection_refusal) {
            // As in `check`: the first error after an outage may be the previous attempt's.
            reply = ping.query_async(&mut connection).await;
        }
        reply.map(drop).map_err(|error| self.error(&error))
    }

    /// `host:port` of the Redis (the URL without its credentials).
    pub fn target(&self) -> &str {
        &self.inner.target
    }

    /// The prefix of every key the store writes.
    pub fn key_prefix(&self) -> &str {
        &self.inner.prefix
    }

    async fn load_script(&self) -> Result<(), StoreError> {
        let mut connection = self.inner.connection.clone();
        for script in [&self.inner.script, &self.inner.refund].into_iter().chain(&self.inner.keys) {
            script.prepare_invoke().load_async(&mut connection).await.map_err(|error| self.error(&error))?;
        }
        Ok(())
    }

    /// Runs `script` on `key` with `args` once, and once more when the first try met a
    /// connection that was just being re-established (the script did not run then).
    pub(crate) async fn run_script<T: redis::FromRedisValue>(
        &self,
        script: &Script,
        key: String,
        args: Vec<String>,
    ) -> Result<T, StoreError> {
        self.run_script_on(script, &[key], args).await
    }

    /// [`run_script`](Self::run_script) for a script of several keys.
    pub(crate) async fn run_script_on<T: redis::FromRedisValue>(
        &self,
        script: &Script,
        keys: &[String],
        args: Vec<String>,
    ) -> Result<T, StoreError> {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.invoke("script", script, keys, &args).await.map_err(|error| self.error(&error))
    }

    /// Runs `script` on `keys` with `args`, counted as `op` in the Redis metrics; once more
    /// when the first try met a connection that was just being re-established (it did not run).
    pub(crate) async fn invoke<T: redis::FromRedisValue>(
        &self,
        op: &'static str,
        script: &Script,
        keys: &[String],
        args: &[&str],
    ) -> redis::RedisResult<T> {
        let mut invocation = script.prepare_invoke();
        for key in keys {
            invocation.key(key);
        }
        for arg in args {
            invocation.arg(*arg);
        }
        let mut connection = self.inner.connection.clone();
        let started = std::time::Instant::now();
        let mut reply = invocation.invoke_async(&mut connection).await;
        if reply.as_ref().is_err_and(redis::RedisError::is_connection_refusal) {
            reply = invocation.invoke_async(&mut connection).await;
        }
        crate::observe::redis_command(op, started, reply.is_ok());
        reply
    }

    /// Sends `commands` (one command, or a pipeline), counted as `op` in the Redis metrics;
    /// once more when the first try met a connection being re-established (none of it ran).
    #[cfg(feature = "http")]
    pub(crate) async fn query<T: redis::FromRedisValue>(
        &self,
        op: &'static str,
        commands: &impl Queried,
    ) -> redis::RedisResult<T> {
        let mut connection = self.inner.connection.clone();
        let started = std::time::Instant::now();
        let mut reply = commands.send(&mut connection).await;
        if reply.as_ref().is_err_and(redis::RedisError::is_connection_refusal) {
            reply = commands.send(&mut connection).await;
        }
        crate::observe::redis_command(op, started, reply.is_ok());
        reply
    }

    pub(crate) fn error(&self, error: &redis::RedisError) -> StoreError {
        StoreError(format!("Redis at {}: {error}", self.inner.target))
    }
}

/// What [`RedisStore::query`] sends: a command or a pipeline.
#[cfg(feature = "http")]
pub(crate) trait Queried: Sync {
    fn send<T: redis::FromRedisValue>(
        &self,
        connection: &mut ConnectionManager,
    ) -> impl std::future::Future<Output = redis::RedisResult<T>> + Send;
}

#[cfg(feature = "http")]
impl Queried for redis::Cmd {
    async fn send<T: redis::FromRedisValue>(&self, connection: &mut ConnectionManager) -> redis::RedisResult<T> {
        self.query_async(connection).await
    }
}

#[cfg(feature = "http")]
impl Queried for redis::Pipeline {
    async fn send<T: redis::FromRedisValue>(&self, connection: &mut ConnectionManager) -> redis::RedisResult<T> {
        self.query_async(connection).await
    }
}

impl RateLimitStore for RedisStore {
    fn check(
        &self,
        key: &str,
        calls: NonZeroU32,
        window: Duration,
    ) -> BoxFuture<'static, Result<Decision, StoreError>> {
        let store = self.clone();
        let key = format!("{}{key}", self.inner.prefix);
        let (interval, tolerance) = gcra_parameters(calls, window);
        Box::pin(async move {
            let mut connection = store.inner.connection.clone();
            let mut invocation = store.inner.script.prepare_invoke();
            invocation.key(&key).arg(interval).arg(tolerance);
            let started = std::time::Instant::now();
            let mut reply = invocation.invoke_async::<(i64, i64)>(&mut connection).await;
            if reply.as_ref().is_err_and(redis::RedisError::is_connection_refusal) {
                // The error of a connection attempt that failed before Redis came back: the
                // manager has just started a new one, which this second try waits for. The
                // script never ran, so trying again cannot count a call twice.
                reply = invocation.invoke_async(&mut connection).await;
            }
            crate::observe::redis_command("rate_limit", started, reply.is_ok());
            let reply = reply.map_err(|error| store.error(&error))?;
            decision(reply).map_err(|reply| StoreError(format!("Redis at {}: {reply}", store.inner.target)))
        })
    }

    fn refund(&self, key: &str, calls: NonZeroU32, window: Duration) -> BoxFuture<'static, Result<(), StoreError>> {
        let store = self.clone();
        let key = format!("{}{key}", self.inner.prefix);
        let (interval, _) = gcra_parameters(calls, window);
        Box::pin(async move {
            let mut connection = store.inner.connection.clone();
            let mut invocation = store.inner.refund.prepare_invoke();
            invocation.key(&key).arg(interval);
            let mut reply = invocation.invoke_async::<i64>(&mut connection).await;
            if reply.as_ref().is_err_and(redis::RedisError::is_connection_refusal) {
                // As in `check`: the script never ran, so trying again cannot refund twice.
                reply = invocation.invoke_async(&mut connection).await;
            }
            reply.map(drop).map_err(|error| store.error(&error))
        })
    }
}

/// The emission interval `T = W / N` and the tolerance `T * (N - 1)` of a limit, in whole
/// microseconds (`T` at least 1 µs, `W` at most [`MAX_WINDOW_MICROS`]).
fn gcra_parameters(calls: NonZeroU32, window: Duration) -> (u64, u64) {
    let window = window.as_micros().min(MAX_WINDOW_MICROS);
    let calls = u64::from(calls.get());
    // At most 2^45: the conversion cannot fail.
    let interval = u64::try_from(window).unwrap_or(u64::MAX) / calls;
    let interval = interval.max(1);
    (interval, interval * (calls - 1))
}

/// The script's reply as a decision.
fn decision(reply: (i64, i64)) -> Result<Decision, String> {
    match reply {
        (1, _) => Ok(Decision::Allowed),
        (0, wait_ms) if wait_ms > 0 => {
            Ok(Decision::Limited { retry_after: Duration::from_millis(wait_ms.unsigned_abs()) })
        }
        (admitted, wait_ms) => Err(format!("unexpected reply of the rate-limit script: [{admitted}, {wait_ms}]")),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::guard::rate_limit::store::whole_seconds;

    fn n(calls: u32) -> NonZeroU32 {
        NonZeroU32::new(calls).unwrap()
    }

    #[test]
    fn parameters_are_the_interval_and_the_burst_tolerance_in_microseconds() {
        // 10 per 60 s: one every 6 s, a burst of 10 (9 beyond the first).
        assert_eq!(gcra_parameters(n(10), Duration::from_secs(60)), (6_000_000, 54_000_000));
        // A burst of one has no tolerance.
        assert_eq!(gcra_parameters(n(1), Duration::from_secs(2)), (2_000_000, 0));
        // 7 per 60 s: 8.571428 s, truncated to the microsecond.
        assert_eq!(gcra_parameters(n(7), Duration::from_secs(60)), (8_571_428, 51_428_568));
        // Never a zero interval, however many calls per millisecond.
        assert_eq!(gcra_parameters(n(5000), Duration::from_millis(1)), (1, 4999));
        // Absurd windows are capped so the script's arithmetic stays exact.
        let (interval, tolerance) = gcra_parameters(n(u32::MAX), Duration::MAX);
        assert!(interval + tolerance <= 1 << 45, "{interval} + {tolerance}");
        assert_eq!(gcra_parameters(n(1), Duration::MAX), (1 << 45, 0));
    }

    #[test]
    fn replies_decode_into_decisions() {
        assert_eq!(decision((1, 0)), Ok(Decision::Allowed));
        assert_eq!(decision((0, 5_999)), Ok(Decision::Limited { retry_after: Duration::from_millis(5_999) }));
        // A wait of 1 ms still tells the model to wait a whole second.
        let Ok(Decision::Limited { retry_after }) = decision((0, 1)) else { panic!("limited") };
        assert_eq!(whole_seconds(retry_after), 1);
        assert!(decision((0, 0)).is_err());
        assert!(decision((0, -3)).is_err());
        assert!(decision((2, 0)).is_err());
    }

    #[test]
    fn the_script_writes_the_tat_without_rounding_and_only_when_admitting() {
        assert!(GCRA_SCRIPT.contains("string.format('%.0f', next_tat)"));
        assert_eq!(GCRA_SCRIPT.matches("redis.call('SET'").count(), 1);
        let (reject, admit) = GCRA_SCRIPT.split_once("local next_tat").unwrap();
        assert!(!reject.contains("SET") && admit.contains("'PX'"));
        // Redis' clock, never the caller's.
        assert!(GCRA_SCRIPT.contains("redis.call('TIME')"));
    }

    #[test]
    fn the_refund_moves_the_tat_back_by_one_interval_never_before_now() {
        assert!(REFUND_SCRIPT.contains("local earlier = tat - interval"));
        assert!(REFUND_SCRIPT.contains("string.format('%.0f', earlier)"));
        // An idle key, or one that would be idle, is left or made absent, never written.
        let (idle, busy) = REFUND_SCRIPT.split_once("local earlier").unwrap();
        assert!(idle.contains("tat <= now") && !idle.contains("SET"));
        assert!(busy.contains("if earlier <= now then\n  redis.call('DEL'"));
        assert!(REFUND_SCRIPT.contains("redis.call('TIME')"));
    }

    #[tokio::test]
    async fn an_invalid_url_is_the_only_connect_error() {
        let error = RedisStore::connect("http://nope").await.unwrap_err();
        assert!(error.to_string().starts_with("store unavailable: invalid Redis URL"), "{error}");
    }

    /// A port nobody listens on.
    fn closed_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
    }

    #[tokio::test]
    async fn redis_down_at_start_gives_a_store_that_reports_errors_fast() {
        let url = format!("redis://:secret@127.0.0.1:{}", closed_port());
        let started = Instant::now();
        let store = RedisStore::builder(url).key_prefix("t:").connect().await.unwrap();
        assert!(started.elapsed() < Duration::from_secs(2), "connect took {:?}", started.elapsed());
        assert_eq!(store.key_prefix(), "t:");
        // The password stays out of messages and Debug.
        assert!(!format!("{store:?}").contains("secret"));
        for _ in 0..3 {
            let started = Instant::now();
            let error = store.check("k", n(10), Duration::from_secs(60)).await.unwrap_err();
            assert!(started.elapsed() < Duration::from_secs(2), "check took {:?}", started.elapsed());
            assert!(error.to_string().contains(store.target()) && !error.to_string().contains("secret"), "{error}");
        }
        // A refund fails as fast, and says so (the guard logs it and moves on).
        let started = Instant::now();
        let error = store.refund("k", n(10), Duration::from_secs(60)).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2), "refund took {:?}", started.elapsed());
        assert!(error.to_string().contains(store.target()), "{error}");
        assert!(store.ping().await.is_err());
    }

    #[tokio::test]
    async fn a_redis_that_never_answers_does_not_hang_connect_or_checks() {
        // Accepts connections (the kernel does) and never answers a byte.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let _held = tokio::spawn(async move {
            let mut sockets = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                sockets.push(socket);
            }
        });
        let started = Instant::now();
        let store = RedisStore::builder(format!("redis://127.0.0.1:{port}"))
            .connect_timeout(Duration::from_millis(300))
            .response_timeout(Duration::from_millis(300))
            .connect()
            .await
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(2), "connect took {:?}", started.elapsed());
        let started = Instant::now();
        let checked =
            tokio::time::timeout(Duration::from_secs(5), store.check("k", n(1), Duration::from_secs(1))).await;
        assert!(matches!(checked, Ok(Err(_))), "{checked:?}");
        assert!(started.elapsed() < Duration::from_secs(3), "check took {:?}", started.elapsed());
    }
}
