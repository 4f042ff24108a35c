//! Metrics core benchmarks: whole-session `summarize` over 1,000,000 frames,
//! `Rolling::push` per frame in steady state (10 s window at ~144 and ~1000
//! fps) and the `Rolling::summary` query the HUD makes a few times a second.
//!
//! `cargo bench --bench metrics -- --warm-up-time 1 --measurement-time 3`

mod common;

use common::frames;
use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use steadyhud_metrics::{summarize, Options, Rolling};

const S: u64 = 1_000_000_000;

fn bench_summarize(c: &mut Criterion) {
    let d = frames(1_000_000, 16_700_000, 0x5eed);
    let opts = Options::default();
    let mut g = c.benchmark_group("summarize");
    g.sample_size(10);
    g.throughput(Throughput::Elements(d.len() as u64));
    g.bench_function("1M frames", |b| b.iter(|| summarize(black_box(&d), &opts)));
    g.finish();
}

/// A window filled to steady state, and the frames to push next.
fn warm(fps: u64, seed: u64) -> (Rolling, Vec<u64>) {
    let mean = S / fps;
    let mut r = Rolling::new(10 * S, 100_000, Options::default());
    let d = frames(20 * fps as usize + 1_000_000, mean, seed);
    let (fill, rest) = d.split_at(20 * fps as usize);
    for &x in fill {
        r.push(x);
    }
    (r, rest.to_vec())
}

fn bench_rolling(c: &mut Criterion) {
    let mut g = c.benchmark_group("rolling");
    for fps in [144u64, 1000] {
        let (mut r, next) = warm(fps, 7 + fps);
        let mut k = 0;
        g.throughput(Throughput::Elements(1));
        g.bench_function(format!("push, 10 s window at {fps} fps"), |b| {
            b.iter(|| {
                r.push(black_box(next[k]));
                k = (k + 1) % next.len();
            })
        });
        let (r, _) = warm(fps, 11 + fps);
        g.bench_function(
            format!("summary, 10 s window at {fps} fps ({} frames)", r.len()),
            |b| b.iter(|| black_box(r.summary())),
        );
        g.bench_function(
            format!("summarize(frames()), same {} frames", r.len()),
            |b| {
                b.iter_batched(
                    || r.frames(),
                    |f| black_box(summarize(&f, &Options::default())),
                    BatchSize::SmallInput,
                )
            },
        );
    }
    g.finish();
}

criterion_group!(benches, bench_summarize, bench_rolling);
criterion_main!(benches);
