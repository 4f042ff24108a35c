//! A session's frame durations in a fixed-size form that still gives every
//! order-free metric at the precision steadyhud prints it
//! (docs/metrics.md, "The summary of a running session"): the
//! [`FineHistogram`].
//!
//! Cells, ascending:
//! - below [`EXACT_BELOW_NS`] (66 µs), one cell per nanosecond: exact;
//! - up to [`SPLIT_BELOW_NS`] (1 ms), each microsecond cut into equal
//!   cells of w ns, w the largest divisor of 1,000 not above the gap
//!   between two frame budgets there (4 ns at 66 µs, 500 ns just below
//!   1 ms: 18,289 cells in all);
//! - up to [`DENSE_BELOW_NS`] (100 ms), one cell per microsecond
//!   [k µs, k µs + 999 ns];
//!
//!   these three in pages of [`PAGE`] cells, each page with its
//!   totals so a query skips whole pages; a page is allocated when a frame
//!   first lands in it and holds only the cells frames landed in (so a
//!   game's jitter, which over minutes touches scattered microseconds of
//!   its frame time's tail, costs a cell per microsecond met, not a page:
//!   the growth by time that issue 52's soaks at 144 fps measured);
//! - above, the same microsecond cells in a sparse map (only the
//!   microseconds a frame took).
//!
//! A cell wider than 1 ns keeps its frames, their time, how many lasted
//! exactly its lower edge (the one value in its microsecond whose
//! two-decimal rounding in ms can differ from the rest's: every cell
//! starts where a microsecond or a part of one does), and, when a frame
//! budget 1/f s of a whole f falls inside it (at most one does: the
//! budgets near d are d²/(1e9 + d) ns apart or more, no less than a cell's
//! width), the frames and time above that budget. So:
//! - the count and time of the frames slower than any whole f are exact
//!   (Steady / Mostly Steady / Typical FPS, the STK curve, the time over
//!   budget: bit for bit the exact log's);
//! - a time-weighted percentile lands in the same cell part as the exact
//!   one, and is reported as that part's mean: the exact value, or one in
//!   the same (lo, lo + 999 ns] that prints the same to 0.01 ms;
//! - a classic low is exact but for the frames it takes from the one cell
//!   part the k-th longest frame lies in, counted at that part's mean.

use super::options::NS_PER_S;
use super::sorted::PPM;
use super::steady::{SlowFrames, StkBound};
use super::time_metrics::TimeDistribution;
use std::collections::BTreeMap;

/// Below this, one cell per ns (66 µs: a multiple of 1 µs, where the gap
/// between two frame budgets 1/f s reaches 4 ns, the first divisor of
/// 1,000 above 1 that fits it).
pub const EXACT_BELOW_NS: u64 = 66_000;
/// Below this, microseconds are cut into cells narrower than the gap
/// between two budgets ([`SUB_WIDTH`]); from it, budgets are over 999 ns
/// apart and a microsecond cell holds at most one.
pub const SPLIT_BELOW_NS: u64 = 1_000_000;
/// Below this, cells are stored densely (paged); above, sparse.
pub const DENSE_BELOW_NS: u64 = 100_000_000;
const US: u64 = 1_000;
/// Cells per page.
pub const PAGE: usize = 64;
const _: () = assert!(PAGE <= 256, "a cell's index in its page is a u8");

const FIRST_SPLIT_US: usize = (EXACT_BELOW_NS / US) as usize;
const SPLIT_US: usize = (SPLIT_BELOW_NS / US) as usize;

/// Cell width (ns) in each microsecond u from 66 to 999: the largest
/// divisor of 1,000 not above u²·1e6 / (1e9 + u·1e3), the least gap
/// between two budgets 1/f s in that microsecond (two budgets in one cell
/// [lo, lo + w − 1] would be less than w − 1 apart).
const SUB_WIDTH: [u16; SPLIT_US] = {
    const DIVISORS: [u64; 16] = [
        1000, 500, 250, 200, 125, 100, 50, 40, 25, 20, 10, 8, 5, 4, 2, 1,
    ];
    let mut w = [0u16; SPLIT_US];
    let mut u = FIRST_SPLIT_US;
    while u < SPLIT_US {
        let lo = u as u64 * US;
        let gap = lo * lo / (1_000_000_000 + lo);
        let mut i = 0;
        while DIVISORS[i] > gap {
            i += 1;
        }
        w[u] = DIVISORS[i] as u16;
        u += 1;
    }
    w
};

