# shellcheck shell=bash
# The debug build the test scripts take their executables from: every executable of the
# workspace, built as `cargo test --workspace` builds them — every member selected, and
# `--examples` brings in the dev-dependencies' features. One build for every script, and none
# after the tests: building `-p billing-server` alone would resolve other features for the
# crates it shares (rmcp, mcp-fusion) and build them again.
#
#   source tests/lib/debug.sh; debug_build [-q]; "$DEBUG_DIR/billing-server" ...
#
# Extra arguments go to cargo. Sets DEBUG_DIR to the directory of the executables (examples are
# in "$DEBUG_DIR/examples").
debug_build() {
  local root target
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  (cd "$root" && cargo build --workspace --bins --examples "$@") || return
  target="$(cd "$root" && cargo metadata --format-version 1 --no-deps | grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)"
  [[ -n "$target" ]] || { echo "debug_build: cargo metadata names no target directory" >&2; return 1; }
  DEBUG_DIR="$target/debug"
}
