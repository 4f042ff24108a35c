//! `steadyhud analyze --display`: the displayed-frame metrics of every
//! shared capture with display columns, checked against a computation this
//! test makes itself from the raw CSV (its own reading, interval rule,
//! sort-and-accumulate percentiles, brute-force STK and stutter windows);
//! the hand-worked capture of docs/metrics.md; a log without display
//! columns.
//!
//! The PC latency split: `frame_start_to_present` (`MsCPUBusy` /
//! `CPUBusy`) is checked against the test's own computation on the real
//! captures that have the column (presentmon-test_case_0, _0_v2, _3).
//! Their `MsPCLatency` is all `NA`, so there `input_to_frame_start` (and
//! `input_to_present`) can only be checked to be `null`; their values are
//! checked on the worked example of docs/metrics.md only.

mod cli_run;
#[path = "../../../tests/data/mod.rs"]
mod data;
mod stutter_rule;
use cli_run::{steadyhud, steadyhud_ok};
use data::shared_data;

use serde_json::Value;
use std::path::Path;

fn display_json(path: &Path) -> Value {
    let out = steadyhud(&["analyze", path.to_str().unwrap(), "--display", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {stderr}", path.display());
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON value");
    v
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}

/// ms text → ns, rounded (the input rule of docs/metrics.md#input-frames-and-their-durations).
fn ns(ms: &str) -> i64 {
    (ms.trim().parse::<f64>().unwrap() * 1e6).round() as i64
}

/// One row of the analysed group, as this test reads it.
struct Row {
    present_ns: i64,
    dropped: bool,
    interval: Option<i64>,
    anim: Option<i64>,
    until: Option<i64>,
    busy: Option<i64>,
    pcl: Option<i64>,
}

struct Capture {
    rows: Vec<Row>,
    own_time: bool,
    has_busy: bool,
    has_pcl: bool,
    has_until: bool,
}

fn read_capture(path: &Path) -> Capture {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.trim_start_matches('\u{feff}');
    let mut lines = text
        .lines()
        .filter(|l| !l.starts_with("//") && !l.trim().is_empty());
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(|h| h.to_ascii_lowercase())
        .collect();
    let col = |n: &str| header.iter().position(|h| h == &n.to_ascii_lowercase());
    let frame = col("MsBetweenPresents").or(col("FrameTime")).unwrap();
    let (interval, own_time) = match col("MsBetweenDisplayChange") {
        Some(i) => (i, false),
        None => (col("DisplayedTime").unwrap(), true),
    };
    let dropped_col = col("Dropped");
    let anim = col("MsAnimationError").or(col("AnimationError"));
    let until = col("MsUntilDisplayed");
    let busy = col("MsCPUBusy").or(col("CPUBusy"));
    let pcl = col("MsPCLatency").or(col("PCLatency"));
    let keys = [col("ProcessID"), col("SwapChainAddress")];
    // Group rows by process and swapchain; the group with the most frames
    // (rows with a frame time), the first on ties.
    let mut groups: Vec<(String, Vec<Row>)> = Vec::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        if f[frame].trim() == "NA" {
            continue;
        }
        let key: Vec<&str> = keys.iter().flatten().map(|&i| f[i]).collect();
        let key = key.join("/");
        let opt = |i: Option<usize>| {
            i.and_then(|i| f.get(i))
                .filter(|v| v.trim() != "NA" && !v.trim().is_empty())
                .map(|v| ns(v))
        };
        let interval_v = opt(Some(interval));
        let dropped = match dropped_col {
            Some(d) => f[d].trim() == "1",
            None => interval_v.is_none(),
        };
        let row = Row {
            present_ns: ns(f[frame]),
            dropped,
            interval: interval_v,
            anim: opt(anim),
            until: opt(until),
            busy: opt(busy),
            pcl: opt(pcl),
        };
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(row),
            None => groups.push((key, vec![row])),
        }
    }
    let mut best = 0;
    for (i, g) in groups.iter().enumerate() {
        if g.1.len() > groups[best].1.len() {
            best = i;
        }
    }
    Capture {
        rows: groups.swap_remove(best).1,
        own_time,
        has_busy: busy.is_some(),
        has_pcl: pcl.is_some(),
        has_until: until.is_some(),
    }
}

