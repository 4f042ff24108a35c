#!/usr/bin/env bash
# Runs every cargo-fuzz target (fuzz/fuzz_targets: each log reader, format
# detection, the config parser) for a bounded time and fails on the first
# crash, panic, leak, timeout or out-of-memory.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`). The stable toolchain is
# enough: RUSTC_BOOTSTRAP=1 unlocks the sanitizer flags cargo-fuzz passes.
# Builds with debug assertions (integer overflow panics). New corpus entries
# go to fuzz/corpus/<target> (kept between runs, not committed); the
# committed seeds in fuzz/seeds/ are read only, fuzz/dict/ has the format
# tokens. A crash leaves its input in
# fuzz/artifacts/<target>/ and the command to reproduce it in the output.
# Prints executions per target at the end.
set -euo pipefail
secs="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export RUSTC_BOOTSTRAP=1
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: cargo-fuzz is not installed; run: cargo install cargo-fuzz" >&2
    exit 2
fi
targets=$(cargo fuzz list)
echo "fuzz.sh: building $(echo $targets | wc -w) targets (ASan, debug assertions)"
start=$(date +%s)
cargo fuzz build -a
echo "fuzz.sh: build took $(( $(date +%s) - start )) s"
report=()
failed=0
for t in $targets; do
    case "$t" in
        config) seeds=fuzz/seeds/config; dict=fuzz/dict/config.dict ;;
        control) seeds=fuzz/seeds/control; dict=fuzz/dict/control.dict ;;
        *) seeds=fuzz/seeds/logs; dict=fuzz/dict/logs.dict ;;
    esac
    mkdir -p "fuzz/corpus/$t"
    log="$(mktemp)"
    echo "fuzz.sh: $t for ${secs}s"
    if cargo fuzz run -a "$t" "fuzz/corpus/$t" "$seeds" -- \
        -max_total_time="$secs" -dict="$dict" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 >"$log" 2>&1; then
        status=ok
    else
        status=CRASH
        failed=1
        tail -n 60 "$log" >&2
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    report+=("$(printf '%-16s %-6s %12s executions' "$t" "$status" "${execs:-?}")")
    rm -f "$log"
done
echo
echo "fuzz.sh: ${secs}s per target"
printf '%s\n' "${report[@]}"
exit "$failed"
