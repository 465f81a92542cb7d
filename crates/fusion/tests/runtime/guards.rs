//! The guards, each failing into its exact envelope: concurrency and load shedding, rate
//! limits, timeouts, cancellation, identity and scopes, the payload cap, deprecation.

use crate::support;

use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;
use mcp_fusion::auth::{AuthError, Caller, Identity};
use mcp_fusion::guard::{Concurrency, Decision, FailurePolicy, MemoryStore, RateLimit, RateLimitStore, StoreError};
use mcp_fusion::middleware::{Call, Next};
use mcp_fusion::transport::RequestInfo;
use mcp_fusion::wire::{ErrorCode, ToolError, parse};
use mcp_fusion::{Action, Ctx, FusionServer, Group, from_fn};
use rmcp::Json;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use support::{call, connect, error_text, texts, wait_until};

#[derive(Deserialize, JsonSchema)]
struct Work {
    millis: u64,
    #[serde(default)]
    panic: bool,
}

#[derive(Default)]
struct Counters {
    finished: AtomicUsize,
}

async fn work(ctx: Ctx<Arc<Counters>>, input: Work) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(input.millis)).await;
    if input.panic {
        panic!("worker fell over");
    }
    ctx.state().finished.fetch_add(1, Ordering::SeqCst);
    Ok(format!("worked {} ms", input.millis))
}

fn object(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap()
}

// On the paused clock the handlers' 30 ms end only once every call has arrived: the line of
// four overflows however slowly a busy machine sends the 200.
#[tokio::test(start_paused = true)]
async fn two_hundred_calls_at_two_active_four_queued_are_all_answered() {
    let server = FusionServer::builder("load", "1")
        .group(
            Group::new("load", "Load.")
                .concurrency(Concurrency::new(2, 4))
                .action(Action::new("work", "Work a while.").handler(work)),
        )
        .build(Arc::new(Counters::default()))
        .unwrap();
    let client = Arc::new(connect(server.clone()).await);
    let calls: Vec<_> = (0..200)
        .map(|_| {
            let client = Arc::clone(&client);
            tokio::spawn(async move {
                let request =
                    CallToolRequestParams::new("load").with_arguments(object(json!({"action": "work", "millis": 30})));
                client.call_tool(request).await.expect("every call is answered")
            })
        })
        .collect();
    let mut succeeded = 0;
    let mut shed = 0;
    for handle in calls {
        let result: CallToolResult = handle.await.unwrap();
        if result.is_error == Some(false) {
            succeeded += 1;
            continue;
        }
        let envelope = parse(&error_text(&result));
        assert_eq!(envelope.error.code, ErrorCode::ServerBusy);
        assert_eq!(envelope.error.retry_after, Some(1));
        assert_eq!(
            envelope.error.recovery.as_deref(),
            Some("Send fewer calls at once: wait for your pending calls to finish, then retry one at a time.")
        );
        let message = &envelope.error.message;
        assert!(
            message.starts_with("Tool \"load\" is at capacity (")
                && message.ends_with(" queued). Retry after a short delay.")
        );
        assert!(message.contains("(2 active, 4 queued)"), "the guard sheds only when full: {message}");
        shed += 1;
    }
    assert_eq!(succeeded + shed, 200);
    assert!(succeeded >= 6, "the two running and the four queued succeed: {succeeded}");
    assert!(shed > 0, "200 calls at once overflow a line of four");
    let guard = server.concurrency_guard(Some("load")).unwrap();
    assert_eq!((guard.active(), guard.queued()), (0, 0));
}

