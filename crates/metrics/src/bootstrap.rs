//! Is B really better than A? Several runs per side, the difference of
//! each compared metric B − A with a 95 % confidence interval from a
//! two-level block bootstrap, and a verdict (docs/metrics.md, "Comparing
//! runs").
//!
//! **Resampling.** One resample of a side draws its runs with replacement
//! (runs are the units, so the spread between runs counts), and within each
//! drawn run a moving-block bootstrap over time: the run is cut into tiles
//! of `block / TILES_PER_BLOCK` of play (a frame belongs to the tile its
//! start falls in), and ⌈tiles / TILES_PER_BLOCK⌉ blocks of
//! [`TILES_PER_BLOCK`] consecutive tiles, starting at any tile, are drawn
//! with replacement. Blocks keep the autocorrelation of frame times (a
//! stutter burst, a heavy scene) that resampling single frames would
//! destroy.
//!
//! **Fast.** A tile is kept as its time histogram (the mergeable
//! [`TimeHistogram`] buckets, 1 %) plus its exact frames, time, stutter time
//! (the stutters of the whole run, found once) and time over the run's
//! target budget. A resample only sums tiles with their multiplicities and
//! reads the metrics off the histogram with the existing functions
//! ([`TimeMetrics::of`], the catalog's accessors).
//!
//! **Interval.** The estimates are exact (all frames of a side pooled;
//! stutter time and time over budget as shares of the side's time). The
//! interval is the exact difference plus the 2.5 % and 97.5 % quantiles of
//! the resampled differences' deviations from the histogram's own
//! full-sample difference (so the histogram's 1 % bucketing cancels), times
//! a small-sample factor for the runs: √(R/(R−1)) (the run bootstrap's
//! variance is (R−1)/R of the unbiased one) × t(df)/z (few runs: Student's
//! t, df = R_A + R_B − 2; a side's own interval: df = R − 1, clamped at
//! 0, as every compared metric is ≥ 0). With one run on a side there is no run level:
//! the interval is from within-run blocks only, factor 1, and flagged.

use super::catalog::{self, Metric};
use super::histogram::{bucket_of, Bin, TimeHistogram};
use super::options::NS_PER_S;
use super::sorted::SortedDurations;
use super::summary::Summary;
use super::time_metrics::TimeMetrics;

/// The compared metrics (catalog keys), in the order shown.
pub const COMPARED: [&str; 8] = [
    "steady_fps",
    "mostly_steady_fps",
    "typical_fps",
    "p99_ms",
    "p99_9_ms",
    "stutter_time_pct",
    "average_fps",
    "time_over_budget_pct",
];
/// Number of compared metrics.
pub const N_METRICS: usize = COMPARED.len();
/// Resamples unless told otherwise.
pub const DEFAULT_RESAMPLES: usize = 1000;
/// Fewest resamples that give a 95 % interval at all.
pub const MIN_RESAMPLES: usize = 40;
/// Seed unless told otherwise: the same inputs give the same output.
pub const DEFAULT_SEED: u64 = 1;
/// Block length unless told otherwise, s of play.
pub const DEFAULT_BLOCK_S: f64 = 2.0;
/// Tiles per block: a block starts at any tile.
pub const TILES_PER_BLOCK: usize = 4;
/// Confidence level of every interval.
pub const LEVEL: f64 = 0.95;
/// z of the two-sided 95 % level.
const Z_975: f64 = 1.959_963_984_540_054;
/// A frame this long or longer is taken for a loading screen.
pub const LOADING_FRAME_NS: u64 = 100_000_000;
/// Share of a run's time in loading frames above which it is warned about.
pub const LOADING_SHARE: f64 = 0.5;
/// Longest / shortest run duration above which runs are warned about.
pub const LENGTH_RATIO: f64 = 2.0;

/// The catalog entries of [`COMPARED`].
pub fn compared_metrics() -> [&'static Metric; N_METRICS] {
    COMPARED.map(|k| catalog::metric(k).expect("COMPARED names catalog keys"))
}

