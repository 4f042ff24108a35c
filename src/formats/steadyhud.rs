//! steadyhud's own session log (layout in [`crate::session_log`]): `#`
//! comment lines anywhere, a CSV header naming `frametime_ms`, one row per
//! frame. A last line without `\n` was cut off by a killed writer and is
//! ignored with a note; a malformed line anywhere else is an error.

use super::error::{At, ErrorKind, Pos};
use super::text::{char_col, clip, field_col, Lines};
use super::value::{parse_ns, Unit};
use super::{FrameLog, Format, Meta};
use crate::session_log::{EXE_PREFIX, HEADER, OVERFLOW_PREFIX};
use std::io::BufRead;

const COLUMN: &str = "frametime_ms";

pub fn read<R: BufRead>(r: R) -> Result<FrameLog, At> {
    let mut lines = Lines::new(r);
    let mut durations = Vec::new();
    let mut meta = Meta::new(Format::SteadyHud, "steadyhud session log", COLUMN);
    // (number of fields, index of frametime_ms) once the header is seen.
    let mut header: Option<(usize, usize)> = None;
    let mut lost = 0u64;
    let mut last_line = 0;
    while let Some(line) = lines.next_line()? {
        last_line = line.no;
        let text = line.text;
        if text.starts_with('#') {
            if let Some(exe) = text.strip_prefix(EXE_PREFIX) {
                meta.source = Some(exe.trim().to_string());
            } else if let Some(rest) = text.strip_prefix(OVERFLOW_PREFIX) {
                lost += rest.split_whitespace().next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
            }
            continue;
        }
        if text.trim().is_empty() {
            continue;
        }
        let Some((nfields, col)) = header else {
            let names: Vec<&str> = text.split(',').map(str::trim).collect();
            match names.iter().position(|n| *n == COLUMN) {
                Some(i) => header = Some((names.len(), i)),
                None => {
                    return Err(At::new(
                        Pos::new(line.no, 1),
                        ErrorKind::NoColumn { expected: format!("{COLUMN} (header {HEADER})"), found: clip(text, 80) },
                    ))
                }
            }
            continue;
        };
        let fields = text.split(',').count();
        let cut = !line.terminated;
        if fields != nfields {
            if cut {
                meta.notes.push(format!("line {}: last line cut off (no newline), ignored", line.no));
                break;
            }
            return Err(At::new(
                Pos::new(line.no, char_col(text.as_bytes(), text.len())),
                ErrorKind::Truncated { expected: nfields.to_string(), found: fields },
            ));
        }
        if cut {
            // Complete-looking but unterminated: the writer always ends a
            // row with '\n', so its last field may be cut short.
            meta.notes.push(format!("line {}: last line cut off (no newline), ignored", line.no));
            break;
        }
        let field = text.split(',').nth(col).unwrap_or("");
        let pos = Pos::new(line.no, field_col(text.as_bytes(), col));
        durations.push(parse_ns(field.as_bytes(), Unit::Ms, COLUMN, pos)?);
    }
    if last_line == 0 {
        return Err(At::new(Pos::new(1, 1), ErrorKind::Empty));
    }
    if header.is_none() {
        return Err(At::new(
            Pos::new(last_line, 1),
            ErrorKind::NoHeader { what: "CSV", expected: HEADER.to_string() },
        ));
    }
    if durations.is_empty() {
        return Err(At::new(Pos::new(last_line, 1), ErrorKind::NoFrames { what: "frame" }));
    }
    if lost > 0 {
        meta.notes.push(format!("ring overflow: {lost} timestamps lost during capture"));
    }
    Ok(FrameLog { durations_ns: durations, meta })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "# steadyhud 0.1.0 session log\n# exe: vkcube\n# start: x\nframe,present_ns,frametime_ms\n\
                       0,16666667,16.666667\n# ring overflow: 3 timestamps lost\n1,50000000,33.333333\n";

    #[test]
    fn reads_rows_comments_and_overflow() {
        let log = read(LOG.as_bytes()).unwrap();
        assert_eq!(log.durations_ns, vec![16_666_667, 33_333_333]);
        assert_eq!(log.meta.source.as_deref(), Some("vkcube"));
        assert!(log.meta.notes.iter().any(|n| n.contains("3 timestamps lost")));
    }

    #[test]
    fn cut_last_line_is_ignored_cut_middle_line_is_an_error() {
        let cut = format!("{LOG}2,66666");
        let log = read(cut.as_bytes()).unwrap();
        assert_eq!(log.durations_ns.len(), 2);
        assert!(log.meta.notes.iter().any(|n| n.contains("line 8") && n.contains("cut off")));
        // Complete fields but no newline: still a cut row.
        let cut = format!("{LOG}2,66666667,16.6");
        assert_eq!(read(cut.as_bytes()).unwrap().durations_ns.len(), 2);
        let mid = LOG.replace("0,16666667,16.666667", "0,1666");
        let e = read(mid.as_bytes()).err().unwrap();
        assert_eq!(e.pos, Some(Pos::new(5, 7)));
        assert!(matches!(e.kind, ErrorKind::Truncated { found: 2, .. }));
    }

    #[test]
    fn extra_columns_are_fine_and_bad_values_located() {
        let log = read(&b"frame,frametime_ms,cpu_ms\n0,10.5,1\n"[..]).unwrap();
        assert_eq!(log.durations_ns, vec![10_500_000]);
        let e = read(&b"frame,present_ns,frametime_ms\n0,1,0.000000\n"[..]).err().unwrap();
        assert_eq!(e.pos, Some(Pos::new(2, 5)));
        assert!(matches!(e.kind, ErrorKind::NotPositive { .. }));
        let e = read(&b"# steadyhud\nframe,present_ns\n"[..]).err().unwrap();
        assert!(matches!(e.kind, ErrorKind::NoColumn { .. }));
    }
}
