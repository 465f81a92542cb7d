#!/usr/bin/env bash
# Builds the fuzz targets and runs each for SECONDS (default 60), seeded from the repository;
# fails when any of them finds a crash (its input is kept in fuzz/artifacts/TARGET/).
#
#   fuzz/run.sh [SECONDS] [TARGET...]
#
# cargo-fuzz needs a nightly toolchain: without one this says so and succeeds, so that a
# machine with stable only still runs the rest of CI.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(wire_parse stdio_lines billing_call contract_diff auth_input openapi_import)
fi

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz: no nightly toolchain (cargo +nightly), fuzzing skipped"
  exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi
cargo +nightly fuzz --version

# Seeds: the golden vectors' envelopes for the parser, and the calls and lockfiles kept in
# fuzz/seeds. The corpus directories also keep what earlier runs found.
cargo run -q -p mcp-fusion-wire --example fuzz_seeds -- crates/wire/tests/vectors/wire-vectors.jsonl fuzz/corpus/wire_parse
for dir in fuzz/seeds/*/; do
  target=$(basename "$dir")
  mkdir -p "fuzz/corpus/$target"
  cp "$dir"* "fuzz/corpus/$target/"
done

# A development build (debug assertions on, so that an overflow is a crash as it is in the
# tests): a smoke run of seconds gains less from optimised code than CI waits for an optimised
# build of the whole dependency tree. fuzz/long.sh builds optimised for its long runs. No
# sanitizer, as there: the workspace has no unsafe code of its own, and AddressSanitizer would
# instrument every dependency.
started=$SECONDS
cargo +nightly fuzz build --dev --sanitizer none
echo "fuzz: built in $((SECONDS - started))s"

failed=()
for target in "${targets[@]}"; do
  started=$SECONDS
  mkdir -p "fuzz/corpus/$target"
  # -timeout: an input that takes this long is a hang, reported as a crash.
  if cargo +nightly fuzz run --dev --sanitizer none "$target" "fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -timeout=60 -print_final_stats=1; then
    echo "fuzz: $target: no crash in $((SECONDS - started))s"
  else
    echo "fuzz: $target: CRASH (input in fuzz/artifacts/$target/)"
    failed+=("$target")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: crashes in ${failed[*]}"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, no crash"
