#!/usr/bin/env bash
# What `steadyhud export` costs a game: the test app with the layer at 144
# fps, its CPU (user + system, /proc/PID/stat) from its 2nd to its 28th
# second, and that of its steadyhud-* threads (which answer the exporter),
# without an exporter and with one scraped every second (curl, as
# Prometheus would), in ABBA rounds; and the exporter's own CPU.
#
#   scripts/export-cost.sh [ROUNDS, default 4]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/layer-env.sh
rounds=${1:-4}
command -v curl >/dev/null || { echo "export-cost: curl missing (apt-get install curl)" >&2; exit 2; }
cargo build --release --quiet
layer_env export-cost "$PWD/target/release/libsteadyhud.so"
tick=$(getconf CLK_TCK)
port=19464

# cpu PID: user + system clock ticks of PID so far.
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# ours PID: the same for its threads named steadyhud-* (the layer's: the
# analysis thread answers the exporter).
ours() {
  local t sum=0
  for t in /proc/"$1"/task/*; do
    case $(cat "$t/comm" 2>/dev/null) in
      steadyhud-testa*) ;; # the test app's own main thread
      steadyhud-*) sum=$((sum + $(awk '{ print $14 + $15 }' "$t/stat"))) ;;
    esac
  done
  echo "$sum"
}

# one MODE: prints the game's CPU % of one core over 26 s (and the exporter's).
one() {
  local mode=$1 exporter="" scraper=""
  STEADYHUD=1 target/release/steadyhud-testapp --frames 4320 --interval 6.944ms >/dev/null 2>&1 &
  local game=$!
  if [ "$mode" = scraped ]; then
    target/release/steadyhud export --listen "127.0.0.1:$port" 2>/dev/null &
    exporter=$!
    (while sleep 1; do curl -s -o /dev/null "http://127.0.0.1:$port/metrics" || true; done) &
    scraper=$!
  fi
  sleep 2
  local g0 e0=0 g1 e1=0 l0 l1
  g0=$(cpu "$game")
  l0=$(ours "$game")
  [ -n "$exporter" ] && e0=$(cpu "$exporter")
  sleep 26
  g1=$(cpu "$game")
  l1=$(ours "$game")
  [ -n "$exporter" ] && e1=$(cpu "$exporter")
  [ -n "$scraper" ] && kill "$scraper" 2>/dev/null
  [ -n "$exporter" ] && kill "$exporter" 2>/dev/null
  wait "$game" 2>/dev/null || true
  awk -v m="$mode" -v g=$((g1 - g0)) -v l=$((l1 - l0)) -v e=$((e1 - e0)) -v t="$tick" \
    'BEGIN { printf "%-7s game %.2f %% (its steadyhud threads %.3f %%) exporter %.3f %%\n", m, g / t / 26 * 100, l / t / 26 * 100, e / t / 26 * 100 }'
}

echo "export-cost: the test app at 144 fps with the layer, CPU % of one core over 26 s, $rounds ABBA rounds"
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then order=(plain scraped); else order=(scraped plain); fi
  for m in "${order[@]}"; do one "$m"; done
done
