//! The seeds' worked examples and hand-checked cases, through the public
//! metrics API (`summarize`, `stk_curve`, `Rolling`).

mod keys;
use steadyhud_metrics::{
    oscillation, stk_curve, stutters, summarize, time_weighted_percentile, Options, Rolling,
    Summary,
};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn summary(d: &[u64]) -> Summary {
    summarize(d, &Options::default()).expect("non-empty")
}

/// The textbook frame-count percentile the seed criticises:
/// sort, return sample[(N·95/100) − 1].
fn frame_count_p95(d: &[u64]) -> u64 {
    let mut s = d.to_vec();
    s.sort_unstable();
    s[s.len() * 95 / 100 - 1]
}

#[test]
fn two_hours_60fps_then_one_3600s_frame() {
    // framerate-percentiles-by-time: one hour at 60 fps (216 000 frames of
    // 1/60 s) then a single 3600 s frame.
    let mut d = vec![16_666_667u64; 216_000];
    d.push(3600 * S);
    let s = summary(&d);
    assert_eq!(s.frames, 216_001);
    // Time-weighted: half the time is in the 3600 s frame → P95 is that frame.
    assert_eq!(s.p95_ms, 3_600_000.0);
    assert_eq!(s.p90_ms, 3_600_000.0);
    assert_eq!(s.p99_9_ms, 3_600_000.0);
    // The frame-count P95 says 16.67 ms.
    let naive = frame_count_p95(&d);
    assert_eq!(naive, 16_666_667);
    assert_eq!(format!("{:.2}", naive as f64 / 1e6), "16.67");
    // T = 3600.000072 s + 3600 s: half of T is just inside the fast hour,
    // so the time-weighted median is still a 60 fps frame.
    assert_eq!(s.p50_ms, 16.666667);
    assert_eq!(time_weighted_percentile(&d, 0.95), Some(3600 * S));
    // Frame-count lows are dominated by the one frame; STK sees that half
    // the time is spent in a frame slower than 1 fps.
    let low = 216.0 / (3600.0 + 215.0 * 0.016666667);
    assert!(
        (s.low_0_1pct_fps - low).abs() < 1e-12,
        "{}",
        s.low_0_1pct_fps
    );
    assert_eq!(
        (s.steady_fps, s.mostly_steady_fps, s.typical_fps),
        (0, 0, 0)
    );
    assert!((s.average_fps - 216_001.0 / 7200.000072).abs() < 1e-9);
}

/// `len` frames of `base` with `spike` at the middle frame.
fn one_spike(len: usize, base: u64, spike: u64) -> (Vec<u64>, usize) {
    let mut d = vec![base; len];
    d[len / 2] = spike;
    (d, len / 2)
}

#[test]
fn nsight_median_10_frame_13_is_not_a_stutter() {
    // +3 ms is +30 % but under the 4 ms floor.
    let (d, _) = one_spike(40, 10 * MS, 13 * MS);
    assert_eq!(summary(&d).stutter_frames, Vec::<usize>::new());
}

#[test]
fn nsight_median_60_frame_71_is_not_a_stutter() {
    // +11 ms but only +18.3 % < 20 %.
    let (d, _) = one_spike(40, 60 * MS, 71 * MS);
    assert_eq!(summary(&d).stutter_count, 0);
}

#[test]
fn nsight_median_60_frame_80_is_a_stutter() {
    // +20 ms and +33 %: both conditions met.
    let (d, i) = one_spike(40, 60 * MS, 80 * MS);
    let s = summary(&d);
    assert_eq!(s.stutter_frames, vec![i]);
    assert_eq!(s.stutter_count, 1);
    // θ is configurable: at 40 % the same frame is not a stutter.
    assert_eq!(
        stutters(
            &d,
            &Options {
                stutter_threshold: 0.4,
                ..Options::default()
            }
        ),
        Vec::<usize>::new()
    );
}

