//! Frame-time logs → frame durations in integer ns, plus where they came
//! from. One module per format, detection here:
//!
//! - `steadyhud`: steadyhud's own session log ([`steadyhud_log`]).
//! - `presentmon`: PresentMon 1.x/2.x CSV, and CapFrameX/OCAT CSV (PresentMon
//!   columns with `//` metadata lines or system columns).
//! - `mangohud`: MangoHud CSV (frametime in µs or ms, told apart by `fps`).
//! - `plain`: one frame time in ms per line.
//! - `sensors`: which columns of these logs are system readings (CPU, GPU,
//!   memory, power), in [`Meta::sensors`].
//!
//! Every reader streams (a 1M-line log never sits in memory as text) and
//! reports bad input as a [`ParseError`] with file, line and column.

#![forbid(unsafe_code)]

mod csvbody;
mod display;
mod error;
mod frame_log;
mod mangohud;
mod plain;
mod presentmon;
mod read;
mod sensors;
mod steadyhud;
mod text;
mod value;

pub use error::{At, ErrorKind, ParseError, Pos};
pub use frame_log::{Filter, Format, FrameLog, Mark, Meta, ReadOptions};
pub use read::{detect, read, read_bytes, read_path};
