#!/usr/bin/env bash
# billing-server as an OAuth 2.1 resource server, against a real OpenID provider:
#
#   bash tests/oauth/run.sh
#
# Installs what it needs (npm ci in tests/oauth), builds billing-server, fusion and
# fusion-gateway, then starts:
#   provider.mjs (oidc-provider), the issuer billing-server trusts, its keys in a temp dir;
#   a second provider with the same keys and its own issuer (well signed, wrong issuer);
#   a third with the same keys and issuer whose clock is two hours behind (expired tokens);
#   four billing-servers, each on a free port with --oauth-issuer, --oauth-resource its own
#   /mcp URL and --rate-limit 5/3600: the main one (step-up scope refusal), one with
#   --oauth-scope-refusal in-band, one kept for the rate-limit check alone, and one that
#   introspects opaque tokens (RFC 7662) as billing-introspector;
#   a fifth billing-server, and fusion-gateway mounting it (namespace "billing") on a free
#   port with --oauth-issuer, --oauth-resource its own /mcp URL and --wait-for-upstreams: it
#   takes callers' tokens for itself only, and gets its own for the billing-server from the
#   provider (client_credentials as billing-gateway, token_url in its gateway file).
# Then gateway.mjs checks the gateway, oauth.mjs checks the four over raw Streamable HTTP
# (both with lib.mjs's helpers), and sdk-client.mjs has the official TypeScript SDK find its
# own way to a token (client_credentials) and call the main one.
# Everything started is stopped when the script ends, whatever the way. Logs go to
# target/oauth/logs/. Exits 1 if any check failed, naming it.
# Last, lock.mjs has `fusion lock` read the main server with a full-scope token, with a
# billing:read one, and the same binary over stdio (no authorization: the whole server).
# OAUTH_SERVER_BIN=PATH runs that binary instead of building one (OAUTH_FUSION_BIN and
# OAUTH_GATEWAY_BIN likewise for fusion and fusion-gateway, else target/debug/fusion and
# target/debug/fusion-gateway).
# Needs: bash, coreutils, cargo (unless OAUTH_SERVER_BIN), node >= 20 with npm, python3.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/tests/oauth"
OUT="$ROOT/target/oauth"
LOGS="$OUT/logs"
START=$SECONDS

step() { printf '\n==> %s\n' "$*"; }
die() { printf 'run.sh: %s\n' "$*" >&2; exit 1; }

TMP="$(mktemp -d "${TMPDIR:-/tmp}/mcp-fusion-oauth.XXXXXX")"
PIDS=()
# shellcheck source=tests/lib/processes.sh
source "$ROOT/tests/lib/processes.sh"
# shellcheck disable=SC2317,SC2329 # invoked by the EXIT trap
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "prerequisites"
tools=(node npm python3 timeout sha256sum)
[[ -n "${OAUTH_SERVER_BIN:-}" ]] || tools+=(cargo)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || die "'$tool' is not on PATH"
done
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
  die "node $(node --version) is too old for oidc-provider 9: it needs >= 20"
echo "node $(node --version), npm $(npm --version), $(python3 --version)"

step "install tests/oauth"
# Skipped when the stamp (a hash of what was installed from) still matches.
want="$(cat "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -d' ' -f1) node $(node --version)"
stamp="$HERE/node_modules/.oauth-stamp"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "tests/oauth: node_modules up to date"
else
  echo "tests/oauth: npm ci"
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
fi

if [[ -n "${OAUTH_SERVER_BIN:-}" ]]; then
  step "billing-server (OAUTH_SERVER_BIN)"
  BIN="$(cd "$ROOT" && realpath "$OAUTH_SERVER_BIN")"
  [[ -x "$BIN" ]] || die "OAUTH_SERVER_BIN=$OAUTH_SERVER_BIN is not an executable"
else
  step "build billing-server, fusion and fusion-gateway (the workspace's debug build, tests/lib/debug.sh)"
  # shellcheck source=tests/lib/debug.sh
  source "$ROOT/tests/lib/debug.sh"
  debug_build -q
  BIN="$DEBUG_DIR/billing-server"
  [[ -x "$BIN" ]] || die "cargo build left no $BIN"
