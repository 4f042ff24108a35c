//! The fixed-size whole-session state (`WholeSession`) gives the exact
//! per-frame computation's summary at the printed precision (each catalog
//! metric's decimals), bit for bit where docs/metrics.md says so (the STK
//! curve and metrics, the time over budget, the stutters, OSC, the
//! mergeable histogram), and the classic lows within their stated bound.

use proptest::prelude::*;
use steadyhud_metrics::catalog::{Value, METRICS};
use steadyhud_metrics::fine::{DENSE_BELOW_NS, EXACT_BELOW_NS, SPLIT_BELOW_NS};
use steadyhud_metrics::histogram::TimeHistogram;
use steadyhud_metrics::{
    stk_curve, summarize, Options, SlowFrames, SortedDurations, WholeSession, NS_PER_S,
};

const MS: u64 = 1_000_000;

fn whole(d: &[u64], opts: &Options) -> WholeSession {
    let mut w = WholeSession::new(opts);
    for &x in d {
        w.push(x);
    }
    w
}

/// The bound on a classic low read off the fixed-size state: each frame
/// taken from the cell part of the k-th longest frame is off by less than
/// 1 µs, so the sum of the k longest by less than 1 µs × k.
fn low_within(got: f64, want: f64, sorted: &SortedDurations, p_ppm: u64) -> bool {
    let n = sorted.len() as u128;
    let k = ((n * u128::from(p_ppm)) / 1_000_000).max(1) as usize;
    let sum = sorted.total_ns() - sorted.prefix_sum(sorted.len() - k);
    let rel = 1_000.0 * k as f64 / sum as f64;
    (got - want).abs() <= want * rel * 1.000_001 + 1e-9
}

/// Every metric of the two summaries at its printed precision; the exact
/// parts bit for bit.
fn check(d: &[u64], opts: &Options) {
    let want = summarize(d, opts).unwrap();
    let w = whole(d, opts);
    let got = w.summary(opts).unwrap();
    let sorted = SortedDurations::new(d);
    for m in METRICS {
        let (a, b) = (m.of(&got), m.of(&want));
        match m.key {
            "low_1pct_fps" | "low_0_1pct_fps" => {
                let p = if m.key == "low_1pct_fps" {
                    10_000
                } else {
                    1_000
                };
                assert!(
                    low_within(a.number(), b.number(), &sorted, p),
                    "{}: {a:?} vs {b:?} ({} frames)",
                    m.key,
                    d.len()
                );
            }
            _ => assert_eq!(
                m.text(a),
                m.text(b),
                "{}: {a:?} vs {b:?} ({} frames)",
                m.key,
                d.len()
            ),
        }
        if matches!(b, Value::Int(_) | Value::Bool(_))
            || [
                "frames",
                "duration_s",
                "average_fps",
                "time_over_budget_pct",
                "stutter_time_pct",
            ]
            .contains(&m.key)
        {
            assert_eq!(a, b, "{} is exact", m.key);
        }
    }
    assert_eq!(got.stutter_frames, want.stutter_frames);
    assert_eq!(got.osc, want.osc);
    // The summary a write streams (its stutter frames shared, not
    // copied) writes the same text.
    let (shared, frames) = w.summary_shared(opts).unwrap();
    assert!(shared.stutter_frames.is_empty());
    assert_eq!(
        serde_json::to_string_pretty(&shared.keys_with(&frames)).unwrap(),
        serde_json::to_string_pretty(&got).unwrap()
    );
    let max = 300;
    assert_eq!(
        w.stk_curve(max),
        stk_curve(d, max),
        "the STK curve, bit for bit"
    );
    assert_eq!(w.histogram(), TimeHistogram::from_durations(d));
    // Frames slower than the whole f at and beside every frame's own
    // budget, at any rate (the curve above stops at 300 fps).
    let mut sorted = d.to_vec();
    sorted.sort_unstable();
    let mut suffix = vec![0u128; sorted.len() + 1];
    for i in (0..sorted.len()).rev() {
        suffix[i] = suffix[i + 1] + u128::from(sorted[i]);
    }
    let mut distinct = sorted.clone();
    distinct.dedup();
    for &x in distinct.iter().filter(|&&x| x > 0) {
        for f in [NS_PER_S / x, NS_PER_S / x + 1]
            .into_iter()
            .filter(|&f| f > 0)
        {
            // d·f > 1e9 ⟺ d > ⌊1e9 / f⌋.
            let at = sorted.partition_point(|&y| y <= NS_PER_S / f);
            let want = ((sorted.len() - at) as u64, suffix[at]);
            assert_eq!(
                w.distribution().slow_frames(f),
                want,
                "frames slower than {f} fps"
            );
        }
    }
}

