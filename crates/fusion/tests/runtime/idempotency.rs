//! Idempotency keys in memory: replays, conflicts, a repeat while the first call runs, keys in
//! `_meta`, bad keys, what is not kept, and the chain's order.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_fusion::auth::{Caller, Identity};
use mcp_fusion::guard::{IDEMPOTENCY_KEY_META, Idempotency, MemoryKeys};
use mcp_fusion::transport::RequestInfo;
use mcp_fusion::wire::{ErrorCode, ToolError, parse};
use mcp_fusion::{Action, BuildError, Ctx, FusionServer, Group};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use support::{error_text, texts, wait_until};

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Send {
    to: String,
    #[serde(default)]
    millis: u64,
    #[serde(default)]
    fail: Option<String>,
    idempotency_key: Option<String>,
}

/// A server whose `send` counts its runs, sleeps `millis`, and fails with `fail` when set.
fn server(keys: Idempotency, runs: &Arc<AtomicUsize>) -> FusionServer {
    let runs = Arc::clone(runs);
    let send = Action::new("send", "Send a message once per key.").idempotent_by_key().handler(
        move |ctx: Ctx<()>, input: Send| {
            let run = runs.fetch_add(1, Ordering::SeqCst) + 1;
            async move {
                tokio::time::sleep(Duration::from_millis(input.millis)).await;
                match input.fail.as_deref() {
                    Some("busy") => Err(ToolError::server_busy("Busy.").retry_after(1)),
                    Some(code) => Err(ToolError::new(code, "Refused.")),
                    None => {
                        ctx.warn(ToolError::new("SLOW_LANE", "Sent by the slow lane.").warning());
                        Ok(format!("sent to {} (run {run})", input.to))
                    }
                }
            }
        },
    );
    FusionServer::builder::<()>("mail", "1.0.0")
        .idempotency(keys)
        .group(Group::new("mail", "Messages.").action(send))
        .build(())
        .unwrap()
}

async fn call(server: &FusionServer, arguments: Value, request: RequestInfo) -> CallToolResult {
    server.call("mail", arguments.as_object().cloned(), request).await
}

fn send(to: &str, key: &str) -> Value {
    json!({"action": "send", "to": to, "idempotency_key": key})
}

#[tokio::test]
async fn a_repeat_gets_the_first_result_with_its_warnings_and_other_arguments_a_conflict() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = server(Idempotency::new(), &runs);
    let first = call(&server, send("ana", "k1"), RequestInfo::default()).await;
    let again = call(&server, send("ana", "k1"), RequestInfo::default()).await;
    assert_eq!(first, again);
    assert_eq!(texts(&first)[0], "sent to ana (run 1)");
    assert!(texts(&again).iter().any(|text| text.contains("SLOW_LANE")), "{again:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    let conflict = call(&server, send("bruno", "k1"), RequestInfo::default()).await;
    let conflict = parse(&error_text(&conflict)).error;
    assert_eq!(conflict.code, ErrorCode::Conflict);
    assert_eq!(conflict.details, [("idempotency_key".to_owned(), "'k1'".to_owned())]);
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // Without a key every call runs; a key in `_meta` counts like one in the arguments.
    call(&server, json!({"action": "send", "to": "carol"}), RequestInfo::default()).await;
    call(&server, json!({"action": "send", "to": "carol"}), RequestInfo::default()).await;
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    let meta = || RequestInfo { idempotency_key: Some(json!("k2")), ..RequestInfo::default() };
    let one = call(&server, json!({"action": "send", "to": "dora"}), meta()).await;
    let two = call(&server, json!({"action": "send", "to": "dora"}), meta()).await;
    assert_eq!(one, two);
    assert_eq!(runs.load(Ordering::SeqCst), 4);
    assert_eq!(IDEMPOTENCY_KEY_META, "fusion/idempotency_key");
}

