//! A killed session's log made whole: the rows its writer never flushed,
//! from the present tail ([`steadyhud_sys::tail`]), and a summary that
//! holds every frame, still marked incomplete.
//!
//! A game ended by SIGKILL, `_exit` (Wine's `TerminateProcess`) or a
//! signal's default action leaves its CSV at the analysis thread's last
//! flush, up to a quarter second behind, and its summary up to ten seconds
//! behind. Its tail still holds every timestamp it presented. Whoever runs
//! next ([`recover_dead`]: the layer or GL library at its start,
//! `steadyhud run` when its game ends, `steadyhud analyze`; only a tail
//! whose writer's lock is free, [`tail::claim`]) appends the
//! missing rows after a [`RECOVERED_PREFIX`] line (timing only: counters
//! 0, other columns empty), rewrites the summary over all rows with
//! `"complete": false` and `recovered_frames`, and removes the tail. A
//! tail whose process still runs, or whose log ended cleanly, is left to
//! its writer or removed.

use crate::columns::{self, Kind};
use crate::display::{self, Answers, Shown};
use crate::error::LogError;
use crate::summary::{summary_path_for, write_summary, Progress, SummaryTarget};
use crate::{
    parse_target_fps, Api, API_PREFIX, END_LINE, EXE_PREFIX, OVERFLOW_PREFIX, TARGET_FPS_PREFIX,
};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use steadyhud_metrics::display::NO_VALUE;
use steadyhud_metrics::Options;
use steadyhud_sys::tail::{self, TailFile};

/// Start of the comment line before the rows a recovery added.
pub const RECOVERED_PREFIX: &str = "# recovered: ";

/// What one recovery did.
#[derive(Debug, PartialEq, Eq)]
pub struct Recovered {
    /// The log made whole.
    pub csv: PathBuf,
    /// Rows added from the tail.
    pub rows: u64,
    /// Timestamps the tail no longer held (overwritten: more than
    /// [`tail::SLOTS`] frames behind the last flush).
    pub lost: u64,
}

impl std::fmt::Display for Recovered {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "{} frames of a killed session recovered into {}",
            self.rows,
            self.csv.display()
        )?;
        if self.lost > 0 {
            write!(f, " ({} older ones lost)", self.lost)?;
        }
        Ok(())
    }
}

/// Recovers every tail in [`tail::folder`] whose process has ended; each
/// result is a recovery or the reason one failed. Cheap when there is none:
/// one read of a folder in memory.
pub fn recover_dead() -> Vec<Result<Recovered, LogError>> {
    recover_dead_in(&tail::folder())
}

/// [`recover_dead`] of the tails in `dir`.
pub fn recover_dead_in(dir: &Path) -> Vec<Result<Recovered, LogError>> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    tail::sweep_unfinished(dir);
    let mut out = Vec::new();
    for e in entries.flatten() {
        if !e.file_name().to_string_lossy().ends_with(".tail") {
            continue;
        }
        if let Some(r) = recover(&e.path()).transpose() {
            out.push(r);
        }
    }
    out
}

/// Recovers the log of the tail at `path` if its writer has ended (its
/// lock is free: [`tail::claim`]) and removes the tail. `None`: nothing to
/// do (the writer lives, another reader took it, the log ended cleanly or
/// is gone).
pub fn recover(path: &Path) -> Result<Option<Recovered>, LogError> {
    let err = |source| LogError::Read {
        path: path.to_path_buf(),
        source,
    };
    // Recovered, or never to be: either way the claim removes the tail
    // when it goes. A log that could not be rewritten stays as it was.
    let Some(claim) = tail::claim(path).map_err(err)? else {
        return Ok(None);
    };
    let t = claim.read().map_err(err)?;
    recover_log(&t)
}

