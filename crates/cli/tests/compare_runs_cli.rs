//! `steadyhud compare A… --vs B…` end to end on the shared captures:
//! a capture against itself, each cut into 2-second pieces dealt
//! alternately to A and B, every frame made 10 % longer; the table,
//! `--json`, `--fail-if-worse`, the errors and the warnings.

#[path = "../../../tests/data/mod.rs"]
mod data;
use data::{data_dir, shared_data};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use steadyhud_formats::{read_path, ReadOptions};

fn steadyhud(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_steadyhud"))
        .args(args)
        .output()
        .expect("the built binary runs")
}

/// `compare ARGS --json`, which must succeed: its JSON.
fn compare_json(args: &[&std::ffi::OsStr]) -> serde_json::Value {
    let mut all: Vec<&std::ffi::OsStr> = vec!["compare".as_ref()];
    all.extend(args);
    all.push("--json".as_ref());
    let out = steadyhud(&all);
    assert!(
        out.status.success(),
        "compare {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("--json prints JSON")
}

/// The compared metric `key` of a `--json` output.
fn metric<'a>(j: &'a serde_json::Value, key: &str) -> &'a serde_json::Value {
    j["metrics"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["key"] == key))
        .unwrap_or_else(|| panic!("no metric {key} in {j}"))
}

const KEYS: [&str; 8] = [
    "steady_fps",
    "mostly_steady_fps",
    "typical_fps",
    "p99_ms",
    "p99_9_ms",
    "stutter_time_pct",
    "average_fps",
    "time_over_budget_pct",
];

/// Every shared capture, sorted.
fn captures() -> Vec<PathBuf> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .expect("the shared captures")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    logs.sort();
    assert!(logs.len() >= 8, "expected the shared captures");
    logs
}

/// A capture's frame times, ns.
fn frames(p: &Path) -> Vec<u64> {
    read_path(p, &ReadOptions::default())
        .expect("a readable capture")
        .durations_ns
}

/// Writes frame times as a plain log (ms, exact to the ns).
fn write_plain(path: &Path, d: &[u64]) {
    let text: String = d
        .iter()
        .map(|&x| format!("{}.{:06}\n", x / 1_000_000, x % 1_000_000))
        .collect();
    std::fs::write(path, text).expect("a writable temp dir");
}

#[test]
fn a_capture_against_itself_gives_intervals_that_hold_0() {
    for log in captures() {
        let j = compare_json(&[log.as_os_str(), "--vs".as_ref(), log.as_os_str()]);
        assert_eq!(j["method"]["within_run_only"], true, "{}", log.display());
        for key in KEYS {
            let m = metric(&j, key);
            let (lo, hi) = (m["ci_low"].as_f64(), m["ci_high"].as_f64());
            assert_eq!(m["difference"].as_f64(), Some(0.0), "{key}");
            assert!(
                lo.is_some_and(|lo| lo <= 0.0) && hi.is_some_and(|hi| hi >= 0.0),
                "{}: {key}: [{lo:?}, {hi:?}]",
                log.display()
            );
            assert_eq!(m["verdict"], "no difference shown");
            assert_eq!(m["a"]["estimate"], m["b"]["estimate"], "{key}");
        }
    }
}

/// Each capture cut into pieces of at least 2 s, dealt alternately to A
/// and B (one run per piece): what docs/metrics.md reports. Two halves of
/// one session differ only by where the pieces fell, so no verdict may
/// say better or worse in more than one metric per capture.
#[test]
fn pieces_of_a_capture_dealt_to_a_and_b() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    for log in captures() {
        let d = frames(&log);
        let mut pieces: Vec<Vec<u64>> = vec![Vec::new()];
        let mut t = 0u64;
        for &x in &d {
            pieces.last_mut().expect("a piece").push(x);
            t += x;
            if t >= 2_000_000_000 {
                pieces.push(Vec::new());
                t = 0;
            }
        }
        if t < 2_000_000_000 {
            pieces.pop();
        }
        let name = log.file_name().expect("a file name").to_string_lossy();
        if pieces.len() < 4 {
            eprintln!("{name}: {} pieces of 2 s, too few", pieces.len());
            continue;
        }
        let mut sides: [Vec<PathBuf>; 2] = [Vec::new(), Vec::new()];
        for (i, p) in pieces.iter().enumerate() {
            let path = tmp.path().join(format!("{name}-{i:03}.txt"));
            write_plain(&path, p);
            sides[i % 2].push(path);
        }
        let mut args: Vec<&std::ffi::OsStr> = sides[0].iter().map(|p| p.as_os_str()).collect();
        args.push("--vs".as_ref());
        args.extend(sides[1].iter().map(|p| p.as_os_str()));
        let j = compare_json(&args);
        let mut shown = Vec::new();
        for key in KEYS {
            let m = metric(&j, key);
            eprintln!(
                "{name}: {} pieces: {key}: A {} B {} B−A {} [{}, {}] {}",
                pieces.len(),
                m["a"]["estimate"],
                m["b"]["estimate"],
                m["difference"],
                m["ci_low"],
                m["ci_high"],
                m["verdict"]
            );
            if m["verdict"] != "no difference shown" {
                shown.push(key);
            }
        }
        assert!(shown.len() <= 1, "{name}: differences shown in {shown:?}");
    }
}

