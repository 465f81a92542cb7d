#!/usr/bin/env bash
# fusion-gateway end to end: real upstreams started here, a real client, from a clean clone:
#
#   bash tests/gateway/run.sh          # the gateway over stdio, then over Streamable HTTP
#   bash tests/gateway/run.sh http     # only the named runs (stdio, http)
#
# Installs @modelcontextprotocol/server-everything at the version package-lock.json pins (npm ci
# in tests/gateway/) and the Python MCP SDK pinned by tests/interop/python/requirements.txt (a venv
# at tests/gateway/.venv); each install is skipped while its stamp matches what it was made from.
# Builds billing-server and fusion-gateway. Then, for each run:
#   starts billing-server --http on a free port, with a bearer token;
#   writes a gateway file mounting demo (billing-server over stdio, writing its pid to a file),
#     web (that HTTP server, its token from DEMO_TOKEN), everything (server-everything over stdio)
#     and slow (billing-server started after `sleep 3`);
#   runs e2e.py, which spawns the gateway over stdio itself (run "stdio"), or is pointed at the
#     gateway this script starts with --http, its --token given in FUSION_GATEWAY_TOKEN (run
#     "http"). e2e.py kills upstreams mid-run by their pids and restarts the HTTP one on the
#     same port;
#   checks the gateway's children ended with it.
# Every process started is stopped on the way out, however the script ends; databases, pid
# files and gateway files live in a mktemp directory removed then. Logs go to
# target/gateway-e2e/logs/. Exits 1 if any scenario failed.
# Needs: bash, coreutils, sh, cargo, node >= 20 with npm, python3 >= 3.10 with venv and pip.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/tests/gateway"
LOGS="$ROOT/target/gateway-e2e/logs"
REQUIREMENTS="$ROOT/tests/interop/python/requirements.txt"
EVERYTHING="$HERE/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
ALL_RUNS=(stdio http)
START=$SECONDS

step() { printf '\n==> %s [%d s]\n' "$*" $((SECONDS - START)); }
die() { printf 'run.sh: %s\n' "$*" >&2; exit 1; }

