//! CPU readings: total and busiest-core load from `/proc/stat` deltas, the
//! process's CPU time from `/proc/self/stat` (utime + stime, which the
//! kernel sums over all the process's threads), and the cores' mean clock
//! from cpufreq `scaling_cur_freq` (kHz).
//!
//! Formats: `proc(5)` (`/proc/stat`: `cpu user nice system idle iowait irq
//! softirq steal …` in USER_HZ ticks; `/proc/pid/stat` fields 14 utime and
//! 15 stime, in clock ticks); cpufreq: Documentation/admin-guide/pm/cpufreq.rst.

use crate::root::{Kept, Root};

/// Clock ticks per second of `/proc` times (USER_HZ, 100 on every Linux
/// architecture's user ABI).
pub const USER_HZ: f64 = 100.0;

/// Most cores whose clock is read per sample (bounded work).
const MAX_FREQ_FILES: usize = 256;

/// Busy and total ticks of one `cpu` line.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Ticks {
    busy: u64,
    total: u64,
}

fn parse_ticks(line: &str) -> Option<Ticks> {
    let mut f = line.split_whitespace().skip(1).map(|v| v.parse::<u64>());
    let mut v = [0u64; 8];
    let mut n = 0;
    for (slot, x) in v.iter_mut().zip(&mut f) {
        *slot = x.ok()?;
        n += 1;
    }
    if n < 4 {
        return None;
    }
    // user nice system idle iowait irq softirq steal (guest is inside user)
    let total: u64 = v.iter().sum();
    let idle = v[3] + v[4];
    Some(Ticks {
        busy: total - idle,
        total,
    })
}

fn pct(new: Ticks, old: Ticks) -> Option<f64> {
    let dt = new.total.checked_sub(old.total)?;
    let db = new.busy.checked_sub(old.busy)?;
    (dt > 0).then(|| share(db, dt))
}

/// `busy` ticks of `total` (more than 0) as a percentage, at most 100.
fn share(busy: u64, total: u64) -> f64 {
    (busy as f64 / total as f64 * 100.0).min(100.0)
}

/// Load of all CPUs and of the busiest core, from `/proc/stat` deltas.
pub struct CpuLoad {
    file: Kept,
    buf: String,
    total: Option<Ticks>,
    cores: Vec<Ticks>,
}

impl CpuLoad {
    /// `None` when `/proc/stat` has no `cpu` line.
    pub fn open(root: &Root) -> Option<CpuLoad> {
        let mut s = CpuLoad {
            file: Kept::new(root.path("proc/stat")),
            buf: String::new(),
            total: None,
            cores: Vec::new(),
        };
        s.read().map(|_| s)
    }

    /// (total %, busiest core %) since the previous call; `None` on the
    /// first call.
    ///
    /// The total is the cores' own lines summed (the ticks of every core
    /// that has a busiest-core share), not the `cpu` line: the kernel
    /// writes that line in a pass of its own, a moment apart from the
    /// cores' lines, so a core's idle time accrued in between made the two
    /// disagree, and the mean came out above the busiest core. Summed from
    /// the same ticks, the total is a weighted mean of the cores' shares:
    /// never above the busiest. The `cpu` line is used only when no core
    /// line has a share (a `/proc/stat` without them).
    pub fn read(&mut self) -> Option<(Option<f64>, Option<f64>)> {
        self.file.read_into(&mut self.buf)?;
        let mut total = None;
        let mut busiest: Option<f64> = None;
        // The busy and total ticks the cores with a share added.
        let mut cores = Ticks::default();
        let mut core = 0;
        for line in self.buf.lines() {
            if !line.starts_with("cpu") {
                continue;
            }
            let Some(t) = parse_ticks(line) else { continue };
            if line.starts_with("cpu ") {
                total = Some((t, self.total.and_then(|o| pct(t, o))));
                continue;
            }
            if let Some(old) = self.cores.get(core).copied() {
                if let Some(p) = pct(t, old) {
                    busiest = Some(busiest.map_or(p, |b| b.max(p)));
                    cores.busy += t.busy - old.busy;
                    cores.total += t.total - old.total;
                }
                self.cores[core] = t;
            } else {
                self.cores.push(t);
            }
            core += 1;
        }
        let (t, line_pct) = total?;
        self.total = Some(t);
        let summed = (cores.total > 0).then(|| share(cores.busy, cores.total));
        Some((summed.or(line_pct), busiest))
    }
}

/// The process's CPU time as a share of one core, from `/proc/self/stat`.
pub struct ProcCpu {
    file: Kept,
    buf: String,
    last: Option<(u64, u64)>,
}