#[tokio::test]
async fn a_key_belongs_to_its_first_caller_and_another_gets_conflict_never_its_answer() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = server(Idempotency::new(), &runs);
    let as_who =
        |subject: &str| RequestInfo { caller: Caller::Authenticated(Identity::new(subject)), ..RequestInfo::default() };
    let ana = call(&server, send("x", "same"), as_who("ana")).await;
    assert_eq!(texts(&ana)[0], "sent to x (run 1)");
    // The same key and the same arguments from another caller: neither ana's answer nor a run.
    for (to, who) in [("x", "bruno"), ("y", "bruno")] {
        let refused = parse(&error_text(&call(&server, send(to, "same"), as_who(who)).await)).error;
        assert_eq!(refused.code, ErrorCode::Conflict, "{refused:?}");
        assert!(refused.message.contains("bound to another caller's call of mail.send"), "{refused:?}");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // The refusal bound nothing to bruno: ana's repeat still gets ana's answer.
    assert_eq!(call(&server, send("x", "same"), as_who("ana")).await, ana);

    // Anonymous callers are told apart by the session the transport issued.
    let in_session = |id: &str| RequestInfo { session_id: Some(Arc::from(id)), ..RequestInfo::default() };
    call(&server, send("z", "anon"), in_session("s1")).await;
    let refused = parse(&error_text(&call(&server, send("z", "anon"), in_session("s2")).await)).error;
    assert_eq!(refused.code, ErrorCode::Conflict, "{refused:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 2);

    // Unless the operator says every anonymous caller is one.
    let shared = server_sharing(&runs);
    let first = call(&shared, send("z", "anon"), in_session("s1")).await;
    assert_eq!(call(&shared, send("z", "anon"), in_session("s2")).await, first);
    assert_eq!(runs.load(Ordering::SeqCst), 3);
}

fn server_sharing(runs: &Arc<AtomicUsize>) -> FusionServer {
    server(Idempotency::new().anonymous_callers_share_keys(true), runs)
}

// On the paused clock the first call's 300 ms pass only while nothing else can run: it is still
// running when the repeat comes, however busy the machine is.
#[tokio::test(start_paused = true)]
async fn a_repeat_waits_for_the_running_call_or_answers_server_busy() {
    let runs = Arc::new(AtomicUsize::new(0));
    let waiting = Arc::new(server(Idempotency::new(), &runs));
    let slow = json!({"action": "send", "to": "ana", "millis": 300, "idempotency_key": "slow"});
    let first = tokio::spawn({
        let (server, slow) = (Arc::clone(&waiting), slow.clone());
        async move { call(&server, slow, RequestInfo::default()).await }
    });
    wait_until(|| runs.load(Ordering::SeqCst) == 1).await;
    let second = call(&waiting, slow.clone(), RequestInfo::default()).await;
    assert_eq!(first.await.unwrap(), second);
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    let runs = Arc::new(AtomicUsize::new(0));
    let impatient = Arc::new(server(Idempotency::new().wait(Duration::ZERO), &runs));
    let first = tokio::spawn({
        let (server, slow) = (Arc::clone(&impatient), slow.clone());
        async move { call(&server, slow, RequestInfo::default()).await }
    });
    wait_until(|| runs.load(Ordering::SeqCst) == 1).await;
    let busy = parse(&error_text(&call(&impatient, slow.clone(), RequestInfo::default()).await)).error;
    assert_eq!((busy.code.clone(), busy.retry_after), (ErrorCode::ServerBusy, Some(2)), "{busy:?}");
    assert!(busy.recovery.as_deref().unwrap().contains("same arguments and idempotency_key"), "{busy:?}");
    let first = first.await.unwrap();
    assert_eq!(call(&impatient, slow, RequestInfo::default()).await, first);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn failures_worth_retrying_free_the_key_and_final_ones_are_kept() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = server(Idempotency::new(), &runs);
    let busy = json!({"action": "send", "to": "ana", "fail": "busy", "idempotency_key": "b"});
    call(&server, busy.clone(), RequestInfo::default()).await;
    call(&server, busy, RequestInfo::default()).await;
    assert_eq!(runs.load(Ordering::SeqCst), 2, "SERVER_BUSY is not kept: the retry runs");

    let refused = json!({"action": "send", "to": "ana", "fail": "NOT_FOUND", "idempotency_key": "n"});
    let first = call(&server, refused.clone(), RequestInfo::default()).await;
    let again = call(&server, refused, RequestInfo::default()).await;
    assert_eq!(first, again);
    assert_eq!(parse(&error_text(&again)).error.code, ErrorCode::NotFound);
    assert_eq!(runs.load(Ordering::SeqCst), 3, "NOT_FOUND is the answer: kept");
}

#[tokio::test]
async fn a_bad_key_is_refused_before_anything_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = server(Idempotency::new(), &runs);
    let long = "k".repeat(256);
    for request in [
        RequestInfo { idempotency_key: Some(json!(42)), ..RequestInfo::default() },
        RequestInfo { idempotency_key: Some(json!(long)), ..RequestInfo::default() },
        RequestInfo { idempotency_key: Some(json!("")), ..RequestInfo::default() },
    ] {
        let refused = parse(&error_text(&call(&server, json!({"action": "send", "to": "x"}), request).await)).error;
        assert_eq!(refused.code, ErrorCode::ValidationError, "{refused:?}");
        assert!(
            refused.message.starts_with("The idempotency_key must be a string of 1 to 255 characters"),
            "{refused:?}"
        );
        assert!(refused.message.len() < 200, "the key is not echoed whole: {}", refused.message);
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

// On the paused clock, as above: the first call still holds its key when the second comes.
#[tokio::test(start_paused = true)]
async fn a_full_store_refuses_new_keys_with_server_busy() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = Arc::new(server(Idempotency::new().store(MemoryKeys::new(1)).wait(Duration::ZERO), &runs));
    let slow = json!({"action": "send", "to": "ana", "millis": 300, "idempotency_key": "a"});
    let first = tokio::spawn({
        let server = Arc::clone(&server);
        async move { call(&server, slow, RequestInfo::default()).await }
    });
    wait_until(|| runs.load(Ordering::SeqCst) == 1).await;
    let refused = parse(&error_text(&call(&server, send("bruno", "b"), RequestInfo::default()).await)).error;
    assert_eq!(refused.code, ErrorCode::ServerBusy);
    assert!(refused.recovery.as_deref().unwrap().starts_with("Nothing ran."), "{refused:?}");
    first.await.unwrap();
}

#[test]
fn the_chain_lists_the_key_after_auth_and_check_with_must_name_a_read_only_action() {
    let runs = Arc::new(AtomicUsize::new(0));
    let chain = server(Idempotency::new(), &runs).chain("mail.send").unwrap();
    assert_eq!(chain, ["auth", "idempotency key", "handler"]);

    async fn noop(_ctx: Ctx<()>, _input: Send) -> Result<String, ToolError> {
        Ok(String::new())
    }
    for (check, found) in [("missing", false), ("send_too", true)] {
        let group = Group::new("mail", "Messages.")
            .action(Action::new("send", "Send.").check_with(check).handler(noop))
            .action(Action::new("send_too", "Also send.").handler(noop));
        let Err(error) = FusionServer::builder::<()>("mail", "1.0.0").group(group).build(()) else {
            panic!("built with check_with({check:?})")
        };
        assert!(matches!(&error, BuildError::CheckWith { found: f, .. } if *f == found), "{error}");
    }
}
