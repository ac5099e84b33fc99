#!/usr/bin/env bash
# Run the project's suite against one platform's build, on this machine:
# the engine's cargo tests built for the target, then the node:test suites on
# that platform's Node with the loader picking that platform's binary
# (neurolink-commands.<platform>.node, built by build.sh).
#   test.sh <platform> [node test files...]
# arm64 runs under qemu-user (the cargo tests through cargo's runner, Node
# and its children through a private binfmt_misc, see ns.sh) and sets
# NLC_TEST_QEMU=1: the few assertions that cannot hold under qemu read it and
# say why next to them. musl runs natively (x64) or under qemu (arm64).
set -euo pipefail
. "$(dirname "$0")/common.sh"
plat="$1"
shift
triple="$(triple_of "$plat")"
node="$(node_of "$plat")"
cd "$REPO"

if [ "${NLC_PLATFORM_NS:-}" != "$plat" ]; then
  exec bash "$(dirname "$0")/ns.sh" "$plat" bash "$0" "$plat" "$@"
fi

case "$plat" in
  linux-arm64-*)
    export NLC_TEST_QEMU=1
    # tsc in the install check runs on the host's Node (see __test__/install.test.ts).
    NLC_TEST_HOST_NODE="$(command -v node)"
    export NLC_TEST_HOST_NODE
    # tsx's esbuild is the host's x64 binary; the arm64 Node has none of its own.
    ESBUILD_BINARY_PATH="$(ls -d "$REPO"/node_modules/.pnpm/@esbuild+linux-x64@*/node_modules/@esbuild/linux-x64/bin/esbuild | head -1)"
    export ESBUILD_BINARY_PATH
    ;;
esac
cargo_test=(cargo test -p neurolink-commands-engine --release --no-fail-fast --target "$triple")
case "$plat" in
  linux-arm64-gnu)
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="$QEMU_AARCH64 -L /usr/aarch64-linux-gnu"
    ;;
  linux-arm64-musl)
    # The test executables link statically against Rust's self-contained
    # musl, so the arm64 cross gcc links them.
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER=aarch64-linux-gnu-gcc
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_RUNNER="$QEMU_AARCH64"
    ;;
esac

test -f "neurolink-commands.$plat.node" || { echo "neurolink-commands.$plat.node is missing: run scripts/platforms/build.sh $plat" >&2; exit 1; }
"$node" -e 'const k = Object.keys(require.cache); require("./index.js"); const n = Object.keys(require.cache).filter((f) => f.endsWith(".node")); if (n.length !== 1 || !n[0].endsWith(process.argv[1])) { console.error("the loader picked", n); process.exit(1) } console.log("the loader picked", n[0], "on Node", process.version, process.arch)' "neurolink-commands.$plat.node"

if [ "$#" -eq 0 ]; then
  log "$plat: engine cargo tests (${cargo_test[*]})"
  # Optimized like the release build but without its LTO: the test binaries
  # compile in a fraction of the time.
  CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 "${cargo_test[@]}"
  set -- __test__/*.test.ts mcp/__test__/*.test.ts
fi
log "$plat: node suite on $node"
"$node" --import tsx --test --test-concurrency=2 "$@"
