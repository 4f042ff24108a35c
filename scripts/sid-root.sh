#!/usr/bin/env bash
# The Proton-like test bed: a Debian sid root (debootstrap minbase) with
# Wine 10, DXVK (Debian's winelib builds for that Wine), mingw-w64, Mesa's
# Vulkan drivers (lavapipe), the validation layers and Xvfb, and a Wine
# prefix with DXVK installed. Debian 12 has Wine 8 and no DXVK; sid has
# what Proton players run (../shared/TESTBED.md, "Wine, DXVK, vkd3d").
#
#   scripts/sid-root.sh [DIR]    # prints DIR when it is ready
#
# DIR defaults to $STEADYHUD_SID_ROOT, else /var/cache/steadyhud/sid-root
# (outside the checkout: a fresh clone on the same machine reuses it).
# A root that finished (its stamp file names this script's version) is
# reused as it is; a half-made one is removed and made again. Runs as root
# (debootstrap, chroot); its mounts live in a private mount namespace, so
# nothing stays mounted when it ends, however it ends.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh

# Bump when the root's contents change: an older root is made again.
VERSION=1
ROOT=${1:-${STEADYHUD_SID_ROOT:-/var/cache/steadyhud/sid-root}}
STAMP=$ROOT/.steadyhud-sid-root
# What the tests run in it: the Proton path (Wine, DXVK and Wine's own
# vkd3d for Direct3D 12), the Windows compiler for the test programs, the
# Vulkan driver and loader (and its headers, for the Vulkan test program),
# validation, an X server and the screenshot tool.
PACKAGES=(wine wine64 dxvk dxvk-wine64 gcc-mingw-w64-x86-64-win32 mesa-vulkan-drivers
  libvulkan1 libvulkan-dev vulkan-validationlayers xvfb x11-utils xauth procps)

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$VERSION" ]; then
  echo "$ROOT"
  exit 0
fi
[ "$(id -u)" = 0 ] || { echo "sid-root.sh: run it as root (debootstrap, chroot)" >&2; exit 1; }
need_packages sid-root.sh debootstrap util-linux

# The mirror this machine's own apt uses (the first URIs: line).
mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
[ -n "$mirror" ] || mirror=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null)
mirror=${mirror:-http://deb.debian.org/debian}

rm -rf "$ROOT"
mkdir -p "$(dirname "$ROOT")"
# Made in DIR.making, with a stamp after each stage, so an interrupted run
# goes on from its last finished stage; moved to DIR when whole.
tmp="$ROOT.making"
if [ ! -f "$tmp/.stage-debootstrap" ]; then
  rm -rf "$tmp"
  echo "sid-root.sh: making a Debian sid root in $ROOT from $mirror (debootstrap, ~1 min)" >&2
  start=$SECONDS
  debootstrap --variant=minbase sid "$tmp" "$mirror" >"$tmp.log" 2>&1 || {
    tail -n 20 "$tmp.log" >&2; echo "sid-root.sh: debootstrap failed (above; whole log: $tmp.log)" >&2; exit 1; }
  # The mirror is a frozen snapshot: its Release files are past their date.
  echo 'Acquire::Check-Valid-Until "false";' >"$tmp/etc/apt/apt.conf.d/99steadyhud-snapshot"
  touch "$tmp/.stage-debootstrap"
  echo "sid-root.sh: debootstrap took $((SECONDS - start)) s" >&2
fi

# inside CMD...: runs CMD in the root with /proc, /dev, /sys and /tmp, in a
# mount namespace of its own.
inside() {
  unshare -m --propagation private sh -ec '
    r=$1; shift
    mount -t proc proc "$r/proc"; mount --rbind /dev "$r/dev"; mount --rbind /sys "$r/sys"
    mount --bind /tmp "$r/tmp"
    exec chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"' inside "$tmp" "$@"
}
if [ ! -f "$tmp/.stage-packages" ]; then
  echo "sid-root.sh: installing Wine, DXVK, mingw-w64, Mesa (~3 min)" >&2
  start=$SECONDS
  inside sh -ec "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${PACKAGES[*]}" \
    >>"$tmp.log" 2>&1 || {
    tail -n 20 "$tmp.log" >&2; echo "sid-root.sh: installing in the root failed (above; whole log: $tmp.log)" >&2; exit 1; }
  inside apt-get clean
  touch "$tmp/.stage-packages"
  echo "sid-root.sh: the packages took $((SECONDS - start)) s" >&2
fi

# The Wine prefix, with DXVK's DLLs installed as overrides, made once under
# a private X server (wineboot wants a display).
start=$SECONDS
inside sh -ec '
  export WINEPREFIX=/opt/prefix WINEDEBUG=-all XDG_RUNTIME_DIR=/run/wine-xdg
  mkdir -p -m 0700 $XDG_RUNTIME_DIR
  Xvfb :97 -nolisten tcp >/dev/null 2>&1 & x=$!
  export DISPLAY=:97
  sleep 1
  rm -rf $WINEPREFIX
  wine wineboot -i
  /usr/lib/x86_64-linux-gnu/wine/wineserver -w
  dxvk-setup install -s -y
  /usr/lib/x86_64-linux-gnu/wine/wineserver -w
  kill $x' >>"$tmp.log" 2>&1 || {
  tail -n 20 "$tmp.log" >&2; echo "sid-root.sh: making the Wine prefix failed (above; whole log: $tmp.log)" >&2; exit 1; }
echo "sid-root.sh: the Wine prefix with DXVK took $((SECONDS - start)) s" >&2

rm -f "$tmp"/.stage-*
echo "$VERSION" >"$tmp/.steadyhud-sid-root"
mv "$tmp.log" "$tmp/var/log/steadyhud-sid-root.log"
mv "$tmp" "$ROOT"
echo "$ROOT"