/// Index of microsecond u's first cell among the cut microseconds'
/// (`SUB_START[SPLIT_US]`: how many there are).
const SUB_START: [u32; SPLIT_US + 1] = {
    let mut start = [0u32; SPLIT_US + 1];
    let mut u = FIRST_SPLIT_US;
    while u < SPLIT_US {
        start[u + 1] = start[u] + (US / SUB_WIDTH[u] as u64) as u32;
        u += 1;
    }
    start
};
const SUB_CELLS: usize = SUB_START[SPLIT_US] as usize;
/// First dense index of the cut microseconds' cells, and of the whole
/// microseconds' from 1 ms.
const FIRST_SUB: usize = EXACT_BELOW_NS as usize;
const FIRST_US: usize = FIRST_SUB + SUB_CELLS;
const DENSE_CELLS: usize = FIRST_US + ((DENSE_BELOW_NS - SPLIT_BELOW_NS) / US) as usize;
const PAGES: usize = DENSE_CELLS.div_ceil(PAGE);

/// The frames of one cell [lo, lo + width − 1].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Cell {
    frames: u64,
    /// Σ (d − lo), ns.
    off: u64,
    /// Frames of exactly `lo`.
    edge: u64,
    /// Frames above the budget that splits the cell, and their Σ (d − lo).
    hi_frames: u64,
    hi_off: u64,
}

/// One part of a cell, where its frames sort: those of exactly `lo`, the
/// rest up to the budget that splits it, the rest above.
#[derive(Clone, Copy, Debug)]
struct Part {
    frames: u64,
    time: u128,
    /// Every frame of the part lasts `lo`.
    exact: bool,
    lo: u64,
}

impl Part {
    /// The value the part stands for: exact, or its mean (floor, ns).
    fn value(&self) -> u64 {
        if self.exact || self.frames == 0 {
            self.lo
        } else {
            (self.time / u128::from(self.frames)) as u64
        }
    }

    /// The time of the `take` longest of its frames: exact when it is all
    /// of them or they all last `lo`, else `take` × its mean, rounded.
    fn longest(&self, take: u64) -> u128 {
        if take == self.frames {
            self.time
        } else if self.exact {
            u128::from(take) * u128::from(self.lo)
        } else {
            let f = u128::from(self.frames);
            (u128::from(take) * self.time + f / 2) / f
        }
    }
}

/// The whole f whose budget 1/f s falls in the cell at `lo` (it is split
/// there: a frame is above it iff d·f > 1e9, and some of the cell's
/// values are, some not).
fn split_fps(lo: u64) -> Option<u64> {
    let f = NS_PER_S / lo.max(1);
    let last = lo + width(lo) - 1;
    (f >= 1 && u128::from(f) * u128::from(last) > u128::from(NS_PER_S)).then_some(f)
}

/// Width of the cell at `lo`, ns.
fn width(lo: u64) -> u64 {
    if lo < EXACT_BELOW_NS {
        1
    } else if lo < SPLIT_BELOW_NS {
        u64::from(SUB_WIDTH[(lo / US) as usize])
    } else {
        US
    }
}

/// Dense index of the cell holding `d` (< [`DENSE_BELOW_NS`]).
fn index_of(d: u64) -> usize {
    if d < EXACT_BELOW_NS {
        d as usize
    } else if d < SPLIT_BELOW_NS {
        let u = (d / US) as usize;
        FIRST_SUB + SUB_START[u] as usize + ((d % US) / u64::from(SUB_WIDTH[u])) as usize
    } else {
        FIRST_US + (d / US - SPLIT_BELOW_NS / US) as usize
    }
}

impl Cell {
    fn add(&mut self, d: u64, lo: u64) {
        self.frames += 1;
        self.off += d - lo;
        if d == lo {
            self.edge += 1;
        }
        if split_fps(lo).is_some_and(|f| u128::from(d) * u128::from(f) > u128::from(NS_PER_S)) {
            self.hi_frames += 1;
            self.hi_off += d - lo;
        }
    }

    fn time(&self, lo: u64) -> u128 {
        u128::from(self.frames) * u128::from(lo) + u128::from(self.off)
    }

