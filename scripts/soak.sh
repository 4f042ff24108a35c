#!/usr/bin/env bash
# Soak test of the layer (issues 7 and 52): the test app presents FRAMES
# frames (default 1,000,000) uncapped, or at a fixed cap (SOAK_FPS=N: the
# layer's frame cap, fps_limit=N), with steadyhud and its HUD shown, under
# a private Xvfb on lavapipe, while a client asks `steadyhud ctl status`
# every second (SOAK_CTL=0: none). Samples the app's resident memory
# (VmRSS) every second, then reports RSS growth after the first minute
# (the mean of 60-65 s against the largest sample after it and the mean of
# the last 10 s; on runs shorter than 4 minutes from a quarter of the run),
# the older first-vs-last-window figure, ring overflows (summary JSON), the
# summary upkeep's cost (its periodic rewrites while the app ran, from the
# summary's `summary_upkeep`) and whether every frame is in the log (log
# rows == presents - 1). Exits 1 if a frame is missing, the app fails, a
# ring overflow happened or RSS grew by more than SOAK_MAX_GROWTH_KIB
# (default 1024) after the first minute.
#
#   scripts/soak.sh [FRAMES]         SOAK_SIZE=WxH (default 64x64)
#                                    SOAK_FPS=N (cap; FRAMES = N x SOAK_SECONDS
#                                    when SOAK_SECONDS is set)
#                                    SOAK_LIB=PATH SOAK_APP=PATH (e.g. the
#                                    i686 build: SOAK_ARCH=i686 picks
#                                    target/i686/i686-unknown-linux-gnu/release)
#                                    SOAK_CLI=PATH (the steadyhud for ctl and analyze)
#                                    SOAK_CONFIG=KEY=V,... more config
#                                    SOAK_APP_FPS=N: the app paces itself
#                                    SOAK_LAYER_OFF=1: DISABLE_STEADYHUD=1 (a baseline)
#                                    SOAK_NO_BUILD=1 uses what is built
#                                    SOAK_KEEP=1 keeps the temp dir
#                                    (a private Xvfb unless DISPLAY is set)
#
# Release build. Not part of `cargo test` (minutes to hours on lavapipe).
set -euo pipefail
fps="${SOAK_FPS:-0}"
if [ -n "${SOAK_SECONDS:-}" ] && [ "$fps" != 0 ]; then
    frames="${1:-$((fps * SOAK_SECONDS))}"
else
    frames="${1:-${SOAK_FRAMES:-1000000}}"
fi
size="${SOAK_SIZE:-64x64}"
max_growth_kib="${SOAK_MAX_GROWTH_KIB:-1024}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

[ "${SOAK_NO_BUILD:-0}" = 1 ] || cargo build --release --lib --bin steadyhud --bin steadyhud-testapp >&2
out="$root/target/release"
[ "${SOAK_ARCH:-}" = i686 ] && out="$root/target/i686/i686-unknown-linux-gnu/release"
lib="${SOAK_LIB:-$out/libsteadyhud.so}"
app="${SOAK_APP:-$out/steadyhud-testapp}"
cli="${SOAK_CLI:-$root/target/release/steadyhud}"

. scripts/layer-env.sh
app_pid=""
ctl_pid=""
on_exit() {
    [ -n "$app_pid" ] && kill "$app_pid" 2>/dev/null || true
    [ -n "$ctl_pid" ] && kill "$ctl_pid" 2>/dev/null || true
}
# Exported: the EXIT trap that reads it runs after layer_env returns.
export LAYER_ENV_KEEP="${SOAK_KEEP:-0}"
LAYER_ENV_SCREEN=320x240x24 layer_env soak "$lib"
tmp=$work
export STEADYHUD=1
export STEADYHUD_CONFIG="hud_hidden=0"
[ "$fps" != 0 ] && STEADYHUD_CONFIG="$STEADYHUD_CONFIG,fps_limit=$fps"
[ -n "${SOAK_CONFIG:-}" ] && STEADYHUD_CONFIG="$STEADYHUD_CONFIG,$SOAK_CONFIG"
unset DISABLE_STEADYHUD || true

pace="uncapped"
[ "$fps" != 0 ] && pace="capped at $fps fps"
echo "soak: $frames frames $pace, ${size}, HUD shown, ctl status every second: ${SOAK_CTL:-1}, $lib, DISPLAY $DISPLAY" >&2
start=$(date +%s.%N)
pacing=(--uncapped)
# SOAK_APP_FPS=N: the app paces itself at N fps (no frame cap of ours).
[ -n "${SOAK_APP_FPS:-}" ] && pacing=(--interval "$(awk -v f="$SOAK_APP_FPS" 'BEGIN { printf "%.6fms", 1000 / f }')")
[ "${SOAK_LAYER_OFF:-0}" = 1 ] && export DISABLE_STEADYHUD=1
"$app" --frames "$frames" "${pacing[@]}" --size "$size" >"$tmp/app.out" 2>"$tmp/app.err" &
app_pid=$!
if [ "${SOAK_CTL:-1}" = 1 ]; then
    (
        asked=0 answered=0
        while kill -0 "$app_pid" 2>/dev/null; do
            asked=$((asked + 1))
            "$cli" ctl --pid "$app_pid" status >/dev/null 2>&1 && answered=$((answered + 1))
            echo "$asked $answered" >"$tmp/ctl"
            sleep 1
        done
    ) &
    ctl_pid=$!
fi
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
[ -n "$ctl_pid" ] && { wait "$ctl_pid" 2>/dev/null || true; ctl_pid=""; }

presented=$(sed -n 's/^testapp: presented \([0-9]*\) frames$/\1/p' "$tmp/app.out")
csv=$(ls "$tmp"/logs/*.csv 2>/dev/null | head -n 1 || true)
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

growth=$(awk -v start="$start" -v end="$end" -v presented="$presented" '
    { t[NR] = $1 - start; r[NR] = $2 }
    END {
        n = NR; if (n == 0) { print "none"; exit }
        dur = end - start
        # After the first minute (a quarter of a run under 4 minutes).
        base = (dur >= 240) ? 60 : dur / 4
        for (i = 1; i <= n; i++) {
            if (t[i] >= base && t[i] < base + 5) { bs += r[i]; bc++ }
            if (t[i] >= base + 5 && r[i] > max) max = r[i]
            if (t[i] >= t[n] - 10) { ls += r[i]; lc++ }
        }
        if (bc == 0 || lc == 0 || max == 0) { print "none"; exit }
        b = bs / bc
        printf "%.0f %.0f %.0f %.0f\n", base, b, max - b, ls / lc - b
    }' "$tmp/rss")
if [ "$growth" = none ]; then
    echo "soak: run too short for the growth after the first minute"
else
    read -r gbase gfirst gmax glast <<<"$growth"
    echo "soak: RSS after the first minute: mean of ${gbase}-$((gbase + 5)) s $((gfirst / 1024)) MiB; largest later sample +${gmax} KiB, mean of the last 10 s +${glast} KiB"
    if [ "$gmax" -gt "$max_growth_kib" ]; then echo "soak: RSS GREW by more than $max_growth_kib KiB after the first minute"; fail=1; fi
fi
[ -f "$tmp/ctl" ] && echo "soak: ctl status asked $(cut -d' ' -f1 "$tmp/ctl") times, answered $(cut -d' ' -f2 "$tmp/ctl")"
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