/// (row index of the displayed frame, its time on screen ns), in order.
fn intervals(c: &Capture) -> Vec<(usize, i64)> {
    let shown: Vec<usize> = (0..c.rows.len()).filter(|&i| !c.rows[i].dropped).collect();
    let mut out = Vec::new();
    if c.own_time {
        for &i in &shown {
            out.push((i, c.rows[i].interval.unwrap()));
        }
    } else {
        // Each displayed row after the first says how long the one before
        // it was on screen.
        for w in shown.windows(2) {
            out.push((w[0], c.rows[w[1]].interval.unwrap()));
        }
    }
    out.retain(|&(_, d)| d > 0);
    out
}

fn percentile(d: &[i64], p: f64) -> f64 {
    let mut s = d.to_vec();
    s.sort();
    let t: i64 = s.iter().sum();
    let mut acc = 0i64;
    for &x in &s {
        acc += x;
        if acc as f64 >= p * t as f64 - 1e-6 {
            return x as f64 / 1e6;
        }
    }
    unreachable!()
}

/// The largest f whose slow and excess shares stay under the bounds.
fn stk(d: &[i64], slow_max: f64, excess_max: f64) -> u64 {
    let t: f64 = d.iter().map(|&x| x as f64).sum();
    let mut best = 0;
    for f in 1..100_000u64 {
        let tau = 1e9 / f as f64;
        let slow: f64 = d
            .iter()
            .filter(|&&x| x as f64 > tau)
            .map(|&x| x as f64)
            .sum();
        let excess: f64 = d
            .iter()
            .filter(|&&x| x as f64 > tau)
            .map(|&x| x as f64 - tau)
            .sum();
        if slow / t < slow_max && excess / t < excess_max {
            best = f;
        } else {
            break;
        }
    }
    best
}

fn stutter_count(d: &[i64]) -> usize {
    let ns: Vec<f64> = d.iter().map(|&x| x as f64).collect();
    stutter_rule::stutters_by_hand(&ns, 4e6).len()
}

/// Time-weighted mean and P99 of `(value, weight)`.
fn weighted(mut s: Vec<(i64, i64)>) -> (f64, f64) {
    let w: f64 = s.iter().map(|&(_, d)| d as f64).sum();
    let mean = s.iter().map(|&(v, d)| v as f64 * d as f64).sum::<f64>() / w / 1e6;
    s.sort();
    let mut acc = 0.0;
    for &(v, d) in &s {
        acc += d as f64;
        if acc >= 0.99 * w - 1e-6 {
            return (mean, v as f64 / 1e6);
        }
    }
    unreachable!()
}

