//! Metrics core: every number of docs/metrics.md, exactly, over frame
//! durations in integer nanoseconds. Pure Rust, no Vulkan: the layer, HUD,
//! session log and CLI all use it.
//!
//! Whole-session functions take a slice of durations; [`Rolling`] keeps the
//! same numbers over a sliding time window, for the live HUD.
//!
//! - `sorted`: sorted durations + prefix sums: average, classic lows,
//!   time-weighted percentiles ([`SortedDurations`]).
//! - `steady`: STK slow/excess curves and Steady / Mostly Steady / Typical FPS.
//! - `stutter`: the 19-frame median stutter rule and the OSC flag.
//! - `rolling`: the incremental window engine.
//! - [`display`]: the same metrics over display intervals (what reached
//!   the screen), dropped frames, animation error and latency.
//! - [`latency`]: PC latency live: which frame takes each input, NVIDIA's
//!   terms per frame (I2FS, FS2P, P2D, PCL), click to photon, in fixed
//!   memory, and their time-weighted summary.
//! - [`gpu`]: the GPU-bound verdict over per-frame GPU busy time.
//! - `histogram`: the mergeable time histogram (log-spaced buckets, 1 %) and
//!   the fleet-wide metrics read off it.
//! - [`sensors`]: time-weighted means and maxima of system readings
//!   (CPU, GPU, memory, power) and the session's energy per frame.
//! - [`sensor_causes`]: stutters named by GPU throttling or a clock drop.
//! - [`fine`] and [`whole`]: a running session's whole-session state in
//!   fixed size (a histogram at 1 ns below 66 µs and 1 µs above, split at
//!   every frame budget; the stutter rule judged as frames arrive), from
//!   which the game's summary is written (docs/metrics.md, "The summary of
//!   a running session"); [`display_whole`]: the same for the
//!   displayed-frame block of a window with display times.
//! - [`shared_list`]: a list that only grows, read by another thread
//!   without a copy (the stutters a running session keeps).
//! - `time_metrics`: the order-free metrics, assembled once for both
//!   ([`TimeMetrics`]).
//! - [`bootstrap`]: runs of A against runs of B: each compared metric's
//!   difference with a 95 % interval from a two-level block bootstrap.
//! - [`catalog`]: every metric of the summary declared once (key, label,
//!   unit, direction, how `merge` combines it), for every output to list.
//!
//! Decisions are exact integer arithmetic on ns (u128 sums, percentiles as
//! parts per million); reported values are `f64`.

#![forbid(unsafe_code)]

pub mod bootstrap;
pub mod catalog;
pub mod display;
pub mod display_whole;
pub mod fine;
pub mod gpu;
pub mod histogram;
pub mod latency;
mod options;
mod rolling;
mod runs;
pub mod sensor_causes;
pub mod sensors;
pub mod shared_list;
mod sorted;
mod steady;
mod stutter;
mod summary;
mod time_metrics;
pub mod whole;

pub use histogram::TimeHistogram;
pub use options::{Options, DEFAULT_STUTTER_THRESHOLD, DEFAULT_TARGET_FPS, NS_PER_S};
pub use rolling::Rolling;
pub use sorted::{ppm_of, time_weighted_percentile, SortedDurations, PPM};
pub use steady::{SlowFrames, StkBound, StkPoint, MOSTLY_STEADY, STEADY, TYPICAL};
pub use stutter::{
    for_each_shape, frame_shape, median_sorted, oscillation, p90, quantile_sorted, shape_at,
    shapes, stutter_excess, stutters, stutters_and_osc, window_of, window_shapes, FrameShape,
    P90Above, WindowShapes, HALF_WINDOW, OSC_MIN_RATIO, OSC_MIN_SPREAD_NS, STUTTER_MIN_NS, WINDOW,
};
pub use summary::{stk_curve, summarize, time_over_budget_pct, Summary, SummaryKeys};
pub use time_metrics::{TimeDistribution, TimeMetrics};
pub use whole::WholeSession;