/// One run: its frames, its stutters (frame indices, from its summary) and
/// the target its time over budget is judged against.
#[derive(Clone, Copy, Debug)]
pub struct RunInput<'a> {
    pub durations_ns: &'a [u64],
    pub stutter_frames: &'a [usize],
    pub target_fps: u32,
}

/// How to resample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    pub resamples: usize,
    pub seed: u64,
    /// Block length, ns of play.
    pub block_ns: u64,
    /// Worker threads (the result does not depend on it).
    pub threads: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            resamples: DEFAULT_RESAMPLES,
            seed: DEFAULT_SEED,
            block_ns: (DEFAULT_BLOCK_S * NS_PER_S as f64) as u64,
            threads: std::thread::available_parallelism().map_or(1, usize::from),
        }
    }
}

/// Why a comparison cannot be made.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CompareError {
    #[error("side {side} has no run")]
    NoRuns { side: char },
    #[error("side {side}, run {run}: {frames} frames over {duration_s:.2} s, fewer than one {block_s} s block holds (a shorter --block-s, or a longer run)")]
    TooShort {
        side: char,
        /// 1-based, in the order given.
        run: usize,
        frames: usize,
        duration_s: f64,
        block_s: f64,
    },
    #[error("{resamples} resamples: at least {MIN_RESAMPLES} are needed for a 95 % interval")]
    TooFewResamples { resamples: usize },
    #[error("the block must be longer than {TILES_PER_BLOCK} ns")]
    BadBlock,
}

/// An interval [low, high].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Interval {
    pub fn contains(&self, v: f64) -> bool {
        self.low <= v && v <= self.high
    }
}

/// What the interval of B − A says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Better,
    Worse,
    /// The interval holds 0 (or the metric has no better direction).
    NoDifference,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::NoDifference => "no difference shown",
        }
    }
}

/// One side's estimate of a metric.
#[derive(Clone, Debug, PartialEq)]
pub struct SideEstimate {
    /// Over all the side's frames pooled.
    pub estimate: f64,
    pub ci: Interval,
    /// Each run's own value, in the order given.
    pub runs: Vec<f64>,
}

/// One metric compared.
#[derive(Clone, Debug)]
pub struct MetricComparison {
    pub metric: &'static Metric,
    pub a: SideEstimate,
    pub b: SideEstimate,
    /// B − A of the estimates.
    pub difference: f64,
    pub ci: Interval,
    pub verdict: Verdict,
}

impl MetricComparison {
    /// Whether the whole interval shows B worse than A by more than `pct`
    /// percent of A's estimate (what `--fail-if-worse METRIC=PCT` asks).
    pub fn worse_by_more_than(&self, pct: f64) -> bool {
        let margin = pct / 100.0 * self.a.estimate.abs();
        match self.metric.higher_is_better {
            Some(true) => self.ci.high < -margin,
            Some(false) => self.ci.low > margin,
            None => false,
        }
    }
}

/// The whole comparison.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// In [`COMPARED`]'s order.
    pub metrics: Vec<MetricComparison>,
    /// Runs of A and B.
    pub runs: [usize; 2],
    /// A side has one run: the intervals know nothing of run-to-run spread.
    pub within_run_only: bool,
    /// The small-sample factor the deviations were scaled by.
    pub factor: f64,
    pub settings: Settings,
}

impl Comparison {
    /// The comparison of the metric of catalog key `key`.
    pub fn get(&self, key: &str) -> Option<&MetricComparison> {
        self.metrics.iter().find(|m| m.metric.key == key)
    }
}

/// The share of `durations_ns`'s time spent in frames of at least
/// [`LOADING_FRAME_NS`] (a loading screen, a menu waiting): 0..=1.
pub fn loading_share(durations_ns: &[u64]) -> f64 {
    let t: u128 = durations_ns.iter().map(|&d| u128::from(d)).sum();
    if t == 0 {
        return 0.0;
    }
    let slow: u128 = durations_ns
        .iter()
        .filter(|&&d| d >= LOADING_FRAME_NS)
        .map(|&d| u128::from(d))
        .sum();
    slow as f64 / t as f64
}

