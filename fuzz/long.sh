#!/usr/bin/env bash
# Long runs: each TARGET until it has executed RUNS inputs (default 10^7), from the corpus
# that fuzz/run.sh keeps, then one summary line per target (executions, time, corpus,
# coverage). A crash stops that target and fails the script; its input is in
# fuzz/artifacts/TARGET/.
#
#   fuzz/long.sh [RUNS] [TARGET...]
#
# Optimised, without a sanitizer, with debug assertions: the workspace has no unsafe code of its
# own, so AddressSanitizer would slow each run 2-4x to watch for errors safe code cannot make.
# (The short runs of fuzz/run.sh use a development build, quicker to make than to run.) Logs go
# to fuzz/logs/TARGET.log.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

runs=${1:-10000000}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(wire_parse stdio_lines billing_call contract_diff auth_input openapi_import)
fi
mkdir -p logs

failed=()
for target in "${targets[@]}"; do
  mkdir -p "corpus/$target"
  started=$SECONDS
  if ! cargo +nightly fuzz run --sanitizer none --debug-assertions "$target" "corpus/$target" -- \
    -runs="$runs" -timeout=60 -print_final_stats=1 >"logs/$target.log" 2>&1; then
    failed+=("$target")
  fi
  took=$((SECONDS - started))
  done_line=$(grep -E '#[0-9]+[[:space:]]+DONE' "logs/$target.log" | tail -1 || true)
  executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "logs/$target.log" | tail -1)
  files=$(find "corpus/$target" -type f | wc -l)
  # libFuzzer's corpus is the inputs that still add coverage; the directory also keeps the
  # ones later inputs replaced.
  corpus=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\) .*/\1/p' <<<"$done_line")
  cov=$(sed -n 's/.* cov: \([0-9]*\) ft: \([0-9]*\) .*/\1 edges, \2 features/p' <<<"$done_line")
  echo "fuzz: $target: ${executed:-?} executions in ${took}s (${executed:+$((executed / (took > 0 ? took : 1)))}/s); corpus ${corpus:-?} (inputs/size; $files files kept); coverage ${cov:-?}"
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: crashes in ${failed[*]} (see fuzz/logs/ and fuzz/artifacts/)"
  exit 1
fi
