//! The metric rows shown side by side by `compare` and the HTML report, with
//! the direction that counts as better and the relative change between runs;
//! for logs with statistics counters also the stutters by main cause.

use steadyhud_counters::{by_main_cause, Cause};
use steadyhud_metrics::gpu::GpuStats;
use steadyhud_metrics::Summary;

/// One comparable metric of a [`Summary`].
pub struct Row {
    pub label: &'static str,
    /// Column header where a table has one column per metric (many-runs report).
    pub short: &'static str,
    pub unit: &'static str,
    /// Whether a larger value is an improvement (`None`: neither, e.g. the
    /// frame count of a run).
    pub higher_is_better: Option<bool>,
    /// Decimals shown.
    pub decimals: usize,
    pub get: fn(&Summary) -> f64,
}

/// Every numeric metric of METRICS.md, in report order.
pub const ROWS: &[Row] = &[
    Row {
        label: "Steady FPS",
        short: "Steady",
        unit: "fps",
        higher_is_better: Some(true),
        decimals: 0,
        get: |s| s.steady_fps as f64,
    },
    Row {
        label: "Mostly Steady FPS",
        short: "Mostly Steady",
        unit: "fps",
        higher_is_better: Some(true),
        decimals: 0,
        get: |s| s.mostly_steady_fps as f64,
    },
    Row {
        label: "Typical FPS",
        short: "Typical",
        unit: "fps",
        higher_is_better: Some(true),
        decimals: 0,
        get: |s| s.typical_fps as f64,
    },
    Row {
        label: "Average FPS",
        short: "Average",
        unit: "fps",
        higher_is_better: Some(true),
        decimals: 2,
        get: |s| s.average_fps,
    },
    Row {
        label: "1% low (by count)",
        short: "1% low",
        unit: "fps",
        higher_is_better: Some(true),
        decimals: 2,
        get: |s| s.low_1pct_fps,
    },
    Row {
        label: "0.1% low (by count)",
        short: "0.1% low",
        unit: "fps",
        higher_is_better: Some(true),
        decimals: 2,
        get: |s| s.low_0_1pct_fps,
    },
    Row {
        label: "P50 (time-weighted)",
        short: "P50",
        unit: "ms",
        higher_is_better: Some(false),
        decimals: 2,
        get: |s| s.p50_ms,
    },
    Row {
        label: "P90 (time-weighted)",
        short: "P90",
        unit: "ms",
        higher_is_better: Some(false),
        decimals: 2,
        get: |s| s.p90_ms,
    },
    Row {
        label: "P95 (time-weighted)",
        short: "P95",
        unit: "ms",
        higher_is_better: Some(false),
        decimals: 2,
        get: |s| s.p95_ms,
    },
    Row {
        label: "P99 (time-weighted)",
        short: "P99",
        unit: "ms",
        higher_is_better: Some(false),
        decimals: 2,
        get: |s| s.p99_ms,
    },
    Row {
        label: "P99.9 (time-weighted)",
        short: "P99.9",
        unit: "ms",
        higher_is_better: Some(false),
        decimals: 2,
        get: |s| s.p99_9_ms,
    },
    Row {
        label: "Stutters",
        short: "Stutters",
        unit: "",
        higher_is_better: Some(false),
        decimals: 0,
        get: |s| s.stutter_count as f64,
    },
    Row {
        label: "Frames",
        short: "Frames",
        unit: "",
        higher_is_better: None,
        decimals: 0,
        get: |s| s.frames as f64,
    },
    Row {
        label: "Duration",
        short: "Duration",
        unit: "s",
        higher_is_better: None,
        decimals: 2,
        get: |s| s.duration_s,
    },
];

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
    g.map_or_else(
        || "n/a".into(),
        |g| format!("{:.*}", row.decimals, (row.get)(g)),
    )
}

/// The change between two runs' GPU row, empty unless both have GPU data.
pub fn fmt_gpu_change(row: &GpuRow, a: Option<&GpuStats>, b: Option<&GpuStats>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => fmt_change((row.get)(a), (row.get)(b)),
        _ => String::new(),
    }
}

/// How a "stutters by main cause" count compares (fewer is better).
pub const CAUSE_ROW: Row = Row {
    label: "Stutters by main cause",
    short: "Stutters",
    unit: "",
    higher_is_better: Some(false),
    decimals: 0,
    get: |s| s.stutter_count as f64,
};

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

/// Whether going from `a` to `b` is better (`Some(true)`), worse, or equal (`None`).
pub fn verdict(row: &Row, a: f64, b: f64) -> Option<bool> {
    let higher = row.higher_is_better?;
    (a != b).then_some((b > a) == higher)
}

/// [`verdict`] as a word (and CSS class): `better`, `worse` or empty.
pub fn verdict_word(row: &Row, a: f64, b: f64) -> &'static str {
    match verdict(row, a, b) {
        Some(true) => "better",
        Some(false) => "worse",
        None => "",
    }
}

/// A value formatted for a table cell.
pub fn fmt_value(row: &Row, v: f64) -> String {
    format!("{:.*}", row.decimals, v)
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
        let fps = &ROWS[0];
        let p99 = ROWS.iter().find(|r| r.label.starts_with("P99 ")).unwrap();
        assert_eq!(verdict(fps, 50.0, 60.0), Some(true));
        assert_eq!(verdict(p99, 10.0, 12.0), Some(false));
        assert_eq!(verdict(p99, 10.0, 10.0), None);
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
