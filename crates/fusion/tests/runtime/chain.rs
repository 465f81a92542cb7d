//! The one chain: guards and middleware in a visible order, rate-limit counters keyed by name
//! and scope, panics caught at the edge with the action's name, and a catalog that changes
//! while clients are connected.

use crate::support;

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use mcp_fusion::guard::{Decision, MemoryStore, RateLimit, RateLimitStore, Stage, StoreError};
use mcp_fusion::middleware::{Call, Next};
use mcp_fusion::transport::RequestInfo;
use mcp_fusion::wire::{ErrorCode, ToolError, parse};
use mcp_fusion::{Action, BuildError, Ctx, FieldIssue, FusionServer, Group, Validate, Validated, from_fn};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde::Deserialize;
use serde_json::{Value, json};
use support::{call, error_text, texts, wait_until};

#[derive(Deserialize, schemars::JsonSchema)]
struct Empty {}

async fn ok(_ctx: Ctx<()>, _input: Empty) -> Result<String, ToolError> {
    Ok("ok".into())
}

fn arguments(value: Value) -> Option<serde_json::Map<String, Value>> {
    value.as_object().cloned()
}

/// The body of the first text block of a call made in process.
async fn call_text(server: &FusionServer, tool: &str, args: Value) -> (bool, String) {
    let result = server.call(tool, arguments(args), RequestInfo::default()).await;
    (result.is_error == Some(true), texts(&result).join("\n"))
}

/// Counts checks by key in memory, and remembers every key it was asked about.
#[derive(Clone, Default)]
struct Recording {
    counts: Arc<MemoryStore>,
    keys: Arc<Mutex<Vec<String>>>,
}

impl RateLimitStore for Recording {
    fn check(
        &self,
        key: &str,
        calls: NonZeroU32,
        window: Duration,
    ) -> BoxFuture<'static, Result<Decision, StoreError>> {
        self.keys.lock().unwrap().push(key.to_owned());
        self.counts.check(key, calls, window)
    }
}

fn limited_server(store: Recording, reversed: bool) -> FusionServer {
    let mut first = RateLimit::new(2, Duration::from_secs(60));
    let mut second = RateLimit::new(100, Duration::from_secs(3600)).global().named("hourly");
    if reversed {
        std::mem::swap(&mut first, &mut second);
    }
    let action = Action::new("pay", "Pay.").rate_limit(first.clone()).rate_limit(second.clone()).handler(ok);
    FusionServer::builder("s", "1")
        .rate_limit(second.clone())
        .rate_limit(first.clone())
        .group(Group::new("billing", "Billing.").rate_limit(first).rate_limit(second).action(action))
        .rate_limit_store(store)
        .build(())
        .unwrap()
}

#[tokio::test]
async fn reordered_rate_limits_keep_their_counters() {
    let store = Recording::default();
    let server = limited_server(store.clone(), false);
    assert!(!call_text(&server, "billing", json!({"action": "pay"})).await.0);
    let mut keys = std::mem::take(&mut *store.keys.lock().unwrap());
    keys.sort();
    // Scope, name, then what is counted: the action's, the group's, the server's limits.
    assert_eq!(
        keys,
        [
            "*:2/60s:local",
            "*:hourly:global",
            "billing.pay:2/60s:local",
            "billing.pay:hourly:global",
            "billing:2/60s:local",
            "billing:hourly:global",
        ]
    );

    // The same limits declared in the other order, counting in the same store: same keys,
    // and the counts go on where they were (2 calls per 60 s: the second is the last).
    let reordered = limited_server(store.clone(), true);
    assert!(!call_text(&reordered, "billing", json!({"action": "pay"})).await.0);
    let mut again = std::mem::take(&mut *store.keys.lock().unwrap());
    again.sort();
    assert_eq!(again, keys);
    let (failed, text) = call_text(&reordered, "billing", json!({"action": "pay"})).await;
    assert!(failed);
    assert_eq!(parse(&text).error.code, ErrorCode::RateLimited);
}

#[test]
fn two_limits_of_one_scope_need_two_names() {
    let limit = RateLimit::new(10, Duration::from_secs(60));
    let build = |group: Group<()>| FusionServer::builder("s", "1").group(group).build(());
    let twice = build(
        Group::new("g", "G.")
            .rate_limit(limit.clone())
            .rate_limit(limit.clone())
            .action(Action::new("a", "A.").handler(ok)),
    );
    let error = twice.unwrap_err();
    assert!(
        matches!(&error, BuildError::DuplicateRateLimit { scope, name } if scope == "group \"g\"" && name == "10/60s")
    );
    assert!(error.to_string().contains("RateLimit::named"), "{error}");
    // Named apart, or counting by different keys, they are two counters.
    let named = Group::new("g", "G.").rate_limit(limit.clone()).rate_limit(limit.clone().named("burst"));
    assert!(build(named.action(Action::new("a", "A.").handler(ok))).is_ok());
    let keyed = Group::new("g", "G.").rate_limit(limit.clone()).rate_limit(limit.clone().per_identity());
    assert!(build(keyed.action(Action::new("a", "A.").handler(ok))).is_ok());
    // A name holds no `:` (it sits between the key's parts).
    let odd = Group::new("g", "G.").rate_limit(limit.named("a:b")).action(Action::new("a", "A.").handler(ok));
    assert!(matches!(build(odd), Err(BuildError::InvalidName { what: "rate limit", .. })));
}

