//! `steadyhud compare A B` on real captures: every metric row is there, the
//! values are those `analyze --json` gives for each file, and the change
//! column is (B − A) / A.

#[path = "../../../tests/data/mod.rs"]
mod data;
use data::shared_data;

use std::path::Path;
use std::process::Command;

fn analyze(p: &Path) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_steadyhud"))
        .arg("analyze")
        .arg(p)
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn compare_prints_both_runs_and_the_change() {
    let (a, b) = (
        shared_data("ocat-metroexodus.csv"),
        shared_data("capframex-re2.csv"),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_steadyhud"))
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let (ja, jb) = (analyze(&a), analyze(&b));
    for (label, key, decimals) in [
        ("Steady FPS (fps)", "steady_fps", 0),
        ("Typical FPS (fps)", "typical_fps", 0),
        ("Average FPS (fps)", "average_fps", 2),
        ("P99 (time-weighted) (ms)", "p99_ms", 2),
        ("Stutters", "stutter_count", 0),
    ] {
        let line = text
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no row {label}:\n{text}"));
        let cells: Vec<&str> = line[label.len()..].split_whitespace().collect();
        let (va, vb) = (ja[key].as_f64().unwrap(), jb[key].as_f64().unwrap());
        assert_eq!(cells[0], format!("{va:.decimals$}"), "{line}");
        assert_eq!(cells[1], format!("{vb:.decimals$}"), "{line}");
        if va != 0.0 {
            assert_eq!(
                cells[2],
                format!("{:+.1}%", (vb - va) / va.abs() * 100.0),
                "{line}"
            );
        }
    }
}

#[test]
fn compare_with_a_bad_file_exits_2_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.txt");
    std::fs::write(&bad, "16.6\nfast\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_steadyhud"))
        .arg("compare")
        .arg(shared_data("capframex-re2.csv"))
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.txt:2:1"), "{err}");
}
