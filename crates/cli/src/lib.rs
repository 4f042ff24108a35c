//! The `steadyhud` subcommands, one module each (main.rs only dispatches).

pub mod analyze;
pub mod bench;
pub mod compare;
pub mod compare_runs;
pub mod config;
pub mod ctl;
pub mod display;
pub mod export;
pub mod install;
pub mod load;
pub mod merge;
pub mod parallel;
pub mod progress;
pub mod recovered;
pub mod report;
pub mod run;
pub mod segments;
pub mod summarize;

/// `text` as a terminal may show it: control characters other than the
/// newline (an escape sequence in a log's `# exe:` line or a mark, written
/// by whoever wrote the log) escaped as `\u{1b}`, so printing someone
/// else's log cannot move the cursor, retitle the window or hide lines.
pub fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\n') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c.is_control() && c != '\n' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}
