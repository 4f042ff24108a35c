//! Every metric of a session's summary, declared once ([`METRICS`]): its
//! JSON key, its label and unit for people, how it is read off a
//! [`Summary`], which way is better, and how `merge` combines it. The
//! summary JSON (the layer's and `analyze --json`'s), `summarize`'s
//! columns, `analyze`'s table, `compare`, the HTML report and `merge` all
//! list their metrics from here, so a new metric is a field of
//! [`Summary`] (or [`TimeMetrics`]) and one entry below.
//!
//! The order of [`METRICS`] is the contract's (docs/metrics.md, "The JSON
//! keys"); tables that show metrics in another order group them by
//! [`Group`].

use super::sorted::SortedDurations;
use super::summary::Summary;
use super::time_metrics::{TimeMetrics, LOW_0_1PCT_PPM, LOW_1PCT_PPM};

/// A metric's value, as written to CSV and JSON.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A count or a whole fps.
    Int(u64),
    Float(f64),
    Bool(bool),
}

impl Value {
    /// As a number (`true` is 1): what tables compare.
    pub fn number(self) -> f64 {
        match self {
            Value::Int(v) => v as f64,
            Value::Float(v) => v,
            Value::Bool(b) => f64::from(u8::from(b)),
        }
    }

    /// As written to CSV: integers plainly, floats in Rust's shortest
    /// round-trip form (a reader gets the exact `f64` back).
    pub fn csv(self) -> String {
        match self {
            Value::Int(v) => v.to_string(),
            Value::Float(v) => v.to_string(),
            Value::Bool(b) => b.to_string(),
        }
    }

    /// As JSON (a float that is not finite is `null`).
    pub fn json(self) -> serde_json::Value {
        match self {
            Value::Int(v) => v.into(),
            Value::Float(v) => {
                serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, Into::into)
            }
            Value::Bool(b) => b.into(),
        }
    }
}

/// Where a metric comes from.
#[derive(Clone, Copy, Debug)]
pub enum Source {
    /// The order-free metrics: a log's, or a fleet's merged time
    /// histogram's ([`TimeMetrics`]).
    Time(fn(&TimeMetrics) -> Value),
    /// Metrics of a log's [`Summary`] only: those that need the frames in
    /// order (stutters, OSC) or the analysis options (the target of
    /// `time_over_budget_pct`), which a fleet's histogram does not carry.
    Log(fn(&Summary) -> Value),
}

/// How `steadyhud merge` gets a metric of several logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Merge {
    /// Read off the merged time histogram, within `bound` of the exact
    /// value (docs/metrics.md, "Fleet histogram").
    Histogram { bound: &'static str },
    /// A share of time: the inputs' values weighted by their duration,
    /// exactly (every input must carry it).
    TimeShare,
    /// Not mergeable (order-dependent counts and flags).
    No,
}

/// The bound of metrics the histogram gives exactly.
const EXACT: Merge = Merge::Histogram { bound: "exact" };
/// Percentiles and classic lows: bucket width.
const WITHIN_1: Merge = Merge::Histogram {
    bound: "within 1 %",
};
/// Steady / Mostly Steady / Typical FPS.
const WITHIN_1_PLUS_1: Merge = Merge::Histogram {
    bound: "within 1 % + 1",
};

/// The kind of metric, for tables that group them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Group {
    /// Frames and duration.
    Size,
    /// Frame-count-weighted rates (average, classic lows).
    Rates,
    /// Time-weighted frame-time percentiles.
    Percentiles,
    /// Steady / Mostly Steady / Typical FPS and the time over the
    /// target's budget (slow(f) of the same curve).
    Steady,
    /// Stutters and the time they take.
    Stutters,
    /// Yes-or-no verdicts (oscillation).
    Flags,
}

/// One metric of the summary.
#[derive(Clone, Copy, Debug)]
pub struct Metric {
    /// The JSON key and CSV column.
    pub key: &'static str,
    /// Words for people: `Steady FPS`.
    pub label: &'static str,
    /// A short header: `Steady`.
    pub short: &'static str,
    /// `fps`, `ms`, `s`, `%`, or empty.
    pub unit: &'static str,
    /// Decimals shown in tables.
    pub decimals: usize,
    /// Whether a larger value is an improvement (`None`: neither).
    pub higher_is_better: Option<bool>,
    pub group: Group,
    pub source: Source,
    pub merge: Merge,
}