/// Student's t at 97.5 % for `df` degrees of freedom (df ≥ 1).
pub fn t_975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        _ => {
            // Cornish–Fisher expansion around z.
            let (z, n) = (Z_975, df as f64);
            z + (z.powi(3) + z) / (4.0 * n)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * n * n)
        }
    }
}

/// Small-sample factor of a run bootstrap over `r` runs with `df` degrees
/// of freedom: √(r/(r−1)) · t(df)/z; 1 for one run (no run level).
fn factor(r: usize, df: usize) -> f64 {
    if r < 2 {
        1.0
    } else {
        (r as f64 / (r as f64 - 1.0)).sqrt() * t_975(df) / Z_975
    }
}

/// One run cut into tiles: per tile its histogram bins and exact sums.
struct Tiles {
    /// `bins[starts[t]..starts[t + 1]]` are tile t's.
    starts: Vec<u32>,
    /// (bucket, frames, time ns).
    bins: Vec<(u32, u32, u64)>,
    /// Per tile: [frames, time, stutter time, time over budget], ns.
    sums: Vec<[u64; 4]>,
}

impl Tiles {
    fn new(run: &RunInput, tile_ns: u64) -> Tiles {
        let d = run.durations_ns;
        let total: u64 = d.iter().sum();
        let n = total.div_ceil(tile_ns).max(1) as usize;
        let mut stutter = vec![false; d.len()];
        for &i in run.stutter_frames {
            if let Some(s) = stutter.get_mut(i) {
                *s = true;
            }
        }
        let f = u128::from(run.target_fps.max(1));
        let mut starts = Vec::with_capacity(n + 1);
        let mut bins: Vec<(u32, u32, u64)> = Vec::new();
        let mut sums = vec![[0u64; 4]; n];
        let mut at = 0u64;
        let mut i = 0;
        for (t, sum) in sums.iter_mut().enumerate() {
            starts.push(bins.len() as u32);
            let first = bins.len();
            let end = (t as u64 + 1).saturating_mul(tile_ns);
            while i < d.len() && (at < end || t + 1 == n) {
                let x = d[i];
                let b = bucket_of(x);
                match bins[first..].iter_mut().find(|e| e.0 == b) {
                    Some(e) => {
                        e.1 += 1;
                        e.2 += x;
                    }
                    None => bins.push((b, 1, x)),
                }
                sum[0] += 1;
                sum[1] += x;
                if stutter[i] {
                    sum[2] += x;
                }
                if u128::from(x) * f > u128::from(NS_PER_S) {
                    sum[3] += x;
                }
                at += x;
                i += 1;
            }
        }
        starts.push(bins.len() as u32);
        Tiles { starts, bins, sums }
    }

    fn len(&self) -> usize {
        self.sums.len()
    }
}

