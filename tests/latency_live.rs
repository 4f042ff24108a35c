//! PC latency live (docs/metrics.md, "PC latency"): while the test app
//! runs with the layer and gets presses, `steadyhud ctl status` (JSON and
//! text) and the exporter's `/metrics` give the rolling window's terms,
//! each known or unknown on its own (`null`, `unknown`, no sample; never
//! 0). The app presents 300 frames (Wayland: 150), pauses 5 s (8 s),
//! when all three are read, then presents on: the rows up to the pause
//! are the window (on Wayland all but the few still awaiting our queue's
//! next dispatch), and the values are the session log's cells averaged by
//! the rule, within what the printed digits allow. Quiet and beside two
//! busy loops alike (checked by hand; no timing is asserted).
//! - X11 (Xvfb, xdotool clicks and keys): no display times, so PCL, P2D
//!   and click to photon are unknown; I2FS and FS2P are the log's.
//! - Wayland (sway nested in headless Weston, keys with real times from
//!   `steadyhud-testapp --type-keys`): display times too, so PCL and its
//!   terms are the means over the log's rows that have a PCL, and click
//!   to photon over those that have one.

mod common;
mod require;

use common::wayland::{WaylandBed, BED_PROGRAMS, WESTON_PROGRAMS};
use common::*;
use std::time::Duration;

/// Presses sent, one every [`GAP`].
const PRESSES: usize = 6;
const GAP: Duration = Duration::from_millis(300);
/// The app's pacing: frames before the pause in which status and metrics
/// are read, their interval, the pause; then a few more. The schedule is
/// absolute: on Wayland (FIFO, the nested compositor's pace, ~25 ms) the
/// frames are slower than the compositor, so the pause stays a pause.
struct Pacing {
    before: usize,
    frame: &'static str,
    pause: &'static str,
}
const X11: Pacing = Pacing {
    before: 300,
    frame: "16.6ms",
    pause: "5s",
};
const WAYLAND: Pacing = Pacing {
    before: 150,
    frame: "50ms",
    pause: "8s",
};

impl Pacing {
    fn pattern(&self) -> String {
        let Pacing {
            before,
            frame,
            pause,
        } = self;
        format!("{frame}*{before},{pause}*1,{frame}*5")
    }
}
/// The summary's latency keys, in their order, and their labels in `ctl
/// status` (`steadyhud_metrics::latency::SUMMARY_KEYS`).
const TERMS: [(&str, &str); 5] = [
    ("pc_latency", "PC latency"),
    ("click_to_photon", "Click to photon"),
    ("input_to_frame_start", "Input to frame start (I2FS)"),
    ("frame_start_to_present", "Frame start to present (FS2P)"),
    ("present_to_display", "Present to display"),
];

/// What was read in the pause.
struct Read {
    json: RunOutput,
    text: RunOutput,
    metrics: (u16, String),
}