/// utime + stime (ticks) of a `/proc/pid/stat` line.
fn parse_proc_ticks(s: &str) -> Option<u64> {
    // The command name (field 2) is in parentheses and may hold spaces.
    let after = &s[s.rfind(')')? + 1..];
    let mut f = after.split_whitespace();
    // after ')' come fields 3.. ; utime is field 14, stime 15.
    let utime: u64 = f.nth(11)?.parse().ok()?;
    let stime: u64 = f.next()?.parse().ok()?;
    Some(utime + stime)
}

impl ProcCpu {
    pub fn open(root: &Root) -> Option<ProcCpu> {
        let path = root.path("proc/self/stat");
        parse_proc_ticks(&Root::read(&path)?)?;
        Some(ProcCpu {
            file: Kept::new(path),
            buf: String::new(),
            last: None,
        })
    }

    /// % of one core since the previous call at `t_ns`.
    pub fn read(&mut self, t_ns: u64) -> Option<f64> {
        self.file.read_into(&mut self.buf)?;
        let ticks = parse_proc_ticks(&self.buf)?;
        let old = self.last.replace((t_ns, ticks));
        let (t0, k0) = old?;
        let dt = t_ns.checked_sub(t0).filter(|&d| d > 0)? as f64 / 1e9;
        Some(ticks.checked_sub(k0)? as f64 / USER_HZ / dt * 100.0)
    }
}

/// Mean current clock of the cores, from cpufreq.
pub struct CpuFreq {
    files: Vec<Kept>,
}

impl CpuFreq {
    /// `None` when no core has a readable `scaling_cur_freq`.
    pub fn open(root: &Root) -> Option<CpuFreq> {
        let files: Vec<Kept> = Root::list(&root.path("sys/devices/system/cpu"), "cpu")
            .into_iter()
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n[3..].bytes().all(|b| b.is_ascii_digit()) && n.len() > 3)
            })
            .map(|p| p.join("cpufreq/scaling_cur_freq"))
            .filter(|p| Root::read_u64(p).is_some())
            .take(MAX_FREQ_FILES)
            .map(Kept::new)
            .collect();
        (!files.is_empty()).then_some(CpuFreq { files })
    }

    /// Mean clock, MHz.
    pub fn read(&mut self) -> Option<f64> {
        let (sum, n) = self
            .files
            .iter_mut()
            .filter_map(Kept::read_u64)
            .fold((0u64, 0u64), |(s, n), khz| (s + khz, n + 1));
        (n > 0).then(|| sum as f64 / n as f64 / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_lines_and_loads() {
        let a = parse_ticks("cpu  100 0 100 700 100 0 0 0 0 0").unwrap();
        let b = parse_ticks("cpu  200 0 200 1200 200 0 0 0 0 0").unwrap();
        assert_eq!(
            a,
            Ticks {
                busy: 200,
                total: 1000
            }
        );
        // 200 busy ticks of 800.
        assert_eq!(pct(b, a), Some(25.0));
        assert_eq!(pct(a, b), None, "counters never go back");
    }

    /// The total is the cores' lines summed, so the busiest core is never
    /// below it, even when the kernel's `cpu` line (written a moment apart)
    /// disagrees with them.
    #[test]
    fn the_busiest_core_is_never_below_the_total() {
        let dir = tempfile::tempdir().unwrap();
        let stat = dir.path().join("proc/stat");
        std::fs::create_dir_all(stat.parent().unwrap()).unwrap();
        let write = |text: &str| std::fs::write(&stat, text).unwrap();
        write("cpu  0 0 0 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0\n");
        let mut load = CpuLoad::open(&Root::new(dir.path())).unwrap();
        // Cores 50 % and 30 % busy over 100 ticks each; the `cpu` line,
        // read before core 1's last idle ticks, says 45 %.
        write("cpu  90 0 0 110 0 0 0 0\ncpu0 50 0 0 50 0 0 0 0\ncpu1 30 0 0 70 0 0 0 0\n");
        let (total, busiest) = load.read().unwrap();
        assert_eq!(busiest, Some(50.0));
        assert_eq!(total, Some(40.0), "80 busy ticks of 200");
        // Without core lines, the `cpu` line.
        write("cpu  190 0 0 210 0 0 0 0\n");
        let mut only = CpuLoad::open(&Root::new(dir.path())).unwrap();
        write("cpu  290 0 0 310 0 0 0 0\n");
        assert_eq!(only.read(), Some((Some(50.0), None)));
    }

    #[test]
    fn process_ticks_skip_a_name_with_spaces_and_parentheses() {
        let line = "4242 (my (game) x) R 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 9 0 100 0 0";
        assert_eq!(parse_proc_ticks(line), Some(300));
    }
}
