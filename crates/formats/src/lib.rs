//! Frame-time logs → frame durations in integer ns, plus where they came
//! from. One module per format, detection here:
//!
//! - `steadyhud`: steadyhud's own session log ([`steadyhud_log`]).
//! - `presentmon`: PresentMon 1.x/2.x CSV, and CapFrameX/OCAT CSV (PresentMon
//!   columns with `//` metadata lines or system columns).
//! - `mangohud`: MangoHud CSV (frametime in µs or ms, told apart by `fps`).
//! - `plain`: one frame time in ms per line.
//!
//! Every reader streams (a 1M-line log never sits in memory as text) and
//! reports bad input as a [`ParseError`] with file, line and column.

#![forbid(unsafe_code)]

mod csvbody;
mod error;
mod mangohud;
mod plain;
mod presentmon;
mod steadyhud;
mod text;
mod value;

pub use error::{At, ErrorKind, ParseError, Pos};

use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read, Seek, SeekFrom};
use std::path::Path;

/// A log format `analyze` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    SteadyHud,
    PresentMon,
    /// CapFrameX and OCAT (PresentMon columns plus metadata).
    CapFrameX,
    MangoHud,
    Plain,
}

impl Format {
    pub const ALL: [Format; 5] = [
        Format::SteadyHud,
        Format::PresentMon,
        Format::CapFrameX,
        Format::MangoHud,
        Format::Plain,
    ];

    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Format::SteadyHud => "steadyhud",
            Format::PresentMon => "presentmon",
            Format::CapFrameX => "capframex",
            Format::MangoHud => "mangohud",
            Format::Plain => "plain",
        }
    }
}

/// What was read and from where.
#[derive(Clone, Debug, PartialEq)]
pub struct Meta {
    pub format: Format,
    /// Human description, e.g. "PresentMon 2.x CSV".
    pub detail: String,
    /// Application / process the frames belong to, when the log says.
    pub source: Option<String>,
    /// Column the frame times were taken from.
    pub column: String,
    /// Things the reader decided or skipped (other swapchains, cut-off last
    /// line, unit detection, ring overflows …).
    pub notes: Vec<String>,
    /// Statistics counter columns of a steadyhud session log (`None` for
    /// other formats and logs written without counters).
    pub counters: Option<steadyhud_counters::CounterColumns>,
    /// Per-frame GPU busy (and wait) time, when the log has such a column
    /// (PresentMon 2.x `MsGPUBusy`/`GPUBusy`, 1.x `msGPUActive`, steadyhud
    /// `gpu_busy_ms`); frames without a value hold
    /// [`steadyhud_metrics::gpu::NO_DATA`].
    pub gpu: Option<steadyhud_metrics::gpu::GpuColumns>,
    /// Marks of a steadyhud session log (`steadyhud ctl mark`), in the
    /// order written; empty for other formats.
    pub marks: Vec<Mark>,
}

/// A named point of a session: the segment `text` starts at frame `frame`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Mark {
    pub frame: u64,
    pub text: String,
}

impl Mark {
    /// Reads the text after [`steadyhud_log::MARK_PREFIX`]:
    /// `TEXT at frame N` (the frame number is last, so the text may hold
    /// anything).
    pub fn parse(rest: &str) -> Option<Mark> {
        let (text, frame) = rest.trim_end().rsplit_once(" at frame ")?;
        Some(Mark {
            frame: frame.parse().ok()?,
            text: text.to_string(),
        })
    }
}

impl Meta {
    pub fn new(format: Format, detail: &str, column: &str) -> Meta {
        Meta {
            format,
            detail: detail.to_string(),
            source: None,
            column: column.to_string(),
            notes: Vec::new(),
            counters: None,
            gpu: None,
            marks: Vec::new(),
        }
    }
}

/// Frame durations (ns, in order) and their metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameLog {
    pub durations_ns: Vec<u64>,
    pub meta: Meta,
}

/// Which frames of a multi-process PresentMon-style log to take. Empty:
/// the (process, swapchain) group with the most frames.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    /// Application name (case-insensitive) or process id.
    pub process: Option<String>,
    /// Swapchain address (hex; leading zeros and case ignored).
    pub swapchain: Option<String>,
}

