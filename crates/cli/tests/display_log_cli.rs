//! `steadyhud analyze --display` on steadyhud's own session logs: a log
//! written by `steadyhud_log::SessionLog` with the four display columns
//! (cells from `Shown::write_cells`, as the layer writes them) gives the
//! displayed-frame metrics worked out by hand below, by the captures'
//! definitions (docs/metrics.md, "Displayed frames" and "Live
//! displayed-frame timing"); the summary's `display` key, made by
//! `steadyhud_log::display::summary_keys` as the layer makes it, is the
//! same block; a log without the columns is unchanged.

mod cli_run;
use cli_run::steadyhud;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use steadyhud_log::columns::DISPLAY;
use steadyhud_log::display::{summary_keys, Answers, Shown, Source};
use steadyhud_log::{Layout, SessionLog};

const MS: u64 = 1_000_000;
/// CLOCK_MONOTONIC of the session's first present.
const ORIGIN: u64 = 5_000 * MS;
const REFRESH: u64 = 16_666_667;

/// Frame k is ended by the present at ORIGIN + 10·(k+1) ms; its answer:
/// shown `Some(latency ms)` after that present, dropped, or none.
#[derive(Clone, Copy)]
enum Fate {
    Shown(u64),
    Dropped,
    Unknown,
}
use Fate::*;

/// docs/metrics.md's worked example (frames 0–9, frames 2, 6, 9 dropped,
/// frame 4 late), then frame 10 without an answer and two frames shown
/// after it.
const FATES: [Fate; 13] = [
    Shown(20),
    Shown(20),
    Dropped,
    Shown(20),
    Shown(40),
    Shown(40),
    Dropped,
    Shown(30),
    Shown(30),
    Dropped,
    Unknown,
    Shown(25),
    Shown(25),
];

fn present(k: usize) -> u64 {
    ORIGIN + 10 * MS * (k as u64 + 1)
}

fn shown(k: usize) -> Shown {
    match FATES[k] {
        Shown(lat) => Shown::At {
            source: Source::Wayland,
            displayed_ns: present(k) + lat * MS,
            refresh_ns: REFRESH,
        },
        Dropped => Shown::Dropped {
            source: Source::Wayland,
        },
        Unknown => Shown::Unknown,
    }
}

/// Writes the log as the layer does (rows, then the summary with the
/// display key); returns the CSV's path.
fn write_log(dir: &Path, display: bool) -> PathBuf {
    let names = DISPLAY.map(|c| c.name);
    let layout = Layout {
        origin_ns: Some(ORIGIN),
        text_columns: if display { &names } else { &[] },
        ..Layout::default()
    };
    let mut log = SessionLog::create(dir, "game", SystemTime::now(), &layout).unwrap();
    let mut answers = Answers::default();
    let mut durations = Vec::new();
    for k in 0..FATES.len() {
        let mut cells = String::new();
        if display {
            shown(k).write_cells(ORIGIN, present(k), &mut cells);
            answers.push(shown(k), present(k));
        }
        log.write_frame_text(k as u64, present(k) - ORIGIN, 10 * MS, &[], &cells)
            .unwrap();
        durations.push(10 * MS);
    }
    let path = log.path().to_path_buf();
    let opts = steadyhud_metrics::Options::default();
    let extra = if display {
        summary_keys(&durations, &answers, &opts)
    } else {
        serde_json::json!({})
    };
    let summary = steadyhud_metrics::summarize(&durations, &opts);
    log.finish(summary.as_ref(), &[], extra).unwrap();
    path
}

