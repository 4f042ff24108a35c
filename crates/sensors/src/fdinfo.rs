//! The process's own GPU use from DRM fdinfo, for every DRM driver:
//! `/proc/self/fdinfo/<fd>` of each fd open on `/dev/dri/*` holds
//! `drm-driver`, `drm-pdev`, `drm-client-id`, per engine
//! `drm-engine-<name>: <ns> ns` (busy time; `drm-engine-capacity-<name>`
//! engines of that class) or `drm-cycles-<name>` with
//! `drm-total-cycles-<name>` (xe), and per memory region
//! `drm-resident-<region>` / `drm-memory-<region>` (`KiB`, `MiB`).
//!
//! Format: Documentation/gpu/drm-usage-stats.rst. Several fds may share a
//! client (same `drm-client-id`): each client counts once. The fd list is
//! rescanned every [`RESCAN_NS`] (at most [`MAX_FDS`] entries); each
//! sample reads only the DRM fds found.

use crate::root::Root;
use std::collections::HashMap;
use std::path::PathBuf;

/// How often the fd table is rescanned for DRM fds.
pub const RESCAN_NS: u64 = 2_000_000_000;
/// Most fds looked at per rescan.
pub const MAX_FDS: usize = 4096;
/// Most DRM fds read per sample.
const MAX_DRM_FDS: usize = 16;

/// Engine busy counters of one client.
#[derive(Clone, Copy, Debug, Default)]
struct Busy {
    /// ns busy (drm-engine-*) or cycles (drm-cycles-*).
    used: u64,
    /// Engines of the class (ns counters) or total cycles (xe).
    of: u64,
    cycles: bool,
}

/// What one fdinfo file says.
#[derive(Debug, Default)]
struct Client {
    id: Option<u64>,
    pdev: Option<String>,
    engines: HashMap<String, Busy>,
    vram_kib: Option<u64>,
}

fn kib(v: &str) -> Option<u64> {
    let mut it = v.split_whitespace();
    let n: u64 = it.next()?.parse().ok()?;
    Some(match it.next() {
        Some("KiB") => n,
        Some("MiB") => n * 1024,
        Some("GiB") => n * 1024 * 1024,
        None => n / 1024,
        _ => return None,
    })
}

fn parse(text: &str) -> Option<Client> {
    let mut c = Client::default();
    let mut driver = false;
    let mut resident: u64 = 0;
    let mut memory: u64 = 0;
    let (mut has_resident, mut has_memory) = (false, false);
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.trim();
        if k == "drm-driver" {
            driver = true;
        } else if k == "drm-pdev" {
            c.pdev = Some(v.to_string());
        } else if k == "drm-client-id" {
            c.id = v.parse().ok();
        } else if let Some(e) = k.strip_prefix("drm-engine-capacity-") {
            c.engines.entry(e.into()).or_default().of = v.parse().unwrap_or(1);
        } else if let Some(e) = k.strip_prefix("drm-engine-") {
            let ns = v.trim_end_matches("ns").trim().parse().unwrap_or(0);
            c.engines.entry(e.into()).or_default().used = ns;
        } else if let Some(e) = k.strip_prefix("drm-total-cycles-") {
            let b = c.engines.entry(e.into()).or_default();
            b.of = v.parse().unwrap_or(0);
            b.cycles = true;
        } else if let Some(e) = k.strip_prefix("drm-cycles-") {
            let b = c.engines.entry(e.into()).or_default();
            b.used = v.parse().unwrap_or(0);
            b.cycles = true;
        } else if let Some(r) = k.strip_prefix("drm-resident-") {
            if is_vram(r) {
                resident += kib(v).unwrap_or(0);
                has_resident = true;
            }
        } else if let Some(r) = k.strip_prefix("drm-memory-") {
            if is_vram(r) {
                memory += kib(v).unwrap_or(0);
                has_memory = true;
            }
        }
    }
    c.vram_kib = if has_resident {
        Some(resident)
    } else {
        has_memory.then_some(memory)
    };
    driver.then_some(c)
}

/// Regions of device memory: amdgpu `vram`, xe `vram0`, i915 `local0`.
fn is_vram(region: &str) -> bool {
    region.starts_with("vram") || region.starts_with("local")
}

/// The process's DRM clients.
pub struct DrmClients {
    fd_dir: PathBuf,
    fdinfo_dir: PathBuf,
    /// Only clients of this device (`drm-pdev`), when known.
    pdev: Option<String>,
    fds: Vec<String>,
    next_scan: u64,
    /// Per (client, engine): the last counters.
    last: HashMap<(u64, String), Busy>,
    last_t: Option<u64>,
    buf: String,
}

