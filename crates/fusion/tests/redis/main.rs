//! `RedisStore` against a real `redis-server` (feature `redis`; the tests are ignored unless
//! `tests/redis/run.sh` runs them).

#[path = "../support/mod.rs"]
mod support;

mod redis;
mod sessions;
mod tasks;
