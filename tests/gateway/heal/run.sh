#!/usr/bin/env bash
# heal-bench on third-party MCP servers: the same mistaken first calls, answered by the servers
# themselves and through fusion-gateway, repaired by a text-only agent (heal.py):
#
#   bash tests/gateway/heal/run.sh                     # the table, the two rates, the floor kept
#   bash tests/gateway/heal/run.sh --agent blind       # the control: retries without reading
#   bash tests/gateway/heal/run.sh --only fs_mkdir,time_get
#
# Installs @modelcontextprotocol/server-memory and server-filesystem at the versions
# package-lock.json pins (npm ci here), and mcp-server-time with the Python MCP SDK at the
# versions requirements.txt pins (a venv at .venv here); each install is skipped while its
# stamp matches what it was made from. Builds fusion-gateway. Then runs heal.py, which starts
# every server itself, in a fresh temporary directory per scenario, and keeps the rates from
# falling: exits 1 when the gateway (or the agent direct) heals fewer scenarios than floor.json
# says, or a scenario heals direct but not through the gateway and floor.json does not list it
# (with why). The floor is checked on full runs of the reading agent only.
# Extra arguments go to heal.py; every call and answer is kept in
# target/gateway-heal/run.json. Whatever heal.py started is stopped on the way out, however
# the script ends. Needs: bash, coreutils, cargo, node >= 20 with npm, python3 >= 3.10 with venv.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
OUTDIR="$ROOT/target/gateway-heal"
MEMORY="$HERE/node_modules/@modelcontextprotocol/server-memory/dist/index.js"
FILESYSTEM="$HERE/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
VENV="$HERE/.venv"
# All of heal.py's scenarios together take 3 to 6 minutes on 2 busy cores.
TIME_LIMIT_S=1800
START=$SECONDS

step() { printf '\n==> %s [%d s]\n' "$*" $((SECONDS - START)); }
die() { printf 'heal/run.sh: %s\n' "$*" >&2; exit 1; }