/// Checks one capture; returns how many `frame_start_to_present` samples
/// were compared.
fn check(name: &str) -> usize {
    let path = shared_data(name);
    let v = display_json(&path);
    let d = &v["display"];
    assert!(d.is_object(), "{name}: no display block");
    let c = read_capture(&path);
    let num = |k: &str| {
        d[k].as_f64()
            .unwrap_or_else(|| panic!("{name}: display.{k} = {}", d[k]))
    };
    // The present-based keys stay at the top.
    assert_eq!(
        v["frames"].as_u64().unwrap() as usize,
        c.rows.len(),
        "{name}"
    );
    assert_eq!(num("presented_frames") as usize, c.rows.len(), "{name}");
    let dropped = c.rows.iter().filter(|r| r.dropped).count();
    assert_eq!(num("dropped_frames") as usize, dropped, "{name}: dropped");
    assert_eq!(
        num("displayed_frames") as usize,
        c.rows.len() - dropped,
        "{name}"
    );
    let total: i64 = c.rows.iter().map(|r| r.present_ns).sum();
    let dropped_ns: i64 = c
        .rows
        .iter()
        .filter(|r| r.dropped)
        .map(|r| r.present_ns)
        .sum();
    let pct = dropped_ns as f64 * 100.0 / total as f64;
    assert!(close(num("dropped_time_pct"), pct), "{name}: dropped %");

    let iv = intervals(&c);
    let dd: Vec<i64> = iv.iter().map(|&(_, d)| d).collect();
    let t: i64 = dd.iter().sum();
    assert_eq!(num("frames") as usize, dd.len(), "{name}: intervals");
    assert!(close(num("duration_s"), t as f64 / 1e9), "{name}");
    assert!(
        close(num("average_fps"), dd.len() as f64 * 1e9 / t as f64),
        "{name}: average"
    );
    for (k, p) in [
        ("p50_ms", 0.5),
        ("p90_ms", 0.9),
        ("p95_ms", 0.95),
        ("p99_ms", 0.99),
        ("p99_9_ms", 0.999),
    ] {
        assert!(close(num(k), percentile(&dd, p)), "{name}: {k}");
    }
    for (k, s, e) in [
        ("steady_fps", 0.01, 0.001),
        ("mostly_steady_fps", 0.12, 0.02),
        ("typical_fps", 0.5, 0.1),
    ] {
        assert_eq!(num(k) as u64, stk(&dd, s, e), "{name}: {k}");
    }
    assert_eq!(
        num("stutter_count") as usize,
        stutter_count(&dd),
        "{name}: stutters"
    );

    // Animation error and present-to-display, weighted by time on screen.
    let samples = |f: &dyn Fn(&Row) -> Option<i64>| -> Vec<(i64, i64)> {
        iv.iter()
            .filter_map(|&(i, d)| f(&c.rows[i]).map(|x| (x, d)))
            .collect()
    };
    let anim = samples(&|r| r.anim.map(i64::abs));
    match &d["animation_error"] {
        Value::Null => assert!(anim.is_empty(), "{name}"),
        a if a.is_object() => {
            let (mean, p99) = weighted(anim.clone());
            assert_eq!(a["frames"].as_u64().unwrap() as usize, anim.len());
            assert!(
                close(a["mean_ms"].as_f64().unwrap(), mean),
                "{name}: anim mean"
            );
            assert!(
                close(a["p99_ms"].as_f64().unwrap(), p99),
                "{name}: anim p99"
            );
        }
        other => assert!(
            c.rows.iter().all(|r| r.anim.is_none()),
            "{name}: animation_error {other}"
        ),
    }
    let until = samples(&|r| r.until);
    if let Some(p) = d["latency"].get("present_to_display") {
        let (mean, p99) = weighted(until.clone());
        assert_eq!(p["frames"].as_u64().unwrap() as usize, until.len());
        assert!(
            close(p["mean_ms"].as_f64().unwrap(), mean),
            "{name}: p2d mean"
        );
        assert!(close(p["p99_ms"].as_f64().unwrap(), p99), "{name}: p2d p99");
    }

    // The PC latency split: FS2P read, I2FS = PCL − FS2P − P2D.
    let latency = |key: &str, present: bool, s: Vec<(i64, i64)>| {
        let got = d["latency"].get(key);
        assert_eq!(got.is_some(), present, "{name}: latency.{key}");
        match got {
            None => {}
            Some(Value::Null) => assert!(s.is_empty(), "{name}: {key} is null"),
            Some(p) => {
                assert_eq!(p["frames"].as_u64().unwrap() as usize, s.len(), "{name}");
                let (mean, p99) = weighted(s.clone());
                assert!(close(p["mean_ms"].as_f64().unwrap(), mean), "{name}: {key}");
                assert!(close(p["p99_ms"].as_f64().unwrap(), p99), "{name}: {key}");
            }
        }
    };
    let busy = samples(&|r| r.busy);
    let busy_samples = busy.len();
    latency("frame_start_to_present", c.has_busy, busy);
    latency(
        "input_to_frame_start",
        c.has_busy && c.has_pcl && c.has_until,
        samples(&|r| Some(r.pcl? - r.busy? - r.until?)),
    );
    busy_samples
}

