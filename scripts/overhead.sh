#!/usr/bin/env bash
# Overhead of the steadyhud layer on vkcube: FPS without any layer, with
# steadyhud (HUD hidden), steadyhud (HUD shown) and MangoHud (when installed),
# in interleaved rounds so machine noise hits every mode alike.
#
# usage: [MODES="..."] scripts/overhead.sh [FRAMES per run, default 3000] [ROUNDS, default 3]
# MODES picks and orders the modes (the first is the base of the ratios):
# none, hidden, shown, mangohud, and counters-off / counters-on (HUD
# hidden, statistics counters off / on: issue 5's < 1% goal), e.g.
#   MODES="counters-off counters-on" scripts/overhead.sh 3000 9
# Runs under a private Xvfb when $DISPLAY is unset. Prints the median FPS of
# each mode, its ratio to the no-layer run, and the CPU time per frame (on
# lavapipe the GPU work is CPU work too). Goals: hidden >= 0.98,
# shown >= 0.90. HUD hidden/shown is set with STEADYHUD_CONFIG=hud_hidden=...
set -euo pipefail
cd "$(dirname "$0")/.."

frames=${1:-3000}
rounds=${2:-3}

command -v vkcube >/dev/null || { echo "overhead.sh: vkcube not found (apt-get install vulkan-tools)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "overhead.sh: /usr/bin/time not found (apt-get install time)" >&2; exit 2; }

cargo build --release --lib --quiet
lib="$PWD/target/release/libsteadyhud.so"
[ -f "$lib" ] || { echo "overhead.sh: $lib not built" >&2; exit 2; }

work=$(mktemp -d)
xvfb_pid=""
cleanup() {
  [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The layer as an implicit layer in a private XDG_DATA_HOME (the loader
# ignores VK_IMPLICIT_LAYER_PATH for implicit layers).
mkdir -p "$work/data/vulkan/implicit_layer.d" "$work/logs" "$work/run"
chmod 700 "$work/run"
sed "s|\"library_path\": *\"[^\"]*\"|\"library_path\": \"$lib\"|" \
  layer-manifest/VK_LAYER_STEADYHUD_overlay.json \
  > "$work/data/vulkan/implicit_layer.d/VK_LAYER_STEADYHUD_overlay.json"
export XDG_DATA_HOME="$work/data"
export XDG_RUNTIME_DIR="$work/run"
export XDG_CONFIG_HOME="$work/config"   # no user config file leaks in
export STEADYHUD_LOG_DIR="$work/logs"

if [ -z "${DISPLAY:-}" ]; then
  command -v Xvfb >/dev/null || { echo "overhead.sh: no DISPLAY and no Xvfb" >&2; exit 2; }
  Xvfb -displayfd 4 -screen 0 1280x1024x24 -nolisten tcp 4>"$work/display" 2>/dev/null &
  xvfb_pid=$!
  for _ in $(seq 100); do [ -s "$work/display" ] && break; sleep 0.1; done
  [ -s "$work/display" ] || { echo "overhead.sh: Xvfb did not start" >&2; exit 2; }
  export DISPLAY=":$(tr -d '[:space:]' < "$work/display")"
fi

if [ -n "${MODES:-}" ]; then
  read -ra modes <<< "$MODES"
else
  modes=(none hidden shown)
  if command -v mangohud >/dev/null || ls /usr/share/vulkan/implicit_layer.d/MangoHud* >/dev/null 2>&1; then
    modes+=(mangohud)
  fi
fi

# One vkcube run in MODE; prints its FPS (frames / wall seconds) and the
# CPU time per frame in ms (user + system of all its threads, lavapipe's
# rasteriser threads included; less sensitive than FPS to other load).
run() {
  local mode=$1 env=()
  case $mode in
    none)     env=(DISABLE_STEADYHUD=1) ;;
    hidden)   env=(STEADYHUD=1 STEADYHUD_CONFIG="hud_hidden=1") ;;
    shown)    env=(STEADYHUD=1 STEADYHUD_CONFIG="hud_hidden=0") ;;
    mangohud) env=(DISABLE_STEADYHUD=1 MANGOHUD=1) ;;
    counters-off) env=(STEADYHUD=1 STEADYHUD_CONFIG="hud_hidden=1,counters=0") ;;
    counters-on)  env=(STEADYHUD=1 STEADYHUD_CONFIG="hud_hidden=1,counters=1") ;;
    *) echo "overhead.sh: unknown mode $mode" >&2; exit 2 ;;
  esac
  local t0 t1 cpu
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
  for m in "${modes[@]}"; do
    read -r fps cpu < <(run "$m")
    results[$m]+="$fps "
    cpus[$m]+="$cpu "
    printf 'round %d  %-12s %8.1f fps %8.3f CPU ms/frame\n' "$r" "$m" "$fps" "$cpu"
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

base=$(echo "${results[${modes[0]}]}" | median)
cbase=$(echo "${cpus[${modes[0]}]}" | median)
echo
printf '%-12s %10s %8s %14s %10s   (vkcube --c %d, median of %d rounds; ratio to %s)\n' \
  mode fps ratio "CPU ms/frame" "+CPU ms" "$frames" "$rounds" "${modes[0]}"
for m in "${modes[@]}"; do
  med=$(echo "${results[$m]}" | median)
  cmed=$(echo "${cpus[$m]}" | median)
  printf '%-12s %10.1f %8.3f %14.3f %10.3f\n' "$m" "$med" \
    "$(awk -v a="$med" -v b="$base" 'BEGIN { print a / b }')" "$cmed" \
    "$(awk -v a="$cmed" -v b="$cbase" 'BEGIN { print a - b }')"
done