/// The compared metrics of a summary, through the catalog.
fn values(metrics: &[&'static Metric; N_METRICS], s: &Summary) -> [f64; N_METRICS] {
    metrics.map(|m| m.of(s).number())
}

/// A summary of order-free metrics `time` and the two time shares (the
/// stutter count and list are not compared).
fn summary_of(time: TimeMetrics, stutter_ns: u128, over_ns: u128) -> Summary {
    let t = time.duration_s * NS_PER_S as f64;
    let share = |x: u128| if t > 0.0 { 100.0 * x as f64 / t } else { 0.0 };
    Summary {
        time_over_budget_pct: share(over_ns),
        stutter_count: 0,
        stutter_frames: Vec::new(),
        stutter_time_pct: share(stutter_ns),
        osc: false,
        time,
    }
}

/// Exact values of frames `runs` pooled.
fn exact(metrics: &[&'static Metric; N_METRICS], runs: &[&RunInput]) -> [f64; N_METRICS] {
    let all: Vec<u64> = runs
        .iter()
        .flat_map(|r| r.durations_ns.iter().copied())
        .collect();
    let sorted = SortedDurations::from_vec(all);
    let Some(time) = TimeMetrics::of(&sorted) else {
        return [f64::NAN; N_METRICS];
    };
    let (mut stutter, mut over) = (0u128, 0u128);
    for r in runs {
        let f = u128::from(r.target_fps.max(1));
        for &i in r.stutter_frames {
            stutter += r.durations_ns.get(i).map_or(0, |&d| u128::from(d));
        }
        over += r
            .durations_ns
            .iter()
            .filter(|&&d| u128::from(d) * f > u128::from(NS_PER_S))
            .map(|&d| u128::from(d))
            .sum::<u128>();
    }
    values(metrics, &summary_of(time, stutter, over))
}

/// Sums of tiles with multiplicities, reused across resamples.
struct Accumulator {
    frames: Vec<u64>,
    time: Vec<u64>,
    touched: Vec<u32>,
    sums: [u128; 4],
    diff: Vec<i64>,
}

impl Accumulator {
    fn new() -> Self {
        let n = super::histogram::bucket_count();
        Accumulator {
            frames: vec![0; n],
            time: vec![0; n],
            touched: Vec::new(),
            sums: [0; 4],
            diff: Vec::new(),
        }
    }

    /// Adds `run`'s tiles, tile t `mult(t)` times.
    fn add(&mut self, run: &Tiles, mult: impl Fn(usize) -> u64) {
        for t in 0..run.len() {
            let m = mult(t);
            if m == 0 {
                continue;
            }
            let (s, e) = (run.starts[t] as usize, run.starts[t + 1] as usize);
            for &(b, f, x) in &run.bins[s..e] {
                let b = b as usize;
                if self.frames[b] == 0 {
                    self.touched.push(b as u32);
                }
                self.frames[b] += m * u64::from(f);
                self.time[b] += m * x;
            }
            for (acc, v) in self.sums.iter_mut().zip(run.sums[t]) {
                *acc += u128::from(m) * u128::from(v);
            }
        }
    }

    /// Adds a moving-block resample of `run`.
    fn add_blocks(&mut self, run: &Tiles, rng: &mut fastrand::Rng) {
        let n = run.len();
        let k = TILES_PER_BLOCK.min(n);
        self.diff.clear();
        self.diff.resize(n + 1, 0);
        for _ in 0..n.div_ceil(k) {
            let s = rng.usize(0..=n - k);
            self.diff[s] += 1;
            self.diff[s + k] -= 1;
        }
        let mut mult = Vec::with_capacity(n);
        let mut m = 0i64;
        for t in 0..n {
            m += self.diff[t];
            mult.push(m as u64);
        }
        self.add(run, |t| mult[t]);
    }

    /// The compared metrics of what was added, and a reset.
    fn take(&mut self, metrics: &[&'static Metric; N_METRICS]) -> [f64; N_METRICS] {
        self.touched.sort_unstable();
        let bins: Vec<(u32, Bin)> = self
            .touched
            .iter()
            .map(|&b| {
                let i = b as usize;
                let bin = Bin {
                    frames: self.frames[i],
                    time_ns: u128::from(self.time[i]),
                };
                self.frames[i] = 0;
                self.time[i] = 0;
                (b, bin)
            })
            .collect();
        self.touched.clear();
        let sums = std::mem::take(&mut self.sums);
        let h = TimeHistogram::from_sorted_bins(bins);
        match TimeMetrics::of(&h) {
            Some(time) => values(metrics, &summary_of(time, sums[2], sums[3])),
            None => [f64::NAN; N_METRICS],
        }
    }
}

/// splitmix64: independent seeds for each resample from one seed.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One resample of a side: runs drawn with replacement, blocks within.
fn resample(
    acc: &mut Accumulator,
    side: &[Tiles],
    rng: &mut fastrand::Rng,
    metrics: &[&'static Metric; N_METRICS],
) -> [f64; N_METRICS] {
    for _ in 0..side.len() {
        let r = &side[rng.usize(0..side.len())];
        acc.add_blocks(r, rng);
    }
    acc.take(metrics)
}

/// The `q` quantile (0..=1) of sorted `v`, interpolated.
fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let h = q * (v.len() - 1) as f64;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
}

/// `est` plus `factor` times the 95 % quantiles of `devs`.
fn interval(est: f64, mut devs: Vec<f64>, factor: f64) -> Interval {
    devs.retain(|d| d.is_finite());
    devs.sort_by(f64::total_cmp);
    let a = (1.0 - LEVEL) / 2.0;
    Interval {
        low: est + factor * quantile(&devs, a),
        high: est + factor * quantile(&devs, 1.0 - a),
    }
}

/// Compares runs `a` (the baseline) with runs `b`.
pub fn compare(
    a: &[RunInput],
    b: &[RunInput],
    settings: &Settings,
) -> Result<Comparison, CompareError> {
    if settings.resamples < MIN_RESAMPLES {
        return Err(CompareError::TooFewResamples {
            resamples: settings.resamples,
        });
    }
    if settings.block_ns <= TILES_PER_BLOCK as u64 {
        return Err(CompareError::BadBlock);
    }
    let tile_ns = settings.block_ns / TILES_PER_BLOCK as u64;
    for (side, runs) in [('A', a), ('B', b)] {
        if runs.is_empty() {
            return Err(CompareError::NoRuns { side });
        }
        for (i, r) in runs.iter().enumerate() {
            let t: u64 = r.durations_ns.iter().sum();
            if t < settings.block_ns {
                return Err(CompareError::TooShort {
                    side,
                    run: i + 1,
                    frames: r.durations_ns.len(),
                    duration_s: t as f64 / NS_PER_S as f64,
                    block_s: settings.block_ns as f64 / NS_PER_S as f64,
                });
            }
        }
    }
    let metrics = compared_metrics();
    let tiles: [Vec<Tiles>; 2] =
        [a, b].map(|runs| runs.iter().map(|r| Tiles::new(r, tile_ns)).collect());

    // The histogram's own full-sample values: the centre of the deviations.
    let centre: [[f64; N_METRICS]; 2] = std::array::from_fn(|s| {
        let mut acc = Accumulator::new();
        for r in &tiles[s] {
            acc.add(r, |_| 1);
        }
        acc.take(&metrics)
    });

    // Resample i uses its own generator: the result is the same for any
    // number of threads.
    let threads = settings.threads.clamp(1, settings.resamples);
    let per = settings.resamples.div_ceil(threads);
    let draws: Vec<[[f64; N_METRICS]; 2]> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|w| {
                let (tiles, metrics) = (&tiles, &metrics);
                scope.spawn(move || {
                    let mut acc = Accumulator::new();
                    let end = ((w + 1) * per).min(settings.resamples);
                    (w * per..end)
                        .map(|i| {
                            let mut rng =
                                fastrand::Rng::with_seed(mix(settings.seed ^ mix(i as u64)));
                            let ra = resample(&mut acc, &tiles[0], &mut rng, metrics);
                            let rb = resample(&mut acc, &tiles[1], &mut rng, metrics);
                            [ra, rb]
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });

    let est_a = exact(&metrics, &a.iter().collect::<Vec<_>>());
    let est_b = exact(&metrics, &b.iter().collect::<Vec<_>>());
    let per_run = |runs: &[RunInput]| -> Vec<[f64; N_METRICS]> {
        runs.iter().map(|r| exact(&metrics, &[r])).collect()
    };
    let (runs_a, runs_b) = (per_run(a), per_run(b));
    let (ra, rb) = (a.len(), b.len());
    let within_run_only = ra.min(rb) < 2;
    let f_diff = if within_run_only {
        1.0
    } else {
        factor(ra.min(rb), ra + rb - 2)
    };
    let f_side = |r: usize| factor(r, r.saturating_sub(1));

    let out = (0..N_METRICS)
        .map(|m| {
            let metric = metrics[m];
            let side = |s: usize, est: &[f64; N_METRICS], runs: &[[f64; N_METRICS]], r| {
                let devs = draws.iter().map(|d| d[s][m] - centre[s][m]).collect();
                // Every compared metric is ≥ 0.
                let ci = interval(est[m], devs, f_side(r));
                SideEstimate {
                    estimate: est[m],
                    ci: Interval {
                        low: ci.low.max(0.0),
                        high: ci.high.max(0.0),
                    },
                    runs: runs.iter().map(|v| v[m]).collect(),
                }
            };
            let difference = est_b[m] - est_a[m];
            let devs = draws
                .iter()
                .map(|d| (d[1][m] - d[0][m]) - (centre[1][m] - centre[0][m]))
                .collect();
            let ci = interval(difference, devs, f_diff);
            let verdict = match (metric.higher_is_better, ci.low > 0.0, ci.high < 0.0) {
                (Some(hib), true, _) => up(hib),
                (Some(hib), _, true) => up(!hib),
                _ => Verdict::NoDifference,
            };
            MetricComparison {
                metric,
                a: side(0, &est_a, &runs_a, ra),
                b: side(1, &est_b, &runs_b, rb),
                difference,
                ci,
                verdict,
            }
        })
        .collect();
    Ok(Comparison {
        metrics: out,
        runs: [ra, rb],
        within_run_only,
        factor: f_diff,
        settings: *settings,
    })
}

/// The verdict of B higher than A, for a metric where higher `is_better`.
fn up(is_better: bool) -> Verdict {
    if is_better {
        Verdict::Better
    } else {
        Verdict::Worse
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn run(d: &[u64]) -> RunInput<'_> {
        RunInput {
            durations_ns: d,
            stutter_frames: &[],
            target_fps: 60,
        }
    }

    #[test]
    fn tiles_hold_every_frame_once() {
        let d: Vec<u64> = (0..1000u64).map(|i| (10 + i % 7) * MS).collect();
        let r = run(&d);
        let t = Tiles::new(&r, 500 * MS);
        let frames: u64 = t.sums.iter().map(|s| s[0]).sum();
        let time: u64 = t.sums.iter().map(|s| s[1]).sum();
        assert_eq!(frames, 1000);
        assert_eq!(time, d.iter().sum::<u64>());
        let bin_frames: u64 = t.bins.iter().map(|b| u64::from(b.1)).sum();
        assert_eq!(bin_frames, 1000);
        // 13 s of frames in 0.5 s tiles.
        assert_eq!(t.len(), 26);
    }

    #[test]
    fn a_run_shorter_than_a_block_is_an_error_naming_it() {
        let long = vec![10 * MS; 1000];
        let short = vec![10 * MS; 100];
        let e = compare(
            &[run(&long)],
            &[run(&long), run(&short)],
            &Settings::default(),
        );
        assert!(
            matches!(
                e,
                Err(CompareError::TooShort {
                    side: 'B',
                    run: 2,
                    frames: 100,
                    ..
                })
            ),
            "{e:?}"
        );
        let text = e.unwrap_err().to_string();
        assert!(text.contains("run 2") && text.contains("block"), "{text}");
    }

    #[test]
    fn the_result_does_not_depend_on_the_threads_and_follows_the_seed() {
        let d1: Vec<u64> = (0..3000u64).map(|i| (10 + (i * 7) % 11) * MS).collect();
        let d2: Vec<u64> = (0..3000u64).map(|i| (11 + (i * 5) % 13) * MS).collect();
        let s1 = Settings {
            resamples: 100,
            threads: 1,
            ..Settings::default()
        };
        let s3 = Settings { threads: 3, ..s1 };
        let x = compare(&[run(&d1), run(&d2)], &[run(&d2), run(&d1)], &s1).unwrap();
        let y = compare(&[run(&d1), run(&d2)], &[run(&d2), run(&d1)], &s3).unwrap();
        let z = compare(
            &[run(&d1), run(&d2)],
            &[run(&d2), run(&d1)],
            &Settings { seed: 2, ..s1 },
        )
        .unwrap();
        let cis = |c: &Comparison| c.metrics.iter().map(|m| m.ci).collect::<Vec<_>>();
        assert_eq!(cis(&x), cis(&y));
        assert_ne!(cis(&x), cis(&z));
        // The same frames on both sides: the estimates are equal.
        for m in &x.metrics {
            assert_eq!(m.difference, 0.0, "{}", m.metric.key);
            assert!(m.ci.contains(0.0), "{}: {:?}", m.metric.key, m.ci);
        }
    }

    #[test]
    fn t_quantiles() {
        assert_eq!(t_975(4), 2.776);
        assert!((t_975(100) - 1.984).abs() < 1e-3, "{}", t_975(100));
        assert!(t_975(31) < t_975(30) && t_975(31) > 2.03);
    }
}
