//! A test-only stdio server whose one action is rate limited in Redis, so tests can start it
//! twice and show two processes sharing one limit.
//!
//! `redis_limited_server URL CALLS WINDOW_SECS [open|closed] [STORE_TIMEOUT_MS]`: a global
//! limit of `CALLS` per `WINDOW_SECS` on `limited.hit`, counted in the Redis at `URL`.

use std::time::Duration;

use mcp_fusion::guard::{FailurePolicy, RateLimit, RedisStore};
use mcp_fusion::wire::ToolError;
use mcp_fusion::{Action, Ctx, FusionServer, Group};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Hit {}

async fn hit(_ctx: Ctx<()>, _input: Hit) -> Result<String, ToolError> {
    Ok("hit".to_owned())
}

fn usage() -> ! {
    eprintln!("usage: redis_limited_server URL CALLS WINDOW_SECS [open|closed] [STORE_TIMEOUT_MS]");
    std::process::exit(2)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(url), Some(calls), Some(window)) = (args.first(), args.get(1), args.get(2)) else { usage() };
    let calls: u32 = calls.parse().unwrap_or_else(|_| usage());
    let window: u64 = window.parse().unwrap_or_else(|_| usage());
    let policy = match args.get(3).map(String::as_str) {
        None | Some("open") => FailurePolicy::Open,
        Some("closed") => FailurePolicy::Closed,
        Some(_) => usage(),
    };
    let store_timeout: u64 = args.get(4).map_or(Ok(250), |ms| ms.parse()).unwrap_or_else(|_| usage());
    let store = RedisStore::connect(url.as_str()).await?;
    let server = FusionServer::builder("redis-limited", "1")
        .rate_limit(RateLimit::new(calls, Duration::from_secs(window)).global())
        .rate_limit_store(store)
        .rate_limit_failure(policy, Duration::from_millis(store_timeout))
        .group(Group::new("limited", "Rate limited in Redis.").action(Action::new("hit", "Hit.").handler(hit)))
        .build(())?;
    mcp_fusion::serve_stdio(server).await?;
    Ok(())
}
