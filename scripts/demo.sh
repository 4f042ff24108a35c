#!/usr/bin/env bash
# The main job in one command: install what the machine lacks (Debian's
# lavapipe, vkcube, Xvfb, ImageMagick, a C compiler: scripts/setup.sh),
# build steadyhud, run a real Vulkan app (vkcube by default) with the HUD on
# for a fixed time, take a screenshot while it runs, check that the
# screenshot shows the HUD, and analyse the session log it leaves. Without a
# display it starts its own Xvfb, so on a machine with no GPU it runs on
# Mesa's lavapipe.
#
#   scripts/demo.sh                       # vkcube
#   scripts/demo.sh -- vkd3d-gears        # any Vulkan program that opens a window
#   scripts/demo.sh --update-docs         # also refresh docs/demo.png
#
# The app runs for STEADYHUD_DEMO_SECONDS (default 6) and the screenshot is
# taken a second before the end. A time, not a frame count: how many frames
# a machine draws in a second varies a hundredfold (vkcube --c 1500 ended
# before the screenshot on lavapipe, which left it black).
#
# Everything it writes goes to target/demo/ (STEADYHUD_DEMO_OUT): the
# session log (.csv, .summary.json), the screenshot (screenshot.png, the
# whole screen; the app's window alone in window.png), the HUD's corner with
# and without the layer (corner-*.png), the HTML report (report.html). The
# tracked tree is left as it was: only --update-docs (with the default app)
# copies the app's window to docs/demo.png, the picture the README shows.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${STEADYHUD_DEMO_OUT:-target/demo}
secs=${STEADYHUD_DEMO_SECONDS:-6}
app=(vkcube)
default_app=1
update_docs=0
if [ "${1:-}" = "--update-docs" ]; then
  update_docs=1
  shift
fi
if [ -n "${1:-}" ] && [ "$1" != "--" ]; then
  echo "demo: unknown argument $1 (usage: scripts/demo.sh [--update-docs] [-- PROGRAM ARGS])" >&2
  exit 2
fi
if [ "${1:-}" = "--" ]; then
  shift
  [ $# -gt 0 ] || { echo "demo: nothing after --: give a program to run" >&2; exit 2; }
  app=("$@"); default_app=0
fi
case $secs in '' | *[!0-9]* | 0 | 1) echo "demo: STEADYHUD_DEMO_SECONDS must be a whole number >= 2" >&2; exit 2 ;; esac
shot_at=$((secs - 1))

