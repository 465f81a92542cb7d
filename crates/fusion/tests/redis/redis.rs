//! `RedisStore` against a real `redis-server`: one shared limit across servers and across OS
//! processes, exact waits, idle keys expiring, and Redis dying and coming back under both
//! failure policies.
//!
//! Every test starts its own `redis-server` on a free port (no persistence) and kills it when
//! it ends, panics included. They are ignored by default: `tests/redis/run.sh` installs
//! `redis-server` if need be and runs them with
//! `cargo test -p mcp-fusion --features redis,http --test redis -- --ignored --test-threads=1`.
//! `REDIS_SERVER=/path/to/redis-server` picks the binary.

use crate::support;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_fusion::auth::{Caller, Identity};
use mcp_fusion::guard::{Concurrency, Decision, FailurePolicy, RateLimit, RateLimitStore, RedisStore};
use mcp_fusion::transport::RequestInfo;
use mcp_fusion::wire::{ErrorCode, ToolError, parse};
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt as _};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use support::error_text;

/// A `redis-server` child on a free port, killed on drop.
pub(crate) struct Redis {
    port: u16,
    child: Option<Child>,
}

impl Redis {
    /// Starts one on a free port (trying another port should this one be taken meanwhile).
    pub(crate) fn start() -> Redis {
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let mut redis = Redis { port, child: None };
            if redis.spawn() {
                return redis;
            }
        }
        panic!("redis-server did not start on any of 5 free ports");
    }

    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Starts the server on `self.port`; false if it exited (the port was taken).
    fn spawn(&mut self) -> bool {
        let binary = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned());
        let port = self.port.to_string();
        let dir = std::env::temp_dir();
        let mut child = Command::new(&binary)
            .args(["--port", &port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| panic!("cannot run {binary} ({error}): install redis-server or set REDIS_SERVER"));
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if child.try_wait().unwrap().is_some() {
                return false;
            }
            if self.answers_ping() {
                self.child = Some(child);
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("redis-server on port {port} did not answer PING within 10 s");
    }

    fn answers_ping(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else { return false };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        let mut reply = [0; 7];
        stream.write_all(b"PING\r\n").is_ok() && stream.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n"
    }

    /// Kills the server (SIGKILL: a crash, not a shutdown).
    pub(crate) fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port, empty.
    fn restart(&mut self) {
        assert!(self.child.is_none(), "stop it first");
        assert!(self.spawn(), "redis-server could not take port {} again", self.port);
    }

    /// A plain connection, to look at the keys.
    async fn connection(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.url()).unwrap().get_multiplexed_async_connection().await.unwrap()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}

#[derive(Deserialize, JsonSchema)]
struct Hit {}

async fn hit(_ctx: Ctx<()>, _input: Hit) -> Result<String, ToolError> {
    Ok("hit".to_owned())
}

/// One tool, `limited`, whose action `hit` counts against a global limit in `store`.
fn limited_server(store: RedisStore, calls: u32, window: Duration, policy: FailurePolicy) -> FusionServer {
    FusionServer::builder("redis-limited", "1")
        .rate_limit(RateLimit::new(calls, window).global())
        .rate_limit_store(store)
        .rate_limit_failure(policy, Duration::from_millis(250))
        .group(Group::new("limited", "Rate limited in Redis.").action(Action::new("hit", "Hit.").handler(hit)))
        .build(())
        .unwrap()
}

fn hit_arguments() -> serde_json::Map<String, Value> {
    json!({"action": "hit"}).as_object().cloned().unwrap()
}

async fn call_hit(server: &FusionServer) -> CallToolResult {
    server.call("limited", Some(hit_arguments()), RequestInfo::default()).await
}

/// The envelope of a failed call.
fn envelope(result: &CallToolResult) -> ToolError {
    parse(&error_text(result)).error
}

/// Sorts results into the admitted count and the envelopes of the others.
fn tally(results: &[CallToolResult]) -> (usize, Vec<ToolError>) {
    let admitted = results.iter().filter(|r| r.is_error == Some(false)).count();
    let refused = results.iter().filter(|r| r.is_error != Some(false)).map(envelope).collect();
    (admitted, refused)
}

