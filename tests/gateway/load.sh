#!/usr/bin/env bash
# fusion-load through fusion-gateway to billing-server: what the gateway's hop costs, and what
# callers get while the upstream behind it is killed and comes back.
#
#   bash tests/gateway/load.sh                    # hop, chaos-http, chaos-stdio
#   bash tests/gateway/load.sh hop chaos-http     # only the named parts
#
# Builds billing-server, fusion-gateway and fusion-load (release, the packages of
# tests/lib/release.sh, so that the hostile step after it finds them built). Starts billing-server over
# Streamable HTTP on a free port and a gateway over HTTP mounting it by url as "demo". Then:
#   hop          fusion-load against billing-server directly (tool billing) and through the
#                gateway (tool demo.billing), same clients and duration, ROUNDS rounds taking
#                turns (the order flips each round, so neither side always runs on a warmer
#                machine); prints p50/p99/calls/s of each and the difference.
#   chaos-http   fusion-load through the gateway for CHAOS_SECS while billing-server is killed
#                (SIGKILL) at KILL_AT s and started again on the same port at RESTART_AT s.
#   chaos-stdio  a second gateway mounting billing-server by command (a shell that writes its
#                pid to a file, then execs the server); the server is killed at KILL_AT s and the
#                gateway restarts it on its own; fusion-load runs STDIO_SECS.
# A chaos run passes when every call started was answered, with OK, HANDOFF_UPSTREAM_UNAVAILABLE
# or HANDOFF_CONNECTING only (no client_timeout: no call hung for CALL_TIMEOUT s; no transport
# error; no other envelope), the outage was seen, and calls came back OK after the restart and
# stayed OK to the end.
# Settings (environment): CLIENTS=4 HOP_SECS=3 ROUNDS=3 CHAOS_SECS=12 KILL_AT=3 RESTART_AT=6
# STDIO_SECS=8 CALL_TIMEOUT=5.
# Every process started here is stopped on the way out; databases, configs, logs and reports
# live in a mktemp directory removed then. Exits 1 if any check failed.
# Needs: bash >= 5, coreutils, awk, ps, cargo, jq.
set -euo pipefail
export LC_ALL=C # `.` as the decimal point of EPOCHREALTIME and of awk's numbers

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ALL_PARTS=(hop chaos-http chaos-stdio)
CLIENTS="${CLIENTS:-4}"
HOP_SECS="${HOP_SECS:-3}"
ROUNDS="${ROUNDS:-3}"
CHAOS_SECS="${CHAOS_SECS:-12}"
KILL_AT="${KILL_AT:-3}"
RESTART_AT="${RESTART_AT:-6}"
STDIO_SECS="${STDIO_SECS:-8}"
CALL_TIMEOUT="${CALL_TIMEOUT:-5}"
# The timeline's stretch: fine enough to see when calls came back after a restart.
BUCKET=0.25
START=$SECONDS

step() { printf '\n==> %s\n' "$*"; }
die() {
  printf 'load.sh: %s\n' "$*" >&2
  exit 1
}

