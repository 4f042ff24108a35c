#!/usr/bin/env bash
# The README's picture of the HUD presets: vkcube (640x480, capped at 60
# fps) with the layer in each preset, the window's left 400x480 cut out
# of a screenshot taken after 5 s, the four side by side in one picture
# (left to right: 0 one line, 1 compact, 2 standard, 3 detailed).
#
#   scripts/preset-shots.sh            # writes target/preset-shots/hud-presets.png
#   scripts/preset-shots.sh --update-docs   # and copies it to docs/hud-presets.png
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/layer-env.sh
for tool in vkcube import convert; do
  command -v "$tool" >/dev/null || { echo "preset-shots: $tool missing (apt-get install vulkan-tools imagemagick)" >&2; exit 2; }
done
cargo build --release --lib --quiet
out=target/preset-shots
mkdir -p "$out"
LAYER_ENV_SCREEN=800x600x24 layer_env preset-shots "$PWD/target/release/libsteadyhud.so"
parts=()
for n in 0 1 2 3; do
  STEADYHUD=1 STEADYHUD_CONFIG="preset=$n,fps_limit=60" timeout 8 vkcube --width 640 --height 480 >/dev/null 2>"$out/vkcube-$n.log" &
  cube=$!
  sleep 5
  # vkcube's window: the box of the screen's lit pixels.
  import -window root "$out/screen-$n.png"
  box=$(convert "$out/screen-$n.png" -trim -format '%X %Y' info: | tr -d '+')
  read -r x y <<<"$box"
  # A 4-pixel black gap on the right (no text: no font needed).
  convert "$out/screen-$n.png" -crop "400x480+$x+$y" +repage \
    -gravity east -background black -splice 4x0 "$out/preset-$n.png"
  parts+=("$out/preset-$n.png")
  kill "$cube" 2>/dev/null || true
  wait "$cube" || true
done
convert "${parts[@]}" +append +repage "$out/hud-presets.png"
echo "preset-shots: $out/hud-presets.png"
if [ "${1:-}" = --update-docs ]; then
  cp "$out/hud-presets.png" docs/hud-presets.png
  echo "preset-shots: docs/hud-presets.png updated"
fi
