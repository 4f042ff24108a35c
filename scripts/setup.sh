# Sourced by the README's two commands (scripts/demo.sh, scripts/test.sh):
# what each needs from Debian, and the one routine that installs what a
# machine lacks. A fresh Debian 12 (or Ubuntu) machine with only a Rust
# toolchain is the starting point: it lacks even the C compiler Rust links
# with, and the CA certificates cargo fetches crates with.
#
#   . scripts/setup.sh
#   need_packages NAME PACKAGE...   # NAME prefixes the messages
#
# need_packages prints the packages it installs, installs them with apt-get
# (non-interactive) as root, or through sudo when that is available, and
# stops the caller with one line when it can do neither.

# Building steadyhud: the linker and the C++ compiler (imgui), certificates
# for crates.io, and what the build scripts of the -sys crates run.
SETUP_BUILD=(ca-certificates gcc g++ libc6-dev make pkg-config git)

# Running a Vulkan app with the HUD where there is no GPU and no display:
# Mesa's lavapipe, the loader, vkcube, Xvfb, and the screenshot tools.
SETUP_DEMO=(mesa-vulkan-drivers libvulkan1 vulkan-tools xvfb xdotool imagemagick x11-utils libxi6)

# The whole test suite on top of the demo's: the loader's headers and the
# validation layer, the shader compiler, Chromium for the report's layout
# tests with the two font setups they run under (DejaVu only, Noto), the
# real apps (mpv, vkd3d-gears, MangoHud for side-by-side runs), the Wayland
# beds (sway, wtype, grim; Weston, which answers presentation feedback), the packaging tools, Python's venv (DuckDB),
# Prometheus (a real server and promtool for `steadyhud export`),
# debootstrap for the Proton test bed (scripts/sid-root.sh), the X11, EGL,
# GL and GLES headers of tests/exits/forced_exit.c and tests/gl/*.c,
# RetroArch and dbus-run-session (a real GL menu, tests/gl_games.rs),
# SuperTuxKart (a real GL game there; its data is ~630 MB, ~35 s here),
# libxcb and libxcb-present (X11 Present's observer loads them at run time;
# crates/x11present/tests/xvfb_present.rs), strace (the present's system
# calls counted: tests/present_syscalls.rs).
SETUP_TEST=(libvulkan-dev vulkan-validationlayers glslc chromium fonts-dejavu-core
  fonts-noto-core util-linux mpv vkd3d-demos mangohud sway wtype grim weston dpkg-dev
  python3-venv valgrind mesa-utils warzone2100 prometheus debootstrap libx11-dev libegl-dev
  libgles-dev libgl-dev retroarch dbus supertuxkart libxcb1 libxcb-present0 strace)

# Whether a Debian package is installed.
setup_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

# need_packages NAME PACKAGE...: installs the PACKAGEs that are missing.
need_packages() {
  local name=$1 p sudo=()
  shift
  local missing=()
  command -v dpkg-query >/dev/null || {
    echo "$name: this is not a Debian or Ubuntu system (no dpkg-query): install the equivalents of: $*" >&2
    exit 1
  }
  for p in "$@"; do setup_installed "$p" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
      sudo=(sudo -n)
    elif command -v sudo >/dev/null && [ -t 0 ]; then
      echo "$name: sudo asks for your password to install: ${missing[*]}"
      sudo=(sudo)
    else
      echo "$name: missing Debian packages: ${missing[*]}; run this as root, or where sudo works, or install them yourself" >&2
      exit 1
    fi
  fi
  echo "$name: installing: ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq ||
    echo "$name: apt-get update reported errors; trying the install anyway"
  if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
    echo "$name: apt-get could not install: ${missing[*]}" >&2
    exit 1
  fi
}

# need_rust NAME: cargo, with rustfmt and clippy when COMPONENTS=lint.
need_rust() {
  local name=$1
  command -v cargo >/dev/null || {
    echo "$name: no cargo on PATH: install a Rust toolchain first (https://rustup.rs), then run this again" >&2
    exit 1
  }
  if [ "${2:-}" = lint ]; then
    for c in rustfmt clippy; do
      # rustfmt is `cargo fmt`, clippy `cargo clippy`.
      if ! cargo "${c/rustfmt/fmt}" --version >/dev/null 2>&1; then
        if command -v rustup >/dev/null; then
          echo "$name: installing the Rust component $c"
          rustup component add "$c"
        else
          echo "$name: cargo $c is missing and there is no rustup to add it" >&2
          exit 1
        fi
      fi
    done
  fi
}
