#!/usr/bin/env bash
# The 32-bit (i686) layer and GL libraries, for 32-bit games: installs what
# a Debian bookworm machine lacks, then builds the layer and GL crates for
# i686-unknown-linux-gnu and leaves the stripped libraries at
#   target/i686/i686-unknown-linux-gnu/release/libsteadyhud.so
#   target/i686/i686-unknown-linux-gnu/release/libsteadyhud_gl.so
# (printed at the end, with their sizes).
#
# For the 32-bit test run (STEADYHUD_TEST_ARCH=i686, tests/common/builds.rs)
# it also builds the test apps next to them
#   target/i686/i686-unknown-linux-gnu/release/steadyhud-testapp
#   target/i686/i686-unknown-linux-gnu/release/steadyhud-gltest
# installs the 32-bit Vulkan loader, lavapipe and validation layer, and
# unpacks the 32-bit vkcube and vkd3d-gears into target/i686/vt32/.
#
# Why Debian's compiler: the rustup toolchain has no i686 standard library
# and none can be fetched here; Debian ships one (libstd-rust-web-dev:i386)
# for its own compiler, rustc-web/cargo-web 1.85 (/usr/bin/rustc,
# /usr/bin/cargo). So this build is also the workspace's check that the layer
# and the crates it uses still compile with Rust 1.85.
#
# With --frame-pointers (after a plain build) it builds only the GL
# library's own crate again with -Cforce-frame-pointers=yes (as some
# distributions build Rust code; `cargo rustc` gives the flag to that crate
# alone, so its dependencies are reused, not rebuilt: the entry is in it),
# leaves it in target/i686-fp and the plain one where it was, and checks
# that its exported dlsym starts with our entry's first instruction, not a
# compiler prologue; scripts/test.sh then runs the 32-bit GL tests that go
# through dlsym with it (STEADYHUD_TEST_GL_LIBRARY).
#
# usage: scripts/build-i686.sh [--frame-pointers]   (as root: apt-get, dpkg)
set -euo pipefail
frame_pointers=0
case ${1:-} in
  --frame-pointers) frame_pointers=1 ;;
  "") ;;
  *) echo "usage: scripts/build-i686.sh [--frame-pointers]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
root=$(pwd)
if [ "$(id -u)" != 0 ]; then
  echo "build-i686.sh: run it as root (dpkg --add-architecture, apt-get)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive

# --- 1. packages -------------------------------------------------------------
native=$(dpkg --print-architecture)
installed_version() { # name[:arch] -> its version, or nothing when not installed
  # Without an arch, dpkg-query lists every installed architecture of a
  # name (libexpat1 and libexpat1:i386): keep the one asked for (the
  # native one when none is given; "all" for arch-independent packages).
  local name=${1%%:*} arch=$native
  case $1 in *:*) arch=${1#*:} ;; esac
  { dpkg-query -W -f='${Status} ${Version} ${Architecture}\n' "$name" 2>/dev/null || true; } |
    awk -v a="$arch" '$1 == "install" && $3 == "installed" && ($5 == a || $5 == "all") { print $4 }'
}

# Multi-arch "same" packages must have the same version in both
# architectures. The i386 indexes of bookworm-security cannot be fetched
# here while the amd64 ones can, and the security suite has newer amd64
# versions (rustc-web 1.96, liblzma5 +deb12u2, libexpat1 +deb12u5): left
# alone, apt picks those for amd64 and then finds no i386 twin. So every
# package that needs an i386 twin is pinned to the bookworm (main suite)
# version, which both architectures can get (checked with `apt-cache policy
# NAME NAME:i386` on the CI machine; the script stops with that hint when a
# pin is no longer available).
rust_v=1.85.0+dfsg3-1~deb12u3
lzma_v=5.4.1-1+deb12u1
expat_v=2.5.0-1+deb12u2
pinned=(
  "rustc-web=$rust_v" "cargo-web=$rust_v"
  "libstd-rust-web-dev=$rust_v" "libstd-rust-web-dev:i386=$rust_v"
  "liblzma5=$lzma_v" "liblzma5:i386=$lzma_v"     # for libxml2:i386 (LLVM)
  "libexpat1=$expat_v" "libexpat1:i386=$expat_v" # for libllvm*:i386, mesa
)
# A -dev package is tied to its library's exact version: if it is installed,
# moving the library makes apt remove it (and, with liblzma-dev and
# libexpat1-dev, python3-dev, tk-dev, libfontconfig-dev, ... with them).
# Pin it along instead.
for dev in "liblzma-dev=$lzma_v" "libexpat1-dev=$expat_v"; do
  if [ -n "$(installed_version "${dev%%=*}")" ]; then
    pinned+=("$dev")
  fi
