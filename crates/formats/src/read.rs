//! Reading a log of any format: detection, then the format's reader.

use super::error::{At, ErrorKind, ParseError, Pos};
use super::frame_log::{Format, FrameLog, ReadOptions};
use super::{mangohud, plain, presentmon, steadyhud, text};
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read, Seek, SeekFrom};
use std::path::Path;

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
    use crate::frame_log::Filter;

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
