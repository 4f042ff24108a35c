//! The sliding-window engine behind the live HUD: frames enter one at a
//! time, frames whose present is older than the window (or beyond
//! `max_frames`) leave, and every query equals the whole-session functions
//! over exactly the frames in the window.
//!
//! Per push (O(log n)): the duration goes into a `VecDeque` and a `BTreeMap`
//! multiset; the frame 9 places from the newest end, whose 19-frame window
//! is now complete and can never change while it stays ≥ 9 places from the
//! oldest end, gets its stutter flag and quartile spread/ratio computed once.
//! Per query (O(n), no sort): walk the multiset in order for the sorted
//! durations and prefix sums, into buffers kept from the last query (the
//! HUD asks ten times a second: 0.5 MB at 5,000 fps allocated and freed
//! each time made the game's RSS swing by 2 MB, issue 52); recompute only
//! the ≤ 18 clipped edge frames; decide OSC in one pass (the P90 deciders
//! of the whole-session judge), keeping nothing per frame.

use super::options::Options;
use super::sorted::SortedDurations;
use super::stutter::{
    self, FrameShape, P90Above, WindowShapes, HALF_WINDOW, OSC_MIN_RATIO, OSC_MIN_SPREAD_NS, WINDOW,
};
use super::summary::{assemble_parts, Summary};
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};

/// One frame in the window.
#[derive(Clone, Copy, Debug)]
struct Slot {
    d: u64,
    /// The frame's shape over its full 19-frame window, kept while the
    /// frame is interior (≥ 9 frames on both sides inside the window).
    interior: Option<FrameShape>,
}

/// The last 19 pushed durations, in push order (a ring) and sorted: the
/// window of the frame that becomes interior at each push, kept sorted by
/// one replace-and-bubble step instead of a sort.
#[derive(Clone, Debug)]
struct Tail {
    ring: [u64; WINDOW],
    sorted: [u64; WINDOW],
    len: usize,
    next: usize,
}

impl Tail {
    fn new() -> Self {
        Tail {
            ring: [0; WINDOW],
            sorted: [0; WINDOW],
            len: 0,
            next: 0,
        }
    }

    fn push(&mut self, d: u64) {
        let mut i = if self.len < WINDOW {
            self.len += 1;
            self.len - 1
        } else {
            let old = self.ring[self.next];
            self.sorted.partition_point(|&x| x < old)
        };
        self.ring[self.next] = d;
        self.next = (self.next + 1) % WINDOW;
        let s = &mut self.sorted[..self.len];
        s[i] = d;
        while i > 0 && s[i - 1] > s[i] {
            s.swap(i - 1, i);
            i -= 1;
        }
        while i + 1 < s.len() && s[i + 1] < s[i] {
            s.swap(i, i + 1);
            i += 1;
        }
    }

    /// The sorted tail once it holds 19 frames.
    fn full(&self) -> Option<&[u64; WINDOW]> {
        (self.len == WINDOW).then_some(&self.sorted)
    }
}

/// Slots a window's buffer grows to by doubling before it is given all
/// it may need at once: 10 s at 409 fps.
pub(crate) const SMALL_WINDOW: usize = 4096;

/// Makes room in a sliding window's buffer for one more frame, the
/// window holding at most `max_frames` (and never more than 65,536
/// slots reserved). A window slides through its buffer, so every page of
/// it becomes resident within one lap: 2 MiB reserved up front was
/// resident memory growing for minutes at 144 fps (7.6 minutes a lap,
/// issue 52). So the buffer doubles up to [`SMALL_WINDOW`] slots (10 s at
/// 144 fps: 2,048), and a window that needs more gets its whole bound at
/// once, written once (`fill`) so it is resident from then on, not
/// lap by lap, and never grows again.
pub(crate) fn room_for_one_more<T>(buf: &mut VecDeque<T>, max_frames: usize, fill: impl Fn() -> T) {
    if buf.len() < buf.capacity() {
        return;
    }
    let bound = max_frames.saturating_add(1).min(1 << 16);
    if buf.len() < SMALL_WINDOW || buf.len() >= bound {
        return; // doubling (the default growth), or past the reserve
    }
    let held = buf.len();
    buf.reserve_exact(bound - held);
    while buf.len() < buf.capacity() {
        buf.push_back(fill());
    }
    buf.truncate(held);
}

