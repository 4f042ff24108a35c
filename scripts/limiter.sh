#!/usr/bin/env bash
# The frame limiter against MangoHud's on the same app in the same run:
# vkcube (uncapped it runs well above the caps on lavapipe) capped at each
# CAP by steadyhud (fps_limit=CAP) and by MangoHud
# (MANGOHUD_CONFIG=fps_limit=CAP,no_display, with steadyhud's own cap off),
# every run logged by steadyhud (HUD hidden) and judged by its time-weighted
# metrics. Rounds alternate the order (ABBA) against position effects.
#
# usage: [METHOD=late|early] scripts/limiter.sh [SECONDS per run, default 8] [ROUNDS, default 4] [CAPS, default "60 144"]
# METHOD (default late, both limiters' default) sets fps_limit_method for
# both: late waits after the real present (lowest latency), early before it
# (steadiest present-to-present times).
# Prints per cap and limiter the medians over the rounds of: average FPS,
# Steady FPS, time-weighted P99 (ms), stutters, and CPU ms per frame (user +
# system of the whole process; on lavapipe the rendering is CPU work too,
# so compare the two limiters at one cap, not across caps).
# Goals (issue 13): average within 1 % of the cap, Steady FPS >= 0.95 × cap,
# Steady FPS and P99 at least as good as MangoHud's at every cap.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/layer-env.sh

secs=${1:-8}
rounds=${2:-4}
method=${METHOD:-late}
read -ra caps <<< "${3:-60 144}"

command -v vkcube >/dev/null || { echo "limiter.sh: vkcube not found (apt-get install vulkan-tools)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "limiter.sh: /usr/bin/time not found (apt-get install time)" >&2; exit 2; }
limiters=(steadyhud)
if ls /usr/share/vulkan/implicit_layer.d/MangoHud* >/dev/null 2>&1; then
  limiters+=(mangohud)
else
  echo "limiter.sh: MangoHud not installed (apt-get install mangohud): steadyhud alone" >&2
fi

cargo build --release --quiet --lib --bin steadyhud
layer_env limiter "$PWD/target/release/libsteadyhud.so"
steadyhud=$PWD/target/release/steadyhud

# One vkcube run: LIMITER CAP -> "avg steady p99 stutters cpu_ms_per_frame"
run() {
  local lim=$1 cap=$2 frames=$(($2 * secs)) env log
  case $lim in
    steadyhud) env=(STEADYHUD=1 "STEADYHUD_CONFIG=hud_hidden=1,fps_limit=$cap,fps_limit_method=$method") ;;
    mangohud) env=(STEADYHUD=1 STEADYHUD_CONFIG=hud_hidden=1 MANGOHUD=1 "MANGOHUD_CONFIG=fps_limit=$cap,fps_limit_method=$method,no_display") ;;
  esac
  rm -f "$STEADYHUD_LOG_DIR"/*
  /usr/bin/time -f "%U %S" -o "$work/cpu" env "${env[@]}" vkcube --c "$frames" --present_mode 0 \
    >/dev/null 2>"$work/err" || {
    echo "limiter.sh: vkcube failed ($lim, cap $cap):" >&2; cat "$work/err" >&2; exit 1; }
  log=$(ls "$STEADYHUD_LOG_DIR"/*.csv)
  "$steadyhud" analyze "$log" --json >"$work/a.json"
  python3 - "$work/a.json" "$work/cpu" "$frames" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
u, s = map(float, open(sys.argv[2]).read().split()[-2:])
print(f"{a['average_fps']:.2f} {a['steady_fps']} {a['p99_ms']:.3f} {a['stutter_count']} {(u + s) * 1000 / int(sys.argv[3]):.3f}")
PY
}

declare -A out
for ((r = 1; r <= rounds; r++)); do
  order=("${limiters[@]}")
  ((r % 2 == 0)) && order=($(printf '%s\n' "${limiters[@]}" | tac))
  for cap in "${caps[@]}"; do
    for lim in "${order[@]}"; do
      line=$(run "$lim" "$cap")
      out[$cap.$lim]+="$line;"
      echo "round $r  cap $cap  $lim: $line" >&2
    done
  done
done

col() { tr ';' '\n' | grep -v '^$' | awk -v c="$1" '{ print $c }' | median; }
printf '%-5s %-10s %9s %8s %9s %9s %12s\n' cap limiter "avg fps" steady "P99 ms" stutters "CPU ms/frame"
for cap in "${caps[@]}"; do
  for lim in "${limiters[@]}"; do
    v=${out[$cap.$lim]}
    printf '%-5s %-10s %9s %8s %9s %9s %12s\n' "$cap" "$lim" \
      "$(echo "$v" | col 1)" "$(echo "$v" | col 2)" "$(echo "$v" | col 3)" \
      "$(echo "$v" | col 4)" "$(echo "$v" | col 5)"
  done
done
echo "(vkcube --present_mode 0 for $secs s per run, fps_limit_method=$method, medians of $rounds rounds; metrics by steadyhud analyze)"
