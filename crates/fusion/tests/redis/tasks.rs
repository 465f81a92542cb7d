//! `RedisStore` as a task store against a real `redis-server`: two stores on one Redis and one
//! prefix stand for two replicas, and each sees the other's tasks with the in-memory store's
//! semantics. Ignored by default, like the rest of this suite.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcp_fusion::guard::RedisStore;
use mcp_fusion::task::{FinishIf, Renewal, StoredTask, TaskState, TaskStore};
use serde_json::json;

use crate::redis::Redis;

const PREFIX: &str = "tasks-test:";

fn now_ms() -> u64 {
    u64::try_from(SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis()).unwrap()
}

/// A working task kept `ttl_ms`, its lease a minute ahead.
fn task(id: &str, ttl_ms: u64) -> StoredTask {
    let mut task = StoredTask::working(id, "local", "billing.export_invoices", now_ms());
    task.ttl_ms = ttl_ms;
    task.poll_interval_ms = 500;
    task.lease_until_ms = now_ms() + 60_000;
    task
}

/// Two stores on `redis`, as two replicas would have.
async fn replicas(redis: &Redis) -> (RedisStore, RedisStore) {
    let one = RedisStore::builder(redis.url()).key_prefix(PREFIX).connect().await.unwrap();
    let two = RedisStore::builder(redis.url()).key_prefix(PREFIX).connect().await.unwrap();
    (one, two)
}

/// The remaining time to live of a key in milliseconds (-2: no such key).
async fn pttl(redis: &Redis, key: &str) -> i64 {
    let mut connection = redis::Client::open(redis.url()).unwrap().get_multiplexed_async_connection().await.unwrap();
    redis::cmd("PTTL").arg(key).query_async(&mut connection).await.unwrap()
}

fn object(value: serde_json::Value) -> rmcp::model::JsonObject {
    value.as_object().cloned().unwrap()
}

#[tokio::test]
#[ignore = "needs redis-server; run by .ci/run"]
async fn a_task_created_on_one_replica_is_read_renewed_cancelled_and_finished_once_on_the_other() {
    let redis = Redis::start();
    let (one, two) = replicas(&redis).await;
    let created = task("t1", 60_000);
    one.create(created.clone()).await.unwrap();
    assert_eq!(two.get("t1").await.unwrap(), Some(created.clone()));

    // A client's cancellation through one replica reaches the replica running it.
    assert!(two.request_cancel("t1").await.unwrap());
    assert_eq!(one.renew("t1", now_ms() + 1).await.unwrap(), Renewal::Working { cancel_requested: true });
    // A renewal never shortens the lease.
    assert_eq!(two.get("t1").await.unwrap().unwrap().lease_until_ms, created.lease_until_ms);
    let later = created.lease_until_ms + 5_000;
    one.renew("t1", later).await.unwrap();
    assert_eq!(two.get("t1").await.unwrap().unwrap().lease_until_ms, later);

    // Its lease holds: a reader cannot declare it lost.
    assert!(!two.finish("t1", TaskState::Cancelled, now_ms(), FinishIf::LeaseLapsed).await.unwrap());
    let finished_at = now_ms();
    let completed = TaskState::Completed { result: object(json!({"content": [], "isError": false})) };
    assert!(one.finish("t1", completed.clone(), finished_at, FinishIf::Working).await.unwrap());
    assert!(!two.finish("t1", TaskState::Cancelled, now_ms(), FinishIf::Working).await.unwrap());
    assert!(!one.finish("t1", TaskState::Working, now_ms(), FinishIf::Working).await.unwrap());

    let read = two.get("t1").await.unwrap().unwrap();
    assert_eq!(read.state, completed);
    assert_eq!(read.updated_at_ms, finished_at);
    assert!(read.cancel_requested);
    assert_eq!((read.created_at_ms, read.ttl_ms, read.poll_interval_ms), (created.created_at_ms, 60_000, 500));
    assert_eq!(two.renew("t1", now_ms()).await.unwrap(), Renewal::Ended);
    assert!(!one.request_cancel("t1").await.unwrap());

    // Finishing kept the expiry set at creation.
    let ttl = pttl(&redis, &format!("{PREFIX}task:t1")).await;
    assert!((1..=60_000).contains(&ttl), "PTTL {ttl}");

    assert_eq!(one.renew("nope", now_ms()).await.unwrap(), Renewal::Unknown);
    assert!(!two.request_cancel("nope").await.unwrap());
    assert!(!one.finish("nope", TaskState::Cancelled, now_ms(), FinishIf::Working).await.unwrap());
    assert_eq!(two.get("nope").await.unwrap(), None);
}

