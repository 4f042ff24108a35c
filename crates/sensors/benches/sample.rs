//! What one sample costs the sampler's thread: this machine's real `/`
//! (its /proc; whatever /sys it has), and the amdgpu fixture tree as `/sys`
//! beside the real /proc (every GPU file of an AMD desktop read once).
//! At `sensor_hz=10` the CPU share of one core is 10 × the time per sample.
//!
//! `cargo bench -p steadyhud-sensors --bench sample -- --warm-up-time 1 --measurement-time 3`

use criterion::{criterion_group, criterion_main, Criterion};
use std::path::Path;
use steadyhud_sensors::{PciBusId, Root, Sampler};

fn sample(c: &mut Criterion) {
    let mut t = 1_000_000_000u64;
    let (mut real, _) = Sampler::open(&Root::default(), None, None, t);
    c.bench_function("sensors/sample (this machine's /)", |b| {
        b.iter(|| {
            t += 100_000_000;
            real.sample(t)
        })
    });
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let root = Root::with_sys("/", fixtures.join("amdgpu"));
    let pci = PciBusId::parse("0000:03:00.0");
    let (mut card, _) = Sampler::open(&root, pci, None, t);
    c.bench_function("sensors/sample (real /proc + amdgpu fixture /sys)", |b| {
        b.iter(|| {
            t += 100_000_000;
            card.sample(t)
        })
    });
}

criterion_group!(benches, sample);
criterion_main!(benches);