impl Metric {
    /// The value of a log's summary.
    pub fn of(&self, s: &Summary) -> Value {
        match self.source {
            Source::Time(f) => f(s),
            Source::Log(f) => f(s),
        }
    }

    /// The value of a fleet's (or any) order-free metrics; `None` for a
    /// metric that needs the frames in order.
    pub fn of_time(&self, t: &TimeMetrics) -> Option<Value> {
        match self.source {
            Source::Time(f) => Some(f(t)),
            Source::Log(_) => None,
        }
    }

    /// The value as a table cell under a header that names the unit:
    /// `decimals` places, `yes` / `no` for a flag.
    pub fn text(&self, v: Value) -> String {
        match v {
            Value::Bool(b) => if b { "yes" } else { "no" }.into(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => format!("{f:.*}", self.decimals),
        }
    }

    /// Whether `got` equals `exact`, both this metric over the frames
    /// `sorted`, as steadyhud prints it: at `decimals` places; a classic
    /// low within 1 µs per frame of the k longest (what a running
    /// session's fixed-size state guarantees: docs/metrics.md, "The
    /// summary of a running session").
    pub fn agrees_as_printed(&self, got: Value, exact: Value, sorted: &SortedDurations) -> bool {
        let Some(p_ppm) = self.classic_low_ppm() else {
            return self.text(got) == self.text(exact);
        };
        let (k, sum) = sorted.longest(p_ppm);
        let bound = exact.number() * 1_000.0 * k as f64 / sum as f64;
        (got.number() - exact.number()).abs() <= bound
    }

    /// The share of frames (ppm) whose k longest a classic low averages;
    /// `None` for any other metric.
    fn classic_low_ppm(&self) -> Option<u64> {
        match self.key {
            "low_1pct_fps" => Some(LOW_1PCT_PPM),
            "low_0_1pct_fps" => Some(LOW_0_1PCT_PPM),
            _ => None,
        }
    }

    /// The value as a table shows it: `decimals` places, the unit after.
    pub fn show(&self, v: Value) -> String {
        let text = self.text(v);
        if matches!(v, Value::Bool(_)) || self.unit.is_empty() || self.unit == "fps" {
            text
        } else if self.unit == "%" {
            format!("{text} %")
        } else {
            format!("{text} {}", self.unit)
        }
    }
}

/// The metric of `key`, if it is one.
pub fn metric(key: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.key == key)
}

const fn int(v: usize) -> Value {
    Value::Int(v as u64)
}

