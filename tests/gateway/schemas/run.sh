#!/usr/bin/env bash
# fusion-gateway's argument validation on the schemas other people's SDKs write:
#
#   bash tests/gateway/schemas/run.sh                          # builds the gateway, runs every case
#   bash tests/gateway/schemas/run.sh --gateway PATH           # this gateway instead (or FUSION_GATEWAY=PATH)
#   bash tests/gateway/schemas/run.sh --only ts.adopt --json out.json
#
# Installs the TypeScript MCP SDK and Zod at the versions package-lock.json pins (npm ci here),
# and FastMCP with the Python MCP SDK at the versions requirements.txt pins (a venv at .venv
# here); each install is skipped while its stamp matches what it was made from. Builds
# fusion-gateway unless one is given. Then runs client.py, which mounts fastmcp_server.py
# (pydantic) and ts_server.mjs (Zod) in one gateway and checks every case of cases.py: correct
# calls forwarded unchanged, bad calls refused by the gateway at the right field path. Other
# arguments go to client.py (--only, --json OUT, --formats report). Logs, the gateway file and
# the inputSchemas both servers publish (tools.json): target/gateway-schemas/. Whatever
# client.py started is stopped on the way out, however the script ends. Exits 1 if a case failed.
# Needs: bash, coreutils, procps, node >= 20 with npm, python3 >= 3.10 with venv; cargo unless
# a gateway is given.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
WORK="$ROOT/target/gateway-schemas"
VENV="$HERE/.venv"
# The cases take seconds; the limit is for a gateway or an upstream that hangs.
TIME_LIMIT_S=300
START=$SECONDS

step() { printf '\n==> %s [%d s]\n' "$*" $((SECONDS - START)); }
die() { printf 'schemas/run.sh: %s\n' "$*" >&2; exit 1; }

GATEWAY="${FUSION_GATEWAY:-}"
ARGS=()
while (($#)); do
  case "$1" in
    --gateway) (($# >= 2)) || die "--gateway needs a path"; GATEWAY="$2"; shift 2 ;;
    --gateway=*) GATEWAY="${1#--gateway=}"; shift ;;
    *) ARGS+=("$1"); shift ;;
  esac
done

# shellcheck source=tests/lib/processes.sh
source "$ROOT/tests/lib/processes.sh"
CLIENT_PID=""
# Every process under the client (the gateway, the upstreams it started, the direct ones),
# listed before the client is stopped: once it is gone they no longer descend from it.
# shellcheck disable=SC2317,SC2329 # invoked by cleanup
descendants() {
  local pid
  for pid in $(ps -o pid= --ppid "$1"); do
    echo "$pid"
    descendants "$pid"
  done
}
# shellcheck disable=SC2317,SC2329 # invoked by the EXIT trap
cleanup() {
  local pid pids
  [[ -n "$CLIENT_PID" ]] || return 0
  pids="$(descendants "$CLIENT_PID")"
  stop_pid "$CLIENT_PID"
  for pid in $pids; do stop_pid "$pid"; done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "prerequisites"
for tool in node npm python3 sha256sum timeout ps; do
  command -v "$tool" >/dev/null || die "'$tool' is not on PATH"
done
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
  die "node $(node --version) is too old: ts_server.mjs needs >= 20"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
  die "$(python3 --version) is too old for fastmcp and mcp: they need >= 3.10"
if [[ -z "$GATEWAY" ]]; then command -v cargo >/dev/null || die "'cargo' is not on PATH (or give --gateway PATH)"; fi
echo "node $(node --version), npm $(npm --version), $(python3 --version)"

# An install step is skipped when its stamp (a hash of what it installed from) still matches.
fingerprint() { cat "$@" | sha256sum | cut -d' ' -f1; }

step "install the TypeScript MCP SDK, Zod, FastMCP and the Python MCP SDK"
stamp="$HERE/node_modules/.schemas-stamp"
want="$(fingerprint "$HERE/package.json" "$HERE/package-lock.json") node $(node --version)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "tests/gateway/schemas/node_modules up to date"
else
  echo "tests/gateway/schemas: npm ci"
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci failed in tests/gateway/schemas"
  echo "$want" >"$stamp"
fi
want="$(fingerprint "$HERE/requirements.txt") $(python3 --version)"
if [[ -f "$VENV/.schemas-stamp" && "$(cat "$VENV/.schemas-stamp")" == "$want" ]]; then
  echo "tests/gateway/schemas/.venv up to date"
else
  echo "tests/gateway/schemas/.venv: pip install -r tests/gateway/schemas/requirements.txt"
  rm -rf "$VENV"
  python3 -m venv "$VENV" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$HERE/requirements.txt" ||
    die "pip install -r tests/gateway/schemas/requirements.txt failed"
  echo "$want" >"$VENV/.schemas-stamp"
fi
(cd "$HERE" && node -p '["@modelcontextprotocol/sdk", "zod"].map(p => p + " " +
  require("./node_modules/" + p + "/package.json").version).join(", ")')
"$VENV/bin/python" -c 'from importlib.metadata import version
print(", ".join(f"{p} {version(p)}" for p in ("fastmcp", "pydantic", "mcp")))'

if [[ -n "$GATEWAY" ]]; then
  step "the gateway given"
else
  step "build fusion-gateway (the workspace's debug build, tests/lib/debug.sh)"
  # shellcheck source=tests/lib/debug.sh
  source "$ROOT/tests/lib/debug.sh"
  debug_build -q
  GATEWAY="$DEBUG_DIR/fusion-gateway"
fi
[[ -x "$GATEWAY" ]] || die "no fusion-gateway at $GATEWAY"
GATEWAY="$(cd "$(dirname "$GATEWAY")" && pwd)/$(basename "$GATEWAY")"
echo "$GATEWAY"

step "client.py: each case direct, then through the gateway"
mkdir -p "$WORK"
set +e
RUST_LOG="${RUST_LOG:-warn}" timeout "$TIME_LIMIT_S" "$VENV/bin/python" "$HERE/client.py" \
  --gateway "$GATEWAY" --node "$(command -v node)" --work "$WORK" "${ARGS[@]}" </dev/null &
CLIENT_PID=$!
wait "$CLIENT_PID"
code=$?
CLIENT_PID=""
set -e
((code != 124)) || echo "FAIL client.py did not end within $TIME_LIMIT_S s"
((code == 0)) || echo "(logs: ${WORK#"$ROOT"/}/gateway.log, direct-py.log, direct-ts.log)"
echo "done in $((SECONDS - START)) s"
exit "$code"
