//! The frame limiter (config `fps_limit`): the cap in force ([`FpsLimit`],
//! process-wide, cycled by the `toggle_fps_limit` hotkey) and the pacing
//! ([`Pacer`], per window: each capture stream has one) that holds each
//! window's presents to an absolute schedule.
//!
//! Pacing: deadline k = deadline k−1 + 1/f, in integer nanoseconds, so
//! there is no drift over hours. A present that comes before its deadline
//! waits for it: it sleeps until [`SPIN_NS`] before the deadline, then
//! spins (yielding) to the deadline, since a sleep wakes up late by tens to
//! hundreds of microseconds. A present that comes late keeps the schedule
//! (the next frame catches up) unless it is more than one interval late:
//! then the schedule restarts from now instead of letting the frames that
//! follow burst to catch up.
//!
//! Where it waits: with `fps_limit_method=late` (default) after the real
//! present returns, so the app samples input right after the wait (lowest
//! latency); with `early` at the start of the present hook, before the
//! timestamp. Frame times stay present to present; the wait is the
//! `limiter_wait_ms` counter and is not counted in `in_present_ms` nor in
//! `cpu_busy_ms`.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use steadyhud_sys::clock::now_ns;

/// Spin this long before a deadline instead of sleeping to it.
pub const SPIN_NS: u64 = 200_000;

/// The absolute schedule of one window's presents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pacer {
    interval_ns: u64,
    /// Deadline of the next present; 0 before the first.
    next: u64,
}

impl Pacer {
    /// The deadline the present arriving at `now` must wait for, if any,
    /// under a cap of `fps` (0 = off; resets the schedule). Advances the
    /// schedule.
    pub fn deadline(&mut self, now: u64, fps: u32) -> Option<u64> {
        if fps == 0 {
            *self = Pacer::default();
            return None;
        }
        let interval = 1_000_000_000 / u64::from(fps);
        if interval != self.interval_ns || self.next == 0 {
            // First present under this cap: it goes now, the next one
            // interval later.
            self.interval_ns = interval;
            self.next = now + interval;
            return None;
        }
        let due = self.next;
        if now > due + interval {
            // More than an interval late: restart rather than burst.
            self.next = now + interval;
            return None;
        }
        self.next = due + interval;
        (now < due).then_some(due)
    }
}

/// Sleeps until [`SPIN_NS`] before `deadline` (CLOCK_MONOTONIC ns), then
/// spins to it. Returns the time waited.
pub fn wait_until(deadline: u64) -> u64 {
    let start = now_ns();
    if deadline > start + SPIN_NS {
        let until = deadline - SPIN_NS;
        let ts = libc::timespec {
            tv_sec: (until / 1_000_000_000) as libc::time_t,
            tv_nsec: (until % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: a valid timespec; an absolute sleep on CLOCK_MONOTONIC
        // (EINTR just ends it early, the spin covers the rest).
        unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
    }
    while now_ns() < deadline {
        std::thread::yield_now();
    }
    now_ns().saturating_sub(start)
}

/// The caps the hotkey cycles through and the one in force.
#[derive(Debug, Default)]
pub struct FpsLimit {
    caps: Vec<u32>,
    index: AtomicUsize,
    current: AtomicU32,
}

impl FpsLimit {
    /// `caps` from config `fps_limit` (the first is in force; empty = off).
    pub fn new(caps: &[u32]) -> FpsLimit {
        FpsLimit {
            caps: caps.to_vec(),
            index: AtomicUsize::new(0),
            current: AtomicU32::new(caps.first().copied().unwrap_or(0)),
        }
    }

    /// The cap in force, fps (0 = off). One relaxed load: the present path.
    #[inline]
    pub fn fps(&self) -> u32 {
        self.current.load(Ordering::Relaxed)
    }

    /// Moves to the next cap of the list (the hotkey); returns it.
    pub fn cycle(&self) -> u32 {
        if self.caps.len() < 2 {
            return self.fps();
        }
        let i = (self.index.load(Ordering::Relaxed) + 1) % self.caps.len();
        self.index.store(i, Ordering::Relaxed);
        self.current.store(self.caps[i], Ordering::Relaxed);
        self.caps[i]
    }

    /// Puts `fps` in force (0 = off), as `steadyhud ctl limit` asks; the
    /// hotkey cycles on from where the list was.
    pub fn set(&self, fps: u32) {
        self.current.store(fps, Ordering::Relaxed);
    }

    /// Whether the hotkey has anything to cycle.
    pub fn cycles(&self) -> bool {
        self.caps.len() >= 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: u32 = 60;
    const I: u64 = 1_000_000_000 / 60;

    /// A fast app (presents every 1 ms, then waits as told) keeps the
    /// schedule exactly over a million frames: no drift.
    #[test]
    fn no_drift_over_a_million_frames() {
        let mut p = Pacer::default();
        let start = 5_000_000_000u64;
        let mut now = start;
        assert_eq!(p.deadline(now, F), None);
        for _ in 0..1_000_000u64 {
            now += 1_000_000; // the app's own work
            if let Some(d) = p.deadline(now, F) {
                assert!(d > now);
                now = d;
            }
        }
        assert_eq!(now, start + 1_000_000 * I);
    }

    /// A frame more than one interval late restarts the schedule from now:
    /// the frames after it are paced, not sent in a burst.
    #[test]
    fn restart_after_a_long_frame_without_burst() {
        let mut p = Pacer::default();
        let mut now = 1_000_000_000u64;
        p.deadline(now, F);
        now += I;
        assert_eq!(p.deadline(now, F), None); // exactly on time
        now += 10 * I; // a 10-interval hitch
        assert_eq!(p.deadline(now, F), None);
        // The next fast frame waits a whole interval after the late one.
        let after = now + 1_000;
        assert_eq!(p.deadline(after, F), Some(now + I));
    }

    /// Less than an interval late: the schedule is kept, so the next frame
    /// catches up (waits less) instead of the average slipping.
    #[test]
    fn slightly_late_frames_keep_the_schedule() {
        let mut p = Pacer::default();
        let t0 = 1_000_000_000u64;
        p.deadline(t0, F);
        let late = t0 + I + I / 2;
        assert_eq!(p.deadline(late, F), None);
        assert_eq!(p.deadline(late + 1, F), Some(t0 + 2 * I));
    }

    #[test]
    fn off_and_changes_reset() {
        let mut p = Pacer::default();
        p.deadline(100, F);
        assert_eq!(p.deadline(200, 0), None);
        assert_eq!(p, Pacer::default());
        assert_eq!(p.deadline(300, 144), None);
        assert_eq!(p.deadline(301, 144), Some(300 + 1_000_000_000 / 144));
        // A new cap starts a new schedule at once.
        assert_eq!(p.deadline(400, 30), None);
    }

    #[test]
    fn caps_cycle() {
        let l = FpsLimit::new(&[60, 90, 0]);
        assert_eq!(l.fps(), 60);
        assert_eq!(l.cycle(), 90);
        assert_eq!(l.cycle(), 0);
        assert_eq!(l.cycle(), 60);
        let off = FpsLimit::new(&[]);
        assert_eq!((off.fps(), off.cycles()), (0, false));
        off.set(75);
        assert_eq!(off.fps(), 75);
    }

    #[test]
    fn waits_until_the_deadline() {
        let d = now_ns() + 2_000_000;
        let waited = wait_until(d);
        assert!(now_ns() >= d);
        assert!(waited >= 1_000_000);
        assert!(wait_until(now_ns().saturating_sub(5)) < 1_000_000);
    }
}
