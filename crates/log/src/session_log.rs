//! The CSV the analysis thread streams ([`SessionLog`]): its name, header
//! and comment lines, rows, and where logs go by default.

use crate::error::LogError;
use crate::summary::{write_summary_streamed, Progress, SessionExtra, Streamed, SummaryTarget};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use steadyhud_metrics::{StkPoint, Summary};
use steadyhud_sys::home::home_dir;
use steadyhud_sys::time::local_time;

/// First characters of every session log.
pub const MAGIC: &str = "# steadyhud";
/// Prefix of the comment line that records lost timestamps.
pub const OVERFLOW_PREFIX: &str = "# ring overflow: ";
/// Prefix of the comment line that records a frame cap change.
pub const FPS_LIMIT_PREFIX: &str = "# fps_limit: ";
/// Prefix of the comment line of a mark (`steadyhud ctl mark`).
pub const MARK_PREFIX: &str = "# mark: ";
/// Prefix of the comment line that says why input times were refused
/// (PC latency, once per reason).
pub const LATENCY_PREFIX: &str = "# pc latency: ";
/// Start of the comment line that records frames whose counters were lost.
pub const COUNTER_OVERFLOW_PREFIX: &str = "# counter ring overflow: ";
/// Prefix of the comment line naming the program.
pub const EXE_PREFIX: &str = "# exe: ";
/// Prefix of the comment line with the process id (the layer writes it).
pub const PID_PREFIX: &str = "# pid: ";
/// Header line naming the graphics API the frames came through
/// ([`Api::name`]); the summary's `api` key has the same value.
pub const API_PREFIX: &str = "# api: ";

/// Header line recording the target frame rate the session was measured
/// against (the config's `target_fps`): `# target_fps: 60`. Its budget
/// 1/f s is what `time_over_budget_pct` counts frames over
/// (docs/metrics.md#time-over-budget-time_over_budget_pct).
pub const TARGET_FPS_PREFIX: &str = "# target_fps: ";

/// Header line with the CLOCK_MONOTONIC time of the session's first
/// present, ns (`present_ns` 0): `# origin_monotonic_ns: 123456789`. With
/// it, `present_ns` and `displayed_ns` can be set against another
/// program's readings of that clock (the tests compare a test program's
/// own presentation feedback with the log's, frame by frame).
pub const ORIGIN_PREFIX: &str = "# origin_monotonic_ns: ";

/// The target of a [`TARGET_FPS_PREFIX`] line's rest (`60`): a whole
/// number ≥ 1, or `None`.
pub fn parse_target_fps(rest: &str) -> Option<u32> {
    rest.trim().parse().ok().filter(|&f| f >= 1)
}

/// The graphics API whose presents (or swaps) a session log records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Api {
    /// `vkQueuePresentKHR`, through the layer.
    #[default]
    Vulkan,
    /// `glXSwapBuffers` / `eglSwapBuffers`, through the GL library.
    OpenGl,
}

impl Api {
    /// Every API, for readers that parse the name back.
    pub const ALL: [Api; 2] = [Api::Vulkan, Api::OpenGl];

    /// The name in the `# api:` line and the summary's `api` key.
    pub fn name(self) -> &'static str {
        match self {
            Api::Vulkan => "vulkan",
            Api::OpenGl => "opengl",
        }
    }

    /// The API called `name` ([`Api::name`]), if any.
    pub fn from_name(name: &str) -> Option<Api> {
        Api::ALL.into_iter().find(|a| a.name() == name)
    }
}
/// Last line of the CSV of a session that ended cleanly.
pub const END_LINE: &str = "# end: complete";

/// An open session log. Rows are buffered and reach the file on
/// [`SessionLog::flush`] (call it at least once a second).
///
/// Write errors are reported once: the first failing call returns the error,
/// later calls do nothing and return `Ok`, so a full disk costs one message.
pub struct SessionLog {
    csv_path: PathBuf,
    out: BufWriter<File>,
    exe: String,
    api: Api,
    start: SystemTime,
    start_local: String,
    frames: u64,
    lost: u64,
    overflow_events: u64,
    failed: bool,
    /// Units of the columns after `frametime_ms` (see [`Layout::columns`]).
    extra_units: Vec<steadyhud_counters::Unit>,
    /// Text columns after those (see [`Layout::text_columns`]).
    text_columns: usize,
}