fn recover_log(t: &TailFile) -> Result<Option<Recovered>, LogError> {
    let csv_path = &t.csv;
    let why = |why: &str| LogError::Recover {
        path: csv_path.clone(),
        why: why.to_string(),
    };
    let mut text = match fs::read_to_string(csv_path) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(LogError::Read {
                path: csv_path.clone(),
                source,
            })
        }
    };
    if text.lines().any(|l| l == END_LINE) {
        return Ok(None);
    }
    // A row the kill cut off is dropped: the tail has its timestamp.
    text.truncate(text.rfind('\n').map_or(0, |i| i + 1));
    let head = Header::read(&text).ok_or_else(|| why("no CSV header"))?;
    // Rows up to frame `last` are in the CSV: timestamps 0..=last+1.
    let (covered, mut prev) = match head.last_row {
        Some((frame, present_ns)) => (frame + 1, t.origin + present_ns),
        None => (0, t.origin),
    };
    let mut add = String::new();
    let (mut rows, mut lost, mut pending) = (0u64, 0u64, 0u64);
    let extra = extra_cells(&head.columns);
    for i in covered + 1..t.count {
        let Some(ts) = t.timestamp(i).filter(|&ts| ts > prev) else {
            lost += 1;
            pending += 1;
            continue;
        };
        if pending > 0 {
            // As the layer records its own ring's losses: the next row's
            // duration spans them.
            add.push_str(&format!("{OVERFLOW_PREFIX}{pending} timestamps lost\n"));
            pending = 0;
        }
        let (d, present_ns) = (ts - prev, ts - t.origin);
        add.push_str(&format!(
            "{},{present_ns},{}.{:06}{extra}\n",
            i - 1,
            d / 1_000_000,
            d % 1_000_000
        ));
        rows += 1;
        prev = ts;
    }
    let note = format!(
        "{RECOVERED_PREFIX}{rows} frames from the present tail after process {} ended \
         (timing only: counters 0, other columns empty)\n",
        t.pid
    );
    let mut f = fs::OpenOptions::new()
        .write(true)
        .open(csv_path)
        .and_then(|f| {
            f.set_len(text.len() as u64)?;
            Ok(f)
        })
        .map_err(|source| LogError::Write {
            path: csv_path.clone(),
            source,
        })?;
    use std::io::Seek;
    f.seek(std::io::SeekFrom::End(0))
        .and_then(|_| f.write_all(note.as_bytes()))
        .and_then(|_| f.write_all(add.as_bytes()))
        .map_err(|source| LogError::Write {
            path: csv_path.clone(),
            source,
        })?;
    text.push_str(&note);
    text.push_str(&add);
    rewrite_summary(t, csv_path, &text, &head, rows, lost)?;
    Ok(Some(Recovered {
        csv: csv_path.clone(),
        rows,
        lost,
    }))
}

