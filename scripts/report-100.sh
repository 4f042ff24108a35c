#!/usr/bin/env bash
# Issue 16: `steadyhud report` at the issue's scale, 100 logs of 100,000
# frames each (derived from the shared captures in ../shared/data, as the
# report test does at 10,000): wall time, file size and peak RSS of the
# report, with and without --frame-times, and the Chromium layout check (no
# overlapping, clipped or off-page text). About a minute on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --quiet --test report_html -- --ignored --nocapture \
  report_of_100_logs_of_100k_frames 2>&1 | grep -E '^report of|test result|panicked|overlapping'