// On the paused clock the client's 50 ms, the handler's 80 ms and the timeout's 100 ms end in
// that order, each once everything before it has been handled, however busy the machine is.
#[tokio::test(start_paused = true)]
async fn slots_come_back_after_panics_timeouts_and_cancellations() {
    let counters = Arc::new(Counters::default());
    let server = FusionServer::builder("slots", "1")
        .group(
            Group::new("slots", "Slots.")
                .concurrency(Concurrency::new(1, 0))
                .action(Action::new("work", "Work a while.").timeout(Duration::from_millis(100)).handler(work)),
        )
        .build(Arc::clone(&counters))
        .unwrap();
    let client = connect(server.clone()).await;
    let guard = server.concurrency_guard(Some("slots")).unwrap();

    let panicked =
        parse(&error_text(&call(&client, "slots", json!({"action": "work", "millis": 1, "panic": true})).await));
    assert_eq!(panicked.error.message, "[slots.work] panicked: worker fell over");
    assert_eq!((guard.active(), guard.queued()), (0, 0));

    let timed_out = error_text(&call(&client, "slots", json!({"action": "work", "millis": 5000})).await);
    assert_eq!(
        timed_out,
        "<tool_error code=\"TIMEOUT\" severity=\"error\">\n<message>slots.work did not finish within 100 ms.</message>\n\
         <recovery>It may have run: check its effect with a read action before calling it again.</recovery>\n\
         </tool_error>"
    );
    assert_eq!((guard.active(), guard.queued()), (0, 0));

    // The client gives up after 50 ms: rmcp sends notifications/cancelled, the handler stops.
    let request = CallToolRequestParams::new("slots").with_arguments(object(json!({"action": "work", "millis": 80})));
    assert!(tokio::time::timeout(Duration::from_millis(50), client.call_tool(request)).await.is_err());
    wait_until(|| guard.active() == 0).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(counters.finished.load(Ordering::SeqCst), 0, "the cancelled handler did not run to its end");

    let after = call(&client, "slots", json!({"action": "work", "millis": 1})).await;
    assert_eq!(texts(&after), ["worked 1 ms"]);
    assert_eq!((guard.active(), guard.queued()), (0, 0));
}

// On the paused clock the 50 ms timeout ends the 5 s of work at once.
#[tokio::test(start_paused = true)]
async fn an_idempotent_action_times_out_with_a_safe_retry() {
    let server = FusionServer::builder("t", "1")
        .timeout(Duration::from_millis(50))
        .group(Group::new("t", "T.").action(Action::new("work", "Work.").idempotent().handler(work)))
        .build(Arc::new(Counters::default()))
        .unwrap();
    let result =
        server.call("t", Some(object(json!({"action": "work", "millis": 5000}))), RequestInfo::default()).await;
    let envelope = parse(&error_text(&result));
    assert_eq!(envelope.error.code, ErrorCode::Timeout);
    assert_eq!(envelope.error.recovery.as_deref(), Some("Retry the call: repeating this action is safe."));
}

#[tokio::test]
async fn rate_limits_are_exact_under_concurrent_calls() {
    let server =
        FusionServer::builder("rl", "1")
            .group(Group::new("rl", "Rate limited.").action(
                Action::new("hit", "Hit.").rate_limit(RateLimit::new(5, Duration::from_secs(60))).handler(work),
            ))
            .build(Arc::new(Counters::default()))
            .unwrap();
    let client = Arc::new(connect(server).await);
    let calls: Vec<_> = (0..30)
        .map(|_| {
            let client = Arc::clone(&client);
            tokio::spawn(async move {
                let request =
                    CallToolRequestParams::new("rl").with_arguments(object(json!({"action": "hit", "millis": 0})));
                client.call_tool(request).await.unwrap()
            })
        })
        .collect();
    let mut admitted = 0;
    let mut limited = Vec::new();
    for handle in calls {
        let result = handle.await.unwrap();
        if result.is_error == Some(false) {
            admitted += 1;
        } else {
            limited.push(error_text(&result));
        }
    }
    assert_eq!(admitted, 5);
    assert_eq!(limited.len(), 25);
    // A burst of 5 per 60 s, then one call every 12 s.
    assert_eq!(
        limited[0],
        "<tool_error code=\"RATE_LIMITED\" severity=\"error\">\n<message>Rate limit reached: 5 calls per 60s for this caller on rl.hit.</message>\n\
         <recovery>Wait 12 seconds before calling rl.hit again; do not retry sooner. Other actions are not limited by it.</recovery>\n\
         <details>\n  <detail key=\"limit\">5</detail>\n  <detail key=\"window_seconds\">60</detail>\n  \
         <detail key=\"scope\">action</detail>\n  <detail key=\"counted_per\">caller</detail>\n</details>\n\
         <retry_after>12 seconds</retry_after>\n</tool_error>"
    );
}

