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
//! - the present-to-display latency time-weighted by D ([`Weighted`]): the
//!   samples, Σ D and Σ v·D (exact mean) and the weights in microsecond
//!   cells (P99 at the printed precision).
//!
//! [`shown_frames`]: super::display::shown_frames

use super::display::{DisplayStats, Seen, SeenColumns, ValueKey, ValueStats, NO_VALUE, P99_PPM};
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
    /// The last shown frame of the chain: its display time and latency.
    previous: Option<(u64, i64)>,
    intervals: FineHistogram,
    stutters: StutterStream,
    latency: Weighted,
}

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
            latency: Weighted::default(),
        }
    }

    /// The next row: its present duration, its fate and the source that
    /// told it (`None`: no answer).
    pub fn push(&mut self, duration_ns: u64, seen: Seen, source: Option<&str>) {
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
                if let Some((at, latency)) = self.previous {
                    let d = displayed_ns.saturating_sub(at);
                    if d > 0 {
                        self.intervals.push(d);
                        self.stutters.push(d);
                        if latency != NO_VALUE {
                            self.latency.push(latency, d);
                        }
                    }
                }
                self.previous = Some((displayed_ns, latency_ns));
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

    /// Rows so far.
    pub fn rows(&self) -> usize {
        self.presented
    }

    /// Bytes held beyond the struct (the cells of both distributions and
    /// the stutter list, roughly).
    pub fn heap_bytes(&self) -> usize {
        self.intervals.heap_bytes()
            + self.latency.heap_bytes()
            + self.stutters.final_so_far().1 * std::mem::size_of::<usize>()
    }

    /// The statistics of the rows so far, as [`DisplayStats::of`] gives
    /// them for the same rows as display times
    /// ([`super::display::DisplayColumns::from_seen`], columns named
    /// `names`), at the precision docs/metrics.md states; the intervals'
    /// stutters judged as if the session ended now.
    pub fn stats(&self, names: SeenColumns<'_>, opts: &Options) -> DisplayStats {
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
            latency: [(
                ValueKey::PresentToDisplay.name().to_string(),
                self.latency.stats(names.latency),
            )]
            .into(),
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
                s.push(duration, seen, source);
                rows.push((duration, seen));
            }
            let durations: Vec<u64> = rows.iter().map(|r| r.0).collect();
            let seen: Vec<Seen> = rows.iter().map(|r| r.1).collect();
            let sources = s.sources.clone();
            let c = DisplayColumns::from_seen(&seen, NAMES, sources);
            let mut want = DisplayStats::of(&durations, &c, &Options::default());
            let mut got = s.stats(NAMES, &Options::default());
            let (w, g) = (
                want.latency.get_mut("present_to_display").unwrap().take(),
                got.latency.get_mut("present_to_display").unwrap().take(),
            );
            match (w, g) {
                (None, None) => {}
                (Some(w), Some(g)) => {
                    assert_eq!(p99_text(g.p99_ms), p99_text(w.p99_ms), "round {round}");
                    assert_eq!(
                        (g.frames, g.time_s, g.mean_ms, &g.column),
                        (w.frames, w.time_s, w.mean_ms, &w.column)
                    );
                }
                (w, g) => panic!("{w:?} vs {g:?}"),
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
