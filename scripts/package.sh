#!/usr/bin/env bash
# The release packages, in target/dist/:
#   steadyhud_<ver>-1_amd64.deb   the CLI, the 64-bit layer, the manifest
#   steadyhud_<ver>-1_i386.deb    the 32-bit layer, the same manifest
#   steadyhud-<ver>-linux.tar.gz  both layers, the CLI, install.sh and
#                                 uninstall.sh, for other distributions
#   SHA256SUMS
#
# The two .debs are one package, `steadyhud`, in two architectures, as
# `mangohud` and `mangohud:i386` are: Multi-Arch: same, so dpkg installs
# both side by side (the files both ship are byte-identical):
#   apt install ./target/dist/steadyhud_*_amd64.deb ./target/dist/steadyhud_*_i386.deb
# Their manifest, /usr/share/vulkan/implicit_layer.d/VK_LAYER_STEADYHUD_overlay.json,
# names /usr/$LIB/steadyhud/libsteadyhud.so: glibc's dlopen expands $LIB
# per process (lib/x86_64-linux-gnu, lib/i386-linux-gnu), so 32-bit games
# get the 32-bit library from the one manifest.
#
# Built with cargo-deb (installed at the pinned version when missing); the
# metadata is [package.metadata.deb] in crates/cli/Cargo.toml. The 64-bit
# CLI and layer are built here (`cargo build --release`); the 32-bit layer
# must already be built by scripts/build-i686.sh (Debian's Rust, as root).
#
# usage: scripts/package.sh [--cli PATH --lib64 PATH] [--lib32 PATH]
#   --cli, --lib64  package these (both given: no cargo build), e.g. what
#                   `cargo test --release` built (tests/packages.rs)
#   --lib32         the 32-bit layer (default: scripts/build-i686.sh's)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
dist=$root/target/dist
staging=$root/target/deb-staging
cargo_deb_version=3.8.0
say() { echo "package.sh: $*"; }
die() { echo "package.sh: $*" >&2; exit 1; }
usage() { sed -n '/^# usage:/,/^[^#]/ s/^# \{0,1\}//p' "$0"; }

cli='' lib64='' lib32=$root/target/i686/i686-unknown-linux-gnu/release/libsteadyhud.so
while [ $# -gt 0 ]; do
  case $1 in
    --cli) cli=$(realpath -m "${2:?--cli PATH}"); shift 2 ;;
    --lib64) lib64=$(realpath -m "${2:?--lib64 PATH}"); shift 2 ;;
    --lib32) lib32=$(realpath -m "${2:?--lib32 PATH}"); shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
if { [ -n "$cli" ] && [ -z "$lib64" ]; } || { [ -z "$cli" ] && [ -n "$lib64" ]; }; then
  die "--cli and --lib64 go together (both prebuilt, or both built here)"
fi

version=$(sed -n '/^\[workspace.package\]/,/^\[/ s/^version *= *"\(.*\)"/\1/p' Cargo.toml)
[ -n "$version" ] || die "no version in Cargo.toml's [workspace.package]"

# --- 0. the 32-bit library: there, and 32-bit x86 ---------------------------
if [ ! -f "$lib32" ]; then
  die "the 32-bit layer $lib32 is missing: run scripts/build-i686.sh first (as root; it builds it with Debian's Rust), or name one with --lib32 PATH"
fi
# ELF header: EI_CLASS (byte 4) 1 = 32-bit; e_machine (bytes 18-19) 3 = EM_386.
read -r -a b <<<"$(od -An -tx1 -N20 "$lib32" | tr -s ' \n' ' ')"
if [ "${b[0]}${b[1]}${b[2]}${b[3]}" != 7f454c46 ] || [ "${b[4]}" != 01 ] || [ "${b[18]}${b[19]}" != 0300 ]; then
  die "$lib32 is not a 32-bit x86 ELF library"
fi
# The layer's own sources, newer than the 32-bit build: the .debs would
# ship two different layers. Said, not fatal (a stand-in library for a
# packaging test is older than everything).
newer=$(find src shaders crates/sys crates/metrics crates/counters crates/log crates/config \
  crates/control crates/gfx Cargo.toml Cargo.lock -type f -newer "$lib32" 2>/dev/null | head -3)
if [ -n "$newer" ]; then
  say "WARNING: $lib32 is older than $(echo "$newer" | tr '\n' ' ')- run scripts/build-i686.sh again"
fi

# --- 1. cargo-deb -------------------------------------------------------------
# It finds the packages' Depends (libc6, libstdc++6) with dpkg-shlibdeps;
# without it, it would only warn and make packages that depend on nothing.
command -v dpkg-shlibdeps >/dev/null || die "dpkg-shlibdeps is missing: apt-get install dpkg-dev"
if ! cargo deb --version >/dev/null 2>&1; then
  say "installing cargo-deb $cargo_deb_version"
  cargo install --locked cargo-deb --version "$cargo_deb_version"
fi
have=$(cargo deb --version 2>/dev/null | awk '{ print $NF }')
[ "$have" = "$cargo_deb_version" ] || say "note: cargo-deb $have, not the pinned $cargo_deb_version"

