//! Panic containment for code that runs inside somebody else's game.
//!
//! A panic unwinding across an `extern "system"` boundary aborts the process,
//! so every entry point runs its body through [`contain`]. Our panic hook
//! (installed once; it only sees panics of this library's own copy of std)
//! prints a single `steadyhud:` line instead of the default multi-line report.
//!
//! Only our own panics are contained. A forced thread exit (`pthread_exit`,
//! `pthread_cancel`, and so Wine ending a process's threads: its handler of
//! the signal it sends calls `pthread_exit`) unwinds as a foreign exception,
//! and `catch_unwind` aborts the process on one (glibc prints `FATAL:
//! exception not rethrown`). So while a guarded body runs, thread exits
//! wait ([`ExitsWait`]): asynchronous signals are blocked and cancellation
//! is disabled. One asked for meanwhile happens when the body has returned,
//! outside the catch: a pending signal is delivered as the mask is
//! restored, a pending cancel at the next cancellation point (the driver's
//! call inside the game's own). It then unwinds through the entry points,
//! which are `extern "system-unwind"` / `"C-unwind"` for that reason, as it
//! would through the driver alone. A guard costs two `rt_sigprocmask`
//! calls (a guard inside another costs none: the outer one holds the
//! exits back until it ends), so the hot paths take at most one per
//! present or swap, and none
//! where they only capture: a present or swap whose HUD is not drawn runs
//! its own work unguarded, and that work is `#[no_panic]` (the `no-panic`
//! crate: a function the optimizer cannot prove panic-free leaves an
//! undefined symbol, and the libraries link with `-z defs`, so the build
//! fails), with the locks it takes from `lock::Hold`. Nothing there can
//! panic, so nothing needs a catch, and a forced exit passes through. The
//! guard stays where work can panic: the HUD's draws and set-up, first
//! setups, the display sources and hotkeys when they have work, the
//! analysis thread.
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
    // Inside another guard of this thread the exits already wait (the
    // outer one restores them): no second pair of system calls, e.g. for
    // a Wayland listener run by the dispatch of a guarded present.
    let exits = (GUARDED.with(|g| g.get()) == 0).then(ExitsWait::begin);
    GUARDED.with(|g| g.set(g.get() + 1));
    let r = panic::catch_unwind(AssertUnwindSafe(f)).ok();
    GUARDED.with(|g| g.set(g.get().saturating_sub(1)));
    // After the catch: a thread exit asked for meanwhile starts here.
    drop(exits);
    r
}

/// Signals a thread's own faults raise: never blocked (one raised while
/// blocked kills the process), and none of them is how a thread is ended.
const SYNCHRONOUS: [libc::c_int; 7] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGTRAP,
    libc::SIGSYS,
    libc::SIGABRT,
];

/// glibc's `PTHREAD_CANCEL_ENABLE` / `PTHREAD_CANCEL_DISABLE` (the libc
/// crate has no Linux values for them).
const CANCEL_ENABLE: libc::c_int = 0;
const CANCEL_DISABLE: libc::c_int = 1;

// Declared here as able to unwind: restoring the mask is where a pending
// signal's handler runs, and it may end the thread from there.
extern "C-unwind" {
    fn pthread_sigmask(
        how: libc::c_int,
        set: *const libc::sigset_t,
        old: *mut libc::sigset_t,
    ) -> libc::c_int;
    fn pthread_setcancelstate(state: libc::c_int, old: *mut libc::c_int) -> libc::c_int;
}

/// While alive, this thread's exits wait: asynchronous signals blocked,
/// cancellation disabled; dropping it restores both as they were (so a
/// guard inside a guard leaves them waiting until the outer one ends).
struct ExitsWait {
    mask: libc::sigset_t,
    cancel: libc::c_int,
}

impl ExitsWait {
    fn begin() -> ExitsWait {
        // SAFETY: sigset_t is plain data, filled by sigfillset before use;
        // both calls get valid pointers to this frame's values.
        unsafe {
            let mut block: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut block);
            for s in SYNCHRONOUS {
                libc::sigdelset(&mut block, s);
            }
            let mut w = ExitsWait {
                mask: std::mem::zeroed(),
                cancel: CANCEL_ENABLE,
            };
            pthread_sigmask(libc::SIG_BLOCK, &block, &mut w.mask);
            pthread_setcancelstate(CANCEL_DISABLE, &mut w.cancel);
            w
        }
    }
}

impl Drop for ExitsWait {
    fn drop(&mut self) {
        // SAFETY: restores what `begin` saved, through valid pointers.
        unsafe {
            pthread_setcancelstate(self.cancel, std::ptr::null_mut());
            pthread_sigmask(libc::SIG_SETMASK, &self.mask, std::ptr::null_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether this thread blocks SIGTERM now.
    fn blocked() -> bool {
        // SAFETY: valid pointers to this frame's set; a query only.
        unsafe {
            let mut now: libc::sigset_t = std::mem::zeroed();
            pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut now);
            libc::sigismember(&now, libc::SIGTERM) == 1
        }
    }

    /// A guard inside a guard leaves the exits waiting until the outer one
    /// ends, panic or not, and the outer one restores them.
    #[test]
    fn inner_guards_leave_the_exits_to_the_outer_one() {
        assert!(!blocked());
        contain((), || {
            assert!(blocked());
            contain((), || assert!(blocked()));
            assert!(blocked(), "the inner guard restored the mask");
            contain((), || panic!("inner"));
            assert!(blocked(), "the inner panic restored the mask");
        });
        assert!(!blocked(), "the outer guard restores the mask");
    }

    #[test]
    fn contain_returns_fallback_on_panic() {
        assert_eq!(contain(7, || -> i32 { panic!("boom") }), 7);
        assert_eq!(contain(7, || 3), 3);
        assert!(try_run(|| -> () { panic!("x") }).is_none());
    }
}
