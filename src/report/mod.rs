//! `steadyhud report`: one self-contained HTML file (inline SVG, no script,
//! no network) comparing one or more frame-time logs.
//!
//! Charts: frame times over time with stutters marked, the STK curves
//! (share of time in slow frames and excess time against target FPS, with
//! Steady / Mostly Steady / Typical marked), the time-weighted percentile
//! curve, and a metrics table with deltas against the first log.

pub mod svg;
pub mod table;

use crate::metrics::{self, SortedDurations, StkPoint, Summary};
use std::fmt::Write;
use svg::{colour, escape, Chart};

/// Chart size in pixels.
const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 320.0;
/// Frame-time chart: at most this many time buckets per run (min and max each).
const BUCKETS: usize = 1200;
/// Frame-time chart: at most this many stutter markers per run.
const MAX_MARKERS: usize = 400;

/// One analysed log.
pub struct Run {
    /// What the log is called in legends and tables (usually its file name).
    pub name: String,
    pub durations_ns: Vec<u64>,
    pub summary: Summary,
    /// What spiked with each stutter, when the log has counter columns.
    pub stutter_causes: Option<Vec<crate::counters::Cause>>,
    /// The GPU-bound verdict, when the log has GPU busy times.
    pub gpu: Option<crate::metrics::gpu::GpuStats>,
}

/// The whole report page.
pub fn render_html(runs: &[Run], title: &str) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style></head><body><h1>{t}</h1>",
        t = escape(title)
    );
    h.push_str(&legend(runs));
    h.push_str(&metrics_table(runs));
    h.push_str(&causes_section(runs));
    h.push_str("<h2>Frame times</h2>");
    h.push_str(&frame_time_chart(runs));
    h.push_str("<h2>Time in slow frames and excess time (STK curves)</h2><p class=\"note\">For each target FPS f: the share of the run spent in frames slower than 1/f, and the share spent beyond 1/f. Steady FPS keeps them under 1% and 0.1%, Mostly Steady under 12% and 2%, Typical under 50% and 10%.</p>");
    let max_fps = stk_max_fps(runs);
    let curves: Vec<Vec<StkPoint>> = runs
        .iter()
        .map(|r| metrics::stk_curve(&r.durations_ns, max_fps))
        .collect();
    h.push_str(&stk_chart(runs, &curves, max_fps, StkShare::Slow));
    h.push_str(&stk_chart(runs, &curves, max_fps, StkShare::Excess));
    h.push_str("<h2>Time-weighted percentiles</h2><p class=\"note\">A point (x, y) reads: x% of the run's time was spent in frames of at most y ms.</p>");
    h.push_str(&percentile_chart(runs));
    h.push_str("<footer>steadyhud ");
    h.push_str(env!("CARGO_PKG_VERSION"));
    h.push_str(" — metrics weighted by time, as defined in METRICS.md.</footer></body></html>\n");
    h
}

