//! The query ring of one queue ([`QueueTimer`]): [`SLOTS`] timestamp
//! pairs, reserved and stamped by the submit hook (the one producer: the
//! app serializes submits on a queue), read in order and freed by the
//! analysis thread (the one consumer), which turns them into
//! [`Interval`]s.

use super::objects::{Fns, QueueObjects, SLOTS};
use super::patch::TimingScratch;
use crate::guard;
use ash::vk;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use steadyhud_capture::gpu_times::{Collected, Interval};
use steadyhud_sys::clock::now_ns;

/// A slot whose submission failed (nothing will ever be written).
const FAILED: u64 = u64::MAX;
/// A reserved slot whose CPU time is not stamped yet.
const UNSTAMPED: u64 = 0;
/// Results not available this long after the submit are given up (a
/// batch waiting on a semaphore that is never signalled, a lost device).
const GIVE_UP_NS: u64 = 2_000_000_000;

/// Timing state of one queue of the app's.
pub struct QueueTimer {
    pub queue: vk::Queue,
    family: u32,
    /// Mask of the valid timestamp bits.
    mask: u64,
    objects: OnceLock<Option<QueueObjects>>,
    /// Slots reserved (producer: the submit hook).
    head: AtomicU64,
    /// Slots read (consumer: the analysis thread).
    tail: AtomicU64,
    submit_ns: Box<[AtomicU64]>,
    /// Per slot, the begin timestamp its last use read (the analysis
    /// thread's): the same value again is the old results, not yet reset.
    last_begin: Box<[AtomicU64]>,
    pub(super) scratch: Mutex<TimingScratch>,
}

