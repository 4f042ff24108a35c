//! The time histogram's error bounds (docs/metrics.md#fleet-histogram)
//! against the exact metrics, on random sessions and on fleets of them:
//! frames, duration and average FPS exact; percentiles and lows within 1 %;
//! Steady / Mostly Steady / Typical FPS within 1 % + 1.01; merging equals
//! the histogram of all frames; exact when each bucket holds one value.

use proptest::prelude::*;
use steadyhud_metrics::histogram::{bucket_of, bucket_range};
use steadyhud_metrics::{summarize, Options, Summary, TimeHistogram, TimeMetrics};

const MS: u64 = 1_000_000;

/// Frame times from 50 ns to 2 s, with ties, clusters and spikes.
fn duration() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => prop::sample::select(vec![10 * MS, 16_666_667, 20 * MS, 33_333_333, 6_944_444]),
        4 => 4 * MS..40 * MS,
        1 => 40 * MS..2_000 * MS,
        1 => 50u64..200_000,
    ]
}

/// Frames clustered around a target's frame budget 1/f (±3 %): the bucket
/// that straddles the budget decides Steady FPS, the worst case of the bound.
fn near_budget() -> impl Strategy<Value = Vec<u64>> {
    (
        30u64..400,
        prop::collection::vec((0u64..6_000, 0u32..100), 50..1500),
    )
        .prop_map(|(f, jit)| {
            let tau = 1_000_000_000 / f;
            jit.into_iter()
                .map(|(j, spike)| {
                    let d = tau - tau * 3 / 100 + tau * j / 100_000;
                    if spike == 0 {
                        d * 4
                    } else {
                        d
                    }
                })
                .collect()
        })
}

fn check_bounds(exact: &Summary, h: &TimeMetrics) -> Result<(), TestCaseError> {
    prop_assert_eq!(h.frames, exact.frames);
    prop_assert_eq!(h.duration_s, exact.duration_s);
    prop_assert_eq!(h.average_fps, exact.average_fps);
    // Percentiles: same bucket as the exact value, so |error| < 1 % of it.
    for (e, v) in [
        (exact.p50_ms, h.p50_ms),
        (exact.p90_ms, h.p90_ms),
        (exact.p95_ms, h.p95_ms),
        (exact.p99_ms, h.p99_ms),
        (exact.p99_9_ms, h.p99_9_ms),
    ] {
        prop_assert!((v - e).abs() <= 0.01 * e, "percentile {} vs exact {}", v, e);
        let b = bucket_of((e * 1e6).round() as u64);
        let (lo, hi) = bucket_range(b).unwrap();
        prop_assert!(
            v * 1e6 >= lo as f64 - 1e-6 && v * 1e6 <= hi as f64,
            "{} not in the exact value's bucket {}..{}",
            v,
            lo,
            hi
        );
    }
    for (e, v) in [
        (exact.low_1pct_fps, h.low_1pct_fps),
        (exact.low_0_1pct_fps, h.low_0_1pct_fps),
    ] {
        prop_assert!(
            (v - e).abs() <= 0.01 * e * (1.0 + 1e-12),
            "low {} vs exact {}",
            v,
            e
        );
    }
    for (e, v) in [
        (exact.steady_fps, h.steady_fps),
        (exact.mostly_steady_fps, h.mostly_steady_fps),
        (exact.typical_fps, h.typical_fps),
    ] {
        let err = (f64::from(v) - f64::from(e)).abs();
        prop_assert!(
            err < f64::from(e) / 100.0 + 1.01,
            "STK {} vs exact {}",
            v,
            e
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn one_session_within_the_stated_bounds(d in prop::collection::vec(duration(), 1..2000)) {
        let exact = summarize(&d, &Options::default()).unwrap();
        let h = TimeHistogram::from_durations(&d).summary().unwrap();
        check_bounds(&exact, &h)?;
    }

    #[test]
    fn frames_at_the_frame_budget_within_the_stated_bounds(d in near_budget()) {
        let exact = summarize(&d, &Options::default()).unwrap();
        let h = TimeHistogram::from_durations(&d).summary().unwrap();
        check_bounds(&exact, &h)?;
    }

    #[test]
    fn a_fleet_merged_within_the_stated_bounds(
        sessions in prop::collection::vec(prop::collection::vec(duration(), 1..400), 1..12),
    ) {
        let mut merged = TimeHistogram::default();
        for s in &sessions {
            merged.merge(&TimeHistogram::from_durations(s)).unwrap();
        }
        let all: Vec<u64> = sessions.concat();
        // Merging is exact: the same buckets as one histogram of all frames.
        prop_assert_eq!(&merged, &TimeHistogram::from_durations(&all));
        let back = TimeHistogram::from_json(&merged.to_json()).unwrap();
        prop_assert_eq!(&back, &merged);
        let exact = summarize(&all, &Options::default()).unwrap();
        check_bounds(&exact, &merged.summary().unwrap())?;
    }

    #[test]
    fn one_value_per_bucket_is_exact(
        d in prop::collection::vec(
            prop::sample::select(vec![10 * MS, 16_666_667, 20 * MS, 33_333_333, 6_944_444, 250 * MS, 77]),
            1..500),
    ) {
        // Each value alone in its bucket: the stand-in is the session itself.
        let exact = summarize(&d, &Options::default()).unwrap();
        let h = TimeHistogram::from_durations(&d).summary().unwrap();
        prop_assert_eq!(
            (h.steady_fps, h.mostly_steady_fps, h.typical_fps),
            (exact.steady_fps, exact.mostly_steady_fps, exact.typical_fps)
        );
        prop_assert_eq!(
            [h.p50_ms, h.p90_ms, h.p95_ms, h.p99_ms, h.p99_9_ms],
            [exact.p50_ms, exact.p90_ms, exact.p95_ms, exact.p99_ms, exact.p99_9_ms]
        );
    }
}

/// The worked example of docs/metrics.md#fleet-histogram: two sessions whose
/// own Steady FPS are 60 and 30 make a fleet whose Steady FPS is neither
/// their mean nor their time-weighted mean.
#[test]
fn fleet_example_of_the_docs() {
    let a = vec![16_666_666u64; 3600]; // one minute at 60 fps
    let mut b = vec![16_666_666u64; 3000];
    b.extend([33_333_333u64; 300]); // 50 s at 60 fps, 10 s at 30 fps
    let (sa, sb) = (
        summarize(&a, &Options::default()).unwrap(),
        summarize(&b, &Options::default()).unwrap(),
    );
    assert_eq!((sa.steady_fps, sb.steady_fps), (60, 30));
    let mut h = TimeHistogram::from_durations(&a);
    h.merge(&TimeHistogram::from_durations(&b)).unwrap();
    let fleet = h.summary().unwrap();
    let exact = summarize(&[a, b].concat(), &Options::default()).unwrap();
    assert_eq!(
        (fleet.steady_fps, fleet.mostly_steady_fps, fleet.typical_fps),
        (exact.steady_fps, exact.mostly_steady_fps, exact.typical_fps)
    );
    assert_eq!(
        (fleet.steady_fps, fleet.mostly_steady_fps, fleet.typical_fps),
        (30, 39, 60)
    );
    assert_eq!(fleet.p95_ms, 33.333333);
}