/// What one read found.
#[derive(Debug, Default, PartialEq)]
pub struct DrmReading {
    /// Busiest engine over the interval, % (`None` on the first read).
    pub busy_pct: Option<f64>,
    /// Device memory of the process's clients, MB.
    pub vram_mb: Option<f64>,
}

impl DrmClients {
    /// The process's DRM clients (of device `pdev`, sysfs spelling, when
    /// given); `None` when no fd of the process is a DRM client.
    pub fn open(root: &Root, pdev: Option<String>) -> Option<DrmClients> {
        let mut d = DrmClients {
            fd_dir: root.path("proc/self/fd"),
            fdinfo_dir: root.path("proc/self/fdinfo"),
            pdev,
            fds: Vec::new(),
            next_scan: 0,
            last: HashMap::new(),
            last_t: None,
            buf: String::new(),
        };
        d.scan();
        (!d.fds.is_empty()).then_some(d)
    }

    fn scan(&mut self) {
        self.fds.clear();
        let Ok(rd) = std::fs::read_dir(&self.fd_dir) else {
            return;
        };
        for e in rd.take(MAX_FDS).flatten() {
            let is_drm = std::fs::read_link(e.path()).is_ok_and(|t| t.starts_with("/dev/dri/"));
            if is_drm && self.fds.len() < MAX_DRM_FDS {
                self.fds.push(e.file_name().to_string_lossy().into_owned());
            }
        }
        self.fds.sort();
    }

    /// Reads every DRM fd's counters at `t_ns`.
    pub fn read(&mut self, t_ns: u64) -> DrmReading {
        if t_ns >= self.next_scan {
            self.scan();
            self.next_scan = t_ns + RESCAN_NS;
        }
        let mut seen: Vec<u64> = Vec::new();
        let mut vram: Option<u64> = None;
        let mut busiest: Option<f64> = None;
        let dt = self
            .last_t
            .replace(t_ns)
            .and_then(|t0| t_ns.checked_sub(t0));
        for fd in &self.fds {
            if Root::read_into(&self.fdinfo_dir.join(fd), &mut self.buf).is_none() {
                continue;
            }
            let Some(c) = parse(&self.buf) else { continue };
            if let (Some(want), Some(have)) = (&self.pdev, &c.pdev) {
                if want != have {
                    continue;
                }
            }
            let id = c.id.unwrap_or(u64::MAX - seen.len() as u64);
            if seen.contains(&id) {
                continue;
            }
            seen.push(id);
            if let Some(k) = c.vram_kib {
                vram = Some(vram.unwrap_or(0) + k);
            }
            for (engine, now) in c.engines {
                let old = self.last.insert((id, engine), now);
                let pct = old.and_then(|old| busy_pct(old, now, dt?));
                if let Some(p) = pct {
                    busiest = Some(busiest.map_or(p, |b: f64| b.max(p)));
                }
            }
        }
        DrmReading {
            busy_pct: busiest,
            vram_mb: vram.map(|k| k as f64 / 1024.0),
        }
    }
}

fn busy_pct(old: Busy, now: Busy, dt_ns: u64) -> Option<f64> {
    let used = now.used.checked_sub(old.used)? as f64;
    let p = if now.cycles {
        let total = now.of.checked_sub(old.of).filter(|&t| t > 0)? as f64;
        used / total
    } else {
        used / (dt_ns.max(1) as f64 * now.of.max(1) as f64)
    };
    Some((p * 100.0).min(100.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amdgpu_and_xe_lines() {
        let amd = "pos:\t0\nflags:\t02100002\ndrm-driver:\tamdgpu\ndrm-pdev:\t0000:03:00.0\ndrm-client-id:\t7\n\
                   drm-memory-vram:\t2048 KiB\ndrm-memory-gtt:\t512 KiB\ndrm-engine-gfx:\t1000000 ns\n";
        let c = parse(amd).unwrap();
        assert_eq!((c.id, c.vram_kib), (Some(7), Some(2048)));
        assert_eq!(c.engines["gfx"].used, 1_000_000);
        let xe = "drm-driver:\txe\ndrm-client-id:\t3\ndrm-cycles-rcs:\t500\ndrm-total-cycles-rcs:\t2000\ndrm-resident-vram0:\t4 MiB\n";
        let c = parse(xe).unwrap();
        assert_eq!(c.vram_kib, Some(4096));
        let old = Busy {
            used: 0,
            of: 1000,
            cycles: true,
        };
        assert_eq!(busy_pct(old, c.engines["rcs"], 1), Some(50.0));
        assert!(parse("pos: 0\nflags: 0\n").is_none(), "not a DRM fd");
    }
}