#[test]
fn metrics_md_examples() {
    let o = Options::default();
    // Steady 60 against 59 (the budget of 60 fps inside one microsecond).
    check(&[16_666_666; 600], &o);
    check(&[16_666_667; 600], &o);
    let mut mixed = vec![16_666_666; 300];
    mixed.extend([16_666_667; 300]);
    check(&mixed, &o);
    // 990 × 10 ms + 10 × 50 ms; one hour at 60 fps and a frame of an hour.
    let mut d = vec![10 * MS; 990];
    d.extend([50 * MS; 10]);
    check(&d, &o);
    let mut d = vec![16_666_667; 216_000];
    d.push(3_600_000 * MS);
    check(&d, &o);
    // 70 × 10 ms and 12 × 25 ms (Typical 59).
    let mut d = vec![10 * MS; 70];
    d.extend([25 * MS; 12]);
    check(&d, &o);
}

/// A percentile exactly on a rounding tie (16.665 ms, which as an f64
/// prints 16.66 at two decimals) beside frames just above it in the same
/// microsecond (16.67): the part of exactly-the-edge frames tells them.
#[test]
fn a_percentile_on_a_rounding_tie() {
    let o = Options::default();
    for (tie, above) in [(500, 500), (500, 501), (499, 500), (600, 400), (1000, 1)] {
        let mut d = vec![16_665_000; tie];
        d.extend(vec![16_665_400; above]);
        check(&d, &o);
    }
    // P50 is a frame of exactly 16.665 ms: "16.66", where the cell's mean
    // (16.66516 ms) would print 16.67.
    let mut d = vec![16_665_000; 600];
    d.extend(vec![16_665_400; 400]);
    let got = whole(&d, &o).summary(&o).unwrap();
    assert_eq!(format!("{:.2}", got.p50_ms), "16.66");
    assert_eq!(format!("{:.2}", got.p99_ms), "16.67");
}

/// 10⁶ frames of 1 ms and a 10-minute frame (the synthetic
/// session), every metric at its printed precision.
#[test]
fn a_million_frames_and_a_ten_minute_frame() {
    let o = Options::default();
    let mut d = vec![MS; 1_000_000];
    d.insert(500_000, 600_000 * MS);
    check(&d, &o);
    let w = whole(&d, &o);
    // A few pages and one sparse cell: far below a megabyte.
    assert!(
        w.distribution().heap_bytes() < 64 * 1024,
        "{}",
        w.distribution().heap_bytes()
    );
}

/// A 144 fps game's jitter (issue 52): over minutes its frames meet
/// scattered microseconds of their tail, each in a page of cells no frame
/// met before. Each costs a cell, not a page of them: the state grew
/// 2.5 KiB per microsecond met (a whole page), which at 144 fps on a
/// loaded machine was RSS growing by kilobytes a second. Every metric
/// stays at its printed precision.
#[test]
fn scattered_microseconds_cost_a_cell_each() {
    let o = Options::default();
    let empty = steadyhud_metrics::fine::FineHistogram::new().heap_bytes();
    // 6.9 ms frames, and 1,000 once each 64 µs apart from 7 to 71 ms
    // (each in its own page).
    let mut d = vec![6_944_000; 20_000];
    for i in 0..1_000u64 {
        d.insert((i * 20) as usize, 7_000_000 + i * 64_000 + 500);
    }
    check(&d, &o);
    let w = whole(&d, &o);
    let per_met = (w.distribution().heap_bytes() - empty) / 1_001;
    assert!(per_met <= 128, "{per_met} bytes per microsecond met");
}

