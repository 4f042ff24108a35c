#!/usr/bin/env bash
# Overhead of steadyhud's statistics counters on vkcube: the layer with the
# HUD hidden and counters off (config counters=0: no counter hooks, no
# latch, no counter columns) against the same with counters on (the
# default), in interleaved rounds so machine noise hits both alike.
#
# usage: scripts/counters-overhead.sh [FRAMES per run, default 3000] [ROUNDS, default 5]
# Runs under a private Xvfb when $DISPLAY is unset. Prints per mode the
# median frame time (wall / frames), FPS and CPU ms per frame, and the
# change with counters on. Goal: frame time +< 1%.
set -euo pipefail
cd "$(dirname "$0")/.."

frames=${1:-3000}
rounds=${2:-5}

command -v vkcube >/dev/null || { echo "counters-overhead.sh: vkcube not found (apt-get install vulkan-tools)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "counters-overhead.sh: /usr/bin/time not found (apt-get install time)" >&2; exit 2; }

cargo build --release --lib --quiet
lib="$PWD/target/release/libsteadyhud.so"
[ -f "$lib" ] || { echo "counters-overhead.sh: $lib not built" >&2; exit 2; }

work=$(mktemp -d)
xvfb_pid=""
cleanup() {
  if [ -n "$xvfb_pid" ]; then kill "$xvfb_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/data/vulkan/implicit_layer.d" "$work/logs" "$work/run"
chmod 700 "$work/run"
sed "s|\"library_path\": *\"[^\"]*\"|\"library_path\": \"$lib\"|" \
  layer-manifest/VK_LAYER_STEADYHUD_overlay.json \
  > "$work/data/vulkan/implicit_layer.d/VK_LAYER_STEADYHUD_overlay.json"
export XDG_DATA_HOME="$work/data" XDG_RUNTIME_DIR="$work/run" XDG_CONFIG_HOME="$work/config"
export STEADYHUD_LOG_DIR="$work/logs"

if [ -z "${DISPLAY:-}" ]; then
  command -v Xvfb >/dev/null || { echo "counters-overhead.sh: no DISPLAY and no Xvfb" >&2; exit 2; }
  Xvfb -displayfd 4 -screen 0 1280x1024x24 -nolisten tcp 4>"$work/display" 2>/dev/null &
  xvfb_pid=$!
  for _ in $(seq 100); do [ -s "$work/display" ] && break; sleep 0.1; done
  [ -s "$work/display" ] || { echo "counters-overhead.sh: Xvfb did not start" >&2; exit 2; }
  export DISPLAY=":$(tr -d '[:space:]' < "$work/display")"
fi

modes=(off on)

# One vkcube run; prints frame time in ms (wall / frames) and CPU ms per frame.
run() {
  local cfg="hud_hidden=1,counters=0"
  [ "$1" = on ] && cfg="hud_hidden=1,counters=1"
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$work/cpu" env STEADYHUD=1 STEADYHUD_CONFIG="$cfg" \
    vkcube --c "$frames" --present_mode 0 >/dev/null 2>"$work/err" || {
    echo "counters-overhead.sh: vkcube failed (counters $1):" >&2; cat "$work/err" >&2; exit 1; }
  t1=$(date +%s.%N)
  echo "$frames $t0 $t1 $(tail -1 "$work/cpu")" | awk '{ printf "%.4f %.4f\n", ($3 - $2) * 1000 / $1, ($4 + $5) * 1000 / $1 }'
}

for m in "${modes[@]}"; do run "$m" >/dev/null; done   # warm-up

declare -A ft cpu
for ((r = 1; r <= rounds; r++)); do
  for m in "${modes[@]}"; do
    read -r f c < <(run "$m")
    ft[$m]+="$f "
    cpu[$m]+="$c "
    printf 'round %d  counters %-3s %8.4f ms/frame %8.4f CPU ms/frame\n' "$r" "$m" "$f" "$c"
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
f_off=$(echo "${ft[off]}" | median); f_on=$(echo "${ft[on]}" | median)
c_off=$(echo "${cpu[off]}" | median); c_on=$(echo "${cpu[on]}" | median)
echo
printf 'counters  %12s %10s %14s   (vkcube --c %d, median of %d rounds)\n' "ms/frame" fps "CPU ms/frame" "$frames" "$rounds"
printf 'off       %12.4f %10.1f %14.4f\n' "$f_off" "$(awk -v f="$f_off" 'BEGIN { print 1000 / f }')" "$c_off"
printf 'on        %12.4f %10.1f %14.4f\n' "$f_on" "$(awk -v f="$f_on" 'BEGIN { print 1000 / f }')" "$c_on"
awk -v a="$f_on" -v b="$f_off" -v c="$c_on" -v d="$c_off" \
  'BEGIN { printf "frame time %+.2f%%, CPU per frame %+.2f%% with counters on (goal: frame time < +1%%)\n", (a / b - 1) * 100, (c / d - 1) * 100 }'