const STYLE: &str = "body{font-family:sans-serif;margin:24px;color:#222;max-width:1000px}\
h1{font-size:22px}h2{font-size:17px;margin-top:28px}.note{color:#555;font-size:13px}\
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
th:first-child,td:first-child{text-align:left}.better{color:#087f23}.worse{color:#b00020}\
.swatch{display:inline-block;width:12px;height:12px;margin:0 6px 0 14px;vertical-align:middle}\
svg{display:block;margin:8px 0;background:#fff}.title{font-size:13px;font-weight:bold}\
.tick{font-size:11px;fill:#444}.label{font-size:12px;fill:#222}.grid{stroke:#e4e4e4}\
.frame{fill:none;stroke:#888}.rule-label{font-size:11px}footer{margin-top:24px;color:#777;font-size:12px}";

fn legend(runs: &[Run]) -> String {
    let mut s = String::from("<p class=\"legend\">");
    for (i, r) in runs.iter().enumerate() {
        let _ = write!(
            s,
            "<span class=\"swatch\" style=\"background:{}\"></span>{}",
            colour(i),
            escape(&r.name)
        );
    }
    s.push_str("</p>");
    s
}

fn metrics_table(runs: &[Run]) -> String {
    let mut s = String::from("<table id=\"metrics\"><tr><th>metric</th>");
    for (i, r) in runs.iter().enumerate() {
        let _ = write!(s, "<th>{}</th>", escape(&r.name));
        if i > 0 {
            s.push_str("<th>Δ vs first</th>");
        }
    }
    s.push_str("</tr>");
    for row in table::ROWS {
        let _ = write!(s, "<tr><td>{}{}</td>", row.label, unit_suffix(row.unit));
        let base = (row.get)(&runs[0].summary);
        for (i, r) in runs.iter().enumerate() {
            let v = (row.get)(&r.summary);
            let _ = write!(s, "<td>{}</td>", table::fmt_value(row, v));
            if i > 0 {
                s.push_str(&change_cell(row, base, v));
            }
        }
        s.push_str("</tr>");
    }
    for row in &table::GPU_ROWS {
        let _ = write!(s, "<tr><td>{}{}</td>", row.label, unit_suffix(row.unit));
        for (i, r) in runs.iter().enumerate() {
            let _ = write!(s, "<td>{}</td>", table::fmt_gpu(row, r.gpu.as_ref()));
            if i > 0 {
                let change = table::fmt_gpu_change(row, runs[0].gpu.as_ref(), r.gpu.as_ref());
                let _ = write!(s, "<td>{change}</td>");
            }
        }
        s.push_str("</tr>");
    }
    s.push_str("<tr><td>Oscillation (OSC)</td>");
    for (i, r) in runs.iter().enumerate() {
        let _ = write!(s, "<td>{}</td>", if r.summary.osc { "yes" } else { "no" });
        if i > 0 {
            s.push_str("<td></td>");
        }
    }
    s.push_str("</tr></table>");
    s
}

/// A `<td>` with the change from `base` to `v`, classed better / worse.
fn change_cell(row: &table::Row, base: f64, v: f64) -> String {
    format!(
        "<td class=\"{}\">{}</td>",
        table::verdict_word(row, base, v),
        table::fmt_change(base, v)
    )
}

/// Stutters listed per run in the causes section.
const CAUSES_LISTED: usize = 10;

/// "Why it stuttered": the stutters of every run by main cause (runs whose
/// logs have no counter columns read n/a), then each such run's first
/// stutters with the counters that spiked. Empty when no run has counters.
fn causes_section(runs: &[Run]) -> String {
    let per_run: Vec<Option<&[crate::counters::Cause]>> =
        runs.iter().map(|r| r.stutter_causes.as_deref()).collect();
    if per_run.iter().all(Option::is_none) {
        return String::new();
    }
    let mut s = String::from(
        "<h2>Why it stuttered (statistics counters)</h2><p class=\"note\">Each stutter counts under the first \
         counter that spiked with it (CPU time first, larger first); n/a: the log has no counter columns.</p>\
         <table id=\"causes\"><tr><th>main cause</th>",
    );
    for (i, r) in runs.iter().enumerate() {
        let _ = write!(s, "<th>{}</th>", escape(&r.name));
        if i > 0 {
            s.push_str("<th>Δ vs first</th>");
        }
    }
    s.push_str("</tr>");
    for row in table::cause_rows(&per_run) {
        let _ = write!(s, "<tr><td>{}</td>", escape(&row.label));
        for (i, n) in row.counts.iter().enumerate() {
            match n {
                Some(n) => {
                    let _ = write!(s, "<td>{n}</td>");
                }
                None => s.push_str("<td>n/a</td>"),
            }
            match (i, row.counts[0], *n) {
                (0, _, _) => {}
                (_, Some(a), Some(b)) => {
                    s.push_str(&change_cell(&table::CAUSE_ROW, a as f64, b as f64))
                }
                _ => s.push_str("<td></td>"),
            }
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>");
    for (r, causes) in runs.iter().zip(&per_run) {
        let Some(causes) = causes.filter(|c| !c.is_empty()) else {
            continue;
        };
        let _ = write!(
            s,
            "<p class=\"note\">{}: first stutters</p><ul class=\"causes\">",
            escape(&r.name)
        );
        for c in causes.iter().take(CAUSES_LISTED) {
            let _ = write!(s, "<li>{}</li>", escape(&c.to_string()));
        }
        if causes.len() > CAUSES_LISTED {
            let _ = write!(s, "<li>… {} more</li>", causes.len() - CAUSES_LISTED);
        }
        s.push_str("</ul>");
    }
    s
}

fn unit_suffix(unit: &str) -> String {
    if unit.is_empty() {
        String::new()
    } else {
        format!(" ({unit})")
    }
}

/// End time (s) of every frame, counted from the first present.
fn end_times_s(d: &[u64]) -> Vec<f64> {
    let mut t = 0u64;
    d.iter()
        .map(|&x| {
            t += x;
            t as f64 / 1e9
        })
        .collect()
}

fn frame_time_chart(runs: &[Run]) -> String {
    let duration = runs
        .iter()
        .map(|r| r.summary.duration_s)
        .fold(0.0, f64::max);
    // Scale to the slow tail, not to one extreme frame: spikes beyond are
    // clipped at the top and still carry their stutter marker.
    let y_max = runs
        .iter()
        .map(|r| {
            let max = r.durations_ns.iter().copied().max().unwrap_or(0) as f64 / 1e6;
            max.min((r.summary.p99_9_ms * 2.0).max(r.summary.p50_ms * 4.0))
        })
        .fold(1.0, f64::max)
        * 1.1;
    let mut c = Chart::new(WIDTH, HEIGHT, (0.0, duration), (0.0, y_max));
    c.axes("Frame time over the run", "time (s)", "frame time (ms)");
    for (i, r) in runs.iter().enumerate() {
        let ends = end_times_s(&r.durations_ns);
        c.line(
            &bucket_min_max(&r.durations_ns, &ends, duration),
            colour(i),
            "series",
        );
    }
    for (i, r) in runs.iter().enumerate() {
        let ends = end_times_s(&r.durations_ns);
        let marks: Vec<(f64, f64, String)> = r
            .summary
            .stutter_frames
            .iter()
            .take(MAX_MARKERS)
            .map(|&f| {
                let ms = r.durations_ns[f] as f64 / 1e6;
                (ends[f], ms, format!("{}: frame {f}, {ms:.1} ms", r.name))
            })
            .collect();
        c.markers(&marks, colour(i));
    }
    c.finish("frametimes")
}

/// Frame times reduced to the min and max of each time bucket, so a long
/// log draws the same spikes in a bounded number of points.
fn bucket_min_max(d: &[u64], ends: &[f64], duration: f64) -> Vec<(f64, f64)> {
    if d.len() <= 2 * BUCKETS {
        return ends
            .iter()
            .zip(d)
            .map(|(&t, &x)| (t, x as f64 / 1e6))
            .collect();
    }
    let width = duration / BUCKETS as f64;
    let mut out = Vec::with_capacity(2 * BUCKETS);
    let mut i = 0;
    for b in 0..BUCKETS {
        let end = (b + 1) as f64 * width;
        let start = i;
        while i < d.len() && (ends[i] <= end || b == BUCKETS - 1) {
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

/// The highest target FPS the STK charts show: past every run's Typical FPS
/// and average, where the curves have long reached their plateau.
fn stk_max_fps(runs: &[Run]) -> u32 {
    let top = runs
        .iter()
        .map(|r| (r.summary.typical_fps as f64).max(r.summary.average_fps))
        .fold(10.0, f64::max);
    ((top * 1.5).ceil() as u32).clamp(10, 2000)
}

#[derive(Clone, Copy)]
enum StkShare {
    Slow,
    Excess,
}

fn stk_chart(runs: &[Run], curves: &[Vec<StkPoint>], max_fps: u32, share: StkShare) -> String {
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
    for (i, curve) in curves.iter().enumerate() {
        let pts: Vec<(f64, f64)> = curve.iter().map(|p| (p.fps as f64, pick(p))).collect();
        c.line(&pts, colour(i), "series");
    }
    for (i, r) in runs.iter().enumerate() {
        let s = &r.summary;
        for (k, (name, f)) in [
            ("Steady", s.steady_fps),
            ("Mostly", s.mostly_steady_fps),
            ("Typical", s.typical_fps),
        ]
        .into_iter()
        .enumerate()
        {
            if f > 0 {
                c.vrule(f as f64, colour(i), &format!("{name} {f}"), i * 3 + k);
            }
        }
    }
    c.finish(id)
}

fn percentile_chart(runs: &[Run]) -> String {
    let curves: Vec<Vec<(f64, f64)>> = runs
        .iter()
        .map(|r| percentile_curve(&r.durations_ns))
        .collect();
    let y_max = runs.iter().map(|r| r.summary.p99_9_ms).fold(1.0, f64::max) * 1.2;
    let mut c = Chart::new(WIDTH, HEIGHT, (0.0, 100.0), (0.0, y_max));
    c.axes(
        "Time-weighted frame-time percentiles",
        "share of time (%)",
        "frame time (ms)",
    );
    for (i, pts) in curves.iter().enumerate() {
        c.line(pts, colour(i), "series");
    }
    c.finish("percentiles")
}

/// (p·100, P(p) in ms) for p in 0..=1 in 0.1% steps, by the METRICS.md rule.
fn percentile_curve(d: &[u64]) -> Vec<(f64, f64)> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucketing_keeps_the_spike() {
        let mut d = vec![16_000_000u64; 100_000];
        d[54_321] = 250_000_000;
        let ends = end_times_s(&d);
        let pts = bucket_min_max(&d, &ends, *ends.last().unwrap());
        assert!(pts.len() <= 2 * BUCKETS);
        assert!(pts.iter().any(|&(_, ms)| ms == 250.0));
        assert!(pts.windows(2).all(|w| w[1].0 >= w[0].0));
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
