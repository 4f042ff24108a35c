//! `steadyhud compare A… --vs B…`: runs of A against runs of B. Each
//! compared metric's estimate per side, B − A with its 95 % interval and a
//! verdict ([`steadyhud_metrics::bootstrap`] does the statistics), the
//! warnings that make the answer doubtful, `--json`, `--html` (the report
//! crate draws it) and `--fail-if-worse` for pipelines.

use super::analyze::{analyze_path, Analysis, ThresholdArg};
use super::load::{exit, CliError};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use steadyhud_formats::ReadOptions;
use steadyhud_metrics::bootstrap::{
    self, compare, Comparison, MetricComparison, RunInput, Settings, COMPARED, DEFAULT_BLOCK_S,
    DEFAULT_RESAMPLES, DEFAULT_SEED, LENGTH_RATIO, LOADING_SHARE,
};
use steadyhud_metrics::NS_PER_S;
use steadyhud_report::compare_runs::{Side, Sides};

/// The options of a comparison of runs.
#[derive(clap::Args, Debug, Clone)]
pub struct RunsArgs {
    /// Bootstrap resamples behind each interval.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_RESAMPLES)]
    pub resamples: usize,
    /// Seed of the resampling: the same logs and seed give the same output.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Length of the blocks of play resampled within a run, seconds.
    #[arg(long, value_name = "S", default_value_t = DEFAULT_BLOCK_S, value_parser = parse_block)]
    pub block_s: f64,
    /// Print every number as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write the comparison as a self-contained HTML page.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Exit 1 when the interval shows B worse than A by more than PCT % of
    /// A's value (repeatable), e.g. typical_fps=3 or stutter_time_pct=10.
    #[arg(long, value_name = "METRIC=PCT", value_parser = parse_fail_if_worse)]
    pub fail_if_worse: Vec<FailIfWorse>,
}

impl RunsArgs {
    /// The first flag given that only a comparison of runs uses.
    pub fn flag_given(&self) -> Option<&'static str> {
        if self.json {
            Some("--json")
        } else if self.html.is_some() {
            Some("--html")
        } else if !self.fail_if_worse.is_empty() {
            Some("--fail-if-worse")
        } else if self.resamples != DEFAULT_RESAMPLES {
            Some("--resamples")
        } else if self.seed != DEFAULT_SEED {
            Some("--seed")
        } else if self.block_s != DEFAULT_BLOCK_S {
            Some("--block-s")
        } else {
            None
        }
    }
}

/// `--fail-if-worse METRIC=PCT`.
#[derive(Clone, Debug, PartialEq)]
pub struct FailIfWorse {
    /// A key of [`COMPARED`].
    pub metric: &'static str,
    pub pct: f64,
}

fn parse_fail_if_worse(s: &str) -> Result<FailIfWorse, String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("expected METRIC=PCT, found {s:?}"))?;
    let metric = COMPARED
        .iter()
        .find(|m| **m == k.trim())
        .ok_or_else(|| format!("{k:?} is not a compared metric: {}", COMPARED.join(", ")))?;
    match v.trim().trim_end_matches('%').parse::<f64>() {
        Ok(pct) if pct.is_finite() && pct >= 0.0 => Ok(FailIfWorse { metric, pct }),
        _ => Err(format!("expected a percentage ≥ 0 after {k}=, found {v:?}")),
    }
}

fn parse_block(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.001..=3600.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "expected seconds between 0.001 and 3600, found {s:?}"
        )),
    }
}

/// Runs the comparison of runs `a` with runs `b`: 0, 1 when a
/// `--fail-if-worse` holds, 2 on an error.
pub fn run(a: &[PathBuf], b: &[PathBuf], args: &RunsArgs, threshold: &ThresholdArg) -> ExitCode {
    match compare_paths(a, b, args, threshold) {
        Ok(failed) if failed.is_empty() => ExitCode::SUCCESS,
        Ok(failed) => {
            for f in failed {
                eprintln!("steadyhud: {f}");
            }
            ExitCode::from(1)
        }
        Err(e) => exit(Err(e)),
    }
}