/// The summary over every row of the recovered `text`: the old summary's
/// keys stay (pid, counters' keys as of its last write …) and the numbers
/// are made anew.
fn rewrite_summary(
    t: &TailFile,
    csv_path: &Path,
    text: &str,
    head: &Header,
    rows: u64,
    lost: u64,
) -> Result<(), LogError> {
    let old: serde_json::Value = fs::read_to_string(summary_path_for(csv_path))
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_else(|| serde_json::json!({}));
    let mut extra = match old {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    // Keys each write makes anew.
    for k in [
        "stk_curve",
        "histogram",
        "wall_s",
        "sensors",
        "sensor_causes",
        display::SUMMARY_KEY,
    ] {
        extra.remove(k);
    }
    let opts = Options {
        stutter_threshold: extra
            .get("stutter_threshold")
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(Options::default().stutter_threshold),
        target_fps: head.target_fps.unwrap_or(Options::default().target_fps),
    };
    let (durations, ring_lost, events) = durations(text);
    let last_ns: u64 = durations.iter().sum();
    extra.insert("recovered_frames".into(), rows.into());
    extra.insert("ring_overflows".into(), (ring_lost + lost).into());
    extra.insert(
        "ring_overflow_events".into(),
        (events + u64::from(lost > 0)).into(),
    );
    // The session lasted until its last present, as far as anyone knows.
    extra.insert("wall_s".into(), (last_ns as f64 / 1e9).into());
    extra.insert("pid".into(), t.pid.into());
    if let Some(answers) = display_answers(text, &head.columns, i128::from(t.origin)) {
        if let serde_json::Value::Object(keys) = display::summary_keys(&durations, &answers, &opts)
        {
            extra.extend(keys);
        }
    }
    let mut extra = serde_json::Value::Object(extra);
    let (summary, stk) = crate::whole_session(&durations, None, &opts, &mut extra);
    let target = SummaryTarget::reopened(
        csv_path.to_path_buf(),
        head.exe.clone(),
        head.api,
        head.start.clone(),
        (ring_lost + lost, events),
    );
    write_summary(&target, summary.as_ref(), &stk, extra, Progress::Running).map(|_| ())
}

/// What recovery needs of a log's header and rows.
struct Header {
    exe: String,
    api: Api,
    /// The `# target_fps:` line's target, if the log has one.
    target_fps: Option<u32>,
    /// Local ISO 8601 and Unix seconds of the start.
    start: (String, f64),
    columns: Vec<String>,
    /// `(frame, present_ns)` of the last row.
    last_row: Option<(u64, u64)>,
}

impl Header {
    fn read(text: &str) -> Option<Header> {
        let mut h = Header {
            exe: String::new(),
            api: Api::default(),
            target_fps: None,
            start: (String::new(), 0.0),
            columns: Vec::new(),
            last_row: None,
        };
        for line in text.lines() {
            if let Some(exe) = line.strip_prefix(EXE_PREFIX) {
                h.exe = exe.to_string();
            } else if let Some(api) = line.strip_prefix(API_PREFIX) {
                h.api = Api::from_name(api).unwrap_or_default();
            } else if let Some(f) = line.strip_prefix(TARGET_FPS_PREFIX) {
                h.target_fps = parse_target_fps(f);
            } else if let Some(start) = line.strip_prefix("# start: ") {
                // "2026-11-22T07:10:02+01:00 (unix 1795327802.123)"
                let (iso, unix) = start.split_once(" (unix ").unwrap_or((start, ""));
                let unix = unix.trim_end_matches(')').parse().unwrap_or(0.0);
                h.start = (iso.to_string(), unix);
            } else if line.starts_with('#') || line.is_empty() {
            } else if h.columns.is_empty() {
                h.columns = line.split(',').map(str::to_string).collect();
            } else {
                let mut f = line.split(',');
                let frame = f.next().and_then(|v| v.parse().ok());
                let present = f.next().and_then(|v| v.parse().ok());
                if let (Some(frame), Some(present)) = (frame, present) {
                    h.last_row = Some((frame, present));
                }
            }
        }
        (h.columns.first().map(String::as_str) == Some(columns::FRAME[0].name)).then_some(h)
    }
}

/// The cells a recovered row has after its frame columns: 0 for a
/// counter (as a lost counter entry is written), empty for the rest.
fn extra_cells(columns: &[String]) -> String {
    columns
        .iter()
        .skip(columns::FRAME.len())
        .map(|c| match columns::kind_of(c) {
            None | Some(Kind::Counter) => ",0",
            Some(_) => ",",
        })
        .collect()
}

/// Every row's duration (`frametime_ms`, the third column), and the ring
/// overflows the log records (timestamps, lines).
fn durations(text: &str) -> (Vec<u64>, u64, u64) {
    let (mut out, mut lost, mut events) = (Vec::new(), 0, 0);
    let mut header = false;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix(OVERFLOW_PREFIX) {
            lost += n
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
            events += 1;
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if !header {
            header = true;
            continue;
        }
        if let Some(ns) = line.split(',').nth(2).and_then(ms_to_ns) {
            out.push(ns);
        }
    }
    (out, lost, events)
}

/// The display answers of the rows [`durations`] reads, for a log with the
/// display columns (`None` without): a row whose cells do not read (or
/// the recovered rows, whose cells are empty) has none.
fn display_answers(text: &str, columns: &[String], origin_ns: i128) -> Option<Answers> {
    let at = columns::DISPLAY.map(|c| columns.iter().position(|n| n == c.name));
    let [Some(a), Some(b), Some(c), Some(d)] = at else {
        return None;
    };
    let mut answers = Answers::default();
    let mut header = false;
    for line in text.lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if !header {
            header = true;
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        if f.get(2).and_then(|ms| ms_to_ns(ms)).is_none() {
            continue;
        }
        let cells = [a, b, c, d].map(|k| f.get(k).copied().unwrap_or(""));
        if answers.push_cells(cells, origin_ns).is_err() {
            answers.push_read(Shown::Unknown, NO_VALUE);
        }
    }
    Some(answers)
}

/// `"16.666667"` (six decimals, as the log writes) → 16_666_667 ns.
fn ms_to_ns(ms: &str) -> Option<u64> {
    let (int, frac) = ms.split_once('.').unwrap_or((ms, ""));
    if frac.len() > 6 {
        return None;
    }
    let scaled: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    let frac_ns = scaled * 10u64.pow(6 - frac.len() as u32);
    int.parse::<u64>()
        .ok()?
        .checked_mul(1_000_000)?
        .checked_add(frac_ns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Layout, SessionLog};
    use std::time::SystemTime;
    use steadyhud_sys::tail::Tail;

    /// These tests spawn processes (`dead_pid`) and hold tails, whose
    /// `flock` a child forked meanwhile holds too until it execs: one test
    /// at a time, so no test's fork holds another's tail when it is
    /// recovered (a fresh CI run under load saw exactly that).
    fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
        static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
        ONE.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A pid no process has any more.
    fn dead_pid() -> u32 {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        pid
    }

    /// A session of `n` presents 10 ms apart (the last one 30 ms) whose
    /// writer flushed `flushed` rows and was killed mid-row; its tail.
    fn killed_session(dir: &Path, n: u64, flushed: u64, counter: bool) -> (PathBuf, PathBuf) {
        let origin = 5_000_000_000u64;
        let ts = |i: u64| origin + i * 10_000_000 + if i + 1 == n { 20_000_000 } else { 0 };
        let cols = [("submits".to_string(), steadyhud_counters::Unit::Count)];
        let layout = Layout {
            pid: Some(dead_pid()),
            columns: if counter { &cols } else { &[] },
            text_columns: &["gpu_throttle"],
            ..Layout::default()
        };
        let mut log = SessionLog::create(dir, "game", SystemTime::now(), &layout).unwrap();
        let pid = dead_pid();
        let csv = log.path().to_path_buf();
        let tail_path = dir.join("tails").join(tail::file_name(pid, "game"));
        let tail = Tail::create(&tail_path, &csv, pid, origin).unwrap();
        tail.fill(0, ts(0));
        tail.set_count(1);
        for i in 1..n {
            tail.put(i, ts(i));
            if i <= flushed {
                log.write_frame_text(i - 1, ts(i) - origin, ts(i) - ts(i - 1), &[3], ",")
                    .unwrap();
            }
        }
        log.flush().unwrap();
        write_summary(
            &log.summary_target(),
            steadyhud_metrics::summarize(&[10_000_000; 5], &Options::default()).as_ref(),
            &[],
            serde_json::json!({"stutter_threshold": 0.2, "pid": pid}),
            Progress::Running,
        )
        .unwrap();
        drop(log);
        // The kill cut a row in half.
        let mut f = fs::OpenOptions::new().append(true).open(&csv).unwrap();
        f.write_all(b"12,13").unwrap();
        (csv, tail_path)
    }

    #[test]
    fn a_killed_session_gets_every_frame_and_a_summary_of_them_all() {
        let _one = one_at_a_time();
        let dir = tempfile::tempdir().unwrap();
        let (csv, tail_path) = killed_session(dir.path(), 40, 12, true);
        let got = recover_dead_in(&dir.path().join("tails"));
        assert_eq!(got.len(), 1, "{got:?}");
        let r = got.into_iter().next().unwrap().unwrap();
        assert_eq!((r.rows, r.lost), (39 - 12, 0));
        assert!(!tail_path.exists());
        let text = fs::read_to_string(&csv).unwrap();
        assert!(
            !text.contains("12,13\n") && !text.contains(END_LINE),
            "{text}"
        );
        assert!(
            text.contains(&format!("{RECOVERED_PREFIX}27 frames")),
            "{text}"
        );
        // Counters 0, the reading empty; the last frame is the long one.
        assert!(text.contains("\n12,130000000,10.000000,0,\n"), "{text}");
        assert!(text.ends_with("\n38,410000000,30.000000,0,\n"), "{text}");
        let (d, _, _) = durations(&text);
        assert_eq!(d.len(), 39);
        let s: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(summary_path_for(&csv)).unwrap()).unwrap();
        assert_eq!(s["frames"], 39, "{s}");
        assert_eq!(s["frames_so_far"], 39, "{s}");
        assert_eq!(s["complete"], false, "{s}");
        assert_eq!(s["recovered_frames"], 27, "{s}");
        assert_eq!(s["exe"], "game", "{s}");
        assert!((s["wall_s"].as_f64().unwrap() - 0.41).abs() < 1e-9, "{s}");
        // A second look finds nothing to do.
        assert!(recover_dead_in(&dir.path().join("tails")).is_empty());
    }

    /// A killed session with display columns: the summary's `display` key
    /// is made anew over every row, the recovered ones unknown (their
    /// cells are empty: nothing is invented).
    #[test]
    fn a_recovered_logs_display_key_covers_every_row() {
        let _one = one_at_a_time();
        use crate::display::Source;
        let dir = tempfile::tempdir().unwrap();
        let origin = 5_000_000_000u64;
        let ts = |i: u64| origin + i * 10_000_000;
        let names = columns::DISPLAY.map(|c| c.name);
        let layout = Layout {
            pid: Some(dead_pid()),
            origin_ns: Some(origin),
            text_columns: &names,
            ..Layout::default()
        };
        let mut log = SessionLog::create(dir.path(), "game", SystemTime::now(), &layout).unwrap();
        let pid = dead_pid();
        let csv = log.path().to_path_buf();
        let tail_path = dir.path().join("tails").join(tail::file_name(pid, "game"));
        let tail = Tail::create(&tail_path, &csv, pid, origin).unwrap();
        tail.fill(0, ts(0));
        tail.set_count(1);
        // 20 frames; the first 8 rows written, shown 15 ms after their
        // present except row 3, dropped.
        for i in 1..21 {
            tail.put(i, ts(i));
            if i <= 8 {
                let shown = if i == 4 {
                    Shown::Dropped {
                        source: Source::Wayland,
                    }
                } else {
                    Shown::At {
                        source: Source::Wayland,
                        displayed_ns: ts(i) + 15_000_000,
                        refresh_ns: 0,
                    }
                };
                let mut cells = String::new();
                shown.write_cells(origin, ts(i), &mut cells);
                log.write_frame_text(i - 1, ts(i) - origin, 10_000_000, &[], &cells)
                    .unwrap();
            }
        }
        log.flush().unwrap();
        // The last periodic summary had 5 rows' display block.
        write_summary(
            &log.summary_target(),
            None,
            &[],
            serde_json::json!({"display": {"presented_frames": 5}}),
            Progress::Running,
        )
        .unwrap();
        drop(log);
        // The writer is gone: its lock on the tail with it.
        drop(tail);
        let r = recover_dead_in(&dir.path().join("tails"))
            .pop()
            .unwrap()
            .unwrap();
        assert_eq!(r.rows, 12);
        let s: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(summary_path_for(&csv)).unwrap()).unwrap();
        let d = &s["display"];
        assert_eq!(d["presented_frames"], 20, "{d}");
        assert_eq!(d["dropped_frames"], 1, "{d}");
        assert_eq!(d["unknown_frames"], 12, "{d}");
        assert_eq!(d["displayed_frames"], 7, "{d}");
        assert_eq!(d["sources"], serde_json::json!({"wayland": 8}));
        // Intervals among rows 0–7: 10 ms each, 20 across the dropped row
        // 3; the last shown row 7 has none: 10, 10, 20, 10, 10, 10.
        assert_eq!(d["frames"], 6, "{d}");
        assert!(
            (d["duration_s"].as_f64().unwrap() - 0.07).abs() < 1e-12,
            "{d}"
        );
        assert_eq!(d["latency"]["present_to_display"]["mean_ms"], 15.0, "{d}");
    }

    #[test]
    fn frames_older_than_the_tail_are_counted_as_lost() {
        let _one = one_at_a_time();
        let dir = tempfile::tempdir().unwrap();
        let n = tail::SLOTS as u64 + 100;
        let (csv, _) = killed_session(dir.path(), n, 10, false);
        let r = recover_dead_in(&dir.path().join("tails"))
            .pop()
            .unwrap()
            .unwrap();
        // Timestamps 11..100 were overwritten.
        assert_eq!(r.lost, 89);
        assert_eq!(r.rows, n - 1 - 10 - 89);
        let text = fs::read_to_string(&csv).unwrap();
        assert!(
            text.contains("# ring overflow: 89 timestamps lost\n99,1000000000,900.000000,\n"),
            "{}",
            &text[..2000]
        );
    }

    #[test]
    fn a_clean_log_or_a_live_writer_is_left_alone() {
        let _one = one_at_a_time();
        let dir = tempfile::tempdir().unwrap();
        let (csv, tail_path) = killed_session(dir.path(), 20, 19, false);
        let mut text = fs::read_to_string(&csv).unwrap();
        text.truncate(text.rfind('\n').unwrap() + 1);
        text.push_str(END_LINE);
        text.push('\n');
        fs::write(&csv, &text).unwrap();
        assert!(recover_dead_in(&dir.path().join("tails")).is_empty());
        assert!(!tail_path.exists());
        assert_eq!(fs::read_to_string(&csv).unwrap(), text);
        // Our own tail (a live process) is not touched.
        let mine = dir
            .path()
            .join("tails")
            .join(tail::file_name(std::process::id(), "x"));
        let t = Tail::create(&mine, &csv, std::process::id(), 1).unwrap();
        assert!(recover_dead_in(&dir.path().join("tails")).is_empty());
        assert!(mine.exists());
        drop(t);
    }

    #[test]
    fn durations_read_back_exactly() {
        let _one = one_at_a_time();
        assert_eq!(ms_to_ns("16.666667"), Some(16_666_667));
        assert_eq!(ms_to_ns("7"), Some(7_000_000));
        assert_eq!(ms_to_ns("0.5"), Some(500_000));
        assert_eq!(ms_to_ns("1.1234567"), None);
    }
}
