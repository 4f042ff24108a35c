//! The report page: one self-contained HTML file, laid out for a few runs
//! (overlaid charts) or many (bars).

use super::run::{Layout, ReportOptions, Run};
use super::svg::escape;
use super::{many, overlay};
use std::fmt::Write;

/// The whole report page.
pub fn render_html(runs: &[Run], opts: &ReportOptions) -> String {
    let layout = Layout::for_runs(runs.len());
    let body = if runs.is_empty() {
        "<p class=\"note\">No runs.</p>".to_string()
    } else {
        match layout {
            Layout::Overlay => overlay::body(runs, opts),
            Layout::ManyRuns => many::body(runs, opts),
        }
    };
    let class = match layout {
        Layout::Overlay => "overlay",
        Layout::ManyRuns => "many-runs",
    };
    page(&opts.title, class, &body)
}

/// A page titled `title` with the report's style, body class `class`
/// (the layout) and `body`.
pub(crate) fn page(title: &str, class: &str, body: &str) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style></head><body class=\"{class}\"><h1>{t}</h1>",
        t = escape(title),
    );
    h.push_str(body);
    h.push_str("<footer>steadyhud ");
    h.push_str(env!("CARGO_PKG_VERSION"));
    h.push_str(
        " — metrics weighted by time, as defined in its docs/metrics.md.</footer></body></html>\n",
    );
    h
}

const STYLE: &str = "body{font-family:sans-serif;margin:24px;color:#222;max-width:1000px}\
h1{font-size:22px}h2{font-size:17px;margin-top:28px}.note{color:#555;font-size:13px}\
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
th:first-child,td:first-child{text-align:left}.better{color:#087f23}.worse{color:#b00020}\
.swatch{display:inline-block;width:12px;height:12px;margin:0 6px 0 14px;vertical-align:middle}\
.entry{white-space:nowrap}\
svg{display:block;margin:8px 0;background:#fff}.title{font-size:13px;font-weight:bold}\
.tick{font-size:11px;fill:#444}.label{font-size:12px;fill:#222}.grid{stroke:#e4e4e4}\
.frame{fill:none;stroke:#888}.rule-label{font-size:11px}footer{margin-top:24px;color:#777;font-size:12px}\
.mono{font-family:monospace;font-size:11px;fill:#222;white-space:pre}\
rect.row{fill:none}rect.median{fill:#ececec}rect.baseline{fill:#fff1c2}rect.worst{fill:#fadcdc}rect.best{fill:#d9f0de}\
.row-best{background:#d9f0de}.row-worst{background:#fadcdc}.row-baseline{background:#fff1c2}\
body.many-runs{max-width:1240px}#runs,#causes{font-size:12px}#runs td,#runs th,#causes td,#causes th{padding:2px 4px}\
#runs th{position:sticky;top:0;background:#f4f4f4;vertical-align:bottom}.unit{font-weight:normal;color:#555}\
#runs small{font-size:10px}td.name{text-align:left;overflow-wrap:anywhere;min-width:9em}\
tr.baseline td{background:#fff1c2}tr.worst td{background:#fadcdc}tr.best td{background:#d9f0de}\
.tag{font-size:10px;color:#444;border:1px solid #999;border-radius:3px;padding:0 2px;white-space:nowrap}";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::MANY_RUNS_ABOVE;
    use steadyhud_metrics::{summarize, Options};

    fn runs(n: usize) -> Vec<Run> {
        (0..n)
            .map(|k| {
                let d = vec![10_000_000 + 1_000_000 * k as u64; 100];
                Run {
                    name: format!("run{k}.csv"),
                    summary: summarize(&d, &Options::default()).unwrap(),
                    durations_ns: d,
                    stutter_causes: None,
                    gpu: None,
                    sensors: None,
                    display: None,
                }
            })
            .collect()
    }

    #[test]
    fn more_than_six_runs_switch_layout_and_the_baseline_is_the_chosen_run() {
        let opts = ReportOptions {
            baseline: 2,
            ..ReportOptions::titled("t")
        };
        let few = render_html(&runs(MANY_RUNS_ABOVE), &opts);
        assert!(few.contains("<body class=\"overlay\">"));
        assert!(few.contains("run2.csv (baseline)"));
        // The baseline has no change column: one fewer than the runs.
        assert_eq!(
            few.matches("<th>Δ vs baseline</th>").count(),
            MANY_RUNS_ABOVE - 1
        );

        let many = render_html(&runs(MANY_RUNS_ABOVE + 1), &opts);
        assert!(many.contains("<body class=\"many-runs\">"));
        assert!(many.contains("<tr class=\"baseline\"><td>3</td><td class=\"name\">run2.csv"));
        assert!(!many.contains("<svg id=\"frametimes"));
        let strips = render_html(
            &runs(MANY_RUNS_ABOVE + 1),
            &ReportOptions {
                frame_times: true,
                ..opts
            },
        );
        assert_eq!(
            strips.matches("<svg id=\"frametimes-").count(),
            MANY_RUNS_ABOVE + 1
        );
        assert!(render_html(&[], &ReportOptions::titled("t")).contains("No runs."));
    }
}