if (($# > 0)); then
  for name in "$@"; do
    [[ " ${ALL_RUNS[*]} " == *" $name "* ]] || die "unknown run '$name'; runs: ${ALL_RUNS[*]}"
  done
  RUNS=("$@")
else
  RUNS=("${ALL_RUNS[@]}")
fi

# Everything started here is stopped on the way out, whatever the way.
TMP="$(mktemp -d -t fusion-gateway-e2e.XXXXXX)"
PIDS=()
# Whether pid $1 is still one of the programs this script runs (not a reused pid).
ours() {
  local args
  args="$(ps -o args= -p "$1" 2>/dev/null)" || return 1
  [[ "$args" == *billing-server* || "$args" == *fusion-gateway* || "$args" == *server-everything* ]]
}
# shellcheck source=tests/lib/processes.sh
source "$ROOT/tests/lib/processes.sh"
# The processes started here, then any a pid file still names: an upstream e2e.py restarted, or
# a child a gateway left behind.
stop_all() {
  local pid file
  for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
  PIDS=()
  for file in "$TMP"/*.pid; do
    [[ -f "$file" ]] || continue
    pid="$(cat "$file")"
    if [[ "$pid" =~ ^[0-9]+$ ]] && ours "$pid"; then stop_pid "$pid"; fi
    rm -f "$file"
  done
}
# shellcheck disable=SC2317,SC2329 # invoked by the EXIT trap
cleanup() {
  stop_all
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "prerequisites"
for tool in cargo node npm python3 sh timeout sha256sum od ps; do
  command -v "$tool" >/dev/null || die "'$tool' is not on PATH"
done
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
  die "node $(node --version) is too old for @modelcontextprotocol/server-everything: it needs >= 20"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
  die "$(python3 --version) is too old for mcp: it needs >= 3.10"
NODE="$(command -v node)"
echo "cargo $(cargo --version | cut -d' ' -f2), node $(node --version), npm $(npm --version), $(python3 --version)"

# An install step is skipped when its stamp (a hash of what it installed from) still matches.
fingerprint() { cat "$@" | sha256sum | cut -d' ' -f1; }

step "install server-everything and the Python MCP SDK"
stamp="$HERE/node_modules/.e2e-stamp"
want="$(fingerprint "$HERE/package.json" "$HERE/package-lock.json") node $(node --version)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "tests/gateway/node_modules up to date"
else
  echo "tests/gateway: npm ci"
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
fi
[[ -f "$EVERYTHING" ]] || die "npm ci installed no ${EVERYTHING#"$ROOT"/}"
echo "server-everything $(cd "$HERE" && node -p 'require("@modelcontextprotocol/server-everything/package.json").version')"
VENV="$HERE/.venv"
want="$(fingerprint "$REQUIREMENTS") $(python3 --version)"
if [[ -f "$VENV/.e2e-stamp" && "$(cat "$VENV/.e2e-stamp")" == "$want" ]]; then
  echo "tests/gateway/.venv up to date"
else
  echo "tests/gateway/.venv: pip install -r ${REQUIREMENTS#"$ROOT"/}"
  rm -rf "$VENV"
  python3 -m venv "$VENV" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$REQUIREMENTS"
  echo "$want" >"$VENV/.e2e-stamp"
fi
echo "mcp $("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("mcp"))')"

step "build billing-server and fusion-gateway (the workspace's debug build, tests/lib/debug.sh)"
# shellcheck source=tests/lib/debug.sh
source "$ROOT/tests/lib/debug.sh"
debug_build -q
BILLING="$DEBUG_DIR/billing-server"
GATEWAY="$DEBUG_DIR/fusion-gateway"
[[ -x "$BILLING" ]] || die "cargo build produced no billing-server"
[[ -x "$GATEWAY" ]] || die "cargo build produced no fusion-gateway"
echo "${BILLING#"$ROOT"/}"
echo "${GATEWAY#"$ROOT"/}"

mkdir -p "$LOGS"
rm -f "$LOGS"/*.log
RESULTS="$TMP/results"
: >"$RESULTS"
FAILED=0
# Bearer tokens: the web upstream's (given to the gateway through DEMO_TOKEN) and the gateway's.
DEMO_TOKEN="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
GATEWAY_TOKEN="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
export DEMO_TOKEN
export RUST_LOG="${RUST_LOG:-warn}"



# Records a line of the results (and shows it).
result() {
  echo "$1" | tee -a "$RESULTS"
  [[ "$1" == PASS* ]] || FAILED=1
}

# Whether the pids in the files "$@" have all exited, within 10 s.
children_ended() {
  local file pid i left
  for ((i = 0; i < 100; i++)); do
    left=""
    for file in "$@"; do
      [[ -f "$file" ]] || continue
      pid="$(cat "$file")"
      if kill -0 "$pid" 2>/dev/null && ours "$pid"; then left+=" $pid"; fi
    done
    [[ -z "$left" ]] && return 0
    sleep 0.1
  done
  echo "still running:$left"
  return 1
}

run() {
  local label="$1" web_log="$LOGS/$1-web.log" web_pid web_url config gateway_pid gateway_url code
  local children=("$TMP/$1-demo.pid" "$TMP/$1-everything.pid")
  step "gateway over $label"

  : >"$web_log"
  RUST_LOG=warn BILLING_TOKEN="$DEMO_TOKEN" "$BILLING" --db "$TMP/$label-web.db" --http 127.0.0.1:0 \
    2>>"$web_log" </dev/null >/dev/null &
  web_pid=$!
  disown "$web_pid" # killed mid-run on purpose: no job notice for it
  PIDS+=("$web_pid")
  echo "$web_pid" >"$TMP/$label-web.pid"
  web_url="$(listening_url "$web_pid" "$web_log" billing-server)" || { result "FAIL [$label] start billing-server --http"; return 0; }
  echo "web upstream: billing-server --http on $web_url (pid $web_pid)"

  # The mounts' shells: the first two write their pid where e2e.py reads it, then become the
  # upstream; the last sleeps first.
  # shellcheck disable=SC2016 # $$, $0, … are those shells', not this one's
  local demo_sh='echo $$ > "$0"; exec "$1" --db "$2"' everything_sh='echo $$ > "$0"; exec "$1" "$2" stdio'
  # shellcheck disable=SC2016
  local slow_sh='sleep 3; exec "$0" --db "$1"'
  config="$TMP/$label.toml"
  cat >"$config" <<EOF
keepalive_ms = 500
[reconnect]
initial_ms = 1000
max_ms = 5000

[[mount]]
namespace = "demo"
command = "sh"
args = ["-c", $(toml "$demo_sh"), $(toml "${children[0]}"), $(toml "$BILLING"), $(toml "$TMP/$label-demo.db")]

[[mount]]
namespace = "web"
url = $(toml "$web_url")
token_env = "DEMO_TOKEN"

[[mount]]
namespace = "everything"
command = "sh"
args = ["-c", $(toml "$everything_sh"), $(toml "${children[1]}"), $(toml "$NODE"), $(toml "$EVERYTHING")]

[[mount]]
namespace = "slow"
command = "sh"
args = ["-c", $(toml "$slow_sh"), $(toml "$BILLING"), $(toml "$TMP/$label-slow.db")]
EOF

  local client=("$VENV/bin/python" "$HERE/e2e.py" --label "$label" --billing "$BILLING" --everything "$EVERYTHING"
    --work "$TMP" --demo-pidfile "${children[0]}" --web-url "$web_url" --web-pidfile "$TMP/$label-web.pid"
    --web-db "$TMP/$label-web.db" --web-log "$web_log")
  if [[ "$label" == stdio ]]; then
    # shellcheck disable=SC2016 # $$ and $0 are the wrapper shell's
    client+=(--gateway-log "$LOGS/stdio-gateway.log"
      --gateway-stdio sh -c 'echo $$ > "$0"; exec "$@"' "$TMP/stdio-gateway.pid" "$GATEWAY" --config "$config")
  else
    : >"$LOGS/http-gateway.log"
    FUSION_GATEWAY_TOKEN="$GATEWAY_TOKEN" "$GATEWAY" --config "$config" --http 127.0.0.1:0 \
      2>>"$LOGS/http-gateway.log" </dev/null >/dev/null &
    gateway_pid=$!
    disown "$gateway_pid"
    PIDS+=("$gateway_pid")
    gateway_url="$(listening_url "$gateway_pid" "$LOGS/http-gateway.log" fusion-gateway)" ||
      { result "FAIL [$label] start fusion-gateway --http"; stop_all; return 0; }
    echo "fusion-gateway --http on $gateway_url (pid $gateway_pid)"
    client+=(--gateway-url "$gateway_url")
  fi

  set +e
  FUSION_GATEWAY_TOKEN="$GATEWAY_TOKEN" timeout --foreground 120 "${client[@]}" </dev/null 2>"$LOGS/$label-client.log" |
    tee "$LOGS/$label-scenarios.log"
  code=${PIPESTATUS[0]}
  set -e
  if ((code == 130 || code == 143)); then exit "$code"; fi
  grep -E '^(PASS|FAIL) ' "$LOGS/$label-scenarios.log" >>"$RESULTS" || true
  if ((code != 0)); then
    FAILED=1
    if ((code == 124)); then
      result "FAIL [$label] e2e.py did not end within 120 s"
    elif ! grep -q '^FAIL ' "$LOGS/$label-scenarios.log"; then
      result "FAIL [$label] e2e.py exited with $code"
    fi
    echo "(the client's stderr: ${LOGS#"$ROOT"/}/$label-client.log; the gateway's: ${LOGS#"$ROOT"/}/$label-gateway.log)"
  fi

  # The gateway ends its children when it ends: over stdio when the client closes its stdin
  # (done by now), over HTTP on SIGTERM.
  if [[ "$label" == http ]]; then stop_pid "$gateway_pid"; fi
  local left
  if left="$(children_ended "${children[@]}")"; then
    result "PASS [$label] shutdown: the gateway's stdio children ended with it"
  else
    result "FAIL [$label] shutdown: the gateway's stdio children outlived it ($left)"
  fi
  stop_all
}

for label in "${RUNS[@]}"; do run "$label"; done

step "results"
cat "$RESULTS"
passed="$(grep -c '^PASS ' "$RESULTS" || true)"
total="$(grep -c -E '^(PASS|FAIL) ' "$RESULTS" || true)"
echo "$passed/$total passed in $((SECONDS - START)) s (logs: ${LOGS#"$ROOT"/}/)"
exit "$FAILED"
