#!/usr/bin/env bash
# A port and its original, listed by the official SDKs' clients: examples/tasks (mcp-fusion) and
# examples/tasks-rmcp (rmcp's #[tool_router]) spawned over stdio by the TypeScript SDK and the
# Python SDK, which must see the same seven tool names, each with the same hints.
#
#   bash tests/interop/port.sh
#
# Uses the clients tests/interop/run.sh installs (tests/interop/ts/node_modules,
# tests/interop/.venv), installing them first when they are missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/tests/interop"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/mcp-fusion-port.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

if [[ ! -d "$HERE/ts/node_modules/@modelcontextprotocol/sdk" ]]; then
  (cd "$HERE/ts" && npm ci --no-audit --no-fund --loglevel=error)
fi
if [[ ! -x "$HERE/.venv/bin/python" ]]; then
  python3 -m venv "$HERE/.venv"
  "$HERE/.venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$HERE/python/requirements.txt"
fi

cd "$ROOT"
# shellcheck source=tests/lib/debug.sh
source "$ROOT/tests/lib/debug.sh"
debug_build -q
original="$DEBUG_DIR/tasks-rmcp"
port="$DEBUG_DIR/tasks-server"
node "$HERE/ts/port.mjs" "$original" "$port" "$TMP"
"$HERE/.venv/bin/python" "$HERE/python/port.py" "$original" "$port" "$TMP"
