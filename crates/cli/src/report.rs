//! `steadyhud report LOG [LOG...] -o report.html`: the self-contained HTML
//! report of `steadyhud_report`; more than
//! [`MANY_RUNS_ABOVE`](steadyhud_report::MANY_RUNS_ABOVE) logs get the
//! many-runs layout.

use super::load::{load_run, CliError};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use steadyhud_report::{ReportOptions, Run};

#[derive(clap::Args)]
pub struct Args {
    /// Logs to chart. More than 6 switch to the many-runs layout (one row
    /// and one bar per run, curves of the best, median and worst runs).
    #[arg(required = true)]
    pub logs: Vec<PathBuf>,
    /// Output HTML file.
    #[arg(short, long, default_value = "steadyhud-report.html")]
    pub output: PathBuf,
    /// Page title.
    #[arg(long, default_value = "steadyhud frame-pacing report")]
    pub title: String,
    /// The log the deltas are computed against (default: the first). One of
    /// the LOGs, or another log, which is then added to the report.
    #[arg(long, value_name = "LOG")]
    pub baseline: Option<PathBuf>,
    /// Also draw one frame-time chart per run (the many-runs layout draws
    /// none otherwise; it adds a strip per run to the page).
    #[arg(long)]
    pub frame_times: bool,
    #[command(flatten)]
    pub threshold: super::analyze::ThresholdArg,
}

pub fn run(args: &Args) -> std::process::ExitCode {
    super::load::run_with_options(&args.threshold, |opts| {
        let mut paths = args.logs.clone();
        let baseline = match &args.baseline {
            None => 0,
            Some(b) => match paths.iter().position(|p| same_file(p, b)) {
                Some(i) => i,
                None => {
                    paths.push(b.clone());
                    paths.len() - 1
                }
            },
        };
        let mut runs = Vec::with_capacity(paths.len());
        for (i, path) in paths.iter().enumerate() {
            eprintln!("[{}/{}] reading {}", i + 1, paths.len(), path.display());
            runs.push(load_run(path, opts)?);
        }
        disambiguate_names(&mut runs, &paths);
        let report = ReportOptions {
            title: args.title.clone(),
            baseline,
            frame_times: args.frame_times,
        };
        let html = steadyhud_report::render_html(&runs, &report);
        std::fs::write(&args.output, html).map_err(|e| CliError::Write {
            path: args.output.clone(),
            source: e,
        })?;
        eprintln!("wrote {}", args.output.display());
        Ok(())
    })
}

/// Whether two paths name the same file: equal as given, or once resolved
/// (`./a.csv` and `a.csv`); a path that cannot be resolved only matches
/// itself.
fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// Runs are named after their file; logs of the same name from different
/// folders (`gpu-a/run.csv`, `gpu-b/run.csv`) are named by their path as
/// given instead, so rows and legends stay distinguishable.
fn disambiguate_names(runs: &mut [Run], paths: &[PathBuf]) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for r in runs.iter() {
        *seen.entry(r.name.clone()).or_default() += 1;
    }
    for (r, p) in runs.iter_mut().zip(paths) {
        if seen[&r.name] > 1 {
            r.name = p.display().to_string();
        }
    }
}
