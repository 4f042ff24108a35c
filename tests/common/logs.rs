//! Session logs: finding the CSVs and summaries a run left in the log
//! folder, reading their frame durations, and `steadyhud analyze` on them.

use super::{run, Harness};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// A session log: the streamed CSV and, when the app exited cleanly, its summary.
#[derive(Clone, Debug)]
pub struct SessionLog {
    pub csv: PathBuf,
    pub summary: Option<PathBuf>,
}

impl SessionLog {
    /// The summary JSON, parsed; panics if there is none.
    pub fn summary_json(&self) -> serde_json::Value {
        let p = self
            .summary
            .as_ref()
            .unwrap_or_else(|| panic!("no .summary.json next to {}", self.csv.display()));
        let text =
            std::fs::read_to_string(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("parse {}: {e}", p.display()))
    }
}

/// Files directly in `dir`, sorted.
pub fn list_dir(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// `*.csv` session logs in `dir`, each with its `<stem>.summary.json` if present.
pub fn session_logs_in(dir: &Path) -> Vec<SessionLog> {
    list_dir(dir)
        .into_iter()
        .filter(|p| p.extension() == Some(OsStr::new("csv")))
        .map(|csv| {
            let summary = csv.with_extension("summary.json");
            SessionLog {
                summary: summary.is_file().then_some(summary),
                csv,
            }
        })
        .collect()
}

/// Frame durations (ns) logged in a steadyhud session CSV, in row order,
/// read with the crate's own session-log reader (`steadyhud_formats`, which
/// ignores a cut-off last line). Panics, naming file, line and column, if
/// the file is not a steadyhud session log.
pub fn logged_durations_ns(csv: &Path) -> Vec<u64> {
    let opts = steadyhud_formats::ReadOptions {
        format: Some(steadyhud_formats::Format::SteadyHud),
        ..Default::default()
    };
    match steadyhud_formats::read_path(csv, &opts) {
        Ok(log) => log.durations_ns,
        Err(e) => panic!(
            "{} is not a readable steadyhud session log: {e}",
            csv.display()
        ),
    }
}

/// Waits until the first session log in `dir` has `rows` rows written
/// (frames flow: a test's input then has frames to take it), at most
/// `timeout`; whether it got there.
pub fn wait_for_rows(dir: &Path, rows: usize, timeout: std::time::Duration) -> bool {
    let written = || {
        session_logs_in(dir).first().map_or(0, |l| {
            let text = std::fs::read_to_string(&l.csv).unwrap_or_default();
            text.lines()
                .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
                .count()
        })
    };
    let deadline = std::time::Instant::now() + timeout;
    while written() < rows {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    true
}

impl Harness {
    /// Session logs in the log dir, sorted by name.
    pub fn session_logs(&self) -> Vec<SessionLog> {
        session_logs_in(&self.log_dir)
    }

    /// The single session log of the log dir; panics (listing the dir) when
    /// there is none or more than one.
    pub fn only_session_log(&self) -> SessionLog {
        let logs = self.session_logs();
        assert_eq!(
            logs.len(),
            1,
            "expected exactly one session log (*.csv) in {}, found: {:?}",
            self.log_dir.display(),
            list_dir(&self.log_dir)
        );
        logs.into_iter().next().unwrap()
    }

    /// The single session log, checked to hold one row per frame of an app
    /// that presented `presents` times (presents − 1 rows); with its rows.
    pub fn only_session_log_of(&self, presents: u64, what: &str) -> (SessionLog, u64) {
        let log = self.only_session_log();
        let rows = logged_durations_ns(&log.csv).len() as u64;
        assert_eq!(
            rows,
            presents - 1,
            "{what}: session log rows vs presents − 1 ({})",
            log.csv.display()
        );
        (log, rows)
    }

    /// Removes every file of the log dir (between runs of one test).
    pub fn clear_logs(&self) {
        for p in list_dir(&self.log_dir) {
            let _ = std::fs::remove_file(p);
        }
    }

    /// `steadyhud analyze FILE --json`, asserted successful, parsed.
    pub fn analyze(&self, file: &Path) -> serde_json::Value {
        let out = run(self.steadyhud(&["analyze"]).arg(file).arg("--json"));
        assert!(
            out.status.success(),
            "steadyhud analyze {} failed ({}):\n{}",
            file.display(),
            out.status,
            out.stderr
        );
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| {
            panic!("analyze --json printed invalid JSON ({e}):\n{}", out.stdout)
        })
    }
}

/// A summary JSON's metrics (`what` names it in a failure).
fn summary_of(v: &serde_json::Value, what: &str) -> steadyhud_metrics::Summary {
    serde_json::from_value(v.clone())
        .unwrap_or_else(|e| panic!("{what} lacks docs/metrics.md#the-json-keys ({e}): {v}"))
}

/// The layer's summary (`written`, final or periodic) against `analyze
/// --json` of its log (`analyzed`), every catalog metric at its printed
/// decimals; the classic lows within their stated bound (1 µs per frame of
/// the k longest, of `logged`, the frames both cover). The running
/// session's summary comes from its fixed-size whole-session state (issue
/// 52): docs/metrics.md, "The summary of a running session".
pub fn assert_as_printed(
    written: &serde_json::Value,
    analyzed: &serde_json::Value,
    logged: &[u64],
    what: &str,
) {
    use steadyhud_metrics::catalog::METRICS;
    let written = summary_of(written, "summary.json");
    let analyzed = summary_of(analyzed, "analyze --json");
    let sorted = steadyhud_metrics::SortedDurations::new(logged);
    for m in METRICS {
        let (a, b) = (m.of(&written), m.of(&analyzed));
        assert!(
            m.agrees_as_printed(a, b, &sorted),
            "{what}: summary.json {}: {a:?} vs analyze {b:?}",
            m.key
        );
    }
    assert_eq!(
        written.stutter_frames, analyzed.stutter_frames,
        "{what}: stutter_frames"
    );
}

/// Whether `key` is a catalog metric ([`assert_as_printed`] compares those).
pub fn is_catalog_metric(key: &str) -> bool {
    steadyhud_metrics::catalog::METRICS
        .iter()
        .any(|m| m.key == key)
}

/// A session log row's PC latency cells (docs/metrics.md, "PC latency"):
/// its frame, its present (ns from the first present), the input it took
/// (ns from the first present), I2FS and FS2P (ms).
#[derive(Debug)]
pub struct LatencyRow {
    pub frame: u64,
    pub present_ns: u64,
    pub input_ns: Option<i64>,
    pub i2fs_ms: Option<f64>,
    pub fs2p_ms: Option<f64>,
    pub click_to_photon_ms: Option<f64>,
    pub pcl_ms: Option<f64>,
    /// P2D: the display columns' `display_latency_ms` (`None` in a log
    /// without them, or for a frame not shown).
    pub p2d_ms: Option<f64>,
}

/// The log's first present (CLOCK_MONOTONIC ns) and its latency rows;
/// panics on a log without the latency columns.
pub fn latency_rows(csv: &Path) -> (u64, Vec<LatencyRow>) {
    let text = std::fs::read_to_string(csv).expect("the session log");
    let origin = text
        .lines()
        .find_map(|l| l.strip_prefix(steadyhud_log::ORIGIN_PREFIX))
        .expect("the log's origin line")
        .trim()
        .parse()
        .expect("origin_monotonic_ns");
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let at = |name: &str| {
        header
            .iter()
            .position(|c| *c == name)
            .unwrap_or_else(|| panic!("no {name} column in {header:?}"))
    };
    let names = steadyhud_log::columns::LATENCY.map(|c| c.name);
    let (input, i2fs, fs2p) = (at(names[0]), at(names[1]), at(names[3]));
    let (c2p, pcl) = (at(names[2]), at(names[4]));
    let p2d = header.iter().position(|c| *c == "display_latency_ms");
    let (frame, present) = (at("frame"), at("present_ns"));
    let rows = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let cell = |k: usize| f.get(k).copied().filter(|c| !c.is_empty());
            LatencyRow {
                frame: f[frame].parse().expect("frame"),
                present_ns: f[present].parse().expect("present_ns"),
                input_ns: cell(input).map(|c| c.parse().expect("input_ns")),
                i2fs_ms: cell(i2fs).map(|c| c.parse().expect("I2FS")),
                fs2p_ms: cell(fs2p).map(|c| c.parse().expect("FS2P")),
                click_to_photon_ms: cell(c2p).map(|c| c.parse().expect("click to photon")),
                pcl_ms: cell(pcl).map(|c| c.parse().expect("PCL")),
                p2d_ms: p2d
                    .and_then(cell)
                    .map(|c| c.parse().expect("display_latency_ms")),
            }
        })
        .collect();
    (origin, rows)
}
