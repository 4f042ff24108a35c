//! A long session in constant memory (issue 52): a synthetic stream of
//! 1.5 M frames driven through what the analysis thread does for a window
//! (drain, rows with counter columns, live statistics, summary rewrites,
//! the control socket's `status` and `histogram`), no GPU; the heap is
//! counted by this test binary's global allocator ([`Counting`]).
//!
//! The allocator counts the whole process, so the measured body runs
//! alone in a child process of this test binary (the parent only checks
//! that the child passed).

use super::session::Log;
use super::stream::StreamAnalysis;
use super::upkeep;
use crate::client_state::ClientState;
use crate::rings::Stream;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use steadyhud_metrics::Options;

/// The system allocator, counting the bytes live and their peak.
pub struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

fn grew(by: isize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to `System` unchanged; only counters move.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        // SAFETY: the caller's layout, passed on.
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            grew(l.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        // SAFETY: as above.
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            grew(l.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` came from `System` with layout `l`.
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        // SAFETY: `p` came from `System` with layout `l`.
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            grew(new as isize - l.size() as isize);
        }
        q
    }
}

const CHILD: &str = "STEADYHUD_MEMORY_TEST_CHILD";

/// Frames of the session, and how many of them are warm-up.
const FRAMES: u64 = 1_500_000;
const WARM_UP: u64 = 60_000;
/// What the heap may grow by after the warm-up, at rest and at its peak
/// (a summary rewrite in flight).
const LIVE_BOUND: isize = 256 * 1024;
const PEAK_BOUND: isize = 4 * 1024 * 1024;

/// A frame of about 1 ms (a spread of 0.5–1.5 ms) with a 30 ms stutter
/// every 9,973 frames and a 2 s hitch every 100,000.
fn frame_ns(i: u64) -> u64 {
    if i % 100_000 == 99_999 {
        2_000_000_000
    } else if i % 9_973 == 500 {
        30_000_000
    } else {
        500_000 + (i.wrapping_mul(2_654_435_761) % 1_000_000)
    }
}

fn session() {
    use steadyhud_counters::{Counters, Unit, MAX_COUNTERS};
    let dir = tempfile::tempdir().unwrap();
    let table = Arc::new(Counters::new());
    let submits = table.register("submits", "submits", Unit::Count).unwrap();
    let (stream, cons, vcons) = Stream::with_counters(1, 0, Some(table.clone()));
    let mut a = StreamAnalysis::with_counters(
        stream.clone(),
        (cons, vcons, None, None),
        Log::pending(Some(dir.path().to_path_buf())),
        10.0,
        Options::default(),
        ClientState::for_tests(),
        Arc::default(),
    );
    let mut w = upkeep::Writer::default();
    let mut buf = vec![0u64; 4096];
    let start = Instant::now();
    let mut t = 1_000_000_000u64;
    let mut vals = [0u64; MAX_COUNTERS];
    let (mut baseline, mut worst_live) = (0isize, 0isize);
    let mut i = 0u64;
    while i < FRAMES {
        // One simulated second of frames, then the thread's work.
        let second = t / 1_000_000_000;
        while i < FRAMES && t / 1_000_000_000 == second {
            table.add(submits, 2);
            table.latch(&mut vals);
            stream.record_with(t, Some(&vals));
            t += frame_ns(i);
            i += 1;
        }
        a.drain(&mut buf);
        a.publish_live(10.0);
        let now = start + Duration::from_nanos(t);
        a.keep_summary(now, &mut w, 1);
        std::hint::black_box(a.histogram());
        std::hint::black_box(a.status(10.0));
        if i >= WARM_UP && baseline == 0 {
            w.stop();
            baseline = LIVE.load(Ordering::Relaxed);
            PEAK.store(baseline, Ordering::Relaxed);
        } else if baseline != 0 && second.is_multiple_of(100) {
            w.stop();
            worst_live = worst_live.max(LIVE.load(Ordering::Relaxed) - baseline);
        }
    }
    w.stop();
    let live = LIVE.load(Ordering::Relaxed) - baseline;
    let peak = PEAK.load(Ordering::Relaxed) - baseline;
    a.finish(&mut buf, 1);
    eprintln!(
        "heap after the warm-up: +{live} B at the end, +{worst_live} B at worst at rest, \
         peak +{peak} B, over {} frames",
        FRAMES - WARM_UP
    );
    assert!(
        live.max(worst_live) <= LIVE_BOUND,
        "the heap grew by {} B over {} frames (bound {LIVE_BOUND})",
        live.max(worst_live),
        FRAMES - WARM_UP
    );
    assert!(
        peak <= PEAK_BOUND,
        "the heap peaked {peak} B above the warm-up's (bound {PEAK_BOUND})"
    );
}

/// The session above, in a child process of this test binary.
#[test]
fn a_long_session_runs_in_constant_memory() {
    if std::env::var_os(CHILD).is_some() {
        session();
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "analysis::memory_test::a_long_session_runs_in_constant_memory",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    for line in text.lines().filter(|l| l.starts_with("heap after")) {
        eprintln!("{line}");
    }
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("heap after the warm-up"),
        "the child ran nothing: {text}"
    );
}
