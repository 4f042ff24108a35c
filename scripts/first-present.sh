#!/usr/bin/env bash
# What the HUD's set-up adds to the first present (Vulkan) or swap (GL),
# and to the first present after a swapchain recreation or the first swap
# of a new window, with the HUD shown, against no layer / no library.
#
# Vulkan: the test app (release, lavapipe, 1280x720, 16.6 ms schedule)
# times each vkQueuePresentKHR call (`--trace`); it resizes its window to
# 960x540 and recreates the swapchain before present 30. GL: the GL test
# program (GLX compatibility context, 1280x720, 60 fps) times each
# glXSwapBuffers call (`--time-swaps`) and makes a new window every 30
# swaps. Each is run ROUNDS times per mode in ABBA order; the median of the
# rounds is printed, in ms.
#
# usage: scripts/first-present.sh [ROUNDS, default 5]   (needs $DISPLAY or Xvfb)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
. scripts/layer-env.sh
cargo build --release --quiet --lib -p steadyhud-layer -p steadyhud-gl
cargo build --release --quiet -p steadyhud-testapp -p steadyhud-gltest
layer_env first-present "$PWD/target/release/libsteadyhud.so"
gl=$PWD/target/release/libsteadyhud_gl.so
testapp=$PWD/target/release/steadyhud-testapp
gltest=$PWD/target/release/steadyhud-gltest

# vk MODE: "first recreated" present times (ms) of one test app run.
vk() {
  local env=(DISABLE_STEADYHUD=1)
  [ "$1" = shown ] && env=(STEADYHUD=1)
  env "${env[@]}" "$testapp" --frames 60 --size 1280x720 --resize-at 30:960x540 --trace 2>&1 |
    awk '/trace present 0 / { f = $(NF-1) }
         /trace present 30 / { r = $(NF-1) }
         END { print f, r }'
}

# gl MODE: "first second-window" swap times (ms) of one GL test run.
glrun() {
  local env=(DISABLE_STEADYHUD=1)
  [ "$1" = shown ] && env=(LD_PRELOAD="$gl")
  env "${env[@]}" "$gltest" --frames 60 --fps 60 --width 1280 --height 720 --time-swaps \
    --warmup 1 --recreate-every 30 2>/dev/null |
    awk '/first swap of window 1 / { f = $NF / 1e6 } /first swap of window 2 / { r = $NF / 1e6 }
         END { printf "%.3f %.3f\n", f, r }'
}

out=$work/times
for r in $(seq 1 "$rounds"); do
  order=(none shown)
  [ $((r % 2)) = 0 ] && order=(shown none)
  for m in "${order[@]}"; do
    echo "vk $m $(vk "$m")" >>"$out"
    echo "gl $m $(glrun "$m")" >>"$out"
  done
done

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "median of $rounds rounds, ms (lavapipe / llvmpipe, 1280x720):"
printf '%-4s %-6s %12s %12s\n' api mode first recreated
for api in vk gl; do
  for m in none shown; do
    f=$(awk -v a=$api -v m=$m '$1 == a && $2 == m { print $3 }' "$out" | median)
    s=$(awk -v a=$api -v m=$m '$1 == a && $2 == m { print $4 }' "$out" | median)
    printf '%-4s %-6s %12s %12s\n' "$api" "$m" "$f" "$s"
  done
done
