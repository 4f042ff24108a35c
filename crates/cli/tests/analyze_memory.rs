//! `analyze` keeps its peak memory under 24 bytes per frame (issue 16): the
//! real binary on a 3,000,000-frame log, peak RSS from `getrusage` of the
//! child, minus the peak of the same binary on a 3-frame log. Before the
//! block prefix sums and the one-pass OSC decision it took ~48 B a frame.
//! (The 10 M-frame figure is `scripts/analyze-1m.sh 10000000`.) Alone in
//! its file: `RUSAGE_CHILDREN` covers every child of this test process.

use std::process::Command;

const FRAMES: usize = 3_000_000;
const MAX_BYTES_PER_FRAME: usize = 24;

/// Largest peak RSS of any waited-for child so far, in bytes.
fn children_peak_rss() -> usize {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes the struct it is given.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    assert_eq!(rc, 0, "getrusage");
    u.ru_maxrss as usize * 1024 // kilobytes on Linux
}

fn analyze(path: &std::path::Path) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_steadyhud"))
        .args(["analyze", path.to_str().unwrap(), "--json"])
        .output()
        .expect("run steadyhud");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn analyze_peak_rss_under_24_bytes_per_frame() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.txt");
    std::fs::write(&small, "16.6\n16.7\n50\n").unwrap();
    analyze(&small);
    let base = children_peak_rss();

    // Frame times around 16.7 ms with jitter and a hitch every 997 frames
    // (the shape of scripts/analyze-1m.sh), ms with four decimals.
    let big = dir.path().join("big.txt");
    let mut text = String::with_capacity(FRAMES * 8);
    for i in 0..FRAMES {
        let ms = if i % 997 == 500 {
            50.0
        } else {
            16.667 + ((i * 7919) % 3001) as f64 / 1000.0 - 1.5
        };
        text.push_str(&format!("{ms:.4}\n"));
    }
    std::fs::write(&big, &text).unwrap();
    drop(text);
    let v = analyze(&big);
    assert_eq!(v["frames"], FRAMES);
    let peak = children_peak_rss();
    let per_frame = peak.saturating_sub(base) as f64 / FRAMES as f64;
    eprintln!(
        "analyze of {FRAMES} frames: peak RSS {:.1} MiB, baseline {:.1} MiB, {per_frame:.1} B per frame",
        peak as f64 / 1048576.0,
        base as f64 / 1048576.0
    );
    assert!(
        per_frame <= MAX_BYTES_PER_FRAME as f64,
        "{per_frame:.1} B per frame (peak {peak} B, baseline {base} B)"
    );
}