/// Every frame 10 % longer: worse Typical and average FPS on every
/// capture long enough (at least 1000 frames over 20 s: the RE2, Metro
/// Exodus and CS:GO captures), and there Steady, Mostly Steady and P99
/// too; what else says worse is printed (docs/metrics.md lists it).
#[test]
fn every_frame_10_pct_longer_is_worse() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    for log in captures() {
        let d = frames(&log);
        let total_s = d.iter().sum::<u64>() as f64 / 1e9;
        let name = log.file_name().expect("a file name").to_string_lossy();
        let longer: Vec<u64> = d.iter().map(|&x| x + x / 10).collect();
        let (a, b) = (
            tmp.path().join(format!("{name}.txt")),
            tmp.path().join(format!("{name}-longer.txt")),
        );
        write_plain(&a, &d);
        write_plain(&b, &longer);
        let j = compare_json(&[a.as_os_str(), "--vs".as_ref(), b.as_os_str()]);
        let verdicts: Vec<String> = KEYS
            .iter()
            .map(|k| format!("{k}: {}", metric(&j, k)["verdict"]))
            .collect();
        eprintln!(
            "{name} ({} frames, {total_s:.1} s), 10 % longer: {verdicts:?}",
            d.len()
        );
        if total_s >= 20.0 && d.len() >= 1000 {
            for key in [
                "typical_fps",
                "average_fps",
                "steady_fps",
                "mostly_steady_fps",
                "p99_ms",
            ] {
                assert_eq!(metric(&j, key)["verdict"], "worse", "{name}: {key}");
            }
        }
        // Never "better".
        for key in KEYS {
            assert_ne!(metric(&j, key)["verdict"], "better", "{name}: {key}");
        }
    }
}

#[test]
fn several_runs_per_side_print_estimates_intervals_and_verdicts() {
    let logs = [
        shared_data("presentmon-test_case_0.csv"),
        shared_data("presentmon-test_case_0_v1.csv"),
        shared_data("presentmon-test_case_0_v2.csv"),
        shared_data("ocat-metroexodus.csv"),
        shared_data("presentmon1-csgo.csv"),
        shared_data("capframex-re2.csv"),
    ];
    let mut args: Vec<&std::ffi::OsStr> = vec!["compare".as_ref()];
    args.extend(logs[..3].iter().map(|p| p.as_os_str()));
    args.push("--vs".as_ref());
    args.extend(logs[3..].iter().map(|p| p.as_os_str()));
    let out = steadyhud(&args);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("A: 3 runs"), "{text}");
    for label in [
        "Steady FPS (fps)",
        "Mostly Steady FPS (fps)",
        "Typical FPS (fps)",
        "P99 (time-weighted) (ms)",
        "P99.9 (time-weighted) (ms)",
        "Stutter time (%)",
        "Average FPS (fps)",
        "Time over budget (%)",
    ] {
        let line = text
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no row {label}:\n{text}"));
        assert!(line.contains('[') && line.contains(']'), "{line}");
        assert!(
            ["better", "worse", "no difference shown"]
                .iter()
                .any(|w| line.ends_with(w)),
            "{line}"
        );
    }
    // These B runs are 20 to 60 times the A runs' frame rate.
    let typical = text
        .lines()
        .find(|l| l.starts_with("Typical FPS"))
        .expect("the row");
    assert!(typical.ends_with("better"), "{typical}");
    assert!(text.contains("1000 resamples, seed 1"), "{text}");
    assert!(!text.contains("within-run only"), "{text}");
    // The logs are of different programs and lengths: a line each.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: the logs name different programs"),
        "{err}"
    );
    assert!(
        err.contains("warning: runs of very different length"),
        "{err}"
    );

    // --json: the same numbers; the same seed gives the same bytes, another
    // seed other intervals.
    let mut jargs = args[1..].to_vec();
    jargs.extend(["--resamples", "300"].map(std::ffi::OsStr::new));
    let j = compare_json(&jargs);
    assert_eq!(j["method"]["resamples"], 300);
    assert_eq!(j["a"]["runs"].as_array().map(Vec::len), Some(3));
    assert_eq!(j["warnings"].as_array().map(Vec::len), Some(2));
    for key in KEYS {
        let m = metric(&j, key);
        for side in ["a", "b"] {
            let e = &m[side];
            assert_eq!(e["runs"].as_array().map(Vec::len), Some(3), "{key}");
            let (lo, est, hi) = (
                e["ci_low"].as_f64().unwrap_or(f64::NAN),
                e["estimate"].as_f64().unwrap_or(f64::NAN),
                e["ci_high"].as_f64().unwrap_or(f64::NAN),
            );
            assert!(lo <= est && est <= hi, "{key} {side}: {lo} {est} {hi}");
        }
    }
    assert_eq!(compare_json(&jargs), j);
    let mut other = jargs.clone();
    other.extend(["--seed", "7"].map(std::ffi::OsStr::new));
    let k = compare_json(&other);
    assert_ne!(k["metrics"], j["metrics"]);
    assert_eq!(
        metric(&k, "typical_fps")["difference"],
        metric(&j, "typical_fps")["difference"]
    );
}

