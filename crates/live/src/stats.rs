//! Live statistics handed from the analysis thread to the HUD.
//!
//! The analysis thread builds a fresh [`LiveStats`] a few times a second and
//! [`LiveCell::publish`]es it; the present path takes the latest with
//! [`LiveCell::latest`], which only clones an `Arc` under a lock that is never
//! held for longer than that clone.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use steadyhud_metrics::Summary;
use steadyhud_sys::lock::Recover;

/// Source of [`LiveStats::generation`]: unique across every cell of the
/// process, so two publications never share one.
static GENERATION: AtomicU64 = AtomicU64::new(1);

/// What the HUD draws: the rolling metrics and the recent frame times.
#[derive(Clone, Debug, Default)]
pub struct LiveStats {
    /// The values of docs/metrics.md#live-rolling-values over the rolling
    /// window (`None` before two presents).
    pub summary: Option<Summary>,
    /// Length of the rolling window, seconds.
    pub window_s: f64,
    /// Frame times of the graph span in ms, oldest first.
    pub recent_ms: Vec<f32>,
    /// Stutter flag of each entry of `recent_ms` (rule of
    /// docs/metrics.md#stutters over the window).
    pub recent_stutter: Vec<bool>,
    /// Duration of the newest frame, ms.
    pub last_frame_ms: f32,
    /// Timestamps the present hook could not queue because the ring was full.
    pub ring_overflows: u64,
    /// Statistics counters for the HUD's counter section (empty unless the
    /// config key `hud_counters` is on and the device counts).
    pub counters: Vec<LiveCounter>,
    /// The newest stutter frame health has judged (9 frames after it) and
    /// its main cause, for the same section.
    pub last_stutter: Option<LastStutter>,
    /// GPU busy time and verdict over the window (`None` without GPU timing
    /// or before its first results).
    pub gpu: Option<LiveGpu>,
    /// What reached the screen over the window (`None` without a source
    /// of display times for this window).
    pub display: Option<LiveDisplay>,
    /// PC latency and its terms over the window (`None` before a shown
    /// frame with an input in its I2FS window).
    pub latency: Option<LiveLatency>,
    /// System readings rows (config `hud_sensor_rows`, those with a value
    /// in the newest sample).
    pub sensors: Vec<steadyhud_sensors::HudRow>,
    /// The frame cap in force, fps (0 = none).
    pub fps_cap: u32,
    /// The HUD is hidden: only a toast is drawn.
    pub hidden: bool,
    /// The HUD preset shown (`steadyhud_config::hud::PRESETS`; `None`:
    /// the config's `preset`).
    pub preset: Option<u8>,
    /// The notice of the latest change, while it is up.
    pub toast: Option<crate::Toast>,
    /// Set by [`LiveCell::publish`]: differs for every publication (0 =
    /// never published), so the HUD can tell fresh stats from the ones it
    /// already rendered (an `Arc`'s address may be reused).
    pub generation: u64,
}

/// The GPU side of the rolling window, for the HUD.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LiveGpu {
    /// Mean GPU busy time per frame, ms.
    pub busy_ms: f32,
    /// Share of the window's time in GPU-bound frames, %.
    pub bound_pct: f32,
}

/// Displayed-frame timing over the rolling window, for the HUD, the
/// control socket and the exporter.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LiveDisplay {
    /// Who answered (`steadyhud_log::display::Source::name`).
    pub source: &'static str,
    /// Frames shown over the window, per second of the window's display
    /// time (`None` before two frames were shown).
    pub displayed_fps: Option<f32>,
    /// Frames the source said were never shown, in the window.
    pub dropped: u32,
    /// Frames in the window with no answer (neither shown nor dropped).
    pub unknown: u32,
    /// Mean present call → on screen of the window's shown frames, ms.
    pub latency_ms: Option<f32>,
    /// The newest refresh period the source gave, ms.
    pub refresh_ms: Option<f32>,
}

/// PC latency over the rolling window (docs/metrics.md, "PC latency"):
/// the means over the window's shown frames that have a PCL.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LiveLatency {
    /// PCL = I2FS + FS2P + P2D, ms.
    pub pcl_ms: f32,
    /// The I2FS window's mean, ms.
    pub i2fs_ms: f32,
    /// Frame start → present call, ms.
    pub fs2p_ms: f32,
    /// Present call → on screen, ms.
    pub p2d_ms: f32,
}

/// A stutter and what spiked with it, for the HUD.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LastStutter {
    /// Frame duration minus its window median, ms.
    pub excess_ms: f32,
    /// The main cause, e.g. `pipeline creation 41.0 ms` or `no counter spiked`.
    pub cause: String,
}

/// One counter's recent history for the HUD, in its display unit.
#[derive(Clone, Debug, Default)]
pub struct LiveCounter {
    /// Words for people, e.g. `pipeline creation`.
    pub label: String,
    /// Display unit: `ms`, `n` or `bytes`.
    pub unit: &'static str,
    /// Per-frame values, oldest first.
    pub recent: Vec<f32>,
}

impl LiveCounter {
    /// Newest value (0 without history).
    pub fn last(&self) -> f32 {
        self.recent.last().copied().unwrap_or(0.0)
    }

    /// Largest value of the history.
    pub fn peak(&self) -> f32 {
        self.recent.iter().copied().fold(0.0, f32::max)
    }
}

/// Single-slot mailbox for the newest [`LiveStats`].
#[derive(Default)]
pub struct LiveCell {
    /// The newest stats and the ones before them. The previous ones stay
    /// here for one more publication, so the present path, which may still
    /// hold them, never frees them: the analysis thread does, outside the
    /// lock.
    slot: Mutex<(Arc<LiveStats>, Arc<LiveStats>)>,
}

impl LiveCell {
    /// Replaces the published stats, giving them a new generation.
    pub fn publish(&self, mut stats: LiveStats) {
        stats.generation = GENERATION.fetch_add(1, Ordering::Relaxed);
        let stats = Arc::new(stats);
        let oldest = {
            let mut slot = self.slot.lock_or_recover();
            let previous = std::mem::replace(&mut slot.0, stats);
            std::mem::replace(&mut slot.1, previous)
        };
        drop(oldest);
    }

    /// The newest published stats.
    pub fn latest(&self) -> Arc<LiveStats> {
        self.slot.lock_or_recover().0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_publication_has_a_new_generation() {
        let cell = LiveCell::default();
        assert_eq!(cell.latest().generation, 0);
        let mut seen = Vec::new();
        for _ in 0..3 {
            // The same content, and possibly the same Arc address each time.
            cell.publish(LiveStats::default());
            seen.push(cell.latest().generation);
        }
        let other = LiveCell::default();
        other.publish(LiveStats::default());
        seen.push(other.latest().generation);
        assert!(seen.iter().all(|&g| g > 0), "{seen:?}");
        assert!(seen.windows(2).all(|w| w[1] > w[0]), "{seen:?}");
    }
}
