# Shared by the platform scripts (sourced, not run): where downloads are
# cached, the targets, and the tool locations setup.sh prepares.
# shellcheck shell=bash
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# Downloads and unpacked tools live outside the repository — as root (CI) in
# /opt, like any Node installed there: the suites run these Nodes as the
# second local user (nobody), who cannot enter /root, and under confinement,
# whose default read set holds /opt but not $HOME.
if [ "$(id -u)" = 0 ]; then
  CACHE="${NLC_PLATFORMS_CACHE:-/opt/neurolink-commands-platforms}"
else
  CACHE="${NLC_PLATFORMS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/neurolink-commands-platforms}"
fi
VENV="$CACHE/venv"
# qemu-user 10 from Debian 13 (setup.sh), a static binary.
QEMU_AARCH64="$CACHE/qemu/usr/bin/qemu-aarch64"

# The Linux targets this machine builds and tests, by napi-rs platform name.
LINUX_EXTRA=(linux-arm64-gnu linux-x64-musl linux-arm64-musl)
DARWIN=(darwin-x64 darwin-arm64)
# Windows x64: here the gnu (mingw-w64) build of the Windows crate and of the
# addon, tested under wine with the official node.exe (windows.sh); the
# shipped package, win32-x64-msvc, is built and tested on the workflow's
# Windows runner.
WINDOWS=(win32-x64)

triple_of() {
  case "$1" in
    linux-x64-gnu) echo x86_64-unknown-linux-gnu ;;
    linux-arm64-gnu) echo aarch64-unknown-linux-gnu ;;
    linux-x64-musl) echo x86_64-unknown-linux-musl ;;
    linux-arm64-musl) echo aarch64-unknown-linux-musl ;;
    darwin-x64) echo x86_64-apple-darwin ;;
    darwin-arm64) echo aarch64-apple-darwin ;;
    win32-x64) echo x86_64-pc-windows-gnu ;;
    win32-x64-msvc) echo x86_64-pc-windows-msvc ;;
    *) echo "unknown platform $1" >&2; return 1 ;;
  esac
}

# The Node binary that runs the suite for a platform (prepared by setup.sh).
node_of() {
  case "$1" in
    linux-x64-gnu) command -v node ;;
    win32-x64) echo "$CACHE/node/win32-x64/bin/node.exe" ;;
    *) echo "$CACHE/node/$1/bin/node" ;;
  esac
}

# zig and cargo-zigbuild from the venv, for the musl and darwin links.
use_zig() {
  export PATH="$VENV/bin:$PATH"
}

# wine 8 from Debian (its binaries live in /usr/lib/wine), with a prefix of
# our own under $CACHE (setup.sh makes it, reporting Windows 10: node.exe
# refuses the default Windows 7). No X server is needed.
use_wine() {
  export PATH="/usr/lib/wine:$PATH" WINEPREFIX="$CACHE/wine" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
}

# The arm64 gnu link from an x86_64 host (on an arm64 host cargo needs no linker setting).
[ "$(uname -m)" = x86_64 ] && export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
log() { printf '\n=== %s: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
