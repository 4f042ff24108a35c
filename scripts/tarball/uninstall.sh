#!/bin/sh
# Removes what ./install.sh installed:
#   ./uninstall.sh            yours (~/.local/share, ~/.local/bin)
#   ./uninstall.sh --system   everyone's, under /usr/local (sudo when not root)
set -eu
here=$(cd "$(dirname "$0")" && pwd)

. "$here/where.sh"

XDG_DATA_HOME=$data "$here/bin/steadyhud" uninstall
if [ -e "$bindir/steadyhud" ]; then
  rm -f "$bindir/steadyhud"
  echo "removed $bindir/steadyhud"
fi
