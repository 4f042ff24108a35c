//! `steadyhud analyze FILE [--json] [--segments] [--stutter-threshold X] [--format F]`:
//! reads a frame-time log in any supported format and prints the numbers of
//! docs/metrics.md#the-json-keys as an aligned table, or as one JSON object
//! with `--json`.
//! Bad input: `steadyhud: file:line:col: what` on stderr, exit code 2.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use steadyhud_formats::{self as formats, Filter, Format, FrameLog, ParseError, ReadOptions};
use steadyhud_metrics::catalog::{self, Group};
use steadyhud_metrics::display::DisplayStats;
use steadyhud_metrics::gpu::{GpuKeys, GpuStats};
use steadyhud_metrics::sensor_causes::{sensor_causes, SensorCause, SensorCauseJson};
use steadyhud_metrics::sensors::SensorSummary;
use steadyhud_metrics::{self as metrics, Options, Summary};

/// `--format` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    Auto,
    Presentmon,
    Capframex,
    Mangohud,
    Steadyhud,
    Plain,
}

impl FormatArg {
    fn format(self) -> Option<Format> {
        match self {
            FormatArg::Auto => None,
            FormatArg::Presentmon => Some(Format::PresentMon),
            FormatArg::Capframex => Some(Format::CapFrameX),
            FormatArg::Mangohud => Some(Format::MangoHud),
            FormatArg::Steadyhud => Some(Format::SteadyHud),
            FormatArg::Plain => Some(Format::Plain),
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct AnalyzeArgs {
    /// Frame-time log: a steadyhud session log, PresentMon / CapFrameX / OCAT
    /// CSV, MangoHud CSV, or plain text with one frame time in ms per line.
    pub file: PathBuf,
    /// Print one JSON object (the keys of docs/metrics.md#the-json-keys plus
    /// format and source).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub threshold: ThresholdArg,
    /// Input format (default: detected from the content).
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub format: FormatArg,
    /// PresentMon-style logs: analyse this process (application name or
    /// pid) instead of the swapchain with the most frames.
    #[arg(long, value_name = "NAME|PID")]
    pub process: Option<String>,
    /// PresentMon-style logs: analyse this swapchain (address, e.g. 0x1A2B).
    #[arg(long, value_name = "ADDR")]
    pub swapchain: Option<String>,
    /// Also give the metrics of each segment between the log's marks
    /// (`steadyhud ctl mark TEXT`).
    #[arg(long)]
    pub segments: bool,
    /// Also give the metrics of the displayed frames (display intervals,
    /// dropped frames, animation error, latency) of a PresentMon-style
    /// capture with display columns; `--json` adds them as `display`.
    #[arg(long)]
    pub display: bool,
}

/// `--stutter-threshold X` and `--target-fps N`, shared by every command
/// that analyses logs: the thresholds a log is judged by.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct ThresholdArg {
    /// θ of the stutter rule: a frame stutters when it exceeds its 19-frame
    /// median by more than 4 ms and by more than this share of the median.
    #[arg(long, value_name = "X", default_value_t = steadyhud_metrics::DEFAULT_STUTTER_THRESHOLD, value_parser = parse_threshold)]
    pub stutter_threshold: f64,
    /// The target frame rate whose budget (1/N s) time over budget counts
    /// frames over (default: the target a steadyhud log records, else 60).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub target_fps: Option<u32>,
}

impl ThresholdArg {
    /// The metrics options for a log that records the target `recorded`
    /// (a steadyhud session log's `# target_fps:` line): `--target-fps`,
    /// else `recorded`, else [`steadyhud_metrics::DEFAULT_TARGET_FPS`].
    pub fn options_for(&self, recorded: Option<u32>) -> Options {
        Options {
            stutter_threshold: self.stutter_threshold,
            target_fps: self
                .target_fps
                .or(recorded)
                .unwrap_or(steadyhud_metrics::DEFAULT_TARGET_FPS),
        }
    }
}

fn parse_threshold(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("expected a number > 0, found {s:?}")),
    }
}

