#!/usr/bin/env bash
# `pnpm run test:platforms`: on a Debian 12 x86_64 machine, install what is
# needed (setup.sh), then build each extra Linux target and run the engine's
# cargo tests and the node suite against it (build.sh, test.sh); then
# lint the macOS port for both darwin targets and link both with zig
# (no Darwin kernel here: their suite runs in CI, .github/workflows/ci.yml);
# then build the Windows crate and the addon for x86_64-pc-windows-gnu and
# run their tests under wine (windows.sh).
#   run.sh [platform...]   default: linux-arm64-gnu linux-x64-musl linux-arm64-musl darwin-x64 darwin-arm64 win32-x64
# The host's own linux-x64-gnu is the main suite's (`pnpm run test:background-commands`).
set -euo pipefail
. "$(dirname "$0")/common.sh"
cd "$REPO"
platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=("${LINUX_EXTRA[@]}" "${DARWIN[@]}" "${WINDOWS[@]}")
start=$SECONDS
bash scripts/platforms/setup.sh
# Each target is compiled once: the addon and the engine's test binaries
# share one optimized profile without LTO (test.sh's cargo tests use the
# same), which compiles in a fraction of the time of the shipped builds'
# LTO. The packages CI publishes come from build.sh's default profile.
export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
times=()
for p in "${platforms[@]}"; do
  t=$SECONDS
  case "$p" in
    darwin-*)
      # The lints cover the macOS-only code too (cargo clippy type-checks it).
      log "$p: cargo clippy --target $(triple_of "$p")"
      cargo clippy --workspace --all-targets --target "$(triple_of "$p")" -- -D warnings
      bash scripts/platforms/build.sh "$p"
      # A 64-bit Mach-O image (magic 0xfeedfacf, little-endian on disk).
      magic="$(od -An -tx1 -N4 "neurolink-commands.$p.node" | tr -d ' \n')"
      [ "$magic" = cffaedfe ] || { echo "neurolink-commands.$p.node is not a 64-bit Mach-O file ($magic)" >&2; exit 1; }
      ;;
    win32-*)
      bash scripts/platforms/windows.sh
      ;;
    *)
      bash scripts/platforms/build.sh "$p"
      bash scripts/platforms/test.sh "$p"
      ;;
  esac
  times+=("$p $((SECONDS - t))s")
  log "$p: done in $((SECONDS - t))s"
done
printf '  %s\n' "${times[@]}" >&2
log "test:platforms passed (${platforms[*]}) in $((SECONDS - start))s"
