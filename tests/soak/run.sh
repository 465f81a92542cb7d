#!/usr/bin/env bash
# billing-server (release build) over HTTP under fusion-load for MINUTES (default 30), guards on,
# sessions opened and closed all along; writes docs/soak.csv and docs/soak.svg and fails when
# memory, descriptors, threads or tasks grow after the warm-up, or a call goes unanswered.
# Needs cargo and python3. Usage: tests/soak/run.sh [MINUTES]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

cargo build --release --quiet -p billing-server -p fusion-load
TARGET="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release"
python3 tests/soak/soak.py "$TARGET/billing-server" "$TARGET/fusion-load" --minutes "${1:-30}" --out docs
