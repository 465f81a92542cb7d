#!/usr/bin/env bash
# Builds the fuzz targets and runs each for SECONDS (default 60), seeded from the repository;
# fails when any of them finds a crash (its input is kept in fuzz/artifacts/TARGET/).
#
#   fuzz/run.sh [SECONDS] [TARGET...]
#   fuzz/run.sh --build-only     # the build alone (CI makes it beside other steps)
#
# The targets are libFuzzer programs (libfuzzer-sys). This builds them with cargo and the
# toolchain the rest of the workspace uses, passing rustc the coverage instrumentation libFuzzer
# reads (SanitizerCoverage: inline 8-bit counters, the PC table, compares traced, stack depth —
# what `cargo fuzz build --sanitizer none` passes, all of it stable rustc), and runs the
# executables directly. Neither a nightly toolchain nor cargo-fuzz is needed: installing
# cargo-fuzz was a build of its own on every clean machine. fuzz/long.sh keeps `cargo +nightly
# fuzz` for long optimised runs.
#
# Two targets run at once: each gets the same SECONDS of fuzzing, and a 2-core machine is busy
# for half the time.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_only=0
if [[ "${1:-}" == --build-only ]]; then
  build_only=1
  shift
fi
seconds=${1:-60}
shift || true
targets=("$@")
all=(wire_parse stdio_lines billing_call contract_diff auth_input openapi_import)
if [ ${#targets[@]} -eq 0 ]; then
  targets=("${all[@]}")
fi
for target in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $target "* ]] || { echo "fuzz: no target '$target'; targets: ${all[*]}"; exit 2; }
done
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: SECONDS must be a whole number of seconds, found '$seconds'"; exit 2; }

# A development build (debug assertions and overflow checks on, so that an overflow is a crash
# as it is in the tests): a smoke run of seconds gains less from optimised code than CI waits
# for an optimised build of the whole dependency tree. No sanitizer: the workspace has no unsafe
# code of its own, and AddressSanitizer would instrument every dependency. `--target` keeps the
# instrumentation off build scripts and proc macros, which run on the host.
host=$(rustc -vV | sed -n 's/^host: //p')
flags=(
  -Cpasses=sancov-module
  -Cllvm-args=-sanitizer-coverage-level=4
  -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
  -Cllvm-args=-sanitizer-coverage-pc-table
  -Cllvm-args=-sanitizer-coverage-trace-compares
  --cfg fuzzing
  -Cdebug-assertions
  -Coverflow-checks
)
[[ "$host" == *-linux-* ]] && flags+=(-Cllvm-args=-sanitizer-coverage-stack-depth)
started=$SECONDS
RUSTFLAGS="${flags[*]}" cargo build --manifest-path fuzz/Cargo.toml --locked --target "$host" --bins
echo "fuzz: built in $((SECONDS - started))s ($(rustc --version))"
bin="fuzz/target/$host/debug"
((build_only == 0)) || exit 0

# Seeds: the golden vectors' envelopes for the parser, and the calls and lockfiles kept in
# fuzz/seeds. The corpus directories also keep what earlier runs found. The seed writer is an
# example of the wire crate, taken from the workspace's debug build (tests/lib/debug.sh).
# shellcheck source=tests/lib/debug.sh
source tests/lib/debug.sh
debug_build -q
"$DEBUG_DIR/examples/fuzz_seeds" crates/wire/tests/vectors/wire-vectors.jsonl fuzz/corpus/wire_parse
for dir in fuzz/seeds/*/; do
  target=$(basename "$dir")
  mkdir -p "fuzz/corpus/$target"
  cp "$dir"* "fuzz/corpus/$target/"
done

# Runs one target; its output goes to fuzz/logs/TARGET.log and its verdict to stdout.
run_one() {
  local target=$1 started=$SECONDS
  mkdir -p "fuzz/corpus/$target" "fuzz/artifacts/$target" fuzz/logs
  # -timeout: an input that takes this long is a hang, reported as a crash.
  if "$bin/$target" "fuzz/corpus/$target" -artifact_prefix="fuzz/artifacts/$target/" \
    -max_total_time="$seconds" -timeout=60 -print_final_stats=1 >"fuzz/logs/$target.log" 2>&1; then
    echo "fuzz: $target: no crash in $((SECONDS - started))s ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "fuzz/logs/$target.log" | grep -o '[0-9]*$') inputs)"
  else
    tail -40 "fuzz/logs/$target.log"
    echo "fuzz: $target: CRASH (input in fuzz/artifacts/$target/)"
    return 1
  fi
}

failed=()
for ((i = 0; i < ${#targets[@]}; i += 2)); do
  pair=("${targets[@]:i:2}")
  pids=()
  for target in "${pair[@]}"; do
    run_one "$target" &
    pids+=($!)
  done
  for j in "${!pids[@]}"; do
    wait "${pids[$j]}" || failed+=("${pair[$j]}")
  done
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: crashes in ${failed[*]}"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, no crash"
