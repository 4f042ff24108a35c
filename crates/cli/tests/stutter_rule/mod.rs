//! The Nsight stutter rule of docs/metrics.md, written again for the tests
//! (an independent computation to hold `analyze` to): frame i is a stutter
//! when it exceeds the median of its 19-frame window (clipped at the ends)
//! by more than 4 ms and by more than 20 %.

/// The stutter frames of `d`, whose unit makes 4 ms `four_ms` (4.0 for
/// milliseconds, 4e6 for nanoseconds).
pub fn stutters_by_hand(d: &[f64], four_ms: f64) -> Vec<usize> {
    (0..d.len())
        .filter(|&i| {
            let lo = i.saturating_sub(9);
            let hi = (i + 9).min(d.len() - 1);
            let mut w: Vec<f64> = d[lo..=hi].to_vec();
            w.sort_by(f64::total_cmp);
            let n = w.len();
            let m = if n % 2 == 1 {
                w[n / 2]
            } else {
                (w[n / 2 - 1] + w[n / 2]) / 2.0
            };
            d[i] - m > four_ms && (d[i] - m) / m > 0.20
        })
        .collect()
}
