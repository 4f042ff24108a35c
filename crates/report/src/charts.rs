//! The report's line charts (frame times, STK curves, time-weighted
//! percentiles), drawn for a chosen list of series so both layouts share
//! them: the few-runs layout passes every run, the many-runs layout only the
//! best, median, worst and baseline runs.

use super::run::Run;
use super::svg::{escape, truncate_middle, Chart};
use std::fmt::Write;
use steadyhud_metrics::{self as metrics, SortedDurations, StkPoint};

/// Chart size in pixels.
pub const WIDTH: f64 = 960.0;
pub const HEIGHT: f64 = 320.0;

/// One run drawn in a chart: its colour and what the legend calls it.
pub struct Series<'a> {
    pub run: &'a Run,
    pub colour: &'static str,
    /// Legend text, e.g. the file name or `best: file name`.
    pub label: String,
}

/// How dense a frame-time chart is: the overlaid chart gets the full page,
/// a per-run chart a strip, with fewer points and markers so that 100 of
/// them keep the file small.
#[derive(Clone, Copy)]
pub struct FrameTimeSize {
    pub height: f64,
    /// At most this many time buckets per run (min and max each).
    pub buckets: usize,
    /// At most this many stutter markers per run.
    pub max_markers: usize,
}

/// The overlaid frame-time chart of the few-runs layout.
pub const FULL: FrameTimeSize = FrameTimeSize {
    height: HEIGHT,
    buckets: 1200,
    max_markers: 400,
};

/// One per-run frame-time strip (`--frame-times`): about one bucket per
/// horizontal pixel of the plot.
pub const STRIP: FrameTimeSize = FrameTimeSize {
    height: 150.0,
    buckets: 440,
    max_markers: 100,
};

/// Characters of a run name that fit in a chart title (13 px bold text
/// over [`WIDTH`] pixels, with room for the metrics after it).
const TITLE_NAME_CHARS: usize = 80;

/// A legend: a colour swatch and the label of each series.
pub fn legend(series: &[Series]) -> String {
    let mut s = String::from("<p class=\"legend\">");
    for x in series {
        let _ = write!(
            s,
            "<span class=\"entry\"><span class=\"swatch\" style=\"background:{}\"></span>{}</span> ",
            x.colour,
            escape(&x.label)
        );
    }
    s.push_str("</p>");
    s
}

/// End time (s) of every frame, counted from the first present.
pub fn end_times_s(d: &[u64]) -> Vec<f64> {
    let mut t = 0u64;
    d.iter()
        .map(|&x| {
            t += x;
            t as f64 / 1e9
        })
        .collect()
}

/// Frame times over the run with stutters marked, all `series` overlaid.
/// `title` is `None` for the overlaid chart's usual title.
pub fn frame_time_chart(
    series: &[Series],
    size: FrameTimeSize,
    title: Option<&str>,
    id: &str,
) -> String {
    let duration = series
        .iter()
        .map(|s| s.run.summary.duration_s)
        .fold(0.0, f64::max);
    // Scale to the slow tail, not to one extreme frame: spikes beyond are
    // clipped at the top and still carry their stutter marker.
    let y_max = series
        .iter()
        .map(|s| {
            let r = s.run;
            let max = r.durations_ns.iter().copied().max().unwrap_or(0) as f64 / 1e6;
            max.min((r.summary.p99_9_ms * 2.0).max(r.summary.p50_ms * 4.0))
        })
        .fold(1.0, f64::max)
        * 1.1;
    let mut c = Chart::new(WIDTH, size.height, (0.0, duration), (0.0, y_max));
    let title = title.map_or_else(
        || "Frame time over the run".to_string(),
        |t| truncate_middle(t, TITLE_NAME_CHARS),
    );
    c.axes(&title, "time (s)", "frame time (ms)");
    let ends: Vec<Vec<f64>> = series
        .iter()
        .map(|s| end_times_s(&s.run.durations_ns))
        .collect();
    for (s, ends) in series.iter().zip(&ends) {
        c.line(
            &bucket_min_max(&s.run.durations_ns, ends, duration, size.buckets),
            s.colour,
            "series",
        );
    }
    for (s, ends) in series.iter().zip(&ends) {
        let r = s.run;
        let marks: Vec<(f64, f64, String)> = r
            .summary
            .stutter_frames
            .iter()
            .take(size.max_markers)
            .map(|&f| {
                let ms = r.durations_ns[f] as f64 / 1e6;
                (ends[f], ms, format!("{}: frame {f}, {ms:.1} ms", r.name))
            })
            .collect();
        c.markers(&marks, s.colour);
    }
    c.finish(id)
}

