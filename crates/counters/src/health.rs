//! Frame health (Nsight's "Frame Health" row): which counters spiked in a
//! frame compared to the frames around it, and for every stutter the
//! counters that spiked with it.
//!
//! # The rule
//!
//! For counter c and frame i, let W_i be the same clipped 19-frame window as
//! the stutter rule (frames max(0,i−9) … min(N−1,i+9)) and m_c,i the median
//! of c's frame values over W_i (mean of the two middle values when the
//! count is even). Frame i's value v is a **spike** iff
//!
//! ```text
//! v − m  >  max(floor(unit), rel · m)      rel = 0.5
//! floor: 1 ms for CPU time, 0.5 for counts (one more event than the median),
//!        1 MiB for bytes
//! ```
//!
//! i.e. at least one event / one millisecond / one MiB above the local
//! median and more than 1.5× it. A **stutter** is the rule of
//! docs/metrics.md#stutters on the frame durations (same window). A
//! stutter's **causes** are the counters that spike in that frame — a
//! CPU-time counter only if its own excess (v − m) is at least 10% of the
//! stutter's excess, so a 1 ms wobble is not blamed for a 70 ms hitch —
//! CPU-time counters first, larger values first;
//! written as `frame 1234 +45.0 ms: pipeline creation 41.0 ms, pipelines 3`
//! where +45.0 ms is the frame's duration minus its window median.
//!
//! [`Tracker`] applies the rule while frames stream in (it holds the last
//! 19 frames only, so a session of any length costs O(1) memory) and
//! [`attribute`] does the same on a whole recorded session.

use super::table::{CounterInfo, FrameValues, Unit};
// The window and the stutter rule are the metrics core's: one definition.
use std::collections::VecDeque;
use steadyhud_metrics::{median_sorted, stutter_excess, window_of, HALF_WINDOW, WINDOW};

/// Thresholds of the spike rule (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HealthRule {
    /// Relative excess over the window median a spike needs.
    pub rel: f64,
    /// Stutter threshold θ of the frame-duration rule (docs/metrics.md#stutters).
    pub stutter_threshold: f64,
    /// Share of a stutter's excess a CPU-time spike must explain to be named.
    pub min_share: f64,
}

impl Default for HealthRule {
    fn default() -> Self {
        HealthRule {
            rel: 0.5,
            stutter_threshold: steadyhud_metrics::DEFAULT_STUTTER_THRESHOLD,
            min_share: 0.10,
        }
    }
}

impl HealthRule {
    /// Absolute floor of a spike for a unit, in the counter's raw unit.
    pub fn floor(unit: Unit) -> f64 {
        match unit {
            Unit::Nanos => 1e6,
            Unit::Count => 0.5,
            Unit::Bytes => 1024.0 * 1024.0,
        }
    }

    /// Whether `v` is a spike over window median `m` for a counter of `unit`.
    pub fn is_spike(&self, unit: Unit, v: f64, m: f64) -> bool {
        v - m > Self::floor(unit).max(self.rel * m)
    }
}

/// One counter that spiked in a frame; `value` and `median` in the
/// counter's display unit (ms for CPU time).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Spike {
    pub name: String,
    pub label: String,
    pub value: f64,
    pub median: f64,
    pub unit: String,
}

/// A stutter and the counters that spiked with it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Cause {
    /// 0-based frame index.
    pub frame: u64,
    /// Frame duration minus its window median, ms.
    pub excess_ms: f64,
    pub counters: Vec<Spike>,
}

/// `pipeline creation 41.0 ms`, `memory allocated 64.0 MiB`, `pipelines created 3`.
impl std::fmt::Display for Spike {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.unit.as_str() {
            "ms" => write!(f, "{} {:.1} ms", self.label, self.value),
            "bytes" => write!(
                f,
                "{} {:.1} MiB",
                self.label,
                self.value / (1024.0 * 1024.0)
            ),
            _ => write!(f, "{} {}", self.label, self.value),
        }
    }
}

impl Cause {
    /// The main cause alone: the first counter named (`pipeline creation
    /// 41.0 ms`), or `no counter spiked`.
    pub fn main_text(&self) -> String {
        self.counters
            .first()
            .map_or_else(|| NO_SPIKE.to_string(), |s| s.to_string())
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "frame {} +{:.1} ms: ", self.frame, self.excess_ms)?;
        if self.counters.is_empty() {
            return write!(f, "{NO_SPIKE}");
        }
        for (k, s) in self.counters.iter().enumerate() {
            if k > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{s}")?;
        }
        Ok(())
    }
}