/// What a session log carries beyond the frame columns ([`crate::columns::FRAME`]); the
/// default is a plain log (no pid line, no extra columns, no comments).
#[derive(Clone, Copy, Debug, Default)]
pub struct Layout<'a> {
    /// Written as a `# pid: N` line after `# exe:`, so logs of several
    /// processes of one game tell their process.
    pub pid: Option<u32>,
    /// The API the frames came through: the `# api:` line.
    pub api: Api,
    /// The target frame rate the session is measured against: a
    /// [`TARGET_FPS_PREFIX`] line after `# api:` (none when `None`).
    pub target_fps: Option<u32>,
    /// CLOCK_MONOTONIC ns of the first present: an [`ORIGIN_PREFIX`] line
    /// after the target line (none when `None`).
    pub origin_ns: Option<u64>,
    /// Numeric per-frame columns after `frametime_ms`: `(name, unit)`;
    /// `Unit::Nanos` values are written as ms with six decimals, others as
    /// integers. Rows give them through [`SessionLog::write_frame`].
    pub columns: &'a [(String, steadyhud_counters::Unit)],
    /// Columns after those whose cells the caller formats (the system
    /// readings, whose cells may be empty); rows then come through
    /// [`SessionLog::write_frame_text`].
    pub text_columns: &'a [&'a str],
    /// One comment line (without `# `) per non-empty entry, explaining
    /// the extra columns.
    pub abouts: &'a [&'a str],
}

