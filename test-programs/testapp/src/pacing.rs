//! Waiting for the next point of the absolute present schedule: sleep most of
//! the way, spin the last stretch so the present lands within microseconds.

use std::time::{Duration, Instant};

/// How long before the deadline we stop sleeping and start spinning.
const SPIN: Duration = Duration::from_micros(1500);

/// The absolute schedule of presents: point k = start + sum of the first k gaps.
/// Absolute (not relative to the previous present) so lateness never
/// accumulates into drift.
pub struct Schedule {
    next: Instant,
    /// Presents that started more than 2 ms after their scheduled point.
    pub late: u64,
    /// The largest lateness seen.
    pub worst_late: Duration,
    /// Schedule index (present number after the first) of the first late presents.
    pub late_at: Vec<u64>,
    index: u64,
}

impl Schedule {
    /// Starts the schedule at `start` (the first present).
    pub fn new(start: Instant) -> Schedule {
        Schedule {
            next: start,
            late: 0,
            worst_late: Duration::ZERO,
            late_at: Vec::new(),
            index: 0,
        }
    }

    /// Advances the schedule by `gap`; returns the new deadline.
    pub fn advance(&mut self, gap: Duration) -> Instant {
        self.next += gap;
        self.index += 1;
        self.next
    }

    /// Moves the rest of the schedule later by `d` (after injected work, so
    /// the frames after it keep their scripted gaps).
    pub fn shift(&mut self, d: Duration) {
        self.next += d;
    }

    /// Blocks until the current deadline (sleep, then spin).
    pub fn wait(&self) {
        sleep_until(self.next);
    }

    /// Records that the present of the current schedule point starts at
    /// `now` (taken right before vkQueuePresentKHR, after any preemption
    /// during the wait), counting it late if more than 2 ms past its point.
    pub fn entered(&mut self, now: Instant) {
        if now > self.next {
            let late = now - self.next;
            if late > Duration::from_millis(2) {
                self.late += 1;
                if self.late_at.len() < 16 {
                    self.late_at.push(self.index);
                }
            }
            self.worst_late = self.worst_late.max(late);
        }
    }
}

/// Sleeps until `deadline`, spinning for the final [`SPIN`].
pub fn sleep_until(deadline: Instant) {
    loop {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        let left = deadline - now;
        if left > SPIN {
            std::thread::sleep(left - SPIN);
        } else {
            std::hint::spin_loop();
        }
    }
}