/// A middleware that counts the calls it sees.
fn counter(seen: &Arc<AtomicUsize>, name: &'static str) -> impl mcp_fusion::middleware::Middleware {
    let seen = Arc::clone(seen);
    from_fn(move |call: Call, next: Next| {
        seen.fetch_add(1, Ordering::SeqCst);
        next.run(call)
    })
    .named(name)
}

#[tokio::test]
async fn middleware_before_the_rate_limit_sees_what_it_refuses_and_after_does_not() {
    let (before, after) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let server = FusionServer::builder("s", "1")
        .middleware_after(Stage::RateLimit, counter(&after, "after the limit"))
        .middleware_before(Stage::RateLimit, counter(&before, "before the limit"))
        .rate_limit(RateLimit::new(1, Duration::from_secs(60)))
        .group(Group::new("g", "G.").action(Action::new("a", "A.").handler(ok)))
        .build(())
        .unwrap();
    assert_eq!(
        server.chain("g.a").unwrap(),
        ["auth", "before the limit", "rate limit (*:1/60s, 1 call per 60s per caller)", "after the limit", "handler"]
    );
    let mut refused = 0;
    for _ in 0..3 {
        let (failed, text) = call_text(&server, "g", json!({"action": "a"})).await;
        if failed {
            assert_eq!(parse(&text).error.code, ErrorCode::RateLimited);
            refused += 1;
        }
    }
    assert_eq!(refused, 2);
    assert_eq!((before.load(Ordering::SeqCst), after.load(Ordering::SeqCst)), (3, 1));
}

