//! Property tests: the rolling engine equals the whole-session functions on
//! the same frames (bit for bit), and percentiles, lows, STK metrics,
//! stutters and OSC equal plain reference implementations written straight
//! from docs/metrics.md (linear scans, full sorts, scanning every f).

use proptest::prelude::*;
use steadyhud_metrics::{
    stk_curve, summarize, Options, Rolling, SortedDurations, Summary, MOSTLY_STEADY, STEADY,
    TYPICAL,
};

const MS: u64 = 1_000_000;

/// Frame times with ties, jitter, spikes and (sometimes) sub-µs frames.
fn duration() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => prop::sample::select(vec![10 * MS, 16_666_667, 20 * MS, 33_333_333, 6_944_444]),
        4 => 5 * MS..40 * MS,
        1 => 40 * MS..400 * MS,
        1 => 1u64..2_000_000,
    ]
}

fn same(a: &Option<Summary>, b: &Option<Summary>) -> Result<(), TestCaseError> {
    // Debug prints every f64 in shortest round-trip form: equal strings ⇔
    // equal bits (NaN aside, which cannot occur for non-empty input).
    prop_assert_eq!(format!("{a:?}"), format!("{b:?}"));
    prop_assert_eq!(a, b);
    Ok(())
}

/// The frames a window should hold after `all` were pushed, and where they start.
fn expected_window(all: &[u64], window_ns: u64, max_frames: usize) -> usize {
    let mut start = all.len();
    // Frame i stays while the frames after it take < window_ns.
    let mut after: u128 = 0;
    while start > 0 && all.len() - start < max_frames {
        let i = start - 1;
        if after >= u128::from(window_ns) {
            break;
        }
        after += u128::from(all[i]);
        start = i;
    }
    start
}

