//! The metric rows shown side by side by `compare` and the HTML report, with
//! the direction that counts as better and the relative change between runs;
//! for logs with statistics counters also the stutters by main cause.

use steadyhud_counters::{by_main_cause, Cause};
use steadyhud_metrics::catalog::{self, Group};
use steadyhud_metrics::gpu::GpuStats;
use steadyhud_metrics::Summary;

/// One comparable metric of a [`Summary`]: the catalog's declaration
/// ([`catalog::METRICS`]), where its label, unit and direction are.
pub use catalog::Metric as Row;

/// The order the report and `compare` show the metrics in, by group:
/// Steady / Mostly Steady / Typical first, as the report's point.
const ORDER: [Group; 5] = [
    Group::Steady,
    Group::Rates,
    Group::Percentiles,
    Group::Stutters,
    Group::Size,
];

/// Every numeric metric of the catalog, in report order (the yes-or-no
/// ones are [`flags`]).
pub fn rows() -> impl Iterator<Item = &'static Row> {
    ORDER
        .iter()
        .flat_map(|g| catalog::METRICS.iter().filter(move |m| m.group == *g))
}

/// The catalog's yes-or-no metrics (OSC), shown as `yes` / `no`.
pub fn flags() -> impl Iterator<Item = &'static Row> {
    catalog::METRICS.iter().filter(|m| m.group == Group::Flags)
}

/// A row's number for a run.
pub fn value(row: &Row, s: &Summary) -> f64 {
    row.of(s).number()
}

/// One row of the GPU verdict ([`steadyhud_metrics::gpu`]), which is not part
/// of the [`Summary`]: a log may lack GPU data (`n/a`).
pub struct GpuRow {
    pub label: &'static str,
    pub unit: &'static str,
    pub decimals: usize,
    pub get: fn(&GpuStats) -> f64,
}

/// The GPU verdict rows of `compare` and the report. Neither direction is
/// "better": more GPU-bound time says where the limit is, not how good the
/// run was, so the change is shown without a verdict.
pub const GPU_ROWS: [GpuRow; 2] = [
    GpuRow {
        label: "GPU-bound (share of time)",
        unit: "%",
        decimals: 1,
        get: |g| g.gpu_bound_pct,
    },
    GpuRow {
        label: "GPU busy (mean per frame)",
        unit: "ms",
        decimals: 2,
        get: |g| g.gpu_busy_ms_avg,
    },
];

/// A GPU row's cell: the value, or `n/a` for a log without GPU data.
pub fn fmt_gpu(row: &GpuRow, g: Option<&GpuStats>) -> String {
    g.map_or_else(|| "n/a".into(), |g| fmt_value(row.decimals, (row.get)(g)))
}

/// The change between two runs' GPU row, empty unless both have GPU data.
pub fn fmt_gpu_change(row: &GpuRow, a: Option<&GpuStats>, b: Option<&GpuStats>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => fmt_change((row.get)(a), (row.get)(b)),
        _ => String::new(),
    }
}

/// How a "stutters by main cause" count compares (fewer is better): the
/// stutter count's declaration under its own label.
pub fn cause_row() -> Row {
    let stutters = catalog::metric("stutter_count").copied();
    Row {
        label: "Stutters by main cause",
        ..stutters.expect("the catalog declares stutter_count")
    }
}

/// One main cause of stutters and how many each run had (`None`: the run's
/// log has no counter columns).
#[derive(Clone, Debug, PartialEq)]
pub struct CauseRow {
    pub label: String,
    pub counts: Vec<Option<usize>>,
}

