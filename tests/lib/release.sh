# shellcheck shell=bash
# The release build that the CI steps after the tests share: the gateway under load, the
# replicas, the hostile clients and the benchmark guard take their executables from it. One set
# of packages for all, built at once, because cargo resolves features over the packages a build
# names: another set would build the shared dependencies again with other features. The
# benchmark's landed figures (crates/bench/guard.json) are measured on this build too.
#
#   source tests/lib/release.sh; release_build [--quiet]; "$RELEASE_DIR/billing-server" ...
RELEASE_PACKAGES=(billing-server mcp-fusion-gateway fusion-load fusion-bench)

# Builds RELEASE_PACKAGES (release) from the repository root; extra arguments go to cargo.
# Sets RELEASE_DIR to the directory of the executables.
release_build() {
  local root target
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  (cd "$root" && cargo build --release "${RELEASE_PACKAGES[@]/#/--package=}" "$@") || return
  target="$(cd "$root" && cargo metadata --format-version 1 --no-deps | grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)"
  [[ -n "$target" ]] || { echo "release_build: cargo metadata names no target directory" >&2; return 1; }
  RELEASE_DIR="$target/release"
}
