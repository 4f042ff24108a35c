//! A running session's displayed-frame statistics in fixed size
//! ([`DisplaySession`]): what the game keeps instead of every frame's
//! display answer, from which each summary write's `display` block is
//! computed (docs/metrics.md, "The summary of a running session"), the
//! [`DisplayStats`] that `analyze` computes from the log's rows.
//!
//! Fed one row at a time (its present duration and its [`Seen`]), it keeps:
//! - the counts (presented, dropped, unknown, per source) and the present
//!   time of all frames and of the dropped ones: exact;
//! - the shown frame whose time on screen D the next shown frame ends
//!   ([`shown_frames`]' rule for display times: a dropped frame leaves the
//!   chain, an unknown one breaks it);
//! - the display intervals D in frame order as a [`FineHistogram`] and a
//!   [`StutterStream`]: the interval metrics as the whole-session summary
//!   has them for frame times;
//! - the present-to-display latency, and the other value columns a log
//!   has (PC latency's terms, [`DisplaySession::set_values`]) with the
//!   terms derived from them ([`DERIVED`]), time-weighted by D
//!   ([`Weighted`]): the samples, Σ D and Σ v·D (exact mean) and the
//!   weights in microsecond cells (P99 at the printed precision).
//!
//! [`shown_frames`]: super::display::shown_frames

use super::display::{
    difference_column, less, DisplayStats, Seen, SeenColumns, ValueKey, ValueStats, DERIVED,
    NO_VALUE, P99_PPM,
};
use super::fine::FineHistogram;
use super::options::Options;
use super::sorted::PPM;
use super::whole::StutterStream;
use std::collections::BTreeMap;

/// The time-weighted distribution of a signed value (ns), each sample
/// weighted by its frame's time on screen D, in fixed size: one cell per
/// microsecond met, [k µs, k µs + 999 ns] (k floor), keeping the weight of
/// the samples of exactly its lower edge apart from the rest's and the
/// rest's Σ v·D. Its P99 lands in the same cell part as the exact one (the
/// sorted samples' first whose running weight reaches 99 %) and is that
/// part's value: its edge, or the rest's weighted mean, which lies in the
/// same (k µs, k µs + 999 ns] as the exact sample, an interval no
/// two-decimal rounding boundary (a multiple of 5 µs) is inside. The
/// mean is exact (integer sums).
#[derive(Clone, Debug, Default)]
pub struct Weighted {
    samples: u64,
    weight: u128,
    sum: i128,
    /// By microsecond (v floor-divided by 1,000).
    cells: BTreeMap<i64, WeightCell>,
}

/// One microsecond's samples.
#[derive(Clone, Copy, Debug, Default)]
struct WeightCell {
    /// Σ D of the samples of exactly the cell's lower edge.
    edge: u128,
    /// Σ D and Σ v·D of the rest.
    rest: u128,
    rest_sum: i128,
}

impl Weighted {
    /// Adds a sample of value `v` weighted `d`.
    pub fn push(&mut self, v: i64, d: u64) {
        let (v128, d128) = (i128::from(v), u128::from(d));
        self.samples += 1;
        self.weight += d128;
        self.sum += v128 * i128::from(d);
        let us = v.div_euclid(1_000);
        let cell = self.cells.entry(us).or_default();
        if v.rem_euclid(1_000) == 0 {
            cell.edge += d128;
        } else {
            cell.rest += d128;
            cell.rest_sum += v128 * i128::from(d);
        }
    }

    /// Bytes held (cells, roughly): what the state costs.
    pub fn heap_bytes(&self) -> usize {
        self.cells.len() * (std::mem::size_of::<(i64, WeightCell)>() + 16)
    }

    /// The time-weighted P99 (module doc), ns; `None` without a sample.
    fn p99(&self) -> Option<i128> {
        let target = u128::from(P99_PPM) * self.weight;
        let mut acc = 0u128;
        let mut last = None;
        for (&us, c) in &self.cells {
            let lo = i128::from(us) * 1_000;
            let rest = (c.rest > 0)
                .then(|| lo + (c.rest_sum - lo * c.rest as i128).div_euclid(c.rest as i128));
            for (w, value) in [(c.edge, Some(lo)), (c.rest, rest)] {
                if w == 0 {
                    continue;
                }
                acc += w;
                last = value;
                if acc * u128::from(PPM) >= target {
                    return last;
                }
            }
        }
        last
    }

    /// The statistics of the samples, `column` naming their source
    /// (`None` without a sample): those of [`DisplayStats`]' value columns.
    pub fn stats(&self, column: &str) -> Option<ValueStats> {
        let p99 = self.p99()?;
        let w = self.weight;
        Some(ValueStats {
            column: column.to_string(),
            frames: self.samples as usize,
            time_s: w as f64 / 1e9,
            mean_ms: self.sum as f64 / w as f64 / 1e6,
            p99_ms: p99 as f64 / 1e6,
        })
    }
}

