//! The data rows of a CSV file, streamed with the `csv` crate: every row is
//! checked for NUL bytes, UTF-8 and its field count before the reader sees
//! it, and any error gets the row's line and the character column of the
//! offending field (found by re-reading that one raw line).

use super::error::{At, ErrorKind, Pos};
use super::text::{char_col, field_col, Lines};
use std::io::{BufRead, Read, Seek, SeekFrom};

/// What a row handler wants next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// Where on a failing row the column should point.
enum Spot {
    Field(usize),
    EndOfLine,
    Nul,
    Utf8,
}

/// The data rows of a CSV file: the reader positioned at the first data row
/// (after the header), with the lines and bytes that precede it.
pub struct Body<R> {
    inner: R,
    lines_before: u64,
    offset_before: u64,
}

impl<R: BufRead + Seek> Body<R> {
    /// The rows after the lines `lines` has read so far (the header).
    pub fn after(lines: Lines<R>) -> Body<R> {
        let (inner, lines_before, offset_before) = lines.into_inner();
        Body {
            inner,
            lines_before,
            offset_before,
        }
    }

    /// Goes back to the first data row, for another pass.
    pub fn rewind(&mut self) -> std::io::Result<()> {
        self.inner.seek(SeekFrom::Start(self.offset_before))?;
        Ok(())
    }

    /// Reads the rows from the current position. Rows with fewer than
    /// `needed` fields are truncated (`what_needed` says which column
    /// requires them). `each(row, line)` handles a good row, may stop the
    /// reading early, and may fail on field `i` with a kind.
    pub fn for_each_row<F>(
        &mut self,
        needed: usize,
        what_needed: &str,
        mut each: F,
    ) -> Result<(), At>
    where
        F: FnMut(&csv::ByteRecord, u64) -> Result<Flow, (usize, ErrorKind)>,
    {
        let (lines_before, offset_before) = (self.lines_before, self.offset_before);
        let inner = &mut self.inner;
        let outcome = {
            let mut csv = csv::ReaderBuilder::new()
                .has_headers(false)
                .flexible(true)
                .buffer_capacity(64 * 1024)
                // '\n' only: with the default CRLF terminator a record's
                // position points at the '\n' of the previous "\r\n", one line
                // early. A trailing '\r' stays in the last field, which every
                // use trims.
                .terminator(csv::Terminator::Any(b'\n'))
                .from_reader(&mut *inner);
            let mut rec = csv::ByteRecord::new();
            loop {
                let more = match csv.read_byte_record(&mut rec) {
                    Ok(m) => m,
                    Err(e) => {
                        let (line, offset) = match e.position() {
                            Some(p) => (lines_before + p.line(), offset_before + p.byte()),
                            None => (lines_before + 1, offset_before),
                        };
                        break Err((line, offset, Spot::Field(0), csv_error(e)));
                    }
                };
                if !more {
                    break Ok(());
                }
                let p = rec.position().cloned().unwrap_or_else(csv::Position::new);
                let (line, offset) = (lines_before + p.line(), offset_before + p.byte());
                let all = rec.as_slice();
                if all.contains(&0) {
                    break Err((line, offset, Spot::Nul, ErrorKind::Nul));
                }
                if std::str::from_utf8(all).is_err() {
                    break Err((line, offset, Spot::Utf8, ErrorKind::Utf8));
                }
                if rec.len() == 1 && rec[0].iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                if rec.len() < needed {
                    let kind = ErrorKind::Truncated {
                        expected: format!("at least {needed} (through {what_needed})"),
                        found: rec.len(),
                    };
                    break Err((line, offset, Spot::EndOfLine, kind));
                }
                match each(&rec, line) {
                    Ok(Flow::Continue) => {}
                    Ok(Flow::Stop) => break Ok(()),
                    Err((field, kind)) => break Err((line, offset, Spot::Field(field), kind)),
                }
            }
        };
        outcome.map_err(|(line, offset, spot, kind)| {
            let col = locate(inner, offset, &spot);
            At::new(Pos::new(line.max(1), col), kind)
        })
    }
}

/// Header names of one CSV line, honouring quotes, trimmed.
pub fn split_header(text: &str) -> Vec<String> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut rec = csv::StringRecord::new();
    match rdr.read_record(&mut rec) {
        Ok(true) => rec.iter().map(|s| s.trim().to_string()).collect(),
        _ => text.split(',').map(|s| s.trim().to_string()).collect(),
    }
}

fn csv_error(e: csv::Error) -> ErrorKind {
    match e.into_kind() {
        csv::ErrorKind::Io(io) => ErrorKind::Io(io),
        other => ErrorKind::Csv(format!("{other:?}")),
    }
}

/// Character column of `spot` on the row starting at byte `offset`: reads
/// the raw line again (error path only; 1 if it cannot).
fn locate<R: BufRead + Seek>(r: &mut R, offset: u64, spot: &Spot) -> u64 {
    let mut line = Vec::new();
    if r.seek(SeekFrom::Start(offset)).is_ok() {
        let _ = r.by_ref().take(1 << 20).read_until(b'\n', &mut line);
    }
    while matches!(line.last(), Some(b'\n' | b'\r')) {
        line.pop();
    }
    match spot {
        Spot::Field(i) => field_col(&line, *i),
        Spot::EndOfLine => char_col(&line, line.len()),
        Spot::Nul => char_col(&line, line.iter().position(|&b| b == 0).unwrap_or(0)),
        Spot::Utf8 => char_col(
            &line,
            std::str::from_utf8(&line)
                .err()
                .map_or(0, |e| e.valid_up_to()),
        ),
    }
}
