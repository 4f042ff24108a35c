#!/usr/bin/env bash
# The main job in one command: build steadyhud, run a real Vulkan app (vkcube
# by default) with the HUD on, take a screenshot while it runs, and analyse
# the session log it leaves. Without a display it starts its own Xvfb, so on
# a machine with no GPU it runs on Mesa's lavapipe.
#
#   scripts/demo.sh                 # vkcube, 1500 frames
#   scripts/demo.sh -- vkd3d-gears  # any Vulkan program (stopped after 10 s)
#
# Output goes to target/demo/: the session log (.csv, .summary.json), the
# screenshot (screenshot.png) and the HTML report (report.html).
set -euo pipefail
cd "$(dirname "$0")/.."

out=${STEADYHUD_DEMO_OUT:-target/demo}
app=(vkcube --c 1500)
if [ "${1:-}" = "--" ]; then shift; app=("$@"); fi

cargo build --release --quiet
bin=target/release/steadyhud
mkdir -p "$out"
rm -f "$out"/*.csv "$out"/*.summary.json

cleanup() { [ -n "${xvfb_pid:-}" ] && kill "$xvfb_pid" 2>/dev/null; [ -n "${rt:-}" ] && rm -rf "$rt"; }
trap cleanup EXIT
if [ -z "${DISPLAY:-}" ]; then
  rt=$(mktemp -d); chmod 700 "$rt"; export XDG_RUNTIME_DIR=$rt
  for n in $(seq 70 99); do [ -e /tmp/.X11-unix/X$n ] || [ -e /tmp/.X$n-lock ] || break; done
  Xvfb ":$n" -screen 0 1280x720x24 -nolisten tcp >/dev/null 2>&1 & xvfb_pid=$!
  export DISPLAY=":$n"
  for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
  echo "demo: no display, started Xvfb on $DISPLAY (Vulkan: $(vulkaninfo --summary 2>/dev/null | grep -m1 deviceName | sed 's/.*= //'))"
fi

echo "demo: $bin run -- ${app[*]}"
"$bin" run --log-dir "$out" -- "${app[@]}" > "$out/app.log" 2>&1 & run_pid=$!
sleep 3
if command -v import >/dev/null; then
  import -window root "$out/screenshot.png" && echo "demo: screenshot $out/screenshot.png"
fi
# a program that does not end by itself is stopped after 10 s
for _ in $(seq 100); do kill -0 "$run_pid" 2>/dev/null || break; sleep 0.1; done
kill -TERM "$run_pid" 2>/dev/null || true
wait "$run_pid" || true

log=$(ls -t "$out"/*.csv 2>/dev/null | head -n1)
if [ -z "$log" ]; then echo "demo: no session log in $out (see $out/app.log)" >&2; exit 1; fi
"$bin" analyze "$log"
"$bin" report "$log" -o "$out/report.html" 2>/dev/null && echo "demo: report $out/report.html"
