# The release build that the CI steps after the tests share: the gateway under load and the
# hostile clients take their binaries from it. One set of packages for both, built at once,
# because cargo resolves features over the packages a build names: another set would build the
# shared dependencies again with other features. (The benchmark guard builds fusion-bench on its
# own: its ratios were calibrated on that build, and features the gateway brings in move them.)
#
#   source tests/lib/release.sh; release_build [--quiet]
RELEASE_PACKAGES=(billing-server mcp-fusion-gateway fusion-load)

# Builds RELEASE_PACKAGES (release) from the repository root; extra arguments go to cargo.
release_build() {
  (cd "$(dirname "${BASH_SOURCE[0]}")/../.." && cargo build --release "${RELEASE_PACKAGES[@]/#/--package=}" "$@")
}
