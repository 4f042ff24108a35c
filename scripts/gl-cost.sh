#!/usr/bin/env bash
# What the GL library costs an OpenGL game, as scripts/present-cost.sh
# measures the layer: on the game's thread per swap, and the share of a
# core its threads take; beside MangoHud's GL library on the same runs.
#
# Per swap: the GL test program (test-programs/gltest, GLX compatibility context,
# 320x240, paced at 60 fps) times each glXSwapBuffers call (our hook plus
# the real swap) after 60 warm-up frames: the median over 600 swaps, per
# mode, in ABBA rounds (odd rounds in order, even rounds reversed: on this
# 2-core machine the second run of a pair is slower whichever it is).
# Modes: none (no library), hidden (HUD hidden), shown (HUD shown),
# mangohud (`mangohud --dlsym`: the test program finds GL through dlsym).
# Our hook alone: the same, with a second preloaded hook after ours that
# counts each swap and drops it (tests/gl/count_swaps.c, COUNT_SWAPS_DROP=1),
# so the time is our hook's, without the real swap's 0.5 ms of llvmpipe
# work in which it would drown; against the library loaded but switched off
# (DISABLE_STEADYHUD=1: the same calls, passed through), paced at 60 fps (a
# game's cold caches after 16 ms of other work) and unpaced (warm).
# Threads: user + system CPU of the threads named steadyhud-* over the run
# (/proc/self/task), as a share of one core, at 60 and 144 fps.
# Whole frames: glxgears uncapped, its own FPS over its second 5 s, per mode.
#
# Presets (`presets` first): per swap only, 640x480, HUD shown in each
# preset (p0 one line … p3 detailed) and see-through (alpha: hud_alpha=0.5).
#
# usage: scripts/gl-cost.sh [presets] [ROUNDS, default 4]   (needs $DISPLAY or Xvfb)
set -euo pipefail
cd "$(dirname "$0")/.."
presets=0
if [ "${1:-}" = presets ]; then
  presets=1
  shift
fi
rounds=${1:-4}
cargo build --release --quiet -p steadyhud-gl -p steadyhud-gltest
gl=$PWD/target/release/libsteadyhud_gl.so
app=$PWD/target/release/steadyhud-gltest
work=$(mktemp -d)
trap 'rm -rf "$work"; [ -n "${xvfb:-}" ] && kill "$xvfb" 2>/dev/null || true' EXIT
if [ -z "${DISPLAY:-}" ]; then
  Xvfb :93 -screen 0 1280x1024x24 -nolisten tcp -noreset >/dev/null 2>&1 &
  xvfb=$!
  export DISPLAY=:93
  sleep 1
fi
export XDG_RUNTIME_DIR=$work STEADYHUD_LOG_DIR=$work/logs

# with MODE CMD...: runs CMD with MODE's environment.
with() {
  local mode=$1
  shift
  case $mode in
    none) "$@" ;;
    hidden) STEADYHUD_CONFIG=hud_hidden=1 LD_PRELOAD=$gl "$@" ;;
    shown) LD_PRELOAD=$gl "$@" ;;
    mangohud) mangohud --dlsym "$@" ;;
    p[0-3]) STEADYHUD_CONFIG=preset=${mode#p} LD_PRELOAD=$gl "$@" ;;
    alpha) STEADYHUD_CONFIG=hud_alpha=0.5 LD_PRELOAD=$gl "$@" ;;
  esac
}

modes=(none hidden shown)
command -v mangohud >/dev/null && modes+=(mangohud)
size=()
if [ $presets = 1 ]; then
  modes=(none p0 p1 p2 p3 alpha)
  size=(--width 640 --height 480)
fi
echo "per swap on the game's thread (median ns over 600 swaps at 60 fps), $rounds rounds:"
for r in $(seq 1 "$rounds"); do
  order=("${modes[@]}")
  if [ $((r % 2)) = 0 ]; then
    order=()
    for ((i = ${#modes[@]} - 1; i >= 0; i--)); do order+=("${modes[i]}"); done
  fi
  for m in "${order[@]}"; do
    ns=$(with "$m" "$app" --frames 660 --fps 60 --time-swaps "${size[@]}" 2>/dev/null | awk '/swap_ns/ { print $4 }')
    echo "$m $ns" >>"$work/swap"
  done
done
for m in "${modes[@]}"; do
  vals=$(awk -v m="$m" '$1 == m { print $2 }' "$work/swap" | sort -n)
  n=$(wc -l <<<"$vals")
  printf '  %-9s median of rounds %8s ns (rounds: %s)\n' "$m" \
    "$(sed -n "$(((n + 1) / 2))p" <<<"$vals")" "$(tr '\n' ' ' <<<"$vals")"
done

[ $presets = 1 ] && exit 0

gcc -shared -fPIC -O2 -o "$work/drop.so" tests/gl/count_swaps.c -ldl
echo "our hook alone (the real swap dropped after it; HUD hidden), median ns per swap, $rounds rounds:"
for pace in 60 0; do
  for m in passthrough hidden; do
    case $m in
      passthrough) flag=DISABLE_STEADYHUD=1 ;;
      hidden) flag=STEADYHUD_CONFIG=hud_hidden=1 ;;
    esac
    vals=$(for r in $(seq 1 "$rounds"); do
      env COUNT_SWAPS_DROP=1 "$flag" LD_PRELOAD="$gl:$work/drop.so" \
        "$app" --frames 1200 --fps "$pace" --time-swaps 2>/dev/null | awk '/swap_ns/ { print $4 }'
    done | sort -n | tr '\n' ' ')
    echo "  fps ${pace/#0/unpaced} $m: $vals"
  done
done

echo "steadyhud's threads (HUD hidden, then shown), share of one core over 20 s:"
for fps in 60 144; do
  for m in hidden shown; do
    ms=$(with "$m" "$app" --frames $((fps * 20)) --fps "$fps" --time-swaps 2>/dev/null | awk '/threads_cpu_ms/ { print $3 }')
    awk -v f="$fps" -v m="$m" -v ms="$ms" 'BEGIN { printf "  %3d fps %-7s %.3f %%\n", f, m, ms / 20000 * 100 }'
  done
done

echo "glxgears uncapped, its FPS over its second 5 s:"
for r in 1 2; do
  for m in "${modes[@]}"; do
    fps=$( (with "$m" timeout -s INT 11 glxgears 2>/dev/null || true) | awk '/FPS/ { f = $(NF - 1) } END { print f }')
    echo "  round $r $m $fps"
  done
done
