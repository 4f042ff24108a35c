//! The test app's own lines on stderr.

/// Writes one line to stderr in a single write: the steadyhud layer in this
/// process has its own copy of std and its own stderr lock, so a line
/// written piece by piece (as `eprintln!` does) could be split by one of
/// the layer's lines, and the tests read both.
pub fn say(line: String) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(format!("{line}\n").as_bytes());
}
