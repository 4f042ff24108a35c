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
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use steadyhud_metrics::display::NO_VALUE;
use steadyhud_metrics::{Options, WINDOW};
use steadyhud_sys::tail::{self, TailFile};

/// Start of the comment line before the rows a recovery added.
pub const RECOVERED_PREFIX: &str = "# recovered: ";

/// The extension a claimed tail is kept under when the summary over its
/// log is left to the CLI ([`Within::Game`]).
pub const PENDING_EXT: &str = "pending";

/// The most frames whose summary a game rewrites for a killed session
/// (its working memory, ~50 bytes a frame, stays under ~8 MB; 5.5 min at
/// 300 fps); a longer log's summary is left to the next CLI command.
pub const GAME_SUMMARY_FRAMES: u64 = 150_000;

/// The bytes of a log's head read for its header lines, and the longest
/// line read backwards for its last row.
const HEAD_MAX: u64 = 64 * 1024;
const LINE_MAX: usize = 64 * 1024;

/// Where a recovery runs, which decides what it may cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Within {
    /// Inside someone's game (the layer or GL library at its start):
    /// memory bounded whatever the log's length. The rows are added (the
    /// head and the end of the log are read, never the whole); the summary
    /// only of a log up to [`GAME_SUMMARY_FRAMES`], else the claimed tail
    /// is kept as `<name>.pending` for the CLI.
    Game,
    /// A CLI command: also the summaries games left pending.
    Cli,
}

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
    /// The summary is not rewritten yet: left to the next CLI command.
    pub summary_left: bool,
}

