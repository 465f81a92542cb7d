#!/usr/bin/env bash
# What a server on mcp-fusion weighs against the same server on rmcp alone: examples/tasks (the
# port) against examples/tasks-rmcp (its original), each built cold in a target directory of its
# own, one build at a time. Printed as the table of docs/benchmarks.md ("Weight"), with each
# ratio against its goal.
#
#   crates/bench/weight/run.sh            measure and print the table
#   crates/bench/weight/run.sh --check    the same, failing when a ratio is past its goal
#
# CPU is user + system time of cargo and everything it ran (rustc, linkers, build scripts), so
# a machine's other load changes it little; wall time is printed beside it. Builds run with
# cargo's default profiles (the variables that CI sets to shrink its debug builds are unset).
set -euo pipefail
cd "$(dirname "$0")/../../.."

check=false
[[ "${1:-}" == "--check" ]] && check=true
out=${WEIGHT_DIR:-target/weight}
mkdir -p "$out"
unset CARGO_PROFILE_DEV_DEBUG CARGO_PROFILE_TEST_DEBUG CARGO_PROFILE_DEV_STRIP CARGO_PROFILE_TEST_STRIP CARGO_TARGET_DIR

# cpu_of LOG COMMAND...: runs COMMAND (its output to LOG), prints "cpu_seconds wall_seconds".
cpu_of() {
    local log=$1 TIMEFORMAT='%U %S %R'
    shift
    local took
    took=$({ time "$@" >"$log" 2>&1; } 2>&1) || { cat "$log" >&2; return 1; }
    awk '{ printf "%.1f %.1f", $1 + $2, $3 }' <<<"$took"
}

# measure PACKAGE BINARY HANDLER_FILE: one line of figures.
measure() {
    local package=$1 binary=$2 handler=$3 dir="$out/$1"
    rm -rf "$dir"
    local release debug rebuild
    release=$(cpu_of "$dir.release.log" cargo build --locked --release -p "$package" --target-dir "$dir")
    local crates
    crates=$(grep -cE '^\s+Compiling ' "$dir.release.log" || true)
    local size
    size=$(stat -c %s "$dir/release/$binary")
    debug=$(cpu_of "$dir.debug.log" cargo build --locked -p "$package" --target-dir "$dir")
    # An edit of one handler: the file's content changes, so no cache can skip the crate.
    cp "$handler" "$dir.handler.bak"
    printf '\n// edited\n' >>"$handler"
    rebuild=$(cpu_of "$dir.rebuild.log" cargo build --locked -p "$package" --target-dir "$dir") || true
    cp "$dir.handler.bak" "$handler"
    echo "$package ${release% *} ${release#* } ${debug% *} ${rebuild% *} $size $crates"
}

echo "building cold, one at a time (this takes minutes) ..." >&2
original=$(measure tasks-rmcp tasks-rmcp examples/tasks-rmcp/src/main.rs)
port=$(measure tasks-server tasks-server examples/tasks/src/lib.rs)

python3 - "$original" "$port" "$check" <<'PY'
import sys
o = sys.argv[1].split()
p = sys.argv[2].split()
check = sys.argv[3] == "true"
rows = [
    # label, index, unit, goal (ratio), how to show
    ("release build, CPU", 1, "s", 2.0),
    ("release build, wall", 2, "s", None),
    ("debug build, CPU", 3, "s", None),
    ("debug rebuild after editing one handler, CPU", 4, "s", 1.5),
    ("release binary", 5, "MB", 2.5),
    ("crates compiled (release)", 6, "", None),
]
def shown(value, unit):
    value = float(value)
    if unit == "MB":
        return f"{value / 1e6:.1f} MB"
    if unit == "s":
        return f"{value:.0f} s"
    return f"{value:.0f}"
print("| | rmcp (tasks-rmcp) | mcp-fusion (tasks-server) | ratio | goal |")
print("|---|---:|---:|---:|---:|")
missed = []
for label, index, unit, goal in rows:
    ratio = float(p[index]) / float(o[index])
    goal_text = f"≤ {goal}×" if goal else ""
    if goal and ratio > goal:
        missed.append(f"{label}: {ratio:.2f}× (goal {goal}×)")
        goal_text += " (missed)"
    print(f"| {label} | {shown(o[index], unit)} | {shown(p[index], unit)} | {ratio:.2f}× | {goal_text} |")
if missed:
    print("\npast their goals: " + "; ".join(missed), file=sys.stderr)
    if check:
        sys.exit(1)
PY