/// Reads every log (on a few threads), compares, prints; the
/// `--fail-if-worse` lines that hold.
fn compare_paths(
    a: &[PathBuf],
    b: &[PathBuf],
    args: &RunsArgs,
    threshold: &ThresholdArg,
) -> Result<Vec<String>, CliError> {
    let all: Vec<&PathBuf> = a.iter().chain(b).collect();
    let read = ReadOptions::default();
    let logs = super::parallel::map(
        &all,
        super::parallel::default_jobs(),
        |p| analyze_path(p, &read, threshold),
        |_| {},
    )
    .into_iter()
    .collect::<Result<Vec<Analysis>, _>>()?;
    let (la, lb) = logs.split_at(a.len());
    let settings = Settings {
        resamples: args.resamples,
        seed: args.seed,
        block_ns: (args.block_s * NS_PER_S as f64).round() as u64,
        ..Settings::default()
    };
    let ia: Vec<RunInput> = la.iter().map(input).collect();
    let ib: Vec<RunInput> = lb.iter().map(input).collect();
    let cmp = compare(&ia, &ib, &settings)?;
    let names = run_names(&all);
    let sides = Sides {
        a: side(&names[..a.len()], la),
        b: side(&names[a.len()..], lb),
    };
    let warnings = warnings(&sides, la, lb);
    let failed: Vec<String> = args
        .fail_if_worse
        .iter()
        .filter_map(|f| {
            let m = cmp.get(f.metric)?;
            m.worse_by_more_than(f.pct).then(|| {
                format!(
                    "--fail-if-worse {}={}: B is worse than A by more than {} % ({} {}, B − A {})",
                    f.metric,
                    f.pct,
                    f.pct,
                    m.metric.label,
                    interval_text(m),
                    signed(m.difference, diff_decimals(m))
                )
            })
        })
        .collect();
    if args.json {
        let j = json(&cmp, &sides, &warnings, &args.fail_if_worse);
        println!("{}", serde_json::to_string_pretty(&j).unwrap_or_default());
    } else {
        print!("{}", crate::shown(&text(&cmp, &sides)));
        for w in &warnings {
            eprintln!("warning: {w}");
        }
    }
    if let Some(path) = &args.html {
        let html = steadyhud_report::compare_runs::render_html(&cmp, &sides, &warnings);
        std::fs::write(path, html).map_err(|e| CliError::Write {
            path: path.clone(),
            source: e,
        })?;
        eprintln!("wrote {}", path.display());
    }
    Ok(failed)
}

fn input(l: &Analysis) -> RunInput<'_> {
    RunInput {
        durations_ns: &l.log.durations_ns,
        stutter_frames: &l.summary.stutter_frames,
        target_fps: l.opts.target_fps,
    }
}

/// The runs' names: their file names, or the paths as given where two
/// files share a name.
fn run_names(paths: &[&PathBuf]) -> Vec<String> {
    let name = |p: &Path| {
        p.file_name()
            .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
    };
    paths
        .iter()
        .map(|p| {
            let n = name(p);
            if paths.iter().filter(|q| name(q) == n).count() > 1 {
                p.display().to_string()
            } else {
                n
            }
        })
        .collect()
}

fn side(names: &[String], logs: &[Analysis]) -> Side {
    Side {
        names: names.to_vec(),
        durations_s: logs.iter().map(|l| l.summary.duration_s).collect(),
    }
}

/// The program a log's source names (`game.exe (pid 7) — swapchain` →
/// `game.exe`).
fn program(source: &str) -> &str {
    source
        .split(" (pid")
        .next()
        .unwrap_or(source)
        .split(" — ")
        .next()
        .unwrap_or(source)
        .trim()
}

/// One line for each thing that makes the answer doubtful: runs of very
/// different length, different programs (no format read records the
/// resolution), a run mostly in loading frames.
fn warnings(sides: &Sides, la: &[Analysis], lb: &[Analysis]) -> Vec<String> {
    let mut out = Vec::new();
    let runs: Vec<(&String, f64)> = sides
        .a
        .names
        .iter()
        .zip(&sides.a.durations_s)
        .chain(sides.b.names.iter().zip(&sides.b.durations_s))
        .map(|(n, d)| (n, *d))
        .collect();
    let shortest = runs.iter().min_by(|x, y| x.1.total_cmp(&y.1));
    let longest = runs.iter().max_by(|x, y| x.1.total_cmp(&y.1));
    if let (Some(s), Some(l)) = (shortest, longest) {
        if l.1 > LENGTH_RATIO * s.1 {
            out.push(format!(
                "runs of very different length: {} is {:.1} s, {} {:.1} s (more than {LENGTH_RATIO}×)",
                s.0, s.1, l.0, l.1
            ));
        }
    }
    let programs = |logs: &[Analysis]| {
        let mut v: Vec<String> = logs
            .iter()
            .filter_map(|l| l.log.meta.source.as_deref().map(|s| program(s).to_string()))
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let (pa, pb) = (programs(la), programs(lb));
    let mut both: Vec<&String> = pa.iter().chain(&pb).collect();
    both.sort();
    both.dedup();
    if both.len() > 1 {
        out.push(format!(
            "the logs name different programs: A {}; B {}",
            list_or_none(&pa),
            list_or_none(&pb)
        ));
    }
    for (name, l) in sides
        .a
        .names
        .iter()
        .zip(la)
        .chain(sides.b.names.iter().zip(lb))
    {
        let share = bootstrap::loading_share(&l.log.durations_ns);
        if share > LOADING_SHARE {
            out.push(format!(
                "{name}: {:.0} % of its time is in frames of 100 ms or longer (mostly a loading screen?)",
                share * 100.0
            ));
        }
    }
    out
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "(not recorded)".into()
    } else {
        v.join(", ")
    }
}

/// Decimals of a difference: the metric's, at least one (a shift of less
/// than one fps still shows).
fn diff_decimals(m: &MetricComparison) -> usize {
    m.metric.decimals.max(1)
}

