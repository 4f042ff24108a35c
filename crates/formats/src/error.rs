//! The one error type of the frame-log readers: which file, where in it
//! (1-based line and character column) and what was expected there.

use std::fmt;
use std::path::PathBuf;

/// A 1-based position in a text file: line, and character column in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    pub line: u64,
    pub col: u64,
}

impl Pos {
    pub fn new(line: u64, col: u64) -> Pos {
        Pos { line, col }
    }
}

/// Why a frame log could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ErrorKind {
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    #[error("empty file: expected a frame-time log")]
    Empty,
    #[error("binary data (NUL byte): expected a text frame-time log")]
    Nul,
    #[error("invalid UTF-8: expected a text frame-time log")]
    Utf8,
    #[error("line longer than {max} bytes: expected a text frame-time log")]
    LineTooLong { max: u64 },
    #[error("no frame-time column: expected one of {expected}; header has {found}")]
    NoColumn { expected: String, found: String },
    #[error("no {what} header line: expected {expected}")]
    NoHeader {
        what: &'static str,
        expected: String,
    },
    #[error("{column}: expected a frame time in {unit}, found {found:?}")]
    NotNumber {
        column: String,
        unit: &'static str,
        found: String,
    },
    #[error("{column}: expected a frame time > 0, found {found}")]
    NotPositive { column: String, found: String },
    #[error("{column}: expected a finite frame time, found {found}")]
    NotFinite { column: String, found: String },
    #[error("{column}: frame time {found} {unit} is out of range (expected ≥ 1 ns and ≤ 1e18 ns)")]
    OutOfRange {
        column: String,
        unit: &'static str,
        found: String,
    },
    #[error("{column}: expected a counter value in {unit} (a number ≥ 0), found {found:?}")]
    BadCounter {
        column: String,
        unit: &'static str,
        found: String,
    },
    #[error("{column}: expected a GPU time in ms (a number ≥ 0, or NA), found {found:?}")]
    BadGpuTime { column: String, found: String },
    #[error("{column}: expected a display time in ms (a number, or NA; a Dropped flag 0 or 1), found {found:?}")]
    BadDisplayValue { column: String, found: String },
    #[error("truncated row: expected {expected} fields, found {found}")]
    Truncated { expected: String, found: usize },
    #[error("malformed CSV: {0}")]
    Csv(String),
    #[error("no frames: expected at least one {what} row after the header")]
    NoFrames { what: &'static str },
    #[error("no rows for {what}: the file has frames only of {others}")]
    NoMatch { what: String, others: String },
}

/// A frame log that could not be read: file, position (when there is one)
/// and what went wrong. Displays as `file:line:col: what` (compiler style),
/// or `file: what` when there is no position (e.g. cannot open).
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {kind}", .path.display(), PosSuffix(*.pos))]
pub struct ParseError {
    pub path: PathBuf,
    pub pos: Option<Pos>,
    pub kind: ErrorKind,
}

/// `:line:col`, or nothing.
struct PosSuffix(Option<Pos>);

impl fmt::Display for PosSuffix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(p) => write!(f, ":{}:{}", p.line, p.col),
            None => Ok(()),
        }
    }
}

/// Error without the file name yet: the readers work on any byte stream,
/// [`super::read_path`] adds the path.
#[derive(Debug)]
pub struct At {
    pub pos: Option<Pos>,
    pub kind: ErrorKind,
}

impl At {
    pub fn new(pos: Pos, kind: ErrorKind) -> At {
        At {
            pos: Some(pos),
            kind,
        }
    }
    pub fn nowhere(kind: ErrorKind) -> At {
        At { pos: None, kind }
    }
    pub fn with_path(self, path: impl Into<PathBuf>) -> ParseError {
        ParseError {
            path: path.into(),
            pos: self.pos,
            kind: self.kind,
        }
    }
}

impl From<std::io::Error> for At {
    fn from(e: std::io::Error) -> At {
        At::nowhere(ErrorKind::Io(e))
    }
}
