//! How the analysis thread sleeps: in `poll(2)` on the sockets its pollers
//! wait for (the control socket) and an `eventfd` that [`Waker::wake`]
//! signals (shutdown), until the next tick at the latest.
//!
//! Why not a fixed short tick: on a VM every wake-up costs tens of
//! microseconds of the thread's CPU (timer, context switch, cold caches);
//! at 200 wake-ups a second that alone was 1.4 % of a core
//! (benches/present_cost.rs). Sleeping until something is due or a socket
//! is ready costs nothing between, and answers a request at once.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// The least time between two wake-ups caused by sockets: a socket that
/// stays ready (a flood of requests) costs at most as many wake-ups as
/// the old 5 ms tick did, times five.
const MIN_SPACING: Duration = Duration::from_millis(1);

/// The thread's alarm clock: an `eventfd` written to wake it.
pub(super) struct Waker {
    fd: Option<OwnedFd>,
}

impl Waker {
    /// A new waker; without an eventfd (a strange sandbox) the thread just
    /// sleeps to its next tick, and [`Waker::wake`] does nothing.
    pub(super) fn new() -> Waker {
        // SAFETY: plain eventfd creation; the fd is owned below.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        Waker {
            // SAFETY: a fresh fd we own.
            fd: (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) }),
        }
    }

    /// Wakes the thread sleeping in [`Waker::sleep`] (or makes its next
    /// sleep return at once).
    pub(super) fn wake(&self) {
        if let Some(fd) = &self.fd {
            let one = 1u64;
            // SAFETY: writes 8 bytes from a live u64 to our eventfd.
            let _ = unsafe { libc::write(fd.as_raw_fd(), (&one as *const u64).cast(), 8) };
        }
    }

    /// Sleeps until one of `fds` is ready, [`Waker::wake`] is called or
    /// `timeout` passes; `busy` (work waiting already) sleeps only
    /// [`MIN_SPACING`]. A wake-up by a socket comes no sooner than
    /// [`MIN_SPACING`] after the previous one.
    pub(super) fn sleep(&self, timeout: Duration, busy: bool, fds: &mut Vec<libc::pollfd>) {
        let started = std::time::Instant::now();
        if busy {
            std::thread::sleep(MIN_SPACING);
            return;
        }
        if let Some(fd) = &self.fd {
            fds.push(libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        let ms = timeout.as_millis().clamp(0, i32::MAX as u128) as libc::c_int;
        // SAFETY: `fds` is a live array of `fds.len()` pollfds.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if let Some(fd) = &self.fd {
            if fds.last().is_some_and(|p| p.revents != 0) {
                let mut v = 0u64;
                // SAFETY: reads 8 bytes into a live u64 from our eventfd.
                let _ = unsafe { libc::read(fd.as_raw_fd(), (&mut v as *mut u64).cast(), 8) };
                return; // woken on purpose: no spacing
            }
        }
        if n > 0 {
            if let Some(rest) = MIN_SPACING.checked_sub(started.elapsed()) {
                std::thread::sleep(rest);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn sleeps_to_the_timeout_and_wakes_early_when_told() {
        let w = Waker::new();
        let t = Instant::now();
        w.sleep(Duration::from_millis(30), false, &mut Vec::new());
        assert!(
            t.elapsed() >= Duration::from_millis(25),
            "{:?}",
            t.elapsed()
        );
        w.wake();
        let t = Instant::now();
        w.sleep(Duration::from_secs(10), false, &mut Vec::new());
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "a wake before the sleep ends it"
        );
    }

    #[test]
    fn a_ready_socket_ends_the_sleep() {
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        std::io::Write::write_all(&mut b, b"x").unwrap();
        let mut fds = vec![libc::pollfd {
            fd: a.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        let t = Instant::now();
        Waker::new().sleep(Duration::from_secs(10), false, &mut fds);
        assert!(t.elapsed() < Duration::from_secs(5));
        assert!(t.elapsed() >= MIN_SPACING);
    }
}
