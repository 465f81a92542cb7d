#!/usr/bin/env bash
# MCP Apps on the demo: the invoice view (examples/billing/apps/invoice-view.html) and the script
# every view includes (crates/fusion/src/apps/fusion-app.js), checked with the official pieces:
#
#   bash tests/apps/run.sh
#
# 1. envelope.test.mjs (node --test): FusionApp.parseEnvelope on the wire crate's vectors and on
#    the Rust parser's edge cases, so the JavaScript and Rust readers of envelopes agree.
# 2. apps.mjs, against billing-server over Streamable HTTP, grouped and --flat: the TypeScript
#    SDK v2 client finds the view through ext-apps' getToolUiResourceUri and reads it; headless
#    Chromium hosts it with ext-apps' AppBridge, renders a real get_invoice result, then the
#    NOT_FOUND envelope of an unknown id typed into the view (screenshots in target/apps/).
#
# Installs what it needs: Debian's chromium with apt-get (non-interactive; as root, or through
# a sudo that asks no password) when CHROMIUM names none and none is on PATH; the pinned npm
# packages here (npm ci, skipped while its stamp matches). Builds billing-server
# (APPS_SERVER_BIN=PATH runs that binary instead). Each server listens on port 0 and is waited
# for by the URL it logs; whatever the run started (the servers, a Chromium left behind) is
# stopped on the way out, however the script ends. Server logs go to target/apps/logs/.
# Needs: bash, coreutils, cargo, node >= 20 with npm; apt-get when chromium must be installed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="$ROOT/target/apps"
# The browser checks take seconds; the limit is for a hang.
TIME_LIMIT_S=180
START=$SECONDS

step() { printf '\n==> %s [%d s]\n' "$*" $((SECONDS - START)); }
die() { printf 'apps/run.sh: %s\n' "$*" >&2; exit 1; }

# shellcheck source=tests/lib/processes.sh
source "$ROOT/tests/lib/processes.sh"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/mcp-fusion-apps.XXXXXX")"
SERVER_PIDS=()
# shellcheck disable=SC2317,SC2329 # invoked by the EXIT trap
cleanup() {
  local pid
  for pid in "${SERVER_PIDS[@]}"; do stop_pid "$pid"; done
  # A Chromium apps.mjs could not close has the profile under TMP in its command line.
  stop_mentioning "$TMP"
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "prerequisites"
for tool in cargo node npm sha256sum timeout ps awk; do
  command -v "$tool" >/dev/null || die "'$tool' is not on PATH"
done
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
  die "node $(node --version) is too old for @modelcontextprotocol/ext-apps and the client: they need >= 20"
echo "cargo $(cargo --version | cut -d' ' -f2), node $(node --version), npm $(npm --version)"

# Chromium: CHROMIUM, else one on PATH, else Debian's, installed here.
find_chromium() {
  local name
  for name in chromium chromium-browser google-chrome-stable google-chrome; do
    if command -v "$name" >/dev/null; then
      command -v "$name"
      return 0
    fi
  done
  return 1
}
if [[ -n "${CHROMIUM:-}" ]]; then
  [[ -x "$CHROMIUM" ]] || die "CHROMIUM=$CHROMIUM is not an executable"
elif ! CHROMIUM="$(find_chromium)"; then
  command -v apt-get >/dev/null || die "no chromium on PATH and no apt-get to install one: set CHROMIUM=/path/to/chromium"
  SUDO=()
  if ((EUID != 0)); then
    if ! command -v sudo >/dev/null || ! sudo -n true 2>/dev/null; then
      die "no chromium on PATH; installing Debian's needs root (or sudo without a password), or set CHROMIUM=/path/to/chromium"
    fi
    SUDO=(sudo -n)
  fi
  echo "no chromium on PATH: installing Debian's chromium with apt-get (non-interactive)"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq || die "apt-get update failed"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null ||
    die "apt-get install chromium failed"
  CHROMIUM="$(find_chromium)" || die "apt-get installed chromium, but none is on PATH"
fi
# Debian's launcher script may print shell noise before the version.
echo "$("$CHROMIUM" --version 2>/dev/null | tail -n 1) ($CHROMIUM)"

step "envelopes: FusionApp.parseEnvelope against the wire vectors and the Rust parser's cases"
node --test --test-reporter=dot "$HERE/envelope.test.mjs" || die "envelope.test.mjs failed"

step "install ext-apps, the TypeScript SDK v2 client, puppeteer-core and esbuild"
# Skipped when its stamp (a hash of what it installed from) still matches.
stamp="$HERE/node_modules/.apps-stamp"
want="$(cat "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -d' ' -f1) node $(node --version)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "tests/apps/node_modules up to date"
else
  echo "tests/apps: npm ci"
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci failed in tests/apps"
  echo "$want" >"$stamp"