/// Frame times reduced to the min and max of each of `buckets` time
/// buckets, so a long log draws the same spikes in a bounded number of
/// points.
pub fn bucket_min_max(d: &[u64], ends: &[f64], duration: f64, buckets: usize) -> Vec<(f64, f64)> {
    let buckets = buckets.max(1);
    if d.len() <= 2 * buckets {
        return ends
            .iter()
            .zip(d)
            .map(|(&t, &x)| (t, x as f64 / 1e6))
            .collect();
    }
    let width = duration / buckets as f64;
    let mut out = Vec::with_capacity(2 * buckets);
    let mut i = 0;
    for b in 0..buckets {
        let end = (b + 1) as f64 * width;
        let start = i;
        while i < d.len() && (ends[i] <= end || b == buckets - 1) {
            i += 1;
        }
        if start == i {
            continue;
        }
        let (lo, hi) = (start..i).fold((start, start), |(lo, hi), k| {
            (
                if d[k] < d[lo] { k } else { lo },
                if d[k] > d[hi] { k } else { hi },
            )
        });
        for k in if lo <= hi { [lo, hi] } else { [hi, lo] } {
            out.push((ends[k], d[k] as f64 / 1e6));
        }
    }
    out
}

/// The highest target FPS the STK charts show: past every drawn run's
/// Typical FPS and average, where the curves have long reached their plateau.
pub fn stk_max_fps(series: &[Series]) -> u32 {
    let top = series
        .iter()
        .map(|s| (s.run.summary.typical_fps as f64).max(s.run.summary.average_fps))
        .fold(10.0, f64::max);
    ((top * 1.5).ceil() as u32).clamp(10, 2000)
}

/// Which STK share a chart shows.
#[derive(Clone, Copy)]
pub enum StkShare {
    Slow,
    Excess,
}

/// The two STK charts (slow(f), then excess(f)) of `series`, with Steady /
/// Mostly Steady / Typical marked per series.
pub fn stk_charts(series: &[Series]) -> String {
    let max_fps = stk_max_fps(series);
    let curves: Vec<Vec<StkPoint>> = series
        .iter()
        .map(|s| metrics::stk_curve(&s.run.durations_ns, max_fps))
        .collect();
    let mut h = stk_chart(series, &curves, max_fps, StkShare::Slow);
    h.push_str(&stk_chart(series, &curves, max_fps, StkShare::Excess));
    h
}

fn stk_chart(series: &[Series], curves: &[Vec<StkPoint>], max_fps: u32, share: StkShare) -> String {
    let pick = |p: &StkPoint| {
        100.0
            * if let StkShare::Slow = share {
                p.slow
            } else {
                p.excess
            }
    };
    let y_max = match share {
        StkShare::Slow => 100.0,
        StkShare::Excess => curves
            .iter()
            .flatten()
            .map(pick)
            .fold(1.0, f64::max)
            .min(100.0),
    };
    let (id, title, y_label) = match share {
        StkShare::Slow => (
            "stk-slow",
            "Share of time in frames slower than the target",
            "time in slow frames (%)",
        ),
        StkShare::Excess => (
            "stk-excess",
            "Share of time spent beyond the target frame time",
            "excess time (%)",
        ),
    };
    let mut c = Chart::new(WIDTH, HEIGHT, (1.0, max_fps as f64), (0.0, y_max));
    c.axes(title, "target FPS", y_label);
    for (s, curve) in series.iter().zip(curves) {
        let pts: Vec<(f64, f64)> = curve.iter().map(|p| (p.fps as f64, pick(p))).collect();
        c.line(&pts, s.colour, "series");
    }
    // The chart places the labels apart from each other (Chart::finish).
    for s in series {
        let m = &s.run.summary;
        for (name, f) in [
            ("Steady", m.steady_fps),
            ("Mostly", m.mostly_steady_fps),
            ("Typical", m.typical_fps),
        ] {
            if f > 0 {
                c.vrule(f as f64, s.colour, &format!("{name} {f}"));
            }
        }
    }
    c.finish(id)
}