fn signed(v: f64, decimals: usize) -> String {
    if v.is_finite() {
        format!("{v:+.decimals$}")
    } else {
        "n/a".into()
    }
}

fn interval_text(m: &MetricComparison) -> String {
    let d = diff_decimals(m);
    format!("[{}, {}]", signed(m.ci.low, d), signed(m.ci.high, d))
}

fn plain(v: f64, decimals: usize) -> String {
    if v.is_finite() {
        format!("{v:.decimals$}")
    } else {
        "n/a".into()
    }
}

/// The table: one row per compared metric.
pub fn text(cmp: &Comparison, sides: &Sides) -> String {
    let mut out = String::new();
    for (label, s) in [("A", &sides.a), ("B", &sides.b)] {
        let total: f64 = s.durations_s.iter().sum();
        out.push_str(&format!(
            "{label}: {} run{}, {total:.1} s: {}\n",
            s.names.len(),
            if s.names.len() == 1 { "" } else { "s" },
            s.names.join(", ")
        ));
    }
    let mut rows: Vec<[String; 6]> = vec![[
        "metric".into(),
        "A".into(),
        "B".into(),
        "B − A".into(),
        "95 % interval".into(),
        "verdict".into(),
    ]];
    for m in &cmp.metrics {
        let label = if m.metric.unit.is_empty() {
            m.metric.label.to_string()
        } else {
            format!("{} ({})", m.metric.label, m.metric.unit)
        };
        rows.push([
            label,
            plain(m.a.estimate, m.metric.decimals),
            plain(m.b.estimate, m.metric.decimals),
            signed(m.difference, diff_decimals(m)),
            interval_text(m),
            m.verdict.word().into(),
        ]);
    }
    let widths: Vec<usize> = (0..6)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for r in &rows {
        let mut line = format!("{:<w$}", r[0], w = widths[0]);
        for c in 1..4 {
            line.push_str(&format!("  {:>w$}", r[c], w = widths[c]));
        }
        line.push_str(&format!("  {:<w$}  {}", r[4], r[5], w = widths[4]));
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str(&method_line(cmp));
    out.push('\n');
    if cmp.within_run_only {
        out.push_str(WITHIN_RUN_ONLY);
        out.push('\n');
    }
    out
}

/// The flag of a comparison with one run on a side.
pub const WITHIN_RUN_ONLY: &str = "within-run only: a side has one run, so the intervals come from blocks within runs and know nothing of how runs differ";

fn method_line(cmp: &Comparison) -> String {
    let s = &cmp.settings;
    format!(
        "95 % intervals: two-level block bootstrap (runs, then {} s blocks of play), {} resamples, seed {}",
        s.block_ns as f64 / NS_PER_S as f64,
        s.resamples,
        s.seed
    )
}

/// Every number as JSON.
fn json(
    cmp: &Comparison,
    sides: &Sides,
    warnings: &[String],
    fails: &[FailIfWorse],
) -> serde_json::Value {
    use serde_json::json;
    let num = |v: f64| steadyhud_metrics::catalog::Value::Float(v).json();
    let side_json = |s: &Side| {
        json!({
            "runs": s.names.iter().zip(&s.durations_s).map(|(n, d)| json!({"name": n, "duration_s": num(*d)})).collect::<Vec<_>>(),
        })
    };
    let est = |e: &bootstrap::SideEstimate| {
        json!({
            "estimate": num(e.estimate),
            "ci_low": num(e.ci.low),
            "ci_high": num(e.ci.high),
            "runs": e.runs.iter().map(|v| num(*v)).collect::<Vec<_>>(),
        })
    };
    let metrics: Vec<serde_json::Value> = cmp
        .metrics
        .iter()
        .map(|m| {
            json!({
                "key": m.metric.key,
                "label": m.metric.label,
                "unit": m.metric.unit,
                "higher_is_better": m.metric.higher_is_better,
                "a": est(&m.a),
                "b": est(&m.b),
                "difference": num(m.difference),
                "ci_low": num(m.ci.low),
                "ci_high": num(m.ci.high),
                "verdict": m.verdict.word(),
            })
        })
        .collect();
    let fails: Vec<serde_json::Value> = fails
        .iter()
        .map(|f| {
            json!({
                "metric": f.metric,
                "pct": num(f.pct),
                "failed": cmp.get(f.metric).is_some_and(|m| m.worse_by_more_than(f.pct)),
            })
        })
        .collect();
    let s = &cmp.settings;
    json!({
        "method": {
            "level": num(bootstrap::LEVEL),
            "resamples": s.resamples,
            "seed": s.seed,
            "block_s": num(s.block_ns as f64 / NS_PER_S as f64),
            "tiles_per_block": bootstrap::TILES_PER_BLOCK,
            "small_sample_factor": num(cmp.factor),
            "within_run_only": cmp.within_run_only,
        },
        "a": side_json(&sides.a),
        "b": side_json(&sides.b),
        "metrics": metrics,
        "warnings": warnings,
        "fail_if_worse": fails,
    })
}
