//! The few-runs layout (up to [`super::run::MANY_RUNS_ABOVE`] logs): every run
//! overlaid in every chart, one colour each, and a metrics table with one
//! column per run and its change against the baseline.

use super::charts::{self, Series};
use super::display;
use super::run::{ReportOptions, Run};
use super::svg::{colour, escape};
use super::table;
use std::fmt::Write;

/// The page body below the title.
pub fn body(runs: &[Run], opts: &ReportOptions) -> String {
    let base = opts.baseline.min(runs.len().saturating_sub(1));
    let series: Vec<Series> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| Series {
            run: r,
            colour: colour(i),
            label: if i == base && runs.len() > 1 {
                format!("{} (baseline)", r.name)
            } else {
                r.name.clone()
            },
        })
        .collect();
    let mut h = charts::legend(&series);
    h.push_str(&metrics_table(runs, base));
    h.push_str(&causes_section(runs, base));
    h.push_str("<h2>Frame times</h2>");
    h.push_str(&charts::frame_time_chart(
        &series,
        charts::FULL,
        None,
        "frametimes",
    ));
    if display::any(runs) {
        h.push_str(DISPLAY_NOTE);
        for (i, r) in runs.iter().enumerate() {
            h.push_str(&display::chart(r, &format!("displayed-{}", i + 1)));
        }
    }
    if opts.frame_times {
        for (i, s) in series.iter().enumerate() {
            h.push_str(&charts::frame_time_chart(
                std::slice::from_ref(s),
                charts::STRIP,
                Some(&s.run.name),
                &format!("frametimes-{}", i + 1),
            ));
        }
    }
    h.push_str(charts::STK_NOTE);
    h.push_str(&charts::stk_charts(&series));
    h.push_str(charts::PERCENTILE_NOTE);
    h.push_str(&charts::percentile_chart(&series, charts::Scale::Linear));
    h
}

fn metrics_table(runs: &[Run], base: usize) -> String {
    let mut s = String::from("<table id=\"metrics\"><tr><th>metric</th>");
    for (i, r) in runs.iter().enumerate() {
        let _ = write!(s, "<th>{}</th>", escape(&r.name));
        if i != base {
            s.push_str("<th>Δ vs baseline</th>");
        }
    }
    s.push_str("</tr>");
    for row in table::rows() {
        let _ = write!(s, "<tr><td>{}{}</td>", row.label, unit_suffix(row.unit));
        let b = table::value(row, &runs[base].summary);
        for (i, r) in runs.iter().enumerate() {
            let v = table::value(row, &r.summary);
            let _ = write!(s, "<td>{}</td>", table::fmt_value(row.decimals, v));
            if i != base {
                s.push_str(&change_cell(row, b, v));
            }
        }
        s.push_str("</tr>");
    }
    for row in &table::GPU_ROWS {
        let _ = write!(s, "<tr><td>{}{}</td>", row.label, unit_suffix(row.unit));
        for (i, r) in runs.iter().enumerate() {
            let _ = write!(s, "<td>{}</td>", table::fmt_gpu(row, r.gpu.as_ref()));
            if i != base {
                let change = table::fmt_gpu_change(row, runs[base].gpu.as_ref(), r.gpu.as_ref());
                let _ = write!(s, "<td>{change}</td>");
            }
        }
        s.push_str("</tr>");
    }
    let summaries: Vec<_> = runs.iter().map(|r| r.sensors.as_ref()).collect();
    for row in crate::sensors::sensor_rows(&summaries) {
        let _ = write!(s, "<tr><td>{}</td>", escape(&row.title()));
        for (i, v) in row.values.iter().enumerate() {
            let _ = write!(s, "<td>{}</td>", row.cell(*v));
            if i != base {
                let _ = write!(
                    s,
                    "<td class=\"{}\">{}</td>",
                    row.verdict_word(base, i),
                    row.change(base, i)
                );
            }
        }
        s.push_str("</tr>");
    }
    if display::any(runs) {
        for row in display::DISPLAY_ROWS {
            if runs
                .iter()
                .all(|r| display::value(row, r.display.as_ref()).is_none())
            {
                continue;
            }
            let _ = write!(s, "<tr><td>{}{}</td>", row.label, unit_suffix(row.unit));
            let b = runs[base].display.as_ref();
            for (i, r) in runs.iter().enumerate() {
                let d = r.display.as_ref();
                let _ = write!(s, "<td>{}</td>", display::fmt(row, d));
                if i != base {
                    let (change, word) = display::change(row, b, d);
                    let _ = write!(s, "<td class=\"{word}\">{change}</td>");
                }
            }
            s.push_str("</tr>");
        }
    }
    for f in table::flags() {
        let _ = write!(s, "<tr><td>{}</td>", f.label);
        for (i, r) in runs.iter().enumerate() {
            let _ = write!(s, "<td>{}</td>", f.show(f.of(&r.summary)));
            if i != base {
                s.push_str("<td></td>");
            }
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>");
    s
}

/// A `<td>` with the change from `base` to `v`, classed better / worse.
fn change_cell(row: &table::Row, base: f64, v: f64) -> String {
    format!(
        "<td class=\"{}\">{}</td>",
        table::verdict_word(row.higher_is_better, base, v),
        table::fmt_change(base, v)
    )
}

/// Stutters listed per run in the causes section.
const CAUSES_LISTED: usize = 10;

/// "Why it stuttered": the stutters of every run by main cause (runs whose
/// logs have no counter columns read n/a), then each such run's first
/// stutters with the counters that spiked. Empty when no run has counters.
fn causes_section(runs: &[Run], base: usize) -> String {
    let per_run: Vec<Option<&[steadyhud_counters::Cause]>> =
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
        if i != base {
            s.push_str("<th>Δ vs baseline</th>");
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
            match (i == base, row.counts[base], *n) {
                (true, _, _) => {}
                (_, Some(a), Some(b)) => {
                    s.push_str(&change_cell(&table::cause_row(), a as f64, b as f64))
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

/// What the displayed-vs-presented charts show.
const DISPLAY_NOTE: &str = "<h2>What reached the screen</h2><p class=\"note\">Grey: present-to-present frame \
times. Blue: how long each displayed frame stayed on screen, drawn where it ends (its present plus that time); a dropped frame's time goes \
to the displayed frame before it (docs/metrics.md, &ldquo;Displayed frames&rdquo;). Runs whose logs have no \
display columns have no chart and n/a in the rows above.</p>";
