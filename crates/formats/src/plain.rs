//! Plain text: one frame time in milliseconds per line. Blank lines and
//! lines starting with `#` are skipped; anything else must be a number.

use super::error::{At, ErrorKind, Pos};
use super::frame_log::{Format, FrameLog, Meta};
use super::text::Lines;
use super::value::{parse_ns, Unit};
use std::io::BufRead;

const COLUMN: &str = "frame time (ms)";

pub fn read<R: BufRead>(r: R) -> Result<FrameLog, At> {
    let mut lines = Lines::new(r);
    let mut durations = Vec::new();
    let mut last_line = 0;
    while let Some(line) = lines.next_line()? {
        last_line = line.no;
        let t = line.text.trim_start();
        if t.trim_end().is_empty() || t.starts_with('#') {
            continue;
        }
        let col = (line.text.chars().count() - t.chars().count()) as u64 + 1;
        durations.push(parse_ns(
            t.as_bytes(),
            Unit::Ms,
            COLUMN,
            Pos::new(line.no, col),
        )?);
    }
    if last_line == 0 {
        return Err(At::new(Pos::new(1, 1), ErrorKind::Empty));
    }
    if durations.is_empty() {
        return Err(At::new(
            Pos::new(last_line, 1),
            ErrorKind::NoFrames { what: "frame-time" },
        ));
    }
    Ok(FrameLog {
        durations_ns: durations,
        meta: Meta::new(
            Format::Plain,
            "plain text, one frame time in ms per line",
            COLUMN,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_numbers_skips_blanks_and_comments() {
        let log = read(&b"# made by hand\n16.6\n\n  33.3 \n"[..]).unwrap();
        assert_eq!(log.durations_ns, vec![16_600_000, 33_300_000]);
    }

    #[test]
    fn bad_line_is_located() {
        let e = read(&b"16.6\n  -2\n"[..]).err().unwrap();
        assert_eq!(e.pos, Some(Pos::new(2, 3)));
        assert!(matches!(e.kind, ErrorKind::NotPositive { .. }));
        let e = read(&b"\n\n"[..]).err().unwrap();
        assert!(matches!(e.kind, ErrorKind::NoFrames { .. }));
    }
}