# shellcheck source=tests/lib/processes.sh
source "$ROOT/tests/lib/processes.sh"
TMP="$(mktemp -d -t fusion-heal.XXXXXX)"
HEAL_PID=""
# heal.py stops its servers when it ends or gets SIGTERM; whatever still runs with a path of
# TMP in its command line (a scenario's filesystem server, a gateway and its config) is
# stopped after it.
# shellcheck disable=SC2317,SC2329 # invoked by the EXIT trap
cleanup() {
  if [[ -n "$HEAL_PID" ]]; then stop_pid "$HEAL_PID"; fi
  stop_mentioning "$TMP"
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "prerequisites"
for tool in cargo node npm python3 sha256sum timeout ps awk; do
  command -v "$tool" >/dev/null || die "'$tool' is not on PATH"
done
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
  die "node $(node --version) is too old for server-memory and server-filesystem: they need >= 20"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
  die "$(python3 --version) is too old for mcp and mcp-server-time: they need >= 3.10"
NODE="$(command -v node)"
echo "cargo $(cargo --version | cut -d' ' -f2), node $(node --version), npm $(npm --version), $(python3 --version)"

# An install step is skipped when its stamp (a hash of what it installed from) still matches.
fingerprint() { cat "$@" | sha256sum | cut -d' ' -f1; }

step "install server-memory, server-filesystem, mcp-server-time and the Python MCP SDK"
stamp="$HERE/node_modules/.heal-stamp"
want="$(fingerprint "$HERE/package.json" "$HERE/package-lock.json") node $(node --version)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "tests/gateway/heal/node_modules up to date"
else
  echo "tests/gateway/heal: npm ci"
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci failed in tests/gateway/heal"
  echo "$want" >"$stamp"
fi
[[ -f "$MEMORY" ]] || die "npm ci installed no ${MEMORY#"$ROOT"/}"
[[ -f "$FILESYSTEM" ]] || die "npm ci installed no ${FILESYSTEM#"$ROOT"/}"
want="$(fingerprint "$HERE/requirements.txt") $(python3 --version)"
if [[ -f "$VENV/.heal-stamp" && "$(cat "$VENV/.heal-stamp")" == "$want" ]]; then
  echo "tests/gateway/heal/.venv up to date"
else
  echo "tests/gateway/heal/.venv: pip install -r tests/gateway/heal/requirements.txt"
  rm -rf "$VENV"
  python3 -m venv "$VENV" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$HERE/requirements.txt" ||
    die "pip install -r tests/gateway/heal/requirements.txt failed"
  echo "$want" >"$VENV/.heal-stamp"
fi
[[ -x "$VENV/bin/mcp-server-time" ]] || die "pip installed no mcp-server-time in tests/gateway/heal/.venv"
(cd "$HERE" && node -p '["server-memory", "server-filesystem"].map(p => p + " " +
  require("@modelcontextprotocol/" + p + "/package.json").version).join(", ")')
"$VENV/bin/python" -c 'from importlib.metadata import version
print(", ".join(f"{p} {version(p)}" for p in ("mcp-server-time", "mcp")))'

step "build fusion-gateway (the workspace's debug build, tests/lib/debug.sh)"
# shellcheck source=tests/lib/debug.sh
source "$ROOT/tests/lib/debug.sh"
debug_build -q
GATEWAY="$DEBUG_DIR/fusion-gateway"
[[ -x "$GATEWAY" ]] || die "cargo build produced no fusion-gateway"
echo "${GATEWAY#"$ROOT"/}"

step "heal.py: each scenario direct, then through the gateway"
mkdir -p "$OUTDIR"
RUN_JSON="$OUTDIR/run.json"
rm -f "$RUN_JSON"
set +e
TMPDIR="$TMP" RUST_LOG="${RUST_LOG:-error}" timeout "$TIME_LIMIT_S" "$VENV/bin/python" "$HERE/heal.py" \
  --gateway "$GATEWAY" --node "$NODE" --memory "$MEMORY" --filesystem "$FILESYSTEM" \
  --time "$VENV/bin/mcp-server-time" --json "$RUN_JSON" "$@" </dev/null &
HEAL_PID=$!
wait "$HEAL_PID"
code=$?
HEAL_PID=""
set -e
((code != 124)) || die "heal.py did not end within $TIME_LIMIT_S s"
((code == 0)) || die "heal.py exited with $code"

# The floor: only for the agent it was measured with, on the whole corpus.
if [[ " $* " == *" --agent blind "* || " $* " == *" --agent=blind "* || " $* " == *" --only"* ]]; then
  printf 'heal-bench: %d s (no floor checked for this run; every call and answer: %s)\n' \
    $((SECONDS - START)) "${RUN_JSON#"$ROOT"/}"
  exit 0
fi
step "the floor (floor.json)"
status=0
"$VENV/bin/python" - "$HERE/floor.json" "$RUN_JSON" <<'PY' || status=$?
import json, sys
floor, run = (json.load(open(path)) for path in sys.argv[1:3])
allowed = floor.get("worse_allowed", {})
failed = []
if run["gateway"] < floor["gateway"]:
    failed.append(f"the gateway healed {run['gateway']}/{run['total']}, below the floor of {floor['gateway']}")
if run["direct"] < floor["direct"]:
    failed.append(f"direct healed {run['direct']}/{run['total']}, below the floor of {floor['direct']} (the agent got worse?)")
worse = [name for name in run["worse"] if name not in allowed]
if worse:
    failed.append(f"healed direct but not through the gateway, and not in floor.json's worse_allowed: {', '.join(worse)}")
for line in failed:
    print(f"FAIL: {line}")
for name in run["worse"]:
    if name in allowed:
        print(f"allowed worse through the gateway: {name}: {allowed[name]}")
if failed:
    sys.exit(1)
print(f"floor kept: gateway {run['gateway']} >= {floor['gateway']}, direct {run['direct']} >= {floor['direct']}, "
      f"none worse through the gateway but the {len(allowed)} floor.json lists")
PY
printf 'heal-bench: %d s (every call and answer: %s)\n' $((SECONDS - START)) "${RUN_JSON#"$ROOT"/}"
exit "$status"
