#!/usr/bin/env bash
# What displayed-frame timing (config `display_feedback`: Wayland
# presentation feedback on the game's surface) costs a Wayland game, per
# present, on headless Weston 10.
#
# Vulkan: the test app (test-programs/testapp) on a Wayland window, MAILBOX,
# uncapped (presents never wait for the compositor), 1200 presents, HUD
# hidden, no readings; the layer's own time per present is the log's
# `in_present_ms - present_ms` (our hook minus the driver's present:
# counters on). Its median over presents 60.., feedback on against off, in
# ABBA rounds (odd rounds on-off, even rounds off-on), and the median of
# the rounds. Also each run's shown / dropped / unknown rows with feedback
# on (the program reads its socket every frame, so answers come).
#
# GL: the GL test program (test-programs/gltest, GLES 3, swap interval 0) with
# the GL library preloaded, its own median time per eglSwapBuffers
# (`--time-swaps`: our hook plus llvmpipe's swap), feedback on against off,
# in the same ABBA rounds.
#
# First displayed frame: one FIFO run (120 presents, paced by Weston) with
# the program's own feedback (`--feedback-out`): the log's first row's
# display latency (present 1's, as the layer saw it) against the
# program's own reading of the same frame (its displayed time minus its
# clock read before the call), and the mean difference over every shown
# frame (the layer's present time is taken inside the hook, a few µs
# after the program's).
#
# usage: scripts/display-cost.sh [ROUNDS, default 4]   (needs weston)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-4}
command -v weston >/dev/null || { echo "display-cost: no weston (apt-get install weston)" >&2; exit 2; }
cargo build --release --quiet -p steadyhud-layer -p steadyhud-testapp -p steadyhud-gl -p steadyhud-gltest
source scripts/layer-env.sh
layer_env display-cost "$PWD/target/release/libsteadyhud.so"
gl=$PWD/target/release/libsteadyhud_gl.so
app=$PWD/target/release/steadyhud-testapp
gltest=$PWD/target/release/steadyhud-gltest

weston --backend=headless-backend.so --socket=wayland-cost --idle-time=0 --no-config \
  --width=640 --height=480 >"$work/weston.log" 2>&1 &
weston_pid=$!
on_exit() { kill "$weston_pid" 2>/dev/null || true; }
for _ in $(seq 100); do [ -S "$XDG_RUNTIME_DIR/wayland-cost" ] && break; sleep 0.1; done
[ -S "$XDG_RUNTIME_DIR/wayland-cost" ] || { echo "display-cost: weston did not start" >&2; cat "$work/weston.log" >&2; exit 2; }
export WAYLAND_DISPLAY=wayland-cost

# vulkan MODE ROUND: one run of the test app; prints its log's path.
vulkan() {
  local dir="$work/logs/vk-$1-$2"
  mkdir -p "$dir"
  STEADYHUD=1 STEADYHUD_LOG_DIR="$dir" \
    STEADYHUD_CONFIG="display_feedback=$([ "$1" = on ] && echo 1 || echo 0),hud_hidden=1,sensor_hz=0" \
    "$app" --wayland --present-mode mailbox --uncapped --frames 1199 >/dev/null
  ls "$dir"/*.csv
}

# gl MODE ROUND: one run of the GL test program; prints its median swap ns.
gl_run() {
  STEADYHUD_LOG_DIR="$work/logs" LD_PRELOAD="$gl" \
    STEADYHUD_CONFIG="display_feedback=$([ "$1" = on ] && echo 1 || echo 0),hud_hidden=1,sensor_hz=0" \
    "$gltest" --wayland --swap-interval 0 --fps=0 --frames 1200 --time-swaps 2>&1 |
    sed -n 's/^gltest: swap_ns median \([0-9]*\) .*/\1/p'
}

vk_logs=()
gl_out=()
for r in $(seq "$rounds"); do
  if [ $((r % 2)) = 1 ]; then order="on off"; else order="off on"; fi
  for m in $order; do
    vk_logs+=("$m $(vulkan "$m" "$r")")
    gl_out+=("$m $(gl_run "$m" "$r")")
  done
done

python3 - "${vk_logs[@]}" <<'EOF'
import csv, statistics, sys
per = {"on": [], "off": []}
for arg in sys.argv[1:]:
    mode, path = arg.split(" ", 1)
    rows = [r for r in csv.reader(l for l in open(path) if not l.startswith("#"))]
    head, body = rows[0], rows[1:]
    ip, p = head.index("in_present_ms"), head.index("present_ms")
    own = [float(r[ip]) - float(r[p]) for r in body[60:] if r and r[0].isdigit()]
    per[mode].append(statistics.median(own) * 1000)
    if "display_source" in head:
        s, d = head.index("display_source"), head.index("displayed_ns")
        shown = sum(1 for r in body if r[s] and r[d])
        dropped = sum(1 for r in body if r[s] and not r[d])
        unknown = sum(1 for r in body if not r[s])
        print(f"vulkan feedback on: {shown} shown, {dropped} dropped, {unknown} unknown of {len(body)} rows")
for m in ("off", "on"):
    print(f"vulkan, our hook per present, feedback {m}: medians per round (us) "
          + " ".join(f"{v:.2f}" for v in per[m]) + f"; median {statistics.median(per[m]):.2f}")
print(f"vulkan: feedback adds {statistics.median(per['on']) - statistics.median(per['off']):+.2f} us per present")
EOF
python3 - "${gl_out[@]}" <<'EOF'
import statistics, sys
per = {"on": [], "off": []}
for arg in sys.argv[1:]:
    mode, ns = arg.split(" ", 1)
    per[mode].append(int(ns) / 1000)
for m in ("off", "on"):
    print(f"gl, whole eglSwapBuffers, feedback {m}: medians per round (us) "
          + " ".join(f"{v:.1f}" for v in per[m]) + f"; median {statistics.median(per[m]):.1f}")
print(f"gl: feedback adds {statistics.median(per['on']) - statistics.median(per['off']):+.1f} us per swap")
EOF

dir="$work/logs/fifo"
mkdir -p "$dir"
STEADYHUD=1 STEADYHUD_LOG_DIR="$dir" STEADYHUD_CONFIG="hud_hidden=1,sensor_hz=0" \
  "$app" --wayland --present-mode fifo --uncapped --frames 119 --feedback-out "$work/own.csv" >/dev/null 2>&1
python3 - "$(ls "$dir"/*.csv)" "$work/own.csv" <<'EOF2'
import csv, statistics, sys
log = [r for r in csv.reader(l for l in open(sys.argv[1]) if not l.startswith("#"))]
head, body = log[0], [r for r in log[1:] if r and r[0].isdigit()]
own = list(csv.DictReader(open(sys.argv[2])))
lat = head.index("display_latency_ms")
pairs = [(float(r[lat]), (int(own[k + 1]["displayed_ns"]) - int(own[k + 1]["present_ns"])) / 1e6)
         for k, r in enumerate(body) if r[lat] and own[k + 1]["feedback"] == "presented"]
first = pairs[0]
print(f"first displayed frame (row 0, present 1): latency {first[0]:.3f} ms in the log, "
      f"{first[1]:.3f} ms by the program's own reading ({(first[1] - first[0]) * 1000:+.1f} us)")
diff = [(o - l) * 1000 for l, o in pairs]
print(f"every shown frame ({len(pairs)} of {len(body)} rows): program minus log latency "
      f"median {statistics.median(diff):+.1f} us, min {min(diff):+.1f}, max {max(diff):+.1f}; "
      f"latency median {statistics.median(l for l, _ in pairs):.2f} ms")
EOF2