impl std::fmt::Display for Recovered {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        if self.rows == 0 && self.lost == 0 {
            return write!(
                f,
                "summary of a killed session rewritten over every row of {}",
                self.csv.display()
            );
        }
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

/// Recovers every tail in [`tail::folder`] whose process has ended and
/// whose log is in one of `logs` (our log folders); each result is a
/// recovery or the reason one failed. Cheap when there is none: one read
/// of a folder in memory.
pub fn recover_dead(logs: &[PathBuf], within: Within) -> Vec<Result<Recovered, LogError>> {
    recover_dead_in(&tail::folder(), logs, within)
}

/// [`recover_dead`] of the tails in `dir`. A folder that is not ours alone
/// ([`steadyhud_sys::private_dir`]) is not read: one error says so (in a
/// game nothing: its own tail's line says it).
pub fn recover_dead_in(
    dir: &Path,
    logs: &[PathBuf],
    within: Within,
) -> Vec<Result<Recovered, LogError>> {
    match steadyhud_sys::private_dir::check_existing(dir) {
        Ok(true) => {}
        Ok(false) => return Vec::new(),
        // A game's tail says it once (its tails are off); the CLI says it.
        Err(_) if within == Within::Game => return Vec::new(),
        Err(e) => {
            return vec![Err(LogError::Recover {
                path: dir.to_path_buf(),
                why: format!("{e}; its tails are left alone"),
            })]
        }
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    tail::sweep_unfinished(dir);
    let logs: Vec<PathBuf> = logs.iter().filter_map(|d| d.canonicalize().ok()).collect();
    let mut out = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let pending = if name.ends_with(".tail") {
            false
        } else if within == Within::Cli && name.ends_with(&format!(".{PENDING_EXT}")) {
            true
        } else {
            continue;
        };
        if let Some(r) = recover_one(&e.path(), &logs, within, pending).transpose() {
            out.push(r);
        }
    }
    out
}

/// Recovers the log of the tail at `path` if its writer has ended (its
/// lock is free: [`tail::claim`]) and its log is in `logs`, and removes the
/// tail. `None`: nothing to do (the writer lives, another reader took it,
/// the log is elsewhere, ended cleanly or is gone).
pub fn recover(
    path: &Path,
    logs: &[PathBuf],
    within: Within,
) -> Result<Option<Recovered>, LogError> {
    let logs: Vec<PathBuf> = logs.iter().filter_map(|d| d.canonicalize().ok()).collect();
    recover_one(path, &logs, within, false)
}

/// [`recover`], `logs` canonical; `pending`: a tail a game kept for its
/// summary, whose rows are already in the log.
fn recover_one(
    path: &Path,
    logs: &[PathBuf],
    within: Within,
    pending: bool,
) -> Result<Option<Recovered>, LogError> {
    let err = |source| LogError::Read {
        path: path.to_path_buf(),
        source,
    };
    // Recovered, or never to be: either way the claim removes the tail
    // when it goes. A log that could not be rewritten stays as it was.
    let Some((claim, t)) = tail::claim_if(path, |t| in_folders(&t.csv, logs)).map_err(err)? else {
        return Ok(None);
    };
    let Some(csv) = open_own(&t.csv, true)? else {
        return Ok(None);
    };
    if pending {
        rewrite_summary(&t, &csv)?;
        return Ok(Some(Recovered {
            csv: t.csv.clone(),
            rows: 0,
            lost: 0,
            summary_left: false,
        }));
    }
    let Some((rows, lost, frames)) = add_rows(&t, &csv)? else {
        return Ok(None);
    };
    let summary_left = within == Within::Game && frames > GAME_SUMMARY_FRAMES;
    if summary_left {
        claim
            .keep_as(path, PENDING_EXT)
            .map_err(|source| LogError::Write {
                path: path.to_path_buf(),
                source,
            })?;
    } else {
        rewrite_summary(&t, &csv)?;
    }
    Ok(Some(Recovered {
        csv: t.csv.clone(),
        rows,
        lost,
        summary_left,
    }))
}

/// Whether `csv` (a path a tail names) is a `.csv` file right in one of
/// the folders `logs` (canonical): a tail is trusted with no other file.
fn in_folders(csv: &Path, logs: &[PathBuf]) -> bool {
    if !csv.is_absolute() || csv.extension().is_none_or(|e| e != "csv") {
        return false;
    }
    let (Some(parent), Some(_)) = (csv.parent(), csv.file_name()) else {
        return false;
    };
    parent.canonicalize().is_ok_and(|p| logs.contains(&p))
}

/// Opens a file of the log folder (for writing too when `write`), never
/// through a symbolic link and without waiting (a FIFO answers at once),
/// and only a regular file of ours. `None` when it is gone.
fn open_own(path: &Path, write: bool) -> Result<Option<fs::File>, LogError> {
    steadyhud_sys::private_dir::open_own(path, write, None).map_err(|source| {
        if source.kind() == std::io::ErrorKind::InvalidData {
            LogError::Recover {
                path: path.to_path_buf(),
                why: source.to_string(),
            }
        } else {
            LogError::Read {
                path: path.to_path_buf(),
                source,
            }
        }
    })
}

/// Adds the rows after the log's last flushed one from the tail: reads
/// the log's head (its header lines) and its end (back to the last whole
/// row), drops a row the kill cut in half, and appends the note and at
/// most [`tail::SLOTS`] rows. `None` when the log ended cleanly. Returns
/// (rows added, timestamps lost, frames the log now holds).
fn add_rows(t: &TailFile, f: &fs::File) -> Result<Option<(u64, u64, u64)>, LogError> {
    let csv_path = &t.csv;
    let read_err = |source| LogError::Read {
        path: csv_path.clone(),
        source,
    };
    let why = |why: &str| LogError::Recover {
        path: csv_path.clone(),
        why: why.to_string(),
    };
    let len = f.metadata().map_err(read_err)?.len();
    let (head, head_end) = Header::read_head(f, len).map_err(read_err)?;
    let head = head.ok_or_else(|| why("no CSV header"))?;
    let back = scan_back(f, len, head_end).map_err(read_err)?;
    if back.ended {
        return Ok(None);
    }
    // Rows up to frame `last` are in the CSV: timestamps 0..=last+1.
    let (covered, mut prev) = match back.last_row {
        Some((frame, present_ns)) => (frame + 1, t.origin.saturating_add(present_ns)),
        None => (0, t.origin),
    };
    // The tail holds at most its slots' worth: whatever its count says,
    // the loop runs over those only (a count of u64::MAX is a forgery or
    // an old tail, never a reason to spin).
    let first = (covered + 1).max(t.count.saturating_sub(t.slots()));
    let mut lost = first
        .saturating_sub(covered + 1)
        .min(t.count.saturating_sub(covered + 1));
    let mut pending = lost;
    let mut add = Vec::with_capacity(64 * 1024);
    let mut rows = 0u64;
    let extra = extra_cells(&head.columns);
    let note = |rows: u64| {
        format!(
            "{RECOVERED_PREFIX}{rows} frames from the present tail after process {} ended \
             (timing only: counters 0, other columns empty)\n",
            t.pid
        )
    };
    // The rows are written after the note, whose count is known once they
    // are made: made first into a buffer of at most SLOTS rows (~1 MB).
    for i in first..t.count {
        let Some(ts) = t.timestamp(i).filter(|&ts| ts > prev) else {
            lost += 1;
            pending += 1;
            continue;
        };
        if pending > 0 {
            // As the layer records its own ring's losses: the next row's
            // duration spans them.
            let _ = writeln!(add, "{OVERFLOW_PREFIX}{pending} timestamps lost");
            pending = 0;
        }
        let (d, present_ns) = (ts - prev, ts - t.origin);
        let _ = writeln!(
            add,
            "{},{present_ns},{}.{:06}{extra}",
            i - 1,
            d / 1_000_000,
            d % 1_000_000
        );
        rows += 1;
        prev = ts;
    }
    let werr = |source| LogError::Write {
        path: csv_path.clone(),
        source,
    };
    let mut w = f;
    f.set_len(back.cut).map_err(werr)?;
    w.seek(SeekFrom::Start(back.cut)).map_err(werr)?;
    w.write_all(note(rows).as_bytes()).map_err(werr)?;
    w.write_all(&add).map_err(werr)?;
    Ok(Some((rows, lost, covered + rows)))
}

/// What the end of a log says, read backwards.
struct Back {
    /// The length to keep: up to the last newline (a row cut in half goes).
    cut: u64,
    /// `(frame, present_ns)` of the last row, if any.
    last_row: Option<(u64, u64)>,
    /// The log ended cleanly: [`END_LINE`] after its last row.
    ended: bool,
}

/// Reads `f` (`len` bytes) backwards from its end, in blocks, to its last
/// row, not before `stop` (the end of its header).
fn scan_back(f: &fs::File, len: u64, stop: u64) -> std::io::Result<Back> {
    const BLOCK: u64 = 16 * 1024;
    let mut back = Back {
        cut: len,
        last_row: None,
        ended: false,
    };
    let mut pos = len;
    // Bytes from `pos` up to the first newline not yet handled.
    let mut carry: Vec<u8> = Vec::new();
    let mut found_cut = false;
    while pos > stop {
        let start = pos.saturating_sub(BLOCK).max(stop);
        let mut block = vec![0u8; (pos - start) as usize];
        f.read_exact_at(&mut block, start)?;
        block.extend_from_slice(&carry);
        carry = block;
        pos = start;
        // Whole lines are those after a newline in `carry` (or from the
        // header's end on, which ends a line).
        while let Some(nl) = carry.iter().rposition(|&b| b == b'\n') {
            let line = carry.split_off(nl + 1);
            carry.truncate(nl); // drop the newline itself
            if !found_cut {
                // What follows the last newline is a row cut in half.
                back.cut = pos + nl as u64 + 1;
                found_cut = true;
                continue;
            }
            if let Some(done) = judge(&line, &mut back) {
                return Ok(done);
            }
        }
        if carry.len() > LINE_MAX {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "a line longer than 64 KiB",
            ));
        }
    }
    if !found_cut {
        back.cut = stop;
    } else if !carry.is_empty() {
        // The first line after the header.
        if let Some(done) = judge(&std::mem::take(&mut carry), &mut back) {
            return Ok(done);
        }
    }
    Ok(back)
}

