#!/usr/bin/env bash
# The Redis stores (rate limits, idempotency keys, tasks) against a real redis-server, and
# billing-server replicas sharing one:
#
#   bash tests/redis/run.sh
#
# Installs redis-server with apt-get when it is missing (as root, or through sudo without a
# password), then runs the ignored tests of crates/fusion/tests/redis/ and examples/billing/tests/replicas/ one at a time; each
# test starts (and kills) its own redis-server on a free port, without persistence.
# REDIS_SERVER=/path/to/redis-server uses that binary instead of the one on PATH.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

step() { printf '\n==> %s\n' "$*"; }
die() { printf 'tests/redis/run.sh: %s\n' "$*" >&2; exit 1; }

REDIS_SERVER="${REDIS_SERVER:-redis-server}"
if ! command -v "$REDIS_SERVER" >/dev/null 2>&1; then
  [ "$REDIS_SERVER" = redis-server ] || die "REDIS_SERVER=$REDIS_SERVER is not an executable"
  step "installing redis-server"
  command -v apt-get >/dev/null 2>&1 \
    || die "redis-server is not installed and there is no apt-get here: install Redis >= 5 or set REDIS_SERVER"
  if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=(sudo -n)
  else
    die "redis-server is not installed and installing it needs root: run 'apt-get install redis-server' as root, or set REDIS_SERVER"
  fi
  "${SUDO[@]}" apt-get update -qq || die "apt-get update failed: cannot install redis-server"
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq redis-server >/dev/null \
    || die "apt-get install redis-server failed"
  command -v redis-server >/dev/null 2>&1 || die "redis-server is still not on PATH after installing it"
fi
export REDIS_SERVER
"$REDIS_SERVER" --version

# `--workspace` resolves features as `cargo test --workspace` does (mcp-fusion's `redis` comes
# from billing-server), so that after the workspace's tests these are the binaries already
# built, and the two runs share one build.
step "RedisStore against a real redis-server"
cargo test --workspace --test redis -- --ignored --test-threads=1

step "billing-server replicas sharing tasks through a real redis-server (one killed with -9)"
cargo test --workspace --test replicas -- --ignored --test-threads=1
