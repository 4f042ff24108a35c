//! The system readings of runs as rows: performance per watt (frames per
//! joule, joules per frame, energy) and each sensor's time-weighted mean,
//! for `analyze`, `compare` and the HTML report
//! ([`steadyhud_metrics::sensors`] has the definitions).

use super::table::fmt_change;
use steadyhud_metrics::sensors::{Energy, EnergySummary, Sensor, SensorSummary};

/// One row over several runs; `None`: the run has no such reading.
#[derive(Clone, Debug, PartialEq)]
pub struct SensorRow {
    pub label: String,
    pub unit: &'static str,
    pub decimals: usize,
    /// Whether a larger value is an improvement (frames per joule: yes;
    /// joules per frame: no; readings: neither).
    pub higher_is_better: Option<bool>,
    pub values: Vec<Option<f64>>,
}

impl SensorRow {
    /// `label (unit)`.
    pub fn title(&self) -> String {
        if self.unit.is_empty() {
            self.label.clone()
        } else {
            format!("{} ({})", self.label, self.unit)
        }
    }

    /// A cell: the value, or `n/a`.
    pub fn cell(&self, v: Option<f64>) -> String {
        v.map_or_else(|| "n/a".into(), |v| format!("{:.*}", self.decimals, v))
    }

    /// The change from run `a` to run `b` (`+12.3%`), empty unless both
    /// have a value.
    pub fn change(&self, a: usize, b: usize) -> String {
        match (self.values[a], self.values[b]) {
            (Some(x), Some(y)) => fmt_change(x, y),
            _ => String::new(),
        }
    }

    /// `better`, `worse` or empty, from run `a` to run `b`.
    pub fn verdict_word(&self, a: usize, b: usize) -> &'static str {
        let (Some(x), Some(y), Some(higher)) =
            (self.values[a], self.values[b], self.higher_is_better)
        else {
            return "";
        };
        super::table::verdict_word(Some(higher), x, y)
    }
}

/// Picks one kind of energy out of a summary.
type EnergyOf = fn(&EnergySummary) -> Option<&Energy>;

/// The energy kinds in the order shown, with how they are named.
const KINDS: [(&str, EnergyOf); 3] = [
    ("GPU + CPU package", |e| e.total.as_ref()),
    ("GPU", |e| e.gpu.as_ref()),
    ("CPU package", |e| e.cpu.as_ref()),
];

/// Rows for `runs` (`None`: a run without sensor columns): for each energy
/// kind any run has, frames per joule, joules per frame and the energy;
/// then each sensor's time-weighted mean. Empty when no run has readings.
pub fn sensor_rows(runs: &[Option<&SensorSummary>]) -> Vec<SensorRow> {
    let mut rows = Vec::new();
    for (name, get) in KINDS {
        let energies: Vec<Option<&Energy>> = runs
            .iter()
            .map(|r| r.and_then(|s| get(&s.energy)))
            .collect();
        if energies.iter().all(Option::is_none) {
            continue;
        }
        let col = |f: fn(&Energy) -> Option<f64>| energies.iter().map(|e| e.and_then(f)).collect();
        rows.push(SensorRow {
            label: format!("Frames per joule, {name}"),
            unit: "frames/J",
            decimals: 3,
            higher_is_better: Some(true),
            values: col(|e| e.frames_per_joule),
        });
        rows.push(SensorRow {
            label: format!("Joules per frame, {name}"),
            unit: "J",
            decimals: 4,
            higher_is_better: Some(false),
            values: col(|e| Some(e.joules_per_frame)),
        });
        rows.push(SensorRow {
            label: format!("Energy, {name}"),
            unit: "J",
            decimals: 1,
            higher_is_better: None,
            values: col(|e| Some(e.joules)),
        });
    }
    for sensor in Sensor::ALL {
        let values: Vec<Option<f64>> = runs
            .iter()
            .map(|r| r.and_then(|s| s.get(sensor)).map(|st| st.mean))
            .collect();
        if values.iter().all(Option::is_none) {
            continue;
        }
        rows.push(SensorRow {
            label: format!("{} (mean)", sensor.label()),
            unit: sensor.unit(),
            decimals: 1,
            higher_is_better: None,
            values,
        });
    }
    rows
}

/// `mean 175.0 W, max 200.0 W (from gpu_power, 98.5 % of the time)`.
fn reading_text(st: &steadyhud_metrics::sensors::SensorStat) -> String {
    let unit = if st.unit == "%" { "%" } else { st.unit };
    let sep = if unit == "%" { "" } else { " " };
    format!(
        "mean {:.1}{sep}{unit}, max {:.1}{sep}{unit} (from {}, {:.1} % of the time)",
        st.mean, st.max, st.source, st.coverage_pct
    )
}

