#!/usr/bin/env bash
# The gateway's OpenAPI mount end to end, from a clean clone:
#
#   bash tests/gateway/openapi/run.sh
#
# Installs FastAPI, uvicorn and the Python MCP SDK at the versions requirements.txt pins (a venv at
# tests/gateway/openapi/.venv, skipped while its stamp matches), builds fusion-gateway, and runs
# client.py: the SDK spawns the gateway over stdio with three mounts of app.py's API (its document
# fetched with an API key, read from a file with base_url, fetched without the key), starts the
# API only once the gateway runs, and checks each scenario (tools from the document, validation,
# each HTTP status as its envelope, a path parameter kept to one segment, the API gone).
# Logs: target/gateway-openapi/. Exits 1 if a scenario failed.
# Needs: bash, cargo, python3 >= 3.10 with venv and pip.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
HERE="$ROOT/tests/gateway/openapi"
WORK="$ROOT/target/gateway-openapi"
START=$SECONDS

step() { printf '\n==> %s [%d s]\n' "$*" $((SECONDS - START)); }
die() { printf 'openapi/run.sh: %s\n' "$*" >&2; exit 1; }

step "prerequisites"
for tool in cargo python3 sha256sum timeout; do
  command -v "$tool" >/dev/null || die "'$tool' is not on PATH"
done
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' || die "$(python3 --version) is too old: it needs >= 3.10"

step "install FastAPI, uvicorn and the Python MCP SDK"
VENV="$HERE/.venv"
want="$(sha256sum "$HERE/requirements.txt" | cut -d' ' -f1) $(python3 --version)"
if [[ -f "$VENV/.stamp" && "$(cat "$VENV/.stamp")" == "$want" ]]; then
  echo "tests/gateway/openapi/.venv up to date"
else
  rm -rf "$VENV"
  python3 -m venv "$VENV" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$HERE/requirements.txt"
  echo "$want" >"$VENV/.stamp"
fi
"$VENV/bin/python" -c 'from importlib.metadata import version as v; print("fastapi", v("fastapi"), "uvicorn", v("uvicorn"), "mcp", v("mcp"))'

step "build fusion-gateway (the workspace's debug build, tests/lib/debug.sh)"
# shellcheck source=tests/lib/debug.sh
source "$ROOT/tests/lib/debug.sh"
debug_build -q
GATEWAY="$DEBUG_DIR/fusion-gateway"
[[ -x "$GATEWAY" ]] || die "cargo build produced no $GATEWAY"

step "the Python SDK through fusion-gateway to a FastAPI app"
rm -rf "$WORK"
mkdir -p "$WORK"
set +e
timeout --foreground 180 "$VENV/bin/python" "$HERE/client.py" --gateway "$GATEWAY" --work "$WORK" </dev/null
code=$?
set -e
if ((code == 124)); then echo "FAIL client.py did not end within 180 s"; fi
if ((code != 0)); then
  echo "(logs: ${WORK#"$ROOT"/}/gateway.log, ${WORK#"$ROOT"/}/api.log)"
fi
echo "done in $((SECONDS - START)) s"
exit "$code"