#[test]
fn stutter_median_includes_the_frame_and_clips_at_ends() {
    // First frame 30 ms then 10 ms frames: its window is frames 0..=9,
    // median 10 ms → stutter at 0. A spike in the last frame likewise.
    let mut d = vec![10 * MS; 30];
    d[0] = 30 * MS;
    d[29] = 30 * MS;
    assert_eq!(summary(&d).stutter_frames, vec![0, 29]);
    // Even-sized window: 4 frames [10, 10, 30, 30] → median 20 ms; 30 ms is
    // +10 ms and +50 % → both 30 ms frames are stutters.
    let d = [10 * MS, 10 * MS, 30 * MS, 30 * MS];
    assert_eq!(summary(&d).stutter_frames, vec![2, 3]);
    // [10, 16, 30, 30]: median 23 ms, 30 ms is +7 ms but +30.4 % → stutter;
    // at θ = 0.31 not.
    let d = [10 * MS, 16 * MS, 30 * MS, 30 * MS];
    assert_eq!(summary(&d).stutter_frames, vec![2, 3]);
    assert_eq!(
        stutters(
            &d,
            &Options {
                stutter_threshold: 0.31,
                ..Options::default()
            }
        ),
        Vec::<usize>::new()
    );
}

#[test]
fn osc_alternating_frames() {
    // 10/20 ms alternating: every window has q1 = 10, q3 = 20 ms →
    // D = 10 ms > 4 ms, R = 2 > 1.2 → OSC.
    let d: Vec<u64> = (0..100)
        .map(|i| if i % 2 == 0 { 10 * MS } else { 20 * MS })
        .collect();
    let s = summary(&d);
    assert!(s.osc);
    assert!(oscillation(&d));
    // Constant frames: D = 0.
    assert!(!summary(&[16 * MS; 100]).osc);
    // Alternating 10/13 ms: R = 1.3 but D = 3 ms → not OSC.
    let d: Vec<u64> = (0..100)
        .map(|i| if i % 2 == 0 { 10 * MS } else { 13 * MS })
        .collect();
    assert!(!oscillation(&d));
    // Alternating 40/46 ms: D = 6 ms but R = 1.15 → not OSC.
    let d: Vec<u64> = (0..100)
        .map(|i| if i % 2 == 0 { 40 * MS } else { 46 * MS })
        .collect();
    assert!(!oscillation(&d));
}

#[test]
fn steady_fps_hand_checked() {
    // 16 666 666 ns: d·60 ≤ 1e9 → 60; 16 666 667 ns: d·60 > 1e9 → 59.
    let s = summary(&[16_666_666; 600]);
    assert_eq!(
        (s.steady_fps, s.mostly_steady_fps, s.typical_fps),
        (60, 60, 60)
    );
    let s = summary(&[16_666_667; 600]);
    assert_eq!(
        (s.steady_fps, s.mostly_steady_fps, s.typical_fps),
        (59, 59, 59)
    );
    // 1000 × 10 ms + one 30 ms: the excess bound holds steady at 50.
    let mut d = vec![10 * MS; 1000];
    d.push(30 * MS);
    let s = summary(&d);
    assert_eq!(
        (s.steady_fps, s.mostly_steady_fps, s.typical_fps),
        (50, 100, 100)
    );
    // 70 % of the time at 10 ms, 30 % at 25 ms (T = 1 s):
    // f ≤ 40: nothing slow. f in 41..=100: slow = 30 % (fails steady and
    // mostly), excess = 0.3·(1 − 40/f)… < 10 % ⇔ f < 60 → typical 59.
    let mut d = vec![10 * MS; 70];
    d.extend([25 * MS; 12]);
    let s = summary(&d);
    assert_eq!(
        (s.steady_fps, s.mostly_steady_fps, s.typical_fps),
        (40, 40, 59)
    );
}