    /// The cell's parts, ascending.
    fn parts(&self, lo: u64) -> [Part; 3] {
        let l = u128::from(lo);
        let rest = self.frames - self.hi_frames - self.edge;
        [
            Part {
                frames: self.edge,
                time: u128::from(self.edge) * l,
                exact: true,
                lo,
            },
            Part {
                frames: rest,
                time: u128::from(rest) * l + u128::from(self.off - self.hi_off),
                exact: width(lo) == 1,
                lo,
            },
            Part {
                frames: self.hi_frames,
                time: u128::from(self.hi_frames) * l + u128::from(self.hi_off),
                exact: false,
                lo,
            },
        ]
    }

    /// Count and time of its frames with d·f > 1e9.
    fn slow(&self, lo: u64, f: u64) -> (u64, u128) {
        let (f128, s) = (u128::from(f), u128::from(NS_PER_S));
        if u128::from(lo) * f128 > s {
            (self.frames, self.time(lo))
        } else if u128::from(lo + width(lo) - 1) * f128 <= s {
            (0, 0)
        } else {
            // The budget of f falls inside: the cell is split at it.
            debug_assert_eq!(split_fps(lo), Some(f));
            let hi = self.parts(lo)[2];
            (hi.frames, hi.time)
        }
    }
}

/// Lower edge of dense cell `k`.
fn lo_of(k: usize) -> u64 {
    if k < FIRST_SUB {
        k as u64
    } else if k < FIRST_US {
        let i = (k - FIRST_SUB) as u32;
        // The microsecond whose cells hold i: the last start at or below it.
        let u = SUB_START.partition_point(|&s| s <= i) - 1;
        u as u64 * US + u64::from(i - SUB_START[u]) * u64::from(SUB_WIDTH[u])
    } else {
        ((k - FIRST_US) as u64 + SPLIT_BELOW_NS / US) * US
    }
}

/// A page of dense cells and its totals.
#[derive(Clone, Debug, Default)]
struct Page {
    /// The cells frames landed in, by their index in the page, ascending.
    cells: Vec<(u8, Cell)>,
    frames: u64,
    time: u128,
}

impl Page {
    /// The cell at index `j` of the page, made when a frame first lands in it.
    fn cell(&mut self, j: usize) -> &mut Cell {
        let j = j as u8;
        let at = match self.cells.binary_search_by_key(&j, |c| c.0) {
            Ok(at) => at,
            Err(at) => {
                // Doubling from one cell: a page met once costs one cell.
                if self.cells.len() == self.cells.capacity() {
                    self.cells.reserve_exact(self.cells.len().max(1));
                }
                self.cells.insert(at, (j, Cell::default()));
                at
            }
        };
        &mut self.cells[at].1
    }
}

/// A session's durations in fixed size (module doc).
#[derive(Clone, Debug)]
pub struct FineHistogram {
    pages: Vec<Option<Box<Page>>>,
    /// Microsecond cells at and above [`DENSE_BELOW_NS`], by lower edge.
    sparse: BTreeMap<u64, Cell>,
    frames: u64,
    total: u128,
    shortest: Option<u64>,
}

impl Default for FineHistogram {
    fn default() -> Self {
        FineHistogram {
            pages: vec![None; PAGES],
            sparse: BTreeMap::new(),
            frames: 0,
            total: 0,
            shortest: None,
        }
    }
}

/// What a walk over the cells meets ([`FineHistogram::walk`]).
enum Seen<'a> {
    /// A dense page's frames and time: answer true to take it whole
    /// (skip its cells).
    Page(u64, u128),
    /// A non-empty cell part: answer true to stop.
    Part(&'a Part),
}

/// Hands a cell's non-empty parts to `visit` in order; true if it stopped.
fn visit_cell(c: &Cell, lo: u64, rev: bool, visit: &mut dyn FnMut(Seen) -> bool) -> bool {
    let mut parts = c.parts(lo);
    if rev {
        parts.reverse();
    }
    parts
        .iter()
        .filter(|p| p.frames > 0)
        .any(|p| visit(Seen::Part(p)))
}

