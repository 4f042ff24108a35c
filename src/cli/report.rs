//! `steadyhud report LOG [LOG...] -o report.html`: the self-contained HTML
//! report of `crate::report`.

use super::load::{load_run, CliError};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Logs to chart; the first is the baseline of the deltas.
    #[arg(required = true)]
    pub logs: Vec<PathBuf>,
    /// Output HTML file.
    #[arg(short, long, default_value = "steadyhud-report.html")]
    pub output: PathBuf,
    /// Page title.
    #[arg(long, default_value = "steadyhud frame-pacing report")]
    pub title: String,
    #[command(flatten)]
    pub threshold: super::analyze::ThresholdArg,
}

pub fn run(args: &Args) -> std::process::ExitCode {
    super::load::exit(run_inner(args))
}

fn run_inner(args: &Args) -> Result<(), CliError> {
    let opts = args.threshold.options();
    let mut runs = Vec::with_capacity(args.logs.len());
    for (i, path) in args.logs.iter().enumerate() {
        eprintln!("[{}/{}] reading {}", i + 1, args.logs.len(), path.display());
        runs.push(load_run(path, &opts)?);
    }
    let html = crate::report::render_html(&runs, &args.title);
    std::fs::write(&args.output, html).map_err(|e| CliError::Write {
        path: args.output.clone(),
        source: e,
    })?;
    eprintln!("wrote {}", args.output.display());
    Ok(())
}
