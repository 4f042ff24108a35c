//! The scripted test app (`test-programs/testapp`): what it prints (presents,
//! swapchains, late presents, GPU work, swapchain creation times), the
//! colours it draws, and its `--pattern` scripts' ideal frame durations
//! (from its own parser).

use super::RunOutput;
use std::time::Duration;

/// The test app's band colours as 8-bit UNORM values, for screenshot checks
/// (must match `test-programs/testapp/src/target.rs`): band 0 (x in
/// 0..16, 32..48, ...) is `BAND_A`, the others `BAND_B`.
pub const BAND_WIDTH: u32 = 16;

pub const BAND_A_UNORM: [u8; 3] = [13, 64, 140];

pub const BAND_B_UNORM: [u8; 3] = [230, 140, 26];

/// The test app's own pattern parser (same source file), so tests compute
/// the script's ideal frame durations exactly as the app schedules them.
#[path = "../../test-programs/testapp/src/pattern.rs"]
#[allow(clippy::all)]
mod pattern;

/// The ideal frame durations (ns) of a `--pattern` script: frame i is the
/// gap between present i and present i+1.
pub fn script_durations_ns(pattern: &str) -> Vec<u64> {
    pattern::Pattern::parse(pattern)
        .unwrap_or_else(|e| panic!("bad pattern {pattern:?}: {e}"))
        .gaps()
        .map(|g| g.as_nanos() as u64)
        .collect()
}

impl RunOutput {
    /// N of the test app's final `testapp: presented N frames` line.
    pub fn presented(&self) -> Option<u64> {
        self.stdout.lines().find_map(|l| {
            l.strip_prefix("testapp: presented ")?
                .strip_suffix(" frames")?
                .parse()
                .ok()
        })
    }

    /// Presents per swapchain from `testapp: swapchain presents a,b,...`.
    pub fn swapchain_presents(&self) -> Vec<u64> {
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix("testapp: swapchain presents "))
            .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// M of `testapp: swapchain recreations M`.
    pub fn swapchain_recreations(&self) -> Option<u64> {
        self.stdout.lines().find_map(|l| {
            l.strip_prefix("testapp: swapchain recreations ")?
                .trim()
                .parse()
                .ok()
        })
    }

    /// (count, worst ms) from `testapp: late presents N worst X ms`: how
    /// far the app itself missed its script.
    pub fn late_presents(&self) -> Option<(u64, f64)> {
        self.stdout.lines().find_map(|l| {
            let rest = l.strip_prefix("testapp: late presents ")?;
            let (n, worst) = rest.split_once(" worst ")?;
            let (ms, _at) = worst.split_once(" ms")?;
            Some((n.parse().ok()?, ms.parse().ok()?))
        })
    }

    /// Largest `testapp: present K` progress count read at or before `t`
    /// after spawn (0 if none).
    pub fn presents_by(&self, t: Duration) -> u64 {
        self.stdout_lines
            .iter()
            .filter(|(at, _)| *at <= t)
            .filter_map(|(_, l)| l.strip_prefix("testapp: present ")?.parse::<u64>().ok())
            .max()
            .unwrap_or(0)
    }

    /// N of the test app's `testapp: submit thread submits N` (`--submit-thread`).
    pub fn thread_submits(&self) -> Option<u64> {
        self.stdout.lines().find_map(|l| {
            l.strip_prefix("testapp: submit thread submits ")?
                .trim()
                .parse()
                .ok()
        })
    }

    /// The test app's `testapp: vkCreateSwapchainKHR us: first=.. median_after_first=.. n=..` line.
    pub fn create_swapchain_times(&self) -> Option<CreateSwapchainTimes> {
        let line = self.stdout.lines().find_map(|l| {
            l.strip_prefix("testapp: ")
                .filter(|r| r.starts_with("vkCreateSwapchainKHR us: "))
        })?;
        let field = |name: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
                .and_then(|v| v.parse::<u64>().ok())
        };
        Some(CreateSwapchainTimes {
            line: line.to_string(),
            first_us: field("first")?,
            median_after_first_us: field("median_after_first"),
            n: field("n")?,
        })
    }
}

/// The test app's `testapp: gpu work ms: median=M p10=A p90=B frames=N
/// requested=MS` line (`--gpu-work`).
#[derive(Debug)]
pub struct GpuWorkLine {
    pub median: f64,
    pub p10: f64,
    pub p90: f64,
    pub frames: u64,
    pub requested: f64,
}

pub fn gpu_work_line(out: &RunOutput) -> Option<GpuWorkLine> {
    let line = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("testapp: gpu work ms: "))?;
    let field = |name: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse::<f64>().ok())
    };
    Some(GpuWorkLine {
        median: field("median")?,
        p10: field("p10")?,
        p90: field("p90")?,
        frames: field("frames")? as u64,
        requested: field("requested")?,
    })
}

/// The test app's `testapp: vkCreateSwapchainKHR us: ...` line.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateSwapchainTimes {
    /// The whole line after `testapp: `.
    pub line: String,
    /// Duration of the first call (us).
    pub first_us: u64,
    /// Median of the later calls (us), None if there was only one call.
    pub median_after_first_us: Option<u64>,
    /// Number of calls.
    pub n: u64,
}
