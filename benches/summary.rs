//! Cost of one periodic summary rewrite (issue 17's upkeep) at 1,000,000
//! frames: the same calls the layer's summary writer makes — copy the
//! durations (the analysis thread's snapshot), `summarize`, the STK curve up
//! to the fastest frame's rate, and the atomic write (temporary file +
//! rename) of `<stem>.summary.json`. The layer spaces rewrites at least 100×
//! this cost apart (`layer::upkeep`), so upkeep stays under 1 % of a core.
//!
//! `cargo bench --bench summary -- --warm-up-time 1 --measurement-time 10`

mod common;

use common::frames;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use std::time::SystemTime;
use steadyhud_log::{write_summary, Layout, Progress, SessionLog};
use steadyhud_metrics::{self as metrics, Options};

fn bench_rewrite(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = SessionLog::create(dir.path(), "bench", SystemTime::now(), &Layout::default())
        .expect("session log");
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