fi
DEBUG_DIR="${DEBUG_DIR:-${CARGO_TARGET_DIR:-$ROOT/target}/debug}"
# `fusion lock` compares what a full-scope caller is shown with the whole server.
FUSION="${OAUTH_FUSION_BIN:-$DEBUG_DIR/fusion}"
[[ -x "$FUSION" ]] || die "no fusion binary at $FUSION: build it (cargo build -p fusion-cli) or set OAUTH_FUSION_BIN"
FUSION="$(realpath "$FUSION")"
# The gateway in front of one more billing-server: a resource server, and a client of its own.
GATEWAY="${OAUTH_GATEWAY_BIN:-$DEBUG_DIR/fusion-gateway}"
[[ -x "$GATEWAY" ]] ||
  die "no fusion-gateway binary at $GATEWAY: build it (cargo build -p mcp-fusion-gateway) or set OAUTH_GATEWAY_BIN"
GATEWAY="$(realpath "$GATEWAY")"
echo "${BIN#"$ROOT"/}, ${FUSION#"$ROOT"/}, ${GATEWAY#"$ROOT"/}"
help="$("$BIN" --help)"
for flag in --oauth-issuer --oauth-resource --oauth-introspect --oauth-client-id --oauth-scope-refusal --rate-limit; do
  [[ "$help" == *"$flag"* ]] || die "billing-server --help shows no $flag: this binary has no OAuth support"
done
echo "billing-server --help shows the --oauth-* flags"
help="$("$GATEWAY" --help)"
for flag in --oauth-issuer --oauth-resource --wait-for-upstreams token_url client_id_env client_secret_env; do
  [[ "$help" == *"$flag"* ]] || die "fusion-gateway --help shows no $flag: this binary has no OAuth support"
done
echo "fusion-gateway --help shows --oauth-issuer, --oauth-resource and the mounts' token_url"