impl SessionLog {
    /// Creates `dir` if missing and a new `<exe>_<local start time>.csv` in
    /// it, and writes the comment header and the CSV header with the
    /// columns `layout` adds.
    pub fn create(
        dir: &Path,
        exe_name: &str,
        start: SystemTime,
        layout: &Layout,
    ) -> Result<SessionLog, LogError> {
        let Layout {
            pid,
            api,
            target_fps,
            origin_ns,
            columns,
            text_columns,
            abouts,
        } = *layout;
        fs::create_dir_all(dir).map_err(|source| LogError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
        let exe = sanitize(exe_name);
        let tm = local_time(start);
        let stem = format!(
            "{}_{:04}-{:02}-{:02}_{:02}-{:02}-{:02}",
            exe, tm.year, tm.month, tm.day, tm.hour, tm.minute, tm.second
        );
        let (csv_path, file) = create_unique(dir, &stem)?;
        let unix = start
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        let mut log = SessionLog {
            out: BufWriter::with_capacity(64 * 1024, file),
            exe,
            api,
            start,
            start_local: tm.iso(),
            frames: 0,
            lost: 0,
            overflow_events: 0,
            failed: false,
            csv_path,
            extra_units: columns.iter().map(|c| c.1).collect(),
            text_columns: text_columns.len(),
        };
        let mut header = crate::columns::frame_header();
        for name in columns
            .iter()
            .map(|c| c.0.as_str())
            .chain(text_columns.iter().copied())
        {
            header.push(',');
            header.push_str(name);
        }
        let about: String = abouts
            .iter()
            .filter(|a| !a.is_empty())
            .map(|a| format!("# {a}\n"))
            .collect();
        let pid_line = pid.map_or(String::new(), |p| format!("{PID_PREFIX}{p}\n"));
        let target_line = target_fps.map_or(String::new(), |f| format!("{TARGET_FPS_PREFIX}{f}\n"));
        let origin_line = origin_ns.map_or(String::new(), |t| format!("{ORIGIN_PREFIX}{t}\n"));
        let head = format!(
            "{MAGIC} {} session log\n{EXE_PREFIX}{}\n{pid_line}{API_PREFIX}{}\n{target_line}{origin_line}\
             # start: {} (unix {unix:.3})\n# {}\n{about}{header}\n",
            env!("CARGO_PKG_VERSION"),
            log.exe,
            api.name(),
            log.start_local,
            crate::columns::frame_about(),
        );
        log.write(|out| out.write_all(head.as_bytes()))?;
        log.flush()?;
        Ok(log)
    }

    /// Path of the CSV.
    pub fn path(&self) -> &Path {
        &self.csv_path
    }

    /// Rows written so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Appends the row of frame `index`: `present_ns` = ns from the first
    /// present to the present ending this frame, `frame_ns` its duration.
    pub fn write_frame(
        &mut self,
        index: u64,
        present_ns: u64,
        frame_ns: u64,
    ) -> Result<(), LogError> {
        self.frames += 1;
        let (ms, frac) = (frame_ns / 1_000_000, frame_ns % 1_000_000);
        self.write(|out| writeln!(out, "{index},{present_ns},{ms}.{frac:06}"))
    }

    /// [`SessionLog::write_frame`] plus the extra columns' values, in the
    /// order and units given at creation (missing values are written as 0),
    /// and the text columns' cells: `cells` holds each cell preceded by a
    /// comma (`",43.1,,power"`), as many as text columns were given at
    /// creation; cells must not hold commas or line breaks (missing cells are
    /// written empty).
    pub fn write_frame_text(
        &mut self,
        index: u64,
        present_ns: u64,
        frame_ns: u64,
        extra: &[u64],
        cells: &str,
    ) -> Result<(), LogError> {
        self.frames += 1;
        let (ms, frac) = (frame_ns / 1_000_000, frame_ns % 1_000_000);
        let units = std::mem::take(&mut self.extra_units);
        let text_columns = self.text_columns;
        let r = self.write(|out| {
            write!(out, "{index},{present_ns},{ms}.{frac:06}")?;
            for (k, unit) in units.iter().enumerate() {
                let v = extra.get(k).copied().unwrap_or(0);
                match unit {
                    steadyhud_counters::Unit::Nanos => {
                        write!(out, ",{}.{:06}", v / 1_000_000, v % 1_000_000)?
                    }
                    _ => write!(out, ",{v}")?,
                }
            }
            let given = cells.bytes().filter(|&b| b == b',').count();
            out.write_all(cells.as_bytes())?;
            for _ in given..text_columns {
                out.write_all(b",")?;
            }
            out.write_all(b"\n")
        });
        self.extra_units = units;
        r
    }

    /// Records that `lost` timestamps were dropped by a full ring, as a
    /// `# ring overflow: N timestamps lost` line at this point of the log.
    pub fn note_overflow(&mut self, lost: u64) -> Result<(), LogError> {
        if lost == 0 {
            return Ok(());
        }
        self.lost += lost;
        self.overflow_events += 1;
        self.write(|out| writeln!(out, "{OVERFLOW_PREFIX}{lost} timestamps lost"))
    }

    /// Records that the counters of `lost` frames were dropped by a full
    /// counter ring (those rows hold 0s), as a
    /// `# counter ring overflow: N frames' counters lost (written as 0)` line.
    pub fn note_counter_overflow(&mut self, lost: u64) -> Result<(), LogError> {
        if lost == 0 {
            return Ok(());
        }
        self.write(|out| {
            writeln!(
                out,
                "{COUNTER_OVERFLOW_PREFIX}{lost} frames' counters lost (written as 0)"
            )
        })
    }

    /// Records a change of the frame cap (`fps` 0 = off) from frame
    /// `frame` on, as a `# fps_limit: 60 at frame 1234` line.
    pub fn note_fps_limit(&mut self, fps: u32, frame: u64) -> Result<(), LogError> {
        self.write(|out| writeln!(out, "{FPS_LIMIT_PREFIX}{fps} at frame {frame}"))
    }

    /// Records a mark (`steadyhud ctl mark TEXT`): the segment named `text`
    /// starts at frame `frame`, as a `# mark: TEXT at frame 1234` line.
    /// `text` is one line (the control protocol checks it).
    pub fn note_mark(&mut self, text: &str, frame: u64) -> Result<(), LogError> {
        self.write(|out| writeln!(out, "{MARK_PREFIX}{text} at frame {frame}"))
    }

    /// Records, once per reason, why input times were not counted for PC
    /// latency, as a `# pc latency: TEXT` line at this point of the log.
    pub fn note_latency(&mut self, text: &str) -> Result<(), LogError> {
        self.write(|out| writeln!(out, "{LATENCY_PREFIX}{text}"))
    }

    /// Pushes buffered rows to the file.
    pub fn flush(&mut self) -> Result<(), LogError> {
        self.write(|out| out.flush())
    }

    /// What a summary write needs of this session as it stands now, for
    /// [`write_summary`] on another thread while rows keep coming.
    pub fn summary_target(&self) -> SummaryTarget {
        SummaryTarget {
            csv_path: self.csv_path.clone(),
            exe: self.exe.clone(),
            api: self.api,
            start: self.start,
            start_local: self.start_local.clone(),
            lost: self.lost,
            overflow_events: self.overflow_events,
        }
    }

    /// Ends the session cleanly: appends [`END_LINE`] (unless a write failed
    /// earlier, which left a hole, so the CSV is not complete), flushes, and
    /// writes the summary with `"complete": true`. `summary` is `None` when
    /// the session had no frame; then only `frames: 0` and the session keys
    /// are written. Returns the summary's path.
    pub fn finish(
        self,
        summary: Option<&Summary>,
        stk: &[StkPoint],
        extra: SessionExtra,
    ) -> Result<PathBuf, LogError> {
        self.finish_streamed(summary, stk, extra, &Streamed::none())
    }

    /// [`SessionLog::finish`] with the keys of `streamed` written straight
    /// into the summary ([`crate::write_summary_streamed`]).
    pub fn finish_streamed<F: serde::Serialize, K: serde::Serialize>(
        mut self,
        summary: Option<&Summary>,
        stk: &[StkPoint],
        extra: SessionExtra,
        streamed: &Streamed<'_, F, K>,
    ) -> Result<PathBuf, LogError> {
        if !self.failed {
            self.write(|out| writeln!(out, "{END_LINE}"))?;
        }
        // Retry a failed flush once: what is buffered is the end of the log.
        self.failed = false;
        self.flush()?;
        write_summary_streamed(
            &self.summary_target(),
            summary,
            stk,
            extra,
            streamed,
            Progress::Complete,
        )
    }

    fn write(
        &mut self,
        f: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
    ) -> Result<(), LogError> {
        if self.failed {
            return Ok(());
        }
        f(&mut self.out).map_err(|source| {
            self.failed = true;
            LogError::Write {
                path: self.csv_path.clone(),
                source,
            }
        })
    }
}

/// The log folder when the config names none: `STEADYHUD_LOG_DIR`, else
/// `$XDG_STATE_HOME/steadyhud`, else `~/.local/state/steadyhud`; `None`
/// only if no home folder can be found.
pub fn default_log_dir() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = var("STEADYHUD_LOG_DIR") {
        return Some(d);
    }
    // The XDG spec says relative paths in these variables are invalid.
    if let Some(d) = var("XDG_STATE_HOME").filter(|p| p.is_absolute()) {
        return Some(d.join("steadyhud"));
    }
    home_dir().map(|h| h.join(".local/state/steadyhud"))
}

