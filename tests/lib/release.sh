# The release build that the CI steps after the tests share: the gateway under load, the
# hostile clients and the benchmark guard each take their binaries from it. One set of packages
# for all of them, built at once, because cargo resolves features over the packages a build
# names: another set would build the shared dependencies again with other features.
#
#   source tests/lib/release.sh; release_build [--quiet]
RELEASE_PACKAGES=(billing-server mcp-fusion-gateway fusion-load fusion-bench)

# Builds RELEASE_PACKAGES (release) from the repository root; extra arguments go to cargo.
release_build() {
  (cd "$(dirname "${BASH_SOURCE[0]}")/../.." && cargo build --release "${RELEASE_PACKAGES[@]/#/--package=}" "$@")
}