# --- 2. the 64-bit CLI and layer ------------------------------------------------
if [ -z "$cli" ]; then
  # The whole workspace, as `cargo build --release` (the README's command):
  # building only the two packages would unify other features and rebuild
  # the layer the next time either runs.
  say "cargo build --release"
  cargo build --release --locked
  target_dir=$(cargo metadata --format-version 1 --no-deps |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
  [ -n "$target_dir" ] || target_dir=$root/target
  lib64=$target_dir/release/libsteadyhud.so
  cli=$target_dir/release/steadyhud
fi
# The GL libraries (LD_PRELOAD, for OpenGL games) are built beside each
# layer library: cargo's for 64 bits, scripts/build-i686.sh's for 32.
gl64=$(dirname "$lib64")/libsteadyhud_gl.so
gl32=$(dirname "$lib32")/libsteadyhud_gl.so
for f in "$lib64" "$cli" "$gl64"; do [ -f "$f" ] || die "$f is missing"; done
[ -f "$gl32" ] || die "the 32-bit GL library $gl32 is missing: run scripts/build-i686.sh first"

# --- 3. the packaged manifest ---------------------------------------------------
# From the one template in layer-manifest/, with the library at
# /usr/$LIB/steadyhud/ (the .debs) instead of a bare file name.
rm -rf "$staging" "$dist"
mkdir -p "$staging" "$dist"
template=layer-manifest/VK_LAYER_STEADYHUD_overlay.json
manifest=$staging/VK_LAYER_STEADYHUD_overlay.json
# shellcheck disable=SC2016 # $LIB is literal: the dynamic loader expands it
sed 's#"library_path": "libsteadyhud.so"#"library_path": "/usr/$LIB/steadyhud/libsteadyhud.so"#' \
  "$template" >"$manifest"
grep -qF '"library_path": "/usr/$LIB/steadyhud/libsteadyhud.so"' "$manifest" ||
  die "$template: its library_path is no longer \"libsteadyhud.so\"; update this script"

# --- 4. the .debs ---------------------------------------------------------------
# cargo-deb warns that a Multi-Arch: same package should not hold a
# program: dpkg only requires the files both architectures ship to be
# identical, and /usr/bin/steadyhud is in the amd64 one only (mangohud's
# packages do the same).
# cargo-deb takes the `target/release/` assets from
# $CARGO_TARGET_DIR/release/ (with --target: .../<triple>/release/), so
# what is packaged is staged there, in a folder of its own: exactly the
# files chosen above, and nothing built is touched.
mkdir -p "$staging/x86_64/release" "$staging/i686/i686-unknown-linux-gnu/release"
cp "$cli" "$lib64" "$gl64" "$staging/x86_64/release/"
cp "$lib32" "$staging/i686/i686-unknown-linux-gnu/release/libsteadyhud.so"
cp "$gl32" "$staging/i686/i686-unknown-linux-gnu/release/libsteadyhud_gl.so"
say "cargo deb (amd64: $cli, $lib64)"
CARGO_TARGET_DIR=$staging/x86_64 cargo deb -p steadyhud --no-build --multiarch same -o "$dist/"
say "cargo deb (i386: $lib32)"
CARGO_TARGET_DIR=$staging/i686 cargo deb -p steadyhud --variant i386 \
  --target i686-unknown-linux-gnu --no-build --multiarch same -o "$dist/"
# cargo-deb gives every variant the CLI crate's one-line description ("the
# command line: …"); the i386 package holds only the 32-bit layer, so its
# control file gets a line that says so (the long description is the
# variant's own, in crates/cli/Cargo.toml).
deb32=$(ls "$dist"/steadyhud_*_i386.deb)
fix=$staging/i386-control
rm -rf "$fix"
mkdir -p "$fix/control"
# Only the control member changes; the data member stays as cargo-deb
# made it (ar keeps the members' order: debian-binary, control, data).
(cd "$fix" && ar x "$deb32" && tar -C control -xJf control.tar.xz)
sed -i 's/^Description: .*/Description: 32-bit Vulkan layer of steadyhud, a frame pacing HUD and logger/' "$fix/control/control"
# Every member goes back (control, md5sums, …), only the one line changed.
members=$(cd "$fix/control" && find . -mindepth 1 -maxdepth 1 | sort)
# shellcheck disable=SC2086  # one member per word: cargo-deb's plain names
tar -C "$fix/control" --sort=name --owner=0 --group=0 --numeric-owner \
  --mtime="@$(git log -1 --format=%ct 2>/dev/null || date +%s)" -cJf "$fix/control.tar.xz" $members
rm -f "$deb32"
(cd "$fix" && ar rc "$deb32" debian-binary control.tar.xz data.tar.*)

# --- 5. the tarball -------------------------------------------------------------
name=steadyhud-$version
tree=$staging/tarball/$name
mkdir -p "$tree/bin" "$tree/lib64" "$tree/lib32" "$tree/share/steadyhud"
install -m755 "$cli" "$tree/bin/steadyhud"
install -m644 "$lib64" "$tree/lib64/libsteadyhud.so"
install -m644 "$lib32" "$tree/lib32/libsteadyhud.so"
install -m644 "$gl64" "$tree/lib64/libsteadyhud_gl.so"
install -m644 "$gl32" "$tree/lib32/libsteadyhud_gl.so"
install -m644 "$template" "$tree/share/steadyhud/VK_LAYER_STEADYHUD_overlay.json"
install -m755 scripts/tarball/install.sh scripts/tarball/uninstall.sh "$tree/"
install -m644 scripts/tarball/README "$tree/README"
install -m644 scripts/tarball/where.sh "$tree/where.sh"
# Reproducible: files in name order, owned by root, dated by the commit.
epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)
tar -C "$staging/tarball" --sort=name --owner=0 --group=0 --numeric-owner \
  --mtime="@$epoch" -cf - "$name" | gzip -9n >"$dist/$name-linux.tar.gz"

# --- 6. what was made -----------------------------------------------------------
(cd "$dist" && sha256sum -- *.deb *.tar.gz >SHA256SUMS)
say "made in target/dist:"
for f in "$dist"/*.deb "$dist"/*.tar.gz; do
  printf '  %-36s %9d bytes\n' "$(basename "$f")" "$(stat -c %s "$f")"
done