/// Sliding-window engine for the live HUD: `summary()` equals
/// `summarize(&frames())` over the frames currently in the window.
#[derive(Clone, Debug)]
pub struct Rolling {
    window_ns: u64,
    max_frames: usize,
    opts: Options,
    slots: VecDeque<Slot>,
    /// Multiset of the durations in the window: duration → count.
    by_duration: BTreeMap<u64, u32>,
    /// Σ of the durations in the window, ns.
    window_sum: u128,
    /// Frames pushed since creation.
    pushed: u64,
    tail: Tail,
    /// The sorted durations' and block sums' buffers of the last query.
    scratch: RefCell<(Vec<u64>, Vec<u128>)>,
}

impl Rolling {
    /// `window_ns`: frames whose present is older than this (relative to the
    /// newest present) leave; `max_frames` bounds memory regardless.
    ///
    /// Frame i, ending at present t_{i+1}, stays while
    /// t_newest − t_{i+1} < `window_ns`; so `window_ns = 0` keeps nothing.
    pub fn new(window_ns: u64, max_frames: usize, opts: Options) -> Self {
        Rolling {
            window_ns,
            max_frames,
            opts,
            // See [`room_for_one_more`]: not reserved for `max_frames`.
            slots: VecDeque::new(),
            by_duration: BTreeMap::new(),
            window_sum: 0,
            pushed: 0,
            tail: Tail::new(),
            scratch: RefCell::default(),
        }
    }

    /// Adds the newest frame.
    pub fn push(&mut self, duration_ns: u64) {
        self.pushed += 1;
        self.tail.push(duration_ns);
        room_for_one_more(&mut self.slots, self.max_frames, || Slot {
            d: 0,
            interior: None,
        });
        self.slots.push_back(Slot {
            d: duration_ns,
            interior: None,
        });
        *self.by_duration.entry(duration_ns).or_insert(0) += 1;
        self.window_sum += u128::from(duration_ns);
        while let Some(oldest) = self.slots.front().map(|s| s.d) {
            let n = self.slots.len();
            // t_newest − t_{oldest+1} is the time of every frame after it.
            let age = self.window_sum - u128::from(oldest);
            if n <= self.max_frames && age < u128::from(self.window_ns) {
                break;
            }
            // The frame 9 places in becomes a clipped edge frame.
            if let Some(s) = self.slots.get_mut(HALF_WINDOW) {
                s.interior = None;
            }
            self.slots.pop_front();
            self.window_sum -= u128::from(oldest);
            if let Some(c) = self.by_duration.get_mut(&oldest) {
                *c -= 1;
                if *c == 0 {
                    self.by_duration.remove(&oldest);
                }
            }
        }
        // The frame 9 places from the newest end now has its 9 newer
        // neighbours; it is interior if it also has 9 older ones.
        // Its window is the last 19 pushed frames, all still in the window.
        let n = self.slots.len();
        if let (true, Some(window)) = (n >= WINDOW, self.tail.full()) {
            let i = n - 1 - HALF_WINDOW;
            let shape = stutter::frame_shape(window, self.slots[i].d, self.opts.stutter_threshold);
            self.slots[i].interior = Some(shape);
        }
    }

    /// Frames in the window, oldest first.
    pub fn frames(&self) -> Vec<u64> {
        self.iter().collect()
    }

