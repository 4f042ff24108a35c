//! Present capture: the only code on the game's present path that records
//! timing. One [`Stream`] per presented surface (window); each present pushes
//! its CLOCK_MONOTONIC entry timestamp into the stream's `ringbuf` SPSC ring,
//! which the analysis thread drains.
//!
//! Why a ring per surface: Vulkan requires presents to one swapchain to be
//! externally synchronized, and a game presents a window from one thread, so
//! the producer mutex of a stream is taken only by the presents of that
//! window: it is never contended in practice, yet stays correct if an app
//! does present one surface from two threads. The mutex also lets us keep the
//! ring strictly increasing (a timestamp not after the previous one is bumped
//! by 1 ns), so every present is one row and durations are never zero.
//! Push is a bounded copy of 8 bytes: no allocation, no I/O, no blocking.
//! A full ring increments an overflow counter the log reports.
//!
//! With statistics counters on, a stream also has a second, smaller ring of
//! [`CounterFrame`]s (the device's counters latched at the present, tagged
//! with the same timestamp), pushed under the same lock so both rings stay
//! in order (the counter entry first, so a consumer that sees a timestamp
//! also sees its counters); the analysis thread pairs them by timestamp, and
//! a frame whose counter entry was lost to a full ring gets zeros. Such
//! losses are counted like timestamp overflows and the log records them.
//!
//! A window whose presents have a source of display times (Wayland
//! presentation feedback, X11 Present) also has a display ring of [`Answer`]s, one per
//! present: what the source said of it, or that it was not asked
//! ([`Stream::not_asked`], pushed by the present hook). Answers come
//! later and from whichever thread dispatched them, so they carry their
//! present's timestamp (the one [`Stream::record_with`] returned) and
//! are pushed under a lock of their own.

use crate::limiter::Pacer;
use crate::live::LiveCell;
use ringbuf::traits::{Producer, Split};
use ringbuf::{HeapCons, HeapProd, HeapRb};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use steadyhud_counters::{Counters, FrameValues};
use steadyhud_log::display::{Shown, Source};
use steadyhud_sys::lock::{Hold, Recover};
use steadyhud_sys::tail::Tail;
use steadyhud_wayland::presentation::{Outcome, Sink};
use steadyhud_x11present::matcher::Outcome as X11Outcome;

/// Ring capacity in timestamps: 65 s of frames at 1000 fps, far beyond the
/// analysis thread's drain period (≤ 250 ms while a log is written, at
/// most about a second).
pub const RING_CAPACITY: usize = 1 << 16;

/// Counter ring capacity in frames (168 bytes each): 4 s at 1000 fps,
/// still far beyond the analysis thread's drain period.
pub const COUNTER_RING_CAPACITY: usize = 1 << 12;

/// Display ring capacity in answers: 4 s at 1000 fps.
pub const DISPLAY_RING_CAPACITY: usize = 1 << 12;

/// What became of one present on its way to the screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The present's timestamp ([`Stream::record_with`]'s).
    pub present_t: u64,
    /// [`Shown::Unknown`]: the present was not asked about.
    pub shown: Shown,
}

impl Default for Answer {
    fn default() -> Self {
        Answer {
            present_t: 0,
            shown: Shown::Unknown,
        }
    }
}

/// One present's latched counters, tagged with its (ring) timestamp.
#[derive(Clone, Copy, Debug)]
pub struct CounterFrame {
    pub t: u64,
    pub values: FrameValues,
}

impl Default for CounterFrame {
    fn default() -> Self {
        CounterFrame {
            t: 0,
            values: [0; steadyhud_counters::MAX_COUNTERS],
        }
    }
}

pub use steadyhud_sys::clock::now_ns;

/// An empty ring of `capacity` whose memory has been written once, so no
/// present ever pays for the first touch of one of its pages (a page
/// fault: one present in 23 would take one for the first 4,096 frames of
/// the counter ring, measured at ~20 µs each).
fn prefaulted<T: Copy + Default>(capacity: usize) -> HeapRb<T> {
    use ringbuf::traits::{Consumer, Producer};
    let mut rb = HeapRb::<T>::new(capacity);
    while rb.try_push(T::default()).is_ok() {}
    rb.clear();
    rb
}

struct ProducerSide {
    prod: HeapProd<u64>,
    vals: Option<HeapProd<CounterFrame>>,
    last: u64,
}

