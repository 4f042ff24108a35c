#!/usr/bin/env bash
# What the layer adds to vkcube's frame, counted in instructions (valgrind
# callgrind): unlike FPS this does not move with machine noise or with the
# order of the runs, and on lavapipe a frame's work (the app, the driver,
# the rasteriser) is all CPU instructions, so it is the frame's cost.
#
# usage: [MODES="..."] scripts/instructions.sh [LOW frames, default 100] [HIGH frames, default 500]
# MODES as in overhead.sh (default "counters-off counters-on"; the first is
# the base; MODES="counters-on gpu-on" gives the cost of GPU timing). Each mode runs vkcube under callgrind for LOW and for HIGH
# frames; the difference divided by HIGH−LOW is the cost of one frame with
# start-up and shutdown cancelled out. Prints per mode:
#   instr/frame   all user-space instructions of the process per frame
#   +vs base      its difference to the first mode, and that as % of the base frame
#   layer/frame   instructions executed in libsteadyhud.so's own code per frame
#                 (self cost; the libc calls it makes are in the total only)
# Needs valgrind (apt-get install valgrind). About 20 s per run on lavapipe;
# two runs at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/layer-env.sh

low=${1:-100}
high=${2:-500}
((high > low)) || { echo "instructions.sh: HIGH ($high) must exceed LOW ($low)" >&2; exit 2; }
command -v vkcube >/dev/null || { echo "instructions.sh: vkcube not found (apt-get install vulkan-tools)" >&2; exit 2; }
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null ||
  { echo "instructions.sh: valgrind not found (apt-get install valgrind)" >&2; exit 2; }

read -ra modes <<< "${MODES:-counters-off counters-on}"
for m in "${modes[@]}"; do mode_env "$m" >/dev/null || exit 2; done

# The `profiling` profile: the release code with line tables (the shipped
# `release` library is stripped, which would leave callgrind no names).
cargo build --profile profiling -p steadyhud-layer --lib --quiet
layer_env instructions "$PWD/target/profiling/libsteadyhud.so"

# One callgrind run: MODE FRAMES -> $work/MODE.FRAMES.out
cg() {
  local env
  read -ra env < <(mode_env "$1")
  env "${env[@]}" valgrind --tool=callgrind --smc-check=all-non-file \
    --callgrind-out-file="$work/$1.$2.out" vkcube --c "$2" --present_mode 0 \
    >"$work/$1.$2.log" 2>&1 || { echo "instructions.sh: vkcube under callgrind failed ($1, $2 frames):" >&2
      tail -20 "$work/$1.$2.log" >&2; return 1; }
}
total() { sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$work/$1.log"; }
layer() {
  callgrind_annotate --threshold=100 --auto=no "$work/$1.out" 2>/dev/null |
    awk '/libsteadyhud\.so\]$/ { gsub(",", "", $1); s += $1 } END { print s + 0 }'
}

for m in "${modes[@]}"; do
  echo "instructions.sh: $m: $low and $high frames under callgrind" >&2
  cg "$m" "$low" & a=$!
  cg "$m" "$high" & b=$!
  wait "$a" && wait "$b" || exit 1
done

echo
printf '%-12s %14s %14s %9s %14s   (vkcube, frames %d..%d under callgrind; base %s)\n' \
  mode instr/frame "+vs base" "%" layer/frame "$low" "$high" "${modes[0]}"
base=""
for m in "${modes[@]}"; do
  per=$(( ($(total "$m.$high") - $(total "$m.$low")) / (high - low) ))
  own=$(( ($(layer "$m.$high") - $(layer "$m.$low")) / (high - low) ))
  [ -n "$base" ] || base=$per
  printf '%-12s %14d %+14d %+8.3f%% %14d\n' "$m" "$per" $((per - base)) \
    "$(awk -v d=$((per - base)) -v b="$base" 'BEGIN { print 100 * d / b }')" "$own"
done
