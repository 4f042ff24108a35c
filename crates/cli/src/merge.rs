//! `steadyhud merge HIST... [--json]`: sums the time histograms of any
//! number of logs and prints the fleet-wide time-weighted percentiles and
//! Steady / Mostly Steady / Typical FPS read off the sum (error bounds in
//! [`steadyhud_metrics::histogram`]).
//!
//! HIST is `summarize --json` output (an array of per-log objects), any
//! JSON object with a `histogram` key (a log summary, or `merge --json`
//! output, so merges nest), a bare histogram object, or `summarize --csv
//! --histogram` output.

use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use steadyhud_metrics::catalog::{self, Group, Merge};
use steadyhud_metrics::histogram::{self, BucketRow, HistogramError, HistogramJson};
use steadyhud_metrics::{TimeHistogram, TimeMetrics};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Histograms: `summarize --json` or `summarize --csv --histogram`
    /// output, or JSON objects with a `histogram` key.
    #[arg(required = true, value_name = "HIST")]
    pub inputs: Vec<PathBuf>,
    /// Print one JSON object (the metrics, then the merged histogram).
    #[arg(long)]
    pub json: bool,
}

/// Why an input could not be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a histogram JSON: {source}", path.display())]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{}: {what}: expected an object with a histogram (`summarize --json` output)", path.display())]
    NoHistogram { path: PathBuf, what: String },
    #[error("{}:{line}: {source}", path.display())]
    Csv {
        path: PathBuf,
        line: u64,
        source: csv::Error,
    },
    #[error("{}: header has no {column} column: expected {} (`summarize --csv --histogram` output)", path.display(), histogram::CSV_HEADER.join(","))]
    CsvHeader { path: PathBuf, column: &'static str },
    #[error("{}: {at}: {source}", path.display())]
    Histogram {
        path: PathBuf,
        at: String,
        source: HistogramError,
    },
    #[error("no frames in any input")]
    Empty,
    #[error("cannot encode the merged histogram: {0}")]
    Encode(serde_json::Error),
}

/// The merged histogram and how many logs went into it; and, for the
/// catalog's shares of time ([`Merge::TimeShare`]), their values weighted
/// by each input's duration.
#[derive(Debug, Default)]
pub struct Merged {
    pub histogram: TimeHistogram,
    pub logs: usize,
    /// Inputs read (files' objects, or CSV files).
    inputs: usize,
    /// Per share-of-time key: Σ value × duration_s, Σ duration_s, inputs
    /// that carried it.
    shares: Vec<(&'static str, f64, f64, usize)>,
}

impl Merged {
    /// One input's value of every share of time it carries (with its
    /// `duration_s`), from its JSON keys. An input without frames has no
    /// time to weigh and does not count.
    fn add_shares(&mut self, keys: &serde_json::Map<String, serde_json::Value>, empty: bool) {
        if empty {
            return;
        }
        self.inputs += 1;
        let Some(duration) = keys.get("duration_s").and_then(|v| v.as_f64()) else {
            return;
        };
        for m in catalog::METRICS
            .iter()
            .filter(|m| m.merge == Merge::TimeShare)
        {
            let Some(v) = keys.get(m.key).and_then(|v| v.as_f64()) else {
                continue;
            };
            match self.shares.iter_mut().find(|s| s.0 == m.key) {
                Some(s) => {
                    s.1 += v * duration;
                    s.2 += duration;
                    s.3 += 1;
                }
                None => self.shares.push((m.key, v * duration, duration, 1)),
            }
        }
    }

    /// The merged share of time of `key`, when every input carried it.
    fn share(&self, key: &str) -> Option<f64> {
        let s = self.shares.iter().find(|s| s.0 == key)?;
        (s.3 == self.inputs && s.2 > 0.0).then(|| s.1 / s.2)
    }

    /// Every mergeable metric of the catalog with its value (`None`: a share
    /// of time some input lacks) and its bound.
    fn metrics<'a>(
        &'a self,
        t: &'a TimeMetrics,
    ) -> impl Iterator<
        Item = (
            &'static catalog::Metric,
            Option<catalog::Value>,
            &'static str,
        ),
    > + 'a {
        catalog::METRICS.iter().filter_map(move |m| match m.merge {
            Merge::Histogram { bound } => Some((m, m.of_time(t), bound)),
            Merge::TimeShare => Some((m, self.share(m.key).map(catalog::Value::Float), "exact")),
            Merge::No => None,
        })
    }
}

/// Adds every histogram of the file at `path` to `into`.
pub fn merge_file(path: &Path, into: &mut Merged) -> Result<(), MergeError> {
    let io = |source| MergeError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(io)?;
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'[') => merge_json(path, &bytes, true, into),
        Some(b'{') => merge_json(path, &bytes, false, into),
        _ => merge_csv(path, &bytes, into),
    }
}

