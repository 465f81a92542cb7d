#!/usr/bin/env bash
# heal-bench on third-party MCP servers: the same mistaken calls, answered by the servers
# themselves and through fusion-gateway, repaired by a text-only agent (heal.py):
#
#   bash tests/gateway/heal/run.sh            # prints the table and the two rates
#   bash tests/gateway/heal/run.sh --agent blind
#
# Installs @modelcontextprotocol/server-memory and server-filesystem at the versions
# package-lock.json pins (npm ci here), and mcp-server-time with the Python MCP SDK at the
# versions requirements.txt pins (a venv here); each install is skipped while its stamp matches
# what it was made from. Builds fusion-gateway. Then runs heal.py, and keeps the rates from
# falling: exits 1 when the gateway heals fewer scenarios than floor.json says, or a scenario
# heals direct but not through the gateway (unless floor.json lists it, with why).
# Extra arguments go to heal.py. Needs: bash, cargo, node >= 20 with npm, python3 >= 3.10.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
START=$SECONDS
die() { printf 'heal/run.sh: %s\n' "$*" >&2; exit 1; }
for tool in cargo node npm python3 sha256sum; do
  command -v "$tool" >/dev/null || die "'$tool' is not on PATH"
done
fingerprint() { sha256sum "$@" | sha256sum | cut -c1-16; }

want="$(fingerprint "$HERE/package-lock.json") $(node --version)"
if [[ -f "$HERE/node_modules/.heal-stamp" && "$(cat "$HERE/node_modules/.heal-stamp")" == "$want" ]]; then
  echo "node_modules up to date"
else
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$HERE/node_modules/.heal-stamp"
fi
MEMORY="$HERE/node_modules/@modelcontextprotocol/server-memory/dist/index.js"
FILESYSTEM="$HERE/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
[[ -f "$MEMORY" && -f "$FILESYSTEM" ]] || die "npm ci installed no server-memory or server-filesystem"

VENV="$HERE/.venv"
want="$(fingerprint "$HERE/requirements.txt") $(python3 --version)"
if [[ -f "$VENV/.heal-stamp" && "$(cat "$VENV/.heal-stamp")" == "$want" ]]; then
  echo ".venv up to date"
else
  rm -rf "$VENV"
  python3 -m venv "$VENV" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$HERE/requirements.txt"
  echo "$want" >"$VENV/.heal-stamp"
fi
[[ -x "$VENV/bin/mcp-server-time" ]] || die "pip installed no mcp-server-time"

GATEWAY="$(cd "$ROOT" && cargo build -p mcp-fusion-gateway --message-format=json-render-diagnostics |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "fusion-gateway":
        print(m["executable"])')"
[[ -x "$GATEWAY" ]] || die "cargo build produced no fusion-gateway"

OUT="$(mktemp -d -t fusion-heal.XXXXXX)"
trap 'rm -rf "$OUT"' EXIT
"$VENV/bin/python" "$HERE/heal.py" --gateway "$GATEWAY" --node node --memory "$MEMORY" --filesystem "$FILESYSTEM" \
  --time "$VENV/bin/mcp-server-time" --json "$OUT/run.json" "$@"

# The floor: only for the agent it was measured with, on the whole corpus.
if [[ " $* " == *" --agent blind "* || " $* " == *" --only "* ]]; then
  printf 'heal-bench: %d s (no floor checked for this run)\n' $((SECONDS - START))
  exit 0
fi
"$VENV/bin/python" - "$HERE/floor.json" "$OUT/run.json" <<'PY'
import json, sys
floor, run = (json.load(open(path)) for path in sys.argv[1:3])
allowed = set(floor.get("worse_allowed", {}))
failed = []
if run["gateway"] < floor["gateway"]:
    failed.append(f"the gateway healed {run['gateway']}/{run['total']}, below the floor of {floor['gateway']}")
if run["direct"] < floor["direct"]:
    failed.append(f"direct healed {run['direct']}/{run['total']}, below the floor of {floor['direct']} (the agent got worse?)")
worse = [name for name in run["worse"] if name not in allowed]
if worse:
    failed.append(f"healed direct but not through the gateway: {', '.join(worse)}")
for line in failed:
    print(f"FAIL: {line}")
if failed:
    sys.exit(1)
print(f"floor kept: gateway {run['gateway']} >= {floor['gateway']}, direct {run['direct']} >= {floor['direct']}, none worse through the gateway")
PY
printf 'heal-bench: %d s\n' $((SECONDS - START))