/// Median over a clipped window of `n` values got by `at`, on the stack.
fn window_median(at: impl Fn(usize) -> u64, range: std::ops::Range<usize>) -> f64 {
    let mut buf = [0u64; WINDOW];
    let len = range.len();
    for (slot, k) in buf.iter_mut().zip(range) {
        *slot = at(k);
    }
    buf[..len].sort_unstable();
    median_sorted(&buf[..len])
}

/// The spikes of every counter in `infos` at frame `i` of `n` frames whose
/// values are got by `values(k)`; ordered CPU time first, larger first.
pub fn spikes<'a>(
    values: impl Fn(usize) -> &'a FrameValues,
    i: usize,
    n: usize,
    infos: &[CounterInfo],
    rule: &HealthRule,
) -> Vec<Spike> {
    spikes_by(|k, c| values(k)[c], i, n, infos, rule)
}

/// [`spikes`] with values got by `value(frame, counter)`.
pub fn spikes_by(
    value: impl Fn(usize, usize) -> u64,
    i: usize,
    n: usize,
    infos: &[CounterInfo],
    rule: &HealthRule,
) -> Vec<Spike> {
    let mut out = Vec::new();
    for (c, info) in infos.iter().enumerate() {
        // Gaps between GPU batches follow from a stall, they never cause
        // one: the stall's own column names it.
        if info.name == steadyhud_metrics::gpu::WAIT_COLUMN {
            continue;
        }
        let m = window_median(|k| value(k, c), window_of(i, n));
        let v = value(i, c) as f64;
        if rule.is_spike(info.unit, v, m) {
            out.push(Spike {
                name: info.name.clone(),
                label: info.label.clone(),
                value: info.unit.display(v),
                median: info.unit.display(m),
                unit: info.unit.suffix().to_string(),
            });
        }
    }
    out.sort_by(|a, b| {
        (b.unit == "ms")
            .cmp(&(a.unit == "ms"))
            .then(b.value.total_cmp(&a.value))
    });
    out
}

/// Stutter check of frame `i` (rule of docs/metrics.md#stutters):
/// `Some(excess_ns)` if it stutters.
fn excess_at(durations: impl Fn(usize) -> u64, i: usize, n: usize, theta: f64) -> Option<f64> {
    let m = window_median(&durations, window_of(i, n));
    stutter_excess(durations(i), m, theta)
}

/// The cause of stutter `i` with excess `excess_ns`: its spikes, minus
/// CPU-time spikes too small to explain a share of the excess.
fn cause(i: usize, excess_ns: f64, mut counters: Vec<Spike>, rule: &HealthRule) -> Cause {
    let excess_ms = excess_ns / 1e6;
    counters.retain(|s| s.unit != "ms" || s.value - s.median >= rule.min_share * excess_ms);
    Cause {
        frame: i as u64,
        excess_ms,
        counters,
    }
}

/// Causes of every stutter of a recorded session: `durations[i]` and
/// `values[i]` are frame i's duration (ns) and latched counters.
pub fn attribute(
    durations: &[u64],
    values: &[FrameValues],
    infos: &[CounterInfo],
    rule: &HealthRule,
) -> Vec<Cause> {
    let n = durations.len().min(values.len());
    (0..n)
        .filter_map(|i| {
            let excess = excess_at(|k| durations[k], i, n, rule.stutter_threshold)?;
            Some(cause(
                i,
                excess,
                spikes(|k| &values[k], i, n, infos, rule),
                rule,
            ))
        })
        .collect()
}

/// [`attribute`] for counters stored per column: `columns[c][i]` is
/// counter c (described by `infos[c]`) in frame i (a log read back).
/// Columns may be owned or borrowed (`&[Vec<u64>]`, `&[&[u64]]`), so a
/// log's counters and its GPU busy column ([`gpu_work_info`]) can be judged
/// together without copying them.
pub fn attribute_columns<C: AsRef<[u64]>>(
    durations: &[u64],
    columns: &[C],
    infos: &[CounterInfo],
    rule: &HealthRule,
) -> Vec<Cause> {
    let n = columns
        .iter()
        .map(|c| c.as_ref().len())
        .fold(durations.len(), usize::min);
    let value = |k: usize, c: usize| columns[c].as_ref()[k];
    (0..n)
        .filter_map(|i| {
            let excess = excess_at(|k| durations[k], i, n, rule.stutter_threshold)?;
            Some(cause(
                i,
                excess,
                spikes_by(value, i, n, &infos[..columns.len().min(infos.len())], rule),
                rule,
            ))
        })
        .collect()
}

