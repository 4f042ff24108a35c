//! The analysis thread's handle on one stream's session log
//! ([`steadyhud_log::SessionLog`]): opened lazily at the stream's first
//! present, never fatal. An unwritable folder or a write error prints one
//! `steadyhud:` line and the game keeps running without (the rest of) a log.

use super::stutter_lists::StutterLists;
use crate::guard;
use std::path::PathBuf;
use std::time::SystemTime;
use steadyhud_log::{default_log_dir, Layout, SessionLog, SummaryTarget};
use steadyhud_metrics::{StkPoint, Summary};

/// Session log of one stream.
pub enum Log {
    /// Logging off (config `log=false`), or given up after an error.
    Disabled,
    /// Not opened yet; `None` = the default folder.
    Pending(Option<PathBuf>),
    Open(SessionLog),
}

impl Log {
    pub fn disabled() -> Log {
        Log::Disabled
    }

    pub fn pending(dir: Option<PathBuf>) -> Log {
        Log::Pending(dir)
    }

    /// Opens the log of the `ordinal`-th window of this session (1 = plain
    /// `<name>`, later windows `<name>-<n>`; `name` is the game name, see
    /// [`steadyhud_config::game_name`]) with the columns and comment lines
    /// `layout` adds; the CSV's header names the process (`# exe:` and
    /// `# pid:` lines).
    pub fn open(&mut self, name: &str, ordinal: u64, start: SystemTime, layout: Layout) {
        let Log::Pending(dir) = self else { return };
        let Some(dir) = dir.take().or_else(default_log_dir) else {
            guard::say(format_args!("steadyhud: no log folder (HOME unset and no STEADYHUD_LOG_DIR); this session is not logged"));
            *self = Log::Disabled;
            return;
        };
        let exe = match ordinal {
            0 | 1 => name.to_string(),
            n => format!("{name}-{n}"),
        };
        let layout = Layout {
            pid: Some(std::process::id()),
            ..layout
        };
        *self = match SessionLog::create(&dir, &exe, start, &layout) {
            Ok(l) => Log::Open(l),
            Err(e) => {
                guard::say(format_args!(
                    "steadyhud: session log disabled: {e}; the game keeps running"
                ));
                Log::Disabled
            }
        };
    }

    fn check(&mut self, r: Result<(), steadyhud_log::LogError>) {
        if let Err(e) = r {
            // SessionLog ignores further writes after the first failure.
            guard::say(format_args!(
                "steadyhud: {e}; the rest of this session is not logged"
            ));
        }
    }

    /// A row with the extra columns' values and the text columns' cells
    /// (each after a comma).
    pub fn write_row(
        &mut self,
        index: u64,
        present_ns: u64,
        frame_ns: u64,
        extra: &[u64],
        cells: &str,
    ) {
        if let Log::Open(l) = self {
            let r = l.write_frame_text(index, present_ns, frame_ns, extra, cells);
            self.check(r);
        }
    }

    pub fn note_overflow(&mut self, n: u64) {
        if let Log::Open(l) = self {
            let r = l.note_overflow(n);
            self.check(r);
        }
    }

    pub fn note_counter_overflow(&mut self, n: u64) {
        if let Log::Open(l) = self {
            let r = l.note_counter_overflow(n);
            self.check(r);
        }
    }

    pub fn note_latency(&mut self, text: &str) {
        if let Log::Open(l) = self {
            let r = l.note_latency(text);
            self.check(r);
        }
    }

    pub fn note_fps_limit(&mut self, fps: u32, frame: u64) {
        if let Log::Open(l) = self {
            let r = l.note_fps_limit(fps, frame);
            self.check(r);
        }
    }

    /// Writes a mark line; false when no log is open.
    pub fn note_mark(&mut self, text: &str, frame: u64) -> bool {
        if let Log::Open(l) = self {
            let r = l.note_mark(text, frame);
            self.check(r);
            return true;
        }
        false
    }

    /// The CSV's path, once the log is open.
    pub fn csv_path(&self) -> Option<&std::path::Path> {
        match self {
            Log::Open(l) => Some(l.path()),
            _ => None,
        }
    }

    pub fn flush(&mut self) {
        if let Log::Open(l) = self {
            let r = l.flush();
            self.check(r);
        }
    }

    /// Flushes the rows so far and returns what a summary write of this
    /// moment needs (`None` unless the log is open): the CSV then holds at
    /// least every frame the summary will count.
    pub fn flushed_summary_target(&mut self) -> Option<SummaryTarget> {
        self.flush();
        match self {
            Log::Open(l) => Some(l.summary_target()),
            _ => None,
        }
    }

    /// Ends the CSV with its `# end: complete` line and writes the final
    /// summary JSON next to it, the per-stutter keys streamed from
    /// `stutters`.
    pub fn finish(
        self,
        summary: Option<&Summary>,
        stk: &[StkPoint],
        extra: serde_json::Value,
        stutters: &StutterLists,
    ) {
        if let Log::Open(l) = self {
            let written = stutters.streamed(|s| l.finish_streamed(summary, stk, extra, s));
            if let Err(e) = written {
                guard::say(format_args!("steadyhud: session summary not written: {e}"));
            }
        }
    }
}
