//! Sessions shared through a real `redis-server` by two HTTP servers in this process, as two
//! replicas behind a load balancer would share them: a session opened on one is served by the
//! other, only to the identity that opened it; its end (`DELETE`) through one ends it on both;
//! and Redis down turns a restore into `503` with `Retry-After`, never into another caller's
//! session.

use std::net::SocketAddr;
use std::time::Duration;

use mcp_fusion::auth::{Identity, StaticTokens};
use mcp_fusion::guard::{FailurePolicy, RedisStore};
use mcp_fusion::http::{HttpConfig, HttpServer};
use mcp_fusion::task::TaskSupport;
use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, Ctx, FusionServer, Group};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::redis::Redis;

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

async fn session(ctx: Ctx<()>, _input: Nothing) -> Result<String, ToolError> {
    Ok(ctx.call().session_id().unwrap_or("none").to_owned())
}

async fn chatty(_ctx: Ctx<()>, _input: Nothing) -> Result<String, ToolError> {
    tracing::info!(target: mcp_fusion::logging::CLIENT_TARGET, "an info line for the client");
    tracing::warn!(target: mcp_fusion::logging::CLIENT_TARGET, "a warning for the client");
    Ok("said".to_owned())
}

/// A `redis-server`, the store on it, and two replicas sharing it.
async fn two_replicas() -> (Redis, RedisStore, Replica, Replica) {
    let redis = Redis::start();
    let store = RedisStore::connect(redis.url()).await.unwrap();
    let (one, two) = (Replica::start(&store).await, Replica::start(&store).await);
    (redis, store, one, two)
}

/// A replica: its own server and HTTP listener, on the shared `store`.
struct Replica {
    server: FusionServer,
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

impl Replica {
    async fn start(store: &RedisStore) -> Replica {
        Replica::with(store, |config| config).await
    }

    async fn with(store: &RedisStore, configure: impl FnOnce(HttpConfig) -> HttpConfig) -> Replica {
        let server = FusionServer::builder("replica", "1")
            .group(
                Group::new("t", "Test tools.")
                    .action(Action::new("session", "The session id.").handler(session))
                    .action(Action::new("chatty", "Logs for the client.").handler(chatty))
                    .action(Action::new("quick", "Ends at once.").task(TaskSupport::Optional).handler(session)),
            )
            .build(())
            .unwrap();
        let tokens =
            StaticTokens::new().token("ana-token", Identity::new("ana")).token("bo-token", Identity::new("bo"));
        // One caller per round of a test that repeats itself.
        let tokens = (0..10)
            .fold(tokens, |tokens, n| tokens.token(format!("round{n}-token"), Identity::new(format!("round{n}"))));
        let config = HttpConfig::new("127.0.0.1:0").authenticator(tokens).session_store(store.clone());
        let config = configure(config);
        let http = HttpServer::bind(server.clone(), config).await.unwrap();
        let addr = http.local_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(http.serve(async move {
            let _ = stopped.await;
        }));
        Replica { server, addr, _stop: stop }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    async fn post(&self, token: &str, session: Option<&str>, body: &Value) -> reqwest::Response {
        self.post_as(token, session, body, "2025-06-18").await
    }

    async fn post_as(&self, token: &str, session: Option<&str>, body: &Value, version: &str) -> reqwest::Response {
        let mut request = reqwest::Client::new()
            .post(self.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", version)
            .header("authorization", format!("Bearer {token}"));
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.body(body.to_string()).send().await.unwrap()
    }

    /// Opens a session for `token`'s identity; its id.
    async fn open(&self, token: &str) -> String {
        let response = self.initialize(token).await;
        assert_eq!(response.status(), 200);
        response.headers()["mcp-session-id"].to_str().unwrap().to_owned()
    }

    async fn initialize(&self, token: &str) -> reqwest::Response {
        self.initialize_as(token, "2025-06-18").await
    }

    async fn initialize_as(&self, token: &str, version: &str) -> reqwest::Response {
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
        self.post_as(token, None, &initialize, version).await
    }

    /// The body of a call of `t.chatty` in `session`.
    async fn chatty(&self, token: &str, session: &str) -> String {
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "t", "arguments": {"action": "chatty"}}});
        self.post(token, Some(session), &call).await.text().await.unwrap()
    }