#[tokio::test]
#[ignore = "needs redis-server; run by .ci/run"]
async fn a_question_asked_on_one_replica_is_answered_through_the_other_and_taken_once() {
    let redis = Redis::start();
    let (one, two) = replicas(&redis).await;
    one.create(task("t1", 60_000)).await.unwrap();
    // A key and a value as a client may send them: a colon, quotes, a large number.
    let question = json!({"method": "elicitation/create", "params": {"message": "Export \"2025\"?"}});
    let asked = object(json!({"a:b": question, "second": question}));
    assert!(one.ask("t1", asked.clone(), now_ms()).await.unwrap());
    assert_eq!(two.get("t1").await.unwrap().unwrap().asked, asked);

    let answer = json!({"action": "accept", "content": {"count": 9_007_199_254_740_993_u64}});
    let given = object(json!({"a:b": answer, "never-asked": answer}));
    assert!(two.answer("t1", given, now_ms()).await.unwrap());
    let read = one.get("t1").await.unwrap().unwrap();
    assert_eq!(read.asked.keys().collect::<Vec<_>>(), ["second"]);
    assert_eq!(one.take_answers("t1").await.unwrap(), object(json!({"a:b": answer})));
    assert!(one.take_answers("t1").await.unwrap().is_empty(), "taken once");

    // Asking and answering keep the expiry set at creation; an ended task takes neither.
    let ttl = pttl(&redis, &format!("{PREFIX}task:t1")).await;
    assert!((1..=60_000).contains(&ttl), "PTTL {ttl}");
    one.finish("t1", TaskState::Cancelled, now_ms(), FinishIf::Working).await.unwrap();
    assert!(!one.ask("t1", asked, now_ms()).await.unwrap());
    assert!(!two.answer("t1", object(json!({"second": answer})), now_ms()).await.unwrap());
}

