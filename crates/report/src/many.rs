//! The many-runs layout (more than [`super::run::MANY_RUNS_ABOVE`] logs), made
//! to read at 100 runs: overlaying every run stops working past a handful
//! (a legend of 100 entries, 100 series that read as one block, STK labels
//! stacked on each other, a table 200 columns wide). Instead:
//!
//! - a ranked bar chart of Steady / Mostly Steady / Typical FPS per run;
//! - the STK and percentile curves of four runs only: the best, the median
//!   and the worst by rank, and the baseline;
//! - one table row per run with every metric and its change against the
//!   baseline, best and worst highlighted;
//! - for logs with counters, the stutters by main cause, one row per run;
//! - a frame-time strip per run only when asked (`--frame-times`).
//!
//! Runs are ranked by Steady FPS, ties broken by Mostly Steady, Typical and
//! average FPS, then by name, so the order never depends on the input order.

use super::bars::{self, BarRow};
use super::charts::{self, Series};
use super::run::{ReportOptions, Run};
use super::svg::{colour, escape};
use super::table;
use std::cmp::Ordering;
use std::fmt::Write;
use steadyhud_counters::Cause;

/// Causes shown as columns of the per-run causes table; the rest are summed
/// under "other" so the table keeps to the page width.
const CAUSE_COLUMNS: usize = 5;

/// Indices of `runs`, best first (see the module doc for the order).
pub fn ranking(runs: &[Run]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&runs[a].summary, &runs[b].summary);
        y.steady_fps
            .cmp(&x.steady_fps)
            .then(y.mostly_steady_fps.cmp(&x.mostly_steady_fps))
            .then(y.typical_fps.cmp(&x.typical_fps))
            .then(
                y.average_fps
                    .partial_cmp(&x.average_fps)
                    .unwrap_or(Ordering::Equal),
            )
            .then(runs[a].name.cmp(&runs[b].name))
    });
    order
}

/// The runs the curves are drawn for, as indices into `runs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Picks {
    pub best: usize,
    /// The run ranked ⌈n/2⌉ (the lower middle for an even count).
    pub median: usize,
    pub worst: usize,
    pub baseline: usize,
}

impl Picks {
    /// The picks of a non-empty ranking.
    pub fn new(order: &[usize], baseline: usize) -> Picks {
        let n = order.len();
        Picks {
            best: order[0],
            median: order[(n - 1) / 2],
            worst: order[n - 1],
            baseline,
        }
    }

    /// The roles run `i` plays, in display order.
    pub fn roles(&self, i: usize) -> Vec<&'static str> {
        [
            (self.best, "best"),
            (self.median, "median"),
            (self.worst, "worst"),
            (self.baseline, "baseline"),
        ]
        .into_iter()
        .filter(|&(r, _)| r == i)
        .map(|(_, name)| name)
        .collect()
    }

    /// The distinct picked runs, best, median, worst, then baseline.
    pub fn distinct(&self) -> Vec<usize> {
        let mut v = Vec::with_capacity(4);
        for i in [self.best, self.median, self.worst, self.baseline] {
            if !v.contains(&i) {
                v.push(i);
            }
        }
        v
    }
}