/// The shared captures with display columns.
const DISPLAY_CAPTURES: [&str; 7] = [
    "presentmon-test_case_0.csv",
    "presentmon-test_case_0_v1.csv",
    "presentmon-test_case_0_v2.csv",
    "presentmon-test_case_3.csv",
    "presentmon1-csgo.csv",
    "capframex-re2.csv",
    "ocat-metroexodus.csv",
];

#[test]
fn every_capture_with_display_columns_matches_an_independent_computation() {
    for name in DISPLAY_CAPTURES {
        let busy = check(name);
        // The real captures with `MsCPUBusy` values do compare FS2P.
        if !name.contains("_v1") && name.starts_with("presentmon-test_case_") {
            assert!(busy > 0, "{name}: no frame_start_to_present samples");
        }
    }
}

#[test]
fn a_log_without_display_columns_says_so_in_one_line_and_exits_2() {
    let path = shared_data("mangohud-0.6.8-vkcube.csv");
    for extra in [&[][..], &["--json"][..]] {
        let mut args = vec!["analyze", path.to_str().unwrap(), "--display"];
        args.extend_from_slice(extra);
        let out = steadyhud(&args);
        assert_eq!(out.status.code(), Some(2));
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("no display columns"), "{err}");
    }
    // Without --display the same log analyses as before, with no block.
    let out = steadyhud(&["analyze", path.to_str().unwrap(), "--json"]);
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.get("display").is_none());
}

/// The capture of docs/metrics.md's worked example, taken from the page
/// itself so the two cannot drift apart.
fn worked_example() -> String {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/metrics.md"),
    )
    .unwrap();
    let at = doc
        .find("<!-- display-example")
        .expect("the example marker");
    let rest = &doc[at..];
    let start = rest.find("```csv\n").unwrap() + "```csv\n".len();
    let end = start + rest[start..].find("```").unwrap();
    rest[start..end].to_string()
}

#[test]
fn the_worked_example_gives_the_numbers_worked_out_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("example.csv");
    std::fs::write(&path, worked_example()).unwrap();
    let v = display_json(&path);
    let d = &v["display"];
    let f = |k: &str| d[k].as_f64().unwrap_or_else(|| panic!("{k}"));
    // Present-based: 10 frames of 10 ms, unchanged by --display.
    assert_eq!(v["frames"], 10);
    assert!(close(v["average_fps"].as_f64().unwrap(), 100.0));
    for (k, want) in [
        ("presented_frames", 10.0),
        ("displayed_frames", 7.0),
        ("dropped_frames", 3.0),
        ("dropped_time_pct", 30.0),
        ("frames", 6.0),
        ("duration_s", 0.09),
        ("average_fps", 6.0 / 0.09),
        ("low_1pct_fps", 1.0 / 0.03),
        ("low_0_1pct_fps", 1.0 / 0.03),
        ("p50_ms", 20.0),
        ("p90_ms", 30.0),
        ("p95_ms", 30.0),
        ("p99_ms", 30.0),
        ("p99_9_ms", 30.0),
        ("steady_fps", 33.0),
        ("mostly_steady_fps", 33.0),
        ("typical_fps", 47.0),
        ("stutter_count", 2.0),
    ] {
        assert!(close(f(k), want), "{k}: {} vs {want}", f(k));
    }
    assert_eq!(d["stutter_frames"], serde_json::json!([1, 2]));
    assert_eq!(d["osc"], true);
    let stats = |x: &Value| {
        (
            x["frames"].as_u64().unwrap(),
            x["mean_ms"].as_f64().unwrap(),
            x["p99_ms"].as_f64().unwrap(),
        )
    };
    let l = &d["latency"];
    for (x, (frames, mean, p99)) in [
        (&d["animation_error"], (5, 1.875, 5.0)),
        (&l["pc_latency"], (5, 45.625, 60.0)),
        (&l["present_to_display"], (6, 2300.0 / 90.0, 40.0)),
        (&l["input_to_present"], (5, 19.375, 25.0)),
        (&l["frame_start_to_present"], (6, 610.0 / 90.0, 12.0)),
        (&l["input_to_frame_start"], (5, 12.5, 20.0)),
    ] {
        let (n, m, p) = stats(x);
        assert_eq!(n, frames, "{x}");
        assert!(close(m, mean) && close(p, p99), "{x}");
    }
}

