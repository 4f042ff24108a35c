//! What a report is made of: the runs it shows and the options it is
//! drawn with.

use steadyhud_metrics::Summary;

/// The few-runs layout holds up to this many logs: the palette has six
/// colours, and past six overlaid series (and a table of 2·n columns) the
/// charts stop telling runs apart. More logs get the many-runs layout.
pub const MANY_RUNS_ABOVE: usize = 6;

/// One analysed log.
pub struct Run {
    /// What the log is called in legends and tables (usually its file name).
    pub name: String,
    pub durations_ns: Vec<u64>,
    pub summary: Summary,
    /// What spiked with each stutter, when the log has counter columns.
    pub stutter_causes: Option<Vec<steadyhud_counters::Cause>>,
    /// The GPU-bound verdict, when the log has GPU busy times.
    pub gpu: Option<steadyhud_metrics::gpu::GpuStats>,
    /// System readings and energy per frame, when the log has sensor
    /// columns.
    pub sensors: Option<steadyhud_metrics::sensors::SensorSummary>,
    /// The displayed-frame metrics, when the log has display columns.
    pub display: Option<RunDisplay>,
}

/// A run's display data: the statistics and which frame each display
/// interval belongs to (for the chart).
#[derive(Clone, Debug)]
pub struct RunDisplay {
    pub stats: steadyhud_metrics::display::DisplayStats,
    pub shown: Vec<steadyhud_metrics::display::Shown>,
}

/// What the page shows besides the runs.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    pub title: String,
    /// Index of the run the deltas are computed against.
    pub baseline: usize,
    /// A frame-time chart per run (the many-runs layout draws none
    /// otherwise; the few-runs layout adds them below the overlaid one).
    pub frame_times: bool,
}

impl ReportOptions {
    /// Default options with `title`: baseline the first log, no per-run charts.
    pub fn titled(title: &str) -> ReportOptions {
        ReportOptions {
            title: title.to_string(),
            baseline: 0,
            frame_times: false,
        }
    }
}

/// Which layout `n` logs get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Overlay,
    ManyRuns,
}

impl Layout {
    pub fn for_runs(n: usize) -> Layout {
        if n > MANY_RUNS_ABOVE {
            Layout::ManyRuns
        } else {
            Layout::Overlay
        }
    }
}