/// Asserts `refused` are all "limit reached" envelopes of a 10-per-60-s limit whose burst was
/// just spent (so the next call is at most 6 s away).
fn assert_limit_reached(refused: &[ToolError], calls: u32) {
    for error in refused {
        assert_eq!(error.code, ErrorCode::RateLimited, "{error:?}");
        assert_eq!(
            error.message,
            format!(
                "Rate limit reached: {calls} calls per 60s for all callers together across every tool of this server."
            )
        );
        let retry_after = error.retry_after.expect("a retry_after");
        assert!((1..=60 / u64::from(calls)).contains(&retry_after), "retry_after {retry_after}");
    }
}

/// The keys the store wrote, with their remaining time to live in milliseconds.
async fn keys_and_ttls(redis: &Redis) -> Vec<(String, i64)> {
    let mut connection = redis.connection().await;
    let keys: Vec<String> = redis::cmd("KEYS").arg("mcp-fusion:rl:*").query_async(&mut connection).await.unwrap();
    let mut found = Vec::new();
    for key in keys {
        let ttl: i64 = redis::cmd("PTTL").arg(&key).query_async(&mut connection).await.unwrap();
        found.push((key, ttl));
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn two_servers_on_one_redis_admit_exactly_the_limit_under_concurrency() {
    let redis = Redis::start();
    // Two connections, as two replicas would have; fail-open, so a store failure would show
    // as extra admissions rather than hide among the refusals.
    let one = RedisStore::connect(redis.url()).await.unwrap();
    let two = RedisStore::connect(redis.url()).await.unwrap();
    let servers = [
        limited_server(one, 10, Duration::from_secs(60), FailurePolicy::Open),
        limited_server(two, 10, Duration::from_secs(60), FailurePolicy::Open),
    ];
    let start = Arc::new(tokio::sync::Barrier::new(40));
    let calls: Vec<_> = (0..40)
        .map(|i| {
            let server = servers[i % 2].clone();
            let start = Arc::clone(&start);
            tokio::spawn(async move {
                start.wait().await;
                call_hit(&server).await
            })
        })
        .collect();
    let mut results = Vec::new();
    for call in calls {
        results.push(call.await.unwrap());
    }
    let (admitted, refused) = tally(&results);
    assert_eq!(admitted, 10, "{refused:?}");
    assert_eq!(refused.len(), 30);
    assert_limit_reached(&refused, 10);

    // One key, living until the clock reaches its TAT: 10 × 6 s from the burst, not a
    // second more, so none of the 30 refusals was counted.
    let keys = keys_and_ttls(&redis).await;
    assert_eq!(keys.len(), 1, "{keys:?}");
    // Scope `*` (the server), the limit's name, what it counts by.
    assert_eq!(keys[0].0, "mcp-fusion:rl:*:10/60s:global");
    assert!((50_000..=60_000).contains(&keys[0].1), "ttl {} ms", keys[0].1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn the_wait_is_exact_refusals_are_not_counted_and_idle_keys_vanish() {
    let redis = Redis::start();
    let store = RedisStore::builder(redis.url()).key_prefix("exact:").connect().await.unwrap();
    let two = NonZeroU32::new(2).unwrap();
    let window = Duration::from_secs(2);
    // A burst of 2, then one call every second.
    assert_eq!(store.check("k", two, window).await.unwrap(), Decision::Allowed);
    assert_eq!(store.check("k", two, window).await.unwrap(), Decision::Allowed);
    let Decision::Limited { retry_after } = store.check("k", two, window).await.unwrap() else {
        panic!("the third call is limited")
    };
    assert!(retry_after > Duration::from_millis(900) && retry_after <= Duration::from_secs(1), "{retry_after:?}");
    // Refusals are not counted: asking again changes nothing but the time passed.
    for _ in 0..20 {
        assert!(matches!(store.check("k", two, window).await.unwrap(), Decision::Limited { .. }));
    }
    let Decision::Limited { retry_after } = store.check("k", two, window).await.unwrap() else { panic!("limited") };
    // Waiting exactly what it said is enough, and earns exactly one call.
    tokio::time::sleep(retry_after).await;
    assert_eq!(store.check("k", two, window).await.unwrap(), Decision::Allowed);
    let Decision::Limited { retry_after } = store.check("k", two, window).await.unwrap() else { panic!("limited") };
    assert!(retry_after > Duration::from_millis(900) && retry_after <= Duration::from_secs(1), "{retry_after:?}");

    // A key lives only until it is idle: 1 call per 300 ms leaves a key of at most 300 ms.
    let one = NonZeroU32::MIN;
    assert_eq!(store.check("brief", one, Duration::from_millis(300)).await.unwrap(), Decision::Allowed);
    let mut connection = redis.connection().await;
    let ttl: i64 = redis::cmd("PTTL").arg("exact:brief").query_async(&mut connection).await.unwrap();
    assert!((1..=300).contains(&ttl), "ttl {ttl} ms");
    tokio::time::sleep(Duration::from_millis(400)).await;
    let exists: bool = redis::cmd("EXISTS").arg("exact:brief").query_async(&mut connection).await.unwrap();
    assert!(!exists, "an idle key is gone");
    // And its absence admits the next call, as the in-memory store would.
    assert_eq!(store.check("brief", one, Duration::from_millis(300)).await.unwrap(), Decision::Allowed);
}

/// The `redis_limited_server` example, built now (a no-op when up to date) with the workspace's
/// executables as `cargo test --workspace` builds them (every member; `--examples` brings in the
/// dev-dependencies' features), so that a test run of the workspace finds it built instead of
/// building the shared crates again with mcp-fusion's features alone.
fn example_server() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["build", "--workspace", "--bins", "--examples"])
        .args(["--message-format", "json-render-diagnostics"])
        .stderr(Stdio::inherit())
        .output()
        .expect("run cargo build");
    assert!(output.status.success(), "cargo build --workspace --bins --examples failed");
    BufReader::new(&output.stdout[..])
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str::<Value>(&line).ok())
        .filter(|message| {
            message["reason"] == "compiler-artifact" && message["target"]["name"] == "redis_limited_server"
        })
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .expect("cargo names the example's executable")
}

type Client = rmcp::service::RunningService<RoleClient, ()>;

/// Starts `binary` with `args` and connects an MCP client to its stdio.
async fn spawn_client(binary: &PathBuf, args: &[&str]) -> Client {
    let mut command = tokio::process::Command::new(binary);
    command.args(args);
    let transport = TokioChildProcess::new(command).expect("spawn the server");
    ().serve(transport).await.expect("MCP initialize")
}

async fn call_over_stdio(client: &Client) -> CallToolResult {
    let request = CallToolRequestParams::new("limited").with_arguments(hit_arguments());
    client.call_tool(request).await.expect("tools/call")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn two_os_processes_share_one_limit() {
    let redis = Redis::start();
    let url = redis.url();
    let binary = example_server();
    let args = [url.as_str(), "10", "60", "open", "2000"];
    let clients = [Arc::new(spawn_client(&binary, &args).await), Arc::new(spawn_client(&binary, &args).await)];
    // The first process spends 6 of the 10 calls...
    for _ in 0..6 {
        let result = call_over_stdio(&clients[0]).await;
        assert_eq!(result.is_error, Some(false), "{result:?}");
    }
    // ...so the second is admitted 4 times, not 10.
    let mut results = Vec::new();
    for _ in 0..6 {
        results.push(call_over_stdio(&clients[1]).await);
    }
    let (admitted, refused) = tally(&results);
    assert_eq!(admitted, 4, "{refused:?}");
    assert!(results[..4].iter().all(|r| r.is_error == Some(false)), "the first 4 are the admitted ones");
    assert_limit_reached(&refused, 10);
    // Then 28 concurrent calls from both: the limit is spent for both processes.
    let calls: Vec<_> = (0..28)
        .map(|i| {
            let client = Arc::clone(&clients[i % 2]);
            tokio::spawn(async move { call_over_stdio(&client).await })
        })
        .collect();
    let mut results = Vec::new();
    for call in calls {
        results.push(call.await.unwrap());
    }
    let (admitted, refused) = tally(&results);
    assert_eq!(admitted, 0, "{refused:?}");
    assert_eq!(refused.len(), 28);
    assert_limit_reached(&refused, 10);
}

/// Redis killed and restarted under `policy`: the calls during the outage answer within the
/// store timeout (asserted with a generous bound), and the limit counts again afterwards.
async fn outage(policy: FailurePolicy) {
    let mut redis = Redis::start();
    let store = RedisStore::connect(redis.url()).await.unwrap();
    let server = limited_server(store.clone(), 3, Duration::from_secs(60), policy);
    let before: Vec<_> = futures_util::future::join_all((0..4).map(|_| call_hit(&server))).await;
    let (admitted, refused) = tally(&before);
    assert_eq!(admitted, 3);
    assert_limit_reached(&refused, 3);

    redis.stop();
    for _ in 0..5 {
        let started = Instant::now();
        let result = call_hit(&server).await;
        assert!(started.elapsed() < Duration::from_secs(2), "a call took {:?} with Redis down", started.elapsed());
        match policy {
            // The limit was spent, yet the call is admitted: availability first.
            FailurePolicy::Open => assert_eq!(result.is_error, Some(false), "{result:?}"),
            FailurePolicy::Closed => {
                let error = envelope(&result);
                assert_eq!(error.code, ErrorCode::RateLimited);
                assert_eq!(error.retry_after, Some(5));
                assert!(error.message.contains("cannot be checked right now"), "{}", error.message);
            }
            other => panic!("no expectation for the failure policy {other:?}"),
        }
    }
    // Concurrent calls during the outage are bounded too.
    let started = Instant::now();
    let during: Vec<_> = futures_util::future::join_all((0..10).map(|_| call_hit(&server))).await;
    assert!(started.elapsed() < Duration::from_secs(2), "10 concurrent calls took {:?}", started.elapsed());
    let (admitted, _) = tally(&during);
    assert_eq!(admitted, if policy == FailurePolicy::Open { 10 } else { 0 });

    // Back on the same port, empty, once the store's last reconnection attempt has failed:
    // the limit counts from zero again, from the first call.
    tokio::time::sleep(Duration::from_millis(500)).await;
    redis.restart();
    let after: Vec<_> = futures_util::future::join_all((0..4).map(|_| call_hit(&server))).await;
    let (admitted, refused) = tally(&after);
    assert_eq!(admitted, 3, "{refused:?}");
    assert_limit_reached(&refused, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn redis_down_mid_run_fail_open_admits_quickly_then_limits_again() {
    outage(FailurePolicy::Open).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn redis_down_mid_run_fail_closed_refuses_quickly_then_limits_again() {
    outage(FailurePolicy::Closed).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn redis_down_at_start_then_up() {
    // Take a port, keep it closed for now.
    let mut redis = Redis::start();
    redis.stop();
    let started = Instant::now();
    let store = RedisStore::connect(redis.url()).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(2), "connect took {:?}", started.elapsed());
    let server = limited_server(store.clone(), 3, Duration::from_secs(60), FailurePolicy::Closed);
    let error = envelope(&call_hit(&server).await);
    assert!(error.message.contains("cannot be checked right now"), "{}", error.message);
    assert!(store.ping().await.is_err());

    // Up at last (after the store's latest connection attempt has failed): the very first
    // ping and call reach it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    redis.restart();
    store.ping().await.unwrap();
    let after: Vec<_> = futures_util::future::join_all((0..4).map(|_| call_hit(&server))).await;
    let (admitted, refused) = tally(&after);
    assert_eq!(admitted, 3, "{refused:?}");
    assert_limit_reached(&refused, 3);
}

#[derive(Deserialize, JsonSchema)]
struct Work {
    millis: u64,
}

async fn work(_ctx: Ctx<()>, input: Work) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(input.millis)).await;
    Ok(format!("worked {} ms", input.millis))
}

/// The code of a failed call and its message, or `None` when it succeeded.
fn refusal(result: &CallToolResult) -> Option<(ErrorCode, String)> {
    (result.is_error != Some(false)).then(|| {
        let error = envelope(result);
        (error.code.clone(), error.message.clone())
    })
}

/// A server counting in `store`: the server's limit of 1 call a minute per session, the
/// group's of 3 per identity, and the action `a`'s of 2 per identity.
fn layered_server(store: RedisStore) -> FusionServer {
    FusionServer::builder("layered", "1")
        .rate_limit(RateLimit::new(1, Duration::from_secs(60)).per_session())
        .rate_limit_store(store)
        .rate_limit_failure(FailurePolicy::Closed, Duration::from_millis(500))
        .group(
            Group::new("g", "G.")
                .rate_limit(RateLimit::new(3, Duration::from_secs(60)).per_identity())
                .action(
                    Action::new("a", "A.")
                        .rate_limit(RateLimit::new(2, Duration::from_secs(60)).per_identity())
                        .handler(work),
                )
                .action(Action::new("b", "B.").handler(work)),
        )
        .build(())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn a_call_refused_by_a_later_limit_gives_back_what_the_earlier_ones_took() {
    let redis = Redis::start();
    // Two replicas on one Redis: what one gives back, the other sees.
    let replicas = [
        layered_server(RedisStore::connect(redis.url()).await.unwrap()),
        layered_server(RedisStore::connect(redis.url()).await.unwrap()),
    ];
    let run = |replica: usize, action: &str, session: &str| {
        let server = replicas[replica].clone();
        let arguments = json!({"action": action, "millis": 0}).as_object().cloned().unwrap();
        let info = RequestInfo {
            session_id: Some(session.into()),
            caller: Caller::Authenticated(Identity::new("ana")),
            ..RequestInfo::default()
        };
        async move { refusal(&server.call("g", Some(arguments), info).await) }
    };
    let server_limit = "Rate limit reached: 1 call per 60s for this session across every tool of this server.";
    assert_eq!(run(0, "a", "s1").await, None);
    for replica in [1, 0, 1] {
        assert_eq!(run(replica, "a", "s1").await, Some((ErrorCode::RateLimited, server_limit.to_owned())));
    }
    assert_eq!(run(1, "a", "s2").await, None);
    assert_eq!(run(0, "b", "s3").await, None);
    let (code, message) = run(1, "b", "s4").await.unwrap();
    assert_eq!(code, ErrorCode::RateLimited);
    assert!(message.ends_with("for this caller across every action of g."), "{message}");
    let (code, message) = run(0, "a", "s5").await.unwrap();
    assert_eq!(code, ErrorCode::RateLimited);
    assert!(message.ends_with("for this caller on g.a."), "{message}");

    // What is left in Redis is the three admitted calls' counts: a's two, the group's three,
    // and one per session that ran (s1, s2, s3); the refused ones left nothing behind.
    let mut keys: Vec<String> = keys_and_ttls(&redis).await.into_iter().map(|(key, _)| key).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "mcp-fusion:rl:*:1/60s:session:s1",
            "mcp-fusion:rl:*:1/60s:session:s2",
            "mcp-fusion:rl:*:1/60s:session:s3",
            "mcp-fusion:rl:g.a:2/60s:identity:ana",
            "mcp-fusion:rl:g:3/60s:identity:ana",
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn a_call_shed_by_the_concurrency_guard_gives_back_its_rate_limit() {
    let redis = Redis::start();
    let store = RedisStore::connect(redis.url()).await.unwrap();
    // A call with millis to work waits to be released first: the slow one holds the slot until
    // the call after it has been shed.
    let release = Arc::new(tokio::sync::Notify::new());
    let held = Arc::clone(&release);
    let gated = move |ctx: Ctx<()>, input: Work| {
        let held = Arc::clone(&held);
        async move {
            if input.millis > 0 {
                held.notified().await;
            }
            work(ctx, input).await
        }
    };
    let server =
        FusionServer::builder("busy", "1")
            .rate_limit_store(store)
            .rate_limit_failure(FailurePolicy::Closed, Duration::from_millis(500))
            .group(Group::new("busy", "Busy.").concurrency(Concurrency::new(1, 0)).action(
                Action::new("work", "Work.").rate_limit(RateLimit::new(2, Duration::from_secs(60))).handler(gated),
            ))
            .build(())
            .unwrap();
    let guard = server.concurrency_guard(Some("busy")).unwrap();
    let work_for = |millis: u64| {
        let server = server.clone();
        let arguments = json!({"action": "work", "millis": millis}).as_object().cloned().unwrap();
        tokio::spawn(async move { refusal(&server.call("busy", Some(arguments), RequestInfo::default()).await) })
    };
    let slow = work_for(500);
    let deadline = Instant::now() + Duration::from_secs(30);
    while guard.active() == 0 {
        assert!(Instant::now() < deadline, "the slow call never took its slot");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(work_for(0).await.unwrap().map(|(code, _)| code), Some(ErrorCode::ServerBusy));
    release.notify_one();
    assert_eq!(slow.await.unwrap(), None);
    // The slow call and this one are the limit's two; the shed call was not counted.
    assert_eq!(work_for(0).await.unwrap(), None);
    assert_eq!(work_for(0).await.unwrap().map(|(code, _)| code), Some(ErrorCode::RateLimited));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn a_refund_gives_back_one_call_atomically_and_never_more_than_the_burst() {
    let redis = Redis::start();
    let store = RedisStore::builder(redis.url()).key_prefix("refund:").connect().await.unwrap();
    let two = NonZeroU32::new(2).unwrap();
    let minute = Duration::from_secs(60);
    assert_eq!(store.check("k", two, minute).await.unwrap(), Decision::Allowed);
    assert_eq!(store.check("k", two, minute).await.unwrap(), Decision::Allowed);
    assert!(matches!(store.check("k", two, minute).await.unwrap(), Decision::Limited { .. }));
    store.refund("k", two, minute).await.unwrap();
    assert_eq!(store.check("k", two, minute).await.unwrap(), Decision::Allowed);
    assert!(matches!(store.check("k", two, minute).await.unwrap(), Decision::Limited { .. }));
    // Refunds beyond what was taken delete the key, as an idle one: its burst is two again.
    for _ in 0..5 {
        store.refund("k", two, minute).await.unwrap();
    }
    let mut connection = redis.connection().await;
    let exists: bool = redis::cmd("EXISTS").arg("refund:k").query_async(&mut connection).await.unwrap();
    assert!(!exists, "a fully refunded key is gone");
    assert_eq!(store.check("k", two, minute).await.unwrap(), Decision::Allowed);
    assert_eq!(store.check("k", two, minute).await.unwrap(), Decision::Allowed);
    assert!(matches!(store.check("k", two, minute).await.unwrap(), Decision::Limited { .. }));

    // Two replicas checking and giving back at once: every admitted call given back leaves the
    // key idle, however checks and refunds interleave.
    let replicas = [store.clone(), RedisStore::builder(redis.url()).key_prefix("refund:").connect().await.unwrap()];
    let ten = NonZeroU32::new(10).unwrap();
    let start = Arc::new(tokio::sync::Barrier::new(40));
    let calls: Vec<_> = (0..40)
        .map(|i| {
            let (store, start) = (replicas[i % 2].clone(), Arc::clone(&start));
            tokio::spawn(async move {
                start.wait().await;
                if store.check("shared", ten, minute).await.unwrap() == Decision::Allowed {
                    store.refund("shared", ten, minute).await.unwrap();
                }
            })
        })
        .collect();
    for call in calls {
        call.await.unwrap();
    }
    let exists: bool = redis::cmd("EXISTS").arg("refund:shared").query_async(&mut connection).await.unwrap();
    assert!(!exists, "every admitted call was given back");
    for _ in 0..10 {
        assert_eq!(replicas[1].check("shared", ten, minute).await.unwrap(), Decision::Allowed);
    }
    assert!(matches!(replicas[0].check("shared", ten, minute).await.unwrap(), Decision::Limited { .. }));
}

/// Arguments of `charge`, an action idempotent by key.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Charge {
    amount_cents: u32,
    idempotency_key: Option<String>,
}

/// Two replicas of a server whose `charge` counts its runs in `runs` and takes 200 ms, both
/// keeping idempotency keys in one Redis.
async fn charging_replicas(redis: &Redis, runs: &Arc<std::sync::atomic::AtomicUsize>) -> [FusionServer; 2] {
    let mut replicas = Vec::new();
    for _ in 0..2 {
        let store = RedisStore::builder(redis.url()).key_prefix("idem-test:").connect().await.unwrap();
        let runs = Arc::clone(runs);
        let charge = Action::new("charge", "Charge once per key.").idempotent_by_key().handler(
            move |_ctx: Ctx<()>, input: Charge| {
                let run = runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                async move {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    Ok::<_, ToolError>(format!("charged {} cents (run {run})", input.amount_cents))
                }
            },
        );
        let server = FusionServer::builder::<()>("payments", "1.0.0")
            .idempotency(mcp_fusion::guard::Idempotency::new().store(store))
            .group(Group::new("payments", "Charges.").action(charge))
            .build(())
            .unwrap();
        replicas.push(server);
    }
    replicas.try_into().unwrap_or_else(|_| unreachable!())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs redis-server; run by tests/redis/run.sh"]
async fn two_replicas_retrying_one_key_at_once_run_the_handler_once() {
    let redis = Redis::start();
    let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let replicas = Arc::new(charging_replicas(&redis, &runs).await);
    let arguments = json!({"action": "charge", "amount_cents": 500, "idempotency_key": "order-7"});
    let calls = (0..20).map(|i| {
        let replicas = Arc::clone(&replicas);
        let arguments = arguments.as_object().cloned();
        tokio::spawn(async move { replicas[i % 2].call("payments", arguments, RequestInfo::default()).await })
    });
    let results: Vec<CallToolResult> =
        futures_util::future::join_all(calls).await.into_iter().map(Result::unwrap).collect();
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 1, "the handler ran once for 20 calls on two replicas");
    for result in &results {
        assert_eq!(result.is_error, Some(false), "{result:?}");
        assert_eq!(support::texts(result), ["charged 500 cents (run 1)"]);
    }

    // Later, on either replica: the same answer, still without running.
    let again = replicas[1].call("payments", arguments.as_object().cloned(), RequestInfo::default()).await;
    assert_eq!(support::texts(&again), ["charged 500 cents (run 1)"]);
    // The same key with another amount is a conflict, not a second charge.
    let other = json!({"action": "charge", "amount_cents": 900, "idempotency_key": "order-7"});
    let conflict = replicas[0].call("payments", other.as_object().cloned(), RequestInfo::default()).await;
    let conflict = envelope(&conflict);
    assert_eq!(conflict.code, ErrorCode::Conflict);
    assert!(conflict.message.contains("'order-7' was already used with other arguments"), "{}", conflict.message);
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 1);
    // The same key and arguments from another caller: a conflict too, never the first answer.
    let bruno = RequestInfo { caller: Caller::Authenticated(Identity::new("bruno")), ..RequestInfo::default() };
    let stranger = replicas[1].call("payments", arguments.as_object().cloned(), bruno).await;
    let stranger = envelope(&stranger);
    assert_eq!(stranger.code, ErrorCode::Conflict);
    assert!(stranger.message.contains("bound to another caller's call of payments.charge"), "{}", stranger.message);
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 1);
    // A new key runs.
    let fresh = json!({"action": "charge", "amount_cents": 500, "idempotency_key": "order-8"});
    let fresh = replicas[0].call("payments", fresh.as_object().cloned(), RequestInfo::default()).await;
    assert_eq!(support::texts(&fresh), ["charged 500 cents (run 2)"]);

    // What Redis holds: one hash per key, done, with a time to live.
    let mut connection = redis::Client::open(redis.url()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg("idem-test:idem:*").query_async(&mut connection).await.unwrap();
    assert_eq!(keys.len(), 2, "{keys:?}");
    for key in keys {
        let state: String = redis::cmd("HGET").arg(&key).arg("s").query_async(&mut connection).await.unwrap();
        let ttl: i64 = redis::cmd("PTTL").arg(&key).query_async(&mut connection).await.unwrap();
        assert_eq!(state, "d");
        assert!(ttl > 23 * 3600 * 1000, "{key} expires in {ttl} ms");
    }
}