/// Frames around each cell kind's edges: 1 ns cells, the 66 µs seam,
/// budgets of whole fps inside microseconds (and several to a microsecond
/// above 1,000 fps), the 1 ms and 100 ms seams, seconds.
fn duration() -> impl Strategy<Value = u64> {
    prop_oneof![
        1u64..EXACT_BELOW_NS + 5_000,
        EXACT_BELOW_NS - 2_000..EXACT_BELOW_NS + 2_000,
        (1u64..400).prop_flat_map(|f| {
            let tau = 1_000_000_000 / f;
            tau - 1_500..tau + 1_500
        }),
        (1u64..400).prop_map(|f| 1_000_000_000 / f),
        (1u64..400).prop_map(|f| 1_000_000_000 / f + 1),
        // Above 1,000 fps several budgets share a microsecond.
        (1_000u64..15_000).prop_flat_map(|f| {
            let tau = 1_000_000_000 / f;
            tau - 5..tau + 5
        }),
        SPLIT_BELOW_NS - 3_000..SPLIT_BELOW_NS + 3_000,
        (100u64..40_000).prop_map(|us| us * 1_000),
        (100u64..40_000).prop_map(|us| us * 1_000 + 500),
        MS..60 * MS,
        DENSE_BELOW_NS - 3_000..DENSE_BELOW_NS + 3_000,
        DENSE_BELOW_NS..5_000 * MS,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_same_summary_as_every_frame(
        d in proptest::collection::vec(duration(), 1..600),
        target in 1u32..400,
        theta in 0.05f64..1.0,
    ) {
        check(&d, &Options { target_fps: target, stutter_threshold: theta });
    }

    /// Runs of similar frames (a game's), where stutters and OSC matter.
    #[test]
    fn the_same_summary_on_game_like_runs(
        base in 2 * MS..40 * MS,
        jitter in 0u64..3 * MS,
        seed in any::<u64>(),
        n in 20usize..3_000,
    ) {
        let mut x = seed | 1;
        let d: Vec<u64> = (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let j = x % (jitter + 1);
                let alt = if i % 2 == 0 { 0 } else { base / 2 };
                if x % 97 == 0 { base * 4 } else { base + j + alt }
            })
            .collect();
        check(&d, &Options::default());
    }
}

/// The readings' causes a write streams (shared, one cause at a time)
/// write the text a `serde_json::Value` of them all wrote: stutters with a
/// GPU clock drop and throttle reasons, judged for good and not yet.
#[test]
fn streamed_sensor_causes_write_what_their_values_wrote() {
    use steadyhud_metrics::sensor_causes::SensorCause;
    use steadyhud_metrics::sensors::Sensor;
    let opts = Options::default();
    let mut w = WholeSession::new(&opts)
        .with_sensors([(Sensor::GpuMhz, "test"), (Sensor::CpuMhz, "t")], true);
    let n = 2_000;
    for i in 0..n {
        let stutter = i % 40 == 35 || i == n - 3;
        let (d, mhz, throttle) = if stutter {
            (
                60 * MS,
                500.0,
                if i % 80 == 35 { "power|thermal" } else { "" },
            )
        } else {
            (10 * MS, 2_000.0, "")
        };
        w.push_with(d, &[mhz, 3_000.0], throttle);
    }
    let summary = w.summary(&opts).unwrap();
    let causes = w.sensor_causes(&summary.stutter_frames);
    let all: Vec<SensorCause> = causes.iter().cloned().collect();
    assert_eq!(
        all.len(),
        summary.stutter_frames.len(),
        "every stutter a cause"
    );
    assert_eq!(
        all.last().unwrap().frame,
        n - 3,
        "the last, not judged for good"
    );
    assert!(all.iter().any(|c| c.reasons.len() == 2));
    let values: Vec<_> = all.iter().map(SensorCause::json).collect();
    assert_eq!(
        serde_json::to_string_pretty(&causes).unwrap(),
        serde_json::to_string_pretty(&serde_json::to_value(values).unwrap()).unwrap()
    );
}
