//! Statistics counter benchmarks: what counters add to the game's threads
//! (one `Counters::add`, the per-present latch of the 10 built-in counters
//! plus the counter-ring push, against the plain timestamp push) and to the
//! analysis thread (frame health per frame).
//!
//! `cargo bench --bench counters -- --warm-up-time 1 --measurement-time 3`

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use ringbuf::traits::Consumer;
use steadyhud_capture::rings::Stream;
use steadyhud_counters::health::{HealthRule, Tracker};
use steadyhud_counters::{Counters, BUILTIN, MAX_COUNTERS};
use steadyhud_sys::clock::now_ns;

fn table() -> Counters {
    let c = Counters::new();
    for &(name, label, unit) in BUILTIN {
        c.register(name, label, unit).unwrap();
    }
    c
}

fn hot_path(c: &mut Criterion) {
    let t = table();
    let id = t.get("submit_ms").unwrap();
    c.bench_function("counters/add", |b| {
        b.iter(|| t.add(black_box(id), black_box(1234)))
    });
    c.bench_function("counters/timed_call (2 clock reads + add)", |b| {
        b.iter(|| {
            let s = now_ns();
            t.add(id, now_ns() - s);
        })
    });
    let mut vals = [0u64; MAX_COUNTERS];
    c.bench_function("counters/latch 10 counters", |b| {
        b.iter(|| t.latch(black_box(&mut vals)))
    });

    // Present path: timestamp push alone vs timestamp + latched counters.
    let (plain, mut pc) = Stream::new(1, 0);
    let mut ts = 1u64;
    c.bench_function("present/record (no counters)", |b| {
        b.iter(|| {
            ts += 1;
            plain.record(ts);
            pc.try_pop();
        })
    });
    let shared = std::sync::Arc::new(table());
    let (counted, mut cc, vc) = Stream::with_counters(2, 0, Some(shared.clone()));
    let mut vc = vc.unwrap();
    c.bench_function("present/latch + record_with (10 counters)", |b| {
        b.iter(|| {
            ts += 1;
            let mut v = [0u64; MAX_COUNTERS];
            shared.latch(&mut v);
            counted.record_with(ts, Some(&v));
            cc.try_pop();
            vc.try_pop();
        })
    });
}

fn analysis(c: &mut Criterion) {
    let infos: Vec<_> = table().infos();
    let mut tracker = Tracker::new(infos, HealthRule::default());
    let mut out = Vec::new();
    let mut vals = [0u64; MAX_COUNTERS];
    let mut i = 0u64;
    c.bench_function("analysis/frame health push (10 counters)", |b| {
        b.iter(|| {
            i += 1;
            vals[0] = (i % 7) * 100_000;
            vals[2] = 50_000 + (i % 3) * 1000;
            let d = if i.is_multiple_of(300) {
                60_000_000
            } else {
                16_000_000 + (i % 5) * 100_000
            };
            tracker.push(d, &vals, &mut out);
            out.clear();
        })
    });
}

criterion_group!(benches, hot_path, analysis);
criterion_main!(benches);
