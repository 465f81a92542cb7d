# shellcheck shell=bash
# The optimised build that the CI steps after the tests share: the gateway under load, the
# replicas, the hostile clients and the benchmark guard take their executables from it. One set
# of packages for all, built at once, because cargo resolves features over the packages a build
# names: another set would build the shared dependencies again with other features. It is the
# workspace's `ci` profile: `release`, but for the crates the benchmark does not run, built
# without optimisation (Cargo.toml says which and why). The benchmark's landed figures
# (crates/bench/guard.json) are measured on this build too.
#
#   source tests/lib/release.sh; release_build [--quiet]; "$RELEASE_DIR/billing-server" ...
RELEASE_PROFILE=ci
RELEASE_EXECUTABLES=(billing-server fusion-gateway fusion-load bench-raw bench-fusion bench-drive)

# Builds RELEASE_EXECUTABLES from the repository root; extra arguments go to cargo. Sets
# RELEASE_DIR to the directory of the executables.
release_build() {
  local root target
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  (cd "$root" && cargo build --profile "$RELEASE_PROFILE" --package=billing-server --package=mcp-fusion-gateway \
    --package=fusion-load --package=fusion-bench "${RELEASE_EXECUTABLES[@]/#/--bin=}" "$@") || return
  target="$(cd "$root" && cargo metadata --format-version 1 --no-deps | grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)"
  [[ -n "$target" ]] || { echo "release_build: cargo metadata names no target directory" >&2; return 1; }
  RELEASE_DIR="$target/$RELEASE_PROFILE"
}