/// One JSON input object: a per-log object or summary with `histogram`,
/// or a bare histogram. Typed (not `serde_json::Value`, whose numbers stop
/// at u64) so bucket times beyond 2^64 ns read exactly.
#[derive(Deserialize)]
struct JsonItem {
    histogram: Option<HistogramJson>,
    /// `merge --json` output: how many logs it already holds.
    logs: Option<u64>,
    scheme: Option<String>,
    buckets: Option<Vec<BucketRow>>,
    /// The other keys: a log's metrics (its shares of time).
    #[serde(flatten)]
    keys: serde_json::Map<String, serde_json::Value>,
}

fn merge_json(path: &Path, bytes: &[u8], array: bool, into: &mut Merged) -> Result<(), MergeError> {
    let json_err = |source| MergeError::Json {
        path: path.to_path_buf(),
        source,
    };
    let items: Vec<(String, JsonItem)> = if array {
        serde_json::from_slice::<Vec<JsonItem>>(bytes)
            .map_err(json_err)?
            .into_iter()
            .enumerate()
            .map(|(i, v)| (format!("element {i}"), v))
            .collect()
    } else {
        vec![(
            "top-level object".to_string(),
            serde_json::from_slice(bytes).map_err(json_err)?,
        )]
    };
    for (at, item) in items {
        let j = match (item.histogram, item.scheme, item.buckets) {
            (Some(h), _, _) => h,
            (None, Some(scheme), Some(buckets)) => HistogramJson {
                scheme,
                resolution: histogram::RESOLUTION,
                buckets,
            },
            _ => {
                return Err(MergeError::NoHistogram {
                    path: path.to_path_buf(),
                    what: format!("{at} has no histogram"),
                })
            }
        };
        let hist_err = |source| MergeError::Histogram {
            path: path.to_path_buf(),
            at: at.clone(),
            source,
        };
        let hist = TimeHistogram::from_json(&j).map_err(hist_err)?;
        into.histogram.merge(&hist).map_err(hist_err)?;
        into.logs += item.logs.unwrap_or(1) as usize;
        into.add_shares(&item.keys, hist.is_empty());
    }
    Ok(())
}

fn merge_csv(path: &Path, bytes: &[u8], into: &mut Merged) -> Result<(), MergeError> {
    let mut r = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let csv_err = |line: u64, source| MergeError::Csv {
        path: path.to_path_buf(),
        line,
        source,
    };
    let header = r.headers().map_err(|e| csv_err(1, e))?.clone();
    let col = |name: &'static str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or(MergeError::CsvHeader {
                path: path.to_path_buf(),
                column: name,
            })
    };
    let (b, lo, hi, fr, t) = (
        col("bucket")?,
        col("lo_ns")?,
        col("hi_ns")?,
        col("frames")?,
        col("time_ns")?,
    );
    let file = header.iter().position(|h| h == "file");
    let mut files: HashSet<String> = HashSet::new();
    let mut rec = csv::StringRecord::new();
    loop {
        let line = r.position().line();
        if !r.read_record(&mut rec).map_err(|e| csv_err(line, e))? {
            break;
        }
        let at = || format!("line {line}");
        let num = |i: usize, what: &str| -> Result<u128, MergeError> {
            rec.get(i)
                .and_then(|v| v.parse::<u128>().ok())
                .ok_or_else(|| MergeError::NoHistogram {
                    path: path.to_path_buf(),
                    what: format!(
                        "line {line}: {what}: expected a whole number ≥ 0, found {:?}",
                        rec.get(i).unwrap_or("")
                    ),
                })
        };
        let narrow = |v: u128, what: &str| -> Result<u64, MergeError> {
            u64::try_from(v).map_err(|_| MergeError::NoHistogram {
                path: path.to_path_buf(),
                what: format!("line {line}: {what} {v} is out of range"),
            })
        };
        let row = BucketRow {
            bucket: u32::try_from(num(b, "bucket")?).unwrap_or(u32::MAX),
            lo_ns: narrow(num(lo, "lo_ns")?, "lo_ns")?,
            hi_ns: narrow(num(hi, "hi_ns")?, "hi_ns")?,
            frames: narrow(num(fr, "frames")?, "frames")?,
            time_ns: num(t, "time_ns")?,
        };
        into.histogram
            .add_row(&row)
            .map_err(|source| MergeError::Histogram {
                path: path.to_path_buf(),
                at: at(),
                source,
            })?;
        if let Some(f) = file.and_then(|i| rec.get(i)) {
            if !files.contains(f) {
                files.insert(f.to_string());
            }
        }
    }
    into.logs += if file.is_some() { files.len() } else { 1 };
    // Histogram rows carry no metrics: no share of time from this input.
    into.inputs += 1;
    Ok(())
}