/// The per-frame GPU busy time as a frame-health column: a time in ns
/// like a CPU-time counter (same 1 ms floor, same 10 %-of-the-excess
/// share), named `GPU work` in causes (`GPU work 12.0 ms`). It is a column
/// of its own, never added to or subtracted from any CPU counter.
pub fn gpu_work_info() -> CounterInfo {
    CounterInfo {
        name: steadyhud_metrics::gpu::BUSY_COLUMN.to_string(),
        label: steadyhud_metrics::gpu::GPU_WORK_LABEL.to_string(),
        unit: Unit::Nanos,
    }
}

/// Stutters that share a main cause: the first counter a [`Cause`] names
/// (CPU time first, larger first), or none.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CauseGroup {
    /// The counter's label, or [`NO_SPIKE`].
    pub label: String,
    pub stutters: usize,
    /// Sum of the stutters' excess over their window medians, ms.
    pub excess_ms: f64,
}

/// Label of the stutters no counter explains.
pub const NO_SPIKE: &str = "no counter spiked";

/// `causes` grouped by main cause, most stutters first (then most excess,
/// then label), so two runs can be compared cause by cause.
pub fn by_main_cause(causes: &[Cause]) -> Vec<CauseGroup> {
    let mut groups: Vec<CauseGroup> = Vec::new();
    for c in causes {
        add_to_groups(&mut groups, c);
    }
    sort_groups(&mut groups);
    groups
}

/// Counts `c` in its main cause's group (a running [`by_main_cause`]: the
/// groups in the order met, until [`sort_groups`]).
pub fn add_to_groups(groups: &mut Vec<CauseGroup>, c: &Cause) {
    let label = c.counters.first().map_or(NO_SPIKE, |s| s.label.as_str());
    match groups.iter_mut().find(|g| g.label == label) {
        Some(g) => {
            g.stutters += 1;
            g.excess_ms += c.excess_ms;
        }
        None => groups.push(CauseGroup {
            label: label.to_string(),
            stutters: 1,
            excess_ms: c.excess_ms,
        }),
    }
}

/// [`by_main_cause`]'s order: most stutters first, then most excess, then
/// label.
pub fn sort_groups(groups: &mut [CauseGroup]) {
    groups.sort_by(|a, b| {
        b.stutters
            .cmp(&a.stutters)
            .then(b.excess_ms.total_cmp(&a.excess_ms))
            .then(a.label.cmp(&b.label))
    });
}

/// Streaming frame health: push frames as they come, get each stutter's
/// cause once the 9 frames after it are known (or at [`Tracker::finish`]).
/// Cloning is cheap (≤ 19 frames are kept).
#[derive(Clone)]
pub struct Tracker {
    rule: HealthRule,
    infos: Vec<CounterInfo>,
    /// The last up to 19 frames: (duration ns, values); front is frame `base`.
    buf: VecDeque<(u64, FrameValues)>,
    base: usize,
    /// Next frame to judge.
    next: usize,
    /// Frames pushed.
    n: usize,
    totals: Vec<u64>,
}

impl Tracker {
    pub fn new(infos: Vec<CounterInfo>, rule: HealthRule) -> Tracker {
        let totals = vec![0; infos.len()];
        Tracker {
            rule,
            infos,
            buf: VecDeque::with_capacity(WINDOW + 1),
            base: 0,
            next: 0,
            n: 0,
            totals,
        }
    }

    /// Counters this tracker judges.
    pub fn infos(&self) -> &[CounterInfo] {
        &self.infos
    }

    /// Per-counter session totals (raw units), in `infos` order.
    pub fn totals(&self) -> &[u64] {
        &self.totals
    }

    /// Frames pushed so far.
    pub fn frames(&self) -> usize {
        self.n
    }

    /// Adds frame `n` and appends to `out` the cause of any stutter whose
    /// window just became complete.
    pub fn push(&mut self, duration_ns: u64, values: &FrameValues, out: &mut Vec<Cause>) {
        for (t, v) in self.totals.iter_mut().zip(values) {
            *t = t.saturating_add(*v);
        }
        self.buf.push_back((duration_ns, *values));
        self.n += 1;
        // Frame i's window ends at i+9: judge every frame whose window is complete.
        while self.next + HALF_WINDOW < self.n {
            self.judge(self.n, out);
        }
        self.trim();
    }

    /// Judges the last frames (their windows are clipped at the end).
    pub fn finish(&mut self, out: &mut Vec<Cause>) {
        while self.next < self.n {
            self.judge(self.n, out);
        }
    }