done
# gcc/g++-multilib: the C/C++ compiler for -m32 (imgui-sys is C++) and the
# 32-bit libc/libstdc++ to link with. The rest is not needed to build, only
# to run 32-bit Vulkan programs with the layer (the tests in i686 mode):
# libvulkan1:i386 and mesa-vulkan-drivers:i386 (the 32-bit loader and
# lavapipe), vulkan-validationlayers:i386 (the tests enable validation; it
# is Multi-Arch: same, beside the amd64 one, from the one bookworm version
# both architectures have), libxkbcommon0:i386 and libxcb1:i386 (the layer
# dlopens them for the Wayland hotkey and its X11 connection), and
# the libraries of the 32-bit vkcube (vulkan-tools:i386) and vkd3d-gears
# (vkd3d-demos:i386), whose packages cannot be installed beside the amd64
# ones (same /usr/bin paths) and are unpacked in step 4; 32-bit OpenGL
# (GLVND, Mesa's llvmpipe) and mesa-utils-bin:i386, whose programs sit
# beside the amd64 ones (glxgears.i386-linux-gnu, …), for the GL library's
# tests.
unpinned=(gcc-multilib g++-multilib libvulkan1:i386 mesa-vulkan-drivers:i386
  vulkan-validationlayers:i386 libxkbcommon0:i386
  libx11-6:i386 libxcb1:i386 libwayland-client0:i386                 # vkcube
  libvkd3d1:i386 libvkd3d-utils1:i386 libxcb-keysyms1:i386           # vkd3d-gears
  libgl1:i386 libglx-mesa0:i386 libgl1-mesa-dri:i386 libegl1:i386     # OpenGL
  libegl-mesa0:i386 libgles2:i386 libwayland-egl1:i386 mesa-utils-bin:i386)

added_arch=0
# (Lists are read whole, not piped into grep -q: under pipefail an early
# grep exit can fail the writer with SIGPIPE.)
if ! grep -qx i386 <<<"$(dpkg --print-foreign-architectures)"; then
  echo "build-i686.sh: dpkg --add-architecture i386"
  dpkg --add-architecture i386
  added_arch=1
fi

