//! Cost of one periodic summary rewrite (issue 17's upkeep) at 1,000,000
//! frames: the same calls the layer's summary writer makes — copy the
//! durations (the analysis thread's snapshot), `summarize`, the STK curve up
//! to the fastest frame's rate, and the atomic write (temporary file +
//! rename) of `<stem>.summary.json`. The layer spaces rewrites at least 100×
//! this cost apart (`layer::upkeep`), so upkeep stays under 1 % of a core.
//!
//! `cargo bench --bench summary -- --warm-up-time 1 --measurement-time 10`

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use std::time::SystemTime;
use steadyhud::metrics::{self, Options};
use steadyhud::session_log::{write_summary, Progress, SessionLog};

/// xorshift64*: a tiny seeded generator, so every run sees the same frames.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

/// `n` frames around `mean_ns` with ±6 % jitter and a 2–8× spike every
/// ~300 frames on average (as `benches/metrics.rs`).
fn frames(n: usize, mean_ns: u64, seed: u64) -> Vec<u64> {
    let mut rng = Rng(seed);
    let jitter = mean_ns / 16;
    (0..n)
        .map(|_| {
            let d = mean_ns - jitter + rng.below(2 * jitter);
            if rng.below(300) == 0 {
                d * (2 + rng.below(7))
            } else {
                d
            }
        })
        .collect()
}

fn bench_rewrite(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = SessionLog::create(dir.path(), "bench", SystemTime::now()).expect("session log");
    let target = log.summary_target();
    let opts = Options::default();
    let mut g = c.benchmark_group("summary rewrite");
    g.sample_size(10);
    for (fps, seed) in [(60u64, 0x5eed), (1000, 0xbeef)] {
        let d = frames(1_000_000, 1_000_000_000 / fps, seed);
        g.bench_function(format!("1M frames at {fps} fps"), |b| {
            b.iter(|| {
                let copy = black_box(&d).clone();
                let min = copy.iter().copied().min().unwrap_or(metrics::NS_PER_S);
                let max_fps = (metrics::NS_PER_S.div_ceil(min.max(1)) + 1).clamp(1, 2000) as u32;
                let summary = metrics::summarize(&copy, &opts);
                let stk = metrics::stk_curve(&copy, max_fps);
                write_summary(
                    &target,
                    summary.as_ref(),
                    &stk,
                    serde_json::json!({}),
                    Progress::Running,
                )
                .expect("write summary")
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_rewrite);
criterion_main!(benches);