#[test]
fn the_chain_lists_every_stage_in_order() {
    let server = FusionServer::builder("s", "1")
        .middleware(from_fn(|call: Call, next: Next| next.run(call)).named("log"))
        .concurrency(mcp_fusion::guard::Concurrency::new(8, 8))
        .timeout(Duration::from_secs(5))
        .max_result_bytes(1000)
        .group(
            Group::new("g", "G.")
                .concurrency(mcp_fusion::guard::Concurrency::new(2, 4))
                .middleware_before(Stage::Timeout, from_fn(|call: Call, next: Next| next.run(call)).named("group"))
                .action(
                    Action::new("a", "A.")
                        .scope("a:write")
                        .deprecated(Some("g.b"))
                        .rate_limit(RateLimit::new(5, Duration::from_secs(1)).per_identity())
                        .middleware(from_fn(|call: Call, next: Next| next.run(call)).named("own"))
                        .handler(ok),
                )
                .action(Action::new("b", "B.").handler(ok)),
        )
        .build(())
        .unwrap();
    assert_eq!(
        server.chain("g.a").unwrap(),
        [
            "auth (scopes a:write)",
            "rate limit (g.a:5/1s, 5 calls per 1s per identity)",
            "concurrency (Tool \"g\")",
            "concurrency (The server)",
            "deprecation",
            "group",
            "timeout (5000 ms)",
            "result cap (1000 bytes)",
            "log",
            "own",
            "handler",
        ]
    );
    assert_eq!(server.chain("g.nope"), None);
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Checked {
    n: u32,
}

impl Validate for Checked {
    fn validate(&self) -> Vec<FieldIssue> {
        assert!(self.n != 13, "unlucky rule");
        Vec::new()
    }
}

async fn checked(_ctx: Ctx<()>, Validated(input): Validated<Checked>) -> Result<String, ToolError> {
    Ok(input.n.to_string())
}

/// Accepts any string the schema does, then panics on one of them while decoding.
#[derive(schemars::JsonSchema)]
struct Touchy {
    #[allow(dead_code)]
    word: String,
}

impl<'de> Deserialize<'de> for Touchy {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Touchy, D::Error> {
        #[derive(Deserialize)]
        struct Raw {
            word: String,
        }
        let raw = Raw::deserialize(deserializer)?;
        assert!(raw.word != "boom", "decoder fell over");
        Ok(Touchy { word: raw.word })
    }
}

async fn touchy(_ctx: Ctx<()>, _input: Touchy) -> Result<String, ToolError> {
    Ok("fine".into())
}

#[tokio::test]
async fn panics_in_rules_and_decoders_name_the_action() {
    let server = FusionServer::builder("s", "1")
        .group(
            Group::new("g", "G.")
                .action(Action::new("rule", "A rule that panics.").handler(checked))
                .action(Action::new("decode", "A decoder that panics.").handler(touchy)),
        )
        .build(())
        .unwrap();
    let (failed, text) = call_text(&server, "g", json!({"action": "rule", "n": 13})).await;
    assert!(failed);
    assert_eq!(parse(&text).error.message, "[g.rule] panicked: unlucky rule");
    let (failed, text) = call_text(&server, "g", json!({"action": "decode", "word": "boom"})).await;
    assert!(failed);
    assert_eq!(parse(&text).error.message, "[g.decode] panicked: decoder fell over");
    assert_eq!(call_text(&server, "g", json!({"action": "decode", "word": "calm"})).await, (false, "fine".into()));
    assert_eq!(server.in_flight(), 0);
}

/// A client that counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct Watcher(Arc<AtomicUsize>);

impl ClientHandler for Watcher {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("watcher", "1"))
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

async fn greet(ctx: Ctx<String>, input: Name) -> Result<String, ToolError> {
    Ok(format!("{} {}", ctx.state(), input.name))
}

// On the paused clock a sleep ends only once every task is idle: a notification sent for the
// group removed twice would have been counted before the last check, however busy the machine.
#[tokio::test(start_paused = true)]
async fn groups_come_and_go_while_clients_are_connected() {
    let server = FusionServer::builder("s", "1")
        .group(Group::new("base", "Always there.").action(Action::new("ping", "Ping.").handler(ok)))
        .build(())
        .unwrap();
    assert!(server.tools()[0].name == "base");
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let serving = server.clone();
    tokio::spawn(async move {
        if let Ok(running) = serving.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let watcher = Watcher::default();
    let client = watcher.clone().serve(client_io).await.unwrap();
    assert!(client.peer_info().unwrap().capabilities.tools.as_ref().unwrap().list_changed == Some(true));
    let names = |tools: Vec<rmcp::model::Tool>| tools.into_iter().map(|t| t.name.to_string()).collect::<Vec<_>>();
    assert_eq!(names(client.list_all_tools().await.unwrap()), ["base"]);

    // A group of another state type, added while the client is connected.
    let hello = Group::new("hello", "Greets.").action(Action::new("greet", "Greet someone.").handler(greet));
    server.insert_group(hello, "hello".to_owned()).unwrap();
    wait_until(|| watcher.0.load(Ordering::SeqCst) == 1).await;
    assert_eq!(names(client.list_all_tools().await.unwrap()), ["base", "hello"]);
    let greeting = call(&client, "hello", json!({"action": "greet", "name": "Ana"})).await;
    assert_eq!(texts(&greeting), ["hello Ana"]);

    // Replaced under the same name: one tool, the new state; its tools are the same, so
    // nobody is told to read them again.
    let hola = Group::new("hello", "Greets.").action(Action::new("greet", "Greet someone.").handler(greet));
    server.insert_group(hola, Arc::new("hola".to_owned())).unwrap();
    let greeting = call(&client, "hello", json!({"action": "greet", "name": "Ana"})).await;
    assert_eq!(texts(&greeting), ["hola Ana"]);
    assert_eq!(watcher.0.load(Ordering::SeqCst), 1);
    // Replaced by one whose tool differs: told.
    let hallo = Group::new("hello", "Greets in German.").action(Action::new("greet", "Greet someone.").handler(greet));
    server.insert_group(hallo, Arc::new("hallo".to_owned())).unwrap();
    wait_until(|| watcher.0.load(Ordering::SeqCst) == 2).await;
    let greeting = call(&client, "hello", json!({"action": "greet", "name": "Ana"})).await;
    assert_eq!(texts(&greeting), ["hallo Ana"]);

    // A group that does not fit is refused and changes nothing.
    let broken = Group::new("bad name", "No.").action(Action::new("x", "X.").handler(ok));
    assert!(matches!(server.insert_group(broken, ()), Err(BuildError::InvalidName { .. })));

    assert!(server.remove_group("hello"));
    assert!(!server.remove_group("hello"));
    wait_until(|| watcher.0.load(Ordering::SeqCst) == 3).await;
    assert_eq!(names(client.list_all_tools().await.unwrap()), ["base"]);
    let gone = error_text(&call(&client, "hello", json!({"action": "greet", "name": "Ana"})).await);
    assert_eq!(parse(&gone).error.code, ErrorCode::UnknownAction);
    assert_eq!(parse(&gone).error.available_actions, ["base"]);
    // Removing what is not there changed nothing, and told nobody.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(watcher.0.load(Ordering::SeqCst), 3);
}