/// The stutters of several runs by main cause ([`by_main_cause`]), one row
/// per cause any run has, most stutters over all runs first. Empty when no
/// run has counters.
pub fn cause_rows(runs: &[Option<&[Cause]>]) -> Vec<CauseRow> {
    let groups: Vec<Option<Vec<_>>> = runs.iter().map(|c| c.map(by_main_cause)).collect();
    let count = |g: &Option<Vec<steadyhud_counters::CauseGroup>>, label: &str| {
        g.as_ref().map(|g| {
            g.iter()
                .find(|x| x.label == label)
                .map_or(0, |x| x.stutters)
        })
    };
    let mut rows: Vec<CauseRow> = Vec::new();
    for group in groups.iter().flatten().flatten() {
        if !rows.iter().any(|r| r.label == group.label) {
            let counts = groups.iter().map(|g| count(g, &group.label)).collect();
            rows.push(CauseRow {
                label: group.label.clone(),
                counts,
            });
        }
    }
    let total = |r: &CauseRow| r.counts.iter().flatten().sum::<usize>();
    rows.sort_by(|a, b| total(b).cmp(&total(a)).then(a.label.cmp(&b.label)));
    rows
}

/// Relative change from `a` to `b` in percent; `None` when `a` is zero.
pub fn change_pct(a: f64, b: f64) -> Option<f64> {
    (a != 0.0).then(|| (b - a) / a.abs() * 100.0)
}

/// Whether going from `a` to `b` is better (`Some(true)`), worse, or equal
/// (`None`), for a metric where `higher_is_better` (`None`: neither way).
pub fn verdict(higher_is_better: Option<bool>, a: f64, b: f64) -> Option<bool> {
    let higher = higher_is_better?;
    (a != b).then_some((b > a) == higher)
}

/// [`verdict`] as a word (and CSS class): `better`, `worse` or empty.
pub fn verdict_word(higher_is_better: Option<bool>, a: f64, b: f64) -> &'static str {
    match verdict(higher_is_better, a, b) {
        Some(true) => "better",
        Some(false) => "worse",
        None => "",
    }
}

/// A value formatted for a table cell with `decimals` places.
pub fn fmt_value(decimals: usize, v: f64) -> String {
    format!("{v:.decimals$}")
}

/// A change formatted as `+12.3%`, or `n/a`.
pub fn fmt_change(a: f64, b: f64) -> String {
    match change_pct(a, b) {
        Some(p) => format!("{p:+.1}%"),
        None if b == a => "0.0%".to_string(),
        None => "n/a".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_and_verdict_follow_the_metric_direction() {
        assert_eq!(change_pct(50.0, 60.0), Some(20.0));
        assert_eq!(change_pct(0.0, 1.0), None);
        let fps = rows().next().unwrap();
        let p99 = rows().find(|r| r.label.starts_with("P99 ")).unwrap();
        assert_eq!(verdict(fps.higher_is_better, 50.0, 60.0), Some(true));
        assert_eq!(verdict(p99.higher_is_better, 10.0, 12.0), Some(false));
        assert_eq!(verdict(p99.higher_is_better, 10.0, 10.0), None);
        assert_eq!(fmt_change(0.0, 0.0), "0.0%");
        assert_eq!(fmt_change(40.0, 30.0), "-25.0%");
    }

    #[test]
    fn cause_rows_line_up_runs_and_mark_runs_without_counters() {
        use steadyhud_counters::{Spike, NO_SPIKE};
        let cause = |label: Option<&str>| Cause {
            frame: 0,
            excess_ms: 10.0,
            counters: label
                .map(|l| Spike {
                    name: "x".into(),
                    label: l.into(),
                    value: 9.0,
                    median: 1.0,
                    unit: "ms".into(),
                })
                .into_iter()
                .collect(),
        };
        let a = [
            cause(Some("pipeline creation")),
            cause(Some("pipeline creation")),
            cause(None),
        ];
        let b = [cause(None), cause(Some("queue submit"))];
        let rows = cause_rows(&[Some(&a), Some(&b), None]);
        let got: Vec<(&str, Vec<Option<usize>>)> = rows
            .iter()
            .map(|r| (r.label.as_str(), r.counts.clone()))
            .collect();
        assert_eq!(
            got,
            [
                (NO_SPIKE, vec![Some(1), Some(1), None]),
                ("pipeline creation", vec![Some(2), Some(0), None]),
                ("queue submit", vec![Some(0), Some(1), None]),
            ]
        );
        assert!(cause_rows(&[None, None]).is_empty());
    }
}
