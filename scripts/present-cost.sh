#!/usr/bin/env bash
# What a layer adds on the game's thread per vkQueuePresentKHR and
# vkQueueSubmit, and its threads' CPU share: steadyhud (HUD hidden, shown)
# beside MangoHud (shown, hidden) and no layer, all on lavapipe through the
# same shim for the window system (benches/present_cost.rs says how).
# Runs under a private Xvfb and empty config folders (layer-env.sh), so the
# hotkeys poll a real X server and no user config applies.
#
#   scripts/present-cost.sh                        # per-present ns: 1280x720 at 500 fps, 4 ABBA rounds
#   scripts/present-cost.sh --fps 144 --rounds 2   # any option of the bench
#   scripts/present-cost.sh threads                # threads' CPU share at 60, 144 and 1,000 fps (320x240)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/layer-env.sh
cargo build --release --lib --quiet
cargo bench --bench present_cost --no-run --quiet 2>/dev/null
layer_env present-cost "$PWD/target/release/libsteadyhud.so"
if [ "${1:-}" = threads ]; then
  shift
  for fps in 60 144 1000; do
    frames=$((fps * 10))
    cargo bench --quiet --bench present_cost -- --size 320x240 --fps "$fps" \
      --frames "$frames" --warmup "$fps" --rounds 2 --no-warm "$@"
  done
else
  cargo bench --quiet --bench present_cost -- "$@"
fi
