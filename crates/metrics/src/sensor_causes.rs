//! Stutter causes from the system readings: a stutter during which the GPU
//! reported throttling, or the GPU or CPU clock dropped, names it
//! (`GPU clock 2.4→1.1 GHz`, `GPU throttle: power`). Definitions in
//! docs/metrics.md, "Stutter causes from the readings".
//!
//! For stutter frame i:
//! - the clock **at the stutter** is the lowest reading of frames i and
//!   i+1 (readings are sampled at a few Hz and logged with the frames that
//!   follow the sample, so the sample taken during a long frame may land on
//!   the next one);
//! - the **baseline** is the median of the readings of the
//!   [`BASELINE_FRAMES`] frames before i (at least [`MIN_BASELINE`] of them
//!   with a reading);
//! - the clock **dropped** iff at < [`DROP_FRACTION`] × baseline;
//! - **throttling**: the throttle reasons of frames i and i+1, in the
//!   order first seen.

use super::sensors::{Readings, Reasons, Sensor, SensorColumns};
use serde::Serialize;

/// Frames before a stutter whose clock readings make its baseline.
pub const BASELINE_FRAMES: usize = 30;
/// Readings the baseline needs (fewer: no clock judgement).
pub const MIN_BASELINE: usize = 5;
/// A clock below this share of its baseline has dropped.
pub const DROP_FRACTION: f64 = 0.85;

/// One reason a stutter got from the readings.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SensorReason {
    /// `GPU clock 2.4→1.1 GHz`.
    ClockDrop {
        device: &'static str,
        baseline_mhz: f64,
        at_mhz: f64,
    },
    /// `GPU throttle: power/thermal`.
    Throttle {
        device: &'static str,
        reasons: Vec<String>,
    },
}

impl std::fmt::Display for SensorReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SensorReason::ClockDrop {
                device,
                baseline_mhz,
                at_mhz,
            } => {
                if *baseline_mhz >= 1000.0 && *at_mhz >= 1000.0 {
                    write!(
                        f,
                        "{device} clock {:.1}→{:.1} GHz",
                        baseline_mhz / 1000.0,
                        at_mhz / 1000.0
                    )
                } else {
                    write!(f, "{device} clock {baseline_mhz:.0}→{at_mhz:.0} MHz")
                }
            }
            SensorReason::Throttle { device, reasons } => {
                write!(f, "{device} throttle: {}", reasons.join("/"))
            }
        }
    }
}

/// A stutter and what the readings say about it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SensorCause {
    /// 0-based frame index of the stutter.
    pub frame: usize,
    pub reasons: Vec<SensorReason>,
}

/// A cause as the JSON outputs give it (the summary's and `analyze
/// --json`'s `sensor_causes`): its fields and its [`SensorCause::text`].
#[derive(Serialize)]
pub struct SensorCauseJson<'a> {
    #[serde(flatten)]
    pub cause: &'a SensorCause,
    pub text: String,
}

impl SensorCause {
    /// This cause with its text, as JSON outputs write it.
    pub fn json(&self) -> SensorCauseJson<'_> {
        SensorCauseJson {
            cause: self,
            text: self.text(),
        }
    }

    /// `GPU throttle: power, GPU clock 2.4→1.1 GHz`.
    pub fn text(&self) -> String {
        let parts: Vec<String> = self.reasons.iter().map(|r| r.to_string()).collect();
        parts.join(", ")
    }
}

/// Median of finite values (mean of the two middle ones when even).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The clock-drop judgement of frame `i` over a clock column:
/// `Some((baseline, at))` when the clock dropped.
pub fn clock_drop(clock: &Readings, i: usize) -> Option<(f64, f64)> {
    let before: Vec<f64> = (i.saturating_sub(BASELINE_FRAMES)..i)
        .filter_map(|k| clock.get(k).copied())
        .filter(|v| v.is_finite())
        .collect();
    if before.len() < MIN_BASELINE {
        return None;
    }
    let baseline = median(before);
    let at = (i..i + 2)
        .filter_map(|k| clock.get(k).copied())
        .filter(|v| v.is_finite())
        .min_by(f64::total_cmp)?;
    (at < DROP_FRACTION * baseline).then_some((baseline, at))
}

/// The throttle reasons reported in frames i and i+1, in order first seen.
fn throttle_at(reasons: &Reasons, i: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in (i..i + 2).filter_map(|k| reasons.get(k)) {
        for reason in r.split('|').map(str::trim).filter(|s| !s.is_empty()) {
            if !out.iter().any(|o| o == reason) {
                out.push(reason.to_string());
            }
        }
    }
    out
}