/// `merge --json`: the logs, the catalog's mergeable metrics, then what
/// went in and the merged histogram (so a merge can be merged again).
struct JsonOut<'a> {
    merged: &'a Merged,
    summary: &'a TimeMetrics,
    inputs: Vec<String>,
}

impl Serialize for JsonOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("logs", &self.merged.logs)?;
        for (metric, v, _) in self.merged.metrics(self.summary) {
            if let Some(v) = v {
                m.serialize_entry(metric.key, &v.json())?;
            }
        }
        m.serialize_entry("resolution", &histogram::RESOLUTION)?;
        m.serialize_entry("inputs", &self.inputs)?;
        m.serialize_entry("histogram", &self.merged.histogram.to_json())?;
        m.end()
    }
}

/// The human-readable table.
pub fn table(m: &Merged, s: &TimeMetrics) -> String {
    let mut out = format!(
        "Fleet of {} log(s), merged from their time histograms (bucket width ≤ 1 %)\n\n",
        m.logs
    );
    let rows: Vec<(&str, String, &str)> = m
        .metrics(s)
        .map(|(metric, v, bound)| {
            let text = match v {
                None => "n/a".to_string(),
                Some(v) => match (metric.group, v) {
                    (Group::Percentiles, catalog::Value::Float(ms)) => format!("{ms:.3} ms"),
                    (Group::Size, catalog::Value::Float(f)) => format!("{f:.3} {}", metric.unit),
                    (_, catalog::Value::Float(f)) if metric.unit == "fps" => format!("{f:.2}"),
                    _ => metric.show(v),
                },
            };
            let bound = if v.is_some() {
                bound
            } else {
                "not in every input"
            };
            let label = if metric.group == Group::Percentiles {
                metric.short
            } else {
                metric.label
            };
            (label, text, bound)
        })
        .collect();
    let kw = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let vw = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
    for (k, v, bound) in rows {
        out.push_str(&format!("{k:<kw$}  {v:>vw$}  ({bound})\n"));
    }
    out.push_str("\nPercentiles are time-weighted (Pp: a share 1-p of the time is in frames at least this long).\n");
    out
}

pub fn run(args: &Args) -> ExitCode {
    match run_inner(args) {
        Ok(text) => {
            print!("{}", crate::shown(&text));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("steadyhud: {e}");
            ExitCode::from(2)
        }
    }
}

fn run_inner(args: &Args) -> Result<String, MergeError> {
    let mut merged = Merged::default();
    for p in &args.inputs {
        merge_file(p, &mut merged)?;
    }
    let summary = merged.histogram.summary().ok_or(MergeError::Empty)?;
    Ok(if args.json {
        let out = JsonOut {
            merged: &merged,
            summary: &summary,
            inputs: args
                .inputs
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
        };
        serde_json::to_string_pretty(&out).map_err(MergeError::Encode)? + "\n"
    } else {
        table(&merged, &summary)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log without frames has no time to weigh: the others' share of
    /// time stands; an input with frames but no share makes it unknown.
    #[test]
    fn an_empty_input_leaves_the_share_of_time_alone() {
        let keys = |pairs: &[(&str, f64)]| -> serde_json::Map<String, serde_json::Value> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), (*v).into()))
                .collect()
        };
        let mut m = Merged::default();
        m.add_shares(
            &keys(&[("duration_s", 10.0), ("stutter_time_pct", 4.0)]),
            false,
        );
        m.add_shares(
            &keys(&[("duration_s", 30.0), ("stutter_time_pct", 8.0)]),
            false,
        );
        m.add_shares(&keys(&[]), true);
        assert_eq!(m.share("stutter_time_pct"), Some(7.0));
        m.add_shares(&keys(&[("duration_s", 5.0)]), false);
        assert_eq!(m.share("stutter_time_pct"), None);
    }

    #[test]
    fn bucket_times_beyond_u64_read_back_exactly() {
        // 100 frames of 1e18 ns: 1e20 ns in one bucket, past u64::MAX.
        let h = TimeHistogram::from_durations(&[1_000_000_000_000_000_000u64; 100]);
        assert!(h.total_ns() > u128::from(u64::MAX));
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [
            (
                "summary.json",
                format!(
                    "{{\"histogram\": {}}}",
                    serde_json::to_string(&h.to_json()).unwrap()
                ),
            ),
            (
                "rows.json",
                format!(
                    "[{{\"histogram\": {}}}]",
                    serde_json::to_string(&h.to_json()).unwrap()
                ),
            ),
            ("bare.json", serde_json::to_string(&h.to_json()).unwrap()),
        ] {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            let mut m = Merged::default();
            merge_file(&p, &mut m).unwrap();
            assert_eq!(m.histogram, h, "{name}");
            assert_eq!(m.logs, 1);
        }
    }
}
