//! Replicas of the built `billing-server` on one SQLite file and one real `redis-server`: a
//! task created through one is read, cancelled and its result fetched through another, and a
//! replica killed (`kill -9`) while it runs a task leaves it `failed` with `TASK_LOST` once its
//! lease lapsed. Ignored by `cargo test` (they need `redis-server`): `tests/redis/run.sh` runs
//! them.

#[path = "../support/mod.rs"]
mod support;

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_fusion::wire::parse;
use serde_json::json;

use support::spawn_http;
use support::tasks::{post, read_task, settled, start_export};

/// The lease each replica holds on a task it runs.
const LEASE_MS: u64 = 1000;

/// A `redis-server` child on a free port, without persistence; killed on drop.
struct Redis {
    port: u16,
    child: Child,
}

impl Redis {
    fn start() -> Redis {
        let binary = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned());
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let mut child = Command::new(&binary)
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|error| {
                    panic!("cannot run {binary} ({error}): install redis-server or set REDIS_SERVER")
                });
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline && child.try_wait().unwrap().is_none() {
                if answers_ping(port) {
                    return Redis { port, child };
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("redis-server did not start on any of 5 free ports");
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn answers_ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let mut reply = [0; 7];
    stream.write_all(b"PING\r\n").is_ok() && stream.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n"
}

/// The flags of a replica on `redis` whose export takes `delay_ms`.
fn replica_flags(redis: &Redis, delay_ms: u64) -> Vec<String> {
    let lease = LEASE_MS.to_string();
    ["--redis", &redis.url(), "--task-lease-ms", &lease, "--export-delay-ms", &delay_ms.to_string()]
        .map(str::to_owned)
        .to_vec()
}

fn spawn_replica(db: &std::path::Path, flags: &[String]) -> support::HttpChild {
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    spawn_http(db, &flags, &[])
}

#[tokio::test]
#[ignore = "needs redis-server: run tests/redis/run.sh"]
async fn a_task_started_on_one_replica_is_read_and_cancelled_through_another() {
    let redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("billing.db");
    let quick = spawn_replica(&db, &replica_flags(&redis, 200));
    let slow = spawn_replica(&db, &replica_flags(&redis, 3_600_000));

    // Created on the quick replica, its result fetched through the slow one.
    let id = start_export(&quick.url, json!({"action": "export_invoices", "status": "paid"})).await;
    let done = settled(&slow.url, &id, Duration::from_secs(30)).await;
    assert_eq!(done["result"]["status"], "completed", "{done}");
    let csv = done["result"]["result"]["content"][0]["text"].as_str().unwrap();
    let ids: Vec<&str> = csv.lines().skip(1).map(|line| line.split(',').next().unwrap()).collect();
    assert_eq!(ids, ["inv_2026_0001", "inv_2026_0005"]);

    // Started on the slow replica, cancelled through the quick one: the slow one hears of it
    // when it renews its lease, and stops.
    let id = start_export(&slow.url, json!({"action": "export_invoices"})).await;
    assert_eq!(read_task(&quick.url, &id).await["result"]["status"], "working");
    let ack = post(&quick.url, "tasks/cancel", &id, json!({"taskId": id})).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let cancelled = settled(&quick.url, &id, Duration::from_secs(30)).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
}

#[tokio::test]
#[ignore = "needs redis-server: run tests/redis/run.sh"]
async fn a_replica_killed_while_it_runs_a_task_leaves_it_failed_with_task_lost_within_the_lease() {
    let redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("billing.db");
    let mut doomed = spawn_replica(&db, &replica_flags(&redis, 3_600_000));
    let survivor = spawn_replica(&db, &replica_flags(&redis, 3_600_000));

    let id = start_export(&doomed.url, json!({"action": "export_invoices"})).await;
    // Read through the survivor past one lease: the doomed replica renews it, so it works on.
    tokio::time::sleep(Duration::from_millis(LEASE_MS + 200)).await;
    assert_eq!(read_task(&survivor.url, &id).await["result"]["status"], "working");

    doomed.child.kill().unwrap(); // SIGKILL: no goodbye, no last write
    doomed.child.wait().unwrap();
    let killed = Instant::now();
    let failed = settled(&survivor.url, &id, Duration::from_secs(30)).await;
    let noticed = killed.elapsed();
    let task = &failed["result"];
    assert_eq!(task["status"], "failed", "{failed}");
    // The lease lapses at most one lease after the kill (the last renewal was before it); the
    // bound leaves a busy machine a second and a half more for the polls.
    assert!(noticed <= Duration::from_millis(LEASE_MS * 2 + 1500), "noticed {noticed:?} after the kill");
    assert_eq!(task["error"]["code"], -32603);
    let envelope = parse(task["error"]["message"].as_str().unwrap());
    assert_eq!(envelope.error.code.as_str(), "TASK_LOST");
    assert_eq!(
        envelope.error.message,
        "billing.export_invoices stopped without finishing: the server running its task went away, and its result is lost."
    );
    assert_eq!(
        envelope.error.recovery.as_deref(),
        Some("Call billing.export_invoices again: it only reads, so running it again is safe.")
    );
    assert_eq!(envelope.error.available_actions, ["billing.export_invoices"]);
    assert_eq!(task["statusMessage"], task["error"]["message"]);
}