impl FineHistogram {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a frame of `d` ns.
    pub fn push(&mut self, d: u64) {
        self.frames += 1;
        self.total += u128::from(d);
        if d > 0 && self.shortest.is_none_or(|s| d < s) {
            self.shortest = Some(d);
        }
        if d >= DENSE_BELOW_NS {
            let lo = d / US * US;
            self.sparse.entry(lo).or_default().add(d, lo);
            return;
        }
        let k = index_of(d);
        let page = self.pages[k / PAGE].get_or_insert_with(Box::default);
        let lo = lo_of(k);
        page.cell(k % PAGE).add(d, lo);
        page.frames += 1;
        page.time += u128::from(d);
    }

    /// N.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// T, ns.
    pub fn total_ns(&self) -> u128 {
        self.total
    }

    /// The shortest positive frame, ns.
    pub fn shortest_ns(&self) -> Option<u64> {
        self.shortest
    }

    /// Bytes held (pages and sparse cells, roughly): what the state costs.
    pub fn heap_bytes(&self) -> usize {
        self.pages.len() * std::mem::size_of::<Option<Box<Page>>>()
            + self
                .pages
                .iter()
                .flatten()
                .map(|p| {
                    std::mem::size_of::<Page>()
                        + p.cells.capacity() * std::mem::size_of::<(u8, Cell)>()
                })
                .sum::<usize>()
            + self.sparse.len() * (std::mem::size_of::<Cell>() + 16)
    }

    /// Every dense page and non-empty cell part, ascending (`rev`:
    /// descending), to `visit` until it says stop ([`Seen`]).
    fn walk(&self, rev: bool, visit: &mut dyn FnMut(Seen) -> bool) {
        let dense = |visit: &mut dyn FnMut(Seen) -> bool| -> bool {
            for n in 0..PAGES {
                let i = if rev { PAGES - 1 - n } else { n };
                let Some(p) = self.pages[i].as_ref() else {
                    continue;
                };
                if visit(Seen::Page(p.frames, p.time)) {
                    continue;
                }
                let mut cell = |(j, c): &(u8, Cell)| {
                    visit_cell(c, lo_of(i * PAGE + usize::from(*j)), rev, visit)
                };
                let found = if rev {
                    p.cells.iter().rev().any(&mut cell)
                } else {
                    p.cells.iter().any(&mut cell)
                };
                if found {
                    return true;
                }
            }
            false
        };
        let sparse = |visit: &mut dyn FnMut(Seen) -> bool| -> bool {
            if rev {
                self.sparse
                    .iter()
                    .rev()
                    .any(|(&lo, c)| visit_cell(c, lo, rev, visit))
            } else {
                self.sparse
                    .iter()
                    .any(|(&lo, c)| visit_cell(c, lo, rev, visit))
            }
        };
        type Half<'a> = &'a dyn Fn(&mut dyn FnMut(Seen) -> bool) -> bool;
        let (first, then): (Half, Half) = if rev {
            (&sparse, &dense)
        } else {
            (&dense, &sparse)
        };
        let _ = first(visit) || then(visit);
    }

    /// Time-weighted percentile at `p_ppm` (docs/metrics.md): the value of
    /// the first cell part whose running time reaches p·T, the part that
    /// holds the exact s_j. `None` if empty.
    pub fn percentile_ppm(&self, p_ppm: u64) -> Option<u64> {
        if self.frames == 0 {
            return None;
        }
        let target = u128::from(p_ppm.min(PPM)) * self.total;
        let reached = |c: u128| c * u128::from(PPM) >= target;
        let (mut cum, mut last, mut found) = (0u128, 0u64, None);
        self.walk(false, &mut |seen| match seen {
            Seen::Page(_, time) => {
                let skip = !reached(cum + time);
                if skip {
                    cum += time;
                }
                skip
            }
            Seen::Part(p) => {
                cum += p.time;
                last = p.value();
                if reached(cum) {
                    found = Some(last);
                }
                found.is_some()
            }
        });
        Some(found.unwrap_or(last))
    }

