#!/bin/sh
# Removes what ./install.sh installed:
#   ./uninstall.sh            yours (~/.local/share, ~/.local/bin)
#   ./uninstall.sh --system   everyone's, under /usr/local (sudo when not root)
set -eu
here=$(cd "$(dirname "$0")" && pwd)

usage() { echo "usage: $0 [--system]"; }
system=0
case "${1:-}" in
  "") ;;
  --system) system=1 ;;
  -h | --help) usage; exit 0 ;;
  *) usage >&2; exit 2 ;;
esac

if [ $system = 1 ]; then
  if [ "$(id -u)" != 0 ]; then
    exec sudo "$here/uninstall.sh" --system
  fi
  data=/usr/local/share
  bindir=/usr/local/bin
else
  case "${XDG_DATA_HOME:-}" in
    /*) data=$XDG_DATA_HOME ;;
    *) data=$HOME/.local/share ;;
  esac
  bindir=$HOME/.local/bin
fi

XDG_DATA_HOME=$data "$here/bin/steadyhud" uninstall
if [ -e "$bindir/steadyhud" ]; then
  rm -f "$bindir/steadyhud"
  echo "removed $bindir/steadyhud"
fi