/// A log read and analysed.
#[derive(Clone, Debug)]
pub struct Analysis {
    pub path: PathBuf,
    pub log: FrameLog,
    /// The options the log was judged by (the target resolved for it).
    pub opts: Options,
    pub summary: Summary,
    /// What spiked with each stutter, when the log has statistics counters
    /// (steadyhud logs written with `counters` on) or GPU busy times.
    pub stutter_causes: Option<Vec<steadyhud_counters::Cause>>,
    /// The GPU-bound verdict, when the log has GPU busy times.
    pub gpu: Option<GpuStats>,
    /// Time-weighted means and maxima of the system readings and the
    /// energy per frame, when the log has sensor columns.
    pub sensors: Option<SensorSummary>,
    /// The stutters the readings explain (GPU throttling, clock drops),
    /// when the log has sensor columns.
    pub sensor_causes: Option<Vec<SensorCause>>,
    /// The displayed-frame metrics, when the log has display columns
    /// (docs/metrics.md, "Displayed frames").
    pub display: Option<DisplayStats>,
}

/// Reads `path` and computes its summary with the thresholds of `args`
/// (the target resolved against what the log records): the library entry
/// point behind `analyze` (also usable by other commands).
pub fn analyze_path(
    path: &Path,
    read: &ReadOptions,
    args: &ThresholdArg,
) -> Result<Analysis, ParseError> {
    let log = formats::read_path(path, read)?;
    let opts = &args.options_for(log.meta.target_fps);
    // Every reader returns at least one frame or an error.
    let summary = metrics::summarize(&log.durations_ns, opts).ok_or_else(|| ParseError {
        path: path.to_path_buf(),
        pos: None,
        kind: formats::ErrorKind::NoFrames { what: "frame" },
    })?;
    let gpu = log
        .meta
        .gpu
        .as_ref()
        .and_then(|g| g.stats(&log.durations_ns));
    let stutter_causes = stutter_causes(&log, opts);
    let sensor_cols = log.meta.sensors.as_ref();
    let sensors =
        sensor_cols.and_then(|c| steadyhud_metrics::sensors::summarize(&log.durations_ns, c));
    let sensor_causes = sensor_cols.map(|c| sensor_causes(&summary.stutter_frames, c));
    let display = log
        .meta
        .display
        .as_ref()
        .map(|c| DisplayStats::of(&log.durations_ns, c, opts));
    Ok(Analysis {
        path: path.to_path_buf(),
        log,
        opts: *opts,
        summary,
        stutter_causes,
        gpu,
        sensors,
        sensor_causes,
        display,
    })
}

/// What spiked with each stutter (frame health): the log's counter columns
/// and, when it has GPU data, its GPU busy time as one more column labelled
/// `GPU work`. `None` when the log has neither (a GPU column without a
/// single value is no GPU data).
pub fn stutter_causes(log: &FrameLog, opts: &Options) -> Option<Vec<steadyhud_counters::Cause>> {
    let counters = log.meta.counters.as_ref();
    let gpu_busy = log
        .meta
        .gpu
        .as_ref()
        .filter(|g| {
            g.busy_ns
                .iter()
                .any(|&b| b != steadyhud_metrics::gpu::NO_DATA)
        })
        .map(|g| g.busy_for_health());
    if counters.is_none() && gpu_busy.is_none() {
        return None;
    }
    let mut columns: Vec<&[u64]> = Vec::new();
    let mut infos = Vec::new();
    if let Some(c) = counters {
        // Every counter has its values: the reader pushes both together.
        columns.extend(c.values.iter().map(Vec::as_slice));
        infos.extend(c.infos.iter().cloned());
    }
    if let Some(busy) = &gpu_busy {
        columns.push(busy);
        infos.push(steadyhud_counters::gpu_work_info());
    }
    let rule = steadyhud_counters::HealthRule {
        stutter_threshold: opts.stutter_threshold,
        ..Default::default()
    };
    Some(steadyhud_counters::attribute_columns(
        &log.durations_ns,
        &columns,
        &infos,
        &rule,
    ))
}