/// File-name-safe program name: letters, digits and `-_.+`, others as `_`.
fn sanitize(exe: &str) -> String {
    let s: String = exe
        .chars()
        .take(64)
        .map(|c| {
            if c.is_alphanumeric() || "-_.+".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_start_matches('.').to_string();
    if s.is_empty() {
        "app".to_string()
    } else {
        s
    }
}

fn create_unique(dir: &Path, stem: &str) -> Result<(PathBuf, File), LogError> {
    let mut n = 1;
    loop {
        let name = if n == 1 {
            format!("{stem}.csv")
        } else {
            format!("{stem}_{n}.csv")
        };
        let path = dir.join(name);
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 10_000 => n += 1,
            Err(source) => return Err(LogError::Create { path, source }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe() {
        assert_eq!(sanitize("vkcube"), "vkcube");
        assert_eq!(sanitize("my game/x 2"), "my_game_x_2");
        assert_eq!(sanitize("..."), "app");
        assert_eq!(sanitize(""), "app");
    }

    /// The target line follows `# api:` and reads back; a log without
    /// one has none.
    #[test]
    fn the_target_is_recorded_in_the_header() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout {
            target_fps: Some(144),
            ..Layout::default()
        };
        let log = SessionLog::create(dir.path(), "app", SystemTime::now(), &layout).unwrap();
        let text = fs::read_to_string(log.path()).unwrap();
        assert!(
            text.contains("# api: vulkan\n# target_fps: 144\n# start: "),
            "{text}"
        );
        let line = text.lines().find_map(|l| l.strip_prefix(TARGET_FPS_PREFIX));
        assert_eq!(line.and_then(parse_target_fps), Some(144));
        assert_eq!(parse_target_fps("0"), None);
        assert_eq!(parse_target_fps("x"), None);
        let plain = SessionLog::create(dir.path(), "b", SystemTime::now(), &Layout::default());
        let text = fs::read_to_string(plain.unwrap().path()).unwrap();
        assert!(!text.contains(TARGET_FPS_PREFIX), "{text}");
    }

    /// Text columns follow the numeric ones; their cells come as given and
    /// a row with fewer cells is padded with empty ones.
    #[test]
    fn text_columns_after_the_numeric_ones() {
        let dir = tempfile::tempdir().unwrap();
        let cols = [("submits".to_string(), steadyhud_counters::Unit::Count)];
        let layout = Layout {
            columns: &cols,
            text_columns: &["cpu_load_pct", "gpu_throttle"],
            abouts: &["counters: x", "", "sensors: y"],
            ..Layout::default()
        };
        let mut log = SessionLog::create(dir.path(), "app", SystemTime::now(), &layout).unwrap();
        log.write_frame_text(0, 10, 10_000_000, &[3], ",43.5,power|thermal")
            .unwrap();
        log.write_frame_text(1, 20, 10_000_000, &[4], ",").unwrap();
        log.flush().unwrap();
        let text = fs::read_to_string(log.path()).unwrap();
        assert!(
            text.contains("# counters: x\n# sensors: y\nframe,present_ns,frametime_ms,submits,cpu_load_pct,gpu_throttle\n0,10,10.000000,3,43.5,power|thermal\n1,20,10.000000,4,,\n"),
            "{text}"
        );
    }
}
