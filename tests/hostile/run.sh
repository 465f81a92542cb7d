#!/usr/bin/env bash
# billing-server (release build) over HTTP against hostile clients: 20,000 sessions opened
# without a token and refused, 20,000 opened with one and expired with the memory given back,
# slow-header sockets while a real client keeps calling, and resource subscriptions past every
# bound. Needs cargo and python3.
# Usage: tests/hostile/run.sh [--sessions N] [--slow N]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

# The release build the steps before made (tests/lib/release.sh): one set of packages, so that
# a run after them finds billing-server built.
# shellcheck source=tests/lib/release.sh
source "$ROOT/tests/lib/release.sh"
release_build --quiet
BIN="$RELEASE_DIR/billing-server"
[[ -x "$BIN" ]] || { echo "cargo build produced no $BIN" >&2; exit 1; }
# A few hundred sockets, the server's own descriptors and the client's: lift the soft limit.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
python3 "$ROOT/tests/hostile/hostile.py" "$BIN" "$@"
