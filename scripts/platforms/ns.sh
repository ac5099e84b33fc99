#!/usr/bin/env bash
# Run a command in a private user and mount namespace set up for one
# platform's suite; nothing outside the namespace changes.
#   ns.sh <platform> <command...>
# - uids and gids 0-65535 map to themselves, so the suites' second local user
#   (nobody) exists inside;
# - arm64: a private binfmt_misc (Linux >= 6.7 gives each user namespace its
#   own) registers qemu-aarch64 for aarch64 ELF files with the F flag, so the
#   emulated Node's child processes — the test runner's workers, `node -e`
#   commands — start under qemu as they would natively;
# - musl: /usr/bin/ldd is replaced by musl's (as on Alpine), so the generated
#   loader's own libc detection picks the musl binary.
set -euo pipefail
. "$(dirname "$0")/common.sh"
plat="$1"
shift

if [ "${NLC_PLATFORM_NS:-}" != "$plat" ]; then
  # Outside: start the namespace, write its id maps from here (root in the
  # parent namespace may map a range), then let it go on.
  d="$(mktemp -d)"
  trap 'rm -rf "$d"' EXIT
  mkfifo "$d/go"
  NLC_PLATFORM_NS="$plat" unshare --user --mount --propagation private -- \
    bash -c 'read -r _ <"$0" && exec "$@"' "$d/go" bash "$0" "$plat" "$@" &
  pid=$!
  until [ "$(readlink /proc/$pid/ns/user 2>/dev/null)" != "$(readlink /proc/self/ns/user)" ]; do
    kill -0 "$pid" 2>/dev/null || { wait "$pid"; exit 1; }
    sleep 0.05
  done
  echo '0 0 65536' >"/proc/$pid/uid_map"
  echo '0 0 65536' >"/proc/$pid/gid_map"
  echo go >"$d/go"
  rc=0
  wait "$pid" || rc=$?
  exit "$rc"
fi

# Inside.
case "$plat" in
  linux-arm64-*)
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    # Magic and mask of an aarch64 ELF executable or shared object (the kernel decodes the \x escapes).
    magic='\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
    mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
    echo ":nlc-qemu-aarch64:M::$magic:$mask:$QEMU_AARCH64:F" >/proc/sys/fs/binfmt_misc/register
    ;;
esac
case "$plat" in
  linux-x64-musl | linux-arm64-musl)
    arch=x86_64
    [ "$plat" = linux-arm64-musl ] && arch=aarch64
    ldd="$(mktemp)"
    printf '#!/bin/sh\n# musl ldd, as Alpine ships it\nexec /lib/ld-musl-%s.so.1 --list "$@"\n' "$arch" >"$ldd"
    chmod +x "$ldd"
    mount --bind "$ldd" /usr/bin/ldd
    ;;
esac
exec "$@"
