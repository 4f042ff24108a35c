//! Panic containment for code that runs inside somebody else's game.
//!
//! A panic unwinding across an `extern "system"` boundary aborts the process,
//! so every entry point runs its body through [`contain`]. Our panic hook
//! (installed once; it only sees panics of this library's own copy of std)
//! prints a single `steadyhud:` line instead of the default multi-line report.
//!
//! [`inject`] is the test-only fault switch of issue 7: with
//! `STEADYHUD_TEST_PANIC=present` or `=analysis` the named site panics once.
//! It is compiled into every build and inert unless the variable is set.
//! Likewise [`device_lost`]: with `STEADYHUD_TEST_DEVICE_LOST=1` the HUD's
//! draws fail with `VK_ERROR_DEVICE_LOST` from the 10th present on, as they
//! would on a lost device (lavapipe cannot lose one for real).

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Once, OnceLock};

/// Sites where a panic can be injected.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Site {
    /// The present hook, after the timestamp is queued, before the HUD draws.
    Present,
    /// The analysis thread's live-statistics step.
    Analysis,
}

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
            let loc = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
            eprintln!("steadyhud: internal error contained ({loc}): {msg}; the application continues");
        }));
    });
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

fn injected_site() -> Option<Site> {
    static SITE: OnceLock<Option<Site>> = OnceLock::new();
    *SITE.get_or_init(|| match std::env::var("STEADYHUD_TEST_PANIC").as_deref() {
        Ok("present") => Some(Site::Present),
        Ok("analysis") => Some(Site::Analysis),
        _ => None,
    })
}

/// Panics once per process at `site` when `STEADYHUD_TEST_PANIC` names it.
#[track_caller]
pub fn inject(site: Site) {
    static FIRED: AtomicBool = AtomicBool::new(false);
    if injected_site() == Some(site) && !FIRED.swap(true, Ordering::Relaxed) {
        panic!("injected test panic at {site:?} (STEADYHUD_TEST_PANIC)");
    }
}

/// Whether the HUD draw of this present must fail as on a lost device
/// (`STEADYHUD_TEST_DEVICE_LOST=1`; from the 10th call on, so capture has
/// started before the fault).
pub fn device_lost() -> bool {
    use std::sync::atomic::AtomicU32;
    static ON: OnceLock<bool> = OnceLock::new();
    static CALLS: AtomicU32 = AtomicU32::new(0);
    *ON.get_or_init(|| std::env::var("STEADYHUD_TEST_DEVICE_LOST").as_deref() == Ok("1"))
        && CALLS.fetch_add(1, Ordering::Relaxed) >= 9
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
