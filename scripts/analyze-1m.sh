#!/usr/bin/env bash
# Measures `steadyhud analyze` end to end on 1,000,000-frame logs (plain ms,
# PresentMon-like CSV, steadyhud session log): wall time, peak RSS from
# /usr/bin/time -v, and peak RSS per frame (the issue 16 goal: <= 24 B).
# Usage: scripts/analyze-1m.sh [N]  (default 1000000)
#   10 M frames: scripts/analyze-1m.sh 10000000 (the PresentMon file is
#   skipped above 2 M frames: it would be 1.1 GiB; FORMATS="..." to choose)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
if [ "$n" -gt 2000000 ]; then
  formats=${FORMATS:-"plain.txt session.csv"}
else
  formats=${FORMATS:-"plain.txt presentmon.csv session.csv"}
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo build --release --quiet --bin steadyhud
bin=target/release/steadyhud

# Frame times around 16.7 ms with jitter and a stutter every 997 frames.
python3 - "$n" "$tmp" "$formats" <<'PY'
import random, sys
n, d, formats = int(sys.argv[1]), sys.argv[2], sys.argv[3].split()
random.seed(1)
ft = [50.0 if i % 997 == 500 else round(16.667 + random.uniform(-1.5, 1.5), 4) for i in range(n)]
if "plain.txt" in formats:
  with open(f"{d}/plain.txt", "w") as f:
    f.write("\n".join(f"{x}" for x in ft)); f.write("\n")
if "presentmon.csv" in formats:
  with open(f"{d}/presentmon.csv", "w") as f:
    f.write("Application,ProcessID,SwapChainAddress,Runtime,SyncInterval,PresentFlags,AllowsTearing,PresentMode,Dropped,TimeInSeconds,MsBetweenPresents,MsBetweenDisplayChange,MsInPresentAPI,MsUntilRenderComplete,MsUntilDisplayed\n")
    t = 0.0
    for i, x in enumerate(ft):
        t += x / 1000
        app, pid, sc = ("game.exe", 4242, "0x000000001AB0B4C0") if i % 50 else ("dwm.exe", 1268, "0x00000224B280A1C0")
        f.write(f"{app},{pid},{sc},DXGI,1,0,0,Hardware: Independent Flip,0,{t:.6f},{x:.4f},16.667,0.250,1.370,23.525\n")
if "session.csv" in formats:
  with open(f"{d}/session.csv", "w") as f:
    f.write("# steadyhud 0.1.0 session log\n# exe: game\nframe,present_ns,frametime_ms\n")
    t = 0
    for i, x in enumerate(ft):
        ns = round(x * 1e6); t += ns
        f.write(f"{i},{t},{ns // 1000000}.{ns % 1000000:06d}\n")
PY

for f in $formats; do
  size=$(du -m "$tmp/$f" | cut -f1)
  /usr/bin/time -v "$bin" analyze "$tmp/$f" --json >"$tmp/out.json" 2>"$tmp/time.txt"
  wall=$(grep 'Elapsed (wall clock)' "$tmp/time.txt" | awk '{print $NF}')
  rss=$(grep 'Maximum resident set size' "$tmp/time.txt" | awk '{print $NF}')
  frames=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['frames'])" "$tmp/out.json")
  printf '%-15s %4s MiB  frames %-8s wall %-8s max RSS %6.1f MiB  %5.1f B/frame\n' "$f" "$size" "$frames" "$wall" \
    "$(echo "$rss/1024" | bc -l)" "$(echo "$rss*1024/$frames" | bc -l)"
done
