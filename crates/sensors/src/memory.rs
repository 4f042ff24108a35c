//! Memory readings: system RAM and swap in use from `/proc/meminfo`
//! (`MemTotal − MemAvailable`, `SwapTotal − SwapFree`, kB), the process's
//! resident set from `/proc/self/status` (`VmRSS`, kB). Formats: `proc(5)`.

use crate::root::{Kept, Root};

fn kb(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| {
        l.strip_prefix(key)
            .is_some_and(|rest| rest.starts_with(':'))
    })?;
    line[key.len() + 1..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// (RAM used, swap used) in MB from `/proc/meminfo` text; swap is `None`
/// without `SwapTotal`.
pub fn meminfo(text: &str) -> Option<(f64, Option<f64>)> {
    let ram = kb(text, "MemTotal")?.saturating_sub(kb(text, "MemAvailable")?);
    let swap = kb(text, "SwapTotal")
        .zip(kb(text, "SwapFree"))
        .map(|(t, f)| t.saturating_sub(f) as f64 / 1024.0);
    Some((ram as f64 / 1024.0, swap))
}

/// RAM, swap and RSS.
pub struct Memory {
    meminfo: Kept,
    status: Kept,
    buf: String,
}

/// What [`Memory::read`] found, MB.
#[derive(Default)]
pub struct MemoryReading {
    pub ram: Option<f64>,
    pub swap: Option<f64>,
    pub rss: Option<f64>,
}

impl Memory {
    pub fn open(root: &Root) -> Memory {
        Memory {
            meminfo: Kept::new(root.path("proc/meminfo")),
            status: Kept::new(root.path("proc/self/status")),
            buf: String::new(),
        }
    }

    pub fn read(&mut self) -> MemoryReading {
        let mut r = MemoryReading::default();
        if self.meminfo.read_into(&mut self.buf).is_some() {
            if let Some((ram, swap)) = meminfo(&self.buf) {
                r.ram = Some(ram);
                r.swap = swap;
            }
        }
        if self.status.read_into(&mut self.buf).is_some() {
            r.rss = kb(&self.buf, "VmRSS").map(|k| k as f64 / 1024.0);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn used_is_total_minus_available() {
        let t = "MemTotal:       16384000 kB\nMemFree:  1000 kB\nMemAvailable:   12288000 kB\nSwapTotal: 2048000 kB\nSwapFree: 1024000 kB\n";
        assert_eq!(meminfo(t), Some((4000.0, Some(1000.0))));
        assert_eq!(kb("VmRSSx: 5 kB\nVmRSS:\t  2048 kB\n", "VmRSS"), Some(2048));
    }
}