pub fn run(args: AnalyzeArgs) -> ExitCode {
    let read = ReadOptions {
        format: args.format.format(),
        filter: Filter {
            process: args.process.clone(),
            swapchain: args.swapchain.clone(),
        },
    };
    let analysis = match analyze_path(&args.file, &read, &args.threshold) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("steadyhud: {e}");
            return ExitCode::from(2);
        }
    };
    let opts = analysis.opts;
    if args.display && analysis.display.is_none() {
        eprintln!(
            "steadyhud: {}: no display columns (MsBetweenDisplayChange, DisplayedTime): --display needs a PresentMon-style capture with them",
            args.file.display()
        );
        return ExitCode::from(2);
    }
    let display = analysis.display.as_ref().filter(|_| args.display);
    let segments = args.segments.then(|| {
        super::segments::split(&analysis.log.durations_ns, &analysis.log.meta.marks, &opts)
    });
    let mut text = match (args.json, &segments) {
        (true, _) => match json(&analysis, segments.as_deref(), display) {
            Ok(j) => j + "\n",
            Err(e) => {
                eprintln!(
                    "steadyhud: {}: cannot write the JSON: {e}",
                    args.file.display()
                );
                return ExitCode::from(1);
            }
        },
        (false, None) => table(&analysis, &opts),
        (false, Some(s)) => {
            let mut t = table(&analysis, &opts);
            if analysis.log.meta.marks.is_empty() {
                t.push_str(
                    "\nSegments: the log has no marks (`steadyhud ctl mark TEXT` writes them)\n",
                );
            }
            t + &super::segments::table(s)
        }
    };
    if let (false, Some(d)) = (args.json, display) {
        text.push_str(&super::display::table(d));
    }
    // The log's own text (its `# exe:` line, marks) is someone's: an
    // escape sequence in it is shown, not obeyed (JSON escapes it itself).
    let text = crate::shown(&text);
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) is not worth a message.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("steadyhud: cannot write output: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The `--json` object: the keys of docs/metrics.md#the-json-keys in their
/// order, the GPU verdict (`gpu_bound_pct`, `gpu_busy_ms_avg`, `null` without
/// GPU data), `target_fps` (the target of `time_over_budget_pct`), then `format`, `format_detail`, `source`, `column`, `file`,
/// `notes`; with `--segments` (`segments`), `marks` and `segments` (see
/// [`super::segments::json`]); with `--display` (`display`), the `display`
/// block ([`DisplayStats`]), the top-level keys staying the present-based
/// ones. An object that cannot be written is an error, never `{}`.
pub fn json(
    a: &Analysis,
    segments: Option<&[super::segments::Segment]>,
    display: Option<&DisplayStats>,
) -> Result<String, serde_json::Error> {
    #[derive(serde::Serialize)]
    struct Out<'a> {
        #[serde(flatten)]
        summary: &'a Summary,
        #[serde(flatten)]
        gpu: GpuKeys,
        /// The target `time_over_budget_pct` was judged against.
        target_fps: u32,
        format: &'a str,
        format_detail: &'a str,
        source: Option<&'a str>,
        column: &'a str,
        file: String,
        notes: &'a [String],
        /// `null` when the log has no sensor columns.
        sensors: Option<&'a SensorSummary>,
        #[serde(skip_serializing_if = "Option::is_none")]
        sensor_causes: Option<Vec<SensorCauseJson<'a>>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        stutter_causes: Option<&'a [steadyhud_counters::Cause]>,
        #[serde(skip_serializing_if = "Option::is_none")]
        stutter_causes_text: Option<Vec<String>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        stutters_by_cause: Option<Vec<steadyhud_counters::CauseGroup>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        marks: Option<&'a [formats::Mark]>,
        #[serde(skip_serializing_if = "Option::is_none")]
        segments: Option<Vec<super::segments::SegmentJson<'a>>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        display: Option<&'a DisplayStats>,
    }
    let m = &a.log.meta;
    let out = Out {
        summary: &a.summary,
        gpu: GpuKeys::of(a.gpu.as_ref()),
        target_fps: a.opts.target_fps,
        format: m.format.name(),
        format_detail: &m.detail,
        source: m.source.as_deref(),
        column: &m.column,
        file: a.path.display().to_string(),
        notes: &m.notes,
        sensors: a.sensors.as_ref(),
        sensor_causes: a
            .sensor_causes
            .as_ref()
            .map(|c| c.iter().map(SensorCause::json).collect()),
        stutter_causes: a.stutter_causes.as_deref(),
        stutter_causes_text: a
            .stutter_causes
            .as_ref()
            .map(|c| c.iter().map(|c| c.to_string()).collect()),
        stutters_by_cause: a
            .stutter_causes
            .as_deref()
            .map(steadyhud_counters::by_main_cause),
        marks: segments.map(|_| m.marks.as_slice()),
        segments: segments.map(super::segments::json),
        display,
    };
    serde_json::to_string_pretty(&out)
}

