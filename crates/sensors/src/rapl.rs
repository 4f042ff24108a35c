//! Power from energy counters: RAPL powercap `energy_uj` (CPU packages)
//! and hwmon `energyN_input` (Intel GPUs), both in microjoules; watts are
//! the energy between two samples over their time. A counter that went back
//! wrapped at `max_energy_range_uj` (RAPL).
//!
//! Format: Documentation/power/powercap/powercap.rst (`intel-rapl:N` zones:
//! `name`, `energy_uj`, `max_energy_range_uj`; `intel-rapl:N:M` are their
//! subzones, not summed). Since Linux 5.10 `energy_uj` is readable by root
//! only on most distributions: then there is no `cpu_power_w`.

use crate::root::{Kept, Root};
use std::path::PathBuf;

/// One energy counter.
struct Counter {
    file: Kept,
    /// Value at which it wraps to 0 (`None`: unknown, a drop is skipped).
    range: Option<u64>,
    last: Option<u64>,
}

/// Sum of energy counters turned into watts.
pub struct EnergyMeter {
    counters: Vec<Counter>,
    last_t: Option<u64>,
}

impl EnergyMeter {
    /// CPU packages: every readable `sys/class/powercap/intel-rapl:N`.
    pub fn rapl(root: &Root) -> Option<EnergyMeter> {
        let zones = Root::list(&root.path("sys/class/powercap"), "intel-rapl:")
            .into_iter()
            .filter(|z| {
                z.file_name()
                    .is_some_and(|n| n.to_string_lossy().matches(':').count() == 1)
            });
        let counters = zones
            .map(|z| {
                (
                    z.join("energy_uj"),
                    Root::read_u64(&z.join("max_energy_range_uj")),
                )
            })
            .collect();
        EnergyMeter::of(counters)
    }

    /// Counters `(file, wrap range)`, keeping the readable ones.
    pub fn of(files: Vec<(PathBuf, Option<u64>)>) -> Option<EnergyMeter> {
        let counters: Vec<Counter> = files
            .into_iter()
            .filter(|(f, _)| Root::read_u64(f).is_some())
            .map(|(file, range)| Counter {
                file: Kept::new(file),
                range,
                last: None,
            })
            .collect();
        (!counters.is_empty()).then_some(EnergyMeter {
            counters,
            last_t: None,
        })
    }

    /// Watts since the previous call at `t_ns` (`None` the first time or
    /// when a counter could not be read).
    pub fn read(&mut self, t_ns: u64) -> Option<f64> {
        let mut uj = 0u64;
        let mut whole = true;
        for c in &mut self.counters {
            let Some(now) = c.file.read_u64() else {
                whole = false;
                continue;
            };
            match c.last.replace(now) {
                Some(old) if now >= old => uj += now - old,
                Some(old) => match c.range {
                    Some(r) if r >= old => uj += r - old + now,
                    _ => whole = false,
                },
                None => whole = false,
            }
        }
        let t0 = self.last_t.replace(t_ns)?;
        let dt = t_ns.checked_sub(t0).filter(|&d| d > 0)? as f64 / 1e9;
        whole.then(|| uj as f64 / 1e6 / dt)
    }
}
