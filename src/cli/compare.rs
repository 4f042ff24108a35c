//! `steadyhud compare A B`: every metric of two logs side by side, with the
//! change in percent and whether it is better or worse.

use super::load::{load_run, CliError};
use crate::metrics::Options;
use crate::report::table::{self, ROWS};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Baseline log (any format `analyze` reads).
    pub a: PathBuf,
    /// Log compared against the baseline.
    pub b: PathBuf,
    /// θ of the stutter rule.
    #[arg(long, value_name = "X", default_value_t = 0.20, value_parser = super::analyze::parse_threshold)]
    pub stutter_threshold: f64,
}

pub fn run(args: &Args) -> std::process::ExitCode {
    super::load::exit(run_inner(args))
}

fn run_inner(args: &Args) -> Result<(), CliError> {
    let opts = Options { stutter_threshold: args.stutter_threshold };
    let a = load_run(&args.a, &opts)?;
    let b = load_run(&args.b, &opts)?;
    print!("{}", render(&a.name, &a.summary, &b.name, &b.summary));
    Ok(())
}

/// The comparison table as text.
pub fn render(
    a_name: &str,
    a: &crate::metrics::Summary,
    b_name: &str,
    b: &crate::metrics::Summary,
) -> String {
    let mut rows: Vec<[String; 5]> = vec![[
        "metric".into(),
        a_name.into(),
        b_name.into(),
        "change".into(),
        String::new(),
    ]];
    for row in ROWS {
        let (va, vb) = ((row.get)(a), (row.get)(b));
        let verdict = match table::verdict(row, va, vb) {
            Some(true) => "better",
            Some(false) => "worse",
            None => "",
        };
        let label = if row.unit.is_empty() { row.label.to_string() } else { format!("{} ({})", row.label, row.unit) };
        rows.push([label, table::fmt_value(row, va), table::fmt_value(row, vb), table::fmt_change(va, vb), verdict.into()]);
    }
    let yn = |x: bool| if x { "yes" } else { "no" }.to_string();
    rows.push(["Oscillation (OSC)".into(), yn(a.osc), yn(b.osc), String::new(), String::new()]);
    let widths: Vec<usize> = (0..5).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
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
