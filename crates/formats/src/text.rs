//! Text plumbing shared by the readers: a numbered line reader that rejects
//! binary data, the UTF-8 BOM, and 1-based character columns of CSV fields.

use super::error::{At, ErrorKind, Pos};
use std::io::{BufRead, Read};

pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Longest line accepted (a frame-log line is far shorter; this bounds
/// memory on a binary file without newlines).
pub const MAX_LINE: u64 = 1 << 20;

/// One line of a file, without its line ending.
pub struct Line<'a> {
    /// 1-based line number.
    pub no: u64,
    pub text: &'a str,
    /// Whether the line ended with `\n` (false only for a last line that was
    /// cut off, e.g. by a killed writer, or a file without final newline).
    pub terminated: bool,
}

/// Reads a file line by line, checking each for NUL bytes and UTF-8.
pub struct Lines<R> {
    inner: R,
    buf: Vec<u8>,
    no: u64,
    offset: u64,
}

impl<R: BufRead> Lines<R> {
    pub fn new(inner: R) -> Lines<R> {
        Lines {
            inner,
            buf: Vec::with_capacity(256),
            no: 0,
            offset: 0,
        }
    }

    /// The reader, positioned after the last line returned, with the count
    /// of lines and bytes consumed so far.
    pub fn into_inner(self) -> (R, u64, u64) {
        (self.inner, self.no, self.offset)
    }

    /// The next line, `None` at end of file.
    pub fn next_line(&mut self) -> Result<Option<Line<'_>>, At> {
        self.buf.clear();
        let n = self
            .inner
            .by_ref()
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut self.buf)?;
        if n == 0 {
            return Ok(None);
        }
        self.no += 1;
        if n as u64 > MAX_LINE {
            let col = char_col(&self.buf, MAX_LINE as usize);
            return Err(At::new(
                Pos::new(self.no, col),
                ErrorKind::LineTooLong { max: MAX_LINE },
            ));
        }
        self.offset += n as u64;
        let mut bytes = &self.buf[..];
        if self.no == 1 && bytes.starts_with(BOM) {
            bytes = &bytes[BOM.len()..];
        }
        let terminated = bytes.last() == Some(&b'\n');
        if terminated {
            bytes = &bytes[..bytes.len() - 1];
            if bytes.last() == Some(&b'\r') {
                bytes = &bytes[..bytes.len() - 1];
            }
        }
        let text = check_text(bytes, self.no)?;
        Ok(Some(Line {
            no: self.no,
            text,
            terminated,
        }))
    }
}

/// `bytes` as text, or an error at the first NUL byte / invalid UTF-8.
pub fn check_text(bytes: &[u8], line: u64) -> Result<&str, At> {
    if let Some(i) = bytes.iter().position(|&b| b == 0) {
        return Err(At::new(Pos::new(line, char_col(bytes, i)), ErrorKind::Nul));
    }
    std::str::from_utf8(bytes).map_err(|e| {
        At::new(
            Pos::new(line, char_col(bytes, e.valid_up_to())),
            ErrorKind::Utf8,
        )
    })
}

/// 1-based character column of byte `i` of `line` (invalid UTF-8 counts
/// one column per byte).
pub fn char_col(line: &[u8], i: usize) -> u64 {
    let head = &line[..i.min(line.len())];
    match std::str::from_utf8(head) {
        Ok(s) => s.chars().count() as u64 + 1,
        Err(_) => String::from_utf8_lossy(head).chars().count() as u64 + 1,
    }
}

/// Byte offset where field `index` (0-based) of a comma-separated `line`
/// starts, honouring double quotes; the line's length if it has fewer fields.
pub fn field_start(line: &[u8], index: usize) -> usize {
    if index == 0 {
        return 0;
    }
    let mut field = 0;
    let mut quoted = false;
    for (i, &b) in line.iter().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b',' if !quoted => {
                field += 1;
                if field == index {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    line.len()
}

/// 1-based character column of field `index` of `line`.
pub fn field_col(line: &[u8], index: usize) -> u64 {
    char_col(line, field_start(line, index))
}

/// At most `n` characters of `s`, with `…` when cut.
pub fn clip(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if s.chars().nth(n).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_strip_bom_and_crlf_and_see_cut_last_line() {
        let mut l = Lines::new(&b"\xEF\xBB\xBFa\r\nb\nc"[..]);
        let a = l.next_line().unwrap().unwrap();
        assert_eq!((a.no, a.text, a.terminated), (1, "a", true));
        let b = l.next_line().unwrap().unwrap();
        assert_eq!((b.no, b.text, b.terminated), (2, "b", true));
        let c = l.next_line().unwrap().unwrap();
        assert_eq!((c.no, c.text, c.terminated), (3, "c", false));
        assert!(l.next_line().unwrap().is_none());
    }

    #[test]
    fn binary_is_located() {
        let mut l = Lines::new(&b"ok\nab\0c\n"[..]);
        l.next_line().unwrap();
        let e = l.next_line().err().unwrap();
        assert_eq!(e.pos, Some(Pos::new(2, 3)));
        assert!(matches!(e.kind, ErrorKind::Nul));
        let mut l = Lines::new(&b"\xC3\xA9x\xFF\n"[..]);
        let e = l.next_line().err().unwrap();
        assert_eq!(e.pos, Some(Pos::new(1, 3)));
        assert!(matches!(e.kind, ErrorKind::Utf8));
    }

    #[test]
    fn overlong_line_is_an_error() {
        let long = vec![b'1'; MAX_LINE as usize + 10];
        let mut l = Lines::new(&long[..]);
        let e = l.next_line().err().unwrap();
        assert!(matches!(e.kind, ErrorKind::LineTooLong { .. }));
        let mut ok = vec![b'1'; MAX_LINE as usize - 1];
        ok.push(b'\n');
        assert!(Lines::new(&ok[..]).next_line().unwrap().is_some());
    }

    #[test]
    fn field_columns_honour_quotes() {
        let line = br#"a,"b,c",d"#;
        assert_eq!(field_start(line, 0), 0);
        assert_eq!(field_start(line, 1), 2);
        assert_eq!(field_start(line, 2), 8);
        assert_eq!(field_start(line, 5), line.len());
        assert_eq!(field_col("é,x".as_bytes(), 1), 3);
    }
}