/// How the percentile chart's frame-time axis is scaled.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// From 0 to a little above the slowest run's P99.9 (few runs, usually
    /// of one game: their differences read best on a linear axis).
    Linear,
    /// From the fastest to the slowest frame drawn, log scale: the best and
    /// the worst of 100 runs can be 100× apart, and a linear axis would
    /// flatten every curve but the worst.
    Log,
}

/// The time-weighted percentile curves of `series`.
pub fn percentile_chart(series: &[Series], scale: Scale) -> String {
    let curves: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|s| percentile_curve(&s.run.durations_ns))
        .collect();
    let mut c = match scale {
        Scale::Linear => {
            let y_max = series
                .iter()
                .map(|s| s.run.summary.p99_9_ms)
                .fold(1.0, f64::max)
                * 1.2;
            Chart::new(WIDTH, HEIGHT, (0.0, 100.0), (0.0, y_max))
        }
        Scale::Log => {
            let ms = curves.iter().flatten().map(|&(_, ms)| ms);
            let lo = ms.clone().fold(f64::INFINITY, f64::min);
            let hi = ms.fold(0.0, f64::max);
            Chart::new(WIDTH, HEIGHT, (0.0, 100.0), (lo / 1.2, hi * 1.2)).log_y()
        }
    };
    c.axes(
        "Time-weighted frame-time percentiles",
        "share of time (%)",
        if scale == Scale::Log {
            "frame time (ms, log scale)"
        } else {
            "frame time (ms)"
        },
    );
    for (s, pts) in series.iter().zip(&curves) {
        c.line(pts, s.colour, "series");
    }
    c.finish("percentiles")
}

/// (p·100, P(p) in ms) for p in 0..=1 in 0.1% steps, by the rule of
/// docs/metrics.md#time-weighted-percentiles.
pub fn percentile_curve(d: &[u64]) -> Vec<(f64, f64)> {
    let sorted = SortedDurations::new(d);
    (0..=1000u64)
        .filter_map(|k| {
            Some((
                k as f64 / 10.0,
                sorted.percentile_ppm(k * 1000)? as f64 / 1e6,
            ))
        })
        .collect()
}

/// What the STK charts say about themselves (shared by both layouts).
pub const STK_NOTE: &str = "<h2>Time in slow frames and excess time (STK curves)</h2><p class=\"note\">For each target FPS f: the share of the run spent in frames slower than 1/f, and the share spent beyond 1/f. Steady FPS keeps them under 1% and 0.1%, Mostly Steady under 12% and 2%, Typical under 50% and 10%.</p>";

/// What the percentile chart says about itself (shared by both layouts).
pub const PERCENTILE_NOTE: &str = "<h2>Time-weighted percentiles</h2><p class=\"note\">A point (x, y) reads: x% of the run's time was spent in frames of at most y ms.</p>";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucketing_keeps_the_spike() {
        let mut d = vec![16_000_000u64; 100_000];
        d[54_321] = 250_000_000;
        let ends = end_times_s(&d);
        for size in [FULL, STRIP] {
            let pts = bucket_min_max(&d, &ends, *ends.last().unwrap(), size.buckets);
            assert!(pts.len() <= 2 * size.buckets);
            assert!(pts.iter().any(|&(_, ms)| ms == 250.0));
            assert!(pts.windows(2).all(|w| w[1].0 >= w[0].0));
        }
    }

    #[test]
    fn percentile_curve_follows_time_not_count() {
        // 99 frames of 10 ms and one of 990 ms: half of the time is in the long frame.
        let mut d = vec![10_000_000u64; 99];
        d.push(990_000_000);
        let curve = percentile_curve(&d);
        let at = |p: f64| curve.iter().find(|(x, _)| (*x - p).abs() < 1e-9).unwrap().1;
        assert_eq!(at(40.0), 10.0);
        assert_eq!(at(60.0), 990.0);
    }
}