/// The presents of one surface, as seen by the present hook and the HUD.
pub struct Stream {
    /// Process-wide number of this stream (1 = first window presented).
    pub id: u64,
    /// Dispatch key of the device whose swapchains feed the stream.
    pub device_key: usize,
    producer: Mutex<ProducerSide>,
    overflows: AtomicU64,
    counter_overflows: AtomicU64,
    pushed: AtomicU64,
    /// Newest rolling statistics, published by the analysis thread.
    pub live: LiveCell,
    /// The device's statistics counters, when it counts.
    pub counters: Option<Arc<Counters>>,
    /// Where each present's timestamp also goes once the log is open, so
    /// a killed game's last frames can be logged ([`steadyhud_sys::tail`]).
    tail: OnceLock<Tail>,
    /// The display ring, when the window has a source of display times.
    display: Option<Mutex<HeapProd<Answer>>>,
    display_overflows: AtomicU64,
    /// The frame cap's schedule: the cap paces each window on its own
    /// (docs/design.md, "The frame cap paces windows"), on Vulkan and GL
    /// alike. Locked only while a cap is on, by the presenting thread.
    pacer: Mutex<Pacer>,
}

/// The consumer ends a stream's analysis reads: timestamps, and the
/// counter and display rings when the stream has them.
pub type Consumers = (
    HeapCons<u64>,
    Option<HeapCons<CounterFrame>>,
    Option<HeapCons<Answer>>,
);

impl Stream {
    /// A new stream and the consumer end of its ring (for the analysis thread).
    pub fn new(id: u64, device_key: usize) -> (Arc<Stream>, HeapCons<u64>) {
        let (s, cons, _) = Stream::with_counters(id, device_key, None);
        (s, cons)
    }

    /// A new stream that also carries `counters`' frame values; returns the
    /// consumer of the counter ring too when `counters` is given.
    pub fn with_counters(
        id: u64,
        device_key: usize,
        counters: Option<Arc<Counters>>,
    ) -> (Arc<Stream>, HeapCons<u64>, Option<HeapCons<CounterFrame>>) {
        let (s, (cons, vcons, _)) = Stream::with_display(id, device_key, counters, false);
        (s, cons, vcons)
    }

    /// [`Stream::with_counters`], plus a display ring when `display`.
    pub fn with_display(
        id: u64,
        device_key: usize,
        counters: Option<Arc<Counters>>,
        display: bool,
    ) -> (Arc<Stream>, Consumers) {
        let (prod, cons) = prefaulted::<u64>(RING_CAPACITY).split();
        let (display, dcons) = if display {
            let (p, c) = prefaulted::<Answer>(DISPLAY_RING_CAPACITY).split();
            (Some(Mutex::new(p)), Some(c))
        } else {
            (None, None)
        };
        let (vals, vcons) = match counters {
            Some(_) => {
                let (p, c) = prefaulted::<CounterFrame>(COUNTER_RING_CAPACITY).split();
                (Some(p), Some(c))
            }
            None => (None, None),
        };
        let s = Stream {
            id,
            device_key,
            producer: Mutex::new(ProducerSide {
                prod,
                vals,
                last: 0,
            }),
            overflows: AtomicU64::new(0),
            counter_overflows: AtomicU64::new(0),
            pushed: AtomicU64::new(0),
            live: LiveCell::default(),
            counters,
            tail: OnceLock::new(),
            display,
            display_overflows: AtomicU64::new(0),
            pacer: Mutex::default(),
        };
        (Arc::new(s), (cons, vcons, dcons))
    }

    /// The deadline this window's present arriving at `now` waits for
    /// under a cap of `fps` ([`Pacer::deadline`]); advances its schedule.
    #[inline]
    pub fn cap_deadline(&self, now: u64, fps: u32) -> Option<u64> {
        self.pacer.lock_or_recover().deadline(now, fps)
    }

    /// Queues one present timestamp. Never blocks on the consumer.
    #[inline]
    pub fn record(&self, t_ns: u64) {
        let _ = self.record_with(t_ns, None);
    }

    /// Whether the window has a source of display times (a display ring).
    #[inline]
    pub fn has_display(&self) -> bool {
        self.display.is_some()
    }

