//! A session of any length in constant memory: after `new`, feeding
//! `LatencyTracker` and `LatencySummary` a long session (presents, inputs,
//! answers late and out of order, drops, unknowns, a full queue, refused
//! inputs) allocates nothing. Counted by this test's own allocator, on
//! this thread only.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use steadyhud_metrics::display::Seen;
use steadyhud_metrics::latency::{
    InputLimits, InputSource, LatencySummary, LatencyTracker, Markers, Present, PENDING_FRAMES,
};

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|a| a.set(a.get() + 1));
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|a| a.set(a.get() + 1));
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn allocs() -> u64 {
    ALLOCS.with(Cell::get)
}

const MS: u64 = 1_000_000;

#[test]
fn a_long_session_allocates_nothing_after_new() {
    let mut t = LatencyTracker::new(10_000 * MS, InputLimits::default());
    let mut s = LatencySummary::new();
    let before = allocs();
    let mut rows = 0u64;
    let mut shown = 0u64;
    // 1,000,000 frames of 1 ms; an input every 3rd frame (three on every
    // 300th), a burst of 400 inputs once (past the input queue); answers
    // 3 frames late, every 7th frame dropped, every 50th unknown, and for
    // frames 500,000.. 500,999 no answer at all (the queue fills).
    for k in 0..1_000_000u64 {
        let call = k * MS + 700_000;
        let marker = (k % 2 == 0).then_some(k * MS + 100_000);
        let p = Present {
            id: k,
            call_ns: call,
            return_ns: call + 200_000,
            markers: Markers {
                simulation_start_ns: marker,
                ..Markers::default()
            },
        };
        if let Some(r) = t.present(p) {
            s.push(&r);
            rows += 1;
        }
        let now = call + 250_000;
        if k % 3 == 0 {
            let _ = t.input(now - 50_000, InputSource::Key, now);
        }
        if k % 300 == 0 {
            let _ = t.input(now - 40_000, InputSource::Button, now);
            let _ = t.input(now - 30_000, InputSource::Motion, now);
            // Refused: in the future, and far in the past.
            let _ = t.input(now + 10 * MS, InputSource::Key, now);
            let _ = t.input(now.saturating_sub(5_000 * MS), InputSource::Button, now);
        }
        if k == 10_000 {
            for i in 0..400 {
                let _ = t.input(now - 20_000 + i, InputSource::Motion, now);
            }
        }
        if k >= 3 && !(500_000..501_000).contains(&(k - 3)) {
            let j = k - 3;
            let fate = if j % 7 == 0 {
                Seen::Dropped
            } else if j % 50 == 0 {
                Seen::Unknown
            } else {
                shown += 1;
                Seen::At {
                    displayed_ns: j * MS + 3 * MS,
                    latency_ns: 0,
                }
            };
            t.fate(j, fate);
        }
        t.inputs_until(now);
        while let Some(r) = t.next_row() {
            s.push(&r);
            rows += 1;
        }
    }
    while let Some(r) = t.finish() {
        s.push(&r);
        rows += 1;
    }
    assert_eq!(allocs(), before, "allocations while tracking");
    assert_eq!(rows, 1_000_000);
    assert!(shown > 800_000);
    // The queue did fill, inputs were refused, and the summary has samples.
    // The 1,000 frames without an answer were pushed out by later ones,
    // once PENDING_FRAMES of them waited.
    assert_eq!(t.stats().forced_rows, 1_000);
    const { assert!(PENDING_FRAMES < 1_000) };
    assert!(t.stats().rejected.iter().sum::<u64>() > 0);
    let st = s.stats(|k| k.name().to_string());
    assert!(st
        .iter()
        .all(|(_, v)| v.as_ref().is_some_and(|v| v.frames > 100_000)));
}
