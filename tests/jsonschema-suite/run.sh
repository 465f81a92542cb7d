#!/usr/bin/env bash
# The official JSON-Schema-Test-Suite (draft 2020-12) through fusion-gateway, one call per test:
#
#   bash tests/jsonschema-suite/run.sh                        # builds the gateway, writes the doc
#   bash tests/jsonschema-suite/run.sh --gateway PATH         # that gateway (or FUSION_GATEWAY=PATH)
#   bash tests/jsonschema-suite/run.sh --only type,ref        # a subset; the doc is left alone
#   bash tests/jsonschema-suite/run.sh --report-only --no-doc # everything printed, exit 0
#
# Installs the Python MCP SDK at the versions requirements.txt pins (a venv at
# tests/jsonschema-suite/.venv, skipped while its stamp matches), runs the unit tests of
# rules.py, builds fusion-gateway unless one is given, and runs run.py (its other options are
# passed on): it exits 1 when a valid instance is refused other than by a documented policy, an
# invalid one is forwarded, more than 2% of the refusals say nothing specific, or a line names
# a path or a value that was not sent. A whole run writes its figures into docs/validation.md;
# every refusal goes to target/jsonschema-suite/refusals.jsonl, the gateway's log beside it.
# Whatever run.py started is stopped on the way out, however the script ends.
# Needs: bash, coreutils, ps, awk, python3 >= 3.10 with venv and pip; cargo unless --gateway.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENV="$HERE/.venv"
# run.py itself gives up after 100 s; this only catches a hang outside its limits.
TIME_LIMIT_S=300
START=$SECONDS

step() { printf '\n==> %s [%d s]\n' "$*" $((SECONDS - START)); }
die() { printf 'jsonschema-suite/run.sh: %s\n' "$*" >&2; exit 1; }

# shellcheck source=tests/lib/processes.sh
source "$ROOT/tests/lib/processes.sh"
TMP="$(mktemp -d -t fusion-jsonschema.XXXXXX)"
RUN_PID=""
# run.py closes its sessions when it ends or gets SIGTERM, which stops the gateway and the
# upstream; a gateway still running after it (its config is under TMP) is stopped too.
# shellcheck disable=SC2317,SC2329 # invoked by the EXIT trap
cleanup() {
  if [[ -n "$RUN_PID" ]]; then stop_pid "$RUN_PID"; fi
  stop_mentioning "$TMP"
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

GATEWAY="${FUSION_GATEWAY:-}"
passed=()
while (($#)); do
  case "$1" in
    --gateway) (($# >= 2)) || die "--gateway needs a path"; GATEWAY="$2"; shift 2 ;;
    --gateway=*) GATEWAY="${1#--gateway=}"; shift ;;
    *) passed+=("$1"); shift ;;
  esac
done

step "prerequisites"
for tool in python3 sha256sum timeout ps awk; do
  command -v "$tool" >/dev/null || die "'$tool' is not on PATH"
done
[[ -n "$GATEWAY" ]] || command -v cargo >/dev/null || die "'cargo' is not on PATH (or give --gateway PATH)"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' || die "$(python3 --version) is too old: mcp needs >= 3.10"

step "install the Python MCP SDK"
want="$(sha256sum "$HERE/requirements.txt" | cut -d' ' -f1) $(python3 --version)"
if [[ -f "$VENV/.stamp" && "$(cat "$VENV/.stamp")" == "$want" ]]; then
  echo "tests/jsonschema-suite/.venv up to date"
else
  rm -rf "$VENV"
  python3 -m venv "$VENV" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$HERE/requirements.txt" ||
    die "pip install -r tests/jsonschema-suite/requirements.txt failed"
  echo "$want" >"$VENV/.stamp"
fi
"$VENV/bin/python" -c 'from importlib.metadata import version; print("mcp", version("mcp"))'

step "unit tests of the rules"
"$VENV/bin/python" -m unittest discover -s "$HERE" -p 'test_*.py'

if [[ -z "$GATEWAY" ]]; then
  step "build fusion-gateway (the workspace's debug build, tests/lib/debug.sh)"
  # shellcheck source=tests/lib/debug.sh
  source "$ROOT/tests/lib/debug.sh"
  debug_build -q
  GATEWAY="$DEBUG_DIR/fusion-gateway"
fi
[[ -x "$GATEWAY" ]] || die "no fusion-gateway at $GATEWAY"

step "the suite through fusion-gateway"
set +e
TMPDIR="$TMP" timeout "$TIME_LIMIT_S" "$VENV/bin/python" "$HERE/run.py" --gateway "$GATEWAY" \
  ${passed[@]+"${passed[@]}"} </dev/null &
RUN_PID=$!
wait "$RUN_PID"
code=$?
RUN_PID=""
set -e
((code != 124)) || echo "run.py did not end within $TIME_LIMIT_S s"
echo "done in $((SECONDS - START)) s"
exit "$code"