# What the build, the app, the screenshot and the HUD check need; then the
# build (the first one fetches and compiles every crate: a few minutes).
. scripts/setup.sh
need_rust demo
need_packages demo "${SETUP_BUILD[@]}" "${SETUP_DEMO[@]}"
echo "demo: building steadyhud (cargo build --release)"
cargo build --release
bin=target/release/steadyhud
mkdir -p "$out"
rm -f "$out"/*.csv "$out"/*.summary.json "$out"/screenshot.png "$out"/corner-*.png "$out"/window.png

cleanup() {
  for p in "${run_pid:-}" "${ref_pid:-}" "${xvfb_pid:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done
  [ -n "${rt:-}" ] && rm -rf "$rt"
  return 0
}
trap cleanup EXIT

if [ -z "${DISPLAY:-}" ]; then
  rt=$(mktemp -d); chmod 700 "$rt"; export XDG_RUNTIME_DIR=$rt
  # Other jobs on this machine start Xvfb servers too: a number can be taken
  # between the check and the start, so keep trying until our own server
  # answers (xdpyinfo alone would also answer for someone else's).
  for n in $(seq 70 99); do
    [ -e /tmp/.X11-unix/X$n ] || [ -e /tmp/.X$n-lock ] && continue
    Xvfb ":$n" -screen 0 1280x720x24 -nolisten tcp >/dev/null 2>&1 & xvfb_pid=$!
    for _ in $(seq 50); do
      kill -0 "$xvfb_pid" 2>/dev/null || break
      DISPLAY=":$n" xdpyinfo >/dev/null 2>&1 && break
      sleep 0.1
    done
    kill -0 "$xvfb_pid" 2>/dev/null && break
    xvfb_pid=
  done
  [ -n "${xvfb_pid:-}" ] || { echo "demo: could not start Xvfb on any of :70 to :99" >&2; exit 1; }
  export DISPLAY=":$n"
  echo "demo: no display, started Xvfb on $DISPLAY (Vulkan: $(vulkaninfo --summary 2>/dev/null | grep -m1 deviceName | sed 's/.*= //'))"
fi

# Viewable top-level windows, one id a line (without a window manager these
# are the apps' windows; with one, their frames).
toplevels() {
  xwininfo -root -children 2>/dev/null | awk '$1 ~ /^0x/ {print $1}' | while read -r id; do
    xwininfo -id "$id" 2>/dev/null | grep -q 'Map State: IsViewable' && echo "$id"
  done
  return 0
}

# "ID WxH+X+Y" of the largest window viewable now that was not in $1 (the
# list from before the app started): the app's window, wherever it was put.
# "- " and the whole screen when there is none.
app_window() {
  local id best="" best_area=0 w h x y geom=""
  for id in $(toplevels); do
    grep -qx "$id" <<<"$1" && continue
    read -r w h x y < <(xwininfo -id "$id" | awk '
      /Absolute upper-left X/ {x=$NF} /Absolute upper-left Y/ {y=$NF}
      /^ *Width:/ {w=$NF} /^ *Height:/ {h=$NF} END {print w, h, x, y}')
    if [ $((w * h)) -gt "$best_area" ]; then best=$id; best_area=$((w * h)); geom="${w}x${h}+${x}+${y}"; fi
  done
  if [ -n "$best" ]; then echo "$best $geom"; else echo "- $(xdpyinfo | awk '/dimensions:/ {print $2}')+0+0"; fi
}

# Stops a running app: first as a user would (Escape, which vkcube and most
# demos quit on, so the layer ends the session log with "# end: complete"
# and writes the final summary), then SIGTERM (through `steadyhud run`,
# which forwards it to the app: the log keeps every row flushed so far and
# the summary is marked incomplete), then SIGKILL.
stop_app() {
  local pid=$1 win=$2 what=$3 note=${4:-} _
  if [ "$win" != - ] && command -v xdotool >/dev/null; then
    xdotool windowfocus "$win" key Escape 2>/dev/null || true
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  if kill -0 "$pid" 2>/dev/null; then
    echo "demo: $what did not quit on Escape; stopping it with SIGTERM$note"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

# The HUD is checked in the corner it is drawn in: pin that corner (and that
# the HUD is shown and the log written) over whatever the user's config says;
# later STEADYHUD_CONFIG items win.
export STEADYHUD_CONFIG="${STEADYHUD_CONFIG:+$STEADYHUD_CONFIG,}position=top-left,hud_hidden=off,log=on"

# 1. The app with the layer, for $secs seconds; the screenshot a second
#    before the end, so that the HUD's numbers and graph cover seconds of
#    frames, not the start-up.
before=$(toplevels)
echo "demo: $bin run -- ${app[*]} (for $secs s)"
"$bin" run --log-dir "$out" -- "${app[@]}" > "$out/app.log" 2>&1 & run_pid=$!
sleep "$shot_at"
kill -0 "$run_pid" 2>/dev/null || echo "demo: ${app[0]} ended before the screenshot (see $out/app.log)" >&2
read -r win geom < <(app_window "$before")
import -window root "$out/screenshot.png"
convert "$out/screenshot.png" -crop "$geom" +repage "$out/window.png"
sleep 1
stop_app "$run_pid" "$win" "${app[0]}" " (its session log keeps the rows written so far; the summary is marked incomplete)"
run_pid=

# 2. The same app without the layer (run directly, and DISABLE_STEADYHUD in
#    case an installed copy is enabled), screenshots at the same time after
#    the start and one second later: the corner's reference, and how much the
#    app changes that corner by itself.
before=$(toplevels)
echo "demo: ${app[*]} without the layer, for the reference corner"
DISABLE_STEADYHUD=1 "${app[@]}" > "$out/app-without-layer.log" 2>&1 & ref_pid=$!
sleep "$shot_at"
read -r ref_win ref_geom < <(app_window "$before")
import -window root "$out/ref-1.png"
sleep 1
import -window root "$out/ref-2.png"
stop_app "$ref_pid" "$ref_win" "${app[0]} (without the layer)"
ref_pid=

# 3. The session log.
log=$(ls -t "$out"/*.csv 2>/dev/null | head -n1)
if [ -z "$log" ]; then echo "demo: no session log in $out (see $out/app.log)" >&2; exit 1; fi
"$bin" analyze "$log"
"$bin" report "$log" -o "$out/report.html" 2>/dev/null && echo "demo: report $out/report.html"

# 4. The HUD check, on the part of the window the HUD's panel always covers
#    (the panel is about 256x196 px, 10 px from the top-left corner, and
#    opaque): pixels the app left unchanged between its two screenshots
#    without the layer ("still" pixels) must mostly differ with the layer. A
#    plain difference would not do: vkcube's cube turns into that corner,
#    so the corner differs between any two moments, HUD or not. Xvfb's pixels
#    are exact, so 2 % of fuzz only absorbs rounding; the panel over black
#    (#0F0F14) still differs by more.
wxh() { local g=${1%%+*}; echo "${g%x*} ${g#*x}"; }
xy() { local g=${1#*+}; echo "${g%+*} ${g#*+}"; }
read -r w h < <(wxh "$geom"); read -r x y < <(xy "$geom")
read -r rw rh < <(wxh "$ref_geom"); read -r rx ry < <(xy "$ref_geom")
cw=$(( (w < rw ? w : rw) - 16 )); cw=$(( cw < 240 ? cw : 240 ))
ch=$(( (h < rh ? h : rh) - 16 )); ch=$(( ch < 180 ? ch : 180 ))
if [ "$win" = - ] || [ "$ref_win" = - ] || [ "$cw" -lt 16 ] || [ "$ch" -lt 16 ]; then
  echo "demo: FAIL: no window of ${app[0]} found on $DISPLAY (with the layer: $win $geom, without: $ref_win $ref_geom): did it fail to start or end early? See $out/app.log" >&2
  exit 1
fi
convert "$out/screenshot.png" -crop "${cw}x${ch}+$((x + 16))+$((y + 16))" +repage "$out/corner-with-layer.png"
convert "$out/ref-1.png" -crop "${cw}x${ch}+$((rx + 16))+$((ry + 16))" +repage "$out/corner-without-layer.png"
convert "$out/ref-2.png" -crop "${cw}x${ch}+$((rx + 16))+$((ry + 16))" +repage "$out/corner-without-layer-1s-later.png"
rm -f "$out"/ref-1.png "$out"/ref-2.png
# White where two pictures differ, black where they are the same.
diff_mask() {
  compare -fuzz 2% -metric AE "$1" "$2" -compose src -highlight-color white -lowlight-color black "$3" 2>/dev/null || true
}
diff_mask "$out/corner-with-layer.png" "$out/corner-without-layer.png" "$out/mask-layer.png"
diff_mask "$out/corner-without-layer.png" "$out/corner-without-layer-1s-later.png" "$out/mask-app.png"
# Shares of the corner: still pixels, and still pixels the layer changed.
still=$(convert "$out/mask-app.png" -negate -format '%[fx:mean]' info:)
changed=$(convert "$out/mask-layer.png" \( "$out/mask-app.png" -negate \) -compose multiply -composite -format '%[fx:mean]' info:)
rm -f "$out"/mask-*.png
hud_pct=$(awk -v s="$still" -v c="$changed" 'BEGIN {printf "%.0f", (s > 0 ? 100 * c / s : 0)}')
still_pct=$(awk -v s="$still" 'BEGIN {printf "%.0f", 100 * s}')
spread=$(convert "$out/window.png" -format '%[fx:standard_deviation]' info:)

echo "demo: screenshot $out/screenshot.png (app window $geom)"
echo "demo: HUD corner ${cw}x${ch}+16+16 of the window: $still_pct % of it still without the layer, $hud_pct % of those changed by the layer"
if ! awk -v s="$spread" 'BEGIN {exit !(s >= 0.01)}'; then
  echo "demo: FAIL: the screenshot is blank (one colour): the app drew nothing, or ended before it was taken; see $out/app.log" >&2
  exit 1
fi
# The tests are written so that a number that failed to come out fails them.
if ! [ "$still_pct" -ge 10 ]; then
  # An app that redraws that whole corner differently every second leaves
  # nothing to compare against: the numbers cannot tell, the picture can.
  echo "demo: cannot tell from the pixels whether the HUD is there (${app[0]} changes that corner by itself): look at $out/screenshot.png" >&2
  [ "$default_app" = 1 ] && exit 1
  exit 0
fi
if ! [ "$hud_pct" -ge 50 ]; then
  echo "demo: FAIL: no HUD in $out/screenshot.png: the layer changed only $hud_pct % of the window's top-left corner, where the HUD's panel covers nearly all of it (compare $out/corner-with-layer.png and $out/corner-without-layer.png; see $out/app.log)" >&2
  exit 1
fi
echo "demo: the HUD is in the screenshot"

# The README's picture: the app's window only, refreshed when asked and the
# default app passed the check (another app's picture is not what the
# README shows).
if [ "$update_docs" = 1 ] && [ "$default_app" = 0 ]; then
  echo "demo: --update-docs refreshes docs/demo.png only with the default app (vkcube); left as it is"
elif [ "$update_docs" = 1 ]; then
  convert "$out/window.png" -strip docs/demo.png
  echo "demo: copied the app's window to docs/demo.png ($(wc -c < docs/demo.png) bytes)"
fi