/// Stutters listed in the table.
const STUTTERS_SHOWN: usize = 5;

/// The rows under the stutter count: each stutter (with what the system
/// readings say of it), then, with counters, the stutters by main cause.
fn stutter_rows(a: &Analysis, row: &mut impl FnMut(&str, String)) {
    let sensor_causes = a.sensor_causes.as_deref().unwrap_or(&[]);
    for line in stutter_lines(
        &a.log.durations_ns,
        &a.summary.stutter_frames,
        sensor_causes,
    ) {
        row("", line);
    }
    if let Some(causes) = a.stutter_causes.as_ref().filter(|c| !c.is_empty()) {
        row(
            "Why (counters)",
            "(counters or GPU work far above their 19-frame median in the stutter frame)".into(),
        );
        let groups = steadyhud_counters::by_main_cause(causes);
        let by: Vec<String> = groups
            .iter()
            .map(|g| format!("{} {} (+{:.1} ms)", g.label, g.stutters, g.excess_ms))
            .collect();
        row("  by main cause", by.join(", "));
        for c in causes.iter().take(STUTTERS_SHOWN) {
            row("", c.to_string());
        }
        if causes.len() > STUTTERS_SHOWN {
            row(
                "",
                format!(
                    "… {} more (all in --json stutter_causes)",
                    causes.len() - STUTTERS_SHOWN
                ),
            );
        }
    }
}

