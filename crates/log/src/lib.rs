//! The session log the layer's analysis thread writes: one CSV row per frame,
//! streamed as frames arrive, and a `.summary.json` kept current while the
//! session runs and written a last time when it ends.
//!
//! # Files
//!
//! `<dir>/<exe>_<YYYY-mm-dd_HH-MM-SS>.csv` (local time of the session start;
//! `_2`, `_3`, … appended if the name is taken) and
//! `<same stem>.summary.json`, which is always whole: every write goes to
//! `<same stem>.summary.json.tmp` and is renamed over it.
//!
//! # CSV layout
//!
//! ```text
//! # steadyhud 0.1.0 session log
//! # exe: vkcube
//! # pid: 4242
//! # api: vulkan
//! # target_fps: 60
//! # start: 2026-11-22T07:10:02+01:00 (unix 1795327802.123)
//! # frame: 0-based index of the frame; present_ns: from the session's first present to the present that ends the frame; frametime_ms: duration of the frame
//! frame,present_ns,frametime_ms
//! 0,16666667,16.666667
//! 1,33333334,16.666667
//! # ring overflow: 12 timestamps lost
//! 2,50000001,16.666667
//! ```
//!
//! With statistics counters on (config `counters`, the default in the
//! layer) the header goes on with one column per counter and
//! `cpu_busy_ms`, with GPU timing `gpu_busy_ms` and `gpu_wait_ms`, with
//! system readings (config `sensor_hz`) the readable ones of the readings
//! (the latest sample at the frame's present; a cell is empty when that
//! sample lacks the value; `gpu_throttle` is empty or reasons joined by
//! `|`, like `power|thermal`): every column, its unit and order, is
//! declared in [`columns`] (docs/metrics.md#session-log-columns). `_ms`
//! columns have six decimals, the others are integers. Logs without them
//! are still valid: readers find columns by name.
//! Frames whose counters a full
//! counter ring dropped hold 0s, announced by a
//! `# counter ring overflow: N frames' counters lost (written as 0)` line.
//!
//! Lines starting with `#` are comments and may appear anywhere (a ring
//! overflow is recorded where it happened, never silently). Two of them
//! carry the frame they apply from, because GPU timing may hold rows back
//! a frame or two, so the line can come before rows of earlier frames:
//! `# fps_limit: 60 at frame 1234` (a frame cap change) and
//! `# mark: TEXT at frame 1234` (`steadyhud ctl mark`: the segment `TEXT`
//! starts at that frame; `analyze --segments` splits there). `frametime_ms`
//! has six decimals, so it is the exact duration in ns. Every row ends with
//! `\n`: a last line without one was cut off (the game was killed mid-write)
//! and readers ignore it. Readers find columns by header name, so columns
//! can be appended later.
//!
//! A session that ended cleanly ([`SessionLog::finish`]) ends with the line
//! [`END_LINE`] (`# end: complete`); a log without it stops where the
//! writer's last flush did (the game was killed, called `_exit`, crashed,
//! or is still running).
//!
//! # Summary JSON
//!
//! The keys of docs/metrics.md#the-json-keys (`frames` … `osc`) plus `stk_curve`
//! (`[{fps, slow, excess}]`), `ring_overflows` (timestamps lost),
//! `ring_overflow_events`, `exe`, `start` (local ISO 8601), `start_unix_s`,
//! `wall_s` (session start to this write), `log` (the CSV's file name),
//! `tool`, `complete` (`true` only in the write at a clean end),
//! `frames_so_far` (the frames this write covers: the CSV's first
//! `frames_so_far` rows), and any extra keys the caller passes.

#![forbid(unsafe_code)]

pub mod columns;
pub mod display;
mod error;
mod numbers;
pub mod recover;
mod session_log;
mod summary;

pub use error::LogError;
pub use numbers::{running_session, whole_session, RunningSession};
pub use session_log::{
    default_log_dir, parse_target_fps, Api, Layout, SessionLog, API_PREFIX,
    COUNTER_OVERFLOW_PREFIX, END_LINE, EXE_PREFIX, FPS_LIMIT_PREFIX, LATENCY_PREFIX, MAGIC,
    MARK_PREFIX, ORIGIN_PREFIX, OVERFLOW_PREFIX, PID_PREFIX, TARGET_FPS_PREFIX,
};
pub use summary::{
    summary_path_for, write_summary, write_summary_streamed, Progress, SessionExtra, Streamed,
    SummaryTarget,
};
