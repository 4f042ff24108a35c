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

/// A stream counting with `table` and its analysis, logging into `dir`,
/// with the default options.
pub(super) fn counted_stream(
    dir: &std::path::Path,
    table: &Arc<steadyhud_counters::Counters>,
) -> (Arc<Stream>, StreamAnalysis) {
    counted_stream_with(dir, table, false)
}

/// [`counted_stream`], with display times when `display`.
fn counted_stream_with(
    dir: &std::path::Path,
    table: &Arc<steadyhud_counters::Counters>,
    display: bool,
) -> (Arc<Stream>, StreamAnalysis) {
    let (stream, (cons, vcons, dcons)) = Stream::with_display(1, 0, Some(table.clone()), display);
    let a = StreamAnalysis::with_counters(
        stream.clone(),
        (cons, vcons, None, dcons),
        Log::pending(Some(dir.to_path_buf())),
        10.0,
        Options::default(),
        ClientState::for_tests(),
        Arc::default(),
    );
    (stream, a)
}

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

/// Frame i's display answer in [`display_session`], its present at `t`:
/// shown 2.4–2.6 ms after it (at the nanosecond), every 13th dropped,
/// every 1,001st without an answer.
fn fate(i: u64, t: u64) -> steadyhud_log::display::Shown {
    use steadyhud_log::display::{Shown, Source};
    let source = Source::Wayland;
    if i % 13 == 5 {
        Shown::Dropped { source }
    } else if i % 1_001 == 7 {
        Shown::Unknown
    } else {
        Shown::At {
            source,
            displayed_ns: t + 2_400_000 + i.wrapping_mul(40_503) % 200_000,
            refresh_ns: 16_666_667,
        }
    }
}

/// The session of [`a_long_session_runs_in_constant_memory`]; with
/// `display`, each present answered ([`fate`]) as a window with display
/// times is.
fn session(display: bool) {
    use steadyhud_counters::{Counters, Unit, MAX_COUNTERS};
    let dir = tempfile::tempdir().unwrap();
    let table = Arc::new(Counters::new());
    let submits = table.register("submits", "submits", Unit::Count).unwrap();
    let (stream, mut a) = counted_stream_with(dir.path(), &table, display);
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
            let key = stream.record_with(t, Some(&vals));
            if let (true, Some(key)) = (display, key) {
                // Present i ends frame i - 1.
                let shown = fate(i.saturating_sub(1), key);
                stream.answer(crate::rings::Answer {
                    present_t: key,
                    shown,
                });
            }
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
    let what = if display { " with display times" } else { "" };
    eprintln!(
        "heap after the warm-up{what}: +{live} B at the end, +{worst_live} B at worst at rest, \
         peak +{peak} B, over {} frames",
        FRAMES - WARM_UP
    );
    if display {
        let csv = super::summary_test::csv_in(dir.path());
        let s = super::summary_test::read_json(&steadyhud_log::summary_path_for(&csv));
        let d = &s["display"];
        assert_eq!(d["presented_frames"], FRAMES - 1, "{d}");
        assert!(d["dropped_frames"].as_u64().unwrap() > 100_000, "{d}");
        assert!(d["frames"].as_u64().unwrap() > 1_000_000, "{d}");
    }
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
    in_child(
        "a_long_session_runs_in_constant_memory",
        "heap after the warm-up",
        || session(false),
    );
}

/// The same session in a window with display times (Wayland presentation
/// feedback, X11 Present): its summary's `display` block comes from a
/// fixed-size state too, not from every row's answer and duration.
#[test]
fn a_long_session_with_display_times_runs_in_constant_memory() {
    in_child(
        "a_long_session_with_display_times_runs_in_constant_memory",
        "heap after the warm-up",
        || session(true),
    );
}

/// Frames between two stutters of [`stutter_session`], and the stutters
/// at its two measured writes.
const STUTTER_EVERY: u64 = 20;
const STUTTERS_FIRST: u64 = 5_000;
const STUTTERS_LAST: u64 = 20_000;
/// What a session may keep per stutter: its compact cause record and its
/// frame index in the stutter list.
const KEPT_PER_STUTTER: isize = 64;
/// What a write's peak may gain over 15,000 more stutters (the shared
/// lists' chunk pointers, nothing per stutter).
const WRITE_GROWTH_BOUND: isize = 16 * 1024;
/// What one write may take above the state at rest, at 20,000 stutters.
const WRITE_PEAK_BOUND: isize = 256 * 1024;

/// Frame `i` of the stutter session: 1 ms, every 20th 30 ms, with its
/// counters (latched at present i + 1): 0.1 ms of pipeline creation and 2
/// submits, a stutter's frame 20 ms of pipeline creation and, every third
/// stutter, 12 submits (a cause naming two counters).
fn stutter_frame(i: u64) -> (u64, u64, u64) {
    let ms = 1_000_000;
    match i % STUTTER_EVERY {
        10 if (i / STUTTER_EVERY).is_multiple_of(3) => (30 * ms, 20 * ms, 12),
        10 => (30 * ms, 20 * ms, 2),
        _ => (ms, ms / 10, 2),
    }
}

