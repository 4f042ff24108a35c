//! `steadyhud summarize LOG... [--csv [--histogram] | --json] [--jobs N]`:
//! one row per log with every metric, the machine-readable per-run table,
//! for any number of logs in any supported format, read in parallel.
//!
//! Each row also carries the log's time histogram
//! ([`steadyhud_metrics::histogram`]): in `--json` as an array per log, and with
//! `--csv --histogram` as one row per (log, bucket), so that
//! `SUM(time_ns) … GROUP BY bucket` in any SQL engine, or `steadyhud merge`,
//! gives fleet-wide time-weighted metrics.
//!
//! A log that cannot be read is reported on stderr (`steadyhud: FILE:LINE:COL:
//! …`) and left out; the others are still written, and the exit code is 2.

use super::analyze::ThresholdArg;
use super::{parallel, progress::Progress};
use serde::Serialize;
use std::io::Write;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use steadyhud_formats::{self as formats, ErrorKind, ParseError, ReadOptions};
use steadyhud_metrics::{self as metrics, catalog, histogram, Summary, TimeHistogram, TimeMetrics};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Frame-time logs in any format `analyze` reads (detected per file).
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    /// CSV: a header, then one row per log with every metric.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// With --csv: the time histograms instead, one row per (log, bucket):
    /// file,bucket,lo_ns,hi_ns,frames,time_ns.
    #[arg(long, requires = "csv")]
    pub histogram: bool,
    /// JSON: an array with one object per log (every metric, its notes and
    /// its time histogram).
    #[arg(long)]
    pub json: bool,
    /// Logs analysed at once (default: one per CPU).
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<NonZeroUsize>,
    #[command(flatten)]
    pub threshold: ThresholdArg,
}

/// One log, summarised.
#[derive(Clone, Debug)]
pub struct LogRow {
    /// The path as given on the command line.
    pub file: String,
    pub format: &'static str,
    pub source: Option<String>,
    pub summary: Summary,
    pub histogram: TimeHistogram,
    pub notes: Vec<String>,
}

/// Reads and summarises one log; its durations are dropped on return, so
/// parallel jobs hold one log's frames each at most.
pub fn summarize_path(path: &Path, args: &ThresholdArg) -> Result<LogRow, ParseError> {
    let log = formats::read_path(path, &ReadOptions::default())?;
    let opts = &args.options_for(log.meta.target_fps);
    let summary = metrics::summarize(&log.durations_ns, opts).ok_or_else(|| ParseError {
        path: path.to_path_buf(),
        pos: None,
        kind: ErrorKind::NoFrames { what: "frame" },
    })?;
    Ok(LogRow {
        file: path.display().to_string(),
        format: log.meta.format.name(),
        source: log.meta.source,
        summary,
        histogram: TimeHistogram::from_durations(&log.durations_ns),
        notes: log.meta.notes,
    })
}

/// The per-log columns of `--csv`, in order: file, format, source, then
/// every metric of the catalog ([`catalog::METRICS`]: the summary keys but
/// the list of stutter frames, whose length is `stutter_count`). `--json`
/// has the same keys, then `notes` and `histogram`.
pub fn columns() -> Vec<&'static str> {
    ["file", "format", "source"]
        .into_iter()
        .chain(catalog::METRICS.iter().map(|m| m.key))
        .collect()
}

/// The values of [`columns`] for one log. Floats print in Rust's shortest
/// round-trip form, so a reader gets back the exact `f64`.
fn values(r: &LogRow) -> Vec<String> {
    [
        r.file.clone(),
        r.format.to_string(),
        r.source.clone().unwrap_or_default(),
    ]
    .into_iter()
    .chain(catalog::METRICS.iter().map(|m| m.of(&r.summary).csv()))
    .collect()
}

/// One `--json` element: file, format, source, the catalog's metrics (so
/// `stutter_frames` is left out: per-frame detail, in `analyze --json`;
/// `stutter_count` stays), notes, the time histogram.
struct JsonRow<'a>(&'a LogRow);