#[test]
fn compare_and_report_show_the_displayed_frames_next_to_the_presented_ones() {
    let csgo = shared_data("presentmon1-csgo.csv");
    let plain = shared_data("mangohud-0.6.8-vkcube.csv");
    let dropped = read_capture(&csgo)
        .rows
        .iter()
        .filter(|r| r.dropped)
        .count();
    let out = steadyhud(&["compare", csgo.to_str().unwrap(), plain.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text
        .lines()
        .find(|l| l.starts_with("Dropped frames"))
        .unwrap_or_else(|| panic!("{text}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[2..], [dropped.to_string().as_str(), "n/a"], "{row}");
    // The present-based rows are still there, first.
    assert!(text.find("Steady FPS").unwrap() < text.find("Displayed: Steady FPS").unwrap());
    // A column no run has a value for is left out (csgo has no animation error).
    assert!(!text.contains("Animation error"), "{text}");

    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    steadyhud_ok(&[
        "report",
        csgo.to_str().unwrap(),
        plain.to_str().unwrap(),
        shared_data("presentmon-test_case_3.csv").to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(&html).unwrap();
    // One displayed-vs-presented chart for each run with display columns
    // (1 and 3), none for the MangoHud log (2).
    assert!(page.contains("<svg id=\"displayed-1\""));
    assert!(!page.contains("<svg id=\"displayed-2\""));
    assert!(page.contains("<svg id=\"displayed-3\""));
    let chart = &page[page.find("<svg id=\"displayed-1\"").unwrap()..];
    let chart = &chart[..chart.find("</svg>").unwrap()];
    assert!(chart.contains(&format!("{dropped} dropped")), "{chart}");
    assert_eq!(chart.matches("class=\"series presented\"").count(), 1);
    assert_eq!(chart.matches("class=\"series displayed\"").count(), 1);
    assert!(page.contains("<td>Dropped frames</td>"));

    // The many-runs layout: a chart under each strip of a run with
    // display columns, with --frame-times.
    let logs: Vec<&str> = DISPLAY_CAPTURES
        .into_iter()
        .chain(["mangohud-0.6.8-vkcube.csv"])
        .collect();
    let mut args: Vec<String> = vec!["report".into()];
    args.extend(
        logs.iter()
            .map(|l| shared_data(l).to_string_lossy().into_owned()),
    );
    args.extend(["--frame-times", "-o"].map(String::from));
    args.push(html.to_string_lossy().into_owned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    steadyhud_ok(&args);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<body class=\"many-runs\">"));
    assert_eq!(page.matches("<svg id=\"displayed-").count(), logs.len() - 1);
}

#[test]
fn the_table_adds_a_displayed_section_after_the_presented_one() {
    let csgo = shared_data("presentmon1-csgo.csv");
    let dropped = read_capture(&csgo)
        .rows
        .iter()
        .filter(|r| r.dropped)
        .count();
    let out = steadyhud(&["analyze", csgo.to_str().unwrap(), "--display"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let section = text
        .find("Displayed frames (what reached the screen)")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(text.find("Steady FPS").unwrap() < section);
    let line = text[section..]
        .lines()
        .find(|l| l.trim_start().starts_with("Dropped frames"))
        .unwrap();
    assert!(
        line.contains(&format!(" {dropped} (")),
        "{line} vs {dropped}"
    );
    // Without --display the table has no such section.
    let out = steadyhud(&["analyze", csgo.to_str().unwrap()]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("Displayed frames"));
}