/// The pause: waits for present `before` + 1, then a second (the rows
/// decided), then reads `ctl status` and `/metrics`.
fn read_in_the_pause(
    app: &mut Running,
    before: usize,
    ctl: impl Fn(&[&str]) -> RunOutput,
    port: u16,
) -> Read {
    let last = format!("testapp: present {}", before + 1);
    let paused = app.wait_for_line(Duration::from_secs(120), |l| l == last);
    assert!(paused, "the program reaches its pause");
    std::thread::sleep(Duration::from_secs(1));
    Read {
        json: ctl(&["ctl", "--json", "status"]),
        text: ctl(&["ctl", "status"]),
        metrics: get(port, "/metrics"),
    }
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The terms the window should give, from the log's first `n` rows (each
/// press taken by a frame of its own), in [`TERMS`]' order.
fn expected(rows: &[LatencyRow], n: usize) -> [Option<f64>; 5] {
    let window = &rows[..n];
    let took: Vec<&LatencyRow> = window.iter().filter(|r| r.input_ns.is_some()).collect();
    assert_eq!(took.len(), PRESSES, "a row per press: {took:?}");
    let of = |rows: &[&LatencyRow], f: fn(&LatencyRow) -> Option<f64>| {
        mean(&rows.iter().filter_map(|r| f(r)).collect::<Vec<_>>())
    };
    let all: Vec<&LatencyRow> = window.iter().collect();
    let c2p = of(&all, |r| r.click_to_photon_ms);
    let with_pcl: Vec<&LatencyRow> = window.iter().filter(|r| r.pcl_ms.is_some()).collect();
    if with_pcl.is_empty() {
        return [
            None,
            c2p,
            of(&took, |r| r.i2fs_ms),
            of(&all, |r| r.fs2p_ms),
            of(&all, |r| r.p2d_ms),
        ];
    }
    // PCL and its terms over the frames that have a PCL: the window's I2FS
    // of each is its PCL − FS2P − P2D.
    [
        of(&with_pcl, |r| r.pcl_ms),
        c2p,
        of(&with_pcl, |r| Some(r.pcl_ms? - r.fs2p_ms? - r.p2d_ms?)),
        of(&with_pcl, |r| r.fs2p_ms),
        of(&with_pcl, |r| r.p2d_ms),
    ]
}

/// The JSON's terms, ms, in [`TERMS`]' order.
fn status_terms(read: &Read) -> [Option<f64>; 5] {
    let status: serde_json::Value = serde_json::from_str(&read.json.stdout).unwrap_or_default();
    TERMS.map(|(key, _)| status["windows"][0]["latency"][key].as_f64())
}

/// `read` gives `want`: each known term within 0.001 ms (the log's
/// digits, the HUD window's f32) in the JSON and the gauge, to 0.01 ms
/// in ctl's lines; each unknown one `null`, `unknown` and no sample.
fn check(read: &Read, want: [Option<f64>; 5], what: &str) {
    assert!(read.json.status.success(), "{what}: {}", read.json.stderr);
    assert!(read.text.status.success(), "{what}: {}", read.text.stderr);
    assert_eq!(read.metrics.0, 200, "{what}: /metrics");
    let status: serde_json::Value = serde_json::from_str(&read.json.stdout).expect("status JSON");
    let latency = &status["windows"][0]["latency"];
    assert!(latency.is_object(), "{what}: {status}");
    let line = |label: &str| {
        read.text
            .stdout
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("{what}: no {label} line in\n{}", read.text.stdout))
            .trim()
            .to_string()
    };
    let sample = |name: &str| {
        read.metrics
            .1
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
    for ((key, label), want) in TERMS.iter().zip(want) {
        let gauge = format!("steadyhud_{key}_seconds");
        assert!(read.metrics.1.contains(&format!("# TYPE {gauge} gauge")));
        let line = line(label);
        eprintln!("latency_live ({what}): {key}: the log's {want:?}, ctl: {line}");
        match want {
            None => {
                assert_eq!(
                    latency.get(*key),
                    Some(&serde_json::Value::Null),
                    "{what}: {key} unknown (null), not 0: {latency}"
                );
                assert!(line.ends_with("  unknown"), "{what}: {line}");
                assert_eq!(sample(&gauge), None, "{what}: no {gauge} while unknown");
            }
            Some(v) => {
                let got = latency[*key]
                    .as_f64()
                    .unwrap_or_else(|| panic!("{what}: {key}: {latency}"));
                assert!(
                    (got - v).abs() < 1e-3,
                    "{what}: {key} {got} vs the log's {v}"
                );
                let shown: f64 = line
                    .strip_suffix(" ms")
                    .and_then(|l| l.rsplit(' ').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("{what}: {line}"));
                assert!((shown - v).abs() <= 0.006, "{what}: {line} vs {v}");
                let s = sample(&gauge).unwrap_or_else(|| panic!("{what}: no {gauge}"));
                assert!((s * 1e3 - v).abs() < 1e-3, "{what}: {gauge} {s} vs {v} ms");
            }
        }
    }
}

#[test]
fn x11_ctl_status_and_the_exporter_give_the_latency_terms_of_the_log() {
    if !require::programs(&[("xdotool", "xdotool")]) {
        return;
    }
    let h = Harness::new();
    let port = free_port();
    let _export = export(&h, port);
    let mut app = spawn(
        h.testapp(&["--pattern", &X11.pattern(), "--progress"])
            .layer(),
    );
    let flowing = app.wait_for_line(Duration::from_secs(60), |l| l == "testapp: present 30");
    assert!(flowing, "the program presents");
    std::thread::sleep(Duration::from_millis(300));
    h.click_and_type(PRESSES, GAP);
    let read = read_in_the_pause(&mut app, X11.before, |a| run(&mut h.steadyhud(a)), port);
    let out = app.wait();
    assert!(out.status.success(), "testapp: {}", out.stderr);
    let (_, rows) = latency_rows(&h.only_session_log().csv);
    let want = expected(&rows, X11.before);
    assert!(
        want[0].is_none() && want[1].is_none() && want[4].is_none(),
        "no display times on Xvfb: {want:?}"
    );
    assert!(want[2].is_some() && want[3].is_some(), "{want:?}");
    check(&read, want, "X11");
    // The summary counts the presses and has no PC latency either.
    let summary = h.only_session_log().summary_json();
    let block = &summary["latency"];
    assert_eq!(block["inputs"]["counted"], PRESSES, "{block}");
    for unknown in ["pc_latency", "click_to_photon", "present_to_display"] {
        assert!(block[unknown].is_null(), "{unknown}: {block}");
    }
}

#[test]
fn wayland_ctl_status_and_the_exporter_give_pcl_and_its_terms_of_the_log() {
    let mut tools = BED_PROGRAMS.to_vec();
    tools.extend(WESTON_PROGRAMS);
    if !require::programs(&tools) {
        return;
    }
    let _s = serial();
    let bed = WaylandBed::sway_in_weston(640, 480);
    let exe = bed.install(&testapp_exe());
    let cli = bed.install(&steadyhud_exe());
    let port = free_port();
    let mut export = bed.command(&cli);
    export.args(["export", "--listen", &format!("127.0.0.1:{port}")]);
    let _export = spawn(&mut export);
    let mut cmd = bed.command(&exe);
    cmd.layer()
        .env("STEADYHUD_CONFIG", "window_seconds=60")
        .args(["--wayland", "--present-mode", "fifo", "--progress"])
        .args(["--pattern", &WAYLAND.pattern()]);
    let mut app = spawn(&mut cmd);
    let flowing = app.wait_for_line(Duration::from_secs(60), |l| l == "testapp: present 30");
    assert!(flowing, "the program presents");
    let typed = run(bed.command(&exe).args([
        "--type-keys",
        &PRESSES.to_string(),
        "--key-gap-ms",
        &GAP.as_millis().to_string(),
    ]));
    typed.assert_success("steadyhud-testapp --type-keys");
    let ctl = |a: &[&str]| run(bed.command(&cli).args(a));
    let read = read_in_the_pause(&mut app, WAYLAND.before, ctl, port);
    let out = app.wait();
    out.assert_success("steadyhud-testapp --wayland");
    let logs = session_logs_in(&bed.log_dir);
    assert_eq!(logs.len(), 1, "one session log\n{}", out.stderr);
    let (_, rows) = latency_rows(&logs[0].csv);
    // On Wayland our queue (input times, display answers) is dispatched
    // by the present path: in the pause the newest rows wait for the next
    // present, so the window ends a few frames before the pause (those
    // shown within P2D of it: about 4 here).
    let got = status_terms(&read);
    let close = |w: &[Option<f64>; 5]| {
        w.iter().zip(&got).all(|(w, g)| match (w, g) {
            (Some(w), Some(g)) => (w - g).abs() < 1e-3,
            _ => false,
        })
    };
    let before = WAYLAND.before;
    let n = (before - 30..=before)
        .rev()
        .find(|&n| close(&expected(&rows, n)))
        .unwrap_or(before);
    eprintln!("latency_live (Wayland): the window is the log's first {n} rows");
    let want = expected(&rows, n);
    assert!(
        want.iter().all(Option::is_some),
        "display times and keys: every term known: {want:?}\n{}",
        bed.compositor_log()
    );
    check(&read, want, "Wayland, sway in Weston");
}
