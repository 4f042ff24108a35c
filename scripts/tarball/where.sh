# Sourced by install.sh and uninstall.sh (after they set $here): reads
# their one option and says where steadyhud goes: $data, the data folder
# the layer and its manifest go under, and $bindir, the CLI's folder.
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
    exec sudo "$here/$(basename "$0")" --system
  fi
  # /usr is the distribution's; /usr/local/share is on the Vulkan loader's
  # default search path (XDG_DATA_DIRS).
  data=/usr/local/share
  bindir=/usr/local/bin
else
  case "${XDG_DATA_HOME:-}" in
    /*) data=$XDG_DATA_HOME ;;
    *) data=$HOME/.local/share ;;
  esac
  bindir=$HOME/.local/bin
fi
