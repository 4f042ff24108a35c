//! A one-line progress bar on stderr for commands that work through many
//! files (`summarize`): drawn only when stderr is a terminal, so pipes,
//! files and CI logs never see control characters.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Redraws at most this often: a thousand small logs finish faster than a
/// terminal wants to repaint.
const REDRAW: Duration = Duration::from_millis(50);
/// Bar cells between the brackets.
const CELLS: usize = 30;

/// Progress of `total` items; a no-op unless stderr is a terminal.
pub struct Progress {
    total: usize,
    what: &'static str,
    start: Instant,
    last_draw: Option<Instant>,
    enabled: bool,
}

impl Progress {
    /// `what` names the items (e.g. "logs").
    pub fn new(total: usize, what: &'static str) -> Progress {
        Progress::with_terminal(total, what, std::io::stderr().is_terminal())
    }

    /// As [`Progress::new`], deciding whether to draw from `enabled`.
    pub fn with_terminal(total: usize, what: &'static str, enabled: bool) -> Progress {
        let mut p = Progress {
            total,
            what,
            start: Instant::now(),
            last_draw: None,
            enabled,
        };
        p.update(0);
        p
    }

    /// `done` items are finished.
    pub fn update(&mut self, done: usize) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        let due = self.last_draw.is_none_or(|t| now - t >= REDRAW) || done == self.total;
        if !due {
            return;
        }
        self.last_draw = Some(now);
        let line = bar(done, self.total, self.what, now - self.start);
        // Progress is a courtesy: a failing stderr must not stop the work.
        let _ = write!(std::io::stderr().lock(), "\r{line}\x1b[K");
    }

    /// Erases the bar, so messages and the prompt start on a clean line.
    pub fn finish(&mut self) {
        if self.enabled {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[K");
            self.enabled = false;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `[#########.....................]  12/40 logs  3.1 s`
pub fn bar(done: usize, total: usize, what: &str, elapsed: Duration) -> String {
    let filled = (done * CELLS)
        .checked_div(total)
        .unwrap_or(CELLS)
        .min(CELLS);
    format!(
        "[{}{}] {done:>w$}/{total} {what}  {:.1} s",
        "#".repeat(filled),
        ".".repeat(CELLS - filled),
        elapsed.as_secs_f64(),
        w = total.to_string().len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_fills_in_proportion() {
        let d = Duration::from_millis(3100);
        assert_eq!(
            bar(12, 40, "logs", d),
            format!("[{}{}] 12/40 logs  3.1 s", "#".repeat(9), ".".repeat(21))
        );
        assert!(bar(0, 0, "logs", d).starts_with(&format!("[{}]", "#".repeat(CELLS))));
        assert!(bar(3, 100, "logs", d).contains("  3/100 logs"));
    }
}