fn check_rolling(
    frames: &[u64],
    window_ns: u64,
    max_frames: usize,
    theta: f64,
    every: usize,
) -> Result<(), TestCaseError> {
    let opts = Options {
        stutter_threshold: theta,
        ..Options::default()
    };
    let mut r = Rolling::new(window_ns, max_frames, opts);
    for (k, &d) in frames.iter().enumerate() {
        r.push(d);
        if k % every != 0 && k + 1 != frames.len() {
            continue;
        }
        let all = &frames[..=k];
        let start = expected_window(all, window_ns, max_frames);
        prop_assert_eq!(r.frames(), all[start..].to_vec());
        prop_assert_eq!(r.first_index(), start as u64);
        prop_assert_eq!(r.len(), all.len() - start);
        let exact = summarize(&all[start..], &opts);
        same(&r.summary(), &exact)?;
        let flags = r.stutter_flags();
        let from_summary: Vec<usize> = flags
            .iter()
            .enumerate()
            .filter(|(_, &f)| f)
            .map(|(i, _)| i)
            .collect();
        prop_assert_eq!(
            from_summary,
            exact.map(|s| s.stutter_frames).unwrap_or_default()
        );
        prop_assert_eq!(r.sorted().stk_curve(150), stk_curve(&all[start..], 150));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn rolling_equals_exact_small_windows(
        frames in prop::collection::vec(duration(), 0..120),
        window_ns in prop_oneof![0u64..3_000_000_000, Just(u64::MAX)],
        max_frames in 0usize..80,
        theta in prop_oneof![Just(0.2), 0.0f64..1.0],
    ) {
        check_rolling(&frames, window_ns, max_frames, theta, 1)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn rolling_equals_exact_long_sequences(
        frames in prop::collection::vec(duration(), 200..700),
        window_ns in 200_000_000u64..8_000_000_000,
        max_frames in 19usize..400,
    ) {
        check_rolling(&frames, window_ns, max_frames, 0.2, 13)?;
    }
}

// ---- plain reference implementations, straight from docs/metrics.md ----

/// s_j for the smallest j with Σ_{k≤j} s_k ≥ p·T, p = ppm / 1e6: linear scan.
fn ref_percentile(d: &[u64], ppm: u64) -> u64 {
    let mut s = d.to_vec();
    s.sort();
    let t: u128 = s.iter().map(|&x| x as u128).sum();
    let mut acc: u128 = 0;
    for &x in &s {
        acc += x as u128;
        if acc * 1_000_000 >= t * ppm as u128 {
            return x;
        }
    }
    unreachable!()
}

/// Does f meet slow(f) < a/1000 and excess(f) < b/1000? One pass over frames.
fn ref_meets(d: &[u64], f: u64, a: u128, b: u128) -> bool {
    let t: u128 = d.iter().map(|&x| x as u128).sum();
    let mut slow: u128 = 0; // Σ d over slow frames
    let mut excess_f: u128 = 0; // Σ (d·f − 1e9) over slow frames = f·excess time
    for &x in d {
        if x as u128 * f as u128 > 1_000_000_000 {
            slow += x as u128;
            excess_f += x as u128 * f as u128 - 1_000_000_000;
        }
    }
    // slow/T < a/1000 and (excess_f/f)/T < b/1000
    slow * 1000 < a * t && excess_f * 1000 < b * f as u128 * t
}

/// Largest f meeting the bounds, scanning every f up to where all frames are slow.
fn ref_stk(d: &[u64], a: u128, b: u128) -> u32 {
    let min = *d.iter().min().unwrap();
    let mut best = 0;
    for f in 1..=(1_000_000_000 / min + 1) {
        if ref_meets(d, f, a, b) {
            best = f;
        }
    }
    best as u32
}

fn ref_low(d: &[u64], divisor: usize) -> f64 {
    let mut s = d.to_vec();
    s.sort_by(|x, y| y.cmp(x));
    let k = (d.len() / divisor).max(1);
    let sum: u64 = s[..k].iter().sum();
    k as f64 / (sum as f64 / 1e9)
}

/// numpy.percentile(v, 100·q) (method "linear") on a copy, fully sorted.
fn ref_np_percentile(v: &[f64], q: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let virt = (s.len() - 1) as f64 * q;
    let lo = virt.floor() as usize;
    let hi = (lo + 1).min(s.len() - 1);
    let t = virt - virt.floor();
    let (a, b) = (s[lo], s[hi]);
    if t >= 0.5 {
        b - (b - a) * (1.0 - t)
    } else {
        a + (b - a) * t
    }
}

/// Stutter indices and OSC: every frame's window sorted from scratch.
fn ref_stutters_osc(d: &[u64], theta: f64) -> (Vec<usize>, bool) {
    let n = d.len();
    let (mut st, mut dd, mut rr) = (vec![], vec![], vec![]);
    for i in 0..n {
        let lo = i.saturating_sub(9);
        let hi = (i + 9).min(n - 1);
        let w: Vec<f64> = {
            let mut w: Vec<u64> = d[lo..=hi].to_vec();
            w.sort();
            w.into_iter().map(|x| x as f64).collect()
        };
        let m = if w.len() % 2 == 1 {
            w[w.len() / 2]
        } else {
            (w[w.len() / 2 - 1] + w[w.len() / 2]) / 2.0
        };
        let x = d[i] as f64 - m;
        if x > 4e6 && x / m > theta {
            st.push(i);
        }
        let q1 = ref_np_percentile(&w, 0.25);
        let q3 = ref_np_percentile(&w, 0.75);
        dd.push(q3 - q1);
        rr.push(q3 / q1);
    }
    let osc = ref_np_percentile(&dd, 0.9) > 4e6 && ref_np_percentile(&rr, 0.9) > 1.2;
    (st, osc)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn percentiles_and_lows_match_reference(
        d in prop::collection::vec(duration(), 1..300),
        ppm in 0u64..=1_000_000,
    ) {
        let sorted = SortedDurations::new(&d);
        prop_assert_eq!(sorted.percentile_ppm(ppm), Some(ref_percentile(&d, ppm)));
        let s = summarize(&d, &Options::default()).unwrap();
        let ms = |ppm| ref_percentile(&d, ppm) as f64 / 1e6;
        prop_assert_eq!(s.p50_ms, ms(500_000));
        prop_assert_eq!(s.p90_ms, ms(900_000));
        prop_assert_eq!(s.p95_ms, ms(950_000));
        prop_assert_eq!(s.p99_ms, ms(990_000));
        prop_assert_eq!(s.p99_9_ms, ms(999_000));
        prop_assert!((s.low_1pct_fps - ref_low(&d, 100)).abs() <= 1e-9 * s.low_1pct_fps);
        prop_assert!((s.low_0_1pct_fps - ref_low(&d, 1000)).abs() <= 1e-9 * s.low_0_1pct_fps);
        prop_assert_eq!(s.frames, d.len());
    }

    #[test]
    fn stk_matches_scan_over_every_f(
        // ≥ 1 ms so that the reference scans at most ~1000 targets.
        d in prop::collection::vec(prop_oneof![
            3 => MS..40 * MS,
            1 => prop::sample::select(vec![10 * MS, 16_666_667, 20 * MS, 25 * MS]),
            1 => 40 * MS..1500 * MS,
        ], 1..40),
    ) {
        let s = summarize(&d, &Options::default()).unwrap();
        prop_assert_eq!(s.steady_fps, ref_stk(&d, 10, 1));
        prop_assert_eq!(s.mostly_steady_fps, ref_stk(&d, 120, 20));
        prop_assert_eq!(s.typical_fps, ref_stk(&d, 500, 100));
        let sd = SortedDurations::new(&d);
        prop_assert_eq!(sd.stk_fps(STEADY), s.steady_fps);
        prop_assert_eq!(sd.stk_fps(MOSTLY_STEADY), s.mostly_steady_fps);
        prop_assert_eq!(sd.stk_fps(TYPICAL), s.typical_fps);
        // Curves: plain sums divided once.
        let t: u64 = d.iter().sum();
        for p in stk_curve(&d, 200) {
            let f = u64::from(p.fps);
            let slow: u64 = d.iter().filter(|&&x| x * f > 1_000_000_000).sum();
            prop_assert_eq!(p.slow, slow as f64 / t as f64);
            let ex: f64 = d.iter().filter(|&&x| x * f > 1_000_000_000)
                .map(|&x| x as f64 - 1e9 / f as f64).sum();
            prop_assert!((p.excess - ex / t as f64).abs() < 1e-9);
        }
    }

    #[test]
    fn stutters_and_osc_match_reference(
        d in prop::collection::vec(duration(), 1..150),
        theta in prop_oneof![Just(0.2), 0.0f64..1.0],
    ) {
        let s = summarize(&d, &Options {
        stutter_threshold: theta,
        ..Options::default()
    }).unwrap();
        let (st, osc) = ref_stutters_osc(&d, theta);
        prop_assert_eq!(&s.stutter_frames, &st);
        prop_assert_eq!(s.stutter_count, st.len());
        prop_assert_eq!(s.osc, osc);
    }

    #[test]
    fn oscillating_sequences_match_reference(
        a in 5 * MS..30 * MS,
        b in 5 * MS..30 * MS,
        jitter in prop::collection::vec(0u64..3 * MS, 20..120),
    ) {
        // Alternating a/b with jitter: the OSC rule is exercised near both
        // of its thresholds.
        let d: Vec<u64> = jitter.iter().enumerate()
            .map(|(i, j)| if i % 2 == 0 { a + j } else { b + j }).collect();
        let s = summarize(&d, &Options::default()).unwrap();
        let (st, osc) = ref_stutters_osc(&d, 0.2);
        prop_assert_eq!(s.osc, osc);
        prop_assert_eq!(s.stutter_frames, st);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    /// Any u64 durations (zeros, u64::MAX): no panic or overflow anywhere,
    /// and rolling still equals exact.
    #[test]
    fn extreme_durations_never_panic(
        d in prop::collection::vec(prop_oneof![
            Just(0u64), Just(1u64), Just(u64::MAX), any::<u64>(), duration()
        ], 0..60),
        window_ns in any::<u64>(),
        max_frames in 0usize..40,
    ) {
        let _ = summarize(&d, &Options::default());
        let _ = stk_curve(&d, 50);
        let mut r = Rolling::new(window_ns, max_frames, Options::default());
        for &x in &d {
            r.push(x);
        }
        let exact = summarize(&r.frames(), &Options::default());
        // NaN can appear here (0/0 with zero durations): compare the Debug form.
        prop_assert_eq!(format!("{:?}", r.summary()), format!("{:?}", exact));
    }
}