#[tokio::test]
async fn rate_limits_count_per_session_per_identity_or_globally() {
    let server = FusionServer::builder("rl", "1")
        .group(
            Group::new("rl", "Rate limited.")
                .action(
                    Action::new("session", "Per session.")
                        .rate_limit(RateLimit::new(1, Duration::from_secs(60)).per_session())
                        .handler(work),
                )
                .action(
                    Action::new("identity", "Per identity.")
                        .rate_limit(RateLimit::new(1, Duration::from_secs(60)).per_identity())
                        .handler(work),
                )
                .action(
                    Action::new("global", "For everyone.")
                        .rate_limit(RateLimit::new(1, Duration::from_secs(60)).global())
                        .handler(work),
                ),
        )
        .build(Arc::new(Counters::default()))
        .unwrap();
    let request = |session: &str, subject: &str| RequestInfo {
        session_id: Some(session.into()),
        caller: Caller::Authenticated(Identity::new(subject)),
        ..RequestInfo::default()
    };
    let admitted = |action: &str, session: &str, subject: &str| {
        let server = server.clone();
        let (action, info) = (action.to_owned(), request(session, subject));
        async move {
            let result = server.call("rl", Some(object(json!({"action": action, "millis": 0}))), info).await;
            result.is_error == Some(false)
        }
    };
    assert!(admitted("session", "s1", "ana").await);
    assert!(!admitted("session", "s1", "bob").await);
    assert!(admitted("session", "s2", "ana").await);
    assert!(admitted("identity", "s1", "ana").await);
    assert!(!admitted("identity", "s2", "ana").await);
    assert!(admitted("identity", "s1", "bob").await);
    assert!(admitted("global", "s1", "ana").await);
    assert!(!admitted("global", "s2", "bob").await);
}

async fn whoami(ctx: Ctx<()>, _input: Empty) -> Result<String, ToolError> {
    Ok(ctx.call().identity().map(|i| i.subject.clone()).unwrap_or_default())
}

#[derive(Deserialize, JsonSchema)]
struct Empty {}

fn secured() -> FusionServer {
    FusionServer::builder("auth", "1")
        .group(
            Group::new("acct", "Accounts.")
                .action(Action::new("read", "Read.").requires_identity().handler(whoami))
                .action(Action::new("close", "Close.").scope("accounts:close").handler(whoami))
                .action(Action::new("public", "Anyone.").handler(whoami)),
        )
        .build(())
        .unwrap()
}

async fn as_caller(server: &FusionServer, action: &str, caller: Caller) -> CallToolResult {
    let info = RequestInfo { caller, ..RequestInfo::default() };
    server.call("acct", Some(object(json!({"action": action}))), info).await
}

#[tokio::test]
async fn identity_and_scopes() {
    let server = secured();
    assert_eq!(
        error_text(&as_caller(&server, "read", Caller::Anonymous).await),
        "<tool_error code=\"AUTH_REQUIRED\" severity=\"error\">\n\
         <message>acct.read needs an authenticated caller, and this call came without credentials.</message>\n\
         <recovery>Tell the user this action needs them to sign in (the client must send a bearer token); do not retry until then.</recovery>\n\
         </tool_error>"
    );
    assert_eq!(
        error_text(&as_caller(&server, "read", Caller::Refused(AuthError::Expired)).await),
        "<tool_error code=\"UNAUTHORIZED\" severity=\"error\">\n\
         <message>The credentials sent with this call were refused: the bearer token has expired.</message>\n\
         <recovery>Tell the user to sign in again (the client must send a fresh bearer token); do not retry with the same credentials.</recovery>\n\
         </tool_error>"
    );
    assert_eq!(
        error_text(
            &as_caller(&server, "close", Caller::Authenticated(Identity::new("ana").scopes(["accounts:read"]))).await
        ),
        "<tool_error code=\"FORBIDDEN\" severity=\"error\">\n\
         <message>acct.close needs the scope \"accounts:close\", which 'ana' does not have.</message>\n\
         <recovery>Tell the user this needs the permission \"accounts:close\", which their sign-in does not grant; do not retry until they have it, or use an action you are allowed to call.</recovery>\n\
         <details>\n  <detail key=\"required_scope\">accounts:close</detail>\n</details>\n</tool_error>"
    );
    let closed =
        as_caller(&server, "close", Caller::Authenticated(Identity::new("ana").scopes(["accounts:close"]))).await;
    assert_eq!(texts(&closed), ["ana"]);
    assert_eq!(texts(&as_caller(&server, "public", Caller::Anonymous).await), [""]);
}

#[derive(Deserialize, JsonSchema)]
struct Big {
    repeat: usize,
}

