//! The METRICS.md contract keys, in order: every summary and `analyze
//! --json` output must carry them. Written here once, from the spec (not
//! from the code under test), for the tests that check outputs against it.

pub const METRICS_MD_KEYS: [&str; 16] = [
    "frames",
    "duration_s",
    "average_fps",
    "low_1pct_fps",
    "low_0_1pct_fps",
    "p50_ms",
    "p90_ms",
    "p95_ms",
    "p99_ms",
    "p99_9_ms",
    "steady_fps",
    "mostly_steady_fps",
    "typical_fps",
    "stutter_count",
    "stutter_frames",
    "osc",
];