impl QueueTimer {
    /// The ring of `queue`, in `family`, whose timestamps have `bits` valid
    /// bits (more than 0).
    pub(super) fn new(queue: vk::Queue, family: u32, bits: u32) -> QueueTimer {
        QueueTimer {
            queue,
            family,
            mask: if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            },
            objects: OnceLock::new(),
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            submit_ns: (0..SLOTS).map(|_| AtomicU64::new(UNSTAMPED)).collect(),
            last_begin: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
            scratch: Mutex::new(TimingScratch::default()),
        }
    }

    /// The queue's objects, if they were made and making them worked.
    pub(super) fn made(&self) -> Option<&QueueObjects> {
        self.objects.get()?.as_ref()
    }

    /// The queue's objects, made now if this is its first timed submit
    /// (`.1`); `None` if making them failed (timing stays off for it).
    pub(super) fn objects(&self, fns: &Fns) -> Option<(&QueueObjects, bool)> {
        let mut made = false;
        let o = self.objects.get_or_init(|| {
            made = true;
            // SAFETY: live device; no queue is used.
            match unsafe { QueueObjects::new(&fns.device, self.family, fns.host_memory.as_ref()) } {
                Ok(o) => Some(o),
                Err(e) => {
                    guard::say(format_args!("steadyhud: GPU timing off for a queue: {e:?}"));
                    None
                }
            }
        });
        o.as_ref().map(|o| (o, made))
    }

    /// Reserves the next slot, or `None` (counted) when the ring is full.
    pub(super) fn reserve(&self, ring_full: &AtomicU64) -> Option<usize> {
        let head = self.head.load(Ordering::Relaxed);
        if head - self.tail.load(Ordering::Acquire) >= SLOTS as u64 {
            ring_full.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let k = (head % SLOTS as u64) as usize;
        self.submit_ns[k].store(UNSTAMPED, Ordering::Relaxed);
        self.head.store(head + 1, Ordering::Release);
        // Stamped after the slot is visible, so a poll that does not see the
        // slot yet knows its stamp will be later than the poll.
        self.submit_ns[k].store(now_ns(), Ordering::Release);
        Some(k)
    }

    /// Slot `k`'s (begin, end) timestamps, if its current use has both.
    fn results(&self, fns: &Fns, o: &QueueObjects, k: usize) -> Option<(u64, u64)> {
        if let Some(host) = &o.host {
            return host.take(k);
        }
        let mut r = [[0u64; 2]; 2];
        // SAFETY: live pool (alive checked by the poll); no WAIT.
        let got = unsafe {
            fns.device.get_query_pool_results(
                o.query_pool,
                2 * k as u32,
                &mut r,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WITH_AVAILABILITY,
            )
        };
        let available = got.is_ok() && r[0][1] != 0 && r[1][1] != 0;
        // The previous use's results until the begin command buffer resets
        // the pair (a fresh pool reads as zeros on some drivers: 0 is the
        // first "previous" value).
        let last = &self.last_begin[k];
        if !available || r[0][0] == last.load(Ordering::Relaxed) {
            return None;
        }
        last.store(r[0][0], Ordering::Relaxed);
        Some((r[0][0], r[1][0]))
    }

    /// After the real submit: a failed one never writes its queries.
    pub(super) fn settle(&self, scratch: &mut TimingScratch, r: vk::Result) {
        if r != vk::Result::SUCCESS {
            for &k in &scratch.slots {
                self.submit_ns[k].store(FAILED, Ordering::Release);
            }
        }
        scratch.slots.clear();
    }

    /// Reads finished slots in order into `out` (timestamps of `period_ns`
    /// each; results that never came are counted in `given_up`); returns
    /// the submit time of the oldest slot still pending (`None`: none
    /// pending).
    pub(super) fn read(
        &self,
        fns: &Fns,
        period_ns: f64,
        given_up: &AtomicU64,
        o: &QueueObjects,
        now: u64,
        out: &mut Collected,
    ) -> Option<u64> {
        let head = self.head.load(Ordering::Acquire);
        let mut tail = self.tail.load(Ordering::Relaxed);
        let mut pending = None;
        while tail < head {
            let k = (tail % SLOTS as u64) as usize;
            let submit = self.submit_ns[k].load(Ordering::Acquire);
            if submit == UNSTAMPED {
                pending = Some(now.saturating_sub(1_000_000));
                break;
            }
            if submit != FAILED {
                match self.results(fns, o, k) {
                    Some((begin, end)) => {
                        let ticks = end.wrapping_sub(begin) & self.mask;
                        let gpu_start = (begin as f64 * period_ns) as u64;
                        let offset = out.offset(submit, gpu_start);
                        let start = (gpu_start as i128 + offset).max(0) as u64;
                        let end = start + (ticks as f64 * period_ns) as u64;
                        insert_by_submit(
                            &mut out.intervals,
                            Interval {
                                submit_ns: submit,
                                start_ns: start,
                                end_ns: end,
                            },
                        );
                    }
                    None if now.saturating_sub(submit) < GIVE_UP_NS => {
                        pending = Some(submit);
                        break;
                    }
                    None => {
                        given_up.fetch_add(1, Ordering::Relaxed);
                        if let Some(h) = &o.host {
                            h.clear(k);
                        }
                    }
                }
            }
            tail += 1;
            self.tail.store(tail, Ordering::Release);
        }
        pending
    }
}

/// Inserts keeping `out` ordered by submit time (queues interleave).
fn insert_by_submit(out: &mut VecDeque<Interval>, i: Interval) {
    let at = out.partition_point(|x| x.submit_ns <= i.submit_ns);
    out.insert(at, i);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_stay_ordered_by_submit_time() {
        let mut q = VecDeque::new();
        for s in [5, 1, 3, 3, 9] {
            insert_by_submit(
                &mut q,
                Interval {
                    submit_ns: s,
                    start_ns: s * 10,
                    end_ns: s * 10 + 1,
                },
            );
        }
        let got: Vec<u64> = q.iter().map(|i| i.submit_ns).collect();
        assert_eq!(got, [1, 3, 3, 5, 9]);
    }
}
