# Sourced by the measuring scripts (overhead.sh, instructions.sh, soak.sh):
# a private environment in which the freshly built layer is the implicit
# layer, and an X display. After `layer_env NAME LIB` the caller has
#   $work             a private temp dir (removed on exit; LAYER_ENV_KEEP=1 keeps it)
#   XDG_DATA_HOME     $work/data, holding the manifest with library_path = LIB
#                     (the loader ignores VK_IMPLICIT_LAYER_PATH for implicit layers)
#   XDG_RUNTIME_DIR, XDG_CONFIG_HOME, XDG_STATE_HOME   private, empty
#   STEADYHUD_LOG_DIR $work/logs
#   DISPLAY           the caller's, or a private Xvfb (SIZE from $LAYER_ENV_SCREEN,
#                     default 1280x1024x24) started when DISPLAY is unset
# and an EXIT trap that stops that Xvfb and runs the caller's `on_exit`
# function if it defines one. NAME prefixes the error messages.

layer_env() {
  local name=$1 lib=$2
  [ -f "$lib" ] || { echo "$name: $lib not built" >&2; exit 2; }
  work=$(mktemp -d "/tmp/steadyhud-$name.XXXXXX")
  _layer_env_xvfb=""
  trap _layer_env_cleanup EXIT

  mkdir -p "$work/data/vulkan/implicit_layer.d" "$work/logs" "$work/run" "$work/config" "$work/state"
  chmod 700 "$work/run"
  local manifest="$work/data/vulkan/implicit_layer.d/VK_LAYER_STEADYHUD_overlay.json"
  sed "s#\"library_path\": *\"[^\"]*\"#\"library_path\": \"$lib\"#" \
    layer-manifest/VK_LAYER_STEADYHUD_overlay.json >"$manifest"
  grep -q "\"$lib\"" "$manifest" || { echo "$name: could not set library_path in the manifest" >&2; exit 2; }
  export XDG_DATA_HOME="$work/data" XDG_RUNTIME_DIR="$work/run" \
    XDG_CONFIG_HOME="$work/config" XDG_STATE_HOME="$work/state" STEADYHUD_LOG_DIR="$work/logs"
  unset STEADYHUD_CONFIG VK_INSTANCE_LAYERS WAYLAND_DISPLAY || true

  if [ -z "${DISPLAY:-}" ]; then
    command -v Xvfb >/dev/null || { echo "$name: no DISPLAY and no Xvfb (apt-get install xvfb)" >&2; exit 2; }
    Xvfb -displayfd 4 -screen 0 "${LAYER_ENV_SCREEN:-1280x1024x24}" -nolisten tcp -noreset \
      4>"$work/display" 2>/dev/null &
    _layer_env_xvfb=$!
    for _ in $(seq 100); do [ -s "$work/display" ] && break; sleep 0.1; done
    [ -s "$work/display" ] || { echo "$name: Xvfb did not start" >&2; exit 2; }
    export DISPLAY=":$(tr -d '[:space:]' <"$work/display")"
  fi
}

_layer_env_cleanup() {
  if declare -F on_exit >/dev/null; then on_exit || true; fi
  [ -n "$_layer_env_xvfb" ] && kill "$_layer_env_xvfb" 2>/dev/null || true
  if [ "${LAYER_ENV_KEEP:-0}" = 1 ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}

# Median of the numbers on stdin (mean of the middle two when even).
median() {
  tr ' ' '\n' | grep -v '^$' | sort -g |
    awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# The environment of a measuring mode (see overhead.sh's usage). `hidden`
# is the default config (gpu_timing=auto: GPU timing off on a CPU device
# such as lavapipe); `gpu-on` forces GPU timing with gpu_timing=1;
# `inert` is a blacklisted process (the layer loaded but passing through).
mode_env() {
  case $1 in
    none)         echo DISABLE_STEADYHUD=1 ;;
    hidden)       echo STEADYHUD=1 STEADYHUD_CONFIG=hud_hidden=1 ;;
    shown)        echo STEADYHUD=1 STEADYHUD_CONFIG=hud_hidden=0 ;;
    mangohud)     echo DISABLE_STEADYHUD=1 MANGOHUD=1 ;;
    counters-off) echo STEADYHUD=1 STEADYHUD_CONFIG=hud_hidden=1,counters=0 ;;
    counters-on)  echo STEADYHUD=1 STEADYHUD_CONFIG=hud_hidden=1,counters=1,gpu_timing=0 ;;
    gpu-on)       echo STEADYHUD=1 STEADYHUD_CONFIG=hud_hidden=1,counters=1,gpu_timing=1 ;;
    sensors-off)  echo STEADYHUD=1 STEADYHUD_CONFIG=hud_hidden=1,sensor_hz=0 ;;
    sensors-on)   echo STEADYHUD=1 STEADYHUD_CONFIG=hud_hidden=1,sensor_hz=10 ;;
    inert)        echo STEADYHUD=1 STEADYHUD_CONFIG=blacklist=vkcube ;;
    *) echo "unknown mode $1 (none hidden shown mangohud counters-off counters-on gpu-on sensors-off sensors-on inert)" >&2; return 2 ;;
  esac
}