    /// Queues an answer (any source: a present's key is the timestamp
    /// [`Stream::record_with`] returned); a full ring drops it (its frame
    /// is then unknown) and counts it. Without a display ring, nothing.
    #[inline]
    pub fn answer(&self, a: Answer) {
        let Some(ring) = self.display.as_ref() else {
            return;
        };
        if ring.hold().try_push(a).is_err() {
            self.display_overflows.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The present at `present_t` was not asked about (no answer will
    /// come): its frame is known to be unknown at once.
    #[inline]
    pub fn not_asked(&self, present_t: u64) {
        self.answer(Answer {
            present_t,
            shown: Shown::Unknown,
        });
    }

    /// Answers dropped because the display ring was full.
    pub fn display_overflows(&self) -> u64 {
        self.display_overflows.load(Ordering::Relaxed)
    }

    /// Queues one present timestamp and, when given and this stream has a
    /// counter ring, the counters latched at it. A full counter ring drops
    /// only the counter entry (that frame's counters read as 0) and counts it.
    /// Returns the timestamp as queued (strictly after the previous one:
    /// the present's key for its display answer), `None` when the ring
    /// was full.
    #[inline]
    pub fn record_with(&self, t_ns: u64, values: Option<&FrameValues>) -> Option<u64> {
        let mut p = self.producer.hold();
        let t = if t_ns > p.last { t_ns } else { p.last + 1 };
        // Counters first: once the consumer sees timestamp t, t's counter
        // entry is already in its ring (release on the counter ring's tail
        // happens before the one on the timestamp ring's). An entry whose
        // timestamp then finds the ring full is dropped by the consumer at
        // the next timestamp.
        if let (Some(v), Some(ring)) = (values, p.vals.as_mut()) {
            if ring.try_push(CounterFrame { t, values: *v }).is_err() {
                self.counter_overflows.fetch_add(1, Ordering::Relaxed);
            }
        }
        if p.prod.try_push(t).is_ok() {
            p.last = t;
            let index = self.pushed.fetch_add(1, Ordering::Relaxed);
            if let Some(tail) = self.tail.get() {
                tail.put(index, t);
            }
            Some(t)
        } else {
            self.overflows.fetch_add(1, Ordering::Relaxed);
            None
        }
    }

    /// Timestamps dropped because the ring was full.
    pub fn overflows(&self) -> u64 {
        self.overflows.load(Ordering::Relaxed)
    }

    /// Frames whose counters were dropped because the counter ring was full.
    pub fn counter_overflows(&self) -> u64 {
        self.counter_overflows.load(Ordering::Relaxed)
    }

    /// Timestamps queued so far.
    pub fn pushed(&self) -> u64 {
        self.pushed.load(Ordering::Relaxed)
    }

    /// From now on every queued timestamp also goes to `tail`. Returns how
    /// many were queued before: timestamps `0..k`, which only the consumer
    /// can still put there ([`Tail::fill`]). `None` when a
    /// tail was attached already.
    pub fn attach_tail(&self, tail: Tail) -> Option<u64> {
        // Under the producer's lock, so no present falls between the count
        // and the attachment.
        let _p = self.producer.lock_or_recover();
        let k = self.pushed();
        tail.set_count(k);
        self.tail.set(tail).ok()?;
        Some(k)
    }

    /// The attached tail, if any.
    pub fn tail(&self) -> Option<&Tail> {
        self.tail.get()
    }
}

/// Wayland presentation feedback reaches the frame's stream.
impl Sink for Stream {
    fn feedback(&self, present_t: u64, outcome: Outcome) {
        let source = Source::Wayland;
        let shown = match outcome {
            Outcome::Presented {
                displayed_ns,
                refresh_ns,
                ..
            } => Shown::At {
                source,
                displayed_ns,
                refresh_ns: u64::from(refresh_ns),
            },
            Outcome::Discarded => Shown::Dropped { source },
        };
        self.answer(Answer { present_t, shown });
    }
}

/// X11 Present's completes reach the frame's stream.
impl steadyhud_x11present::observer::Sink for Stream {
    fn x11_answer(&self, present_t: u64, outcome: X11Outcome) {
        let source = Source::X11Present;
        let shown = match outcome {
            X11Outcome::Shown {
                displayed_ns,
                refresh_ns,
            } => Shown::At {
                source,
                displayed_ns,
                refresh_ns,
            },
            X11Outcome::Skipped => Shown::Dropped { source },
            X11Outcome::Unknown => Shown::Unknown,
        };
        self.answer(Answer { present_t, shown });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringbuf::traits::Consumer;

    /// A consumer racing the producer always finds a timestamp's counters.
    #[test]
    fn counters_are_visible_with_their_timestamp() {
        let table = Arc::new(Counters::new());
        table
            .register("n", "n", steadyhud_counters::Unit::Count)
            .unwrap();
        let (s, mut cons, vcons) = Stream::with_counters(1, 0, Some(table));
        let mut vcons = vcons.unwrap();
        const N: u64 = 200_000;
        let consumed = AtomicU64::new(0);
        std::thread::scope(|scope| {
            let (s2, consumed) = (s.clone(), &consumed);
            scope.spawn(move || {
                for t in 1..=N {
                    let mut v = [0u64; steadyhud_counters::MAX_COUNTERS];
                    v[0] = t * 3;
                    // Keep the 4096-entry counter ring from filling.
                    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(10);
                    while t > consumed.load(Ordering::Relaxed) + 1000
                        && std::time::Instant::now() < give_up
                    {
                        std::thread::yield_now(); // (gives up if the consumer failed)
                    }
                    s2.record_with(t, Some(&v));
                }
            });
            let mut seen = 0u64;
            while seen < N {
                while let Some(t) = cons.try_pop() {
                    let f = vcons
                        .try_peek()
                        .copied()
                        .expect("counter entry visible with its timestamp");
                    assert_eq!((f.t, f.values[0]), (t, t * 3));
                    vcons.try_pop();
                    seen += 1;
                    consumed.store(seen, Ordering::Relaxed);
                }
            }
        });
    }

    /// X11 Present's outcomes reach the display ring as the frame's
    /// answer: shown at ust with the refresh, Skip dropped, unknown as is.
    #[test]
    fn x11_answers_reach_the_display_ring() {
        use steadyhud_x11present::observer::Sink as _;
        let (s, (_, _, d)) = Stream::with_display(1, 0, None, true);
        let mut d = d.expect("a display ring");
        let source = Source::X11Present;
        s.x11_answer(
            10,
            X11Outcome::Shown {
                displayed_ns: 25,
                refresh_ns: 16_666_666,
            },
        );
        s.x11_answer(11, X11Outcome::Skipped);
        s.x11_answer(12, X11Outcome::Unknown);
        let got: Vec<Answer> = d.pop_iter().collect();
        assert_eq!(
            got,
            vec![
                Answer {
                    present_t: 10,
                    shown: Shown::At {
                        source,
                        displayed_ns: 25,
                        refresh_ns: 16_666_666
                    }
                },
                Answer {
                    present_t: 11,
                    shown: Shown::Dropped { source }
                },
                Answer {
                    present_t: 12,
                    shown: Shown::Unknown
                },
            ]
        );
    }

    #[test]
    fn record_keeps_order_and_counts_overflow() {
        let (s, mut cons) = Stream::new(1, 0);
        s.record(100);
        s.record(100); // same instant: bumped, still one frame
        s.record(50); // earlier (racing thread): bumped after the last
        let got: Vec<u64> = cons.pop_iter().collect();
        assert_eq!(got, vec![100, 101, 102]);
        for i in 0..RING_CAPACITY as u64 + 5 {
            s.record(1000 + i);
        }
        assert_eq!(s.overflows(), 5);
        assert_eq!(cons.pop_iter().count(), RING_CAPACITY);
    }

    /// A full counter ring drops (and counts) only the counters: every
    /// timestamp still arrives.
    #[test]
    fn counter_ring_overflow_is_counted() {
        let table = Arc::new(Counters::new());
        table
            .register("n", "n", steadyhud_counters::Unit::Count)
            .unwrap();
        let (s, mut cons, vcons) = Stream::with_counters(1, 0, Some(table));
        let v = [7u64; steadyhud_counters::MAX_COUNTERS];
        for t in 1..=COUNTER_RING_CAPACITY as u64 + 3 {
            s.record_with(t, Some(&v));
        }
        assert_eq!((s.counter_overflows(), s.overflows()), (3, 0));
        assert_eq!(cons.pop_iter().count(), COUNTER_RING_CAPACITY + 3);
        assert_eq!(vcons.unwrap().pop_iter().count(), COUNTER_RING_CAPACITY);
    }
}