async fn big(_ctx: Ctx<()>, input: Big) -> Result<String, ToolError> {
    Ok("é".repeat(input.repeat))
}

#[tokio::test]
async fn an_oversized_result_is_cut_with_a_warning() {
    let server = FusionServer::builder("cap", "1")
        .max_result_bytes(101)
        .group(Group::new("cap", "Cap.").action(Action::new("big", "Big.").handler(big)))
        .build(())
        .unwrap();
    let result =
        server.call("cap", Some(object(json!({"action": "big", "repeat": 500}))), RequestInfo::default()).await;
    assert_eq!(result.is_error, Some(false));
    let blocks = texts(&result);
    // 101 bytes would split the 51st 'é' (two bytes each): 50 whole characters are kept.
    assert_eq!(blocks[0], "é".repeat(50));
    assert_eq!(
        blocks[1],
        "<tool_error code=\"RESULT_TRUNCATED\" severity=\"warning\">\n<message>The result was cut to 101 of 1000 bytes.</message>\n\
         <recovery>Ask for less: use a smaller page (limit) or a narrower filter, and paginate.</recovery>\n\
         <details>\n  <detail key=\"limit_bytes\">101</detail>\n  <detail key=\"result_bytes\">1000</detail>\n</details>\n</tool_error>"
    );
    let small = server.call("cap", Some(object(json!({"action": "big", "repeat": 10}))), RequestInfo::default()).await;
    assert_eq!(texts(&small).len(), 1);
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Search {
    query: Option<String>,
    #[deprecated]
    q: Option<String>,
    page: Option<u32>,
}

async fn search(_ctx: Ctx<()>, _input: Search) -> Result<String, ToolError> {
    Ok("found".into())
}

#[tokio::test]
async fn deprecated_actions_and_fields_succeed_with_a_warning() {
    let server = FusionServer::builder("dep", "1")
        .group(
            Group::new("docs", "Docs.")
                .action(Action::new("search", "Search.").deprecated(Some("docs.find")).handler(search))
                .action(Action::new("find", "Find.").deprecated_field("page", Some("cursor")).handler(search)),
        )
        .build(())
        .unwrap();
    let old =
        server.call("docs", Some(object(json!({"action": "search", "query": "x"}))), RequestInfo::default()).await;
    assert_eq!(old.is_error, Some(false));
    assert_eq!(
        texts(&old),
        [
            "found",
            "<tool_error code=\"DEPRECATED\" severity=\"warning\">\n<message>docs.search is deprecated.</message>\n\
             <recovery>Use docs.find instead.</recovery>\n<available_actions>\n  <action>docs.find</action>\n</available_actions>\n</tool_error>"
        ]
    );
    let fields =
        server.call("docs", Some(object(json!({"action": "find", "q": "x", "page": 2}))), RequestInfo::default()).await;
    let warnings: Vec<String> = texts(&fields).into_iter().skip(1).collect();
    assert_eq!(
        warnings,
        [
            "<tool_error code=\"DEPRECATED\" severity=\"warning\">\n<message>The field \"q\" of docs.find is deprecated.</message>\n\
             <recovery>Stop sending \"q\": it will be removed.</recovery>\n<available_actions>\n  <action>docs.find</action>\n</available_actions>\n\
             <details>\n  <detail key=\"field\">q</detail>\n</details>\n</tool_error>",
            "<tool_error code=\"DEPRECATED\" severity=\"warning\">\n<message>The field \"page\" of docs.find is deprecated.</message>\n\
             <recovery>Send \"cursor\" instead of \"page\".</recovery>\n<available_actions>\n  <action>docs.find</action>\n</available_actions>\n\
             <details>\n  <detail key=\"field\">page</detail>\n</details>\n</tool_error>",
        ]
    );
    let clean =
        server.call("docs", Some(object(json!({"action": "find", "query": "x"}))), RequestInfo::default()).await;
    assert_eq!(texts(&clean), ["found"]);
}

#[derive(Serialize, JsonSchema)]
struct Listing {
    items: Vec<String>,
}

async fn listing(_ctx: Ctx<()>, input: Big) -> Result<Json<Listing>, ToolError> {
    Ok(Json(Listing { items: vec!["x".repeat(10); input.repeat] }))
}

async fn moved(_ctx: Ctx<()>, _input: Big) -> Result<Json<Listing>, ToolError> {
    Err(ToolError::deprecated("out.moved has moved.").suggest("Use out.listing."))
}

async fn moved_text(_ctx: Ctx<()>, _input: Big) -> Result<String, ToolError> {
    Err(ToolError::deprecated("text.moved has moved.").suggest("Use text.big."))
}

/// `out`: every action declares an output schema, so the grouped tool does; `noted` adds a
/// long note after its structured value, as a middleware may. `text`: no output schema.
fn structured_server() -> FusionServer {
    let note = from_fn(|call: Call, next: Next| async move {
        let mut output = next.run(call).await?;
        output.content.push(ContentBlock::text("a note. ".repeat(40)));
        Ok::<_, ToolError>(output)
    });
    FusionServer::builder("out", "1")
        .max_result_bytes(200)
        .group(
            Group::new("out", "Out.")
                .action(Action::new("listing", "List.").handler(listing))
                .action(Action::new("noted", "List, with a note.").middleware(note).handler(listing))
                .action(Action::new("moved", "Moved.").handler(moved)),
        )
        .group(
            Group::new("text", "Text.")
                .action(Action::new("big", "Big.").handler(big))
                .action(Action::new("moved", "Moved.").handler(moved_text)),
        )
        .build(())
        .unwrap()
}

#[tokio::test]
async fn a_truncated_result_of_a_tool_with_an_output_schema_keeps_its_structured_content_or_fails() {
    let server = structured_server();
    assert!(server.tools().iter().find(|tool| tool.name == "out").unwrap().output_schema.is_some());
    let call = |action: &str, repeat: usize| {
        server.call("out", Some(object(json!({"action": action, "repeat": repeat}))), RequestInfo::default())
    };

    // The structured value fits the cap: it is kept whole, the text is what is cut.
    let noted = call("noted", 2).await;
    assert_eq!(noted.is_error, Some(false));
    assert_eq!(noted.structured_content, Some(json!({"items": ["xxxxxxxxxx", "xxxxxxxxxx"]})));
    let blocks = texts(&noted);
    assert_eq!(blocks[0], r#"{"items":["xxxxxxxxxx","xxxxxxxxxx"]}"#);
    assert_eq!(blocks[0].len() + blocks[1].len(), 200);
    assert!(blocks[2].starts_with("<tool_error code=\"RESULT_TRUNCATED\" severity=\"warning\">\n"), "{blocks:?}");

    // It does not: no conforming structured content can be sent, so the result is an error.
    let long = call("listing", 50).await;
    assert_eq!(
        error_text(&long),
        "<tool_error code=\"RESULT_TRUNCATED\" severity=\"error\">\n\
         <message>The result is 661 bytes, more than the 200-byte cap, and this tool's structured result cannot be cut.</message>\n\
         <recovery>Ask for less: use a smaller page (limit) or a narrower filter, and paginate.</recovery>\n\
         <details>\n  <detail key=\"limit_bytes\">200</detail>\n  <detail key=\"result_bytes\">661</detail>\n</details>\n</tool_error>"
    );

    // A tool without an output schema is cut as before, its structured content dropped.
    let text = server.call("text", Some(object(json!({"action": "big", "repeat": 500}))), RequestInfo::default()).await;
    assert_eq!((text.is_error, texts(&text).len()), (Some(false), 2));
}

#[tokio::test]
async fn a_standalone_warning_of_a_tool_with_an_output_schema_is_an_error_result() {
    let server = structured_server();
    let warning = "<tool_error code=\"DEPRECATED\" severity=\"warning\">\n<message>out.moved has moved.</message>\n\
                   <recovery>Use out.listing.</recovery>\n</tool_error>";
    let moved = server.call("out", Some(object(json!({"action": "moved", "repeat": 1}))), RequestInfo::default()).await;
    // isError, so no client looks for the structured content a success of this tool needs.
    assert_eq!(error_text(&moved), warning);

    // Without an output schema, a warning alone is still a success.
    let text = server.call("text", Some(object(json!({"action": "moved", "repeat": 1}))), RequestInfo::default()).await;
    assert_eq!(text.is_error, Some(false));
    assert_eq!(texts(&text).len(), 1);
}

async fn gone(_ctx: Ctx<()>, _input: Search) -> Result<String, ToolError> {
    Err(ToolError::not_found("No such document."))
}

#[tokio::test]
async fn a_failed_result_is_exactly_one_text_block() {
    let server = FusionServer::builder("dep", "1")
        .group(
            Group::new("docs", "Docs.")
                .action(Action::new("get", "Get.").deprecated(Some("docs.find")).handler(gone))
                .action(Action::new("find", "Find.").handler(gone)),
        )
        .build(())
        .unwrap();
    // The deprecation warning is collected, then the handler fails: the warning is folded
    // into the one block, after the envelope, not sent as a block of its own.
    let failed = server.call("docs", Some(object(json!({"action": "get"}))), RequestInfo::default()).await;
    assert_eq!(
        error_text(&failed),
        "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n<message>No such document.</message>\n</tool_error>\n\
         <tool_error code=\"DEPRECATED\" severity=\"warning\">\n<message>docs.get is deprecated.</message>\n\
         <recovery>Use docs.find instead.</recovery>\n<available_actions>\n  <action>docs.find</action>\n</available_actions>\n</tool_error>"
    );
    assert_eq!(parse(&error_text(&failed)).error.code, ErrorCode::NotFound, "the envelope read is the failure");
}

/// A call as `subject` in `session`.
fn in_session(session: &str, subject: &str) -> RequestInfo {
    RequestInfo {
        session_id: Some(session.into()),
        caller: Caller::Authenticated(Identity::new(subject)),
        ..RequestInfo::default()
    }
}

/// The code of a failed call and its message, or `None` when it succeeded.
fn refusal(result: &CallToolResult) -> Option<(ErrorCode, String)> {
    if result.is_error == Some(false) {
        return None;
    }
    let envelope = parse(&error_text(result));
    Some((envelope.error.code.clone(), envelope.error.message.clone()))
}

#[tokio::test]
async fn a_call_refused_by_a_later_limit_gives_back_what_the_earlier_ones_took() {
    // The chain checks the action's limits, then the group's, then the server's: a call the
    // server's limit refuses has already been counted by the other two.
    let server = FusionServer::builder("acct", "1")
        .rate_limit(RateLimit::new(1, Duration::from_secs(60)).per_session())
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
        .build(Arc::new(Counters::default()))
        .unwrap();
    let run = |action: &str, session: &str| {
        let (server, arguments, info) =
            (server.clone(), object(json!({"action": action, "millis": 0})), in_session(session, "ana"));
        async move { refusal(&server.call("g", Some(arguments), info).await) }
    };
    let server_limit = "Rate limit reached: 1 call per 60s for this session across every tool of this server.";
    assert_eq!(run("a", "s1").await, None);
    // Hammering from a spent session: every call is refused by the server's limit, and none
    // of them spends the action's or the group's budget.
    for _ in 0..3 {
        assert_eq!(run("a", "s1").await, Some((ErrorCode::RateLimited, server_limit.to_owned())));
    }
    // So a fresh session still gets the action's second call and the group's third...
    assert_eq!(run("a", "s2").await, None);
    assert_eq!(run("b", "s3").await, None);
    // ...and not one more.
    let (code, message) = run("b", "s4").await.unwrap();
    assert_eq!(code, ErrorCode::RateLimited);
    assert!(message.ends_with("for this caller across every action of g."), "{message}");
    let (code, message) = run("a", "s5").await.unwrap();
    assert_eq!(code, ErrorCode::RateLimited);
    assert!(message.ends_with("for this caller on g.a."), "{message}");
}

/// One group, `busy`, whose one slot and empty line guard `work`, limited to 2 calls a minute.
fn busy_server(queue: usize) -> FusionServer {
    FusionServer::builder("busy", "1")
        .group(
            Group::new("busy", "Busy.").concurrency(Concurrency::new(1, queue)).action(
                Action::new("work", "Work.").rate_limit(RateLimit::new(2, Duration::from_secs(60))).handler(work),
            ),
        )
        .build(Arc::new(Counters::default()))
        .unwrap()
}

fn work_for(server: &FusionServer, millis: u64, info: RequestInfo) -> tokio::task::JoinHandle<CallToolResult> {
    let server = server.clone();
    tokio::spawn(
        async move { server.call("busy", Some(object(json!({"action": "work", "millis": millis}))), info).await },
    )
}

// On the paused clock the slow call's 300 ms pass only while nothing else can run: it still
// holds its slot when the next call comes, however busy the machine is.
#[tokio::test(start_paused = true)]
async fn a_call_shed_by_the_concurrency_guard_gives_back_its_rate_limit() {
    let server = busy_server(0);
    let guard = server.concurrency_guard(Some("busy")).unwrap();
    let slow = work_for(&server, 300, RequestInfo::default());
    wait_until(|| guard.active() == 1).await;
    let shed = work_for(&server, 0, RequestInfo::default()).await.unwrap();
    assert_eq!(refusal(&shed).map(|(code, _)| code), Some(ErrorCode::ServerBusy));
    assert_eq!(refusal(&slow.await.unwrap()), None);
    // The slow call and this one are the limit's two; the shed call was not counted.
    assert_eq!(refusal(&work_for(&server, 0, RequestInfo::default()).await.unwrap()), None);
    let limited = work_for(&server, 0, RequestInfo::default()).await.unwrap();
    assert_eq!(refusal(&limited).map(|(code, _)| code), Some(ErrorCode::RateLimited));
}

// On the paused clock the slow call's 300 ms pass only while nothing else can run: it still
// holds its slot when the next call comes, however busy the machine is.
#[tokio::test(start_paused = true)]
async fn a_call_cancelled_while_waiting_for_a_slot_gives_back_its_rate_limit() {
    let server = busy_server(1);
    let guard = server.concurrency_guard(Some("busy")).unwrap();
    let slow = work_for(&server, 300, RequestInfo::default());
    wait_until(|| guard.active() == 1).await;
    let cancelled = RequestInfo::default();
    let token = cancelled.cancellation.clone();
    let waiting = work_for(&server, 0, cancelled);
    wait_until(|| guard.queued() == 1).await;
    token.cancel();
    let waiting = waiting.await.unwrap();
    assert_eq!(refusal(&waiting).map(|(code, _)| code), Some(ErrorCode::cancelled()));
    assert_eq!(refusal(&slow.await.unwrap()), None);
    assert_eq!(refusal(&work_for(&server, 0, RequestInfo::default()).await.unwrap()), None);
    let limited = work_for(&server, 0, RequestInfo::default()).await.unwrap();
    assert_eq!(refusal(&limited).map(|(code, _)| code), Some(ErrorCode::RateLimited));
}

/// Counts in memory, but never answers a refund.
struct StuckRefunds {
    counts: MemoryStore,
    refunds: Arc<AtomicUsize>,
}

impl RateLimitStore for StuckRefunds {
    fn check(
        &self,
        key: &str,
        calls: NonZeroU32,
        window: Duration,
    ) -> BoxFuture<'static, Result<Decision, StoreError>> {
        self.counts.check(key, calls, window)
    }

    fn refund(&self, _key: &str, _calls: NonZeroU32, _window: Duration) -> BoxFuture<'static, Result<(), StoreError>> {
        self.refunds.fetch_add(1, Ordering::SeqCst);
        Box::pin(std::future::pending())
    }
}

