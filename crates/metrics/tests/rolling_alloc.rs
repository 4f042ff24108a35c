//! The HUD's window queried ten times a second allocates nothing the size
//! of the window once it has been queried (issue 52): the sorted durations
//! and their block sums are built in the buffers of the last query, OSC is
//! decided in one pass. An uncapped game's window holds 50,000 frames;
//! each query allocated and freed ~2 MB before, which made its RSS swing
//! by as much in the soak. Counted by this test's own allocator, on this
//! thread only.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use steadyhud_metrics::{summarize, Options, Rolling};

struct Counting;

thread_local! {
    static BYTES: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded to `System` unchanged; only a counter moves.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let _ = BYTES.try_with(|b| b.set(b.get() + l.size() as u64));
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` came from `System` with layout `l`.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        let _ = BYTES.try_with(|b| b.set(b.get() + n as u64));
        // SAFETY: as above.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn bytes() -> u64 {
    BYTES.with(Cell::get)
}

#[test]
fn a_query_allocates_nothing_the_size_of_the_window() {
    let opts = Options::default();
    // 10 s of frames of ~200 µs (5,000 fps), a 30 ms stutter every 997.
    let mut r = Rolling::new(10_000_000_000, 200_000, opts);
    let frame = |i: u64| {
        if i % 997 == 500 {
            30_000_000
        } else {
            150_000 + i.wrapping_mul(2_654_435_761) % 100_000
        }
    };
    let mut i = 0u64;
    // The window full (its 10 s).
    while i < 60_000 {
        r.push(frame(i));
        i += 1;
    }
    let mut worst = 0u64;
    for round in 0..20 {
        // A tenth of a second of frames, then the HUD's query.
        for _ in 0..500 {
            r.push(frame(i));
            i += 1;
        }
        if round < 2 {
            let _ = r.summary_and_flags();
            continue;
        }
        let before = bytes();
        let (s, flags) = r.summary_and_flags().unwrap();
        let spent = bytes() - before;
        // The flags (a byte a frame) go to the HUD; the summary's stutter
        // list is the window's stutters.
        worst = worst.max(spent - flags.len() as u64);
        assert_eq!(Some(&s), summarize(&r.frames(), &opts).as_ref());
    }
    eprintln!(
        "a query of {} frames allocated {worst} bytes besides its flags",
        r.len()
    );
    assert!(r.len() >= 40_000);
    assert!(worst <= 4_096, "{worst} bytes a query");
}