/// `7.000 J over 0.040 s (175.0 W mean): 2.857 frames/J, 0.3500 J/frame`.
fn energy_text(e: &Energy) -> String {
    let fpj = e
        .frames_per_joule
        .map_or_else(|| "n/a".to_string(), |v| format!("{v:.3}"));
    format!(
        "{:.3} J over {:.3} s ({:.1} W mean, {:.1} % of the time): {fpj} frames/J, {:.4} J/frame",
        e.joules, e.time_s, e.mean_w, e.coverage_pct, e.joules_per_frame
    )
}

/// The `analyze` table's "System readings" rows: (key, value).
pub fn analyze_rows(s: &SensorSummary) -> Vec<(String, String)> {
    let mut out = vec![(
        "System readings".to_string(),
        "(time-weighted: each reading counts for its frame's duration)".to_string(),
    )];
    for st in &s.readings {
        out.push((format!("  {}", st.sensor.label()), reading_text(st)));
    }
    for (name, get) in KINDS {
        if let Some(e) = get(&s.energy) {
            out.push((format!("  Energy, {name}"), energy_text(e)));
        }
    }
    if let Some(t) = &s.gpu_throttle {
        let reasons: Vec<String> = t
            .reasons
            .iter()
            .map(|(r, p)| format!("{r} {p:.1} %"))
            .collect();
        let detail = if reasons.is_empty() {
            String::new()
        } else {
            format!(" ({})", reasons.join(", "))
        };
        out.push((
            "  GPU throttled".to_string(),
            format!("{:.1} % of the time{detail}", t.time_pct),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use steadyhud_metrics::sensors::{summarize, SensorColumn, SensorColumns};

    const MS: u64 = 1_000_000;

    fn summary(gpu_w: f64, load: Option<f64>) -> SensorSummary {
        let mut columns = vec![SensorColumn {
            sensor: Sensor::GpuPowerW,
            source: "gpu_power_w".into(),
            values: vec![gpu_w; 2].into(),
        }];
        if let Some(l) = load {
            columns.push(SensorColumn {
                sensor: Sensor::GpuLoadPct,
                source: "gpu_load_pct".into(),
                values: vec![l; 2].into(),
            });
        }
        let cols = SensorColumns {
            columns,
            ..Default::default()
        };
        summarize(&[10 * MS, 10 * MS], &cols).unwrap()
    }

    #[test]
    fn rows_line_up_runs_and_judge_per_watt() {
        // 2 frames of 10 ms: at 100 W 2 J → 1 frame/J; at 50 W 1 J → 2.
        let (a, b) = (summary(100.0, Some(90.0)), summary(50.0, None));
        let rows = sensor_rows(&[Some(&a), Some(&b), None]);
        let labels: Vec<String> = rows.iter().map(SensorRow::title).collect();
        assert_eq!(
            labels,
            [
                "Frames per joule, GPU (frames/J)",
                "Joules per frame, GPU (J)",
                "Energy, GPU (J)",
                "GPU load (mean) (%)",
                "GPU power (mean) (W)",
            ]
        );
        let fpj = &rows[0];
        assert_eq!(fpj.cell(fpj.values[0]), "1.000");
        assert_eq!(fpj.cell(fpj.values[1]), "2.000");
        assert_eq!(fpj.cell(fpj.values[2]), "n/a");
        assert_eq!(fpj.change(0, 1), "+100.0%");
        assert_eq!(fpj.verdict_word(0, 1), "better");
        assert_eq!(rows[1].verdict_word(0, 1), "better");
        assert_eq!(rows[3].values, vec![Some(90.0), None, None]);
        assert_eq!(rows[3].verdict_word(0, 1), "");
        assert!(sensor_rows(&[None, None]).is_empty());
    }

    #[test]
    fn analyze_rows_say_mean_max_and_energy() {
        let rows = analyze_rows(&summary(100.0, Some(90.0)));
        let text: Vec<String> = rows.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        assert!(
            text.contains(
                &"  GPU power: mean 100.0 W, max 100.0 W (from gpu_power_w, 100.0 % of the time)"
                    .to_string()
            ),
            "{text:?}"
        );
        assert!(
            text.contains(
                &"  GPU load: mean 90.0%, max 90.0% (from gpu_load_pct, 100.0 % of the time)"
                    .to_string()
            ),
            "{text:?}"
        );
        assert!(
            text.contains(&"  Energy, GPU: 2.000 J over 0.020 s (100.0 W mean, 100.0 % of the time): 1.000 frames/J, 1.0000 J/frame".to_string()),
            "{text:?}"
        );
    }
}