/// A running session's displayed-frame statistics (module doc).
#[derive(Clone, Debug)]
pub struct DisplaySession {
    presented: usize,
    dropped: usize,
    unknown: usize,
    sources: BTreeMap<String, usize>,
    total_ns: u128,
    dropped_ns: u128,
    /// The last shown frame of the chain: its display time and values
    /// (in the order of `values`).
    previous: Option<(u64, [i64; MAX_VALUES])>,
    intervals: FineHistogram,
    stutters: StutterStream,
    /// Each value column's key and distribution: present to display, the
    /// columns of [`DisplaySession::set_values`], the derived terms.
    values: Vec<(ValueKey, Weighted)>,
    /// How many of `values` a row gives (the rest are derived).
    read: usize,
}

/// Value columns at most (every [`ValueKey`]).
const MAX_VALUES: usize = 8;

impl DisplaySession {
    /// With the stutter rule's θ of `opts`.
    pub fn new(opts: &Options) -> Self {
        DisplaySession {
            presented: 0,
            dropped: 0,
            unknown: 0,
            sources: BTreeMap::new(),
            total_ns: 0,
            dropped_ns: 0,
            previous: None,
            intervals: FineHistogram::new(),
            stutters: StutterStream::new(opts.stutter_threshold),
            values: vec![(ValueKey::PresentToDisplay, Weighted::default())],
            read: 1,
        }
    }

    /// From the next row on, each row also gives the values of `keys`
    /// (besides present to display, in this order: [`DisplaySession::push`]'s
    /// `values`), and the terms [`DERIVED`] from them are kept too, as
    /// [`DisplayStats::of`] derives them for a log with these columns;
    /// the rows before had none. Once.
    pub fn set_values(&mut self, keys: &[ValueKey]) {
        if self.values.len() > 1 {
            return;
        }
        let keys = &keys[..keys.len().min(MAX_VALUES - 1 - DERIVED.len())];
        let read = |k: ValueKey| k == ValueKey::PresentToDisplay || keys.contains(&k);
        self.values
            .extend(keys.iter().map(|&k| (k, Weighted::default())));
        self.read = self.values.len();
        let derived = DERIVED
            .iter()
            .filter(|(_, minus)| read(ValueKey::PcLatency) && minus.iter().all(|&k| read(k)));
        self.values
            .extend(derived.map(|&(k, _)| (k, Weighted::default())));
    }

    /// The next row: its present duration, its fate, the source that told
    /// it (`None`: no answer) and the values of [`DisplaySession::set_values`]'
    /// keys ([`NO_VALUE`]: none; empty before it).
    pub fn push(&mut self, duration_ns: u64, seen: Seen, source: Option<&str>, values: &[i64]) {
        self.presented += 1;
        self.total_ns += u128::from(duration_ns);
        if let Some(s) = source {
            match self.sources.get_mut(s) {
                Some(n) => *n += 1,
                None => {
                    self.sources.insert(s.to_string(), 1);
                }
            }
        }
        match seen {
            Seen::At {
                displayed_ns,
                latency_ns,
            } => {
                if let Some((at, owner)) = self.previous {
                    let d = displayed_ns.saturating_sub(at);
                    if d > 0 {
                        self.intervals.push(d);
                        self.stutters.push(d);
                        for ((_, w), &v) in self.values.iter_mut().zip(&owner) {
                            if v != NO_VALUE {
                                w.push(v, d);
                            }
                        }
                    }
                }
                self.previous = Some((displayed_ns, self.row_values(latency_ns, values)));
            }
            Seen::Dropped => {
                self.dropped += 1;
                self.dropped_ns += u128::from(duration_ns);
            }
            Seen::Unknown => {
                self.unknown += 1;
                self.previous = None;
            }
        }
    }

    /// A row's values in the order of `values`: present to display, those
    /// read, those derived.
    fn row_values(&self, latency_ns: i64, read: &[i64]) -> [i64; MAX_VALUES] {
        let mut row = [NO_VALUE; MAX_VALUES];
        row[0] = latency_ns;
        for (k, &v) in read.iter().take(self.read - 1).enumerate() {
            row[1 + k] = v;
        }
        let at = |key: ValueKey| self.values.iter().position(|(k, _)| *k == key);
        for i in self.read..self.values.len() {
            let key = self.values[i].0;
            let Some((_, minus)) = DERIVED.iter().find(|(k, _)| *k == key) else {
                continue;
            };
            let pc = at(ValueKey::PcLatency).map_or(NO_VALUE, |p| row[p]);
            row[i] = minus
                .iter()
                .try_fold(pc, |acc, &m| less(acc, row[at(m)?]))
                .unwrap_or(NO_VALUE);
        }
        row
    }