/// The page body below the title; `runs` must not be empty.
pub fn body(runs: &[Run], opts: &ReportOptions) -> String {
    let order = ranking(runs);
    let base = opts.baseline.min(runs.len() - 1);
    let picks = Picks::new(&order, base);
    let mut rank = vec![0; runs.len()];
    for (k, &i) in order.iter().enumerate() {
        rank[i] = k + 1;
    }
    let named = |i: usize| {
        format!(
            "{} (#{}, Steady {} fps)",
            escape(&runs[i].name),
            rank[i],
            runs[i].summary.steady_fps
        )
    };

    let mut h = String::new();
    let _ = write!(
        h,
        "<p class=\"note\" id=\"summary\">{n} runs: more than {m}, so each run gets one row and one bar, and the curves \
         show four runs only. Ranked by Steady FPS (ties: Mostly Steady, Typical, average FPS). \
         Best: {best}. Median: {median}. Worst: {worst}. Baseline of the changes: {baseline}.</p>",
        n = runs.len(),
        m = super::run::MANY_RUNS_ABOVE,
        best = named(picks.best),
        median = named(picks.median),
        worst = named(picks.worst),
        baseline = named(picks.baseline),
    );

    h.push_str("<h2>Ranking</h2>");
    h.push_str(&bar_legend());
    let rows: Vec<BarRow> = order
        .iter()
        .map(|&i| {
            let s = &runs[i].summary;
            BarRow {
                rank: rank[i],
                name: &runs[i].name,
                fps: [s.steady_fps, s.mostly_steady_fps, s.typical_fps],
                roles: picks.roles(i),
            }
        })
        .collect();
    h.push_str(&bars::ranked_bars(&rows));

    let series: Vec<Series> = picks
        .distinct()
        .into_iter()
        .enumerate()
        .map(|(k, i)| Series {
            run: &runs[i],
            colour: colour(k),
            label: format!("{}: {}", picks.roles(i).join(", "), runs[i].name),
        })
        .collect();
    h.push_str("<h2>Best, median, worst and baseline runs</h2>");
    h.push_str(&charts::legend(&series));
    h.push_str(charts::STK_NOTE);
    h.push_str(&charts::stk_charts(&series));
    h.push_str(charts::PERCENTILE_NOTE);
    h.push_str(&charts::percentile_chart(&series, charts::Scale::Log));

    h.push_str(&runs_table(runs, &order, &picks));
    h.push_str(&sensors_table(runs, &order, &rank, picks.baseline));
    h.push_str(&causes_table(runs, &order, &rank));

    if opts.frame_times {
        h.push_str("<h2>Frame times per run</h2>");
        for &i in &order {
            let one = [Series {
                run: &runs[i],
                colour: colour(0),
                label: runs[i].name.clone(),
            }];
            let s = &runs[i].summary;
            let title = format!(
                "#{} {} — Steady {} / Mostly Steady {} / Typical {} fps",
                rank[i], runs[i].name, s.steady_fps, s.mostly_steady_fps, s.typical_fps
            );
            h.push_str(&charts::frame_time_chart(
                &one,
                charts::STRIP,
                Some(&title),
                &format!("frametimes-{}", rank[i]),
            ));
            // What reached the screen, for runs whose logs say.
            h.push_str(&super::display::chart(
                &runs[i],
                &format!("displayed-{}", rank[i]),
            ));
        }
    } else {
        h.push_str(
            "<p class=\"note\">Frame-time charts per run: run <code>steadyhud report --frame-times</code>.</p>",
        );
    }
    h
}

/// What the bar colours mean (HTML, so it wraps instead of overlapping).
fn bar_legend() -> String {
    let mut s = String::from("<p class=\"legend\">");
    for (c, name) in bars::COLOURS
        .iter()
        .zip(["Steady FPS", "Mostly Steady FPS", "Typical FPS"])
    {
        let _ = write!(
            s,
            "<span class=\"entry\"><span class=\"swatch\" style=\"background:{c}\"></span>{name}</span> "
        );
    }
    s.push_str(
        "<span class=\"entry\"><span class=\"swatch row-best\"></span>best</span> \
         <span class=\"entry\"><span class=\"swatch row-worst\"></span>worst</span> \
         <span class=\"entry\"><span class=\"swatch row-baseline\"></span>baseline</span></p>",
    );
    s
}