#[test]
fn fail_if_worse_exits_1_when_the_interval_shows_it() {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let log = shared_data("presentmon1-csgo.csv");
    let d = frames(&log);
    let b = tmp.path().join("longer.txt");
    write_plain(&b, &d.iter().map(|&x| x + x / 10).collect::<Vec<_>>());
    let run = |extra: &[&str]| {
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "compare".as_ref(),
            log.as_os_str(),
            "--vs".as_ref(),
            b.as_os_str(),
        ];
        args.extend(extra.iter().map(std::ffi::OsStr::new));
        steadyhud(&args)
    };
    // 9 % lower average FPS: worse by more than 3 %, not by more than 20 %.
    let out = run(&["--fail-if-worse", "average_fps=3"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--fail-if-worse average_fps=3"), "{err}");
    let out = run(&["--fail-if-worse", "average_fps=20"]);
    assert_eq!(out.status.code(), Some(0));
    // Repeatable: one that holds is enough.
    let out = run(&[
        "--fail-if-worse",
        "average_fps=20",
        "--fail-if-worse",
        "typical_fps=3",
    ]);
    assert_eq!(out.status.code(), Some(1));
    // B better than A never fails.
    let out = steadyhud(&[
        "compare".as_ref(),
        b.as_os_str(),
        "--vs".as_ref(),
        log.as_os_str(),
        "--fail-if-worse".as_ref(),
        "average_fps=0".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    // Not a compared metric: a usage error naming them.
    let out = run(&["--fail-if-worse", "osc=3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("typical_fps"));
    // --json reports each check.
    let out = run(&["--fail-if-worse", "average_fps=3", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(j["fail_if_worse"][0]["failed"], true);
}

#[test]
fn runs_shorter_than_a_block_and_misused_flags_are_clear_errors() {
    let short = shared_data("presentmon-test_case_3.csv");
    let long = shared_data("capframex-re2.csv");
    let out = steadyhud(&[
        "compare".as_ref(),
        long.as_os_str(),
        "--vs".as_ref(),
        long.as_os_str(),
        short.as_os_str(),
        "--block-s".as_ref(),
        "5".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("side B, run 2: 61 frames over 2.70 s") && err.contains("5 s block"),
        "{err}"
    );
    // The flags of a comparison of runs need --vs.
    let out = steadyhud(&[
        "compare".as_ref(),
        long.as_os_str(),
        short.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--vs"));
    // Three logs without --vs.
    let out = steadyhud(&[
        "compare".as_ref(),
        long.as_os_str(),
        short.as_os_str(),
        long.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_log_mostly_loading_screen_is_warned_about() {
    let vkcube = shared_data("mangohud-0.6.8-vkcube.csv");
    let out = steadyhud(&[
        "compare".as_ref(),
        vkcube.as_os_str(),
        "--vs".as_ref(),
        vkcube.as_os_str(),
    ]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches(
            "mangohud-0.6.8-vkcube.csv: 100 % of its time is in frames of 100 ms or longer"
        )
        .count(),
        2,
        "{err}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("within-run only"), "{text}");
}
