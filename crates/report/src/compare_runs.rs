//! The page of `steadyhud compare A… --vs B… --html FILE`: per compared
//! metric one chart with each side's estimate (a filled dot), its 95 %
//! interval (a bar with end caps) and each run's own value (small open
//! dots), then the table of estimates, B − A, its interval and the verdict.
//!
//! Text is placed against [`text_width_bound`], the widest any common font
//! draws it: the value column is as wide as its longest label, so nothing
//! overlaps whatever font the browser picks.

use super::svg::{colour, escape, fmt_tick, text_width_bound, ticks};
use std::fmt::Write;
use steadyhud_metrics::bootstrap::{Comparison, MetricComparison, SideEstimate, Verdict};

/// One side's runs, in the order given.
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    pub names: Vec<String>,
    pub durations_s: Vec<f64>,
}

/// Both sides.
#[derive(Clone, Debug, PartialEq)]
pub struct Sides {
    pub a: Side,
    pub b: Side,
}

const WIDTH: f64 = 960.0;
/// Font sizes of `.label` and `.tick` in the report's style.
const LABEL_PX: f64 = 12.0;
const TICK_PX: f64 = 11.0;
const LEFT: f64 = 40.0;
const TOP: f64 = 30.0;
/// Height of one side's row.
const ROW: f64 = 26.0;
const AXIS: f64 = 26.0;

fn fmt(v: f64, decimals: usize) -> String {
    if v.is_finite() {
        format!("{v:.decimals$}")
    } else {
        "n/a".into()
    }
}

fn fmt_signed(v: f64, decimals: usize) -> String {
    if v.is_finite() {
        format!("{v:+.decimals$}")
    } else {
        "n/a".into()
    }
}

/// A side's estimate and interval as text: `57 [55.2, 58.9]`.
fn side_text(e: &SideEstimate, decimals: usize) -> String {
    let d = decimals.max(1);
    format!(
        "{} [{}, {}]",
        fmt(e.estimate, decimals),
        fmt(e.ci.low, d),
        fmt(e.ci.high, d)
    )
}

/// The chart of one metric, `<svg id="ci-KEY">`.
pub fn metric_chart(m: &MetricComparison) -> String {
    let dec = m.metric.decimals;
    let sides = [("A", &m.a), ("B", &m.b)];
    let texts: Vec<String> = sides.iter().map(|(_, e)| side_text(e, dec)).collect();
    let value_w = texts
        .iter()
        .map(|t| text_width_bound(t, LABEL_PX))
        .fold(0.0, f64::max);
    let right = WIDTH - 8.0 - value_w - 12.0;
    let finite = |v: &f64| v.is_finite();
    let all: Vec<f64> = sides
        .iter()
        .flat_map(|(_, e)| {
            [e.estimate, e.ci.low, e.ci.high]
                .into_iter()
                .chain(e.runs.iter().copied())
        })
        .filter(finite)
        .collect();
    let (mut lo, mut hi) = all
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(*v), h.max(*v))
        });
    if !lo.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.08).max(hi.abs() * 0.01).max(1e-9);
    let (lo, hi) = (lo - pad, hi + pad);
    let px = |v: f64| LEFT + (v - lo) / (hi - lo) * (right - LEFT);
    let height = TOP + 2.0 * ROW + AXIS;
    let axis_y = TOP + 2.0 * ROW + 4.0;
    let unit = if m.metric.unit.is_empty() {
        String::new()
    } else {
        format!(" ({})", m.metric.unit)
    };
    let d = dec.max(1);
    let title = format!(
        "{}{unit}: B − A {} [{}, {}], {}",
        m.metric.label,
        fmt_signed(m.difference, d),
        fmt_signed(m.ci.low, d),
        fmt_signed(m.ci.high, d),
        m.verdict.word()
    );
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg id="ci-{key}" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}"><text class="title" x="8" y="18">{t}</text>"#,
        key = m.metric.key,
        t = escape(&title)
    );
    let tick_vals = ticks(lo, hi, 6);
    let step = tick_vals.get(1).map_or(1.0, |t| t - tick_vals[0]);
    for v in &tick_vals {
        // 0, not "-0" from a sum of steps.
        let v = &if v.abs() < step * 1e-6 { 0.0 } else { *v };
        let x = px(*v);
        let _ = write!(
            s,
            r#"<line class="grid" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{axis_y}"/><text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            axis_y + TICK_PX + 3.0,
            fmt_tick(*v)
        );
    }
    let _ = write!(
        s,
        r#"<line class="frame" x1="{LEFT}" y1="{axis_y}" x2="{right:.1}" y2="{axis_y}"/>"#
    );
    for (i, ((label, e), text)) in sides.iter().zip(&texts).enumerate() {
        let y = TOP + ROW * i as f64 + ROW / 2.0;
        let c = colour(i);
        let _ = write!(
            s,
            r#"<text class="label" x="8" y="{:.1}">{label}</text>"#,
            y + 4.0
        );
        if e.ci.low.is_finite() && e.ci.high.is_finite() {
            let (x1, x2) = (px(e.ci.low), px(e.ci.high));
            let _ = write!(
                s,
                r#"<g class="interval" stroke="{c}" stroke-width="2"><line x1="{x1:.1}" y1="{y:.1}" x2="{x2:.1}" y2="{y:.1}"/><line x1="{x1:.1}" y1="{:.1}" x2="{x1:.1}" y2="{:.1}"/><line x1="{x2:.1}" y1="{:.1}" x2="{x2:.1}" y2="{:.1}"/></g>"#,
                y - 6.0,
                y + 6.0,
                y - 6.0,
                y + 6.0
            );
        }
        for v in e.runs.iter().filter(|v| v.is_finite()) {
            let _ = write!(
                s,
                r#"<circle class="run" cx="{:.1}" cy="{:.1}" r="3" fill="white" stroke="{c}" stroke-width="1.5"><title>{}</title></circle>"#,
                px(*v),
                y + 9.0,
                fmt(*v, dec)
            );
        }
        if e.estimate.is_finite() {
            let _ = write!(
                s,
                r#"<circle class="estimate" cx="{:.1}" cy="{y:.1}" r="5" fill="{c}"/>"#,
                px(e.estimate)
            );
        }
        let _ = write!(
            s,
            r#"<text class="label" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            WIDTH - 8.0,
            y + 4.0,
            escape(text)
        );
    }
    s.push_str("</svg>");
    s
}

