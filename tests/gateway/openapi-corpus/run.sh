#!/usr/bin/env bash
# The OpenAPI corpus's second oracle, from a clean clone:
#
#   bash tests/gateway/openapi-corpus/run.sh
#
# Installs openapi-core at the versions requirements.txt pins (a venv at
# tests/gateway/openapi-corpus/.venv, skipped while its stamp matches), runs the gateway's corpus
# check (crates/gateway/tests/openapi_corpus.rs) recording every request the gateway made, and
# has openapi-core validate each against its document (validate.py). Requests:
# target/openapi-corpus/requests/. Exits 1 if the check failed or openapi-core calls a request
# invalid that validate.py does not explain.
# Needs: bash, cargo, python3 >= 3.10 with venv and pip.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
HERE="$ROOT/tests/gateway/openapi-corpus"
WORK="$ROOT/target/openapi-corpus"
START=$SECONDS

step() { printf '\n==> %s [%d s]\n' "$*" $((SECONDS - START)); }
die() { printf 'openapi-corpus/run.sh: %s\n' "$*" >&2; exit 1; }

step "prerequisites"
for tool in cargo python3 sha256sum; do
  command -v "$tool" >/dev/null || die "'$tool' is not on PATH"
done
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' || die "$(python3 --version) is too old: it needs >= 3.10"

step "install openapi-core"
VENV="$HERE/.venv"
want="$(sha256sum "$HERE/requirements.txt" | cut -d' ' -f1) $(python3 --version)"
if [[ -f "$VENV/.stamp" && "$(cat "$VENV/.stamp")" == "$want" ]]; then
  echo "tests/gateway/openapi-corpus/.venv up to date"
else
  rm -rf "$VENV"
  python3 -m venv "$VENV" || die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$HERE/requirements.txt"
  echo "$want" >"$VENV/.stamp"
fi

step "the corpus check, recording each request"
rm -rf "$WORK"
mkdir -p "$WORK"
set +e
OPENAPI_CORPUS_REQUESTS="$WORK/requests" OPENAPI_CORPUS_REPORT="$WORK/figures.md" \
  cargo test -q -p mcp-fusion-gateway --test openapi_corpus
checked=$?
set -e

step "openapi-core on each request"
set +e
"$VENV/bin/python" "$HERE/validate.py" "$WORK/requests"
validated=$?
set -e
echo "done in $((SECONDS - START)) s"
((checked == 0 && validated == 0)) || exit 1