impl Filter {
    pub fn is_empty(&self) -> bool {
        self.process.is_none() && self.swapchain.is_none()
    }

    pub fn wants(&self, app: &str, pid: &str, swapchain: &str) -> bool {
        let process_ok = self
            .process
            .as_deref()
            .is_none_or(|p| p.eq_ignore_ascii_case(app) || p == pid);
        let swapchain_ok = self
            .swapchain
            .as_deref()
            .is_none_or(|s| norm_hex(s) == norm_hex(swapchain));
        process_ok && swapchain_ok
    }

    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(p) = &self.process {
            parts.push(format!("process {p}"));
        }
        if let Some(s) = &self.swapchain {
            parts.push(format!("swapchain {s}"));
        }
        parts.join(", ")
    }
}

fn norm_hex(s: &str) -> String {
    let s = s.trim();
    let s = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    let s = s.trim_start_matches('0');
    s.to_ascii_lowercase()
}

/// How to read a file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadOptions {
    /// `None`: detect from the content.
    pub format: Option<Format>,
    pub filter: Filter,
}

/// Bytes looked at to detect the format.
const SNIFF: usize = 16 * 1024;

/// Reads the frame log at `path`.
pub fn read_path(path: &Path, opts: &ReadOptions) -> Result<FrameLog, ParseError> {
    let file = File::open(path).map_err(|e| At::from(e).with_path(path))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        let e = std::io::Error::new(std::io::ErrorKind::InvalidInput, "is a directory");
        return Err(At::from(e).with_path(path));
    }
    read(BufReader::with_capacity(64 * 1024, file), opts).map_err(|e| e.with_path(path))
}

/// Reads a frame log held in memory (tests, fuzzing).
pub fn read_bytes(bytes: &[u8], opts: &ReadOptions) -> Result<FrameLog, At> {
    read(Cursor::new(bytes), opts)
}

/// Reads a frame log from any seekable byte stream positioned at its start.
pub fn read<R: BufRead + Seek>(mut r: R, opts: &ReadOptions) -> Result<FrameLog, At> {
    let format = match opts.format {
        Some(f) => f,
        None => {
            let mut head = Vec::with_capacity(SNIFF);
            r.by_ref().take(SNIFF as u64).read_to_end(&mut head)?;
            r.seek(SeekFrom::Start(0))?;
            detect(&head)?
        }
    };
    match format {
        Format::SteadyHud => steadyhud::read(r),
        Format::PresentMon | Format::CapFrameX => presentmon::read(r, format, &opts.filter),
        Format::MangoHud => mangohud::read(r),
        Format::Plain => plain::read(r),
    }
}