/// The human-readable table.
pub fn table(a: &Analysis, opts: &Options) -> String {
    let s = &a.summary;
    let m = &a.log.meta;
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut row = |k: &str, v: String| rows.push((k.to_string(), v));
    row("File", a.path.display().to_string());
    row("Format", format!("{}; column {}", m.detail, m.column));
    row(
        "Source",
        m.source
            .clone()
            .unwrap_or_else(|| "not named in the log".into()),
    );
    // The summary's metrics, from the catalog, group by group in its order.
    let mut group = None;
    for m in catalog::METRICS {
        let v = m.of(s);
        if group != Some(m.group) {
            // A blank line between groups (sizes and rates share a block).
            if !(group == Some(Group::Size) && m.group == Group::Rates) {
                row("", String::new());
            }
            if m.group == Group::Percentiles {
                row(
                    "Frame time, time-weighted",
                    "(Pp: a share 1-p of the time is spent in frames at least this long)".into(),
                );
            }
            group = Some(m.group);
        }
        match (m.group, v) {
            (Group::Percentiles, catalog::Value::Float(ms)) => {
                row(&format!("  {}", m.short), format!("{ms:>9.3} ms"))
            }
            (Group::Rates, catalog::Value::Float(f)) => row(m.label, fps(f)),
            (Group::Size, catalog::Value::Float(f)) => row(m.label, format!("{f:.3} {}", m.unit)),
            (_, catalog::Value::Float(pct)) if m.key == "time_over_budget_pct" => row(
                m.label,
                format!(
                    "{pct:.2} % (frames over {:.2} ms, the budget of {} fps)",
                    1000.0 / f64::from(opts.target_fps.max(1)),
                    opts.target_fps
                ),
            ),
            _ if m.key == "stutter_count" => {
                row(
                    m.label,
                    format!("{} (threshold {})", s.stutter_count, opts.stutter_threshold),
                );
                stutter_rows(a, &mut row);
            }
            _ => row(m.label, m.show(v)),
        }
    }
    row("", String::new());
    row("GPU-bound", gpu_text(a.gpu.as_ref()));
    if let Some(sensors) = &a.sensors {
        row("", String::new());
        for (k, v) in steadyhud_report::sensors::analyze_rows(sensors) {
            row(&k, v);
        }
        let sensor_causes = a.sensor_causes.as_deref().unwrap_or(&[]);
        if !sensor_causes.is_empty() {
            row(
                "  stutters explained",
                format!(
                    "{} of {} (GPU throttling or a clock drop; first ones above)",
                    sensor_causes.len(),
                    s.stutter_count
                ),
            );
        }
    }
    let width = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (k, v) in rows {
        let line = format!("{k:<width$}  {v}");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if !m.notes.is_empty() {
        out.push_str("\nNotes:\n");
        for n in &m.notes {
            out.push_str(&format!("  - {n}\n"));
        }
    }
    out
}

/// The verdict line's value: `84.2 % of the time (GPU busy 7.9 ms/frame on
/// average)`, or why there is none.
pub fn gpu_text(gpu: Option<&GpuStats>) -> String {
    gpu.map_or_else(
        || {
            "n/a: the log has no GPU busy times (PresentMon 2.x MsGPUBusy, steadyhud gpu_busy_ms)"
                .into()
        },
        GpuStats::text,
    )
}

fn fps(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "n/a".into()
    }
}

/// `frame 123 at 4.567 s: 45.200 ms (+28.5 ms over its median)` for the
/// first few stutters, followed by `; GPU clock 2.4→1.1 GHz` where the
/// readings explain it, and `… N more`.
fn stutter_lines(d: &[u64], frames: &[usize], causes: &[SensorCause]) -> Vec<String> {
    let mut out = Vec::new();
    let mut start_ns: u128 = 0;
    let mut next = 0usize;
    for &i in frames.iter().take(STUTTERS_SHOWN) {
        if i >= d.len() {
            break;
        }
        while next < i {
            start_ns += u128::from(d[next]);
            next += 1;
        }
        let lo = i.saturating_sub(9);
        let hi = (i + 9).min(d.len() - 1);
        let mut w: Vec<u64> = d[lo..=hi].to_vec();
        w.sort_unstable();
        let n = w.len();
        let median = if n % 2 == 1 {
            w[n / 2] as f64
        } else {
            (w[n / 2 - 1] as f64 + w[n / 2] as f64) / 2.0
        };
        let mut line = format!(
            "frame {i} at {:.3} s: {:.3} ms (+{:.3} ms over its median)",
            start_ns as f64 / 1e9,
            d[i] as f64 / 1e6,
            (d[i] as f64 - median) / 1e6
        );
        if let Some(c) = causes.iter().find(|c| c.frame == i) {
            line.push_str("; ");
            line.push_str(&c.text());
        }
        out.push(line);
    }
    if frames.len() > STUTTERS_SHOWN {
        out.push(format!(
            "… {} more (all in --json stutter_frames)",
            frames.len() - STUTTERS_SHOWN
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stutter_lines_give_time_and_excess() {
        let mut d = vec![10_000_000u64; 30];
        d[20] = 40_000_000;
        let l = stutter_lines(&d, &[20], &[]);
        assert_eq!(
            l,
            vec!["frame 20 at 0.200 s: 40.000 ms (+30.000 ms over its median)".to_string()]
        );
    }

    #[test]
    fn threshold_must_be_positive() {
        assert!(parse_threshold("0.3").is_ok());
        assert!(parse_threshold("0").is_err());
        assert!(parse_threshold("-1").is_err());
        assert!(parse_threshold("nan").is_err());
    }
}