/// One row per run in rank order: every metric, and under each value its
/// change against the baseline (a column per change would double the width).
fn runs_table(runs: &[Run], order: &[usize], picks: &Picks) -> String {
    let base = &runs[picks.baseline].summary;
    let mut s = format!(
        "<h2>Every run</h2><p class=\"note\">Best first. Under each value: its change against the baseline, {} \
         (green: better, red: worse).</p><table id=\"runs\"><thead><tr><th>#</th><th>run</th>",
        escape(&runs[picks.baseline].name)
    );
    for row in table::rows() {
        let _ = write!(s, "<th>{}", row.short);
        if !row.unit.is_empty() {
            let _ = write!(s, "<br><span class=\"unit\">{}</span>", row.unit);
        }
        s.push_str("</th>");
    }
    for f in table::flags() {
        let _ = write!(s, "<th>{}</th>", f.short);
    }
    s.push_str("</tr></thead><tbody>");
    for (k, &i) in order.iter().enumerate() {
        let r = &runs[i];
        let roles = picks.roles(i);
        let _ = write!(
            s,
            "<tr class=\"{}\"><td>{}</td><td class=\"name\">{}",
            roles.join(" "),
            k + 1,
            escape(&r.name)
        );
        for role in &roles {
            let _ = write!(s, " <span class=\"tag\">{role}</span>");
        }
        s.push_str("</td>");
        for row in table::rows() {
            let v = table::value(row, &r.summary);
            let _ = write!(s, "<td>{}", table::fmt_value(row.decimals, v));
            if i != picks.baseline {
                let b = table::value(row, base);
                let _ = write!(
                    s,
                    "<br><small class=\"{}\">{}</small>",
                    table::verdict_word(row.higher_is_better, b, v),
                    short_change(b, v)
                );
            }
            s.push_str("</td>");
        }
        for f in table::flags() {
            let _ = write!(s, "<td>{}</td>", f.show(f.of(&r.summary)));
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    s
}

/// [`table::fmt_change`] without the decimal once the change reaches 100 %:
/// a run ten times slower than the baseline reads `+900%`, and the narrower
/// cell keeps the table within the page.
fn short_change(a: f64, b: f64) -> String {
    match table::change_pct(a, b) {
        Some(p) if p.abs() >= 100.0 => format!("{p:+.0}%"),
        _ => table::fmt_change(a, b),
    }
}

/// Performance per watt and the sensor means, one row per run (rank
/// order), one column per [`crate::sensors::sensor_rows`] row, the change
/// against the baseline under each value. Empty when no run has readings.
fn sensors_table(runs: &[Run], order: &[usize], rank: &[usize], base: usize) -> String {
    let summaries: Vec<_> = runs.iter().map(|r| r.sensors.as_ref()).collect();
    let rows = crate::sensors::sensor_rows(&summaries);
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<h2>Performance per watt and system readings</h2><p class=\"note\">Time-weighted means; \
         n/a: the run's log has no such reading.</p><table id=\"sensors\"><thead><tr><th>#</th><th>run</th>",
    );
    for row in &rows {
        let _ = write!(s, "<th>{}</th>", escape(&row.title()));
    }
    s.push_str("</tr></thead><tbody>");
    for &i in order {
        let _ = write!(
            s,
            "<tr><td>{}</td><td class=\"name\">{}</td>",
            rank[i],
            escape(&runs[i].name)
        );
        for row in &rows {
            let _ = write!(s, "<td>{}", row.cell(row.values[i]));
            if i != base && row.values[i].is_some() && row.values[base].is_some() {
                let _ = write!(
                    s,
                    "<br><small class=\"{}\">{}</small>",
                    row.verdict_word(base, i),
                    row.change(base, i)
                );
            }
            s.push_str("</td>");
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    s
}

/// Stutters by main cause, one row per run with counter columns (rank
/// order), the most frequent causes over all runs as columns. Empty when no
/// run has counters.
fn causes_table(runs: &[Run], order: &[usize], rank: &[usize]) -> String {
    let per_run: Vec<Option<&[Cause]>> = runs.iter().map(|r| r.stutter_causes.as_deref()).collect();
    let without = per_run.iter().filter(|c| c.is_none()).count();
    if without == runs.len() {
        return String::new();
    }
    let causes = table::cause_rows(&per_run);
    let (shown, rest) = causes.split_at(causes.len().min(CAUSE_COLUMNS));
    let mut s = format!(
        "<h2>Why it stuttered (statistics counters)</h2><p class=\"note\">Stutters of each run by the first \
         counter that spiked with them (CPU time first, larger first); most frequent causes over all runs first.{}</p>\
         <table id=\"causes\"><thead><tr><th>#</th><th>run</th>",
        if without > 0 {
            format!(
                " {without} {} no counter columns and {} left out.",
                if without == 1 { "run has" } else { "runs have" },
                if without == 1 { "is" } else { "are" }
            )
        } else {
            String::new()
        }
    );
    for c in shown {
        let _ = write!(s, "<th>{}</th>", escape(&c.label));
    }
    if !rest.is_empty() {
        s.push_str("<th>other</th>");
    }
    s.push_str("</tr></thead><tbody>");
    for &i in order {
        if per_run[i].is_none() {
            continue;
        }
        let _ = write!(
            s,
            "<tr><td>{}</td><td class=\"name\">{}</td>",
            rank[i],
            escape(&runs[i].name)
        );
        for c in shown {
            let _ = write!(s, "<td>{}</td>", c.counts[i].unwrap_or(0));
        }
        if !rest.is_empty() {
            let other: usize = rest.iter().filter_map(|c| c.counts[i]).sum();
            let _ = write!(s, "<td>{other}</td>");
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use steadyhud_metrics::{summarize, Options};

    fn run(name: &str, frame_ms: &[f64]) -> Run {
        let d: Vec<u64> = frame_ms.iter().map(|ms| (ms * 1e6) as u64).collect();
        Run {
            name: name.into(),
            summary: summarize(&d, &Options::default()).unwrap(),
            durations_ns: d,
            stutter_causes: None,
            gpu: None,
            sensors: None,
            display: None,
        }
    }

    #[test]
    fn ranking_is_by_steady_fps_then_the_looser_metrics_then_name() {
        // b and c hold the same Steady FPS (50: c spends 5 % of its time in
        // 20 ms frames); c's other frames take 10 ms, so its Mostly Steady
        // FPS is higher and it ranks first of the two.
        let mut c = vec![10.0; 400];
        for k in (0..400).step_by(40) {
            c[k] = 20.0;
        }
        let runs = [
            run("a", &[30.0; 300]),
            run("c", &c),
            run("b", &[20.0; 300]),
            run("d", &[10.0; 300]),
        ];
        let order = ranking(&runs);
        let names: Vec<&str> = order.iter().map(|&i| runs[i].name.as_str()).collect();
        assert_eq!(names, ["d", "c", "b", "a"]);
        // Input order does not matter.
        let rev: Vec<Run> = runs.into_iter().rev().collect();
        let order = ranking(&rev);
        let names: Vec<&str> = order.iter().map(|&i| rev[i].name.as_str()).collect();
        assert_eq!(names, ["d", "c", "b", "a"]);
    }

    #[test]
    fn large_changes_drop_their_decimal() {
        assert_eq!(short_change(10.0, 11.0), "+10.0%");
        assert_eq!(short_change(10.0, 1000.0), "+9900%");
        assert_eq!(short_change(0.0, 1.0), "n/a");
    }

    fn cause(label: &str) -> Cause {
        Cause {
            frame: 0,
            excess_ms: 10.0,
            counters: vec![steadyhud_counters::Spike {
                name: "x".into(),
                label: label.into(),
                value: 9.0,
                median: 1.0,
                unit: "ms".into(),
            }],
        }
    }

    #[test]
    fn causes_get_one_row_per_run_with_counters_and_at_most_six_columns() {
        let mut runs: Vec<Run> = (0..8)
            .map(|k| run(&format!("r{k}"), &vec![10.0 + k as f64; 200]))
            .collect();
        // Seven causes over the runs with counters; r7 has none at all.
        let labels = ["a", "b", "c", "d", "e", "f", "g"];
        for (k, r) in runs.iter_mut().enumerate().take(7) {
            r.stutter_causes = Some(labels[..=k].iter().map(|l| cause(l)).collect());
        }
        let order = ranking(&runs);
        let mut rank = vec![0; runs.len()];
        for (k, &i) in order.iter().enumerate() {
            rank[i] = k + 1;
        }
        let t = causes_table(&runs, &order, &rank);
        assert!(t.contains("1 run has no counter columns and is left out"));
        assert_eq!(t.matches("<tr><td>").count(), 7, "{t}");
        assert_eq!(t.matches("<th>").count(), 2 + CAUSE_COLUMNS + 1);
        assert!(t.contains("<th>other</th>"));
        // r6 (rank 7: slowest with counters) has one stutter of each cause:
        // five shown, f and g under "other".
        assert!(
            t.contains(
                "<td class=\"name\">r6</td><td>1</td><td>1</td><td>1</td><td>1</td><td>1</td><td>2</td></tr>"
            ),
            "{t}"
        );
        for r in &mut runs {
            r.stutter_causes = None;
        }
        assert!(causes_table(&runs, &order, &rank).is_empty());
    }

    #[test]
    fn picks_name_each_role_and_list_each_run_once() {
        let order = [4, 2, 0, 1, 3, 6, 5];
        let p = Picks::new(&order, 4);
        assert_eq!((p.best, p.median, p.worst), (4, 1, 5));
        assert_eq!(p.roles(4), ["best", "baseline"]);
        assert_eq!(p.distinct(), [4, 1, 5]);
        let p = Picks::new(&order, 3);
        assert_eq!(p.distinct(), [4, 1, 5, 3]);
        assert!(p.roles(2).is_empty());
        // An even count takes the lower middle: rank 4 of 8.
        assert_eq!(Picks::new(&[7, 6, 5, 4, 3, 2, 1, 0], 0).median, 4);
    }
}