/// One line of a log's end, read backwards: `Some` once the last row is
/// found (or the end line, after it).
fn judge(line: &[u8], back: &mut Back) -> Option<Back> {
    let line = std::str::from_utf8(line).unwrap_or("");
    if line == END_LINE {
        back.ended = true;
        return Some(std::mem::replace(
            back,
            Back {
                cut: 0,
                last_row: None,
                ended: true,
            },
        ));
    }
    if line.starts_with('#') || line.is_empty() {
        return None;
    }
    let mut f = line.split(',');
    let frame = f.next().and_then(|v| v.parse().ok());
    let present = f.next().and_then(|v| v.parse().ok());
    if let (Some(frame), Some(present)) = (frame, present) {
        back.last_row = Some((frame, present));
        return Some(std::mem::replace(
            back,
            Back {
                cut: 0,
                last_row: None,
                ended: false,
            },
        ));
    }
    None
}

/// The summary over every row of the log open as `f`, read line by line
/// (the durations and display answers kept, ~20 bytes a frame): the old
/// summary's keys stay (pid, counters' keys as of its last write …,
/// held as values: its per-stutter lists, a few hundred bytes a stutter)
/// and the numbers are made anew.
fn rewrite_summary(t: &TailFile, f: &fs::File) -> Result<(), LogError> {
    let csv_path = &t.csv;
    let mut r = f;
    r.seek(SeekFrom::Start(0))
        .map_err(|source| LogError::Read {
            path: csv_path.clone(),
            source,
        })?;
    let all = Whole::read(BufReader::with_capacity(64 * 1024, r), i128::from(t.origin)).map_err(
        |source| LogError::Read {
            path: csv_path.clone(),
            source,
        },
    )?;
    let durations = &all.durations;
    let old_path = summary_path_for(csv_path);
    // The old summary's stutter rule, from a scan that keeps nothing else,
    // up to what a summary of every row a stutter could be.
    let rule: OldRule = read_old(&old_path, summary_bound(durations.len(), 0)).unwrap_or_default();
    let head = &all.head;
    let opts = Options {
        stutter_threshold: rule
            .stutter_threshold
            .unwrap_or(Options::default().stutter_threshold),
        target_fps: head.target_fps.unwrap_or(Options::default().target_fps),
    };
    let last_ns: u64 = durations.iter().sum();
    let mut fresh = serde_json::Map::new();
    fresh.insert("recovered_frames".into(), all.recovered.into());
    // The log's own overflow lines, the recovery's among them.
    fresh.insert("ring_overflows".into(), all.ring_lost.into());
    fresh.insert("ring_overflow_events".into(), all.events.into());
    // The session lasted until its last present, as far as anyone knows.
    fresh.insert("wall_s".into(), (last_ns as f64 / 1e9).into());
    fresh.insert("pid".into(), t.pid.into());
    if let Some(answers) = &all.answers {
        if let serde_json::Value::Object(keys) = display::summary_keys(durations, answers, &opts) {
            fresh.extend(keys);
        }
    }
    let mut fresh = serde_json::Value::Object(fresh);
    let (summary, stk) = crate::whole_session(durations, None, &opts, &mut fresh);
    // The old summary's other keys, read as they stream past (those made
    // anew skipped), up to what a summary of these rows can be: the old
    // one covered a prefix of them with the same rule, so it judged at
    // most as many stutters, but for its last frames.
    let stutters = summary.as_ref().map_or(0, |s| s.stutter_count);
    let display_stutters = fresh[display::SUMMARY_KEY]["stutter_count"]
        .as_u64()
        .unwrap_or(0) as usize;
    let bound = summary_bound(stutters + WINDOW, display_stutters + WINDOW);
    let OldKeys(mut extra) = read_old(&old_path, bound).unwrap_or_default();
    if let serde_json::Value::Object(fresh) = fresh {
        extra.extend(fresh);
    }
    let target = SummaryTarget::reopened(
        csv_path.to_path_buf(),
        head.exe.clone(),
        head.api,
        head.start.clone(),
        (all.ring_lost, all.events),
    );
    let extra = serde_json::Value::Object(extra);
    write_summary(&target, summary.as_ref(), &stk, extra, Progress::Running).map(|_| ())
}

