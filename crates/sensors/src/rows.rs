//! The HUD's sensor rows (config `hud_sensor_rows`): a label and a text
//! made of the parts of the row that have a value, e.g. `CPU` `43% 4.2 GHz
//! 71°C`; a row none of whose parts has a value is left out.

use crate::sample::{Sample, Sensor};
use std::fmt::Write;

/// Row names of `hud_sensor_rows`, in default order.
pub const ROW_NAMES: [&str; 4] = ["cpu", "gpu", "vram", "ram"];

/// One row for the HUD.
#[derive(Clone, Debug, PartialEq)]
pub struct HudRow {
    /// Its name in [`ROW_NAMES`].
    pub name: &'static str,
    pub label: &'static str,
    pub text: String,
}

/// Row `name` of `s` (`None`: unknown name or nothing to show). `degree`
/// is the temperature suffix (`°C`, or `C` for a font without `°`).
pub fn hud_row(name: &str, s: &Sample, degree: &str) -> Option<HudRow> {
    let mut text = String::new();
    let mut part = |args: std::fmt::Arguments| {
        if !text.is_empty() {
            text.push(' ');
        }
        let _ = text.write_fmt(args);
    };
    let g = |c| s.get(c);
    let label = match name {
        "cpu" => {
            if let Some(v) = g(Sensor::CpuLoadPct) {
                part(format_args!("{v:.0}%"));
            }
            if let Some(v) = g(Sensor::CpuMhz) {
                part(format_args!("{:.1} GHz", v / 1000.0));
            }
            if let Some(v) = g(Sensor::CpuTempC) {
                part(format_args!("{v:.0}{degree}"));
            }
            if let Some(v) = g(Sensor::CpuPowerW) {
                part(format_args!("{v:.0} W"));
            }
            if let Some(v) = g(Sensor::ProcCpuPct) {
                part(format_args!("game {v:.0}%"));
            }
            "CPU"
        }
        "gpu" => {
            match (g(Sensor::GpuLoadPct), g(Sensor::ProcGpuPct)) {
                (Some(v), _) => part(format_args!("{v:.0}%")),
                (None, Some(v)) => part(format_args!("game {v:.0}%")),
                _ => {}
            }
            if let Some(v) = g(Sensor::GpuMhz) {
                part(format_args!("{:.1} GHz", v / 1000.0));
            }
            if let Some(v) = g(Sensor::GpuTempC) {
                part(format_args!("{v:.0}{degree}"));
            }
            if let Some(v) = g(Sensor::GpuPowerW) {
                part(format_args!("{v:.0} W"));
            }
            if let Some(t) = s.throttle.filter(|t| !t.is_empty()) {
                let mut why = String::new();
                t.text(&mut why);
                part(format_args!("({why})"));
            }
            "GPU"
        }
        "vram" => {
            match (
                g(Sensor::VramUsedMb),
                g(Sensor::VramTotalMb),
                g(Sensor::ProcVramMb),
            ) {
                (Some(u), Some(t), _) => {
                    part(format_args!("{:.1}/{:.1} GB", u / 1024.0, t / 1024.0))
                }
                (Some(u), None, _) => part(format_args!("{:.1} GB", u / 1024.0)),
                (None, _, Some(p)) => part(format_args!("game {:.1} GB", p / 1024.0)),
                _ => {}
            }
            "VRAM"
        }
        "ram" => {
            if let Some(v) = g(Sensor::RamUsedMb) {
                part(format_args!("{:.1} GB", v / 1024.0));
            }
            if let Some(v) = g(Sensor::RssMb) {
                part(format_args!("game {:.2} GB", v / 1024.0));
            }
            "RAM"
        }
        _ => return None,
    };
    let name = ROW_NAMES.into_iter().find(|&n| n == name)?;
    (!text.is_empty()).then_some(HudRow { name, label, text })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::Throttle;

    #[test]
    fn rows_hold_the_parts_that_have_values() {
        let mut s = Sample::default();
        s.set(Sensor::CpuLoadPct, Some(43.2));
        s.set(Sensor::CpuMhz, Some(4200.0));
        s.set(Sensor::CpuTempC, Some(71.0));
        s.set(Sensor::GpuLoadPct, Some(97.0));
        s.set(Sensor::GpuMhz, Some(2400.0));
        s.set(Sensor::GpuTempC, Some(78.0));
        s.set(Sensor::GpuPowerW, Some(212.0));
        s.set(Sensor::VramUsedMb, Some(6.1 * 1024.0));
        s.set(Sensor::VramTotalMb, Some(8192.0));
        s.set(Sensor::RamUsedMb, Some(11.2 * 1024.0));
        s.throttle = Some(Throttle::POWER);
        let text = |n| hud_row(n, &s, "°C").map(|r| format!("{} {}", r.label, r.text));
        assert_eq!(text("cpu").unwrap(), "CPU 43% 4.2 GHz 71°C");
        assert_eq!(text("gpu").unwrap(), "GPU 97% 2.4 GHz 78°C 212 W (power)");
        assert_eq!(text("vram").unwrap(), "VRAM 6.1/8.0 GB");
        assert_eq!(text("ram").unwrap(), "RAM 11.2 GB");
        assert_eq!(hud_row("gpu", &Sample::default(), "°C"), None);
        assert_eq!(hud_row("disk", &s, "°C"), None);
    }
}
