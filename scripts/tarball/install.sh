#!/bin/sh
# Installs steadyhud from this release tarball, for distributions without
# the .deb packages:
#   ./install.sh            for you only: the layer under $XDG_DATA_HOME
#                           (~/.local/share), the CLI in ~/.local/bin
#   ./install.sh --system   for everyone, under /usr/local (through sudo
#                           when not root)
# The CLI's own `steadyhud install` does the work: it copies the 64-bit and
# the 32-bit layer to <data dir>/steadyhud/ in the folders the dynamic
# loader calls $LIB and writes one implicit-layer manifest naming
# <data dir>/steadyhud/$LIB/libsteadyhud.so, so 32-bit games get the 32-bit
# library; the GL libraries (OpenGL games) go beside them. Then:
# STEADYHUD=1 %command% (Steam), STEADYHUD=1 vkcube, or for OpenGL games
# too: steadyhud run -- %command%.
# ./uninstall.sh (with the same option) takes it all away again.
set -eu
here=$(cd "$(dirname "$0")" && pwd)

. "$here/where.sh"

XDG_DATA_HOME=$data "$here/bin/steadyhud" install \
  --lib "$here/lib64/libsteadyhud.so" --lib32 "$here/lib32/libsteadyhud.so"
mkdir -p "$bindir"
# A temporary name, then a rename: a running steadyhud keeps its file.
cp "$here/bin/steadyhud" "$bindir/.steadyhud.new"
chmod 755 "$bindir/.steadyhud.new"
mv -f "$bindir/.steadyhud.new" "$bindir/steadyhud"
echo "installed $bindir/steadyhud ($("$bindir/steadyhud" --version))"
case ":$PATH:" in
  *":$bindir:"*) ;;
  *) echo "note: $bindir is not on your PATH" ;;
esac
