#!/usr/bin/env bash
# Overhead of the steadyhud layer on vkcube, in wall-clock FPS: without any
# layer, with steadyhud (HUD hidden), steadyhud (HUD shown) and MangoHud
# (when installed). For the instruction count of the same modes, which does
# not depend on machine noise, see scripts/instructions.sh.
#
# usage: [MODES="..."] scripts/overhead.sh [FRAMES per run, default 3000] [ROUNDS, default 4]
# MODES picks and orders the modes (the first is the base of the ratios):
# none, hidden, shown, mangohud, and counters-off / counters-on / gpu-on (HUD
# hidden, statistics counters off / on without GPU timing, and on with it
# forced by gpu_timing=1; hidden and shown use the default gpu_timing=auto,
# i.e. off on lavapipe), sensors-off / sensors-on (HUD hidden, system
# readings off / at 10 Hz), e.g.
#   MODES="counters-off counters-on" scripts/overhead.sh 3000 10
#
# Rounds run every mode once; odd rounds in MODES order, even rounds in
# reverse (ABBA), because on this 2-core machine the second run of a pair
# measured ~4% slower whichever mode it was: without the alternation that
# position effect reads as overhead. Use an even ROUNDS.
# Runs under a private Xvfb when $DISPLAY is unset. Prints each mode's
# median FPS, its range, its ratio to the first mode, and the CPU time per
# frame (user + system of all threads; on lavapipe the GPU work is CPU work
# too). Goals: hidden >= 0.99, shown >= 0.97.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/layer-env.sh

frames=${1:-3000}
rounds=${2:-4}

command -v vkcube >/dev/null || { echo "overhead.sh: vkcube not found (apt-get install vulkan-tools)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "overhead.sh: /usr/bin/time not found (apt-get install time)" >&2; exit 2; }

cargo build --release --lib --quiet
layer_env overhead "$PWD/target/release/libsteadyhud.so"

if [ -n "${MODES:-}" ]; then
  read -ra modes <<< "$MODES"
else
  modes=(none hidden shown)
  if command -v mangohud >/dev/null || ls /usr/share/vulkan/implicit_layer.d/MangoHud* >/dev/null 2>&1; then
    modes+=(mangohud)
  fi
fi
for m in "${modes[@]}"; do mode_env "$m" >/dev/null || exit 2; done

# One vkcube run in MODE; prints its FPS (frames / wall seconds) and the
# CPU time per frame in ms (user + system of all its threads, lavapipe's
# rasteriser threads included).
run() {
  local mode=$1 env t0 t1 cpu
  read -ra env < <(mode_env "$mode")
  t0=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$work/cpu" env "${env[@]}" vkcube --c "$frames" --present_mode 0 \
    >/dev/null 2>"$work/err" || {
    echo "overhead.sh: vkcube failed in mode $mode:" >&2; cat "$work/err" >&2; exit 1; }
  t1=$(date +%s.%N)
  cpu=$(tail -1 "$work/cpu")
  echo "$frames $t0 $t1 $cpu" | awk '{ printf "%.1f %.3f\n", $1 / ($3 - $2), ($4 + $5) * 1000 / $1 }'
}

# Warm-up (page cache, shader caches), not counted.
for m in "${modes[@]}"; do run "$m" >/dev/null; done

declare -A results cpus
for ((r = 1; r <= rounds; r++)); do
  order=("${modes[@]}")
  if ((r % 2 == 0)); then
    order=()
    for ((k = ${#modes[@]} - 1; k >= 0; k--)); do order+=("${modes[k]}"); done
  fi
  for m in "${order[@]}"; do
    read -r fps cpu < <(run "$m")
    results[$m]+="$fps "
    cpus[$m]+="$cpu "
    printf 'round %d  %-12s %8.1f fps %8.3f CPU ms/frame\n' "$r" "$m" "$fps" "$cpu"
  done
done

base=$(echo "${results[${modes[0]}]}" | median)
cbase=$(echo "${cpus[${modes[0]}]}" | median)
echo
printf '%-12s %10s %17s %8s %14s %10s   (vkcube --c %d, median of %d rounds; ratio to %s)\n' \
  mode fps "range" ratio "CPU ms/frame" "+CPU ms" "$frames" "$rounds" "${modes[0]}"
for m in "${modes[@]}"; do
  med=$(echo "${results[$m]}" | median)
  cmed=$(echo "${cpus[$m]}" | median)
  range=$(echo "${results[$m]}" | tr ' ' '\n' | grep -v '^$' | sort -g | sed -n '1p;$p' | paste -sd' ' |
    awk '{ printf "%.0f..%.0f", $1, $2 }')
  printf '%-12s %10.1f %17s %8.3f %14.3f %10.3f\n' "$m" "$med" "$range" \
    "$(awk -v a="$med" -v b="$base" 'BEGIN { print a / b }')" "$cmed" \
    "$(awk -v a="$cmed" -v b="$cbase" 'BEGIN { print a - b }')"
done