impl Serialize for JsonRow<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let r = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("file", &r.file)?;
        m.serialize_entry("format", r.format)?;
        m.serialize_entry("source", &r.source)?;
        for metric in catalog::METRICS {
            m.serialize_entry(metric.key, &metric.of(&r.summary).json())?;
        }
        m.serialize_entry("notes", &r.notes)?;
        m.serialize_entry("histogram", &r.histogram.to_json())?;
        m.end()
    }
}

/// `--json`: the array of per-log objects.
pub fn json(rows: &[LogRow]) -> Result<String, serde_json::Error> {
    let out: Vec<JsonRow> = rows.iter().map(JsonRow).collect();
    Ok(serde_json::to_string_pretty(&out)? + "\n")
}

/// `--csv`: header and one row per log.
pub fn csv(rows: &[LogRow]) -> csv::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(columns())?;
    for r in rows {
        w.write_record(values(r))?;
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

/// `--csv --histogram`: header and one row per (log, non-empty bucket).
pub fn histogram_csv(rows: &[LogRow]) -> csv::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(histogram::CSV_HEADER)?;
    for r in rows {
        for b in r.histogram.rows() {
            w.write_record([
                r.file.clone(),
                b.bucket.to_string(),
                b.lo_ns.to_string(),
                b.hi_ns.to_string(),
                b.frames.to_string(),
                b.time_ns.to_string(),
            ])?;
        }
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

/// The metrics the default table shows, by catalog key.
const TABLE_KEYS: [&str; 12] = [
    "frames",
    "duration_s",
    "average_fps",
    "p99_ms",
    "p99_9_ms",
    "steady_fps",
    "mostly_steady_fps",
    "typical_fps",
    "time_over_budget_pct",
    "stutter_count",
    "stutter_time_pct",
    "osc",
];

/// A table column's header: the catalog's short label, its unit after
/// (`P99 ms`) unless it is FPS, which the label says.
fn header_of(m: &catalog::Metric) -> String {
    match m.unit {
        "" | "fps" => m.short.to_string(),
        unit => format!("{} {unit}", m.short),
    }
}

/// The default output: an aligned table, one line per log.
pub fn table(rows: &[LogRow]) -> String {
    let metrics: Vec<&catalog::Metric> = TABLE_KEYS
        .iter()
        .filter_map(|k| catalog::metric(k))
        .collect();
    let head: Vec<String> = std::iter::once("file".to_string())
        .chain(metrics.iter().map(|m| header_of(m)))
        .collect();
    let mut lines: Vec<Vec<String>> = vec![head.clone()];
    for r in rows {
        let values = metrics.iter().map(|m| m.text(m.of(&r.summary)));
        lines.push(std::iter::once(r.file.clone()).chain(values).collect());
    }
    let widths: Vec<usize> = (0..head.len())
        .map(|c| {
            lines
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for l in &lines {
        let mut line = String::new();
        for (c, v) in l.iter().enumerate() {
            // File names left, numbers right.
            let cell = if c == 0 {
                format!("{v:<w$}", w = widths[c])
            } else {
                format!("  {v:>w$}", w = widths[c])
            };
            line.push_str(&cell);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Every log's row or error, in the order given, analysed on `jobs`
/// threads with a progress bar on a terminal.
pub fn summarize_all(
    paths: &[PathBuf],
    opts: &ThresholdArg,
    jobs: usize,
) -> Vec<Result<LogRow, ParseError>> {
    let mut progress = Progress::new(paths.len(), "logs");
    let out = parallel::map(
        paths,
        jobs,
        |p| summarize_path(p, opts),
        |done| progress.update(done),
    );
    progress.finish();
    out
}

pub fn run(args: &Args) -> ExitCode {
    let opts = args.threshold;
    let jobs = args
        .jobs
        .map_or_else(parallel::default_jobs, NonZeroUsize::get);
    let results = summarize_all(&args.logs, &opts, jobs);
    let mut rows = Vec::with_capacity(results.len());
    let mut failed: Vec<String> = Vec::new();
    for r in results {
        match r {
            Ok(row) => rows.push(row),
            Err(e) => {
                eprintln!("steadyhud: {e}");
                failed.push(e.path.display().to_string());
            }
        }
    }
    let text: Result<Vec<u8>, String> = if args.json {
        json(&rows)
            .map(String::into_bytes)
            .map_err(|e| e.to_string())
    } else if args.csv && args.histogram {
        histogram_csv(&rows).map_err(|e| e.to_string())
    } else if args.csv {
        csv(&rows).map_err(|e| e.to_string())
    } else {
        Ok(table(&rows).into_bytes())
    };
    let written = text.and_then(|t| {
        let mut out = std::io::stdout().lock();
        match out.write_all(&t).and_then(|()| out.flush()) {
            // A closed pipe (`| head`) is not worth a message.
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(format!("cannot write output: {e}"))
            }
            _ => Ok(()),
        }
    });
    if let Err(e) = written {
        eprintln!("steadyhud: {e}");
        return ExitCode::FAILURE;
    }
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "steadyhud: {} of {} logs could not be read and are left out: {}",
            failed.len(),
            args.logs.len(),
            failed.join(", ")
        );
        ExitCode::from(2)
    }
}

/// The fleet-wide metrics of the logs' histograms summed: what `merge`
/// computes from `summarize` output, straight from logs (tests use it).
pub fn fleet(rows: &[LogRow]) -> Option<TimeMetrics> {
    let mut h = TimeHistogram::default();
    for r in rows {
        // Histograms built by from_durations never overflow when merged
        // below 2^64 frames.
        h.merge(&r.histogram).ok()?;
    }
    h.summary()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(file: &str, d: &[u64]) -> LogRow {
        LogRow {
            file: file.into(),
            format: "plain",
            source: None,
            summary: metrics::summarize(d, &metrics::Options::default()).unwrap(),
            histogram: TimeHistogram::from_durations(d),
            notes: vec![],
        }
    }

    #[test]
    fn csv_has_one_row_per_log_and_quotes_names() {
        let rows = [
            row("a,b.txt", &[10_000_000; 10]),
            row("c.txt", &[20_000_000; 5]),
        ];
        let text = String::from_utf8(csv(&rows).unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], columns().join(","));
        assert!(
            lines[1].starts_with("\"a,b.txt\",plain,,10,0.1,100,"),
            "{}",
            lines[1]
        );
        let h = String::from_utf8(histogram_csv(&rows).unwrap()).unwrap();
        assert_eq!(
            h.lines().collect::<Vec<_>>(),
            [
                "file,bucket,lo_ns,hi_ns,frames,time_ns",
                &format!(
                    "\"a,b.txt\",{b},{lo},{hi},10,100000000",
                    b = histogram::bucket_of(10_000_000),
                    lo = histogram::bucket_range(histogram::bucket_of(10_000_000))
                        .unwrap()
                        .0,
                    hi = histogram::bucket_range(histogram::bucket_of(10_000_000))
                        .unwrap()
                        .1
                ),
                &format!(
                    "c.txt,{b},{lo},{hi},5,100000000",
                    b = histogram::bucket_of(20_000_000),
                    lo = histogram::bucket_range(histogram::bucket_of(20_000_000))
                        .unwrap()
                        .0,
                    hi = histogram::bucket_range(histogram::bucket_of(20_000_000))
                        .unwrap()
                        .1
                ),
            ]
        );
    }

    #[test]
    fn fleet_of_equal_frame_logs_is_exact() {
        let rows = [row("a", &[10_000_000; 990]), row("b", &[50_000_000; 10])];
        let f = fleet(&rows).unwrap();
        assert_eq!(
            (f.steady_fps, f.mostly_steady_fps, f.typical_fps),
            (20, 34, 100)
        );
    }
}