/// The body: method, warnings, one chart per metric, the table and the runs.
pub fn body(cmp: &Comparison, sides: &Sides, warnings: &[String]) -> String {
    let mut h = String::new();
    let st = &cmp.settings;
    let _ = write!(
        h,
        "<p class=\"note\">A: {} run(s); B: {} run(s). Each chart: a side's estimate (filled dot), its 95 % interval (bar) and each run (open dots). Intervals: two-level block bootstrap (runs, then {} s blocks of play), {} resamples, seed {}.</p>",
        sides.a.names.len(),
        sides.b.names.len(),
        st.block_ns as f64 / 1e9,
        st.resamples,
        st.seed
    );
    if cmp.within_run_only {
        h.push_str("<p class=\"note\" id=\"within-run-only\">Within-run only: a side has one run, so the intervals come from blocks within runs and know nothing of how runs differ.</p>");
    }
    for w in warnings {
        let _ = write!(h, "<p class=\"note warning\">Warning: {}</p>", escape(w));
    }
    for m in &cmp.metrics {
        h.push_str(&metric_chart(m));
    }
    h.push_str("<h2>Estimates and B − A</h2><table id=\"comparison\"><tr><th>metric</th><th>A</th><th>B</th><th>B − A</th><th>95 % interval</th><th>verdict</th></tr>");
    for m in &cmp.metrics {
        let dec = m.metric.decimals;
        let d = dec.max(1);
        let class = match m.verdict {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::NoDifference => "same",
        };
        let unit = if m.metric.unit.is_empty() {
            String::new()
        } else {
            format!(" <span class=\"unit\">({})</span>", escape(m.metric.unit))
        };
        let _ = write!(
            h,
            "<tr><td>{}{unit}</td><td>{}</td><td>{}</td><td>{}</td><td>[{}, {}]</td><td class=\"{class}\">{}</td></tr>",
            escape(m.metric.label),
            fmt(m.a.estimate, dec),
            fmt(m.b.estimate, dec),
            fmt_signed(m.difference, d),
            fmt_signed(m.ci.low, d),
            fmt_signed(m.ci.high, d),
            m.verdict.word()
        );
    }
    h.push_str("</table><h2>Runs</h2><table id=\"runs\"><tr><th>side</th><th>run</th><th>duration (s)</th></tr>");
    for (label, s) in [("A", &sides.a), ("B", &sides.b)] {
        for (n, d) in s.names.iter().zip(&s.durations_s) {
            let _ = write!(
                h,
                "<tr><td>{label}</td><td class=\"name\">{}</td><td>{d:.1}</td></tr>",
                escape(n)
            );
        }
    }
    h.push_str("</table>");
    h
}

/// The whole page.
pub fn render_html(cmp: &Comparison, sides: &Sides, warnings: &[String]) -> String {
    super::html::page(
        "steadyhud comparison: is B better than A?",
        "overlay",
        &body(cmp, sides, warnings),
    )
}
