#!/usr/bin/env bash
# A real deployment of replicas: redis-server, three billing-server replicas on one SQLite file
# sharing sessions, limits, keys and tasks through it, and haproxy in front (round-robin, no
# stickiness), driven with the official Python MCP SDK (replicas.py):
#
#   bash tests/replicas/run.sh            # the scenarios
#   bash tests/replicas/run.sh --measure  # latency and throughput through haproxy (fusion-load)
#
# The scenarios: a session moves between replicas across its requests; a subscriber on one
# replica hears a change made through another, once; one idempotency key sent to all three at
# once makes one invoice; a replica killed (-9) in the middle of a run of writes loses nothing
# acknowledged and its sessions go on elsewhere; then, with --rate-limit 10/60 on every replica,
# exactly 10 of 14 calls spread over them are admitted.
#
# --measure prints calls/s and latency through haproxy with 1 and 3 replicas, with sessions in
# Redis and in each process (haproxy sticking each session to its replica, as replicas without
# a session store need), and stateless, and what restoring a session costs the request that does; the figures of docs/deploying.md come from it.
#
# Installs redis-server and haproxy with apt-get when missing (as root, or through sudo without
# a password), and the Python SDK pinned in tests/interop/python/requirements.txt into
# tests/replicas/.venv. REDIS_SERVER=/path and HAPROXY=/path pick other binaries.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/tests/replicas"
cd "$ROOT"
# shellcheck source=../lib/processes.sh
source tests/lib/processes.sh
# shellcheck source=../lib/release.sh
source tests/lib/release.sh

step() { printf '\n==> %s\n' "$*"; }
die() { printf 'tests/replicas/run.sh: %s\n' "$*" >&2; exit 1; }

MEASURE=0
case "${1:-}" in
  --measure) MEASURE=1 ;;
  "") ;;
  *) die "unknown argument $1 (only --measure)" ;;
esac

install_missing() {
  local binary="$1" package="$2" SUDO=()
  command -v "$binary" >/dev/null 2>&1 && return 0
  step "installing $package"
  command -v apt-get >/dev/null 2>&1 || die "$binary is not installed and there is no apt-get here: install $package"
  if [ "$(id -u)" -ne 0 ]; then
    if ! { command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; }; then
      die "installing $package needs root: apt-get install $package"
    fi
    SUDO=(sudo -n)
  fi
  "${SUDO[@]}" apt-get update -qq || die "apt-get update failed: cannot install $package"
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq "$package" >/dev/null || die "apt-get install $package failed"
  command -v "$binary" >/dev/null 2>&1 || die "$binary is still not on PATH after installing $package"
}
REDIS_SERVER="${REDIS_SERVER:-redis-server}"
HAPROXY="${HAPROXY:-haproxy}"
[ "$REDIS_SERVER" = redis-server ] && install_missing redis-server redis-server
# Debian puts haproxy in /usr/sbin, which a non-root PATH may lack.
[ "$HAPROXY" = haproxy ] && { command -v haproxy >/dev/null 2>&1 || [ ! -x /usr/sbin/haproxy ] || HAPROXY=/usr/sbin/haproxy; }
[ "$HAPROXY" = haproxy ] && install_missing haproxy haproxy
export REDIS_SERVER HAPROXY
for tool in cargo python3 curl; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' is not on PATH"
done
"$REDIS_SERVER" --version
# Read whole: under pipefail, `| head -n 1` can end the run when haproxy gets SIGPIPE.
haproxy_version="$("$HAPROXY" -v)"
echo "${haproxy_version%%$'\n'*}"

step "billing-server and fusion-load (release)"
release_build --quiet
BILLING="$RELEASE_DIR/billing-server"
LOAD="$RELEASE_DIR/fusion-load"

step "tests/replicas/.venv: the Python SDK"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' || die "$(python3 --version) is too old for mcp: it needs >= 3.10"
VENV="$HERE/.venv"
want="$(sha256sum "$ROOT/tests/interop/python/requirements.txt" | cut -d' ' -f1) $(python3 --version)"
if [ "$(cat "$VENV/.installed" 2>/dev/null)" != "$want" ]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$ROOT/tests/interop/python/requirements.txt"
  echo "$want" >"$VENV/.installed"