if (($# > 0)); then
  for name in "$@"; do
    [[ " ${ALL_PARTS[*]} " == *" $name "* ]] || die "unknown part '$name'; parts: ${ALL_PARTS[*]}"
  done
  PARTS=("$@")
else
  PARTS=("${ALL_PARTS[@]}")
fi
wanted() { [[ " ${PARTS[*]} " == *" $1 "* ]]; }

((BASH_VERSINFO[0] >= 5)) || die "bash $BASH_VERSION is too old: EPOCHREALTIME needs bash >= 5"
for tool in cargo jq awk ps sh; do
  command -v "$tool" >/dev/null || die "'$tool' is not on PATH"
done
awk -v k="$KILL_AT" -v r="$RESTART_AT" -v d="$CHAOS_SECS" -v s="$STDIO_SECS" \
  'BEGIN { exit !(k > 0.5 && r > k && d >= r + 3 && s >= k + 3) }' ||
  die "need KILL_AT > 0.5, RESTART_AT > KILL_AT, CHAOS_SECS >= RESTART_AT + 3 and STDIO_SECS >= KILL_AT + 3"

# Everything started here is stopped on the way out, whatever the way.
TMP="$(mktemp -d -t fusion-gateway-load.XXXXXX)"
PIDS=()
# Whether pid $1 is still one of the programs this script runs (not a reused pid).
ours() {
  local args
  args="$(ps -o args= -p "$1" 2>/dev/null)" || return 1
  [[ "$args" == *billing-server* || "$args" == *fusion-gateway* || "$args" == *fusion-load* ]]
}
# shellcheck source=tests/lib/processes.sh
source "$ROOT/tests/lib/processes.sh"
# Drops pid $1 from PIDS once it has been reaped, so that the cleanup never signals a reused pid.
forget() {
  local pid kept=()
  for pid in "${PIDS[@]}"; do [[ "$pid" == "$1" ]] || kept+=("$pid"); done
  PIDS=("${kept[@]}")
}
# shellcheck disable=SC2317,SC2329 # invoked by the EXIT trap
cleanup() {
  local pid file
  for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
  # A stdio upstream a gateway started and did not end.
  for file in "$TMP"/*.pid; do
    [[ -f "$file" ]] || continue
    pid="$(cat "$file")"
    if [[ "$pid" =~ ^[0-9]+$ ]] && ours "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

FAILED=0
RESULTS=()
result() {
  echo "$1"
  RESULTS+=("$1")
  [[ "$1" == PASS* ]] || FAILED=1
}

# Seconds since $1 (an EPOCHREALTIME), to the millisecond.
since() { awk -v t0="$1" -v now="$EPOCHREALTIME" 'BEGIN { printf "%.3f", now - t0 }'; }
# Sleeps until $2 seconds after $1 (an EPOCHREALTIME).
sleep_until() {
  sleep "$(awk -v t0="$1" -v at="$2" -v now="$EPOCHREALTIME" 'BEGIN { d = t0 + at - now; printf "%.3f", (d > 0 ? d : 0) }')"
}
# Microseconds as milliseconds.
ms() { awk -v us="$1" 'BEGIN { printf "%.2f", us / 1000 }'; }



# Calls tool $2 at $1 once a tenth of a second until a call is OK (the gateway answers
# HANDOFF_CONNECTING until its upstream is ready), for at most 20 s.
ready() {
  local i
  for ((i = 0; i < 200; i++)); do
    if "$LOAD" --url "$1" --tool "$2" --clients 1 --calls 1 --json 2>/dev/null | jq -e '.ok == 1' >/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

step "build billing-server, fusion-gateway and fusion-load (release)"
# shellcheck source=tests/lib/release.sh
source "$ROOT/tests/lib/release.sh"
release_build --quiet
BILLING="$RELEASE_DIR/billing-server"
GATEWAY="$RELEASE_DIR/fusion-gateway"
LOAD="$RELEASE_DIR/fusion-load"
for binary in "$BILLING" "$GATEWAY" "$LOAD"; do
  [[ -x "$binary" ]] || die "cargo build did not produce billing-server, fusion-gateway and fusion-load"
  echo "${binary#"$ROOT"/}"
done
echo "$(nproc) CPUs; $CLIENTS clients; rustc $(rustc --version | cut -d' ' -f2)"
export RUST_LOG="${RUST_LOG:-info,rmcp=warn}"

# billing-server over HTTP: on a free port the first time, on that same port when restarted
# (same database too); each start has its own log.
BILLING_PID=""
BILLING_URL=""
BILLING_STARTS=0
start_billing() {
  local addr="$1" log
  BILLING_STARTS=$((BILLING_STARTS + 1))
  log="$TMP/billing-server-$BILLING_STARTS.log"
  "$BILLING" --db "$TMP/billing.db" --http "$addr" 2>"$log" </dev/null >/dev/null &
  BILLING_PID=$!
  PIDS+=("$BILLING_PID")
  BILLING_URL="$(listening_url "$BILLING_PID" "$log" billing-server)" || die "billing-server did not start on $addr"
}

step "start billing-server over HTTP and fusion-gateway mounting it by url"
start_billing 127.0.0.1:0
PORT="${BILLING_URL#http://127.0.0.1:}"
PORT="${PORT%%/*}"
echo "billing-server on $BILLING_URL (pid $BILLING_PID); a restart reuses port $PORT"
cat >"$TMP/http.toml" <<EOF
keepalive_ms = 1000
[reconnect]
initial_ms = 200
max_ms = 2000
[[mount]]
namespace = "demo"
url = $(toml "$BILLING_URL")
EOF
"$GATEWAY" --config "$TMP/http.toml" --http 127.0.0.1:0 2>"$TMP/gateway-http.log" </dev/null >/dev/null &
GATEWAY_PID=$!
PIDS+=("$GATEWAY_PID")
GATEWAY_URL="$(listening_url "$GATEWAY_PID" "$TMP/gateway-http.log" fusion-gateway)" || die "fusion-gateway did not start"
echo "fusion-gateway on $GATEWAY_URL (pid $GATEWAY_PID), upstream demo = $BILLING_URL"
ready "$GATEWAY_URL" demo.billing || die "demo.billing never answered OK through the gateway"
echo "demo.billing answers OK through the gateway"

# The command line of a fusion-load run of $3 s against URL $1, tool $2 (more flags after), in
# LOAD_CMD: run by the caller itself, so that a run in the background is fusion-load's own pid
# (a function sent to the background is a subshell, and stopping it would orphan fusion-load).
load_cmd() {
  local url="$1" tool="$2" secs="$3"
  shift 3
  LOAD_CMD=("$LOAD" --url "$url" --tool "$tool" --clients "$CLIENTS" --duration "$secs"
    --call-timeout "$CALL_TIMEOUT" --json "$@")
}

# The median over the hop rounds of figure $1 of side $2 (the lower middle one for an even count).
median() { jq -s "map($1) | sort | .[(length - 1) / 2 | floor]" "$TMP"/hop-"$2"-*.json; }

hop() {
  local round side file
  step "hop: $ROUNDS rounds of $HOP_SECS s (after 0.5 s of warm-up) each, direct and through the gateway, taking turns"
  for ((round = 1; round <= ROUNDS; round++)); do
    local order=(direct gateway)
    ((round % 2 == 1)) || order=(gateway direct)
    for side in "${order[@]}"; do
      file="$TMP/hop-$side-$round.json"
      echo "round $round: $side"
      if [[ "$side" == direct ]]; then
        load_cmd "$BILLING_URL" billing "$HOP_SECS" --warmup 0.5
      else
        load_cmd "$GATEWAY_URL" demo.billing "$HOP_SECS" --warmup 0.5
      fi
      "${LOAD_CMD[@]}" >"$file"
    done
  done
  printf '\n%-7s | %-28s | %-28s | %s\n' "" "direct (billing)" "gateway (demo.billing)" "gateway - direct"
  printf '%-7s | %8s %8s %10s | %8s %8s %10s | %8s %8s\n' \
    round "p50 ms" "p99 ms" "calls/s" "p50 ms" "p99 ms" "calls/s" "p50 ms" "p99 ms"
  local bad=0 d g
  for ((round = 1; round <= ROUNDS; round++)); do
    d="$TMP/hop-direct-$round.json"
    g="$TMP/hop-gateway-$round.json"
    for file in "$d" "$g"; do
      jq -e '.all_answered and .ok == .calls and .calls > 0' "$file" >/dev/null || {
        echo "round $round: not every call was OK: $(jq -c '{started, calls, ok, envelopes, errors}' "$file")"
        bad=1
      }
    done
    printf '%-7s | %8s %8s %10s | %8s %8s %10s | %+8.2f %+8.2f\n' "$round" \
      "$(ms "$(jq .latency_us.p50 "$d")")" "$(ms "$(jq .latency_us.p99 "$d")")" "$(jq .calls_per_s "$d")" \
      "$(ms "$(jq .latency_us.p50 "$g")")" "$(ms "$(jq .latency_us.p99 "$g")")" "$(jq .calls_per_s "$g")" \
      "$(ms "$(jq -n --slurpfile d "$d" --slurpfile g "$g" '$g[0].latency_us.p50 - $d[0].latency_us.p50')")" \
      "$(ms "$(jq -n --slurpfile d "$d" --slurpfile g "$g" '$g[0].latency_us.p99 - $d[0].latency_us.p99')")"
  done
  local dp50 dp99 gp50 gp99
  dp50="$(median .latency_us.p50 direct)" dp99="$(median .latency_us.p99 direct)"
  gp50="$(median .latency_us.p50 gateway)" gp99="$(median .latency_us.p99 gateway)"
  printf '%-7s | %8s %8s %10s | %8s %8s %10s | %+8.2f %+8.2f\n' median \
    "$(ms "$dp50")" "$(ms "$dp99")" "$(median .calls_per_s direct)" \
    "$(ms "$gp50")" "$(ms "$gp99")" "$(median .calls_per_s gateway)" "$(ms $((gp50 - dp50)))" "$(ms $((gp99 - dp99)))"
  if ((bad)); then
    result "FAIL [hop] some calls were not OK"
  else
    result "PASS [hop] every call OK on both sides; the hop adds $(ms $((gp50 - dp50))) ms at p50, $(ms $((gp99 - dp99))) ms at p99 (medians of $ROUNDS rounds, $CLIENTS clients)"
  fi
}

# Checks a chaos report: $1 the label, $2 the JSON file, $3 when the upstream was killed and
# $4 when it could be reached again (seconds from the start of fusion-load), $5 the duration.
check_chaos() {
  local label="$1" file="$2" killed="$3" back="$4" secs="$5" summary problems
  summary="$(jq -r --argjson killed "$killed" --argjson back "$back" --argjson secs "$secs" '
    .timeline as $t
    | [$t.buckets[] | {from: .from_s, outcomes}] as $b
    | ([$b[] | select(.from >= $back and (.outcomes.OK // 0) > 0) | .from] | min) as $first_ok
    | {
        started, calls, all_answered, ok,
        unavailable: (.envelopes.HANDOFF_UPSTREAM_UNAVAILABLE // 0),
        connecting: (.envelopes.HANDOFF_CONNECTING // 0),
        other_envelopes: (.envelopes | del(.HANDOFF_UPSTREAM_UNAVAILABLE, .HANDOFF_CONNECTING)),
        errors, connect_errors,
        ok_before_kill: ([$b[] | select(.from + $t.bucket_s <= $killed - 0.25) | .outcomes.OK // 0] | add // 0),
        ok_after_restart: ([$b[] | select(.from >= $back) | .outcomes.OK // 0] | add // 0),
        first_ok_stretch_after_back_s: $first_ok,
        last_second_not_ok: (reduce ($b[] | select(.from >= $secs - 1) | .outcomes | del(.OK) | to_entries[]) as $e
          ({}; .[$e.key] += $e.value)),
        p50_ms: {ok: ((.by_outcome.OK.latency_us.p50 // 0) / 1000),
                 unavailable: ((.by_outcome.HANDOFF_UPSTREAM_UNAVAILABLE.latency_us.p50 // 0) / 1000)},
        p99_ms: {ok: ((.by_outcome.OK.latency_us.p99 // 0) / 1000),
                 unavailable: ((.by_outcome.HANDOFF_UPSTREAM_UNAVAILABLE.latency_us.p99 // 0) / 1000)},
        max_ms: (.latency_us.max / 1000)
      }' "$file")"
  echo "$summary"
  # The timeline, its stretches merged while the same outcomes come back.
  echo "timeline (calls by when they started; killed at ${killed} s, reachable again at ${back} s):"
  jq -r '.timeline as $t
    | reduce $t.buckets[] as $b ([];
        if length > 0 and (.[-1].outcomes | keys) == ($b.outcomes | keys)
        then .[-1].to = $b.from_s + $t.bucket_s
          | reduce ($b.outcomes | to_entries[]) as $e (.; .[-1].outcomes[$e.key] += $e.value)
        else . + [{from: $b.from_s, to: ($b.from_s + $t.bucket_s), outcomes: $b.outcomes}]
        end)
    | .[] | "  \(.from) – \(.to) s\t\(.outcomes | to_entries | map("\(.key) \(.value)") | join(", "))"' "$file"
  problems="$(jq -r '
    (if .all_answered and .started == .calls then empty else "\(.started) calls started, \(.calls) answered" end),
    (if .errors == {} then empty else "calls without a result: \(.errors)" end),
    (if .connect_errors == {} then empty else "sessions failed to open: \(.connect_errors)" end),
    (if .other_envelopes == {} then empty else "envelopes other than UNAVAILABLE and CONNECTING: \(.other_envelopes)" end),
    (if .unavailable + .connecting > 0 then empty else "no call saw the upstream down: was it killed?" end),
    (if .ok_before_kill > 0 then empty else "no call was OK before the kill" end),
    (if .ok_after_restart > 0 then empty else "no call was OK after the upstream came back" end),
    (if .last_second_not_ok == {} then empty else "calls still failing in the last second: \(.last_second_not_ok)" end)
  ' <<<"$summary")"
  if [[ -z "$problems" ]]; then
    result "PASS [$label] $(jq -r '"every call answered (\(.started) started, \(.calls) answered): OK \(.ok), HANDOFF_UPSTREAM_UNAVAILABLE \(.unavailable), HANDOFF_CONNECTING \(.connecting); first OK stretch after it was back starts at \(.first_ok_stretch_after_back_s) s"' <<<"$summary")"
  else
    while IFS= read -r problem; do result "FAIL [$label] $problem"; done <<<"$problems"
  fi
}

# Starts fusion-load through the gateway at $1 for $2 s, its JSON report to $3, outcomes counted
# per BUCKET; sets LOAD_PID (a child of this shell, so that it can be waited for).
chaos_load() {
  load_cmd "$1" demo.billing "$2" --timeline "$BUCKET"
  "${LOAD_CMD[@]}" >"$3" &
  LOAD_PID=$!
  PIDS+=("$LOAD_PID")
}

chaos_http() {
  step "chaos over HTTP: $CHAOS_SECS s through the gateway; billing-server killed at $KILL_AT s, started again on port $PORT at $RESTART_AT s"
  local out="$TMP/chaos-http.json" t0 load_pid killed back code=0
  t0="$EPOCHREALTIME"
  chaos_load "$GATEWAY_URL" "$CHAOS_SECS" "$out"
  load_pid="$LOAD_PID"
  sleep_until "$t0" "$KILL_AT"
  kill -KILL "$BILLING_PID"
  killed="$(since "$t0")"
  wait "$BILLING_PID" 2>/dev/null || true
  forget "$BILLING_PID"
  echo "$killed s: billing-server (pid $BILLING_PID) killed with SIGKILL"
  sleep_until "$t0" "$RESTART_AT"
  start_billing "127.0.0.1:$PORT"
  back="$(since "$t0")"
  echo "$back s: billing-server listening again on $BILLING_URL (pid $BILLING_PID)"
  wait "$load_pid" || code=$?
  forget "$load_pid"
  echo "$(since "$t0") s: fusion-load done"
  ((code == 0)) || {
    result "FAIL [chaos-http] fusion-load exited with $code"
    return 0
  }
  check_chaos chaos-http "$out" "$killed" "$back" "$CHAOS_SECS"
}

chaos_stdio() {
  step "chaos over stdio: a gateway starting billing-server itself; killed at $KILL_AT s, restarted by the gateway; $STDIO_SECS s"
  local pidfile="$TMP/stdio-billing.pid" config="$TMP/stdio.toml" gateway_pid url out="$TMP/chaos-stdio.json"
  local t0 load_pid first_pid killed back="" code=0 i
  # shellcheck disable=SC2016 # $$, $0 and $1 are the upstream shell's, not this one's
  local wrapper='echo $$ > "$0"; exec "$1" --db "$2"'
  cat >"$config" <<EOF
keepalive_ms = 1000
[reconnect]
initial_ms = 200
max_ms = 2000
[[mount]]
namespace = "demo"
command = "sh"
args = ["-c", $(toml "$wrapper"), $(toml "$pidfile"), $(toml "$BILLING"), $(toml "$TMP/stdio-billing.db")]
EOF
  "$GATEWAY" --config "$config" --http 127.0.0.1:0 2>"$TMP/gateway-stdio.log" </dev/null >/dev/null &
  gateway_pid=$!
  PIDS+=("$gateway_pid")
  url="$(listening_url "$gateway_pid" "$TMP/gateway-stdio.log" fusion-gateway)" || die "the stdio gateway did not start"
  ready "$url" demo.billing || die "demo.billing never answered OK through the stdio gateway"
  first_pid="$(cat "$pidfile")"
  echo "fusion-gateway on $url, upstream demo = billing-server over stdio (pid $first_pid)"

  t0="$EPOCHREALTIME"
  chaos_load "$url" "$STDIO_SECS" "$out"
  load_pid="$LOAD_PID"
  sleep_until "$t0" "$KILL_AT"
  kill -KILL "$first_pid"
  killed="$(since "$t0")"
  echo "$killed s: billing-server (pid $first_pid) killed with SIGKILL"
  # The gateway's new child writes its pid as it starts: the upstream is back (its handshake
  # still to come) from then.
  for ((i = 0; i < 100; i++)); do
    if [[ "$(cat "$pidfile")" != "$first_pid" ]]; then
      back="$(since "$t0")"
      break
    fi
    sleep 0.05
  done
  wait "$load_pid" || code=$?
  forget "$load_pid"
  if [[ -z "$back" ]]; then
    result "FAIL [chaos-stdio] the gateway did not restart billing-server within 5 s"
    return 0
  fi
  echo "$back s: the gateway started billing-server again (pid $(cat "$pidfile"))"
  ((code == 0)) || {
    result "FAIL [chaos-stdio] fusion-load exited with $code"
    return 0
  }
  check_chaos chaos-stdio "$out" "$killed" "$back" "$STDIO_SECS"
  # The gateway ends its child as it shuts down; give the child 5 s to be gone.
  stop_pid "$gateway_pid"
  forget "$gateway_pid"
  local child
  child="$(cat "$pidfile")"
  for ((i = 0; i < 50; i++)); do
    kill -0 "$child" 2>/dev/null && ours "$child" || return 0
    sleep 0.1
  done
  result "FAIL [chaos-stdio] billing-server (pid $child) outlived its gateway by 5 s"
}

if wanted hop; then hop; fi
if wanted chaos-http; then chaos_http; fi
if wanted chaos-stdio; then chaos_stdio; fi

if ((FAILED)); then
  step "gateway log (last 30 lines of each)"
  for log in "$TMP"/gateway-*.log; do
    echo "--- ${log##*/}"
    tail -n 30 "$log"
  done
fi
step "results"
printf '%s\n' "${RESULTS[@]}"
echo "done in $((SECONDS - START)) s"
exit "$FAILED"