/// What the readings say about each stutter in `stutter_frames` (see the
/// module doc): GPU throttling, then GPU and CPU clock drops. Stutters the
/// readings do not explain are left out.
pub fn sensor_causes(stutter_frames: &[usize], cols: &SensorColumns) -> Vec<SensorCause> {
    let gpu_clock = cols.get(Sensor::GpuMhz);
    let cpu_clock = cols.get(Sensor::CpuMhz);
    let mut out = Vec::new();
    for &i in stutter_frames {
        let mut reasons = Vec::new();
        if let Some(t) = &cols.throttle {
            let r = throttle_at(t, i);
            if !r.is_empty() {
                reasons.push(SensorReason::Throttle {
                    device: "GPU",
                    reasons: r,
                });
            }
        }
        for (device, clock) in [("GPU", gpu_clock), ("CPU", cpu_clock)] {
            if let Some((baseline_mhz, at_mhz)) = clock.and_then(|c| clock_drop(c, i)) {
                reasons.push(SensorReason::ClockDrop {
                    device,
                    baseline_mhz,
                    at_mhz,
                });
            }
        }
        if !reasons.is_empty() {
            out.push(SensorCause { frame: i, reasons });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::sensors::SensorColumn;
    use super::*;

    fn drop_at(v: &[f64], i: usize) -> Option<(f64, f64)> {
        clock_drop(&Readings::from(v), i)
    }

    fn cols(gpu_mhz: Vec<f64>, throttle: Option<Vec<String>>) -> SensorColumns {
        SensorColumns {
            columns: vec![SensorColumn {
                sensor: Sensor::GpuMhz,
                source: "gpu_mhz".into(),
                values: gpu_mhz.into(),
            }],
            throttle: throttle.map(Into::into),
            throttle_source: None,
        }
    }

    #[test]
    fn a_clock_drop_names_the_stutter() {
        // 40 frames at 2400 MHz, then 1100 MHz from frame 40 on.
        let mut mhz = vec![2400.0; 40];
        mhz.extend([1100.0; 5]);
        let c = sensor_causes(&[40], &cols(mhz.clone(), None));
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].frame, 40);
        assert_eq!(c[0].text(), "GPU clock 2.4→1.1 GHz");
        // The sample lands on the frame after the stutter: still named.
        let c = sensor_causes(&[39], &cols(mhz.clone(), None));
        assert_eq!(c[0].text(), "GPU clock 2.4→1.1 GHz");
        // Two frames after: not this stutter's.
        assert!(sensor_causes(&[38], &cols(mhz, None)).is_empty());
    }

    #[test]
    fn the_drop_rule_is_strictly_below_85_percent_of_the_median() {
        let mut mhz = vec![1000.0; 30];
        mhz.push(850.0);
        assert_eq!(drop_at(&mhz, 30), None);
        mhz[30] = 849.9;
        assert_eq!(drop_at(&mhz, 30), Some((1000.0, 849.9)));
        // The median, not the mean: one high reading does not move it.
        let mut mhz = vec![1000.0; 29];
        mhz.push(100_000.0);
        mhz.push(900.0);
        assert_eq!(drop_at(&mhz, 30), None);
        // Under 1 GHz it is written in MHz.
        let r = SensorReason::ClockDrop {
            device: "CPU",
            baseline_mhz: 800.0,
            at_mhz: 400.0,
        };
        assert_eq!(r.to_string(), "CPU clock 800→400 MHz");
    }

    #[test]
    fn too_few_readings_before_make_no_baseline() {
        let mut mhz = vec![f64::NAN; 30];
        mhz[0..4].copy_from_slice(&[2000.0; 4]);
        mhz.push(500.0);
        assert_eq!(drop_at(&mhz, 30), None);
        mhz[4] = 2000.0;
        assert_eq!(drop_at(&mhz, 30), Some((2000.0, 500.0)));
        // Only the 30 frames before count: readings further back do not.
        let mut far = vec![2000.0; 10];
        far.extend([f64::NAN; 30]);
        far.push(500.0);
        assert_eq!(drop_at(&far, 40), None);
        // No reading at the stutter: no judgement.
        let mut none = vec![2000.0; 30];
        none.push(f64::NAN);
        assert_eq!(drop_at(&none, 30), None);
        assert_eq!(drop_at(&none, 31), None);
        // A stutter past the end of a short column: no judgement, no panic.
        assert_eq!(drop_at(&none, 100), None);
    }

    #[test]
    fn throttle_reasons_are_named_once_in_order() {
        let t: Vec<String> = ["", "", "power", "power|thermal", "current"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let c = sensor_causes(&[2, 0, 4], &cols(vec![2000.0; 5], Some(t)));
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].frame, c[0].text()),
            (2, "GPU throttle: power/thermal".into())
        );
        assert_eq!(
            (c[1].frame, c[1].text()),
            (4, "GPU throttle: current".into())
        );
        let v = serde_json::to_value(&c[1]).unwrap();
        assert_eq!(v["reasons"][0]["kind"], "throttle");
        assert_eq!(v["reasons"][0]["reasons"][0], "current");
    }
}
