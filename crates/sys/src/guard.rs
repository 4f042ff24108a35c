//! Panic containment for code that runs inside somebody else's game.
//!
//! A panic unwinding across an `extern "system"` boundary aborts the process,
//! so every entry point runs its body through [`contain`]. Our panic hook
//! (installed once; it only sees panics of this library's own copy of std)
//! prints a single `steadyhud:` line instead of the default multi-line report.
//!
//! Test-only fault switches live in the capture core
//! (`crates/capture/src/faults.rs`).

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

static HOOK: Once = Once::new();

thread_local! {
    /// Depth of [`contain`]/[`try_run`] calls on this thread: panics outside
    /// them (e.g. in a test binary linking the rlib) keep the usual report.
    static GUARDED: Cell<u32> = const { Cell::new(0) };
}

/// Installs the one-line panic hook (idempotent).
pub fn install_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if GUARDED.with(|g| g.get()) == 0 {
                return previous(info);
            }
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            let loc = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            say(format_args!(
                "steadyhud: internal error contained ({loc}): {msg}; the application continues"
            ));
        }));
    });
}

/// Writes one line to stderr, ignoring a failed write: `eprintln!` panics
/// when stderr is closed, and a panic in the panic hook (or across an
/// `extern "system"` boundary) would abort the game.
///
/// The line goes out in one write: the game has its own std (and stderr
/// lock), so a line written in pieces could be split by the game's output.
pub fn say(args: std::fmt::Arguments) {
    use std::io::Write;
    let line = format!("{args}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// Runs `f`; on panic returns `fallback` (the hook already printed one line).
pub fn contain<R>(fallback: R, f: impl FnOnce() -> R) -> R {
    try_run(f).unwrap_or(fallback)
}

/// Like [`contain`] but reports whether `f` panicked.
pub fn try_run<R>(f: impl FnOnce() -> R) -> Option<R> {
    install_hook();
    GUARDED.with(|g| g.set(g.get() + 1));
    let r = panic::catch_unwind(AssertUnwindSafe(f)).ok();
    GUARDED.with(|g| g.set(g.get().saturating_sub(1)));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contain_returns_fallback_on_panic() {
        assert_eq!(contain(7, || -> i32 { panic!("boom") }), 7);
        assert_eq!(contain(7, || 3), 3);
        assert!(try_run(|| -> () { panic!("x") }).is_none());
    }
}