/// What an old summary's text may hold besides its per-stutter keys,
/// bytes: the STK curve (at most 2,000 points, ~250 KB), the mergeable
/// histogram (4,153 buckets, ~450 KB), the counters', GPU and readings'
/// blocks, the display block without its stutters (a few KB each), with
/// room to spare.
const SUMMARY_FIXED_MAX: u64 = 4 << 20;
/// What one stutter may add to a summary, bytes: its frame in
/// `stutter_frames`, its counters' cause in `stutter_causes` and
/// `stutter_causes_text` (at most [`steadyhud_counters::MAX_COUNTERS`]
/// counters named, ~300 bytes each with names and labels of 40
/// characters) and its readings' cause in `sensor_causes`: 6.1 KiB
/// (`a_stutters_keys_fit_its_bound`), and as much again to spare.
const SUMMARY_PER_STUTTER_MAX: u64 = 12 << 10;
/// What a stutter of the displayed intervals adds: its place in the
/// display block's `stutter_frames`.
const SUMMARY_PER_DISPLAY_STUTTER_MAX: u64 = 64;

/// The longest summary a session with `stutters` stutters (and
/// `display_stutters` among its display intervals) writes, bytes: the
/// most an old summary is read for. A longer file is not one of ours
/// (issue 51: a file in the log folder is read only as far as ours can
/// go, never whole), and its keys are not kept.
fn summary_bound(stutters: usize, display_stutters: usize) -> u64 {
    SUMMARY_FIXED_MAX
        .saturating_add((stutters as u64).saturating_mul(SUMMARY_PER_STUTTER_MAX))
        .saturating_add((display_stutters as u64).saturating_mul(SUMMARY_PER_DISPLAY_STUTTER_MAX))
}

/// The old summary at `path` (ours: [`open_own`]) as `T`, parsed as it is
/// read from at most `bound` bytes of it; `None` when there is none, or
/// it is not JSON, or longer.
fn read_old<T: serde::de::DeserializeOwned>(path: &Path, bound: u64) -> Option<T> {
    let f = open_own(path, false).ok().flatten()?;
    serde_json::from_reader(BufReader::new(f.take(bound))).ok()
}

/// The old summary's stutter rule (every other key skipped unread).
#[derive(Default, serde::Deserialize)]
struct OldRule {
    stutter_threshold: Option<f64>,
}

/// Keys a rewrite makes anew, skipped as the old summary is read (the
/// summary's own keys, which win over extra keys, are replaced too).
const REMADE: [&str; 7] = [
    "stk_curve",
    "histogram",
    "wall_s",
    "sensors",
    "sensor_causes",
    "stutter_frames",
    display::SUMMARY_KEY,
];

/// The old summary's keys but those of [`REMADE`], which are skipped as
/// they stream past, never held.
#[derive(Default)]
struct OldKeys(serde_json::Map<String, serde_json::Value>);

impl<'de> serde::Deserialize<'de> for OldKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = OldKeys;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a summary object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<OldKeys, A::Error> {
                let mut out = serde_json::Map::new();
                while let Some(k) = m.next_key::<String>()? {
                    if REMADE.contains(&k.as_str()) {
                        m.next_value::<serde::de::IgnoredAny>()?;
                    } else {
                        let v = m.next_value()?;
                        out.insert(k, v);
                    }
                }
                Ok(OldKeys(out))
            }
        }
        d.deserialize_map(Keys)
    }
}

/// What recovery needs of a log's header.
struct Header {
    exe: String,
    api: Api,
    /// The `# target_fps:` line's target, if the log has one.
    target_fps: Option<u32>,
    /// Local ISO 8601 and Unix seconds of the start.
    start: (String, f64),
    columns: Vec<String>,
}

impl Header {
    fn new() -> Header {
        Header {
            exe: String::new(),
            api: Api::default(),
            target_fps: None,
            start: (String::new(), 0.0),
            columns: Vec::new(),
        }
    }

    /// Takes in one line before the rows; true for the column line, which
    /// ends the header.
    fn line(&mut self, line: &str) -> bool {
        if let Some(exe) = line.strip_prefix(EXE_PREFIX) {
            self.exe = exe.to_string();
        } else if let Some(api) = line.strip_prefix(API_PREFIX) {
            self.api = Api::from_name(api).unwrap_or_default();
        } else if let Some(f) = line.strip_prefix(TARGET_FPS_PREFIX) {
            self.target_fps = parse_target_fps(f);
        } else if let Some(start) = line.strip_prefix("# start: ") {
            // "2026-11-22T07:10:02+01:00 (unix 1795327802.123)"
            let (iso, unix) = start.split_once(" (unix ").unwrap_or((start, ""));
            let unix = unix.trim_end_matches(')').parse().unwrap_or(0.0);
            self.start = (iso.to_string(), unix);
        } else if line.starts_with('#') || line.is_empty() {
        } else if self.columns.is_empty() {
            self.columns = line.split(',').map(str::to_string).collect();
            return true;
        }
        false
    }

