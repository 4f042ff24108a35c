#!/usr/bin/env bash
# The whole test suite in one command, on a fresh Debian 12 machine with a
# Rust toolchain: installs what the machine lacks (scripts/setup.sh), then
# lints, tests, tests again with 32-bit games, and fuzzes. Nothing is
# skipped: a test whose tool is missing fails (STEADYHUD_REQUIRE_TOOLS=1,
# tests/require). `.ci/run` runs exactly this.
#
#   scripts/test.sh
#
# Runs as root (apt-get and dpkg for the 32-bit side; tests/control.rs runs
# a game as another user, tests/packages.rs installs the .debs in a private
# mount namespace): started as another user, it runs itself again through
# sudo when sudo is there, and otherwise stops with one line.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh

if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null; then
    echo "test.sh: the tests need root (apt-get, dpkg, a game run as another user): running again through sudo"
    exec sudo --preserve-env env "PATH=$PATH" "$0" "$@"
  fi
  echo "test.sh: run it as root (apt-get and dpkg install the test bed, tests/control.rs runs a game as another user); there is no sudo here" >&2
  exit 1
fi

# step NAME COMMAND...: runs one stage and says how long it took; the
# times are listed again at the end (CI has 2 cores and 90 minutes: the
# whole suite should stay well under 20).
times=()
step() {
  local name=$1 start=$SECONDS
  shift
  echo "test.sh: $name"
  "$@"
  times+=("$(printf '%-24s %5d s' "$name" $((SECONDS - start)))")
  echo "test.sh: $name took $((SECONDS - start)) s"
}

need_rust test.sh lint

# The build tools first (a small set: the cargo tools below link with
# gcc), then the rest while the cargo tools compile: apt-get waits on the
# network and the disk, a compile on the CPUs.
step "Debian packages (build)" need_packages test.sh "${SETUP_BUILD[@]}" python3-venv

# The pinned cargo tools (cargo-deb for tests/packages.rs, cargo-fuzz for
# scripts/fuzz.sh) and DuckDB for the fleet query test
# (crates/cli/tests/fleet_duckdb.rs runs docs/fleet.sql through its Python
# package, kept in .venv-duckdb/, git-ignored) install in the background.
mkdir -p target
tools_log=target/test-tools.log
install_tools() {
  if ! cargo deb --version >/dev/null 2>&1; then
    echo "test.sh: installing: cargo-deb 3.8.0"
    cargo install --locked cargo-deb --version 3.8.0
  fi
  if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "test.sh: installing: cargo-fuzz"
    cargo install --locked cargo-fuzz
  fi
  if ! .venv-duckdb/bin/python -c 'import duckdb' >/dev/null 2>&1; then
    echo "test.sh: installing: duckdb (Python, into .venv-duckdb)"
    python3 -m venv .venv-duckdb
    .venv-duckdb/bin/pip install --quiet --disable-pip-version-check duckdb
  fi
}
install_tools >"$tools_log" 2>&1 &
tools_pid=$!
wait_tools() {
  if ! wait "$tools_pid"; then
    cat "$tools_log" >&2
    echo "test.sh: installing cargo-deb, cargo-fuzz or DuckDB failed (above)" >&2
    exit 1
  fi
  grep '^test.sh: installing' "$tools_log" || true
}

step "Debian packages" need_packages test.sh "${SETUP_DEMO[@]}" "${SETUP_TEST[@]}"

# Every test that needs an outside tool (the programs above, DuckDB, root
# for tests/control.rs) fails when it is missing instead of skipping
# (tests/require/mod.rs).
export STEADYHUD_REQUIRE_TOOLS=1

# The 32-bit side: Debian's rustc-web 1.85 with the i386 std and libraries
# (the machine's toolchain has no i686 std), then the 32-bit layer and test
# app. Before the tests: the package test ships the 32-bit library.
step "32-bit build" scripts/build-i686.sh

# The Proton test bed (tests/wine_proton.rs): a Debian sid root with Wine
# 10, DXVK, mingw-w64 and lavapipe, made once (~3 min) and reused after.
step "sid root (Wine, DXVK)" scripts/sid-root.sh

# The tools installing in the background (above), before the tests.
step "cargo tools, DuckDB" wait_tools

# Lints first: formatting and clippy (all targets, warnings are errors).
step "cargo fmt" cargo fmt --check
step "cargo clippy" cargo clippy --release --all-targets -- -D warnings

# Every test binary runs even after one fails, so a run reports every
# failure at once (the exit status still says one failed).
step "cargo test" cargo test --release --no-fail-fast

# The layer tests again with 32-bit games (the test app, vkcube and
# vkd3d-gears built for i686, on 32-bit lavapipe), and the GL library's with
# 32-bit glxgears, es2gears and the GL test program on 32-bit llvmpipe; the
# tools stay 64-bit.
step "32-bit tests" env STEADYHUD_TEST_ARCH=i686 cargo test --release --no-fail-fast --test layer_capture --test layer_testapp \
  --test gpu_timing --test limiter --test control --test layer_real_games \
  --test counters_attribution --test counters_hud --test layer_apps --test sensors \
  --test steam_proton --test gl_games

# The 32-bit GL library as a distribution may build it, with frame pointers
# forced (a prologue in every Rust function): its dlsym entry must not
# depend on the prologue (issue 51). Only the GL library is rebuilt; the
# GL tests that go through dlsym (RTLD_NEXT from a tool preloaded after
# ours, and the game's own lookups) run with it.
step "32-bit GL, frame pointers" scripts/build-i686.sh --frame-pointers
step "32-bit GL tests, frame pointers" env STEADYHUD_TEST_ARCH=i686 \
  STEADYHUD_TEST_GL_LIBRARY="$PWD/target/i686-fp/i686-unknown-linux-gnu/release/libsteadyhud_gl.so" \
  cargo test --release --no-fail-fast --test gl_games -- es2gears_x11_logs_every_swap_and_shows_the_hud \
  real_functions_come_from_the_library_the_game_opened

# Every log parser and the config parser fuzzed for a bounded time (zero
# crashes), after the tests so a test failure is reported first.
step "fuzzing" scripts/fuzz.sh 10
echo "test.sh: all passed; stages:"
printf '  %s\n' "${times[@]}"
echo "  total                    $SECONDS s"
