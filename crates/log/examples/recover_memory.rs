//! The memory a killed session's recovery costs the process it runs in:
//! docs/measurements.md#recovery-memory. Two steps, two processes, so the
//! second starts clean:
//!
//!     recover_memory make DIR [FRAMES] [FPS]   # a killed log and its tail in DIR
//!     recover_memory recover DIR [game|cli]    # recovers it; VmHWM before/after
//!
//! `make` writes DIR/game_….csv with FRAMES rows at FPS (default a 3-hour
//! session at 300 fps: 3,240,000 rows) of which the last 200 are only in
//! the tail (DIR/tails), as a SIGKILL leaves them. `recover` prints the
//! process's peak resident memory (VmHWM) before and after the recovery,
//! and what it did. Built for i686 it is the 32-bit game's view.

use std::path::{Path, PathBuf};
use std::time::SystemTime;
use steadyhud_log::recover::{recover_dead_in, Within};
use steadyhud_log::{Layout, SessionLog};
use steadyhud_sys::tail::{self, Tail};

fn status_kb(key: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

/// A pid no process has any more.
fn dead_pid() -> u32 {
    let mut c = std::process::Command::new("true")
        .spawn()
        .expect("spawn true");
    let pid = c.id();
    let _ = c.wait();
    pid
}

fn make(dir: &Path, frames: u64, fps: u64) {
    let origin = 1_000_000_000u64;
    let period = 1_000_000_000 / fps;
    let ts = |i: u64| origin + i * period;
    let pid = dead_pid();
    let layout = Layout {
        pid: Some(pid),
        ..Layout::default()
    };
    let mut log = SessionLog::create(dir, "game", SystemTime::now(), &layout).expect("log");
    let csv = log.path().to_path_buf();
    let tail_path = dir.join("tails").join(tail::file_name(pid, "game"));
    let tail = Tail::create(&tail_path, &csv, pid, origin).expect("tail");
    tail.fill(0, ts(0));
    tail.set_count(1);
    let flushed = frames.saturating_sub(200);
    for i in 1..=frames {
        tail.put(i, ts(i));
        if i <= flushed {
            log.write_frame_text(i - 1, ts(i) - origin, period, &[], "")
                .expect("row");
        }
    }
    log.flush().expect("flush");
    println!(
        "made {} ({} rows, {} more in the tail {})",
        csv.display(),
        flushed,
        frames - flushed,
        tail_path.display()
    );
    // Dropped without finishing: no end line, the tail stays.
    std::mem::forget(log);
}

fn recover(dir: &Path, within: Within) {
    let (rss0, hwm0) = (status_kb("VmRSS:"), status_kb("VmHWM:"));
    let got = recover_dead_in(&dir.join("tails"), &[PathBuf::from(dir)], within);
    let hwm1 = status_kb("VmHWM:");
    for r in &got {
        match r {
            Ok(r) => println!("{r} (summary left to the CLI: {})", r.summary_left),
            Err(e) => println!("error: {e}"),
        }
    }
    println!(
        "{} bits, {within:?}: VmRSS before {rss0} kB, VmHWM before {hwm0} kB, after {hwm1} kB: \
         peak extra {} kB",
        8 * std::mem::size_of::<usize>(),
        hwm1.saturating_sub(hwm0.max(rss0))
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: recover_memory make DIR [FRAMES] [FPS] | recover DIR [game|cli]";
    let (Some(step), Some(dir)) = (args.get(1), args.get(2)) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let dir = Path::new(dir);
    let num = |i: usize, d: u64| args.get(i).and_then(|v| v.parse().ok()).unwrap_or(d);
    match step.as_str() {
        "make" => make(dir, num(3, 3 * 3600 * 300), num(4, 300)),
        "recover" => recover(
            dir,
            if args.get(3).map(String::as_str) == Some("cli") {
                Within::Cli
            } else {
                Within::Game
            },
        ),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
}