    /// Rows so far.
    pub fn rows(&self) -> usize {
        self.presented
    }

    /// Bytes held beyond the struct (the cells of both distributions and
    /// the stutter list, roughly).
    pub fn heap_bytes(&self) -> usize {
        self.intervals.heap_bytes()
            + self
                .values
                .iter()
                .map(|(_, w)| w.heap_bytes())
                .sum::<usize>()
            + self.stutters.final_so_far().1 * std::mem::size_of::<usize>()
    }

    /// The statistics of the rows so far, as [`DisplayStats::of`] gives
    /// them for the same rows as display times
    /// ([`super::display::DisplayColumns::from_seen`], columns named
    /// `names`, the values of [`DisplaySession::set_values`] named
    /// `columns` in its order), at the precision docs/metrics.md states;
    /// the intervals' stutters judged as if the session ended now.
    pub fn stats(&self, names: SeenColumns<'_>, columns: &[&str], opts: &Options) -> DisplayStats {
        let column = |key: ValueKey| -> String {
            let at = |k: ValueKey| self.values[..self.read].iter().position(|(x, _)| *x == k);
            let name = |k: ValueKey| match at(k) {
                Some(0) | None => names.latency,
                Some(i) => columns.get(i - 1).copied().unwrap_or(""),
            };
            match DERIVED.iter().find(|(k, _)| *k == key) {
                Some((_, minus)) => {
                    difference_column(name(ValueKey::PcLatency), minus.iter().map(|&m| name(m)))
                }
                None => name(key).to_string(),
            }
        };
        let n = self.presented;
        DisplayStats {
            interval_column: names.displayed.to_string(),
            dropped_column: names.dropped.to_string(),
            presented_frames: n,
            displayed_frames: n.saturating_sub(self.dropped).saturating_sub(self.unknown),
            dropped_frames: self.dropped,
            unknown_frames: Some(self.unknown),
            sources: Some(self.sources.clone()),
            dropped_time_pct: if self.total_ns == 0 {
                0.0
            } else {
                self.dropped_ns as f64 * 100.0 / self.total_ns as f64
            },
            intervals: self.stutters.summary_of(&self.intervals, opts),
            animation_error: None,
            latency: self
                .values
                .iter()
                .map(|(k, w)| (k.name().to_string(), w.stats(&column(*k))))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{metric, Value};
    use crate::display::DisplayColumns;

    const NAMES: SeenColumns<'static> = SeenColumns {
        displayed: "displayed_ns",
        dropped: "display_source",
        latency: "display_latency_ms",
    };

    fn p99_text(ms: f64) -> String {
        metric("p99_ms").unwrap().text(Value::Float(ms))
    }

    /// Random rows (shown with jittered display times and latencies, on
    /// and around microsecond and 5 µs edges, dropped, unknown, shown
    /// out of order) give `DisplayStats::of`'s block: counts and sums
    /// exactly, the latency's P99 at two decimals.
    #[test]
    fn the_running_block_is_the_logs() {
        let mut rng = fastrand::Rng::with_seed(52);
        for round in 0..40 {
            let n = rng.usize(1..3_000);
            let mut rows = Vec::new();
            let mut s = DisplaySession::new(&Options::default());
            // Half the rounds with PC latency's terms (the layer's log).
            let terms = round % 4 < 2;
            let keys = [
                ValueKey::PcLatency,
                ValueKey::ClickToPhoton,
                ValueKey::FrameStartToPresent,
            ];
            if terms {
                s.set_values(&keys);
            }
            let mut term_rows: Vec<[i64; 3]> = Vec::new();
            let mut at = 1_000_000_000u64;
            for _ in 0..n {
                let duration = rng.u64(100_000..40_000_000);
                at += duration;
                let seen = match rng.u8(0..20) {
                    0..=2 => Seen::Dropped,
                    3 if round % 2 == 0 => Seen::Unknown,
                    _ => {
                        let latency = match rng.u8(0..4) {
                            0 => rng.i64(0..40) * 5_000,
                            1 => rng.i64(-3..30) * 1_000 + rng.i64(-1..2),
                            _ => rng.i64(-2_000_000..30_000_000),
                        };
                        let back = if rng.u8(0..50) == 0 { 5_000_000 } else { 0 };
                        Seen::At {
                            displayed_ns: (at as i64 + latency) as u64 - back,
                            latency_ns: if rng.u8(0..30) == 0 {
                                NO_VALUE
                            } else {
                                latency
                            },
                        }
                    }
                };
                let source = (seen != Seen::Unknown).then_some("wayland");
                let row = [0u8; 3].map(|_| {
                    if rng.u8(0..10) == 0 {
                        NO_VALUE
                    } else {
                        rng.i64(-1_000_000..60_000_000)
                    }
                });
                s.push(duration, seen, source, if terms { &row } else { &[] });
                term_rows.push(row);
                rows.push((duration, seen));
            }
            let durations: Vec<u64> = rows.iter().map(|r| r.0).collect();
            let seen: Vec<Seen> = rows.iter().map(|r| r.1).collect();
            let sources = s.sources.clone();
            let mut c = DisplayColumns::from_seen(&seen, NAMES, sources);
            let columns = ["pcl", "c2p", "fs2p"];
            if terms {
                for (k, key) in keys.iter().enumerate() {
                    c.values.push(crate::display::ValueColumn {
                        key: *key,
                        column: columns[k].into(),
                        ns: term_rows.iter().map(|r| r[k]).collect(),
                    });
                }
            }
            let mut want = DisplayStats::of(&durations, &c, &Options::default());
            let mut got = s.stats(NAMES, &columns, &Options::default());
            assert_eq!(
                got.latency.keys().collect::<Vec<_>>(),
                want.latency.keys().collect::<Vec<_>>()
            );
            assert_eq!(want.latency.len(), if terms { 6 } else { 1 });
            for (key, w) in want.latency.iter_mut() {
                let (w, g) = (w.take(), got.latency.get_mut(key).unwrap().take());
                match (w, g) {
                    (None, None) => {}
                    (Some(w), Some(g)) => {
                        assert_eq!(
                            p99_text(g.p99_ms),
                            p99_text(w.p99_ms),
                            "round {round} {key}"
                        );
                        assert_eq!(
                            (g.frames, g.time_s, g.mean_ms, &g.column),
                            (w.frames, w.time_s, w.mean_ms, &w.column),
                            "{key}"
                        );
                    }
                    (w, g) => panic!("{key}: {w:?} vs {g:?}"),
                }
            }
            // The intervals' metrics at the catalog's precision (the
            // whole-session histogram's guarantees), the stutters exactly.
            let (wi, gi) = (want.intervals.take(), got.intervals.take());
            assert_eq!(wi.is_some(), gi.is_some());
            if let (Some(wi), Some(gi)) = (wi, gi) {
                let sorted = crate::SortedDurations::new(&crate::display::intervals_ns(&c));
                for m in crate::catalog::METRICS {
                    let (a, b) = (m.of(&gi), m.of(&wi));
                    assert!(
                        m.agrees_as_printed(a, b, &sorted),
                        "{}: {a:?} vs {b:?}",
                        m.key
                    );
                }
                assert_eq!(gi.stutter_frames, wi.stutter_frames);
            }
            assert_eq!(got, want, "round {round}");
        }
    }

    /// The P99 is a sample's value when the part it lands in holds one
    /// value, else that part's weighted mean; weights, not counts, decide.
    #[test]
    fn the_p99_weighs_by_time_on_screen() {
        let mut w = Weighted::default();
        // 10 ms of 1.000 ms, then 0.5 ms of 2.0004 and 2.0006 ms: P99 (at
        // 10.395 ms of 10.5) is among the latter, their mean 2.0005.
        for _ in 0..10 {
            w.push(1_000_000, 1_000_000);
        }
        w.push(2_000_400, 250_000);
        w.push(2_000_600, 250_000);
        assert_eq!(w.p99(), Some(2_000_500));
        let s = w.stats("x").unwrap();
        assert_eq!(s.frames, 12);
        assert!((s.mean_ms - (10.0 + 0.5 * 2.0005) / 10.5).abs() < 1e-12);
        // Negative values: floor cells, the mean inside the cell.
        let mut w = Weighted::default();
        w.push(-1_500, 1);
        w.push(-1_001, 1);
        assert_eq!(w.p99(), Some(-1_251), "the mean of -1.500 and -1.001 µs");
        assert_eq!(Weighted::default().stats("x"), None);
        // A P99 on a cell's edge that is a rounding tie (0.015 ms prints
        // 0.01: the f64 is below it) is that value, not the cell's mean
        // (15.225 µs would print 0.02).
        let mut w = Weighted::default();
        w.push(1_000, 98_000);
        w.push(15_000, 1_500);
        w.push(15_900, 500);
        assert_eq!(w.p99(), Some(15_000));
        assert_eq!(p99_text(w.stats("x").unwrap().p99_ms), "0.01");
    }
}
