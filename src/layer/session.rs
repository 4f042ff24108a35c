//! The analysis thread's handle on one stream's session log: opened lazily
//! at the stream's first present, never fatal (an unwritable folder prints
//! one line and the game keeps running without a log).

use crate::metrics::{StkPoint, Summary};
use std::path::PathBuf;
use std::time::SystemTime;

/// Session log of one stream.
pub enum Log {
    /// Logging off (config `log=false`, or after an error).
    Disabled,
    /// Not opened yet; `None` = the default folder.
    Pending(Option<PathBuf>),
}

impl Log {
    pub fn disabled() -> Log {
        Log::Disabled
    }
    pub fn pending(dir: Option<PathBuf>) -> Log {
        Log::Pending(dir)
    }
    // TODO(formats merge): wire to crate::session_log::SessionLog.
    pub fn open(&mut self, _stream: u64, _start: SystemTime) {}
    pub fn write_frame(&mut self, _index: u64, _present_ns: u64, _frame_ns: u64) {}
    pub fn note_overflow(&mut self, _n: u64) {}
    pub fn flush(&mut self) {}
    pub fn finish(self, _summary: Option<&Summary>, _stk: &[StkPoint], _extra: serde_json::Value) {}
}