#[tokio::test]
#[ignore = "needs redis-server; run by .ci/run"]
async fn a_lapsed_lease_lets_a_reader_on_another_replica_declare_the_task_lost() {
    let redis = Redis::start();
    let (one, two) = replicas(&redis).await;
    let mut lost = task("t1", 60_000);
    lost.lease_until_ms = now_ms() - 1;
    one.create(lost).await.unwrap();
    let failed = TaskState::Failed { error: object(json!({"code": -32603, "message": "lost"})) };
    assert!(two.finish("t1", failed.clone(), now_ms(), FinishIf::LeaseLapsed).await.unwrap());
    assert_eq!(one.get("t1").await.unwrap().unwrap().state, failed);
    // Its replica, back, finds it ended.
    assert_eq!(one.renew("t1", now_ms() + 60_000).await.unwrap(), Renewal::Ended);
    assert!(!one.finish("t1", TaskState::Cancelled, now_ms(), FinishIf::Working).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs redis-server; run by .ci/run"]
async fn a_task_finished_and_declared_lost_at_once_ends_one_way_only() {
    let redis = Redis::start();
    let (one, two) = replicas(&redis).await;
    let failed = TaskState::Failed { error: object(json!({"code": -32603, "message": "lost"})) };
    for i in 0..50 {
        let id = format!("race{i}");
        let mut lapsed = task(&id, 60_000);
        lapsed.lease_until_ms = now_ms() - 1;
        one.create(lapsed).await.unwrap();
        let (finisher, reader) = (one.clone(), two.clone());
        let (by_replica, by_reader) = tokio::join!(
            tokio::spawn({
                let id = id.clone();
                async move { finisher.finish(&id, TaskState::Cancelled, now_ms(), FinishIf::Working).await }
            }),
            tokio::spawn({
                let (id, failed) = (id.clone(), failed.clone());
                async move { reader.finish(&id, failed, now_ms(), FinishIf::LeaseLapsed).await }
            }),
        );
        let (by_replica, by_reader) = (by_replica.unwrap().unwrap(), by_reader.unwrap().unwrap());
        assert!(by_replica != by_reader, "{id}: replica {by_replica}, reader {by_reader}");
        let expected = if by_replica { TaskState::Cancelled } else { failed.clone() };
        assert_eq!(two.get(&id).await.unwrap().unwrap().state, expected);
    }
}

#[tokio::test]
#[ignore = "needs redis-server; run by .ci/run"]
async fn an_expired_task_is_gone_from_every_replica_and_from_redis() {
    let redis = Redis::start();
    let (one, two) = replicas(&redis).await;

    // Expired before it was created: nothing is written.
    one.create(task("stale", 0)).await.unwrap();
    assert_eq!(two.get("stale").await.unwrap(), None);
    assert_eq!(pttl(&redis, &format!("{PREFIX}task:stale")).await, -2);

    one.create(task("brief", 50)).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while two.get("brief").await.unwrap().is_some() {
        assert!(Instant::now() < deadline, "the task outlived its 50 ms time to live by seconds");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(one.get("brief").await.unwrap(), None);
    // Redis drops the key on its own, as good as at once once the store no longer shows it.
    while pttl(&redis, &format!("{PREFIX}task:brief")).await != -2 {
        assert!(Instant::now() < deadline, "Redis kept the expired task's key");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(one.renew("brief", now_ms() + 60_000).await.unwrap(), Renewal::Unknown);
    assert!(!two.request_cancel("brief").await.unwrap());
    assert!(!one.finish("brief", TaskState::Cancelled, now_ms(), FinishIf::Working).await.unwrap());
}

#[tokio::test]
#[ignore = "needs redis-server; run by .ci/run"]
async fn an_owners_tasks_are_listed_page_by_page_from_every_replica_and_gone_ones_are_dropped() {
    let redis = Redis::start();
    let (one, two) = replicas(&redis).await;
    let base = now_ms() - 1_000;
    let owned = |id: &str, owner: &str, created: u64, ttl_ms: u64| {
        let mut kept = task(id, ttl_ms);
        kept.owner = owner.to_owned();
        kept.created_at_ms = base + created;
        kept
    };
    // Two of Ana's tasks share a millisecond: the id orders them.
    for (id, created) in [("a3", 3), ("a1", 1), ("a2b", 2), ("a2a", 2), ("a4", 4)] {
        one.create(owned(id, "ana", created, 60_000)).await.unwrap();
    }
    two.create(owned("b1", "bo's \"key\" 1", 1, 60_000)).await.unwrap();
    two.create(owned("brief", "ana", 5, 1_100)).await.unwrap();

    let mut seen = Vec::new();
    let mut after = None;
    for (page, store) in [&one, &two, &one, &two].into_iter().enumerate() {
        let listed = store.list("ana", after.clone(), 2).await.unwrap();
        seen.extend(listed.tasks.iter().map(|task| task.id.clone()));
        after = listed.next;
        if after.is_none() {
            assert_eq!(page, 2, "three pages of two, the last one short");
            break;
        }
    }
    assert_eq!(seen, ["a1", "a2a", "a2b", "a3", "a4", "brief"]);
    let bos = one.list("bo's \"key\" 1", None, 10).await.unwrap();
    assert_eq!(bos.tasks.iter().map(|task| task.id.as_str()).collect::<Vec<_>>(), ["b1"]);
    assert!(pttl(&redis, &format!("{PREFIX}tasks-of:ana")).await > 0, "the index expires with its tasks");

    // Once the brief task expired, a listing neither shows it nor keeps it in the index.
    let deadline = Instant::now() + Duration::from_secs(10);
    while two.get("brief").await.unwrap().is_some() {
        assert!(Instant::now() < deadline, "the task outlived its time to live by seconds");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let listed = two.list("ana", None, 10).await.unwrap();
    assert_eq!(listed.tasks.len(), 5);
    assert_eq!(listed.next, None);
    let mut connection = redis::Client::open(redis.url()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let indexed: i64 =
        redis::cmd("ZCARD").arg(format!("{PREFIX}tasks-of:ana")).query_async(&mut connection).await.unwrap();
    assert_eq!(indexed, 5, "the gone task left the index");
}