    fn judge(&mut self, n: usize, out: &mut Vec<Cause>) {
        let i = self.next;
        self.next += 1;
        let (buf, base) = (&self.buf, self.base);
        if let Some(excess) = excess_at(|k| buf[k - base].0, i, n, self.rule.stutter_threshold) {
            let counters = spikes(|k| &buf[k - base].1, i, n, &self.infos, &self.rule);
            out.push(cause(i, excess, counters, &self.rule));
        }
    }

    /// Keeps only frames still inside the window of a frame yet to judge.
    fn trim(&mut self) {
        let keep_from = self.next.saturating_sub(HALF_WINDOW);
        while self.base < keep_from {
            self.buf.pop_front();
            self.base += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::table::MAX_COUNTERS;
    use proptest::prelude::*;

    #[test]
    fn stutters_group_by_their_first_counter() {
        let spike = |label: &str| Spike {
            name: label.replace(' ', "_"),
            label: label.to_string(),
            value: 30.0,
            median: 1.0,
            unit: "ms".into(),
        };
        let cause = |frame, excess_ms, counters| Cause {
            frame,
            excess_ms,
            counters,
        };
        let causes = [
            cause(
                10,
                40.0,
                vec![spike("pipeline creation"), spike("queue submit")],
            ),
            cause(20, 70.0, vec![]),
            cause(30, 25.0, vec![spike("pipeline creation")]),
            cause(40, 9.0, vec![spike("queue submit")]),
        ];
        let g = by_main_cause(&causes);
        let got: Vec<(&str, usize, f64)> = g
            .iter()
            .map(|g| (g.label.as_str(), g.stutters, g.excess_ms))
            .collect();
        assert_eq!(
            got,
            [
                ("pipeline creation", 2, 65.0),
                (NO_SPIKE, 1, 70.0),
                ("queue submit", 1, 9.0)
            ]
        );
        assert!(by_main_cause(&[]).is_empty());
    }

    fn infos() -> Vec<CounterInfo> {
        vec![
            CounterInfo {
                name: "vk.pipeline_create_ns".into(),
                label: "pipeline creation".into(),
                unit: Unit::Nanos,
            },
            CounterInfo {
                name: "vk.pipelines".into(),
                label: "pipelines".into(),
                unit: Unit::Count,
            },
            CounterInfo {
                name: "vk.alloc_bytes".into(),
                label: "memory allocated".into(),
                unit: Unit::Bytes,
            },
        ]
    }

    fn frame(ns: u64, n: u64, bytes: u64) -> FrameValues {
        let mut f = [0; MAX_COUNTERS];
        f[0] = ns;
        f[1] = n;
        f[2] = bytes;
        f
    }

    #[test]
    fn spike_rule_floors_and_ratio() {
        let r = HealthRule::default();
        assert!(!r.is_spike(Unit::Nanos, 1.9e6, 1e6)); // +0.9 ms: under the 1 ms floor
        assert!(r.is_spike(Unit::Nanos, 2.1e6, 1e6)); // +1.1 ms, 2.1x
        assert!(!r.is_spike(Unit::Nanos, 14e6, 10e6)); // +4 ms but only 1.4x
        assert!(r.is_spike(Unit::Count, 1.0, 0.0));
        assert!(!r.is_spike(Unit::Count, 2.0, 2.0));
        assert!(!r.is_spike(Unit::Bytes, 512.0 * 1024.0, 0.0));
    }

    #[test]
    fn pipeline_stutter_is_attributed_and_sleep_stutter_is_not() {
        // 60 frames of 16.6 ms with ~0.1 ms of pipeline work; frame 20 compiles
        // (+41 ms of creation, 3 pipelines); frame 40 just sleeps 60 ms.
        let mut d = vec![16_600_000u64; 60];
        let mut v: Vec<FrameValues> = (0..60)
            .map(|i| frame(100_000 + (i % 3) * 1000, 0, 0))
            .collect();
        d[20] += 41_000_000;
        v[20] = frame(41_000_000, 3, 0);
        d[40] = 60_000_000;
        v[40] = frame(2_000_000, 0, 0); // a 1.9 ms spike: < 10% of the 43 ms stutter
        let causes = attribute(&d, &v, &infos(), &HealthRule::default());
        assert_eq!(causes.len(), 2);
        assert_eq!(causes[0].frame, 20);
        assert_eq!(
            causes[0].to_string(),
            "frame 20 +41.0 ms: pipeline creation 41.0 ms, pipelines 3"
        );
        assert_eq!(
            causes[1].to_string(),
            "frame 40 +43.4 ms: no counter spiked"
        );
    }

    #[test]
    fn tracker_emits_after_nine_frames_or_at_finish() {
        let mut t = Tracker::new(infos(), HealthRule::default());
        let mut out = Vec::new();
        for i in 0..15u64 {
            let d = if i == 3 || i == 13 {
                50_000_000
            } else {
                10_000_000
            };
            t.push(d, &frame(0, 0, if i == 3 { 8 << 20 } else { 0 }), &mut out);
            if i == 11 {
                assert_eq!(out.len(), 0);
            }
            if i == 12 {
                assert_eq!(out.len(), 1);
            }
        }
        assert_eq!(out[0].counters[0].label, "memory allocated");
        assert_eq!(out.len(), 1);
        t.finish(&mut out);
        assert_eq!(out.iter().map(|c| c.frame).collect::<Vec<_>>(), vec![3, 13]);
        assert_eq!(t.totals(), &[0, 0, 8 << 20]);
    }

    #[test]
    fn gpu_spike_is_named_gpu_work_next_to_cpu_counters() {
        // 16.6 ms frames with 10 ms of GPU work; frame 30 takes 40 ms, its
        // GPU work 33 ms: named, with its own label, beside pipeline creation
        // (which did not spike). Frame 50 stutters with flat GPU work.
        let mut d = vec![16_600_000u64; 60];
        let mut gpu = vec![10_000_000u64; 60];
        d[30] = 40_000_000;
        gpu[30] = 33_000_000;
        d[50] = 45_000_000;
        let cpu = vec![100_000u64; 60];
        let infos = [infos()[0].clone(), gpu_work_info()];
        let cols: [&[u64]; 2] = [&cpu, &gpu];
        let causes = attribute_columns(&d, &cols, &infos, &HealthRule::default());
        let text: Vec<String> = causes.iter().map(|c| c.to_string()).collect();
        assert_eq!(
            text,
            [
                "frame 30 +23.4 ms: GPU work 33.0 ms",
                "frame 50 +28.4 ms: no counter spiked"
            ]
        );
        assert_eq!(causes[0].counters[0].name, "gpu_busy_ms");
    }

    proptest! {
        /// Streaming gives exactly what the batch function gives.
        #[test]
        fn tracker_equals_attribute(
            frames in proptest::collection::vec((1u64..60_000_000, 0u64..5_000_000, 0u64..4), 0..120)
        ) {
            let d: Vec<u64> = frames.iter().map(|f| f.0).collect();
            let v: Vec<FrameValues> = frames.iter().map(|f| frame(f.1, f.2, 0)).collect();
            let rule = HealthRule::default();
            let batch = attribute(&d, &v, &infos(), &rule);
            let mut t = Tracker::new(infos(), rule);
            let mut out = Vec::new();
            for (d, v) in d.iter().zip(&v) {
                t.push(*d, v, &mut out);
            }
            t.finish(&mut out);
            prop_assert_eq!(out, batch);
        }

        /// Reading counters back per column gives the same causes.
        #[test]
        fn columns_equal_rows(
            frames in proptest::collection::vec((1u64..60_000_000, 0u64..5_000_000, 0u64..4), 0..100)
        ) {
            let d: Vec<u64> = frames.iter().map(|f| f.0).collect();
            let v: Vec<FrameValues> = frames.iter().map(|f| frame(f.1, f.2, 0)).collect();
            let cols: Vec<Vec<u64>> = (0..3).map(|c| v.iter().map(|f| f[c]).collect()).collect();
            let rule = HealthRule::default();
            prop_assert_eq!(attribute_columns(&d, &cols, &infos(), &rule), attribute(&d, &v, &infos(), &rule));
        }

        /// A cause is exactly a stutter of docs/metrics.md#stutters: same
        /// frames as the core.
        #[test]
        fn causes_are_the_cores_stutters(d in proptest::collection::vec(1u64..80_000_000, 1..150)) {
            let v = vec![[0u64; MAX_COUNTERS]; d.len()];
            let causes = attribute(&d, &v, &infos(), &HealthRule::default());
            let want = steadyhud_metrics::summarize(&d, &steadyhud_metrics::Options::default()).unwrap().stutter_frames;
            prop_assert_eq!(causes.iter().map(|c| c.frame as usize).collect::<Vec<_>>(), want);
            prop_assert!(causes.iter().all(|c| c.counters.is_empty()));
        }
    }
}