fi
# (read from the files: some of these packages export no package.json)
(cd "$HERE" && node -p '["@modelcontextprotocol/ext-apps", "@modelcontextprotocol/client", "puppeteer-core", "esbuild"]
  .map((p) => p + " " + JSON.parse(require("fs").readFileSync("node_modules/" + p + "/package.json")).version).join(", ")')

if [[ -n "${APPS_SERVER_BIN:-}" ]]; then
  step "billing-server (APPS_SERVER_BIN)"
  BIN="$(cd "$ROOT" && realpath "$APPS_SERVER_BIN")"
  [[ -x "$BIN" ]] || die "APPS_SERVER_BIN=$APPS_SERVER_BIN is not an executable"
else
  step "build billing-server (the workspace's debug build, tests/lib/debug.sh)"
  # shellcheck source=tests/lib/debug.sh
  source "$ROOT/tests/lib/debug.sh"
  debug_build -q
  BIN="$DEBUG_DIR/billing-server"
  [[ -x "$BIN" ]] || die "cargo build produced no billing-server"
fi
echo "${BIN#"$ROOT"/}"

step "start billing-server over Streamable HTTP, grouped and --flat"
mkdir -p "$OUT/logs"
rm -f "$OUT"/*.png "$OUT"/logs/*.log
# Starts billing-server on a fresh database with flags "$@"; sets HTTP_URL once it listens.
start_http() {
  local name="$1" log="$OUT/logs/$1.server.log" pid
  shift
  RUST_LOG="${RUST_LOG:-warn}" "$BIN" --db "$TMP/$name.db" --http 127.0.0.1:0 "$@" 2>"$log" </dev/null &
  pid=$!
  SERVER_PIDS+=("$pid")
  HTTP_URL="$(listening_url "$pid" "$log" billing-server)" || die "billing-server $* did not start"
  echo "billing-server${*:+ $*} listening on $HTTP_URL (pid $pid)"
}
start_http grouped
GROUPED_URL="$HTTP_URL"
start_http flat --flat
FLAT_URL="$HTTP_URL"

step "apps.mjs: discovery, then the view in headless Chromium"
set +e
timeout --foreground "$TIME_LIMIT_S" node "$HERE/apps.mjs" --url "$GROUPED_URL" --flat-url "$FLAT_URL" \
  --chromium "$CHROMIUM" --out "$OUT" --user-data-dir "$TMP/chromium-profile" </dev/null
code=$?
set -e
# Ctrl-C (or a TERM to the group) ends the run; the trap cleans up.
if ((code == 130 || code == 143)); then exit "$code"; fi
((code != 124)) || die "apps.mjs did not end within $TIME_LIMIT_S s"
((code == 0)) || die "apps.mjs failed (server logs: ${OUT#"$ROOT"/}/logs/)"
shots=("$OUT"/*.png)
echo "done in $((SECONDS - START)) s; screenshots: ${shots[*]#"$ROOT"/}"