    fn valid(self) -> Option<Header> {
        (self.columns.first().map(String::as_str) == Some(columns::FRAME[0].name)).then_some(self)
    }

    /// The header of the log open as `f` (`len` bytes): its lines up to the
    /// column line, within its first [`HEAD_MAX`] bytes; and where the rows
    /// start.
    fn read_head(f: &fs::File, len: u64) -> std::io::Result<(Option<Header>, u64)> {
        let mut bytes = vec![0u8; len.min(HEAD_MAX) as usize];
        f.read_exact_at(&mut bytes, 0)?;
        let mut h = Header::new();
        let mut at = 0usize;
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            if line.last() != Some(&b'\n') {
                break;
            }
            at += line.len();
            let text = std::str::from_utf8(&line[..line.len() - 1]).unwrap_or("");
            if h.line(text) {
                return Ok((h.valid(), at as u64));
            }
        }
        Ok((None, at as u64))
    }
}

/// Every row of a log, as its summary needs them, read line by line.
struct Whole {
    head: Header,
    /// Each row's duration (`frametime_ms`, the third column).
    durations: Vec<u64>,
    /// The ring overflows the log records (timestamps, lines).
    ring_lost: u64,
    events: u64,
    /// Rows the log's `# recovered:` lines say a recovery added.
    recovered: u64,
    /// The display answers of the rows, for a log with the display columns.
    answers: Option<Answers>,
}

impl Whole {
    fn read(mut r: impl BufRead, origin_ns: i128) -> std::io::Result<Whole> {
        let mut w = Whole {
            head: Header::new(),
            durations: Vec::new(),
            ring_lost: 0,
            events: 0,
            recovered: 0,
            answers: None,
        };
        let mut at = None;
        let mut header = false;
        let mut buf = Vec::new();
        loop {
            buf.clear();
            if r.read_until(b'\n', &mut buf)? == 0 {
                break;
            }
            if buf.pop() != Some(b'\n') {
                break; // a row cut in half: not a row
            }
            let line = std::str::from_utf8(&buf).unwrap_or("");
            if !header {
                if w.head.line(line) {
                    header = true;
                    let cols = &w.head.columns;
                    let idx = columns::DISPLAY.map(|c| cols.iter().position(|n| n == c.name));
                    if let [Some(a), Some(b), Some(c), Some(d)] = idx {
                        at = Some([a, b, c, d]);
                        w.answers = Some(Answers::default());
                    }
                }
                continue;
            }
            if let Some(n) = line.strip_prefix(OVERFLOW_PREFIX) {
                w.ring_lost = w.ring_lost.saturating_add(first_number(n));
                w.events += 1;
                continue;
            }
            if let Some(n) = line.strip_prefix(RECOVERED_PREFIX) {
                w.recovered = w.recovered.saturating_add(first_number(n));
                continue;
            }
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            let mut cells = line.split(',');
            let Some(ns) = cells.nth(2).and_then(ms_to_ns) else {
                continue;
            };
            w.durations.push(ns);
            if let (Some(at), Some(answers)) = (at, w.answers.as_mut()) {
                let f: Vec<&str> = line.split(',').collect();
                let cells = at.map(|k| f.get(k).copied().unwrap_or(""));
                if answers.push_cells(cells, origin_ns).is_err() {
                    answers.push_read(Shown::Unknown, NO_VALUE);
                }
            }
        }
        w.head = std::mem::replace(&mut w.head, Header::new())
            .valid()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "no CSV header"))?;
        Ok(w)
    }
}

