#!/usr/bin/env bash
# mcp-assert's fuzzer (PyPI, pinned in requirements.txt) against the demo, directly and through
# fusion-gateway, over stdio: 1,000 adversarial calls to each tool with a fixed seed. The fuzzer
# never reads the server's stderr, as MCP allows, so this holds only while a full stderr pipe
# cannot stop serving. Every run must pass: no crash, no timeout, no protocol error.
#
#   bash tests/mcp-assert/run.sh            # 1,000 runs per tool
#   bash tests/mcp-assert/run.sh 200        # fewer
#
# Installs mcp-assert into a venv at .venv here (skipped while its stamp matches
# requirements.txt), builds billing-server and fusion-gateway. Needs: bash, cargo, python3 with
# venv.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENV="$HERE/.venv"
RUNS="${1:-1000}"
SEED=42
die() { printf 'mcp-assert/run.sh: %s\n' "$*" >&2; exit 1; }
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "runs must be a positive whole number, not '$RUNS'"

want="$(sha256sum "$HERE/requirements.txt" | cut -d' ' -f1) $(python3 --version)"
if [[ -f "$VENV/.stamp" && "$(cat "$VENV/.stamp")" == "$want" ]]; then
  echo "tests/mcp-assert/.venv up to date"
else
  rm -rf "$VENV"
  python3 -m venv "$VENV" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$HERE/requirements.txt" ||
    die "pip install -r tests/mcp-assert/requirements.txt failed"
  echo "$want" >"$VENV/.stamp"
fi
[[ -x "$VENV/bin/mcp-assert" ]] || die "pip installed no mcp-assert in tests/mcp-assert/.venv"

(cd "$ROOT" && cargo build -q -p billing-server -p mcp-fusion-gateway)
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug"
TMP="$(mktemp -d -t fusion-mcp-assert.XXXXXX)"
trap 'rm -rf "$TMP"' EXIT
printf '[[mount]]\nnamespace = "demo"\ncommand = "%s"\nargs = ["--db", "%s"]\n' \
  "$BIN/billing-server" "$TMP/through.db" >"$TMP/gateway.toml"

# What the fuzzer says about one server: its summary, and whether every run passed.
fuzz() {
  local name="$1" server="$2" report="$TMP/$1.json"
  # A hang shows as timeouts (15 s a call); the whole run is bounded too.
  timeout 900 "$VENV/bin/mcp-assert" fuzz --server "$server" --runs "$RUNS" --seed "$SEED" --json >"$report" ||
    die "$name: mcp-assert fuzz failed or did not end (exit $?)"
  python3 - "$name" "$report" "$RUNS" <<'PY'
import json, sys
name, path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
report = json.load(open(path))
summary = report["summary"]
print(f"{name}: {summary['total_passed']} of {summary['total_runs']} runs passed over {summary['tools_tested']} tool(s); "
      f"crashes {summary['crashes']}, timeouts {summary['timeouts']}, protocol errors {summary['protocol_errors']}")
ok = summary["tools_tested"] > 0 and summary["total_runs"] == runs * summary["tools_tested"] \
    and summary["total_passed"] == summary["total_runs"] and summary["total_failures"] == 0
if not ok:
    print(json.dumps(report, indent=2)[:4000])
    sys.exit(1)
PY
}

fuzz billing-server "$BIN/billing-server --db $TMP/direct.db"
fuzz fusion-gateway "$BIN/fusion-gateway --config $TMP/gateway.toml --wait-for-upstreams"
