#!/usr/bin/env bash
# Build the addon for one platform (napi-rs name, e.g. linux-arm64-musl) into
# the repository root as neurolink-commands.<platform>.node, the name the
# generated loader and the npm/<platform> package expect.
#   the host's own platform   plain cargo (CI's native macOS, Linux and Windows runners)
#   linux-arm64-gnu           Debian's aarch64 cross gcc as the linker
#   *-musl, darwin-*          zig as the linker (napi build -x runs cargo-zigbuild)
# The JS loader and declarations are not regenerated here: `pnpm run build`
# owns binding.js and binding.d.ts.
set -euo pipefail
. "$(dirname "$0")/common.sh"
plat="$1"
triple="$(triple_of "$plat")"
cd "$REPO"
# The declarations it writes are thrown away: binding.d.ts is pnpm run build's.
args=(--platform --release --target "$triple" --no-js --dts "target/platform-$plat.d.ts")
native=no
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) [ "$plat" = linux-x64-gnu ] && native=yes ;;
  Linux-aarch64) [ "$plat" = linux-arm64-gnu ] && native=yes ;;
  Darwin-x86_64) [ "$plat" = darwin-x64 ] && native=yes ;;
  Darwin-arm64) [ "$plat" = darwin-arm64 ] && native=yes ;;
  # Git Bash on the workflow's Windows runner: cargo's host target is MSVC.
  MINGW*-x86_64 | MSYS*-x86_64) [ "$plat" = win32-x64-msvc ] && native=yes ;;
esac
# On Alpine the host triple is musl's: plain cargo, linked dynamically against musl.
[ -f /etc/alpine-release ] && [ "$plat" = "linux-$( [ "$(uname -m)" = aarch64 ] && echo arm64 || echo x64)-musl" ] && native=yes
case "$native-$plat" in
  yes-*) ;;
  no-linux-x64-gnu | no-linux-arm64-gnu) ;;
  no-*-musl) use_zig; args+=(-x) ;;
  no-darwin-*)
    use_zig
    args+=(-x)
    # The oldest macOS the binary runs on (zig needs it to pick the SDK stubs).
    export MACOSX_DEPLOYMENT_TARGET="${MACOSX_DEPLOYMENT_TARGET:-11.0}"
    ;;
esac
log "napi build ${args[*]}"
npx napi build "${args[@]}"
test -f "neurolink-commands.$plat.node"