/// Every metric of the summary, in the contract's key order (the per-frame
/// `stutter_frames` list is a field of [`Summary`], not a metric).
pub const METRICS: &[Metric] = &[
    Metric {
        key: "frames",
        label: "Frames",
        short: "Frames",
        unit: "",
        decimals: 0,
        higher_is_better: None,
        group: Group::Size,
        source: Source::Time(|t| int(t.frames)),
        merge: EXACT,
    },
    Metric {
        key: "duration_s",
        label: "Duration",
        short: "Duration",
        unit: "s",
        decimals: 2,
        higher_is_better: None,
        group: Group::Size,
        source: Source::Time(|t| Value::Float(t.duration_s)),
        merge: EXACT,
    },
    Metric {
        key: "average_fps",
        label: "Average FPS",
        short: "Average",
        unit: "fps",
        decimals: 2,
        higher_is_better: Some(true),
        group: Group::Rates,
        source: Source::Time(|t| Value::Float(t.average_fps)),
        merge: EXACT,
    },
    Metric {
        key: "low_1pct_fps",
        label: "1% low (by count)",
        short: "1% low",
        unit: "fps",
        decimals: 2,
        higher_is_better: Some(true),
        group: Group::Rates,
        source: Source::Time(|t| Value::Float(t.low_1pct_fps)),
        merge: WITHIN_1,
    },
    Metric {
        key: "low_0_1pct_fps",
        label: "0.1% low (by count)",
        short: "0.1% low",
        unit: "fps",
        decimals: 2,
        higher_is_better: Some(true),
        group: Group::Rates,
        source: Source::Time(|t| Value::Float(t.low_0_1pct_fps)),
        merge: WITHIN_1,
    },
    Metric {
        key: "p50_ms",
        label: "P50 (time-weighted)",
        short: "P50",
        unit: "ms",
        decimals: 2,
        higher_is_better: Some(false),
        group: Group::Percentiles,
        source: Source::Time(|t| Value::Float(t.p50_ms)),
        merge: WITHIN_1,
    },
    Metric {
        key: "p90_ms",
        label: "P90 (time-weighted)",
        short: "P90",
        unit: "ms",
        decimals: 2,
        higher_is_better: Some(false),
        group: Group::Percentiles,
        source: Source::Time(|t| Value::Float(t.p90_ms)),
        merge: WITHIN_1,
    },
    Metric {
        key: "p95_ms",
        label: "P95 (time-weighted)",
        short: "P95",
        unit: "ms",
        decimals: 2,
        higher_is_better: Some(false),
        group: Group::Percentiles,
        source: Source::Time(|t| Value::Float(t.p95_ms)),
        merge: WITHIN_1,
    },
    Metric {
        key: "p99_ms",
        label: "P99 (time-weighted)",
        short: "P99",
        unit: "ms",
        decimals: 2,
        higher_is_better: Some(false),
        group: Group::Percentiles,
        source: Source::Time(|t| Value::Float(t.p99_ms)),
        merge: WITHIN_1,
    },
    Metric {
        key: "p99_9_ms",
        label: "P99.9 (time-weighted)",
        short: "P99.9",
        unit: "ms",
        decimals: 2,
        higher_is_better: Some(false),
        group: Group::Percentiles,
        source: Source::Time(|t| Value::Float(t.p99_9_ms)),
        merge: WITHIN_1,
    },
    Metric {
        key: "steady_fps",
        label: "Steady FPS",
        short: "Steady",
        unit: "fps",
        decimals: 0,
        higher_is_better: Some(true),
        group: Group::Steady,
        source: Source::Time(|t| Value::Int(t.steady_fps.into())),
        merge: WITHIN_1_PLUS_1,
    },
    Metric {
        key: "mostly_steady_fps",
        label: "Mostly Steady FPS",
        short: "Mostly Steady",
        unit: "fps",
        decimals: 0,
        higher_is_better: Some(true),
        group: Group::Steady,
        source: Source::Time(|t| Value::Int(t.mostly_steady_fps.into())),
        merge: WITHIN_1_PLUS_1,
    },
    Metric {
        key: "typical_fps",
        label: "Typical FPS",
        short: "Typical",
        unit: "fps",
        decimals: 0,
        higher_is_better: Some(true),
        group: Group::Steady,
        source: Source::Time(|t| Value::Int(t.typical_fps.into())),
        merge: WITHIN_1_PLUS_1,
    },
    Metric {
        key: "time_over_budget_pct",
        label: "Time over budget",
        short: "Over budget",
        unit: "%",
        decimals: 2,
        higher_is_better: Some(false),
        group: Group::Steady,
        source: Source::Log(|s| Value::Float(s.time_over_budget_pct)),
        merge: Merge::TimeShare,
    },
    Metric {
        key: "stutter_count",
        label: "Stutters",
        short: "Stutters",
        unit: "",
        decimals: 0,
        higher_is_better: Some(false),
        group: Group::Stutters,
        source: Source::Log(|s| int(s.stutter_count)),
        merge: Merge::No,
    },
    Metric {
        key: "stutter_time_pct",
        label: "Stutter time",
        short: "Stutter time",
        unit: "%",
        decimals: 2,
        higher_is_better: Some(false),
        group: Group::Stutters,
        source: Source::Log(|s| Value::Float(s.stutter_time_pct)),
        merge: Merge::TimeShare,
    },
    Metric {
        key: "osc",
        label: "OSC (oscillation)",
        short: "OSC",
        unit: "",
        decimals: 0,
        higher_is_better: Some(false),
        group: Group::Flags,
        source: Source::Log(|s| Value::Bool(s.osc)),
        merge: Merge::No,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreeing_as_printed_is_the_printed_digits_and_a_low_s_bound() {
        let p50 = metric("p50_ms").unwrap();
        let sorted = SortedDurations::new(&[10_000_000; 100]);
        let f = Value::Float;
        assert!(p50.agrees_as_printed(f(10.000427), f(10.000295), &sorted));
        assert!(!p50.agrees_as_printed(f(10.006), f(10.004), &sorted));
        // 100 frames of 10 ms: the 1% low is the longest frame, 100 fps,
        // within 1 µs of its 10 ms: ±0.01 fps.
        let low = metric("low_1pct_fps").unwrap();
        assert!(low.agrees_as_printed(f(100.0099), f(100.0), &sorted));
        assert!(!low.agrees_as_printed(f(100.0101), f(100.0), &sorted));
    }
}