    /// The frames in the window, oldest first, without a copy.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        self.slots.iter().map(|s| s.d)
    }

    /// Session-wide index of the oldest frame in the window.
    pub fn first_index(&self) -> u64 {
        self.pushed - self.slots.len() as u64
    }

    /// Bytes held (the frames' buffer and the multiset, roughly): what
    /// the window costs, all of it resident once the window has slid
    /// through its buffer.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot>()
            + self.by_duration.len() * (std::mem::size_of::<(u64, u32)>() + 16)
    }

    /// Frames in the window.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The window length given to [`Rolling::new`], ns.
    pub fn window_ns(&self) -> u64 {
        self.window_ns
    }

    /// The frame cap given to [`Rolling::new`].
    pub fn max_frames(&self) -> usize {
        self.max_frames
    }

    /// The options the window is judged with.
    pub fn options(&self) -> Options {
        self.opts
    }

    /// Frames pushed since creation.
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    /// The newest frame's duration, if it is still in the window.
    pub fn last(&self) -> Option<u64> {
        self.slots.back().map(|s| s.d)
    }

    /// The window's durations sorted with prefix sums (for percentiles, the
    /// STK curves via [`SortedDurations::stk_curve`], …), by an in-order walk
    /// of the multiset.
    pub fn sorted(&self) -> SortedDurations {
        self.sorted_in(Vec::with_capacity(self.slots.len()), Vec::new())
    }

    /// [`Rolling::sorted`] into the buffers `sorted` and `block_prefix`.
    fn sorted_in(&self, mut sorted: Vec<u64>, block_prefix: Vec<u128>) -> SortedDurations {
        sorted.clear();
        for (&d, &c) in &self.by_duration {
            sorted.extend(std::iter::repeat_n(d, c as usize));
        }
        SortedDurations::from_sorted_in(sorted, block_prefix)
    }

    /// `f` of [`Rolling::sorted`], built in the buffers of the last query
    /// and handing them back after: a query allocates nothing the size of
    /// the window once one has.
    fn with_sorted<R>(&self, f: impl FnOnce(&SortedDurations) -> R) -> R {
        let (buf, blocks) = self.scratch.take();
        let sorted = self.sorted_in(buf, blocks);
        let r = f(&sorted);
        *self.scratch.borrow_mut() = sorted.into_parts();
        r
    }

    /// The stutter frames of the window and its OSC flag, as
    /// [`Rolling::shapes`] gives them, in one pass keeping nothing per
    /// frame (the whole-session judge's P90 deciders; the shapes
    /// themselves only when a value is not finite: a frame of 0 ns).
    fn stutters_and_osc(&self) -> (Vec<usize>, bool) {
        let n = self.slots.len();
        let slots = &self.slots;
        let theta = self.opts.stutter_threshold;
        let (mut spread, mut ratio) = (
            P90Above::new(OSC_MIN_SPREAD_NS),
            P90Above::new(OSC_MIN_RATIO),
        );
        let mut frames = Vec::new();
        for (i, slot) in slots.iter().enumerate() {
            let s = slot
                .interior
                .unwrap_or_else(|| stutter::shape_at(|k| slots[k].d, i, n, theta));
            if s.stutter {
                frames.push(i);
            }
            spread.push(s.spread);
            ratio.push(s.ratio);
        }
        let osc = match (spread.decide(n), ratio.decide(n)) {
            (Some(s), Some(r)) => s && r,
            _ => self.shapes().osc(),
        };
        (frames, osc)
    }

    /// Every frame's shape over the current window, oldest first: interior
    /// frames' are stored, the clipped edge frames' recomputed.
    fn shapes(&self) -> WindowShapes {
        let n = self.slots.len();
        let slots = &self.slots;
        let theta = self.opts.stutter_threshold;
        let mut out = WindowShapes::with_capacity(n);
        for (i, slot) in slots.iter().enumerate() {
            out.push(
                slot.interior
                    .unwrap_or_else(|| stutter::shape_at(|k| slots[k].d, i, n, theta)),
            );
        }
        out
    }

    /// Stutter flag of each frame of the window, oldest first (the rule
    /// applied to the window as a session, as in `summary().stutter_frames`).
    pub fn stutter_flags(&self) -> Vec<bool> {
        flags_of(&self.stutters_and_osc().0, self.slots.len())
    }

    /// `summarize(&self.frames(), opts)`, computed incrementally.
    pub fn summary(&self) -> Option<Summary> {
        if self.slots.is_empty() {
            return None;
        }
        let (frames, osc) = self.stutters_and_osc();
        self.with_sorted(|sorted| {
            assemble_parts(sorted, frames, osc, &self.opts, |i| self.slots[i].d)
        })
    }

    /// [`Rolling::summary`] and [`Rolling::stutter_flags`] from one pass.
    pub fn summary_and_flags(&self) -> Option<(Summary, Vec<bool>)> {
        let summary = self.summary()?;
        let flags = flags_of(&summary.stutter_frames, self.slots.len());
        Some((summary, flags))
    }
}

