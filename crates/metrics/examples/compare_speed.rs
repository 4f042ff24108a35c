//! The comparison's speed (docs/measurements.md, "compare --vs speed"):
//! 10 runs × 100,000 frames per side from the calibration tests'
//! generator, compared with the default settings (1000 resamples, 2 s
//! blocks, one thread per CPU). A benchmark, not a test:
//!
//!     cargo run --release -p steadyhud-metrics --example compare_speed [DIR]
//!
//! With DIR it also writes the runs there as plain logs (`a-0.txt` …,
//! `b-0.txt` …) for timing `steadyhud compare` end to end.

#[path = "../tests/common/synth.rs"]
mod synth;

use std::time::Instant;
use steadyhud_metrics::bootstrap::{compare, Settings};

fn main() {
    let s = synth::Synth {
        frames: 100_000,
        ..synth::Synth::default()
    };
    let t = Instant::now();
    let a = s.runs(10, 1, 1.0, 1.0);
    let b = s.runs(10, 2, 1.0, 1.05);
    eprintln!(
        "generated 2 × 10 × 100,000 frames in {:.2} s",
        t.elapsed().as_secs_f64()
    );
    if let Some(dir) = std::env::args_os().nth(1) {
        let dir = std::path::PathBuf::from(dir);
        for (side, runs) in [("a", &a), ("b", &b)] {
            for (i, r) in runs.iter().enumerate() {
                let text: String = r
                    .durations_ns
                    .iter()
                    .map(|&x| format!("{}.{:06}\n", x / 1_000_000, x % 1_000_000))
                    .collect();
                let path = dir.join(format!("{side}-{i}.txt"));
                if let Err(e) = std::fs::write(&path, text) {
                    eprintln!("{}: {e}", path.display());
                    std::process::exit(1);
                }
            }
        }
    }
    let ia: Vec<_> = a.iter().map(synth::Run::input).collect();
    let ib: Vec<_> = b.iter().map(synth::Run::input).collect();
    let settings = Settings::default();
    for round in 1..=3 {
        let t = Instant::now();
        let c = match compare(&ia, &ib, &settings) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        };
        let secs = t.elapsed().as_secs_f64();
        let typical = c
            .get("typical_fps")
            .map(|m| (m.difference, m.ci, m.verdict));
        println!(
            "round {round}: {secs:.2} s, {} resamples, {} threads; typical_fps {typical:?}",
            settings.resamples, settings.threads
        );
    }
}