/// The number a comment line starts with (0 when none).
fn first_number(s: &str) -> u64 {
    s.split_whitespace()
        .next()
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0)
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
#[cfg(test)]
fn durations(text: &str) -> (Vec<u64>, u64, u64) {
    let w = Whole::read(text.as_bytes(), 0).expect("a log");
    (w.durations, w.ring_lost, w.events)
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
    use std::os::unix::fs::FileExt;
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
        let step = |i: u64| if i + 1 == n { 30_000_000 } else { 10_000_000 };
        let extra = serde_json::json!({"stutter_threshold": 0.2});
        killed_session_with(dir, n, flushed, counter, step, extra)
    }

    /// [`killed_session`] with present i `step(i)` ns after present i - 1,
    /// and the last summary's extra keys `extra` (with the pid).
    fn killed_session_with(
        dir: &Path,
        n: u64,
        flushed: u64,
        counter: bool,
        step: impl Fn(u64) -> u64,
        mut extra: serde_json::Value,
    ) -> (PathBuf, PathBuf) {
        let origin = 5_000_000_000u64;
        let ts: Vec<u64> = (0..n)
            .scan(origin, |t, i| {
                *t += if i == 0 { 0 } else { step(i) };
                Some(*t)
            })
            .collect();
        let ts = |i: u64| ts[i as usize];
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
        extra["pid"] = pid.into();
        write_summary(
            &log.summary_target(),
            steadyhud_metrics::summarize(&[10_000_000; 5], &Options::default()).as_ref(),
            &[],
            extra,
            Progress::Running,
        )
        .unwrap();
        drop(log);
        // The kill cut a row in half.
        let mut f = fs::OpenOptions::new().append(true).open(&csv).unwrap();
        f.write_all(b"12,13").unwrap();
        (csv, tail_path)
    }

    /// A stutter's counters' cause naming `counters` counters (names and
    /// labels of 40 characters, longer than any of ours), as the summary's
    /// `stutter_causes` holds it, and its text.
    fn cause(frame: u64, counters: usize) -> (serde_json::Value, String) {
        let c = steadyhud_counters::Cause {
            frame,
            excess_ms: 123.456789,
            counters: (0..counters)
                .map(|k| steadyhud_counters::Spike {
                    name: format!("{k:02}_counter_name_of_forty_characters____"),
                    label: format!("{k:02} a counter label of forty characters"),
                    value: 123_456.789,
                    median: 1_234.567_8,
                    unit: "MiB".into(),
                })
                .collect(),
        };
        (serde_json::to_value(&c).unwrap(), c.to_string())
    }

    /// The bound an old summary is read to ([`summary_bound`]) holds what
    /// our writer writes for a stutter at its largest: a cause naming
    /// every counter, its text, and the readings' cause (a clock drop and
    /// a throttle of every reason).
    #[test]
    fn a_stutters_keys_fit_its_bound() {
        use steadyhud_metrics::sensor_causes::{SensorCause, SensorReason};
        let dir = tempfile::tempdir().unwrap();
        let stutters = 500;
        let (causes, texts): (Vec<_>, Vec<_>) = (0..stutters)
            .map(|i| cause(1_000_000_000 + i, steadyhud_counters::MAX_COUNTERS))
            .unzip();
        let sensor: Vec<serde_json::Value> = (0..stutters)
            .map(|i| {
                let c = SensorCause {
                    frame: 1_000_000_000 + i as usize,
                    reasons: vec![
                        SensorReason::ClockDrop {
                            device: "GPU",
                            baseline_mhz: 2_412.5,
                            at_mhz: 1_123.25,
                        },
                        SensorReason::Throttle {
                            device: "GPU",
                            reasons: ["power", "thermal", "current", "reliability", "other"]
                                .map(String::from)
                                .to_vec(),
                        },
                    ],
                };
                serde_json::to_value(c.json()).unwrap()
            })
            .collect();
        let layout = Layout::default();
        let log = SessionLog::create(dir.path(), "game", SystemTime::now(), &layout).unwrap();
        let frames: Vec<u64> = (0..stutters).map(|i| 1_000_000_000 + i).collect();
        let mut summary =
            steadyhud_metrics::summarize(&[10_000_000; 5], &Options::default()).unwrap();
        summary.stutter_frames = frames.iter().map(|&f| f as usize).collect();
        let extra = serde_json::json!({
            "stutter_causes": causes,
            "stutter_causes_text": texts,
            "sensor_causes": sensor,
        });
        let path = write_summary(
            &log.summary_target(),
            Some(&summary),
            &[],
            extra,
            Progress::Running,
        )
        .unwrap();
        let len = fs::metadata(&path).unwrap().len();
        let per_stutter = len / stutters;
        eprintln!("{per_stutter} bytes a stutter at its largest");
        assert!(
            per_stutter * 4 / 3 <= SUMMARY_PER_STUTTER_MAX,
            "{per_stutter} bytes a stutter: the bound {SUMMARY_PER_STUTTER_MAX} leaves less than a quarter spare"
        );
        assert!(len <= summary_bound(stutters as usize, 0));
    }

    /// A summary over 1 MiB (3,500 stutters, each with a cause naming two
    /// counters: 2 MB, as a long session at load writes) keeps every key
    /// through a recovery: it is read up to what a summary of the log's
    /// stutters can be, not cut at a fixed size. Beyond that bound a file
    /// is not one of ours, and none of its keys is kept.
    #[test]
    fn a_two_megabyte_summary_keeps_its_keys() {
        let _one = one_at_a_time();
        let dir = tempfile::tempdir().unwrap();
        // Every 20th frame 40 ms among 10 ms ones: 3,500 stutters.
        let n = 70_010;
        let step = |i: u64| if i % 20 == 10 { 40_000_000 } else { 10_000_000 };
        let (causes, texts): (Vec<_>, Vec<_>) = (0..3_500).map(|i| cause(i * 20 + 9, 2)).unzip();
        let extra = serde_json::json!({
            "stutter_threshold": 0.2,
            "stutter_causes": causes,
            "stutter_causes_text": texts,
            "summary_upkeep": {"writes": 7},
        });
        let (csv, _) = killed_session_with(dir.path(), n, n - 5, true, step, extra);
        let summary = summary_path_for(&csv);
        let len = fs::metadata(&summary).unwrap().len();
        assert!(len > 2_000_000, "{len} bytes");
        let r = recover_in(dir.path()).pop().unwrap().unwrap();
        assert_eq!(r.rows, 4);
        let s: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&summary).unwrap()).unwrap();
        assert_eq!(s["frames"], n - 1, "{}", s["frames"]);
        assert_eq!(s["stutter_count"], 3_500);
        assert_eq!(s["stutter_causes"], serde_json::to_value(&causes).unwrap());
        assert_eq!(
            s["stutter_causes_text"],
            serde_json::to_value(&texts).unwrap()
        );
        assert_eq!(s["summary_upkeep"]["writes"], 7);

        // The same log with a summary longer than any of ours: read to
        // the bound, not kept.
        let dir = tempfile::tempdir().unwrap();
        let bound = summary_bound(3_500 + WINDOW, WINDOW);
        let extra = serde_json::json!({
            "stutter_threshold": 0.2,
            "padding": "x".repeat(bound as usize),
            "summary_upkeep": {"writes": 7},
        });
        let (csv, _) = killed_session_with(dir.path(), n, n - 5, true, step, extra);
        let r = recover_in(dir.path()).pop().unwrap().unwrap();
        assert_eq!(r.rows, 4);
        let s: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(summary_path_for(&csv)).unwrap()).unwrap();
        assert_eq!(s["frames"], n - 1);
        assert!(s.get("padding").is_none() && s.get("summary_upkeep").is_none());
    }

    #[test]
    fn a_killed_session_gets_every_frame_and_a_summary_of_them_all() {
        let _one = one_at_a_time();
        let dir = tempfile::tempdir().unwrap();
        let (csv, tail_path) = killed_session(dir.path(), 40, 12, true);
        let got = recover_in(dir.path());
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
        assert!(recover_in(dir.path()).is_empty());
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
        let r = recover_in(dir.path()).pop().unwrap().unwrap();
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
        let r = recover_in(dir.path()).pop().unwrap().unwrap();
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
        assert!(recover_in(dir.path()).is_empty());
        assert!(!tail_path.exists());
        assert_eq!(fs::read_to_string(&csv).unwrap(), text);
        // Our own tail (a live process) is not touched.
        let mine = dir
            .path()
            .join("tails")
            .join(tail::file_name(std::process::id(), "x"));
        let t = Tail::create(&mine, &csv, std::process::id(), 1).unwrap();
        assert!(recover_in(dir.path()).is_empty());
        assert!(mine.exists());
        drop(t);
    }

    /// The CLI's recovery of the tails in `dir/tails` for logs in `dir`.
    fn recover_in(dir: &Path) -> Vec<Result<Recovered, LogError>> {
        recover_dead_in(&dir.join("tails"), &[dir.to_path_buf()], Within::Cli)
    }

    /// Recovery of the tails in `dir/tails` for logs in `dir`, on a thread:
    /// `None` when it has not returned after 60 s (it hangs or spins).
    fn recover_or_hang(dir: &Path, within: Within) -> Option<Vec<Result<Recovered, LogError>>> {
        let (tx, rx) = std::sync::mpsc::channel();
        let (tails, logs) = (dir.join("tails"), vec![dir.to_path_buf()]);
        std::thread::spawn(move || {
            let _ = tx.send(recover_dead_in(&tails, &logs, within));
        });
        rx.recv_timeout(std::time::Duration::from_secs(60)).ok()
    }

    /// Another user made the tails' folder first (`/dev/shm/steadyhud-<uid>`
    /// is open to anyone): its tails are not read, ours are not made there.
    #[test]
    fn another_users_tails_folder_is_refused() {
        let _one = one_at_a_time();
        let dir = tempfile::tempdir().unwrap();
        let (csv, tail_path) = killed_session(dir.path(), 40, 12, false);
        let before = fs::read_to_string(&csv).unwrap();
        let tails = dir.path().join("tails");
        // A second uid when we can (tests run as root in CI), else a
        // folder of ours that anyone may write: both are not private.
        use std::os::unix::fs::PermissionsExt;
        if steadyhud_sys::private_dir::euid() == 0 {
            std::os::unix::fs::chown(&tails, Some(65534), Some(65534)).unwrap();
        } else {
            fs::set_permissions(&tails, fs::Permissions::from_mode(0o777)).unwrap();
        }
        let got = recover_dead_in(&tails, &[dir.path().to_path_buf()], Within::Cli);
        assert_eq!(got.len(), 1, "{got:?}");
        let e = got[0].as_ref().unwrap_err().to_string();
        assert!(e.contains("is not private"), "{e}");
        assert!(recover_dead_in(&tails, &[dir.path().to_path_buf()], Within::Game).is_empty());
        assert_eq!(fs::read_to_string(&csv).unwrap(), before);
        assert!(tail_path.exists());
        let e = Tail::create(&tails.join("1-x.tail"), &csv, 1, 1)
            .err()
            .expect("refused");
        assert!(e.to_string().contains("is not private"), "{e}");
    }

    /// A FIFO named like a tail (or a CSV that is a FIFO) would block the
    /// analysis thread for ever, and the game's exit with it.
    #[test]
    fn a_fifo_tail_is_skipped_without_waiting() {
        let _one = one_at_a_time();
        let dir = tempfile::tempdir().unwrap();
        let (csv, _) = killed_session(dir.path(), 40, 12, false);
        let fifo = dir.path().join("tails").join("123-evil.tail");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let got = recover_or_hang(dir.path(), Within::Game).expect("recovery blocked on a FIFO");
        let errs: Vec<String> = got
            .iter()
            .filter_map(|r| r.as_ref().err().map(ToString::to_string))
            .collect();
        assert_eq!(errs.len(), 1, "{got:?}");
        assert!(errs[0].contains("not a regular file"), "{errs:?}");
        // The real tail beside it was recovered; the FIFO is left.
        assert_eq!(got.iter().filter(|r| r.is_ok()).count(), 1, "{got:?}");
        assert!(fifo.exists());
        assert!(fs::read_to_string(&csv).unwrap().contains(RECOVERED_PREFIX));
    }

    /// A tail whose count was forged (`u64::MAX`) passes as a tail; the
    /// recovery still does at most its slots' worth.
    #[test]
    fn a_forged_count_costs_at_most_the_slots() {
        let _one = one_at_a_time();
        let dir = tempfile::tempdir().unwrap();
        let (_, tail_path) = killed_session(dir.path(), 40, 12, false);
        // The writer is gone; whoever can write the file sets the count.
        let f = fs::OpenOptions::new().write(true).open(&tail_path).unwrap();
        f.write_all_at(&u64::MAX.to_ne_bytes(), 4 * 8).unwrap();
        assert_eq!(TailFile::read(&tail_path).unwrap().count, u64::MAX);
        let got = recover_or_hang(dir.path(), Within::Game).expect("recovery spins on the count");
        let r = got.into_iter().next().unwrap().unwrap();
        assert!(r.rows <= tail::SLOTS as u64, "{r:?}");
    }

    /// A tail is trusted with its own log only: a CSV outside our log
    /// folder (or a link in it to one outside) is not cut, appended to
    /// or summarised, and the tail stays for a reader whose folder it is.
    #[test]
    fn a_tail_naming_a_file_outside_the_log_folder_is_left_alone() {
        let _one = one_at_a_time();
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let (csv, tail_path) = killed_session(elsewhere.path(), 40, 12, false);
        // The tail is in our folder; its log is not in our log folder.
        let tails = dir.path().join("tails");
        fs::create_dir(&tails).unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&tails, fs::Permissions::from_mode(0o700)).unwrap();
        let ours = tails.join(tail_path.file_name().unwrap());
        fs::rename(&tail_path, &ours).unwrap();
        let before = fs::read_to_string(&csv).unwrap();
        assert!(recover_dead_in(&tails, &[dir.path().to_path_buf()], Within::Cli).is_empty());
        assert_eq!(fs::read_to_string(&csv).unwrap(), before);
        assert!(ours.exists());
        // A link in our folder to that log: refused too.
        let link = dir.path().join("linked.csv");
        std::os::unix::fs::symlink(&csv, &link).unwrap();
        let t = TailFile::read(&ours).unwrap();
        let pid = dead_pid();
        let forged = tails.join(tail::file_name(pid, "linked"));
        let w = Tail::create(&forged, &link, pid, t.origin).unwrap();
        w.set_count(30);
        drop(w);
        let got = recover_dead_in(&tails, &[dir.path().to_path_buf()], Within::Cli);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].is_err(), "{got:?}");
        assert_eq!(fs::read_to_string(&csv).unwrap(), before);
        // With that folder as ours, it is recovered.
        let got = recover_dead_in(&tails, &[elsewhere.path().to_path_buf()], Within::Cli);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].as_ref().unwrap().rows, 27);
    }

    /// Inside a game, a log longer than [`GAME_SUMMARY_FRAMES`] gets its
    /// rows (the log's end read, never the whole) and its summary is left
    /// to the CLI, which finds the tail kept as `.pending`.
    #[test]
    fn a_long_logs_summary_is_left_to_the_cli() {
        let _one = one_at_a_time();
        let dir = tempfile::tempdir().unwrap();
        let n = GAME_SUMMARY_FRAMES + 100;
        let (csv, tail_path) = killed_session(dir.path(), n, n - 50, false);
        let summary = summary_path_for(&csv);
        let old = fs::read_to_string(&summary).unwrap();
        let got = recover_or_hang(dir.path(), Within::Game).unwrap();
        let r = got.into_iter().next().unwrap().unwrap();
        assert_eq!((r.rows, r.lost, r.summary_left), (49, 0, true));
        assert_eq!(fs::read_to_string(&summary).unwrap(), old);
        let pending = tail_path.with_extension(PENDING_EXT);
        assert!(pending.exists() && !tail_path.exists());
        // The next game leaves it; the CLI makes the summary.
        assert!(recover_or_hang(dir.path(), Within::Game)
            .unwrap()
            .is_empty());
        let got = recover_or_hang(dir.path(), Within::Cli).unwrap();
        let r = got.into_iter().next().unwrap().unwrap();
        assert_eq!((r.rows, r.summary_left), (0, false));
        assert!(r.to_string().contains("summary"), "{r}");
        assert!(!pending.exists());
        let s: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&summary).unwrap()).unwrap();
        assert_eq!(s["frames"], n - 1, "{s}");
        assert_eq!(s["recovered_frames"], 49, "{s}");
        assert_eq!(s["complete"], false, "{s}");
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
