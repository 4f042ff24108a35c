#!/usr/bin/env bash
# The README's picture of PC latency live: vkcube-wayland with the layer
# and the HUD rows fps, frame_ms, display and latency, typed at with real
# key times, in a compositor that says when frames reached the screen.
#
# Where: sway (wlroots' Wayland backend, pixman) nested in a headless
# Weston 10. Headless sway alone never answers presentation feedback and
# headless Weston has no seat input (../shared/TESTBED.md); nested, sway
# answers its clients' feedback from Weston's (every ~25 ms: P2D is that
# nesting's, not a monitor's) and takes keys from a virtual keyboard. The
# keys: `steadyhud-testapp --type-keys` (zwp_virtual_keyboard_v1, each
# key stamped with the CLOCK_MONOTONIC ms it is sent at; `wtype` stamps
# 0, which steadyhud refuses) on evdev code 30 (KEY_A; vkcube quits on
# code 1, Escape). As root everything runs as `nobody` (sway refuses
# root), as the tests' Wayland bed does.
#
#   scripts/latency-shot.sh                 # writes target/latency-shot/hud-latency.png
#   scripts/latency-shot.sh --update-docs   # and copies it to docs/hud-latency.png
#
# Also in target/latency-shot/: the screen (screen.png), the session log,
# `ctl status` while the keys were typed (status.txt) and `steadyhud
# analyze --display` of the log (analyze.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in weston sway grim vkcube-wayland convert setpriv; do
  command -v "$tool" >/dev/null || {
    echo "latency-shot: $tool missing (apt-get install weston sway grim vulkan-tools imagemagick util-linux)" >&2
    exit 2
  }
done
cargo build --release --quiet --lib -p steadyhud-layer
cargo build --release --quiet -p steadyhud -p steadyhud-testapp
out=target/latency-shot
rm -rf "$out"
mkdir -p "$out"

# The bed: a 0755 folder the bed's user can read, its runtime dir 0700.
work=$(mktemp -d /tmp/steadyhud-latency-shot.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[i]}" 2>/dev/null || true
    wait "${pids[i]}" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/run" "$work/data/vulkan/implicit_layer.d" "$work/config" "$work/logs" "$work/shots"
cp target/release/libsteadyhud.so target/release/steadyhud-testapp target/release/steadyhud "$work/"
sed "s#\"library_path\": *\"[^\"]*\"#\"library_path\": \"$work/libsteadyhud.so\"#" \
  layer-manifest/VK_LAYER_STEADYHUD_overlay.json \
  >"$work/data/vulkan/implicit_layer.d/VK_LAYER_STEADYHUD_overlay.json"
printf 'output * resolution 800x600\n' >"$work/sway.conf"
chmod -R a+rX "$work"
as=()
if [ "$(id -u)" = 0 ]; then
  chown nobody "$work/run" "$work/logs" "$work/shots" "$work/config"
  as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
chmod 700 "$work/run"
# A command in the bed: its user, nothing of our environment but PATH.
bed() {
  "${as[@]}" env -i PATH="$PATH" XDG_RUNTIME_DIR="$work/run" XDG_DATA_HOME="$work/data" \
    XDG_CONFIG_HOME="$work/config" STEADYHUD_LOG_DIR="$work/logs" "$@"
}
# The same in the background, the program itself in $pids (exec: no shell
# between, so the cleanup's kill reaches it).
bed_bg() {
  local out=$1
  shift
  (exec "${as[@]}" env -i PATH="$PATH" XDG_RUNTIME_DIR="$work/run" XDG_DATA_HOME="$work/data" \
    XDG_CONFIG_HOME="$work/config" STEADYHUD_LOG_DIR="$work/logs" "$@" >"$out" 2>&1) &
  pids+=($!)
}
# Waits up to 10 s for the socket $1 in the runtime dir.
wait_socket() {
  for _ in $(seq 100); do [ -S "$work/run/$1" ] && return 0; sleep 0.1; done
  echo "latency-shot: no $1 after 10 s" >&2
  exit 1
}

bed_bg "$out/weston.log" weston --backend=headless-backend.so --socket=weston-0 \
  --idle-time=0 --no-config --width=800 --height=600
wait_socket weston-0
bed_bg "$out/sway.log" env WAYLAND_DISPLAY=weston-0 WLR_BACKENDS=wayland WLR_RENDERER=pixman \
  WLR_LIBINPUT_NO_DEVICES=1 sway -c "$work/sway.conf"
wait_socket wayland-1
in_sway() { bed env WAYLAND_DISPLAY=wayland-1 "$@"; }

bed_bg "$out/vkcube.log" env WAYLAND_DISPLAY=wayland-1 STEADYHUD=1 \
  STEADYHUD_CONFIG="hud_rows=fps+frame_ms+display+latency" vkcube-wayland
sleep 3
in_sway "$work/steadyhud-testapp" --type-keys 12 --key-gap-ms 250 --key-code 30 >"$out/keys.txt"
in_sway "$work/steadyhud" ctl status >"$out/status.txt"
in_sway grim "$work/shots/screen.png"
cp "$work/shots/screen.png" "$out/screen.png"
# The window's top left, the HUD and part of the cube.
convert "$out/screen.png" -crop 560x260+0+0 +repage "$out/hud-latency.png"
kill "${pids[2]}"
wait "${pids[2]}" 2>/dev/null || true
cp "$work"/logs/*.csv "$out/"
target/release/steadyhud analyze --display "$out"/*.csv >"$out/analyze.txt"
grep -q '^Latency\|PC latency' "$out/status.txt" || {
  echo "latency-shot: ctl status has no PC latency:" >&2
  cat "$out/status.txt" >&2
  exit 1
}
grep -E 'PC latency|Click to photon|I2FS|FS2P|Present to display' "$out/status.txt"
echo "latency-shot: $out/hud-latency.png"
if [ "${1:-}" = --update-docs ]; then
  cp "$out/hud-latency.png" docs/hud-latency.png
  echo "latency-shot: docs/hud-latency.png updated"
fi