missing=()
downgrade=0
for spec in "${pinned[@]}"; do
  pkg=${spec%%=*} want=${spec#*=}
  have=$(installed_version "$pkg")
  [ "$have" = "$want" ] && continue
  missing+=("$spec")
  if [ -n "$have" ] && dpkg --compare-versions "$have" gt "$want"; then
    downgrade=1
  fi
done
for pkg in "${unpinned[@]}"; do
  [ -n "$(installed_version "$pkg")" ] || missing+=("$pkg")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "build-i686.sh: installing: ${missing[*]}"
  # The i386 indexes of bookworm-security fail to download (see above): apt
  # reports it and exits non-zero, but the bookworm ones it needs are there;
  # the version check below is what decides.
  apt-get update -qq || echo "build-i686.sh: apt-get update reported errors (expected: bookworm-security i386); going on"
  for spec in "${missing[@]}"; do
    case $spec in *=*) ;; *) continue ;; esac
    pkg=${spec%%=*} want=${spec#*=}
    versions=$(apt-cache madison "$pkg" | awk -F'|' '{ gsub(/ /, "", $2); print $2 }')
    if ! grep -qxF "$want" <<<"$versions"; then
      echo "build-i686.sh: $pkg $want is not available any more; pick the version both" \
        "architectures have (apt-cache policy ${pkg%%:*} ${pkg%%:*}:i386) and update the pins" >&2
      exit 2
    fi
  done
  flags=(-y -qq --no-install-recommends)
  # Only when an amd64 library is already newer than its pinned i386 twin
  # (e.g. liblzma5 from bookworm-security): the two must match, and the
  # i386 side cannot go up, so the amd64 side goes down.
  [ $downgrade = 1 ] && flags+=(--allow-downgrades)
  apt-get install "${flags[@]}" "${missing[@]}"
elif [ $added_arch = 1 ]; then
  apt-get update -qq || true
fi

# --- 2. build ----------------------------------------------------------------
# Debian's cargo with Debian's rustc (not the rustup proxies first in PATH),
# into its own target dir so its artefacts never mix with the main
# toolchain's. --locked: the committed Cargo.lock (format v4, which cargo
# 1.85 reads) is used as is and never rewritten; a dependency bump that
# needs a newer Rust fails here instead of changing the lock. Only the
# layer, the test app and their normal dependencies are built:
# dev-dependencies may need a newer Rust (proptest 1.12 declares
# rust-version 1.88), so no test is built with this cargo; the tests'
# 64-bit side is built by the main toolchain (`cargo test`).
for tool in /usr/bin/cargo /usr/bin/rustc; do
  [ -x $tool ] || { echo "build-i686.sh: $tool missing (cargo-web/rustc-web)" >&2; exit 2; }
done
export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc CARGO_TARGET_DIR="$root/target/i686"
unset RUSTC_WRAPPER RUSTC_WORKSPACE_WRAPPER RUSTFLAGS CARGO_ENCODED_RUSTFLAGS RUSTUP_TOOLCHAIN CARGO_BUILD_TARGET || true
echo "build-i686.sh: $(/usr/bin/cargo --version), $($RUSTC --version)"
start=$SECONDS
if [ $frame_pointers = 1 ]; then
  # A packager's flags: every Rust function gets a frame-pointer prologue.
  # The exported dlsym must still be the global_asm! entry (src/hooks.rs),
  # whose first instruction is `cmpl $-1, 4(%esp)` (83 7c 24 04 ff).
  plain="$CARGO_TARGET_DIR/i686-unknown-linux-gnu/release/libsteadyhud_gl.so"
  lib="$root/target/i686-fp/i686-unknown-linux-gnu/release/libsteadyhud_gl.so"
  # Copies, never moves: cargo's outputs are hard links of one file.
  mkdir -p "$(dirname "$lib")"
  rm -f "$lib" "$lib.plain"
  if [ -f "$plain" ]; then cp "$plain" "$lib.plain"; fi
  /usr/bin/cargo rustc --release --locked -p steadyhud-gl --lib --target i686-unknown-linux-gnu \
    -- -Cforce-frame-pointers=yes
  cp "$plain" "$lib"
  # The plain library back where the 32-bit tests find it (cargo builds it
  # again on the next plain build: the flag is in its fingerprint).
  if [ -f "$lib.plain" ]; then
    rm -f "$plain"
    mv "$lib.plain" "$plain"
  fi
  # dlsym's file offset: its address in .dynsym, less its segment's
  # address, plus that segment's offset (readelf, binutils).
  addr=$(readelf -W --dyn-syms "$lib" | awk '$8 == "dlsym" && !n++ { print $2 }')
  [ -n "$addr" ] || { echo "build-i686.sh: $lib exports no dlsym" >&2; exit 1; }
  a=$((16#$addr)) off=
  while read -r kind o v _ fs _; do
    if [ "$kind" = LOAD ] && [ $a -ge $((v)) ] && [ $a -lt $((v + fs)) ]; then
      off=$((a - v + o))
      break
    fi
  done < <(readelf -W -l "$lib")
  [ -n "$off" ] || { echo "build-i686.sh: dlsym ($addr) in no LOAD segment of $lib" >&2; exit 1; }
  first=$(od -An -tx1 -j "$off" -N5 "$lib" | tr -d ' \n')
  if [ "$first" != 837c2404ff ]; then
    echo "build-i686.sh: $lib: dlsym starts with $first, not the entry's cmpl \$-1, 4(%esp) (837c2404ff): a prologue precedes it" >&2
    exit 1
  fi
  echo "build-i686.sh: $lib built with frame pointers; dlsym is the entry (837c2404ff) (in $((SECONDS - start)) s)"
  exit 0
fi
# (Two runs: --lib and --bins would each apply to every package named.)
/usr/bin/cargo build --release --locked -p steadyhud-layer -p steadyhud-gl --lib --target i686-unknown-linux-gnu
/usr/bin/cargo build --release --locked -p steadyhud-testapp -p steadyhud-gltest --bins --target i686-unknown-linux-gnu
echo "build-i686.sh: built in $((SECONDS - start)) s"

# --- 3. the library and the test app -------------------------------------------
check_i686_elf() { # file -> exits unless it is a 32-bit x86 ELF
  local f=$1 header kind
  [ -f "$f" ] || { echo "build-i686.sh: $f not built" >&2; exit 1; }
  # ELF header: EI_CLASS (byte 4) 1 = 32-bit; e_machine (bytes 18-19, little
  # endian) 3 = EM_386. Read directly, `file` need not be installed.
  header=$(od -An -tx1 -N20 "$f" | tr -s ' \n' ' ')
  read -r -a b <<<"$header"
  if [ "${b[0]}${b[1]}${b[2]}${b[3]}" != 7f454c46 ] || [ "${b[4]}" != 01 ] || [ "${b[18]}${b[19]}" != 0300 ]; then
    echo "build-i686.sh: $f is not a 32-bit x86 ELF (header: $header)" >&2
    exit 1
  fi
  if command -v file >/dev/null; then
    kind=$(file -L "$f")
    echo "$kind"
    case $kind in *"ELF 32-bit"*) ;; *) echo "build-i686.sh: file(1) does not say ELF 32-bit" >&2; exit 1 ;; esac
  fi
  echo "build-i686.sh: $f ($(stat -c %s "$f") bytes, ELF 32-bit Intel 80386)"
}
release="$CARGO_TARGET_DIR/i686-unknown-linux-gnu/release"
check_i686_elf "$release/steadyhud-testapp"
check_i686_elf "$release/libsteadyhud.so"
check_i686_elf "$release/steadyhud-gltest"
check_i686_elf "$release/libsteadyhud_gl.so"

# --- 4. 32-bit vkcube and vkd3d-gears, for the tests -------------------------
# The tests that run real apps run these in i686 mode (tests/common/builds.rs
# puts target/i686/vt32/usr/bin first in PATH). Their packages are unpacked,
# not installed (the amd64 ones own the same paths); their libraries were
# installed in step 1. The exact versions are pinned, so every machine runs
# the same programs; the stamp file skips the download when they are there.
vt32="$CARGO_TARGET_DIR/vt32"
vt32_debs=("vulkan-tools:i386=1.3.239.0+dfsg1-1" "vkd3d-demos:i386=1.2-15")
if [ "$(cat "$vt32/.debs" 2>/dev/null)" != "${vt32_debs[*]}" ]; then
  echo "build-i686.sh: unpacking ${vt32_debs[*]} into $vt32"
  debs=$(mktemp -d)
  # Sandbox user root: apt's _apt user cannot write into root's mktemp dir.
  if ! (cd "$debs" && apt-get download -qq -o APT::Sandbox::User=root "${vt32_debs[@]}"); then
    echo "build-i686.sh: cannot download ${vt32_debs[*]}: apt-get update, or pick the version" \
      "bookworm has (apt-cache policy vulkan-tools:i386 vkd3d-demos:i386) and update the pins" >&2
    rm -rf "$debs"
    exit 2
  fi
  rm -rf "$vt32"
  mkdir -p "$vt32"
  for deb in "$debs"/*.deb; do dpkg -x "$deb" "$vt32"; done
  rm -rf "$debs"
  echo "${vt32_debs[*]}" >"$vt32/.debs"
fi
for prog in vkcube vkd3d-gears; do
  check_i686_elf "$vt32/usr/bin/$prog"
done