#[tokio::test]
async fn a_refund_the_store_does_not_answer_never_holds_up_the_refusal() {
    let refunds = Arc::new(AtomicUsize::new(0));
    let server = FusionServer::builder("stuck", "1")
        .rate_limit(RateLimit::new(1, Duration::from_secs(60)).global())
        .rate_limit_store(StuckRefunds { counts: MemoryStore::new(), refunds: Arc::clone(&refunds) })
        .rate_limit_failure(FailurePolicy::Closed, Duration::from_millis(100))
        .group(Group::new("g", "G.").action(
            Action::new("a", "A.").rate_limit(RateLimit::new(5, Duration::from_secs(60)).global()).handler(work),
        ))
        .build(Arc::new(Counters::default()))
        .unwrap();
    let run = || server.call("g", Some(object(json!({"action": "a", "millis": 0}))), RequestInfo::default());
    assert_eq!(refusal(&run().await), None);
    let started = std::time::Instant::now();
    let (code, message) = refusal(&run().await).unwrap();
    assert!(started.elapsed() < Duration::from_secs(2), "the refusal took {:?}", started.elapsed());
    assert_eq!(code, ErrorCode::RateLimited);
    assert!(message.ends_with("across every tool of this server."), "{message}");
    // The action's limit was asked to give the call back; it did not answer, so it stays counted.
    assert_eq!(refunds.load(Ordering::SeqCst), 1);
}
