//! `steadyhud report`: one self-contained HTML file (inline SVG and CSS, no
//! script, no network) comparing one or more frame-time logs.
//!
//! Two layouts, chosen by the number of logs:
//!
//! - up to [`MANY_RUNS_ABOVE`] ([`overlay`]): every run overlaid in the
//!   frame-time, STK and percentile charts, one column per run in the
//!   metrics table;
//! - more ([`many`]): a ranked bar chart, the curves of the best, median,
//!   worst and baseline runs only, one table row per run, frame-time
//!   charts per run on request.
//!
//! Runs with system readings also get performance per watt (frames per
//! joule) and their sensor means in the metrics table ([`sensors`]).
//!
//! `compare A… --vs B… --html` draws a comparison of runs ([`compare_runs`]):
//! each side's estimate, its interval and every run, per metric.
//!
//! Deltas are against the baseline: the first log unless
//! [`ReportOptions::baseline`] picks another.

#![forbid(unsafe_code)]

pub mod bars;
pub mod charts;
pub mod compare_runs;
pub mod display;
mod html;
pub mod many;
pub mod overlay;
mod run;
pub mod sensors;
pub mod svg;
pub mod table;
pub use html::render_html;
pub use run::{Layout, ReportOptions, Run, RunDisplay, MANY_RUNS_ABOVE};