fn analyze(path: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["analyze", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    steadyhud(&args)
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}

/// By hand. Displays (ms after the origin): frame 0 at 30, 1 at 40, 3 at
/// 60, 4 at 90, 5 at 100, 7 at 110, 8 at 120, 11 at 145, 12 at 155.
/// Intervals, each to the shown frame before: D_0 = 10, D_1 = 20 (frame
/// 2 dropped), D_3 = 30, D_4 = 10, D_5 = 10 (6 dropped), D_7 = 10; frame
/// 8 gets none (frame 10 has no answer: the chain breaks), frame 11 starts
/// a new one: D_11 = 10; frame 12 is the last shown: none.
/// D = 10, 20, 30, 10, 10, 10, 10: 7 intervals, 0.1 s, 70 fps; sorted
/// running sums 10, 20, 30, 40, 50, 70, 100: P50 (≥ 50) 10 ms, P90 (≥ 90)
/// and P99 30 ms. Present to display, weighted by D: (20, 10), (20, 20),
/// (20, 30), (40, 10), (40, 10), (30, 10), (25, 10): 2550 / 100 = 25.5 ms;
/// sorted running D 60, 70, 80, 100 ≥ 99: P99 40 ms. Dropped 3 of 13
/// frames of 10 ms: 30 / 130 of the present time.
#[test]
fn our_log_gives_the_displayed_metrics_worked_out_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_log(dir.path(), true);
    let out = analyze(&path, &["--display", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The present-based keys stay at the top: 13 frames of 10 ms.
    assert_eq!(v["frames"], 13);
    assert!(close(v["average_fps"].as_f64().unwrap(), 100.0));
    let d = &v["display"];
    let f = |k: &str| d[k].as_f64().unwrap_or_else(|| panic!("display.{k}: {d}"));
    for (k, want) in [
        ("presented_frames", 13.0),
        ("displayed_frames", 9.0),
        ("dropped_frames", 3.0),
        ("unknown_frames", 1.0),
        ("dropped_time_pct", 3000.0 / 130.0),
        ("frames", 7.0),
        ("duration_s", 0.1),
        ("average_fps", 70.0),
        ("p50_ms", 10.0),
        ("p90_ms", 30.0),
        ("p99_ms", 30.0),
    ] {
        assert!(close(f(k), want), "{k}: {} vs {want}", f(k));
    }
    assert_eq!(d["sources"], serde_json::json!({"wayland": 12}));
    assert_eq!(d["interval_column"], "displayed_ns");
    let p2d = &d["latency"]["present_to_display"];
    assert_eq!(p2d["column"], "display_latency_ms");
    assert_eq!(p2d["frames"], 7);
    assert!(close(p2d["mean_ms"].as_f64().unwrap(), 25.5), "{p2d}");
    assert!(close(p2d["p99_ms"].as_f64().unwrap(), 40.0), "{p2d}");
    // No capture-only keys.
    assert!(d.get("animation_error").is_none());
    // The note says how many frames had no answer.
    let notes = v["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("1 of 13 frame(s) without a display answer")),
        "{notes:?}"
    );

    // The layer's summary key is the same block.
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(steadyhud_log::summary_path_for(&path)).unwrap(),
    )
    .unwrap();
    assert_eq!(summary["display"], *d);

    // The table says it in words.
    let out = analyze(&path, &["--display"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |start: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(start))
            .unwrap_or_else(|| panic!("{start}: {text}"))
            .to_string()
    };
    assert!(line("Display times from").ends_with("wayland (12)"));
    assert!(line("Dropped frames").contains(" 3 ("));
    assert!(line("Frames without an answer").contains(" 1 ("));
    assert!(line("Average FPS (displayed)").ends_with("70.00"));
}

/// The same rows without the display columns: no display block, `--display`
/// refuses as for any log without display columns, and the other keys are
/// the same as with them.
#[test]
fn a_log_without_the_columns_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let (with, without) = (
        write_log(&dir.path().join("a"), true),
        write_log(&dir.path().join("b"), false),
    );
    let out = analyze(&without, &["--display"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no display columns"));
    let json = |p: &Path| -> Value {
        let out = analyze(p, &["--json"]);
        assert!(out.status.success());
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let (mut a, mut b) = (json(&with), json(&without));
    assert!(a.get("display").is_none() && b.get("display").is_none());
    for v in [&mut a, &mut b] {
        let m = v.as_object_mut().unwrap();
        m.remove("file");
        m.remove("notes");
    }
    assert_eq!(a, b);
}

/// A cell that is not what the layer writes is an error naming its line
/// and column.
#[test]
fn a_bad_display_cell_is_located() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_log(dir.path(), true);
    let text = std::fs::read_to_string(&path).unwrap();
    for (from, to, column) in [
        (",wayland\n", ",carrier-pigeon\n", "display_source"),
        (",16.666667,", ",16.6x,", "refresh_ms"),
        (",20.000000,", ",20.0.0,", "display_latency_ms"),
    ] {
        let bad = text.replacen(from, to, 1);
        assert_ne!(bad, text, "{from}");
        let p = dir.path().join("bad.csv");
        std::fs::write(&p, bad).unwrap();
        let out = analyze(&p, &["--display"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{to}");
        assert!(err.contains(column), "{to}: {err}");
    }
}

/// `compare` and `report` show our log's displayed frames as a capture's.
#[test]
fn compare_and_report_show_our_logs_displayed_frames() {
    let dir = tempfile::tempdir().unwrap();
    let (with, without) = (
        write_log(&dir.path().join("a"), true),
        write_log(&dir.path().join("b"), false),
    );
    let out = steadyhud(&["compare", with.to_str().unwrap(), without.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let row = |start: &str| {
        let line = text
            .lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("{start}: {text}"));
        line[start.len()..]
            .split_whitespace()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(row("Dropped frames"), ["3", "n/a"]);
    let fps = row("Displayed: Average FPS");
    assert_eq!(fps[fps.len() - 2..], ["70.00", "n/a"], "{text}");
    let html = dir.path().join("r.html");
    let out = steadyhud(&[
        "report",
        with.to_str().unwrap(),
        without.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg id=\"displayed-1\""));
    assert!(!page.contains("<svg id=\"displayed-2\""));
    let chart = &page[page.find("<svg id=\"displayed-1\"").unwrap()..];
    let chart = &chart[..chart.find("</svg>").unwrap()];
    assert!(chart.contains("3 dropped"), "{chart}");
}