fn flags_of(stutter_frames: &[usize], n: usize) -> Vec<bool> {
    let mut flags = vec![false; n];
    for &i in stutter_frames {
        flags[i] = true;
    }
    flags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_stays_sorted_with_ties() {
        let mut t = Tail::new();
        let mut pushed = Vec::new();
        for k in 0..200u64 {
            let d = (k * 37) % 11 + (k % 3) * 5;
            t.push(d);
            pushed.push(d);
            let mut want: Vec<u64> = pushed[pushed.len().saturating_sub(WINDOW)..].to_vec();
            want.sort_unstable();
            assert_eq!(&t.sorted[..t.len], &want[..], "after {k}");
        }
    }
    use crate::summary::summarize;

    const MS: u64 = 1_000_000;

    /// The window's buffer follows what it holds (issue 52): a 10 s
    /// window at 144 fps holds 1,440 frames, and the 200,000 the analysis
    /// thread allows are not reserved (2 MiB the sliding window touched
    /// page by page for 7.6 minutes: resident memory growing by time).
    /// A window past [`SMALL_WINDOW`] frames gets its whole bound at once
    /// and keeps it.
    #[test]
    fn the_buffer_follows_the_window_not_its_bound() {
        let mut r = Rolling::new(10_000 * MS, 200_000, Options::default());
        for i in 0..100_000u64 {
            r.push(6_944_444 + (i % 7) * 1_000);
        }
        assert!(r.len() > 1_400 && r.len() < 1_450, "{}", r.len());
        assert!(r.heap_bytes() <= 128 * 1024, "{} bytes", r.heap_bytes());
        let mut fast = Rolling::new(10_000 * MS, 200_000, Options::default());
        let mut reserved = None;
        for i in 0..200_000u64 {
            fast.push(250_000 + (i % 7) * 1_000);
            if i == 20_000 {
                reserved = Some(fast.slots.capacity());
            }
        }
        assert!(reserved >= Some(1 << 16), "{reserved:?}");
        assert_eq!(Some(fast.slots.capacity()), reserved);
        assert!(fast.len() > 1 << 15, "{}", fast.len());
    }

    #[test]
    fn window_membership_by_present_time() {
        // Window 50 ms of 10 ms frames: frame i stays while the time of the
        // frames after it is < 50 ms, i.e. at most 4 newer frames → 5 frames.
        let mut r = Rolling::new(50 * MS, 1000, Options::default());
        for _ in 0..20 {
            r.push(10 * MS);
        }
        assert_eq!(r.len(), 5);
        assert_eq!(r.first_index(), 15);
        // A 60 ms frame pushes everything older out.
        r.push(60 * MS);
        assert_eq!(r.frames(), vec![60 * MS]);
        assert_eq!(r.first_index(), 20);
    }

    #[test]
    fn max_frames_bounds_the_window() {
        let mut r = Rolling::new(u64::MAX, 7, Options::default());
        for i in 1..=30 {
            r.push(i * MS);
        }
        assert_eq!(r.frames(), (24..=30).map(|i| i * MS).collect::<Vec<_>>());
        assert_eq!(r.first_index(), 23);
        assert!(r.summary().is_some());
        let mut r = Rolling::new(u64::MAX, 0, Options::default());
        r.push(MS);
        assert!(r.is_empty());
        assert_eq!(r.summary(), None);
    }

    #[test]
    fn zero_window_keeps_nothing() {
        let mut r = Rolling::new(0, 100, Options::default());
        r.push(MS);
        assert!(r.is_empty());
        assert_eq!(r.first_index(), 1);
    }

    #[test]
    fn stutter_indices_are_relative_to_the_window() {
        // 100 frames of 10 ms with a 40 ms spike at session frame 80; the
        // window holds the last 40 frames, so the spike is at position 20.
        let mut r = Rolling::new(u64::MAX, 40, Options::default());
        let mut all = Vec::new();
        for i in 0..100 {
            let d = if i == 80 { 40 * MS } else { 10 * MS };
            all.push(d);
            r.push(d);
        }
        let s = r.summary().unwrap();
        assert_eq!(s.stutter_frames, vec![20]);
        assert_eq!(r.first_index(), 60);
        let flags = r.stutter_flags();
        assert_eq!(flags.iter().filter(|&&f| f).count(), 1);
        assert!(flags[20]);
        assert_eq!(Some(s), summarize(&all[60..], &Options::default()));
    }

    #[test]
    fn edge_frames_use_clipped_windows() {
        // After eviction a frame near the oldest end is judged by its clipped
        // window, not by the full one it had when it was interior: 20 ms
        // frames then 10 ms frames; the last 20 ms frame is a stutter only
        // once the window starts near it.
        let mut r = Rolling::new(u64::MAX, 25, Options::default());
        let mut all = Vec::new();
        let mut seen_edge_stutter = false;
        for i in 0..60 {
            let d = if i < 30 { 20 * MS } else { 10 * MS };
            all.push(d);
            r.push(d);
            let start = all.len().saturating_sub(25);
            let s = r.summary();
            assert_eq!(
                s,
                summarize(&all[start..], &Options::default()),
                "after {i}"
            );
            // Window = frames 29..=53: frame 29 (20 ms) among 10 ms frames.
            if i == 53 {
                assert_eq!(r.first_index(), 29);
                assert_eq!(s.unwrap().stutter_frames, vec![0]);
                seen_edge_stutter = true;
            }
        }
        assert!(seen_edge_stutter);
    }
}