#[test]
fn stk_curve_matches_definition() {
    let mut d = vec![10 * MS; 70];
    d.extend([25 * MS; 12]);
    let c = stk_curve(&d, 120);
    assert_eq!(c.len(), 120);
    assert_eq!(c[39].slow, 0.0);
    assert_eq!(c[40].slow, 0.3); // f = 41
                                 // f = 60: excess = 12·(25 − 16.67) ms / 1 s = 0.1.
    assert!((c[59].excess - 0.1).abs() < 1e-12);
    // f = 101: all frames slow.
    assert_eq!(c[100].slow, 1.0);
    assert!(c
        .windows(2)
        .all(|w| w[0].slow <= w[1].slow && w[0].excess <= w[1].excess));
}

#[test]
fn lows_average_and_percentiles_hand_checked() {
    // 990 × 10 ms, 10 × 50 ms: T = 10.4 s.
    let mut d = vec![10 * MS; 990];
    d.extend([50 * MS; 10]);
    let s = summary(&d);
    assert_eq!(s.frames, 1000);
    assert_eq!(s.duration_s, 10.4);
    assert_eq!(s.average_fps, 1e12 / 10.4e9); // N·1e9 / T(ns), both exact
    assert_eq!(s.low_1pct_fps, 20.0);
    assert_eq!(s.low_0_1pct_fps, 20.0);
    // 9.9 s of 10 ms frames: P50 and P90 fall in them (9.36 s ≤ 9.9 s),
    // P95 (9.88 s) too, P99 (10.296 s) is past 9.9 s → 50 ms.
    assert_eq!(
        (s.p50_ms, s.p90_ms, s.p95_ms, s.p99_ms, s.p99_9_ms),
        (10.0, 10.0, 10.0, 50.0, 50.0)
    );
}

#[test]
fn json_keys_are_the_contract() {
    let s = summary(&[10 * MS, 20 * MS]);
    let v = serde_json::to_value(&s).unwrap();
    let keys = keys::metrics_md_keys();
    for k in &keys {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    // The library's catalog (summarize's CSV columns and every table come
    // from it, with the per-frame stutter_frames list after stutter_count)
    // is the documented list, both ways and in order.
    let mut ours: Vec<&str> = Vec::new();
    for m in steadyhud_metrics::catalog::METRICS {
        ours.push(m.key);
        if m.key == "stutter_count" {
            ours.push("stutter_frames");
        }
    }
    assert_eq!(keys, ours);
    assert_eq!(summarize(&[], &Options::default()), None);
}

#[test]
fn rolling_follows_a_scripted_session() {
    // 10 s window at 60 fps with a 120 ms hitch: the hitch is a stutter while
    // in the window and leaves 10 s later.
    let mut r = Rolling::new(10 * S, 100_000, Options::default());
    for _ in 0..300 {
        r.push(16_666_667);
    }
    r.push(120 * MS);
    let s = r.summary().unwrap();
    assert_eq!(s.stutter_frames, vec![300]);
    assert_eq!(s.p99_9_ms, 120.0);
    for _ in 0..600 {
        r.push(16_666_667);
    }
    let s = r.summary().unwrap();
    assert_eq!(s.stutter_count, 0);
    // A frame stays while the frames after it take < 10 s:
    // 599 × 16.666667 ms = 9.98 s stays, 600 × = 10.0000002 s leaves.
    assert_eq!(r.len(), 600);
    assert_eq!(s, summary(&r.frames()));
}

/// docs/metrics.md, "Stutter time": 30 frames of 10 ms with the first and
/// last at 30 ms; both are stutters, and they take 60 of 340 ms.
#[test]
fn stutter_time_worked_example() {
    let mut d = vec![10 * MS; 30];
    d[0] = 30 * MS;
    d[29] = 30 * MS;
    let s = summary(&d);
    assert_eq!(s.stutter_frames, vec![0, 29]);
    assert!((s.stutter_time_pct - 100.0 * 60.0 / 340.0).abs() < 1e-12);
    assert_eq!(summary(&[10 * MS; 30]).stutter_time_pct, 0.0);
}