    /// Opens the session's stream of server messages (its `GET`).
    async fn listen(&self, token: &str, session: &str) -> reqwest::Response {
        self.listen_as(token, session, "2025-06-18").await
    }

    async fn listen_as(&self, token: &str, session: &str, version: &str) -> reqwest::Response {
        let response = reqwest::Client::new()
            .get(self.url())
            .header("accept", "text/event-stream")
            .header("authorization", format!("Bearer {token}"))
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", version)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        response
    }

    /// Calls `t.session` in `session`: the HTTP status, and the id the call counted as.
    async fn session_of(&self, token: &str, session: &str) -> (u16, String) {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "t", "arguments": {"action": "session"}}});
        let response = self.post(token, Some(session), &call).await;
        let status = response.status().as_u16();
        let body = response.text().await.unwrap();
        // An answer on an event stream or as JSON: the text of its first content block.
        let json = body.lines().find_map(|line| line.strip_prefix("data: ").filter(|data| data.starts_with('{')));
        let text = serde_json::from_str::<Value>(json.unwrap_or(&body))
            .ok()
            .and_then(|answer| Some(answer["result"]["content"][0]["text"].as_str()?.to_owned()))
            .unwrap_or(body);
        (status, text)
    }

    async fn delete(&self, token: &str, session: &str) -> u16 {
        let response = reqwest::Client::new()
            .delete(self.url())
            .header("authorization", format!("Bearer {token}"))
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-06-18")
            .send()
            .await
            .unwrap();
        response.status().as_u16()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn a_session_opened_on_one_replica_is_served_by_another_to_its_owner_only() {
    let (_redis, _store, one, two) = two_replicas().await;
    let ana = one.open("ana-token").await;

    // Another identity naming it, on the replica that does not hold it, finds nothing there
    // (nor does it restore the session for its owner's later requests to be counted as its).
    assert_eq!(two.session_of("bo-token", &ana).await.0, 404);
    // Its owner is served there, in that session.
    assert_eq!(two.session_of("ana-token", &ana).await, (200, ana.clone()));
    assert_eq!(one.session_of("ana-token", &ana).await, (200, ana.clone()));
    // Now held on both: still closed to others on both.
    assert_eq!(two.session_of("bo-token", &ana).await.0, 404);
    assert_eq!(one.session_of("bo-token", &ana).await.0, 404);
    // A session id nobody issued is no session anywhere.
    assert_eq!(two.session_of("ana-token", "made-up").await.0, 404);

    // Ended through one, it ends on the other too (told over the relay channel).
    assert_eq!(two.delete("ana-token", &ana).await, 204);
    let mut status = 0;
    for _ in 0..200 {
        status = one.session_of("ana-token", &ana).await.0;
        if status == 404 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(status, 404, "the session ended through one replica still answers on the other");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn redis_down_refuses_a_restore_with_retry_after_and_keeps_local_sessions() {
    let (mut redis, _store, one, two) = two_replicas().await;
    let ana = one.open("ana-token").await;
    redis.stop();
    // The replica holding it serves it; the other cannot learn who owns it, and says to retry.
    assert_eq!(one.session_of("ana-token", &ana).await, (200, ana.clone()));
    let refused = two.post("ana-token", Some(&ana), &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
    assert_eq!(refused.status(), 503);
    assert!(refused.headers().contains_key("retry-after"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn a_callers_sessions_are_capped_across_replicas_and_an_ended_one_gives_its_slot_back() {
    let redis = Redis::start();
    let store = RedisStore::connect(redis.url()).await.unwrap();
    let capped = |config: HttpConfig| config.max_sessions_per_caller(2);
    let (one, two) = (Replica::with(&store, capped).await, Replica::with(&store, capped).await);
    let first = one.open("ana-token").await;
    two.open("ana-token").await;
    // Each replica holds one of ana's sessions: the third is refused on either.
    let refused = one.initialize("ana-token").await;
    assert_eq!(refused.status(), 429);
    assert!(refused.headers().contains_key("retry-after"));
    assert_eq!(two.initialize("ana-token").await.status(), 429);
    // Another caller is not counted with her.
    two.open("bo-token").await;
    // One ended through the replica that does not hold it: her slot is back everywhere.
    assert_eq!(two.delete("ana-token", &first).await, 204);
    two.open("ana-token").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn with_redis_down_a_closed_policy_opens_no_session_and_an_open_one_serves_it_here() {
    let mut redis = Redis::start();
    let store = RedisStore::connect(redis.url()).await.unwrap();
    let timeout = Duration::from_millis(200);
    let closed = Replica::with(&store, |config| config.session_store_failure(FailurePolicy::Closed, timeout)).await;
    let open = Replica::with(&store, |config| config.session_store_failure(FailurePolicy::Open, timeout)).await;
    redis.stop();
    let refused = closed.initialize("ana-token").await;
    assert_eq!(refused.status(), 503);
    assert!(refused.headers().contains_key("retry-after"));
    let here = open.open("ana-token").await;
    assert_eq!(open.session_of("ana-token", &here).await, (200, here.clone()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn a_logging_level_set_through_one_replica_holds_on_another() {
    // The calls run on the runtime's workers: the layer that hands their events to clients is
    // the process's.
    use tracing_subscriber::layer::SubscriberExt as _;
    let _ = tracing::subscriber::set_global_default(tracing_subscriber::registry().with(mcp_fusion::logging::layer()));
    let (_redis, store, one, two) = two_replicas().await;
    let ana = one.open("ana-token").await;
    // Restored on the second replica before the level is set: it hears of it over the relay.
    two.chatty("ana-token", &ana).await;
    let mut stream = two.listen("ana-token", &ana).await;
    let set_level = json!({"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel", "params": {"level": "warning"}});
    assert_eq!(one.post("ana-token", Some(&ana), &set_level).await.status(), 200);
    let mut heard = None;
    for _ in 0..100 {
        two.chatty("ana-token", &ana).await;
        let read = tokio::time::timeout(Duration::from_millis(100), read_until(&mut stream, "a warning")).await;
        if let Ok(read) = read {
            heard = Some(read);
            break;
        }
    }
    let heard = heard.expect("the level set through one replica never held on the other");
    assert!(!heard.contains("an info line"), "{heard}");
    // A third replica, started after the level was set, reads it from Redis as it restores.
    let three = Replica::start(&store).await;
    three.chatty("ana-token", &ana).await;
    let mut stream = three.listen("ana-token", &ana).await;
    three.chatty("ana-token", &ana).await;
    let heard = tokio::time::timeout(Duration::from_secs(10), read_until(&mut stream, "a warning")).await.unwrap();
    assert!(!heard.contains("an info line"), "{heard}");
}

/// What `stream` sends until it has sent `needle`.
async fn read_until(stream: &mut reqwest::Response, needle: &str) -> String {
    let mut heard = String::new();
    while !heard.contains(needle) {
        let chunk = stream.chunk().await.unwrap().expect("the stream ended");
        heard.push_str(&String::from_utf8_lossy(&chunk));
    }
    heard
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn a_tools_change_on_one_replica_reaches_a_client_listening_on_another_once() {
    let (_redis, _store, one, two) = two_replicas().await;
    let ana = one.open("ana-token").await;
    let mut stream = two.listen("ana-token", &ana).await;
    // Its stream is open once a ping on it answers: the relay has somewhere to deliver.
    let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"});
    assert_eq!(two.post("ana-token", Some(&ana), &ping).await.status(), 200);
    for round in 1..=2 {
        let group = Group::new(format!("g{round}"), "Added.")
            .action(Action::new("session", "The session id.").handler(session));
        one.server.insert_group(group, ()).unwrap();
        let heard =
            tokio::time::timeout(Duration::from_secs(10), read_until(&mut stream, "list_changed")).await.unwrap();
        // Once per change: what came with this one holds one notification.
        assert_eq!(heard.matches("notifications/tools/list_changed").count(), 1, "{heard}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn a_tasks_end_reaches_its_session_listening_on_another_replica() {
    const V: &str = "2025-11-25";
    let (_redis, _store, one, two) = two_replicas().await;
    // A client of 2025-11-25 that declared no tasks extension: the experimental tasks, which
    // tell the session when a task ends.
    let opened = one.initialize_as("ana-token", V).await;
    assert_eq!(opened.status(), 200);
    let ana = opened.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let mut stream = two.listen_as("ana-token", &ana, V).await;
    let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"});
    assert_eq!(two.post_as("ana-token", Some(&ana), &ping, V).await.status(), 200);
    let call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "t", "arguments": {"action": "quick"}, "task": {}}});
    let created = one.post_as("ana-token", Some(&ana), &call, V).await.text().await.unwrap();
    assert!(created.contains("taskId"), "{created}");
    let heard = tokio::time::timeout(Duration::from_secs(10), read_until(&mut stream, "notifications/tasks/status"))
        .await
        .expect("the end of a task run on one replica reached its session's stream on the other");
    assert!(heard.contains("completed"), "{heard}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn simultaneous_initializes_of_one_caller_on_two_replicas_open_no_more_than_its_cap() {
    let redis = Redis::start();
    let store = RedisStore::connect(redis.url()).await.unwrap();
    let capped = |config: HttpConfig| config.max_sessions_per_caller(2);
    let (one, two) = (Replica::with(&store, capped).await, Replica::with(&store, capped).await);
    // Counting and taking a place were two steps: 10 at once, 5 a replica, opened 4 of cap 2.
    for round in 0..10 {
        let token = format!("round{round}-token");
        let tries = (0..10).map(|n| if n % 2 == 0 { one.initialize(&token) } else { two.initialize(&token) });
        let answers = futures_util::future::join_all(tries).await;
        let opened: Vec<String> = answers
            .iter()
            .filter(|answer| answer.status() == 200)
            .map(|answer| answer.headers()["mcp-session-id"].to_str().unwrap().to_owned())
            .collect();
        assert!(answers.iter().all(|answer| matches!(answer.status().as_u16(), 200 | 429)));
        assert_eq!(opened.len(), 2, "round {round}: one caller opened {} sessions with a cap of 2", opened.len());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn while_a_session_is_restored_another_caller_naming_it_is_refused_and_the_restore_holds() {
    let (_redis, _store, one, two) = two_replicas().await;
    // The race needs bob's requests to arrive while ana's first one restores her session on
    // the second replica: in each of 40 trials bob asks again and again until hers is answered.
    let mut bobs = 0;
    for trial in 0..40 {
        let ana = one.open("ana-token").await;
        let done = std::sync::atomic::AtomicBool::new(false);
        let hers = async {
            let answer = two.session_of("ana-token", &ana).await;
            done.store(true, std::sync::atomic::Ordering::SeqCst);
            answer
        };
        let his = async {
            let mut answers = Vec::new();
            while !done.load(std::sync::atomic::Ordering::SeqCst) || answers.is_empty() {
                answers.push(two.session_of("bo-token", &ana).await);
            }
            answers
        };
        let (hers, his) = tokio::join!(hers, his);
        assert_eq!(hers, (200, ana.clone()), "trial {trial}: ana's own restore");
        bobs += his.len();
        for (status, said) in his {
            assert_eq!(status, 404, "trial {trial}: bob was answered inside ana's session: {said}");
        }
        assert_eq!(two.session_of("ana-token", &ana).await, (200, ana.clone()), "trial {trial}");
    }
    assert!(bobs >= 40, "bob asked {bobs} times");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn a_delete_while_the_relay_reconnects_still_ends_the_session_everywhere() {
    let (redis, _store, one, two) = two_replicas().await;
    let client = redis::Client::open(redis.url()).unwrap();
    let mut admin = client.get_multiplexed_async_connection().await.unwrap();
    for trial in 0..10 {
        let ana = one.open("ana-token").await;
        assert_eq!(two.session_of("ana-token", &ana).await, (200, ana.clone()), "trial {trial}: held on both");
        // Every replica's relay connection dropped (as in a failover), and the session ended
        // through one at once: the message of its end reaches nobody.
        let killed: i64 =
            redis::cmd("CLIENT").arg("KILL").arg("TYPE").arg("pubsub").query_async(&mut admin).await.unwrap();
        assert!(killed >= 2, "trial {trial}: killed {killed} relay connections");
        assert_eq!(one.delete("ana-token", &ana).await, 204);
        let mut status = 0;
        for _ in 0..500 {
            status = two.session_of("ana-token", &ana).await.0;
            if status == 404 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(status, 404, "trial {trial}: the session ended through one replica is still served by the other");
    }
}