mkdir -p "$LOGS"
rm -f "$LOGS"/*.log

# Starts provider.mjs NAME with the shared keys (more flags in "$@"); sets PROVIDER_URL.
start_provider() {
  local name="$1" log="$LOGS/$1.log" pid
  shift
  : >"$log" # listening_url reads it before the background process has opened it
  node "$HERE/provider.mjs" --keys "$TMP/keys.json" "$@" >"$log" 2>&1 </dev/null &
  pid=$!
  PIDS+=("$pid")
  PROVIDER_URL="$(listening_url "$pid" "$log" oidc-provider)"
  echo "$name: $PROVIDER_URL${*:+ ($*)} (pid $pid, log ${log#"$ROOT"/})"
}

step "OpenID providers"
start_provider provider
ISSUER="$PROVIDER_URL"
start_provider provider-wrong-issuer
WRONG_ISSUER="$PROVIDER_URL"
start_provider provider-expired --issuer "$ISSUER" --clock-offset -7200
EXPIRED_ISSUER="$PROVIDER_URL"
INTROSPECTION_ENDPOINT="$(python3 - "$ISSUER" <<'EOF'
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1] + "/.well-known/openid-configuration", timeout=20) as r:
    print(json.load(r)["introspection_endpoint"])
EOF
)"
echo "issuer $ISSUER; its introspection_endpoint is $INTROSPECTION_ENDPOINT"

# A port nothing listens on now: --oauth-resource must name it before the server starts.
free_port() {
  python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()'
}

# Starts billing-server NAME on a fresh database and a free port (more flags in "$@", more
# environment in SERVER_ENV); sets SERVER_URL.
SERVER_ENV=()
start_server() {
  local name="$1" log="$LOGS/$1.log" port url pid
  shift
  port="$(free_port)"
  url="http://127.0.0.1:$port/mcp"
  : >"$log"
  env "${SERVER_ENV[@]}" RUST_LOG="${RUST_LOG:-warn}" "$BIN" --db "$TMP/$name.db" --http "127.0.0.1:$port" \
    --oauth-issuer "$ISSUER" --oauth-resource "$url" --rate-limit 5/3600 "$@" 2>"$log" </dev/null &
  pid=$!
  PIDS+=("$pid")
  SERVER_URL="$(listening_url "$pid" "$log" billing-server)"
  [[ "$SERVER_URL" == "$url" ]] || die "$name listens on $SERVER_URL, not $url"
  echo "$name: $SERVER_URL${*:+ ($*)} (pid $pid, log ${log#"$ROOT"/})"
}

step "billing-servers"
start_server server
SERVER="$SERVER_URL"
start_server server-in-band --oauth-scope-refusal in-band
IN_BAND_SERVER="$SERVER_URL"
start_server server-rate-limit
RATE_LIMIT_SERVER="$SERVER_URL"
SERVER_ENV=(BILLING_OAUTH_CLIENT_SECRET=introspector-secret)
start_server server-introspection --oauth-introspect "$INTROSPECTION_ENDPOINT" --oauth-client-id billing-introspector
SERVER_ENV=()
INTROSPECTION_SERVER="$SERVER_URL"
# The gateway's upstream: a server of its own, so the calls made through the gateway (all by
# the one caller billing-gateway, as the server sees them) take no other check's rate budget.
start_server server-gateway-upstream
GATEWAY_UPSTREAM="$SERVER_URL"

step "fusion-gateway"
TOKEN_ENDPOINT="$(python3 - "$ISSUER" <<'EOF'
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1] + "/.well-known/openid-configuration", timeout=20) as r:
    print(json.load(r)["token_endpoint"])
EOF
)"
# The mount names the variables that hold the gateway's client credentials, never the secret.
cat >"$TMP/gateway.toml" <<EOF
[[mount]]
namespace = "billing"
url = $(toml "$GATEWAY_UPSTREAM")
token_url = $(toml "$TOKEN_ENDPOINT")
client_id_env = "BILLING_GATEWAY_CLIENT_ID"
client_secret_env = "BILLING_GATEWAY_CLIENT_SECRET"
scope = "billing:read billing:write"
EOF
port="$(free_port)"
log="$LOGS/fusion-gateway.log"
: >"$log"
# With the gateway's own log filter (unless RUST_LOG is set), which says when its upstream is
# ready and which caller each call was for. --wait-for-upstreams: the first tools/list already
# has the mount's tools, instead of calls answering HANDOFF_CONNECTING for a while.
env BILLING_GATEWAY_CLIENT_ID=billing-gateway BILLING_GATEWAY_CLIENT_SECRET=gateway-secret \
  "$GATEWAY" --config "$TMP/gateway.toml" --http "127.0.0.1:$port" --wait-for-upstreams \
  --oauth-issuer "$ISSUER" --oauth-resource "http://127.0.0.1:$port/mcp" 2>"$log" </dev/null &
pid=$!
PIDS+=("$pid")
GATEWAY_URL="$(listening_url "$pid" "$log" fusion-gateway)"
[[ "$GATEWAY_URL" == "http://127.0.0.1:$port/mcp" ]] || die "fusion-gateway listens on $GATEWAY_URL, not http://127.0.0.1:$port/mcp"
echo "fusion-gateway: $GATEWAY_URL, mounting $GATEWAY_UPSTREAM as billing (pid $pid, log ${log#"$ROOT"/})"

FAILED=()
# run NAME COMMAND...: runs one client, its output on the terminal and in its log.
run() {
  local name="$1" log="$LOGS/$1.log" code
  shift
  step "$name"
  set +e
  timeout --foreground 300 "$@" </dev/null 2>&1 | tee "$log"
  code=${PIPESTATUS[0]}
  set -e
  # A client ended by Ctrl-C (or a TERM to the group) ends the whole run; the trap cleans up.
  if ((code == 130 || code == 143)); then exit "$code"; fi
  if ((code != 0)); then
    FAILED+=("$name (exit $code)")
    if ! grep -q '^not ok - ' "$log"; then FAILED+=("  $name failed before any check; see ${log#"$ROOT"/}"); fi
    while IFS= read -r line; do FAILED+=("  $line"); done < <(grep '^not ok - ' "$log")
  fi
}

# Before oauth.mjs, whose last check rotates the provider's key: the gateway has read the JWKS
# once, at start, and would take a token of the new kid only once its own refetch interval
# (30 s) had passed since then.
run gateway node "$HERE/gateway.mjs" --issuer "$ISSUER" --gateway "$GATEWAY_URL" --upstream "$GATEWAY_UPSTREAM"
run oauth node "$HERE/oauth.mjs" --issuer "$ISSUER" --wrong-issuer "$WRONG_ISSUER" --expired-issuer "$EXPIRED_ISSUER" \
  --server "$SERVER" --in-band-server "$IN_BAND_SERVER" --rate-limit-server "$RATE_LIMIT_SERVER" \
  --introspection-server "$INTROSPECTION_SERVER"
run sdk-client node "$HERE/sdk-client.mjs" --url "$SERVER" --issuer "$ISSUER"
run lock node "$HERE/lock.mjs" --issuer "$ISSUER" --server "$SERVER" --fusion "$FUSION" --billing-server "$BIN" --dir "$TMP"

step "results"
echo "logs in ${LOGS#"$ROOT"/}/ ($((SECONDS - START)) s)"
if ((${#FAILED[@]} > 0)); then
  echo "FAILED:"
  printf '  %s\n' "${FAILED[@]}"
  exit 1
fi
echo "PASSED: every check of gateway.mjs, oauth.mjs, sdk-client.mjs and lock.mjs"