/// Decides the format from the first bytes of a file. Binary data and
/// empty files are errors here already; anything unrecognised that looks
/// like CSV is "no frame-time column", anything else goes to the plain
/// reader (which then names the line that is not a number).
pub fn detect(head: &[u8]) -> Result<Format, At> {
    let head = head.strip_prefix(text::BOM).unwrap_or(head);
    // Check only complete lines (the sniff may end mid-line or mid-char),
    // but at least the first one.
    let complete = match head.iter().rposition(|&b| b == b'\n') {
        Some(i) => &head[..=i],
        None => head,
    };
    let mut lines = Vec::new();
    for (n, raw) in complete.split(|&b| b == b'\n').enumerate() {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        match text::check_text(raw, n as u64 + 1) {
            Ok(t) => lines.push(t),
            Err(e) => {
                // A sniff without any newline may end inside a character.
                let cut_char = std::str::from_utf8(raw)
                    .err()
                    .filter(|u| u.error_len().is_none());
                match cut_char {
                    Some(u) if complete.len() == SNIFF && matches!(e.kind, ErrorKind::Utf8) => {
                        lines.push(std::str::from_utf8(&raw[..u.valid_up_to()]).unwrap_or(""))
                    }
                    _ => return Err(e),
                }
            }
        }
    }
    let meaningful: Vec<(usize, &str)> = lines
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .take(12)
        .collect();
    let Some(&(first_no, first)) = meaningful.first() else {
        return Err(At::new(Pos::new(1, 1), ErrorKind::Empty));
    };
    let lower = first.trim().to_ascii_lowercase();
    if lower.starts_with(steadyhud_log::MAGIC) {
        return Ok(Format::SteadyHud);
    }
    if lower.starts_with("//") {
        return Ok(Format::CapFrameX);
    }
    if lower.starts_with('#') {
        // Comments first: a steadyhud log if its header follows, else plain.
        let body = meaningful
            .iter()
            .find(|(_, l)| !l.trim_start().starts_with('#'));
        return Ok(match body {
            Some((_, l)) if l.split(',').any(|f| f.trim() == "frametime_ms") => Format::SteadyHud,
            _ => Format::Plain,
        });
    }
    let fields: Vec<String> = lower
        .split(',')
        .map(|f| f.trim().trim_matches('"').to_string())
        .collect();
    let has = |n: &str| fields.iter().any(|f| f == n);
    if has("frametime_ms") {
        return Ok(Format::SteadyHud);
    }
    if lower.starts_with("os,") || (has("fps") && has("frametime")) {
        return Ok(Format::MangoHud);
    }
    let any_mangohud_header = meaningful.iter().take(4).any(|(_, l)| {
        let l = l.to_ascii_lowercase();
        l.starts_with("fps,") && l.split(',').any(|f| f.trim() == "frametime")
    });
    if any_mangohud_header {
        return Ok(Format::MangoHud);
    }
    if has("msbetweenpresents") || has("frametime") || has("application") || has("processid") {
        return Ok(if has("motherboard") || has("processor") {
            Format::CapFrameX
        } else {
            Format::PresentMon
        });
    }
    if fields.len() > 1 {
        return Err(At::new(
            Pos::new(first_no as u64 + 1, 1),
            ErrorKind::NoColumn {
                expected: "MsBetweenPresents or FrameTime (PresentMon, CapFrameX, OCAT), frametime (MangoHud) or frametime_ms (steadyhud)"
                    .into(),
                found: text::clip(first, 100),
            },
        ));
    }
    Ok(Format::Plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(s: &[u8]) -> Result<Format, ErrorKind> {
        detect(s).map_err(|e| e.kind)
    }

    #[test]
    fn detection() {
        let cases: [(&[u8], Format); 10] = [
            (b"# steadyhud 0.1.0 session log\n", Format::SteadyHud),
            (b"frame,present_ns,frametime_ms\n", Format::SteadyHud),
            (b"//GameName=x\n", Format::CapFrameX),
            (
                b"\xEF\xBB\xBFApplication,ProcessID,MsBetweenPresents\n",
                Format::PresentMon,
            ),
            (b"Application,FrameTime\n", Format::PresentMon),
            (
                b"Application,MsBetweenPresents,Motherboard\n",
                Format::CapFrameX,
            ),
            (b"os,cpu,gpu\nx,y,z\nfps,frametime\n", Format::MangoHud),
            (b"16.6\n16.7\n", Format::Plain),
            (b"# by hand\n16.6\n", Format::Plain),
            (b"hello\n", Format::Plain),
        ];
        for (text, want) in cases {
            assert_eq!(
                fmt(text).unwrap(),
                want,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        assert!(matches!(
            fmt(b"a,b,c\n1,2,3\n"),
            Err(ErrorKind::NoColumn { .. })
        ));
        assert!(matches!(fmt(b""), Err(ErrorKind::Empty)));
        assert!(matches!(fmt(b"\n \n"), Err(ErrorKind::Empty)));
        assert!(matches!(fmt(b"\x7fELF\x02\x01\x00"), Err(ErrorKind::Nul)));
        assert!(matches!(fmt(b"ab\xff\xfe\n"), Err(ErrorKind::Utf8)));
    }

    #[test]
    fn filter_matches_normalised_swapchains() {
        let f = Filter {
            process: Some("1268".into()),
            swapchain: Some("0x00000224B280A1C0".into()),
        };
        assert!(f.wants("dwm.exe", "1268", "0x224b280a1c0"));
        assert!(!f.wants("dwm.exe", "1269", "0x224b280a1c0"));
    }
}
