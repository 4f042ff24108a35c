//! PC latency live (docs/metrics.md, "PC latency"): while the test app
//! runs with the layer on Xvfb and xdotool clicks and types in its window,
//! `steadyhud ctl status` and the exporter's `/metrics` give the rolling
//! window's I2FS and FS2P, and PC latency, click to photon and P2D as
//! unknown (`null`, `unknown`, no sample: Xvfb gives no display times),
//! never as 0. The app presents 300 frames, pauses 5 s (when both are
//! read), then presents on: over the window (every row up to the pause)
//! the values agree with the session log's cells, I2FS with the mean of
//! the rows that took the presses, FS2P with the mean over the rows, and
//! the summary counts the presses and has no PC latency either.

mod common;
mod require;

use common::*;
use std::time::Duration;

/// Presses sent, one every [`GAP`].
const PRESSES: usize = 6;
const GAP: Duration = Duration::from_millis(300);
/// Frames before the pause in which status and metrics are read.
const BEFORE: usize = 300;

#[test]
fn ctl_status_and_the_exporter_give_the_latency_terms_of_the_log() {
    if !require::programs(&[("xdotool", "xdotool")]) {
        return;
    }
    let h = Harness::new();
    let port = free_port();
    let _export = export(&h, port);
    let pattern = format!("16.6ms*{BEFORE},5s*1,16.6ms*10");
    let mut app = spawn(h.testapp(&["--pattern", &pattern, "--progress"]).layer());
    let flowing = app.wait_for_line(Duration::from_secs(60), |l| l == "testapp: present 30");
    assert!(flowing, "the program presents");
    std::thread::sleep(Duration::from_millis(300));
    h.xdotool(&["mousemove", "100", "100"]);
    for i in 0..PRESSES {
        if i % 2 == 0 {
            h.xdotool(&["click", "1"]);
        } else {
            h.xdotool(&["key", "a"]);
        }
        std::thread::sleep(GAP);
    }
    // The pause: present BEFORE + 1 was the last for 5 s.
    let last = format!("testapp: present {}", BEFORE + 1);
    let paused = app.wait_for_line(Duration::from_secs(60), |l| l == last);
    assert!(paused, "the program reaches its pause");
    std::thread::sleep(Duration::from_secs(1));
    let json = run(&mut h.steadyhud(&["ctl", "--json", "status"]));
    let text = run(&mut h.steadyhud(&["ctl", "status"]));
    let (code, metrics) = get(port, "/metrics");
    let run_out = app.wait();
    assert!(run_out.status.success(), "testapp: {}", run_out.stderr);
    assert!(json.status.success(), "ctl --json status: {}", json.stderr);
    assert!(text.status.success(), "ctl status: {}", text.stderr);
    assert_eq!(code, 200, "/metrics");

    // The log up to the pause: rows 0..BEFORE (row k: the frame present
    // k+1 ends).
    let (_, rows) = latency_rows(&h.only_session_log().csv);
    assert!(rows.len() > BEFORE, "{} rows", rows.len());
    let window = &rows[..BEFORE];
    let took: Vec<f64> = window
        .iter()
        .filter(|r| r.input_ns.is_some())
        .map(|r| r.i2fs_ms.expect("I2FS with an input"))
        .collect();
    assert_eq!(took.len(), PRESSES, "a row per press: {took:?}");
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let i2fs = mean(&took);
    let fs2ps: Vec<f64> = window
        .iter()
        .map(|r| r.fs2p_ms.expect("FS2P on every frame"))
        .collect();
    let fs2p = mean(&fs2ps);
    eprintln!("latency_live: the log's I2FS {i2fs:.6} ms, FS2P {fs2p:.6} ms");

    // ctl status --json: the summary's keys, ms; null where unknown.
    let status: serde_json::Value = serde_json::from_str(&json.stdout).expect("status JSON");
    let latency = &status["windows"][0]["latency"];
    assert!(latency.is_object(), "{status}");
    for unknown in ["pc_latency", "click_to_photon", "present_to_display"] {
        assert!(
            latency.get(unknown) == Some(&serde_json::Value::Null),
            "{unknown} is unknown (null), not 0: {latency}"
        );
    }
    let got = |k: &str| {
        latency[k]
            .as_f64()
            .unwrap_or_else(|| panic!("{k}: {latency}"))
    };
    // The log's cells are whole ns; the status means of the same ns.
    assert!(
        (got("input_to_frame_start") - i2fs).abs() < 1e-5,
        "I2FS {} vs the log's {i2fs}",
        got("input_to_frame_start")
    );
    assert!(
        (got("frame_start_to_present") - fs2p).abs() < 1e-5,
        "FS2P {} vs the log's {fs2p}",
        got("frame_start_to_present")
    );

    // ctl status for people: the same numbers to 0.01 ms, `unknown` for
    // the rest.
    let line = |label: &str| {
        text.stdout
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no {label} line in\n{}", text.stdout))
            .trim()
            .to_string()
    };
    for label in ["PC latency", "Click to photon", "Present to display"] {
        assert!(line(label).ends_with("  unknown"), "{}", line(label));
    }
    let shown = |label: &str| -> f64 {
        let l = line(label);
        let v = l.strip_suffix(" ms").expect("ms");
        v.rsplit(' ').next().unwrap().parse().expect("a number")
    };
    assert!((shown("Input to frame start (I2FS)") - i2fs).abs() <= 0.005 + 1e-9);
    assert!((shown("Frame start to present (FS2P)") - fs2p).abs() <= 0.005 + 1e-9);

    // /metrics: seconds; no sample for an unknown term.
    let series = |name: &str| {
        metrics
            .lines()
            .find(|l| l.starts_with(&format!("{name}{{")))
            .map(|l| {
                l.rsplit(' ')
                    .next()
                    .unwrap()
                    .parse::<f64>()
                    .expect("a value")
            })
    };
    for unknown in [
        "steadyhud_pc_latency_seconds",
        "steadyhud_click_to_photon_seconds",
        "steadyhud_present_to_display_seconds",
    ] {
        assert_eq!(series(unknown), None, "{unknown}: no sample while unknown");
        assert!(metrics.contains(&format!("# TYPE {unknown} gauge")));
    }
    let s = series("steadyhud_input_to_frame_start_seconds").expect("an I2FS sample");
    assert!((s * 1e3 - i2fs).abs() < 1e-5, "I2FS {s} s vs {i2fs} ms");
    let s = series("steadyhud_frame_start_to_present_seconds").expect("an FS2P sample");
    assert!((s * 1e3 - fs2p).abs() < 1e-5, "FS2P {s} s vs {fs2p} ms");

    // The summary: the presses counted, no PC latency without display
    // times (as live).
    let log = h.only_session_log();
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(log.summary.as_ref().expect("a summary")).expect("summary"),
    )
    .expect("summary JSON");
    let block = &summary["latency"];
    assert_eq!(block["inputs"]["counted"], PRESSES, "{block}");
    for unknown in ["pc_latency", "click_to_photon", "present_to_display"] {
        assert!(block[unknown].is_null(), "{unknown}: {block}");
    }
}
