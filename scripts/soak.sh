#!/usr/bin/env bash
# Soak test of the layer (issue 7): the test app presents FRAMES frames
# uncapped (default 1,000,000) with steadyhud and its HUD on, under a
# private Xvfb on lavapipe. Samples the app's resident memory (VmRSS) every
# second, then reports RSS growth (the first minute after a 10 s warm-up vs
# the last minute; on runs shorter than 4 minutes quarter-length windows), ring overflows
# (summary JSON), the summary upkeep's cost (its periodic rewrites while the
# app ran, from the summary's `summary_upkeep`) and whether every frame is in the log
# (log rows == presents - 1). Exits 1 if a frame is missing, the app fails
# or a ring overflow happened.
#
#   scripts/soak.sh [FRAMES]         SOAK_SIZE=WxH (default 64x64)
#                                    SOAK_KEEP=1 keeps the temp dir
#                                    (a private Xvfb unless DISPLAY is set)
#
# Release build. Not part of `cargo test` (minutes to hours on lavapipe).
set -euo pipefail
frames="${1:-1000000}"
size="${SOAK_SIZE:-64x64}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

cargo build --release --lib --bin steadyhud --bin steadyhud-testapp >&2
lib="$root/target/release/libsteadyhud.so"
app="$root/target/release/steadyhud-testapp"
cli="$root/target/release/steadyhud"

. scripts/layer-env.sh
app_pid=""
on_exit() { [ -n "$app_pid" ] && kill "$app_pid" 2>/dev/null || true; }
LAYER_ENV_SCREEN=320x240x24 LAYER_ENV_KEEP="${SOAK_KEEP:-0}" layer_env soak "$lib"
tmp=$work
export STEADYHUD=1
unset DISABLE_STEADYHUD || true

echo "soak: $frames frames uncapped, ${size}, HUD on, DISPLAY $DISPLAY" >&2
start=$(date +%s.%N)
"$app" --frames "$frames" --uncapped --size "$size" >"$tmp/app.out" 2>"$tmp/app.err" &
app_pid=$!
: >"$tmp/rss"
while kill -0 "$app_pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$app_pid/status" 2>/dev/null || true)
    [ -n "$rss" ] && echo "$(date +%s.%N) $rss" >>"$tmp/rss"
    sleep 1
done
rc=0
wait "$app_pid" || rc=$?
app_pid=""
end=$(date +%s.%N)

presented=$(sed -n 's/^testapp: presented \([0-9]*\) frames$/\1/p' "$tmp/app.out")
csv=$(ls "$tmp"/logs/*.csv 2>/dev/null | head -n 1)
summary="${csv%.csv}.summary.json"
fail=0
[ "$rc" = 0 ] || { echo "soak: the app exited with $rc"; tail -n 20 "$tmp/app.err"; fail=1; }
[ -n "$presented" ] || { echo "soak: no 'presented' line from the app"; presented=0; fail=1; }
if [ -z "$csv" ]; then
    echo "soak: no session log"; fail=1; rows=0; overflows="?"; sframes="?"
else
    rows=$("$cli" analyze "$csv" --json | sed -n 's/^ *"frames": *\([0-9]*\),*$/\1/p' | head -n 1)
    overflows=$(sed -n 's/.*"ring_overflows": *\([0-9]*\).*/\1/p' "$summary" 2>/dev/null | head -n 1)
    sframes=$(sed -n 's/.*"frames": *\([0-9]*\).*/\1/p' "$summary" 2>/dev/null | head -n 1)
fi

awk -v start="$start" -v end="$end" -v presented="$presented" '
    { t[NR] = $1 - start; r[NR] = $2 }
    END {
        n = NR; if (n == 0) { print "soak: no RSS samples"; exit }
        dur = end - start
        # Skip the start-up (Vulkan, HUD set-up): the first 10 s, or the
        # first 10 % of a shorter run.
        warm = (dur >= 100) ? 10 : dur / 10
        win = (dur >= 240) ? 60 : dur / 4
        for (i = 1; i <= n; i++) {
            if (t[i] >= warm && t[i] <= warm + win) { fs += r[i]; fc++ }
            if (t[i] >= t[n] - win) { ls += r[i]; lc++ }
            if (r[i] > max) max = r[i]
        }
        if (fc == 0 || lc == 0) { print "soak: run too short for RSS windows"; exit }
        first = fs / fc; last = ls / lc
        printf "soak: %.0f s, %d presents, %.0f presents/s\n", dur, presented, presented / dur
        # Frames presented between the centres of the two windows (mean rate).
        between = presented * ((t[n] - win / 2) - (warm + win / 2)) / dur
        printf "soak: RSS from %.0f s for %.0f s mean %.1f MiB, last %.0f s mean %.1f MiB, growth %.1f MiB = %.1f bytes/frame over the %.0f frames between them, peak %.1f MiB, %d samples\n",
            warm, win, first / 1024, win, last / 1024, (last - first) / 1024,
            (between > 0) ? (last - first) * 1024 / between : 0, between, max / 1024, n
    }' "$tmp/rss"
echo "soak: log rows $rows, summary frames ${sframes:-?}, presents - 1 = $((presented - 1)), ring overflows ${overflows:-?}"
# Summary upkeep (issue 17): the periodic rewrites while the app ran.
if [ -f "$summary" ]; then
    writes=$(sed -n 's/.*"writes": *\([0-9]*\).*/\1/p' "$summary" | head -n 1)
    total=$(sed -n 's/.*"total_cpu_ms": *\([0-9.e+-]*\).*/\1/p' "$summary" | head -n 1)
    last=$(sed -n 's/.*"last_cpu_ms": *\([0-9.e+-]*\).*/\1/p' "$summary" | head -n 1)
    awk -v w="${writes:-0}" -v t="${total:-0}" -v l="${last:-0}" -v s="$start" -v e="$end" 'BEGIN {
        printf "soak: summary upkeep %d periodic writes, last %.1f ms CPU, total %.1f ms CPU = %.3f %% of one core over the run\n",
            w, l, t, 100 * t / 1000 / (e - s) }'
fi
if [ "${rows:-0}" != "$((presented - 1))" ]; then echo "soak: FRAMES MISSING from the log"; fail=1; fi
if [ "${overflows:-x}" != 0 ]; then echo "soak: ring overflows (or no summary)"; fail=1; fi
grep '^steadyhud:' "$tmp/app.err" | head -n 5 || true
[ "$fail" = 0 ] && echo "soak: OK"
exit "$fail"