fi
PY="$HERE/.venv/bin/python"

WORK="$(mktemp -d)"
PIDS=()
REDIS_PID=""
HAPROXY_PID=""
show_logs() {
  for log in "$WORK"/*.log; do
    [ -f "$log" ] || continue
    printf '\n--- %s (last 30 lines)\n' "$(basename "$log")"
    tail -n 30 "$log"
  done
}
stop_all() {
  [ -n "$HAPROXY_PID" ] && stop_pid "$HAPROXY_PID"
  for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
  HAPROXY_PID=""
  PIDS=()
}
cleanup() {
  local status=$?
  [ "$status" -eq 0 ] || show_logs
  stop_all
  [ -n "$REDIS_PID" ] && stop_pid "$REDIS_PID"
  rm -rf "$WORK"
  exit "$status"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Waits until 127.0.0.1:$1 answers GET $2 with 200 (30 s at most) while pid $3 runs.
wait_for_http() {
  local i
  for ((i = 0; i < 300; i++)); do
    curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$1$2" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || die "the process that should answer http://127.0.0.1:$1$2 exited"
    sleep 0.1
  done
  die "nothing answered http://127.0.0.1:$1$2 within 30 s"
}

step "redis-server"
REDIS_PORT="$(free_port)"
"$REDIS_SERVER" --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
redis_up=0
for ((i = 0; i < 300; i++)); do
  [ "$(printf 'PING\r\n' | timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$REDIS_PORT; cat >&3; head -c 7 <&3" 2>/dev/null)" = $'+PONG\r' ] && { redis_up=1; break; }
  kill -0 "$REDIS_PID" 2>/dev/null || die "redis-server exited: $(cat "$WORK/redis.log")"
  sleep 0.1
done
[ "$redis_up" -eq 1 ] || die "redis-server did not answer PING on port $REDIS_PORT within 30 s"
REDIS_URL="redis://127.0.0.1:$REDIS_PORT"

# Starts $1 replicas with the flags after it, all on one database and the Redis, then haproxy
# in front, round-robin (with STICKY=1, each session's requests to the replica that opened it,
# learnt from its answer's mcp-session-id); sets URLS, PIDS and PROXY.
start_cluster() {
  local count="$1" n url
  shift
  URLS=()
  for ((n = 1; n <= count; n++)); do
    # Made before the process opens it: listening_url may read it first.
    : >"$WORK/r$n.log"
    "$BILLING" --http 127.0.0.1:0 --db "$WORK/billing.db" --client-address-header x-forwarded-for "$@" \
      >"$WORK/r$n.log" 2>&1 &
    PIDS+=($!)
  done
  for ((n = 1; n <= count; n++)); do
    url="$(listening_url "${PIDS[n - 1]}" "$WORK/r$n.log" billing-server)"
    URLS+=("$url")
  done
  local proxy_port servers="" sticky=""
  if [ "${STICKY:-0}" = 1 ]; then
    sticky="  stick-table type string len 64 size 100k expire 1h"$'\n'
    sticky+="  stick on req.hdr(mcp-session-id)"$'\n'
    sticky+="  stick store-response res.hdr(mcp-session-id)"$'\n'
  fi
  proxy_port="$(free_port)"
  for ((n = 1; n <= count; n++)); do
    url="${URLS[n - 1]#http://}"
    servers+="  server r$n ${url%/mcp} check"$'\n'
  done
  cat >"$WORK/haproxy.cfg" <<EOF
global
  maxconn 4096
defaults
  mode http
  timeout connect 5s
  # A client's GET stream stays open while its session lives.
  timeout client 1h
  timeout server 1h
  timeout tunnel 1h
frontend mcp
  bind 127.0.0.1:$proxy_port
  # A client that names its address (the tests' clients do not) keeps it; others get theirs.
  option forwardfor if-none
  default_backend replicas
backend replicas
  balance roundrobin
$sticky  option httpchk
  http-check send meth GET uri /healthz ver HTTP/1.1 hdr host 127.0.0.1
  http-check expect status 200
  default-server inter 200ms fall 2 rise 1
  option redispatch
  retry-on conn-failure empty-response
  retries 3
  # Which replica answered: the test checks that sessions move.
  http-response set-header x-replica %s
$servers
EOF
  "$HAPROXY" -f "$WORK/haproxy.cfg" -db >"$WORK/haproxy.log" 2>&1 &
  HAPROXY_PID=$!
  wait_for_http "$proxy_port" /healthz "$HAPROXY_PID"
  PROXY="http://127.0.0.1:$proxy_port/mcp"
}

if [ "$MEASURE" -eq 1 ]; then
  measure() {
    local label="$1" url="${2:-$PROXY}" clients
    for clients in 1 16; do
      "$LOAD" --url "$url" --clients "$clients" --duration 5 --warmup 1 --json \
        >"$WORK/load.json" \
        || die "fusion-load failed on $label"
      python3 - "$label" "$clients" "$WORK/load.json" <<'EOF'
import json, sys
label, clients, path = sys.argv[1], sys.argv[2], sys.argv[3]
report = json.load(open(path))
latency = report["latency_us"]
failed = report["calls"] - report["ok"]
print(f"| {label} | {clients} | {report['calls_per_s']:.0f} | {latency['p50'] / 1000:.2f} | {latency['p99'] / 1000:.2f} | {failed} |", flush=True)
EOF
    done
  }
  step "latency and throughput through haproxy (5 s per row after 1 s of warm-up)"
  echo "| configuration | clients | calls/s | p50 ms | p99 ms | failed |"
  echo "|---|---:|---:|---:|---:|---:|"
  start_cluster 1 --redis "$REDIS_URL"
  measure "1 replica, no haproxy (sessions in Redis)" "${URLS[0]}"
  stop_all
  for count in 1 3; do
    start_cluster "$count" --redis "$REDIS_URL" --session-store redis
    measure "$count × sessions in Redis, round-robin"
    stop_all
    STICKY=1 start_cluster "$count" --redis "$REDIS_URL" --session-store local
    measure "$count × sessions in each process, sticky by session"
    stop_all
    start_cluster "$count" --stateless
    measure "$count × stateless, round-robin"
    stop_all
  done
  step "what restoring a session costs the request that needs it (median of 200, directly to the replicas)"
  export BILLING_TOKEN="replicas-$RANDOM$RANDOM"
  start_cluster 2 --redis "$REDIS_URL"
  echo "| request | p50 ms |"
  echo "|---|---:|"
  "$PY" "$HERE/replicas.py" --token "$BILLING_TOKEN" --proxy "$PROXY" --replica "${URLS[0]}" --replica "${URLS[1]}" \
    --pids "$(IFS=,; echo "${PIDS[*]}")" measure-restore
  exit 0
fi

# One identity for every client: an idempotency key and a rate limit are the caller's, and
# sessions are restored for their owner only.
export BILLING_TOKEN="replicas-$RANDOM$RANDOM"
step "three replicas behind haproxy: sessions, subscriptions, one key at once, a replica killed"
start_cluster 3 --redis "$REDIS_URL"
"$PY" "$HERE/replicas.py" --token "$BILLING_TOKEN" --proxy "$PROXY" --replica "${URLS[0]}" --replica "${URLS[1]}" --replica "${URLS[2]}" \
  --pids "$(IFS=,; echo "${PIDS[*]}")" sessions subscriptions idempotency kill
stop_all

step "the same three with --rate-limit 10/60: a limit over all of them"
start_cluster 3 --redis "$REDIS_URL" --rate-limit 10/60
"$PY" "$HERE/replicas.py" --token "$BILLING_TOKEN" --proxy "$PROXY" --replica "${URLS[0]}" --replica "${URLS[1]}" --replica "${URLS[2]}" \
  --pids "$(IFS=,; echo "${PIDS[*]}")" rate
