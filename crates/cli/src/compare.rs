//! `steadyhud compare A B`: every metric of two logs side by side, with the
//! change in percent and whether it is better or worse; the GPU-bound
//! verdict (`n/a` for a log without GPU data); for logs with statistics
//! counters also their stutters by main cause; for logs with system
//! readings performance per watt (frames per joule, joules per frame) and
//! the sensor means side by side.
//!
//! `steadyhud compare A… --vs B…` (several runs per side) is
//! [`super::compare_runs`]: estimates, intervals and verdicts.

use super::load::{load_run, CliError};
use std::path::PathBuf;
use steadyhud_report::table::{self, cause_row};
use steadyhud_report::Run;

#[derive(clap::Args)]
pub struct Args {
    /// Baseline log(s), side A (any format `analyze` reads). Without --vs:
    /// exactly two logs, A and B, every metric side by side.
    #[arg(required = true, value_name = "A")]
    pub a: Vec<PathBuf>,
    /// Side B's logs: with it each side may hold several runs, and the
    /// compared metrics get B − A with a 95 % interval (two-level block
    /// bootstrap) and a verdict: better, worse or no difference shown.
    #[arg(long, num_args = 1.., value_name = "B")]
    pub vs: Vec<PathBuf>,
    #[command(flatten)]
    pub runs: super::compare_runs::RunsArgs,
    #[command(flatten)]
    pub threshold: super::analyze::ThresholdArg,
}

pub fn run(args: &Args) -> std::process::ExitCode {
    if !args.vs.is_empty() {
        return super::compare_runs::run(&args.a, &args.vs, &args.runs, &args.threshold);
    }
    super::load::run_with_options(&args.threshold, |opts| {
        if let Some(flag) = args.runs.flag_given() {
            return Err(CliError::Usage(format!(
                "{flag} compares runs: name side B's logs with --vs (compare A… --vs B…)"
            )));
        }
        let [a, b] = args.a.as_slice() else {
            return Err(CliError::Usage(format!(
                "compare takes two logs (A B), or runs A… --vs B…; found {} logs and no --vs",
                args.a.len()
            )));
        };
        let a = load_run(a, opts)?;
        let b = load_run(b, opts)?;
        print!("{}", crate::shown(&render(&a, &b)));
        Ok(())
    })
}

/// The comparison table as text.
pub fn render(a: &Run, b: &Run) -> String {
    let mut rows: Vec<[String; 5]> = vec![[
        "metric".into(),
        a.name.clone(),
        b.name.clone(),
        "change".into(),
        String::new(),
    ]];
    for row in table::rows() {
        let (va, vb) = (table::value(row, &a.summary), table::value(row, &b.summary));
        let label = if row.unit.is_empty() {
            row.label.to_string()
        } else {
            format!("{} ({})", row.label, row.unit)
        };
        let (fa, fb) = (
            table::fmt_value(row.decimals, va),
            table::fmt_value(row.decimals, vb),
        );
        rows.push([
            label,
            fa,
            fb,
            table::fmt_change(va, vb),
            table::verdict_word(row.higher_is_better, va, vb).into(),
        ]);
    }
    for f in table::flags() {
        rows.push([
            f.label.into(),
            f.show(f.of(&a.summary)),
            f.show(f.of(&b.summary)),
            String::new(),
            String::new(),
        ]);
    }
    for row in &table::GPU_ROWS {
        let (ga, gb) = (a.gpu.as_ref(), b.gpu.as_ref());
        rows.push([
            format!("{} ({})", row.label, row.unit),
            table::fmt_gpu(row, ga),
            table::fmt_gpu(row, gb),
            table::fmt_gpu_change(row, ga, gb),
            String::new(),
        ]);
    }
    let summaries = [a.sensors.as_ref(), b.sensors.as_ref()];
    for row in steadyhud_report::sensors::sensor_rows(&summaries) {
        rows.push([
            row.title(),
            row.cell(row.values[0]),
            row.cell(row.values[1]),
            row.change(0, 1),
            row.verdict_word(0, 1).into(),
        ]);
    }
    if a.display.is_some() || b.display.is_some() {
        use steadyhud_report::display;
        for row in display::DISPLAY_ROWS {
            let (da, db) = (a.display.as_ref(), b.display.as_ref());
            if display::value(row, da).is_none() && display::value(row, db).is_none() {
                continue;
            }
            let (change, word) = display::change(row, da, db);
            let label = if row.unit.is_empty() {
                row.label.to_string()
            } else {
                format!("{} ({})", row.label, row.unit)
            };
            rows.push([
                label,
                display::fmt(row, da),
                display::fmt(row, db),
                change,
                word.into(),
            ]);
        }
    }
    let causes = table::cause_rows(&[a.stutter_causes.as_deref(), b.stutter_causes.as_deref()]);
    if !causes.is_empty() {
        rows.push([
            format!("{} (counters)", cause_row().label),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ]);
    }
    let cell = |n: Option<usize>| n.map_or_else(|| "n/a".to_string(), |n| n.to_string());
    for c in causes {
        let (change, v) = match (c.counts[0], c.counts[1]) {
            (Some(x), Some(y)) => (
                table::fmt_change(x as f64, y as f64),
                table::verdict_word(cause_row().higher_is_better, x as f64, y as f64),
            ),
            _ => (String::new(), ""),
        };
        rows.push([
            format!("  {}", c.label),
            cell(c.counts[0]),
            cell(c.counts[1]),
            change,
            v.into(),
        ]);
    }
    let widths: Vec<usize> = (0..5)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        let mut line = format!("{:<w$}", r[0], w = widths[0]);
        for c in 1..4 {
            line.push_str(&format!("  {:>w$}", r[c], w = widths[c]));
        }
        line.push_str(&format!("  {}", r[4]));
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