/// Issue 52's per-stutter part: 20,000 stutters, each with a counter
/// cause, periodic summary writes; measured at the writes at 5,000 and
/// 20,000 stutters: what the session keeps per stutter (at rest, writer
/// idle), and how far above that one write's heap peaks (the snapshot on
/// this thread, the file's serialization on the writer's).
fn stutter_session() {
    use steadyhud_counters::{Counters, Unit, MAX_COUNTERS};
    let dir = tempfile::tempdir().unwrap();
    let table = Arc::new(Counters::new());
    let pipe = table
        .register("pipeline_create_ms", "pipeline creation", Unit::Nanos)
        .unwrap();
    let submits = table.register("submits", "submits", Unit::Count).unwrap();
    let (stream, mut a) = counted_stream(dir.path(), &table);
    let mut w = upkeep::Writer::default();
    let mut buf = vec![0u64; 4096];
    let start = Instant::now();
    let mut t = 1_000_000_000u64;
    let mut vals = [0u64; MAX_COUNTERS];
    let mut measured: Vec<(isize, isize)> = Vec::new();
    let frames = STUTTERS_LAST * STUTTER_EVERY + STUTTER_EVERY / 2;
    let mut writes = 0u64;
    for i in 0..=frames {
        if i > 0 {
            let (_, p, s) = stutter_frame(i - 1);
            table.add(pipe, p);
            table.add(submits, s);
        }
        table.latch(&mut vals);
        stream.record_with(t, Some(&vals));
        t += stutter_frame(i).0;
        let at = [STUTTERS_FIRST, STUTTERS_LAST].map(|n| n * STUTTER_EVERY + STUTTER_EVERY / 2);
        if i % 5_000 != 0 && !at.contains(&i) {
            continue;
        }
        a.drain(&mut buf);
        w.stop();
        let measure = at.contains(&i);
        let rest = LIVE.load(Ordering::Relaxed);
        PEAK.store(rest, Ordering::Relaxed);
        // Always due: an hour after the last write.
        writes += 1;
        a.keep_summary(start + Duration::from_secs(3_600 * writes), &mut w, 1);
        w.stop();
        if measure {
            measured.push((rest, PEAK.load(Ordering::Relaxed) - rest));
        }
    }
    let dir_csv = super::summary_test::csv_in(dir.path());
    let written = super::summary_test::read_json(&steadyhud_log::summary_path_for(&dir_csv));
    let causes = written["stutter_causes"].as_array().unwrap();
    assert_eq!(
        causes.len() as u64,
        STUTTERS_LAST,
        "every stutter has its cause"
    );
    assert_eq!(causes[0]["counters"].as_array().unwrap().len(), 2);
    let [(rest1, peak1), (rest2, peak2)] = measured[..] else {
        panic!("{measured:?}")
    };
    let per_stutter = (rest2 - rest1) / (STUTTERS_LAST - STUTTERS_FIRST) as isize;
    eprintln!(
        "stutters: {per_stutter} B kept per stutter; a write peaks +{peak1} B at {STUTTERS_FIRST} \
         stutters, +{peak2} B at {STUTTERS_LAST}"
    );
    a.finish(&mut buf, 1);
    assert!(
        per_stutter <= KEPT_PER_STUTTER,
        "{per_stutter} B kept per stutter (bound {KEPT_PER_STUTTER})"
    );
    assert!(
        peak2 <= WRITE_PEAK_BOUND,
        "a write at {STUTTERS_LAST} stutters peaked {peak2} B above the state (bound {WRITE_PEAK_BOUND})"
    );
    assert!(
        peak2 - peak1 <= WRITE_GROWTH_BOUND,
        "a write's peak grew by {} B over {} stutters (bound {WRITE_GROWTH_BOUND})",
        peak2 - peak1,
        STUTTERS_LAST - STUTTERS_FIRST
    );
}

/// The stutter session, in a child process of this test binary.
#[test]
fn stutters_keep_a_fixed_record_and_writes_do_not_grow_with_them() {
    in_child(
        "stutters_keep_a_fixed_record_and_writes_do_not_grow_with_them",
        "stutters: ",
        stutter_session,
    );
}

/// Runs `body` (the test `name` of this module) alone in a child process
/// of this test binary, whose allocator then counts only its heap; the
/// child's lines starting with `says` are shown.
fn in_child(name: &str, says: &str, body: fn()) {
    if std::env::var_os(CHILD).is_some() {
        body();
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            &format!("analysis::memory_test::{name}"),
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    for line in text.lines().filter(|l| l.starts_with(says)) {
        eprintln!("{line}");
    }
    assert!(out.status.success(), "{text}");
    assert!(text.contains(says), "the child ran nothing: {text}");
}