    /// Classic low: k = max(1, ⌊N·p⌋) longest frames, k / their time (the
    /// part holding the k-th longest counts its mean for the frames taken
    /// from it). `None` if empty.
    pub fn classic_low_fps(&self, p_ppm: u64) -> Option<f64> {
        let n = self.frames;
        if n == 0 {
            return None;
        }
        let k = ((u128::from(n) * u128::from(p_ppm)) / u128::from(PPM)).max(1) as u64;
        let k = k.min(n);
        let (mut left, mut sum) = (k, 0u128);
        self.walk(true, &mut |seen| match seen {
            Seen::Page(frames, time) => {
                let skip = frames <= left;
                if skip {
                    left -= frames;
                    sum += time;
                }
                skip
            }
            Seen::Part(p) => {
                let take = left.min(p.frames);
                sum += p.longest(take);
                left -= take;
                left == 0
            }
        });
        Some(k as f64 * NS_PER_S as f64 / sum as f64)
    }
}

impl SlowFrames for FineHistogram {
    fn slow_frames(&self, f: u64) -> (u64, u128) {
        let (f128, s) = (u128::from(f), u128::from(NS_PER_S));
        let (mut c, mut t) = (0u64, 0u128);
        // Cells ascend: once one is not slow at all, none below it is.
        let none_below = |lo: u64| u128::from(lo + width(lo) - 1) * f128 <= s;
        for (&lo, cell) in self.sparse.iter().rev() {
            let (n, time) = cell.slow(lo, f);
            c += n;
            t += time;
            if none_below(lo) {
                return (c, t);
            }
        }
        for (i, p) in self.pages.iter().enumerate().rev() {
            let Some(p) = p else { continue };
            if u128::from(lo_of(i * PAGE)) * f128 > s {
                c += p.frames;
                t += p.time;
                continue;
            }
            for (j, cell) in p.cells.iter().rev() {
                let lo = lo_of(i * PAGE + usize::from(*j));
                let (n, time) = cell.slow(lo, f);
                c += n;
                t += time;
                if none_below(lo) {
                    return (c, t);
                }
            }
        }
        (c, t)
    }
    fn frame_count(&self) -> u64 {
        self.frames
    }
    fn slow_total_ns(&self) -> u128 {
        self.total
    }
    fn shortest_positive_ns(&self) -> Option<u64> {
        self.shortest
    }
}

impl TimeDistribution for FineHistogram {
    fn frames(&self) -> u64 {
        self.frames
    }
    fn total_ns(&self) -> u128 {
        self.total
    }
    fn percentile_ms(&self, p_ppm: u64) -> Option<f64> {
        self.percentile_ppm(p_ppm).map(|d| d as f64 / 1e6)
    }
    fn classic_low_fps(&self, p_ppm: u64) -> Option<f64> {
        FineHistogram::classic_low_fps(self, p_ppm)
    }
    fn stk_fps(&self, bound: StkBound) -> u32 {
        SlowFrames::stk_fps(self, bound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every dense cell is whole: index and edge agree, cells tile the
    /// range without gaps, and no cell holds two frame budgets (the
    /// split keeps one). A 1,750 fps game's frames broke the last: with
    /// microsecond cells below 1 ms, 571,500 / 572,500 / 571,900 ns gave
    /// 3 frames slower than 1,749 fps where 2 are.
    #[test]
    fn cells_tile_the_range_and_hold_one_budget_at_most() {
        let mut next = 0u64;
        for k in 0..DENSE_CELLS {
            let (lo, w) = (lo_of(k), width(lo_of(k)));
            assert_eq!(lo, next, "cell {k} starts where the last ended");
            assert_eq!(index_of(lo), k);
            assert_eq!(index_of(lo + w - 1), k);
            assert_eq!(
                lo / US,
                (lo + w - 1) / US,
                "cell {k} inside one microsecond"
            );
            let budgets = NS_PER_S / lo.max(1) - NS_PER_S / (lo + w - 1).max(1);
            assert!(
                budgets <= 1,
                "cell {k} at {lo} (+{w}) holds {budgets} budgets"
            );
            next = lo + w;
        }
        assert_eq!(next, DENSE_BELOW_NS);
    }

    #[test]
    fn frames_faster_than_1000_fps_are_counted_exactly() {
        let d = [571_500u64, 572_500, 571_900];
        let mut h = FineHistogram::new();
        d.iter().for_each(|&x| h.push(x));
        for f in 1_740..1_760u64 {
            let slow: Vec<u64> = d.iter().copied().filter(|&x| x * f > NS_PER_S).collect();
            assert_eq!(
                h.slow_frames(f),
                (slow.len() as u64, slow.iter().map(|&x| u128::from(x)).sum()),
                "{f} fps"
            );
        }
    }
}
